"""The exercises of the course kit, in the order a course teaches them.

Each exercise is one or more functions of the project whose body, in the reference, sits
between `# BEGIN SOLUTION` and `# END SOLUTION` (the markers nbgrader and otter-grader use).
`exercises/build.py` replaces each such body with a stub that raises NotImplementedError with
the exercise's number, the hint and the shapes below; `exercises/grade.py` runs the exercise's
tests, exercises/tests/test_exNN_*.py, which depend on that exercise alone, and gives it its
`points` in proportion to the tests it passes. The points follow the work (`work` says what they
pay for): the length of the solution and what is subtle in it, less where the module already
holds a function written the same way.

The hints send the student to the paper's passage (quoted in exercises/paper.md) and to the
function's docstring; they never spell out the code. An instructor who wants hints that do
builds the copy with `--hints code` (exercises/instructor/code_hints.py).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Stub:
    path: str  # file of the project, from its root
    function: str  # the function whose marked body the student writes
    hint: str  # where to read: the paper's passage and the docstring
    shapes: str  # what goes in and what comes out


@dataclass(frozen=True)
class Exercise:
    number: int
    name: str
    paper: str  # the passage of the paper it implements (quoted in exercises/paper.md)
    points: int  # its weight in the grade; the points of all exercises add up to 100
    work: str  # why it is worth its points: what the student writes, and what is hard in it
    stubs: tuple


EXERCISES = (
    Exercise(
        1,
        "the exact belief update",
        'Lemma A.5 "Exact posterior in CSG" (App. A); section 5.1',
        8,
        "5 lines of set logic; the refused, flagged update is the one subtle case",
        (
            Stub(
                "env.py",
                "update_belief",
                "Lemma A.5 and the worked example of section 5.1 \"CSG's explicit EDP "
                'interpretation" in exercises/paper.md: the new candidate set keeps the candidates '
                "consistent with the hint; properties.Fact says which numbers a fact holds for; "
                "the docstring says what happens to a fact that is false of the secret",
                "in: candidates frozenset C_t, fact (or None), secret, n_max; out: (C_{t+1} "
                "frozenset, inconsistent bool)",
            ),
        ),
    ),
    Exercise(
        2,
        "the turn reward",
        'App. C "CSG Reward Composition"',
        12,
        "about 15 lines: seven components, two penalties that replace the rest, the efficiency "
        "bonus's turn count, `info` that may be 0, every weight read from `w`",
        (
            Stub(
                "env.py",
                "turn_reward",
                'App. C "CSG Reward Composition" in exercises/paper.md lists every component and '
                "when it is earned; the weights are the fields of `w` (env.RewardWeights); the "
                "docstring says which turns earn only a penalty and what `info` replaces",
                "in: counts, the 0-based turn, flags; out: dict of r_info, r_arm_match, "
                "r_diversity, r_resolve, r_efficiency, r_redundancy, r_invalid (floats, 0.0 when "
                "absent) and their sum under 'reward'",
            ),
        ),
    ),
    Exercise(
        3,
        "ECHO's group-normalised credit",
        "Eq. 1 (section 4)",
        16,
        "two functions of Eq. 1, about 15 lines: masked mean and sample std over an axis or "
        "several, the groups of one; then the same over groups given by ids (echo-belief, GiGPO)",
        (
            Stub(
                "echo.py",
                "group_normalize",
                "Eq. 1 in exercises/paper.md: the mean and the std are taken over G_t, the cells "
                "of the group that are active; the module docstring says which std and what a "
                "group of fewer than two gets",
                "in: values (B, G, T), active (B, G, T) bool, dims int or tuple; out: (B, G, T) "
                "float64",
            ),
            Stub(
                "baselines.py",
                "normalize_within",
                "Eq. 1 again, for groups that are not an axis of the grid: the cells that share an "
                "id form a group (turn_groups makes the ids; -1 is no group); its docstring says "
                "what it returns",
                "in: values (B, G, T), groups (B, G, T) long ids, -1 for none; out: ((B, G, T) "
                "float64 advantages, (B, G, T) float64 size of each cell's group)",
            ),
        ),
    ),
    Exercise(
        4,
        "the episodic GRPO advantage",
        'section 5.1 "Baselines" (episode-return GRPO)',
        6,
        "3 lines that reuse the pieces of baselines.py; the point is which return and which turns",
        (
            Stub(
                "baselines.py",
                "grpo",
                'section 5.1 "Baselines" in exercises/paper.md (episode-return RL): one credit per '
                "episode, from its total return, normalised like Eq. 1 among the secret's G "
                "rollouts, on every turn the rollout played; this module has the pieces",
                "in: Credit c (c.rewards, c.active: (B, G, T)); out: (B, G, T) advantages",
            ),
        ),
    ),
    Exercise(
        5,
        "RLOO's leave-one-out baseline",
        'section 5.1 "Baselines" (RLOO per turn, Ahmadian et al. 2024)',
        8,
        "4 lines: the others' mean at each turn, active rollouts only, 0 when alone",
        (
            Stub(
                "baselines.py",
                "leave_one_out",
                'section 5.1 "Baselines" in exercises/paper.md (RLOO per turn) and the module '
                "docstring: each value is compared with the other rollouts active at its turn, "
                "without Eq. 1's std",
                "in: values (B, G, T), active (B, G, T) bool; out: (B, G, T) float64",
            ),
        ),
    ),
    Exercise(
        6,
        "the clipped objective, with its gradient",
        "Eq. 2 (section 4)",
        22,
        "the longest, about 25 lines: two ratio levels, the min and its clip count, the ratio "
        "stats, padding and n_terms, and a gradient that must flow through both branches",
        (
            Stub(
                "echo.py",
                "clipped_objective",
                "Eq. 2 and the definition of rho above it in exercises/paper.md: an action's "
                "probability is the product of its token probabilities; the docstring defines "
                "n_terms, level 'token' and the stats; the gradient must reach logp_new",
                "in: logp_new, logp_old, mask (N, L), advantages (N,); out: (scalar tensor, dict)",
            ),
        ),
    ),
    Exercise(
        7,
        "the k3 estimate of the KL divergence",
        "section 4 (kl_beta; KL(pi_old || pi) logged); Schulman 2020",
        6,
        "2 lines; the care is in keeping an inf on a padding token out of the arithmetic",
        (
            Stub(
                "echo.py",
                "approx_kl",
                'the k3 estimator in exercises/paper.md ("The KL estimate"): one term per real '
                "token, never negative; a token outside the mask counts nothing whatever value it "
                "holds (even inf), and the gradient must reach log_ratio",
                "in: log_ratio (N, L), mask (N, L); out: (N,)",
            ),
        ),
    ),
    Exercise(
        8,
        "Table 1's Zero and Qual.",
        'section 5.1 "Evaluation Strategy"; App. C metric definitions',
        8,
        "four one-liners, each beside a function written the same way (is_grounded, ground)",
        (
            Stub(
                "metrics.py",
                "elim_quality",
                'Qual. in App. C "Main Evaluation Metric Definitions" (exercises/paper.md) and the '
                "turn-level definitions in metrics.py's docstring",
                "in: one turn row (dict with 'eliminated', 'candidates_before'); out: float in [0, "
                "1]",
            ),
            Stub(
                "metrics.py",
                "is_zero",
                'Zero in App. C "Main Evaluation Metric Definitions" (exercises/paper.md); '
                "is_wasted says which turns the oracle never answered",
                "in: one turn row (dict); out: bool",
            ),
            Stub(
                "metrics.py",
                "zero",
                "Zero's rate: which turns are in its denominator is in the paper's definition; an "
                "empty denominator is NaN (metrics.py's docstring); _turns and _mean help",
                "in: episodes (list of lists of turn rows); out: float (nan without such turns)",
            ),
            Stub(
                "metrics.py",
                "quality",
                "Qual.'s rate over a run: the docstring says which turns count",
                "in: episodes (list of lists of turn rows); out: float",
            ),
        ),
    ),
    Exercise(
        9,
        "return aliasing: E[Var(A | R)]",
        "Theorem 3.2 (ii); App. A Theorem A.3 and Corollary A.4",
        14,
        "about 10 lines of exact arithmetic: levels of the key, the p-weighted mean within each, "
        "every probability weighted, Fractions throughout",
        (
            Stub(
                "theory/return_aliasing.py",
                "expected_conditional_variance",
                "the last display of Corollary A.4 in exercises/paper.md: a sum over the levels of "
                "the key of P(key = k) Var(A | key = k), every probability weighted by p; "
                "Fractions in, an exact Fraction out",
                "in: p, keys, A (sequences of n probabilities, hashable keys, advantages); out: a "
                "number",
            ),
        ),
    ),
)


def stubs_by_place() -> dict:
    """(path, function) -> (exercise, stub), for the build."""
    return {(s.path, s.function): (e, s) for e in EXERCISES for s in e.stubs}
