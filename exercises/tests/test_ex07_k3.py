"""Exercise 7: the k3 estimate of KL(q || p) per action, (exp(x) - 1) - x summed over tokens."""
import math

import pytest
import torch

from echo import approx_kl


def test_one_token_by_hand_and_padding_ignored():
    """x = log 2 on the real token: 2 - 1 - log 2 = 1 - log 2; the padded token's 5.0 counts nothing."""
    kl = approx_kl(torch.tensor([[math.log(2), 5.0]]), torch.tensor([[1.0, 0.0]]))
    assert kl.shape == (1,) and kl.item() == pytest.approx(1 - math.log(2))


def test_sums_over_tokens_is_zero_only_at_zero_and_never_negative():
    x = torch.tensor([[0.0, 0.0], [0.5, -0.5], [-3.0, 0.0]])
    kl = approx_kl(x, torch.ones(3, 2))
    expected = [0.0, (math.exp(0.5) - 1.5) + (math.exp(-0.5) - 0.5), math.exp(-3) - 1 + 3]
    assert kl.tolist() == pytest.approx(expected) and (kl >= 0).all()
