"""Checks of theory/: Theorem 3.2, App. A and App. C, from the math, not from a run."""

import itertools
import math
import random
import re
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from env import GameConfig
from oracle import RuleOracle
from reference import question_bank
from theory import bisection as bs
from theory import bit_reveal as br
from theory import csg_aliasing as ca
from theory import return_aliasing as ra
from theory._common import wilson_interval
from tools.cli import parse_config

Z4 = 4.0  # width of every Monte Carlo interval below: a correct implementation fails ~1e-4


# ---------------------------------------------------------------- bit_reveal: exact


def reference_success(z, actions):
    """E_d's success rule transcribed from the paper with scalar Python, as a trusted reference:
    turn 0 reveals z_1 iff a_0 = 0; turn t >= 1 reveals z_{t+1} iff a_t = z_t; success iff
    every one of the d bits was observed."""
    observed = [False] * len(z)
    for t, a in enumerate(actions):
        if (t == 0 and a == 0) or (t >= 1 and a == z[t - 1]):
            observed[t] = True  # bit z_{t+1} (0-based index t)
    return all(observed)


def test_observe_hand_worked():
    """observe() follows the reveal rule on a hand-worked d = 3 example."""
    z = np.array([[1, 0, 1]])
    assert br.observe(z, 0, np.array([0]))[0] == 1
    assert br.observe(z, 0, np.array([1]))[0] == br.BOT
    assert br.observe(z, 1, np.array([1]))[0] == 0  # a_1 = z_1 = 1 reveals z_2 = 0
    assert br.observe(z, 1, np.array([0]))[0] == br.BOT
    assert br.observe(z, 2, np.array([0]))[0] == 1  # a_2 = z_2 = 0 reveals z_3 = 1


@pytest.mark.parametrize("d", [1, 2, 3, 4])
def test_enumeration_matches_scalar_reference(d):
    """The vectorised enumeration agrees, pair by pair, with the scalar transcription."""
    counts = br.agnostic_success_counts(d)
    strings = list(itertools.product([0, 1], repeat=d))
    expected = [sum(reference_success(z, a) for z in strings) for a in strings]
    assert counts.tolist() == expected


@pytest.mark.parametrize("d", range(1, 9))
def test_best_belief_agnostic_is_exactly_2_pow_1_minus_d(d):
    """Best deterministic belief-agnostic success == 2^(1-d) exactly; and the structure behind
    it: a sequence with a_0 = 0 fixes z_1..z_{d-1} and leaves z_d free (2 strings), a_0 = 1
    never succeeds."""
    assert br.best_agnostic_success(d) == Fraction(1, 2 ** (d - 1))
    seqs = br.all_bit_strings(d)
    assert np.array_equal(br.agnostic_success_counts(d), 2 * (seqs[:, 0] == 0))


@pytest.mark.parametrize("d", range(1, 13))
def test_adaptive_policy_succeeds_with_probability_one(d):
    """pi* of the proof (a_0 = 0, then repeat the last revealed bit) wins on all 2^d strings."""
    assert br.exact_adaptive_success(d) == 1


@pytest.mark.parametrize("d", [1, 3, 5])
def test_stochastic_agnostic_success_formula(d):
    """For stochastic mu, P(success) = sum over sequences of prod_t mu_t(a_t) * P(success | seq)
    (exact, from the enumeration) equals mu_0(0) * 2^(1-d) and so never exceeds 2^(1-d)."""
    rng = np.random.default_rng(d)
    seqs = br.all_bit_strings(d)
    success = br.agnostic_success_counts(d) / 2**d
    for p1 in rng.random((5, d)):
        weights = np.prod(np.where(seqs == 1, p1, 1 - p1), axis=1)
        exact = float(weights @ success)
        assert exact == pytest.approx(br.agnostic_success_formula(p1, d), abs=1e-12)
        assert exact <= 2.0 ** (1 - d) + 1e-12


# ---------------------------------------------------------------- bit_reveal: Monte Carlo


