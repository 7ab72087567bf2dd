"""Exercise 4: the episodic GRPO advantage. group_normalize (exercise 3) is replaced here by a
known stand-in, so this exercise is graded on its own: the stand-in subtracts 100 from every
value of a group with an active cell and records what it was given."""
import torch

import baselines
from baselines import Credit, EstimatorContext

REWARDS = torch.tensor([[[1.0, 0.3], [0.5, 0.7], [0.0, 0.0]]], dtype=torch.float64)
ACTIVE = torch.tensor([[[1, 1], [1, 1], [1, 0]]], dtype=torch.bool)


def credit():
    zeros = torch.zeros(1, 3, 2)
    return Credit(rewards=REWARDS, active=ACTIVE, n_before=zeros, n_after=zeros, belief=zeros.long(),
                  prompt=zeros.long(), n_max=100, max_turns=2)


def test_grpo_broadcasts_the_normalised_return_to_every_played_turn(monkeypatch):
    calls = []

    def stand_in(values, active, dims=1, eps=1e-6):
        calls.append((values.clone(), active.clone(), dims))
        return torch.where(active, values.double() - 100, 0.0)
    monkeypatch.setattr(baselines, "group_normalize", stand_in)
    adv = baselines.grpo(credit(), EstimatorContext())
    (values, active, dims), = calls
    assert torch.allclose(values.double(), torch.tensor([[1.3, 1.2, 0.0]], dtype=torch.float64))   # the returns R
    assert active.all() and tuple(active.shape) == (1, 3) and dims in (1, (1,))                    # over the G rollouts
    expected = torch.tensor([[[-98.7, -98.7], [-98.8, -98.8], [-100.0, 0.0]]], dtype=torch.float64)
    assert adv.shape == (1, 3, 2) and torch.allclose(adv.double(), expected)                       # 0: not played
