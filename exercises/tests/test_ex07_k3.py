"""Exercise 7: the k3 estimate of KL(q || p) per action, (exp(x) - 1) - x summed over the real
tokens.

Wrong answers these tests tell apart: the sign turned (x - (exp(x) - 1), never positive); a mean
over the tokens instead of the sum; the mask applied after exp (inf * 0 is NaN on a padding token
holding inf); a result without gradient; the k1 estimate -x (negative half the time)."""

import math

import torch
from expect import check

from echo import approx_kl


def test_one_token_by_hand_and_padding_ignored():
    """x = log 2 on the real token: 2 - 1 - log 2 = 1 - log 2; the padded token's 5.0 counts
    nothing."""
    kl = approx_kl(torch.tensor([[math.log(2), 5.0]]), torch.tensor([[1.0, 0.0]]))
    check(
        kl,
        torch.tensor([1 - math.log(2)]),
        "one action: a real token with x = log 2, a padding token holding 5.0",
    )


def test_sums_over_tokens_is_zero_only_at_zero_and_never_negative():
    """Three actions of two real tokens: x = (0, 0), (0.5, -0.5), (-3, 0)."""
    x = torch.tensor([[0.0, 0.0], [0.5, -0.5], [-3.0, 0.0]])
    expected = torch.tensor(
        [0.0, (math.exp(0.5) - 1.5) + (math.exp(-0.5) - 0.5), math.exp(-3) - 1 + 3]
    )
    check(
        approx_kl(x, torch.ones(3, 2)),
        expected,
        "three actions of two real tokens: x = (0, 0), (0.5, -0.5), (-3, 0)",
    )


def test_a_padding_token_holding_inf_counts_nothing():
    """Padding can hold any value, inf and -inf included (a log-prob of 0 probability): the
    result is the real tokens' sum, finite."""
    x = torch.tensor([[math.log(2), math.inf], [0.5, -math.inf]])
    mask = torch.tensor([[1.0, 0.0], [1.0, 0.0]])
    check(
        approx_kl(x, mask),
        torch.tensor([1 - math.log(2), math.exp(0.5) - 1.5]),
        "two actions, one real token each (x = log 2 and 0.5), padding tokens holding inf and -inf",
    )


def test_the_gradient_reaches_the_log_ratios():
    """kl_beta adds the KL to the loss, so its gradient matters: d/dx of (exp(x) - 1) - x is
    exp(x) - 1 on a real token and 0 on padding, even padding holding inf."""
    x = torch.tensor([[math.log(2), 0.5, math.inf]], requires_grad=True)
    kl = approx_kl(x, torch.tensor([[1.0, 1.0, 0.0]]))
    case = "one action: real tokens x = log 2 and 0.5, a padding token holding inf"
    check(
        kl.requires_grad,
        True,
        f"kl.requires_grad for {case}: compute it from log_ratio with torch operations "
        "(no .item(), .detach() or numpy)",
    )
    kl.sum().backward()
    check(x.grad, torch.tensor([[1.0, math.exp(0.5) - 1, 0.0]]), f"d kl / d log_ratio for {case}")