@pytest.mark.parametrize("d", [3, 6])
def test_mc_random_agnostic_within_ci(d):
    """Monte Carlo success of random belief-agnostic policies: the 4-sigma Wilson interval
    contains mu_0(0) 2^(1-d), and its lower end is never above the bound 2^(1-d)."""
    n = 4000
    p1, successes = br.mc_random_agnostic(d, 8, n, np.random.default_rng(0))
    for k, exact in zip(successes, br.agnostic_success_formula(p1, d)):
        lo, hi = wilson_interval(k, n, Z4)
        assert lo <= exact <= hi
        assert lo <= 2.0 ** (1 - d)


def test_exact_success_matches_simulation():
    """exact_success() (closed-form product along the successful path) agrees with playing the
    policy in the environment, for a random belief-seeing logistic policy."""
    d, n = 4, 40000
    rng = np.random.default_rng(1)
    policy = br.learner_policy(rng.normal(0, 2, (d, d + 1)), sees_belief=True)
    _, success = br.simulate(policy, rng.integers(0, 2, (n, d)), rng)
    lo, hi = wilson_interval(int(success.sum()), n, Z4)
    assert lo <= br.exact_success(policy, d) <= hi


@pytest.mark.parametrize("d", [2, 3, 4])
def test_learners(d):
    """After a short REINFORCE run, the learner that sees b_t succeeds with probability >= 0.9;
    the one that sees only t is <= 2^(1-d), exactly and when played in the environment."""
    cfg = br.Config(steps=150, batch=128, eval_every=50)
    rng = np.random.default_rng(d)
    W_belief, _ = br.train_learner(d, True, cfg, rng)
    assert br.exact_success(br.learner_policy(W_belief, True), d) >= 0.9
    W_agnostic, curve = br.train_learner(d, False, cfg, rng)
    agnostic = br.learner_policy(W_agnostic, False)
    assert max(s for _, s in curve) <= 2.0 ** (1 - d) + 1e-12
    n = 20000
    _, success = br.simulate(agnostic, rng.integers(0, 2, (n, d)), rng)
    assert wilson_interval(int(success.sum()), n, Z4)[0] <= 2.0 ** (1 - d)


def test_bit_reveal_main_smoke(tmp_path, capsys):
    """main() with a tiny budget writes table, plot and config, and prints consistent rows."""
    rows, curves = br.main(
        [
            "--d-max-exact",
            "4",
            "--mc-policies",
            "2",
            "--mc-episodes",
            "500",
            "--learn-d-min",
            "2",
            "--learn-d-max",
            "3",
            "--steps",
            "20",
            "--batch",
            "32",
            "--eval-every",
            "10",
            "--out",
            str(tmp_path),
        ]
    )
    for name in ("bit_reveal.txt", "bit_reveal.png", "bit_reveal_config.json"):
        assert (tmp_path / name).stat().st_size > 0
    printed = capsys.readouterr().out
    assert (tmp_path / "bit_reveal.txt").read_text() in printed
    assert [r["d"] for r in rows] == [1, 2, 3, 4]
    for r in rows:
        assert r["best_agnostic"] == r["bound"] == Fraction(1, 2 ** (r["d"] - 1))
        assert r["adaptive"] == 1 and r["mc_above_bound"] == 0
        assert re.search(rf"^\s*{r['d']}\s+{r['bound']} ==", printed, re.M)
    assert set(curves) == {(2, False), (2, True), (3, False), (3, True)}


def test_cli_rejects_unknown_and_mistyped_flags():
    """Flags are generated from the dataclass; typos and wrong types stop with an error."""
    assert parse_config(br.Config, ["--steps", "7"]).steps == 7
    with pytest.raises(SystemExit):
        parse_config(br.Config, ["--stepz", "7"])
    with pytest.raises(SystemExit):
        parse_config(br.Config, ["--steps", "seven"])


# ---------------------------------------------------------------- return_aliasing: exact

GAME = ra.Game()  # N = 6, T = 3, epsilon = 1/2: the EDP of the module docstring


@pytest.fixture(scope="module")
def traj():
    return ra.enumerate_trajectories(GAME)


