"""Confidence intervals shared by the theory scripts' Monte Carlo checks.

Nothing here implements the paper; it keeps the theory scripts free of plumbing. Their flags
and saved configs come from the project's tools/cli.py, like every other entry point.
"""

import math

import numpy as np


def wilson_interval(successes, n, z=1.96):
    """Wilson score interval for a binomial proportion; unlike the normal interval it stays
    inside [0, 1] and is not degenerate when there are 0 successes, which matters here because
    the belief-agnostic success rates are as small as 2^-11."""
    if n == 0:
        return 0.0, 1.0
    phat = successes / n
    denom = 1.0 + z * z / n
    centre = (phat + z * z / (2 * n)) / denom
    half = z * math.sqrt(phat * (1 - phat) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def mean_interval(x, z=1.96):
    """Normal-approximation interval for the mean of i.i.d. samples x: mean -/+ z * sd / sqrt(n)."""
    x = np.asarray(x, dtype=float)
    mean = float(x.mean())
    half = z * float(x.std(ddof=1)) / math.sqrt(len(x)) if len(x) > 1 else float("inf")
    return mean, mean - half, mean + half
