"""Exercise 7's answers to tell apart, planted as echo.approx_kl: WRONG, likely mistakes that must
turn the exercise to FAIL, and RIGHT, two correct answers written differently from the reference
that must PASS (exercises/instructor/answers/__init__.py plants them). An answer may use only
what the module it is planted in defines; the imports name those."""

import torch


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