def test_one_turn_values_hand_worked():
    """With T = 1, Q_B(h_0, a) is the expected elimination under the uniform prior on 1..6:
    2 k (N - k) / N^2 for a question true of k secrets; even, high: k = 3; div3: k = 2; one:
    k = 1. epsilon-greedy (epsilon = 1/2) puts 1/4 + 1/8 on each of the two greedy questions."""
    game = ra.Game(N=6, T=1, epsilon=Fraction(1, 2))
    C0 = tuple(range(1, 7))
    q = {
        a: Fraction(2 * k * (6 - k), 36)
        for a, k in {"even": 3, "high": 3, "div3": 2, "one": 1}.items()
    }
    pi = {
        "even": Fraction(3, 8),
        "high": Fraction(3, 8),
        "div3": Fraction(1, 8),
        "one": Fraction(1, 8),
    }
    assert ra.policy(game, C0) == pi
    v = sum(pi[a] * q[a] for a in q)
    for a in q:
        assert ra.q_bayes(game, C0, 0, a) == q[a]
        assert ra.advantage_bayes(game, C0, 0, a) == q[a] - v


def test_probabilities_and_advantages_are_consistent(traj):
    """Trajectory probabilities sum to exactly 1; at every visited belief pi sums to 1 and
    E_{a~pi}[A_B(h_t, a)] = 0 exactly, as the definition of A_B requires."""
    assert sum(traj["p"]) == 1
    for beliefs in traj["beliefs"]:
        for t, C in enumerate(beliefs):
            pi = ra.policy(GAME, C)
            assert sum(pi.values()) == 1
            assert sum(pi[a] * ra.advantage_bayes(GAME, C, t, a) for a in pi) == 0


def test_advantage_recursion_matches_raw_history_averages(traj):
    """A_B from the recursion on the candidate set (Q_z, Q_B of Sec. 3) equals, exactly, A_B from
    E[sum_{s>=t} r_s | h_t, a_t] averaged over enumerated trajectories with the same raw
    history prefix: two independent routes to the paper's definition."""
    from_histories = ra.advantages_from_enumeration(traj, lambda C: ra.policy(GAME, C))
    assert from_histories == traj["A"]
    assert any(a != 0 for A_i in traj["A"] for a in A_i)  # not vacuously equal


@pytest.mark.parametrize("t", range(GAME.T))
def test_best_return_only_estimator_is_conditional_mean(traj, t):
    """Least squares over all functions of R gives phi(R) = E[A | R], and its error equals the
    exact E[Var(A | R)] (Theorem 3.2(ii) / spectral aliasing theorem) to 1e-12."""
    p, A = traj["p"], [a[t] for a in traj["A"]]
    R = [sum(r) for r in traj["rewards"]]
    phi, _, error = ra.best_fit(p, R, A)
    _, levels = ra.indicator_basis(R)
    for value, g in zip(phi, levels):
        members = [(p_i, A_i) for p_i, R_i, A_i in zip(p, R, A) if R_i == g]
        cond_mean = sum(p_i * A_i for p_i, A_i in members) / sum(p_i for p_i, _ in members)
        assert value == pytest.approx(float(cond_mean), abs=1e-12)
    assert error == pytest.approx(float(ra.expected_conditional_variance(p, R, A)), abs=1e-12)


