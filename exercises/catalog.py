"""The exercises of the course kit, in the order a course teaches them.

Each exercise is one or more functions of the project whose body, in the reference, sits
between `# BEGIN SOLUTION` and `# END SOLUTION` (the markers nbgrader and otter-grader use).
`exercises/build.py` replaces each such body with a stub that raises NotImplementedError with
the exercise's number, the hint and the shapes below; `exercises/grade.py` runs the exercise's
tests, exercises/tests/test_exNN_*.py, which depend on that exercise alone.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Stub:
    path: str        # file of the project, from its root
    function: str    # the function whose marked body the student writes
    hint: str
    shapes: str      # what goes in and what comes out


@dataclass(frozen=True)
class Exercise:
    number: int
    name: str
    paper: str       # the passage of the paper it implements
    stubs: tuple


EXERCISES = (
    Exercise(1, "the exact belief update", 'Lemma A.5 "Exact posterior in CSG" (App. A); section 5.1', (
        Stub("env.py", "update_belief",
             "keep the candidates the fact holds for (fact.members), unless the fact is false of the "
             "secret (fact.holds): then refuse the update and flag the turn; no fact, no change",
             "in: candidates frozenset C_t, fact (or None), secret, n_max; out: (C_{t+1} frozenset, inconsistent bool)"),)),
    Exercise(2, "the turn reward", 'App. C "CSG Reward Composition"', (
        Stub("env.py", "turn_reward",
             "an invalid turn gets only w.invalid_penalty, a redundant one only w.redundancy_penalty; "
             "otherwise r_info = (n_before - n_after) / n_before (or float(info) when given), the arm-match and "
             "diversity bonuses, and on resolution w.resolve_bonus plus w.efficiency_weight * (max_turns - turn)",
             "in: counts, the 0-based turn, flags; out: dict of r_info, r_arm_match, r_diversity, r_resolve, "
             "r_efficiency, r_redundancy, r_invalid (floats, 0.0 when absent) and their sum under 'reward'"),)),
    Exercise(3, "ECHO's group-normalised credit", "Eq. 1 (section 4)", (
        Stub("echo.py", "group_normalize",
             "mean and sample std (divide by n - 1) over the axes `dims`, counting only the active cells; "
             "(v - mean) / (std + eps) on active cells of groups with at least two active cells, 0 elsewhere",
             "in: values (B, G, T), active (B, G, T) bool, dims int or tuple; out: (B, G, T) float64"),)),
    Exercise(4, "the episodic GRPO advantage", 'section 5.1 "Baselines" (episode-return GRPO)', (
        Stub("baselines.py", "grpo",
             "the return R = sum_t r_t of each rollout (episode_returns), normalised over the G rollouts "
             "of its secret with group_normalize (exercise 3) over dims=1, then the same value on every "
             "turn the rollout played (0 on turns it did not play)",
             "in: Credit c (c.rewards, c.active: (B, G, T)); out: (B, G, T) advantages"),)),
    Exercise(5, "RLOO's leave-one-out baseline", 'section 5.1 "Baselines" (RLOO per turn, Ahmadian et al. 2024)', (
        Stub("baselines.py", "leave_one_out",
             "at each turn, each active value minus the mean of the OTHER active values of its group "
             "(axis 1); 0 where fewer than two are active",
             "in: values (B, G, T), active (B, G, T) bool; out: (B, G, T) float64"),)),
    Exercise(6, "the clipped objective, with its gradient", "Eq. 2 (section 4)", (
        Stub("echo.py", "clipped_objective",
             "log rho = masked sum of logp_new - logp_old over each action's tokens; terms = "
             "min(rho A, clip(rho, 1 - clip_eta, 1 + clip_eta) A); return (sum of terms / n_terms, stats); "
             "the gradient flows through logp_new; the docstring defines level 'token' and the stats",
             "in: logp_new, logp_old, mask (N, L), advantages (N,); out: (scalar tensor, dict)"),)),
    Exercise(7, "the k3 estimate of the KL divergence", "section 4 (kl_beta; KL(pi_old || pi) logged); Schulman 2020", (
        Stub("echo.py", "approx_kl",
             "x = log_ratio on real tokens; (exp(x) - 1) - x is >= 0 per token; sum it over each action's "
             "tokens, masked tokens counting nothing whatever their value",
             "in: log_ratio (N, L), mask (N, L); out: (N,)"),)),
    Exercise(8, "Table 1's Zero and Qual.", 'section 5.1 "Evaluation Strategy"; App. C metric definitions', (
        Stub("metrics.py", "elim_quality",
             "eliminated relative to an exact halving, max(candidates_before / 2, 1), capped at 1",
             "in: one turn row (dict with 'eliminated', 'candidates_before'); out: float in [0, 1]"),
        Stub("metrics.py", "is_zero",
             "an answered turn (not is_wasted) that eliminated no candidate",
             "in: one turn row (dict); out: bool"),
        Stub("metrics.py", "zero",
             "the mean of is_zero over the turns that are not wasted (_turns, _mean)",
             "in: episodes (list of lists of turn rows); out: float (nan without such turns)"),
        Stub("metrics.py", "quality",
             "the mean of elim_quality over all turns, wasted ones included",
             "in: episodes (list of lists of turn rows); out: float"))),
    Exercise(9, "return aliasing: E[Var(A | R)]", "Theorem 3.2 (ii); App. A Theorem A.3 and Corollary A.4", (
        Stub("theory/return_aliasing.py", "expected_conditional_variance",
             "group the outcomes by key; within each group take the p-weighted mean of A, then add up "
             "p_i (A_i - mean)^2 over every outcome; keep the arithmetic exact for Fractions",
             "in: p, keys, A (sequences of n probabilities, hashable keys, advantages); out: a number"),)),
)


def stubs_by_place() -> dict:
    """(path, function) -> (exercise, stub), for the build."""
    return {(s.path, s.function): (e, s) for e in EXERCISES for s in e.stubs}
