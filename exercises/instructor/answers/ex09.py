"""Exercise 9's answers to tell apart, planted as
theory.return_aliasing.expected_conditional_variance: WRONG, likely mistakes that must turn the
exercise to FAIL, and RIGHT, two correct answers written differently from the reference that
must PASS (exercises/instructor/answers/__init__.py plants them). An answer may use only what
the module it is planted in defines; the imports name those."""

from collections import defaultdict
from fractions import Fraction


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