def test_projection_is_orthogonal_with_spectrum_0_1(traj):
    """Pi_R is idempotent and self-adjoint in the p-weighted product (1e-12), equals the
    least-squares projection onto the indicator basis, has eigenvalues in {0, 1} and rank =
    trace = number of distinct return levels."""
    p = traj["p"]
    R = [sum(r) for r in traj["rewards"]]
    Pi = ra.conditional_expectation_matrix(p, R)
    X, levels = ra.indicator_basis(R)
    checks = ra.projection_checks(p, Pi)
    assert checks["idempotence"] < 1e-12 and checks["self_adjoint"] < 1e-12
    assert checks["eig_dist"] < 1e-12
    assert checks["rank"] == len(levels) == round(np.trace(Pi)) == len(set(R))
    assert np.abs(Pi - ra.weighted_projection(p, X)).max() < 1e-12


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(-1, 1), min_size=16, max_size=16))
def test_pythagoras_for_any_return_only_estimator(values):
    """For any phi(R): E[(phi(R) - A)^2] = ||phi(R) - Pi_R A||^2 + E[Var(A | R)] >= E[Var(A|R)]
    (the proof's orthogonal decomposition), at turn 1 of the default EDP."""
    traj = ra.enumerate_trajectories(GAME)  # memoised recursions: cheap after the first call
    p = np.array(traj["p"], dtype=float)
    A = np.array([a[1] for a in traj["A"]], dtype=float)
    R = [sum(r) for r in traj["rewards"]]
    X, levels = ra.indicator_basis(R)
    assert len(levels) == len(values)
    phi_R = X @ np.array(values)
    irreducible = float(ra.expected_conditional_variance(traj["p"], R, [a[1] for a in traj["A"]]))
    total = p @ (phi_R - A) ** 2
    projected = p @ (phi_R - ra.conditional_expectation_matrix(p, R) @ A) ** 2
    assert total == pytest.approx(projected + irreducible, abs=1e-12)
    assert total >= irreducible - 1e-12


@settings(max_examples=12, deadline=None)
@given(st.integers(3, 7), st.integers(1, 2), st.sampled_from([Fraction(1, 4), Fraction(1, 2), 1]))
def test_least_squares_identity_on_other_games(N, T, epsilon):
    """The identity lstsq error == E[Var(A|R)] and the projection properties hold for other
    sizes and policies of the game too, at every turn (the theorem is not about one EDP)."""
    traj = ra.enumerate_trajectories(ra.Game(N, T, Fraction(epsilon)))
    R = [sum(r) for r in traj["rewards"]]
    checks = ra.projection_checks(traj["p"], ra.conditional_expectation_matrix(traj["p"], R))
    assert checks["idempotence"] < 1e-12 and checks["eig_dist"] < 1e-12
    for t in range(T):
        A = [a[t] for a in traj["A"]]
        assert ra.best_fit(traj["p"], R, A)[2] == pytest.approx(
            float(ra.expected_conditional_variance(traj["p"], R, A)), abs=1e-12
        )


def test_aliasing_is_strict_and_turn_level_credit_is_better(traj):
    """At turn 1 of the default EDP: some return level holds the same question under two
    beliefs with different A_B, so E[Var(A|R)] > 0; the best function of r_t has smaller error,
    and so does ECHO's group-normalised r_t against GRPO's group-normalised R. (Not claimed at
    every turn: at the last turn R carries belief information that r_t lacks.)"""
    a = ra.analyse_turn(traj, 1)
    i, j = ra.aliasing_example(traj, 1)
    assert sum(traj["rewards"][i]) == sum(traj["rewards"][j])
    assert traj["A"][i][1] != traj["A"][j][1] and traj["beliefs"][i][1] != traj["beliefs"][j][1]
    assert a["evar_R"] > 0
    assert a["evar_r"] < a["evar_R"]
    assert a["lstsq_r"] == pytest.approx(float(a["evar_r"]), abs=1e-12)
    assert a["echo"] < a["grpo"]


def test_group_normalize_hand_worked():
    """Eq. 1 in the population limit: within each group, weighted mean 0 and std ~1."""
    p = np.array([0.1, 0.3, 0.2, 0.4])
    out = ra.group_normalize(p, [0, 0, 1, 1], np.array([1.0, 3.0, 5.0, 5.0]))
    w = p[:2] / p[:2].sum()
    mean, sd = w @ [1.0, 3.0], math.sqrt(w @ (np.array([1.0, 3.0]) - 2.5) ** 2)
    assert np.allclose(out[:2], (np.array([1.0, 3.0]) - mean) / (sd + 1e-6))
    assert np.allclose(out[2:], 0.0)  # a constant group carries no credit


# ---------------------------------------------------------------- csg_aliasing: the real game


