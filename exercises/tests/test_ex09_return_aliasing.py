"""Exercise 9: E[Var(A | R)], the least error of any credit that is a function of the return
(Theorem 3.2 (ii)), computed exactly."""
from fractions import Fraction as F

from theory.return_aliasing import expected_conditional_variance


def test_two_returns_by_hand():
    """Four outcomes of probability 1/4. Return "a": A = 1 and 3 (mean 2, each 1 away); return
    "b": A = 0 twice. E[Var(A | R)] = 1/4 * 1 + 1/4 * 1 + 0 = 1/2, exactly."""
    result = expected_conditional_variance([F(1, 4)] * 4, ["a", "a", "b", "b"], [F(1), F(3), F(0), F(0)])
    assert result == F(1, 2) and isinstance(result, F)


def test_unequal_probabilities_weight_the_mean():
    """One return, p = 3/4 and 1/4, A = 0 and 4: the weighted mean is 1, so 3/4 * 1 + 1/4 * 9 = 3."""
    assert expected_conditional_variance([F(3, 4), F(1, 4)], [7, 7], [F(0), F(4)]) == F(3)


def test_the_extremes():
    """A return that tells every outcome apart leaves no variance; one shared by all leaves Var(A)."""
    p, A = [F(1, 3)] * 3, [F(1), F(2), F(6)]
    assert expected_conditional_variance(p, [1, 2, 3], A) == 0
    assert expected_conditional_variance(p, [0, 0, 0], A) == F(1, 3) * ((1 - 3) ** 2 + (2 - 3) ** 2 + (6 - 3) ** 2)
