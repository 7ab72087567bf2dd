"""Aggregation across runs: mean and SEM, the t distribution's tail, the paired t-test."""

import math

import pytest

from tools import stats as M


def test_mean_sem():
    """SEM = std(ddof=1) / sqrt(n); one run -> NaN SEM; NaN runs are left out."""
    mean, sem = M.mean_sem([0.2, 0.4, 0.6])
    assert mean == pytest.approx(0.4) and sem == pytest.approx(0.2 / math.sqrt(3))  # std = 0.2
    mean, sem = M.mean_sem([0.7])
    assert mean == 0.7 and math.isnan(sem)
    assert M.mean_sem([0.5, float("nan"), None])[0] == 0.5
    assert all(math.isnan(x) for x in M.mean_sem([]))


def test_t_distribution_against_closed_forms_and_tables():
    """Two-sided t tail: Cauchy (df 1) and df 2 closed forms, textbook critical values, the normal
    limit."""
    for t in (-3.0, -0.5, 0.0, 0.3, 1.0, 7.0):
        assert M.two_sided_p(t, 1) == pytest.approx(1 - 2 * math.atan(abs(t)) / math.pi, abs=1e-12)
        assert M.two_sided_p(t, 2) == pytest.approx(1 - abs(t) / math.sqrt(2 + t * t), abs=1e-12)
    assert M.two_sided_p(2.228138852, 10) == pytest.approx(0.05, abs=1e-9)
    assert M.two_sided_p(4.604094871, 4) == pytest.approx(0.01, abs=1e-9)
    assert M.two_sided_p(-2.570581836, 5) == pytest.approx(0.05, abs=1e-9)
    assert M.two_sided_p(1.959963985, 10**7) == pytest.approx(0.05, abs=1e-6)


def test_betainc_against_mpmath():
    """The regularized incomplete beta against mpmath's arbitrary-precision betainc."""
    import mpmath  # pinned in requirements.txt: this reference check never skips

    for a in (0.5, 1.0, 2.5, 10.0, 150.0):
        for b in (0.5, 1.0, 3.0, 40.0):
            for x in (0.001, 0.1, 0.5, 0.77, 0.999):
                ref = float(mpmath.betainc(a, b, 0, x, regularized=True))
                assert M.betainc(a, b, x) == pytest.approx(ref, abs=1e-12)
    assert M.betainc(1, 1, 0.3) == pytest.approx(0.3) and M.betainc(3, 1, 0.5) == pytest.approx(
        0.125
    )


def test_paired_t_test_by_hand():
    """d = (0.5, 1, 2.5): t = 8 / sqrt(13); df 2 -> p = 1 - |t| / sqrt(2 + t^2) = 1 - 8 /
    sqrt(90)."""
    t, p = M.paired_t_test([1, 2, 3.5], [0.5, 1, 1])
    assert t == pytest.approx(8 / math.sqrt(13)) and p == pytest.approx(1 - 8 / math.sqrt(90))
    t, p = M.paired_t_test([0.5, 1, 1], [1, 2, 3.5])  # swapped: same p, negative t
    assert t == pytest.approx(-8 / math.sqrt(13)) and p == pytest.approx(1 - 8 / math.sqrt(90))
    assert all(math.isnan(x) for x in M.paired_t_test([1.0], [0.0]))
    assert M.paired_t_test([2, 3], [1, 2]) == (math.inf, 0.0)  # identical differences
    t, p = M.paired_t_test([1, 2], [1, 2])
    assert math.isnan(t) and p == 1.0


def test_final_window_table_by_hand():
    """tab:echo_grpo_final_window_stats: per seed the mean over the last `window` steps, then the
    mean over seeds and a paired t-test. Worked: echo seeds (1+3)/2 = 2 and (2+4)/2 = 3, grpo 1
    and 1; differences 1 and 2: mean 1.5, SE 0.5, t = 3 with 1 degree of freedom, so
    p = 1 - 2 atan(3) / pi = 0.2048."""
    from bench.reproduce import final_window_table

    rows = lambda *rewards: [{"step": i + 1, "clue/reward": r} for i, r in enumerate(rewards)]
    results = {
        "echo": [({}, rows(0, 1, 3)), ({}, rows(0, 2, 4))],
        "grpo": [({}, rows(1, 1, 1)), ({}, rows(5, 0, 2))],
    }
    line = next(
        x
        for x in final_window_table(results, "echo", "grpo", window=2)
        if x.startswith("| Reward mean")
    )
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[1:4] == ["2.500", "1.000", "+1.500"]
    assert float(cells[4]) == pytest.approx(1 - 2 * math.atan(3) / math.pi, abs=5e-4)


def test_the_reproduction_trains_seed_by_seed():
    """A reproduction cut off after k runs must leave whole pairs: every estimator of seed 0 before
    any run of seed 1, and finished runs are not queued again."""
    from bench.reproduce import queue

    done = {("echo", 0)}
    order = queue(["echo", "grpo", "rloo"], [0, 1], finished=lambda e, s: (e, s) in done)
    assert order == [("grpo", 0), ("rloo", 0), ("echo", 1), ("grpo", 1), ("rloo", 1)]


def test_values_equal_up_to_rounding_have_no_spread():
    """0.95 reached three ways differs in the last bits; over seeds that is no spread: SEM 0 and a
    paired test that says every seed differs by the same amount (t infinite), not t = 10^16."""
    from tools.stats import mean_sem, paired_t_test

    a = [0.95, sum([1 / 20] * 19), 0.1 + 0.2 + 0.65]
    assert len(set(a)) == 3  # the floats themselves differ
    assert mean_sem(a)[1] == 0.0
    t, p = paired_t_test(a, [0.0, 0.0, 0.0])
    assert math.isinf(t) and p == 0.0
    assert mean_sem([0.9, 0.95, 1.0])[1] > 0.01  # a real spread is kept