def test_real_clue_selector_game():
    """On the real game (csg_aliasing: env.py, rule oracle, App. C reward): probabilities sum to
    1, E_pi[A_B] = 0 at every history, and at every turn the least-squares error over functions
    of R equals E[Var(A|R)] > 0 with Pi_R of rank = number of levels."""
    csg = ca.csg_trajectories(N=6, T=2, epsilon=Fraction(1, 2))
    assert sum(csg["p"]) == 1
    A_of = {}  # (h_t, a) -> A_B(h_t, a)
    for hist, A_i in zip(csg["history"], csg["A"]):
        for t in range(len(hist)):
            A_of[hist[:t] + (hist[t][0],)] = A_i[t]
    for hist, pis in zip(csg["history"], csg["pi"]):
        for t, pi in enumerate(pis):
            assert sum(pi.values()) == 1
            assert sum(pi_k * A_of[hist[:t] + (k,)] for k, pi_k in pi.items()) == 0
    for t in range(2):
        sub, mass = ca.active_at(csg, t)
        assert sum(sub["p"]) == 1 and 0 < mass <= 1
        a = ra.analyse_turn(sub, t)
        assert a["lstsq_R"] == pytest.approx(float(a["evar_R"]), abs=1e-12) and a["evar_R"] > 0
        assert a["rank"] == a["levels_R"] and a["idempotence"] < 1e-12


def test_csg_aliasing_main_smoke(tmp_path, capsys):
    """csg_aliasing.main() on a tiny game writes its table and config, prints one row per turn
    with the exact E[Var(A|R)], and rejects an impossible game."""
    csg, analyses = ca.main(["--n-candidates", "4", "--horizon", "2", "--out", str(tmp_path)])
    for name in ("csg_aliasing.txt", "csg_aliasing_config.json"):
        assert (tmp_path / name).stat().st_size > 0
    printed = capsys.readouterr().out
    assert (tmp_path / "csg_aliasing.txt").read_text() in printed
    assert sum(csg["p"]) == 1 and len(analyses) == max(map(len, csg["history"]))
    for a in analyses:
        assert f"{float(a['evar_R']):11.6f}" in printed
    with pytest.raises(SystemExit):
        ca.main(["--n-candidates", "40", "--out", str(tmp_path)])


# ---------------------------------------------------------------- return_aliasing: Monte Carlo


def test_monte_carlo_converges_to_exact_errors(traj):
    """Played-out rollouts: the mean return and both irreducible errors at turn 1 agree with the
    exact values within 4-sigma intervals."""
    rewards, A = ra.play(GAME, 20000, np.random.default_rng(0))
    a = ra.analyse_turn(traj, 1)
    R = rewards.sum(axis=1)
    exact_mean_R = float(sum(p * sum(r) for p, r in zip(traj["p"], traj["rewards"])))
    assert abs(R.mean() - exact_mean_R) <= Z4 * R.std() / math.sqrt(len(R))
    for keys, exact in ((np.round(R, 9), a["evar_R"]), (np.round(rewards[:, 1], 9), a["evar_r"])):
        _, lo, hi = ra.mc_irreducible_error(keys, A[:, 1], Z4)
        assert lo <= float(exact) <= hi


def test_return_aliasing_main_smoke(tmp_path, capsys):
    """main() with a tiny budget writes table, plot and config; printed exact numbers agree."""
    _, analyses, mc_rows = ra.main(["--mc-sizes", "200,2000", "--out", str(tmp_path)])
    for name in ("return_aliasing.txt", "return_aliasing.png", "return_aliasing_config.json"):
        assert (tmp_path / name).stat().st_size > 0
    printed = capsys.readouterr().out
    assert (tmp_path / "return_aliasing.txt").read_text() in printed
    assert [r["n"] for r in mc_rows] == [200, 2000]
    for a in analyses:
        assert a["lstsq_R"] == pytest.approx(float(a["evar_R"]), abs=1e-12)
        assert a["rank"] == a["levels_R"]
        assert f"{float(a['evar_R']):11.6f}" in printed
    with pytest.raises(SystemExit):
        ra.main(["--turn", "5", "--out", str(tmp_path)])


