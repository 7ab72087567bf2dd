"""Aggregation across runs, as the paper does it: mean and SEM over runs, and the paired t-test
of its final-window comparison (tab:echo_grpo_final_window_stats).

SciPy is not a dependency, so the Student t tail is computed here from the regularized
incomplete beta function (continued fraction, Numerical Recipes 6.4), tested against mpmath.
"""

import math

import numpy as np

NAN = float("nan")


def spread(x: np.ndarray) -> float:
    """std(ddof=1) of x, 0 where the values are equal up to float rounding (19 / 20 computed two
    ways can differ in the last bit: that is no spread, and no t-statistic of 10^16)."""
    sd = float(x.std(ddof=1))
    return 0.0 if sd <= 1e-12 * max(1.0, float(np.abs(x).max())) else sd


def mean_sem(values) -> tuple[float, float]:
    """(mean, SEM) over runs, SEM = std(ddof=1) / sqrt(n); NaN runs are left out; SEM is NaN for n <
    2."""
    x = np.asarray([v for v in values if v is not None and not math.isnan(v)], dtype=float)
    if len(x) == 0:
        return NAN, NAN
    return float(x.mean()), spread(x) / math.sqrt(len(x)) if len(x) > 1 else NAN


def betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta I_x(a, b), by its continued fraction (modified Lentz).

    I_x(a, b) = x^a (1-x)^b / (a B(a, b)) * 1 / (1 + d_1 / (1 + d_2 / (1 + ...))), which
    converges fast for x < (a + 1) / (a + b + 2); otherwise use I_x(a, b) = 1 - I_{1-x}(b, a).
    """
    if not 0.0 <= x <= 1.0:
        raise ValueError(f"x = {x} is outside [0, 1]")
    if x in (0.0, 1.0):
        return x
    if x > (a + 1) / (a + b + 2):
        return 1.0 - betainc(b, a, 1.0 - x)
    log_front = (
        a * math.log(x)
        + b * math.log1p(-x)
        - (math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b))
    )
    tiny, c, d = 1e-300, 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    f = d
    for m in range(1, 500):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),  # d_2m
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),  # d_2m+1
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            f *= c * d
        if abs(c * d - 1.0) < 1e-15:
            break
    return math.exp(log_front) * f / a


def two_sided_p(t: float, df: float) -> float:
    """P(|T| >= |t|) for Student's t with df degrees of freedom: I_{df/(df+t^2)}(df/2, 1/2),
    exact in the tail (no 1 - CDF cancellation)."""
    return 0.0 if math.isinf(t) else betainc(df / 2, 0.5, df / (df + t * t))


def paired_t_test(a, b) -> tuple[float, float]:
    """Two-sided paired t-test of mean(a - b) = 0 (e.g. per-seed final-window means of two
    methods): t = mean(d) / (std(d, ddof=1) / sqrt(n)), p = 2 P(T_{n-1} > |t|). (NaN, NaN) for
    n < 2; with identical differences t is +-inf and p = 0 (or t = NaN, p = 1 if all are 0)."""
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    n = len(d)
    if n < 2:
        return NAN, NAN
    sd = spread(d)
    if sd == 0:
        return (NAN, 1.0) if d.mean() == 0 else (math.copysign(math.inf, d.mean()), 0.0)
    t = float(d.mean() / (sd / math.sqrt(n)))
    return t, two_sided_p(t, n - 1)


def paired_by_seed(rows: list[dict], first: str, figures) -> dict:
    """{other estimator: {figure: {mean_difference, t, p, seeds}}}: `first` minus each other
    estimator of `rows` ({"estimator", "seed", figure: value}), paired by seed over the seeds both
    have; an estimator with no seed in common is left out."""
    by = {(r["estimator"], r["seed"]): r for r in rows}
    out = {}
    for other in sorted({r["estimator"] for r in rows} - {first}):
        seeds = sorted(s for e, s in by if e == other and (first, s) in by)
        if seeds:
            out[other] = {}
        for key in figures if seeds else ():
            a, b = [by[first, s][key] for s in seeds], [by[other, s][key] for s in seeds]
            t, p = paired_t_test(a, b)
            out[other][key] = {
                "mean_difference": sum(x - y for x, y in zip(a, b)) / len(seeds),
                "t": t,
                "p": p,
                "seeds": seeds,
            }
    return out
