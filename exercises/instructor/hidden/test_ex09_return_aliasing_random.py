"""Hidden tests of exercise 9 (kept out of the student copy): E[Var(A | key)] on random outcomes,
exact in Fractions. Each check is held to the value the reference computed (the grader holds them;
see exercise 1's file)."""

import random
from fractions import Fraction

from expect import HELD, check

from theory.return_aliasing import expected_conditional_variance


def test_random_outcomes():
    """40 random sets of outcomes (Fraction probabilities and advantages, 1-3 keys): the exact
    value, a Fraction (or an int)."""
    rng = random.Random(13)
    for case in range(40):
        n = rng.randint(1, 8)
        weights = [rng.randint(1, 9) for _ in range(n)]
        p = [Fraction(w, sum(weights)) for w in weights]
        keys = [rng.choice("abc") for _ in range(n)]
        A = [Fraction(rng.randint(-9, 9), rng.randint(1, 4)) for _ in range(n)]
        what = f"random outcomes {case}: p {[str(x) for x in p]}, keys {keys}, A "
        check(expected_conditional_variance(p, keys, A), HELD, what + f"{[str(x) for x in A]}")