# ---------------------------------------------------------------- bisection (App. C)

N_BIS = 40  # candidates are subsets of 1..40 below: every digit predicate still splits them


def random_sets(rng, n):
    """n random candidate sets in 1..N_BIS: random subsets and intervals, alternately."""
    sets = []
    for k in range(n):
        if k % 2:
            a, b = sorted(rng.sample(range(1, N_BIS + 1), 2))
            sets.append(frozenset(range(a, b + 1)))
        else:
            sets.append(frozenset(rng.sample(range(1, N_BIS + 1), rng.randint(1, N_BIS))))
    return sets


def test_expected_elimination_hand_worked():
    """Hand-worked values through the game: C = 1..10 and 'greater than 3' (p = 7/10) gives
    2 (7/10)(3/10) = 21/50; C = 1..20 and the last digit (each digit twice, p_k = 1/10) gives
    1 - 10/100 = 9/10; C = 1..12 and the number of digits (9 and 3 of 12) gives
    1 - (81 + 9)/144 = 3/8."""
    oracle = RuleOracle()
    question = "Is the number greater than 3?"
    eliminated, unused = bs.game_elimination(range(1, 11), question, 10, oracle)
    assert sum(eliminated) / 10 == Fraction(21, 50) and unused == 0
    assert bs.check_value(range(1, 21), "last_digit", 20, oracle)["measured"] == Fraction(9, 10)
    assert bs.check_value(range(1, 13), "num_digits", 12, oracle)["measured"] == Fraction(3, 8)


@settings(max_examples=25, deadline=None)
@given(
    st.frozensets(st.integers(1, N_BIS), min_size=1),
    st.integers(1, N_BIS),
    st.integers(2, 12),
    st.integers(0, 9),
)
def test_bisection_identity_with_questions_written_here(C, k, m, d):
    """E_{z~Unif(C)}[u] = 2p(1-p) exactly, for questions written in English here and p counted
    here with plain Python: the game (oracle -> read_hint -> update_belief) must agree."""
    oracle = RuleOracle()
    questions = [
        (f"Is the number greater than {k}?", lambda z: z > k),
        (f"Is the number divisible by {m}?", lambda z: z % m == 0),
        ("Is the number odd?", lambda z: z % 2 == 1),
        # a < b: "between a and a" is an identity question, deflected
        (
            f"Is the number between {min(k, m)} and {max(k, m) + 1} inclusive?",
            lambda z: min(k, m) <= z <= max(k, m) + 1,
        ),
        (f"Is the last digit {d}?", lambda z: z % 10 == d),
    ]
    for question, yes in questions:
        eliminated, unused = bs.game_elimination(C, question, N_BIS, oracle)
        p = Fraction(sum(yes(z) for z in C), len(C))
        assert unused == 0
        assert sum(eliminated) / len(C) == 2 * p * (1 - p) == bs.bisection_value(p)


def test_bisection_identity_on_random_questions():
    """The module's own random yes/no questions (every family, some negated, rendered with
    render_question) and sets, including those the game's bisection visits: every check exact,
    every hint used, and 2p(1-p) <= 1/2."""
    rng, oracle = random.Random(0), RuleOracle()
    _, visited = bs.play_bisection(N_BIS, 10)
    sets = random_sets(rng, 30) + rng.sample(sorted(visited, key=sorted), 15)
    families = set()
    for C in sets:
        for _ in range(4):
            family, query, truth = bs.random_yesno(rng, N_BIS)
            row = bs.check_yesno(C, query, truth, N_BIS, oracle)
            families.add(family)
            assert row["unused"] == 0 and row["measured"] == row["predicted"] <= Fraction(1, 2)
    assert families == set(bs.YESNO_FAMILIES)


