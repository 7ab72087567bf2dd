"""Exercise 3: Eq. 1, the group normalisation over the rollouts active at each turn."""
import math

import torch

from echo import echo_advantages, group_normalize

# Secret 0: three rollouts; rollout 2 resolved at turn 0, so only 0 and 1 play turn 1.
# Secret 1: three rollouts with equal rewards, one turn each.
REWARDS = torch.tensor([[[1.0, 0.3], [0.5, 0.7], [0.0, 0.0]],
                        [[1.0, 0.0], [1.0, 0.0], [1.0, 0.0]]], dtype=torch.float64)
ACTIVE = torch.tensor([[[1, 1], [1, 1], [1, 0]],
                       [[1, 0], [1, 0], [1, 0]]], dtype=torch.bool)


def test_each_turn_is_normalised_over_its_active_rollouts():
    """Turn 0 of secret 0: mean 0.5, sample std 0.5 -> 1, 0, -1. Turn 1: only rollouts 0 and 1
    (mean 0.5, std 0.2 sqrt 2) -> -1/sqrt 2, +1/sqrt 2; rollout 2's empty cell stays 0."""
    adv = group_normalize(REWARDS, ACTIVE)
    assert adv.shape == (2, 3, 2) and adv.dtype == torch.float64
    expected = torch.tensor([[1, -1 / math.sqrt(2)], [0, 1 / math.sqrt(2)], [-1, 0]], dtype=torch.float64)
    assert torch.allclose(adv[0], expected, atol=1e-5)


def test_no_spread_or_a_single_rollout_gives_zero_never_nan():
    adv = group_normalize(REWARDS, ACTIVE)
    assert torch.equal(adv[1], torch.zeros(3, 2, dtype=torch.float64))
    alone = group_normalize(torch.tensor([[[3.0], [5.0]]]), torch.tensor([[[True], [False]]]))
    assert alone.tolist() == [[[0.0], [0.0]]]


def test_eps_is_added_to_the_std():
    """Two rewards 0 and 2: std sqrt 2, so the advantages are +-1 / (sqrt 2 + eps)."""
    adv = group_normalize(torch.tensor([[[0.0], [2.0]]]), torch.ones(1, 2, 1, dtype=torch.bool), eps=0.5)
    assert torch.allclose(adv.flatten(), torch.tensor([-1.0, 1.0], dtype=torch.float64) / (math.sqrt(2) + 0.5))


def test_the_group_can_span_several_axes():
    """dims=(1, 2): all five active rewards of secret 0 at once (mean 0.5, sample std 0.3808)."""
    adv = group_normalize(REWARDS, ACTIVE, dims=(1, 2))
    five = torch.tensor([1.0, 0.3, 0.5, 0.7, 0.0], dtype=torch.float64)
    assert torch.allclose(adv[0][ACTIVE[0]], (five - 0.5) / (five.std() + 1e-6), atol=1e-9)


def test_echo_advantages_is_eq1_over_the_group_axis():
    assert torch.equal(echo_advantages(REWARDS, ACTIVE), group_normalize(REWARDS, ACTIVE, dims=1).float())
