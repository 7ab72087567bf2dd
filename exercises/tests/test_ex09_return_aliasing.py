"""Exercise 9: E[Var(A | R)], the least error of any credit that is a function of the return
(Theorem 3.2 (ii)), computed exactly.

Wrong answers these tests tell apart: an unweighted mean within a level; each level's variance
not weighted by its probability; the variance of A over all outcomes, keys ignored; p ignored;
floating point instead of exact Fractions."""

from fractions import Fraction as F

from expect import check

from theory.return_aliasing import expected_conditional_variance


def test_two_returns_by_hand():
    """Four outcomes of probability 1/4. Return "a": A = 1 and 3 (mean 2, each 1 away); return
    "b": A = 0 twice. E[Var(A | R)] = 1/4 * 1 + 1/4 * 1 + 0 = 1/2, exactly."""
    result = expected_conditional_variance(
        [F(1, 4)] * 4, ["a", "a", "b", "b"], [F(1), F(3), F(0), F(0)]
    )
    check(
        result, F(1, 2), "p = 1/4 each, keys a, a, b, b, A = 1, 3, 0, 0 (Fractions in, exact out)"
    )


def test_unequal_probabilities_weight_the_mean():
    """One return, p = 3/4 and 1/4, A = 0 and 4: the weighted mean is 1, so 3/4 * 1 + 1/4 * 9
    = 3."""
    check(
        expected_conditional_variance([F(3, 4), F(1, 4)], [7, 7], [F(0), F(4)]),
        F(3),
        "p = 3/4, 1/4, one key, A = 0, 4",
    )


def test_levels_of_unequal_probability():
    """Level x: p = 1/8, 1/8, A = 0, 2 (Var 1, P = 1/4); level y: p = 1/2, 1/4, A = 0, 3 (mean 1,
    Var (2/3 * 1 + 1/3 * 4) = 2, P = 3/4): E[Var] = 1/4 * 1 + 3/4 * 2 = 7/4."""
    p, keys, A = (
        [F(1, 8), F(1, 8), F(1, 2), F(1, 4)],
        ["x", "x", "y", "y"],
        [F(0), F(2), F(0), F(3)],
    )
    check(
        expected_conditional_variance(p, keys, A),
        F(7, 4),
        "p = 1/8, 1/8, 1/2, 1/4, keys x, x, y, y, A = 0, 2, 0, 3",
    )


def test_the_extremes():
    """A return that tells every outcome apart leaves no variance; one shared by all leaves
    Var(A)."""
    p, A = [F(1, 3)] * 3, [F(1), F(2), F(6)]
    check(
        expected_conditional_variance(p, [1, 2, 3], A),
        F(0),
        "p = 1/3 each, A = 1, 2, 6, three different keys",
    )
    check(
        expected_conditional_variance(p, [0, 0, 0], A),
        F(1, 3) * ((1 - 3) ** 2 + (2 - 3) ** 2 + (6 - 3) ** 2),
        "p = 1/3 each, A = 1, 2, 6, one key",
    )