def test_value_questions_general_form():
    """Value questions: the game's mean elimination is 1 - sum_k p_k^2 exactly, with p_k counted
    here from the answers (Python's own str digits, not the module's arithmetic)."""
    rng, oracle = random.Random(1), RuleOracle()
    answers = {
        "parity": lambda z: z % 2,
        "digit_sum": lambda z: sum(map(int, str(z))),
        "last_digit": lambda z: str(z)[-1],
        "tens_digit": lambda z: str(z).zfill(2)[-2],
        "first_digit": lambda z: str(z)[0],
        "num_digits": lambda z: len(str(z)),
    }
    assert set(answers) == set(bs.VALUE_REFERENCE)
    for C in random_sets(rng, 20):
        for quantity, answer in answers.items():
            counts = [sum(answer(z) == a for z in C) for a in {answer(z) for z in C}]
            expected = 1 - sum(Fraction(c, len(C)) ** 2 for c in counts)
            row = bs.check_value(C, quantity, N_BIS, oracle)
            assert row["unused"] == 0 and row["measured"] == row["predicted"] == expected


def test_best_bank_question_reaches_the_most_even_split():
    """Over the binary question bank, the best 2p(1-p) equals the largest value any yes-set of
    C allows (brute force over yes-set sizes), which is 1/2 exactly when |C| is even; the
    max-information-gain question reaches it too, and so does its elimination in the game."""
    rng, oracle = random.Random(2), RuleOracle()
    bank = question_bank(GameConfig(n_max=N_BIS, question_set="binary"))
    for C in random_sets(rng, 30):
        n = len(C)
        brute = max(Fraction(2 * k * (n - k), n * n) for k in range(n + 1))
        best, eig, q = bs.best_bank_split(bank, C)
        assert best == eig == brute == bs.best_possible_split(n)
        assert (best == Fraction(1, 2)) == (n % 2 == 0)
        eliminated, _ = bs.game_elimination(C, bank.texts[q], N_BIS, oracle)
        assert sum(eliminated) / n == best


def test_bisection_turn_count():
    """BayesPolicy on the binary question set resolves every secret of 1..N; the most turns any
    secret takes is ceil(log2 N) (no yes/no policy can guarantee fewer: t answers separate at
    most 2^t secrets), and the mean is the best binary search tree's, T(N)/N with
    T(n) = n + T(floor(n/2)) + T(ceil(n/2)), T(1) = 0."""

    def total_depth(n):
        return 0 if n == 1 else n + total_depth(n // 2) + total_depth(n - n // 2)

    for N in (2, 3, 5, 8, 13, 16, 17, 33):
        game, _ = bs.play_bisection(N, 10)
        turns = [e.turn for e in game.episodes]
        assert all(e.resolved for e in game.episodes)
        assert max(turns) == math.ceil(math.log2(N))
        assert Fraction(sum(turns), N) == Fraction(total_depth(N), N) == bs.optimal_mean_turns(N)


def test_bisection_main_smoke(tmp_path, capsys):
    """bisection.main() with a tiny budget writes table, plot and config; every printed check is
    exact and every game resolves within ceil(log2 N); bad flags stop with SystemExit."""
    result = bs.main(
        [
            "--n-max",
            "30",
            "--n-sets",
            "3",
            "--questions-per-set",
            "2",
            "--sizes",
            "2,5,30",
            "--out",
            str(tmp_path),
        ]
    )
    for name in ("bisection.txt", "bisection.png", "bisection_config.json"):
        assert (tmp_path / name).stat().st_size > 0
    printed = capsys.readouterr().out
    assert (tmp_path / "bisection.txt").read_text() in printed
    for row in result["yesno"] + result["value"]:
        assert row["measured"] == row["predicted"] and row["unused"] == 0
    assert all(r["best"] == r["bound"] == r["measured"] for r in result["bank"])
    assert [g["N"] for g in result["games"]] == [2, 5, 30]
    assert all(g["resolved"] == g["N"] and g["max_turns"] == g["bound"] for g in result["games"])
    for bad in (["--sizes", "2,x"], ["--sizes", "300"], ["--n-sets", "0"], ["--n-max", "3.5"]):
        with pytest.raises(SystemExit):
            bs.main(bad + ["--out", str(tmp_path)])
