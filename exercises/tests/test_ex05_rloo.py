"""Exercise 5: RLOO's per-turn leave-one-out baseline."""
import torch

from baselines import leave_one_out

REWARDS = torch.tensor([[[1.0, 0.3], [0.5, 0.7], [0.0, 0.0]],
                        [[1.0, 0.0], [1.0, 0.0], [1.0, 0.0]]], dtype=torch.float64)
ACTIVE = torch.tensor([[[1, 1], [1, 1], [1, 0]],
                       [[1, 0], [1, 0], [1, 0]]], dtype=torch.bool)


def test_each_value_minus_the_mean_of_the_others_at_its_turn():
    """Turn 0: 1 - (0.5 + 0)/2 = 0.75, 0.5 - 0.5 = 0, 0 - 0.75; turn 1 (rollouts 0, 1 only):
    0.3 - 0.7 = -0.4 and +0.4; equal rewards give 0."""
    expected = torch.tensor([[[0.75, -0.4], [0.0, 0.4], [-0.75, 0.0]], [[0.0, 0.0]] * 3], dtype=torch.float64)
    assert torch.allclose(leave_one_out(REWARDS, ACTIVE), expected, atol=1e-9)


def test_unnormalised_and_zero_for_a_rollout_alone():
    """No std division (unlike Eq. 1): rewards 0 and 10 give -10 and +10. A lone rollout gets 0."""
    pair = leave_one_out(torch.tensor([[[0.0], [10.0]]]), torch.ones(1, 2, 1, dtype=torch.bool))
    assert pair.flatten().tolist() == [-10.0, 10.0]
    assert leave_one_out(torch.tensor([[[5.0], [7.0]]]), torch.tensor([[[True], [False]]])).abs().sum() == 0
