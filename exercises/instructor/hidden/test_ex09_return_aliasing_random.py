"""Hidden tests of exercise 9 (kept out of the student copy): E[Var(A | key)] on random outcomes,
exact in Fractions, against a loop over the levels of the key.

WRONG and RIGHT, at the end, are answers the graded tests must tell apart (see exercise 1's file)."""

import random
from fractions import Fraction

from expect import check, check_type

from theory.return_aliasing import expected_conditional_variance


def by_loop(p, keys, A):
    total = Fraction(0)
    for k in set(keys):
        members = [i for i in range(len(keys)) if keys[i] == k]
        mass = sum(p[i] for i in members)
        mean = sum(p[i] * A[i] for i in members) / mass
        total += sum(p[i] * (A[i] - mean) ** 2 for i in members)
    return total


def test_random_outcomes_match_a_loop():
    """40 random sets of outcomes (Fraction probabilities and advantages, 1-3 keys): the loop's
    exact value."""
    rng = random.Random(13)
    for case in range(40):
        n = rng.randint(1, 8)
        weights = [rng.randint(1, 9) for _ in range(n)]
        p = [Fraction(w, sum(weights)) for w in weights]
        keys = [rng.choice("abc") for _ in range(n)]
        A = [Fraction(rng.randint(-9, 9), rng.randint(1, 4)) for _ in range(n)]
        what = (
            f"random outcomes {case}: p {[str(x) for x in p]}, keys {keys}, A {[str(x) for x in A]}"
        )
        result = expected_conditional_variance(p, keys, A)
        check_type(result, (Fraction, int), f"{what}: Fractions in, an exact number out")
        check(result, by_loop(p, keys, A), what)


# ---------------------------------------------------------------- answers to tell apart
# Each is planted as theory.return_aliasing.expected_conditional_variance, so it may use only
# what theory/return_aliasing.py defines (defaultdict, Fraction, numpy, ...).


def expected_conditional_variance__unweighted_mean(p, keys, A):
    """Wrong: the plain mean of A within a level, whatever the probabilities."""
    levels = defaultdict(list)
    for p_i, k, A_i in zip(p, keys, A):
        levels[k].append((p_i, A_i))
    total = 0
    for members in levels.values():
        mean = sum(A_i for _, A_i in members) / len(members)
        total += sum(p_i * (A_i - mean) ** 2 for p_i, A_i in members)
    return total


def expected_conditional_variance__levels_unweighted(p, keys, A):
    """Wrong: the sum of each level's Var(A | key = k), not weighted by P(key = k)."""
    levels = defaultdict(list)
    for p_i, k, A_i in zip(p, keys, A):
        levels[k].append((p_i, A_i))
    total = 0
    for members in levels.values():
        mass = sum(p_i for p_i, _ in members)
        mean = sum(p_i * A_i for p_i, A_i in members) / mass
        total += sum(p_i * (A_i - mean) ** 2 for p_i, A_i in members) / mass
    return total


def expected_conditional_variance__keys_ignored(p, keys, A):
    """Wrong: Var(A) over all outcomes."""
    mean = sum(p_i * A_i for p_i, A_i in zip(p, A)) / sum(p)
    return sum(p_i * (A_i - mean) ** 2 for p_i, A_i in zip(p, A))


def expected_conditional_variance__p_ignored(p, keys, A):
    """Wrong: every outcome weighted 1 / n."""
    n = len(A)
    return expected_conditional_variance__grouped_sums([Fraction(1, n)] * n, keys, A)


def expected_conditional_variance__floats(p, keys, A):
    """Wrong: floating point: not exact."""
    return float(expected_conditional_variance__grouped_sums(p, keys, A))


def expected_conditional_variance__grouped_sums(p, keys, A):
    """Right: E[A^2] minus sum_k P(k) E[A | k]^2, from three sums per level."""
    mass, first, second = defaultdict(int), defaultdict(int), defaultdict(int)
    for p_i, k, A_i in zip(p, keys, A):
        mass[k] += p_i
        first[k] += p_i * A_i
        second[k] += p_i * A_i * A_i
    return sum(second[k] - first[k] * first[k] / mass[k] for k in mass)


def expected_conditional_variance__by_sorting(p, keys, A):
    """Right: the outcomes of one level at a time, found by sorting on the key's repr."""
    order = sorted(range(len(keys)), key=lambda i: repr(keys[i]))
    total, i = 0, 0
    while i < len(order):
        j = i
        while j < len(order) and keys[order[j]] == keys[order[i]]:
            j += 1
        level = order[i:j]
        mass = sum(p[m] for m in level)
        mean = sum(p[m] * A[m] for m in level) / mass
        total += sum(p[m] * (A[m] - mean) ** 2 for m in level)
        i = j
    return total


WRONG = [
    expected_conditional_variance__unweighted_mean,
    expected_conditional_variance__levels_unweighted,
    expected_conditional_variance__keys_ignored,
    expected_conditional_variance__p_ignored,
    expected_conditional_variance__floats,
]
RIGHT = [expected_conditional_variance__grouped_sums, expected_conditional_variance__by_sorting]
