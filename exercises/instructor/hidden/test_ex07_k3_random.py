"""Hidden tests of exercise 7 (kept out of the student copy): the k3 estimate on random actions,
with padding holding random values, inf and -inf, against a loop over the real tokens; and its
gradient, exp(x) - 1 on real tokens and 0 on padding.

WRONG and RIGHT, at the end, are answers the graded tests must tell apart (see exercise 1's file)."""

import math

import torch
from expect import check

from echo import approx_kl


def by_loop(log_ratio, mask):
    return torch.tensor(
        [
            sum(math.expm1(float(x)) - float(x) for x, real in zip(row, keep) if real)
            for row, keep in zip(log_ratio, mask)
        ],
        dtype=torch.float64,
    )


def random_actions(gen, case):
    N, L = (int(x) for x in torch.randint(1, 6, (2,), generator=gen))
    x = torch.randn(N, L, generator=gen, dtype=torch.float64)
    mask = torch.rand(N, L, generator=gen) < 0.7
    padding = (math.inf, -math.inf, 50.0)[case % 3]
    return torch.where(mask, x, padding), mask.to((torch.float64, torch.bool)[case % 2])


def test_random_actions_match_a_loop():
    """30 random actions, padding holding inf, -inf or 50, float or bool masks: the loop's sum
    over real tokens."""
    gen = torch.Generator().manual_seed(9)
    for case in range(30):
        x, mask = random_actions(gen, case)
        check(
            approx_kl(x, mask),
            by_loop(x, mask),
            f"random actions {case}: x {x.tolist()}, mask {mask.int().tolist()}",
            tol=1e-9,
        )


def test_random_gradients_are_exp_minus_one_on_real_tokens():
    """10 random actions: the gradient is exp(x) - 1 on real tokens and exactly 0 on padding."""
    gen = torch.Generator().manual_seed(10)
    for case in range(10):
        x, mask = random_actions(gen, case)
        x.requires_grad_(True)
        kl = approx_kl(x, mask)
        what = f"random actions {case}: x {x.tolist()}, mask {mask.int().tolist()}"
        if not kl.requires_grad:
            raise AssertionError(f"the result has no gradient for {what}")
        kl.sum().backward()
        check(
            x.grad,
            torch.where(mask.bool(), x.detach().expm1(), 0.0),
            f"d kl / d log_ratio for {what}",
            tol=1e-9,
        )


# ---------------------------------------------------------------- answers to tell apart
# Each is planted as echo.approx_kl, so it may use only what echo.py defines.


def approx_kl__sign_turned(log_ratio, mask):
    """Wrong: x - (exp(x) - 1), never positive."""
    x = torch.where(mask.bool(), log_ratio, 0.0)
    return (x - (x.exp() - 1)).sum(-1)


def approx_kl__mean_over_tokens(log_ratio, mask):
    """Wrong: the mean over the real tokens instead of their sum."""
    x = torch.where(mask.bool(), log_ratio, 0.0)
    return (x.exp() - 1 - x).sum(-1) / mask.sum(-1).clamp(min=1)


def approx_kl__mask_after_exp(log_ratio, mask):
    """Wrong: the mask multiplied in after exp: inf * 0 is NaN."""
    return ((log_ratio.exp() - 1 - log_ratio) * mask).sum(-1)


def approx_kl__no_gradient(log_ratio, mask):
    """Wrong: computed without gradient."""
    with torch.no_grad():
        x = torch.where(mask.bool(), log_ratio, 0.0)
        return (x.exp() - 1 - x).sum(-1)


def approx_kl__k1(log_ratio, mask):
    """Wrong: the k1 estimate -x, negative half the time."""
    return torch.where(mask.bool(), -log_ratio, 0.0).sum(-1)


def approx_kl__expm1(log_ratio, mask):
    """Right: expm1, with the padding selected away before any arithmetic."""
    x = log_ratio.masked_fill(~mask.bool(), 0.0)
    return (torch.expm1(x) - x).sum(-1)


def approx_kl__per_row(log_ratio, mask):
    """Right: one action at a time, only its real tokens."""
    rows = [(torch.exp(x[m.bool()]) - 1 - x[m.bool()]).sum() for x, m in zip(log_ratio, mask)]
    return torch.stack(rows)


WRONG = [
    approx_kl__sign_turned,
    approx_kl__mean_over_tokens,
    approx_kl__mask_after_exp,
    approx_kl__no_gradient,
    approx_kl__k1,
]
RIGHT = [approx_kl__expm1, approx_kl__per_row]
