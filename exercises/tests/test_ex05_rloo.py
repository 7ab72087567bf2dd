"""Exercise 5: RLOO's per-turn leave-one-out baseline.

Wrong answers these tests tell apart: the mean of all active rollouts (one's own value included);
a division by the std (that is Eq. 1 up to a factor); the other rollouts counted as G - 1 whether
they are active or not; a value for a rollout alone at its turn or for a cell not played."""

import torch
from expect import check

from baselines import leave_one_out

REWARDS = torch.tensor(
    [[[1.0, 0.3], [0.5, 0.7], [0.0, 0.0]], [[1.0, 0.0], [1.0, 0.0], [1.0, 0.0]]],
    dtype=torch.float64,
)
ACTIVE = torch.tensor([[[1, 1], [1, 1], [1, 0]], [[1, 0], [1, 0], [1, 0]]], dtype=torch.bool)


def test_each_value_minus_the_mean_of_the_others_at_its_turn():
    """Turn 0: 1 - (0.5 + 0)/2 = 0.75, 0.5 - 0.5 = 0, 0 - 0.75; turn 1 (rollouts 0, 1 only):
    0.3 - 0.7 = -0.4 and +0.4; equal rewards give 0."""
    adv = leave_one_out(REWARDS, ACTIVE)
    check(
        adv[0, :, 0],
        torch.tensor([0.75, 0.0, -0.75]),
        "turn 0 of secret 0: rewards 1, 0.5, 0, all active",
    )
    check(
        adv[0, :, 1],
        torch.tensor([-0.4, 0.4, 0.0]),
        "turn 1 of secret 0: rewards 0.3, 0.7; rollout 2 not playing",
    )
    check(adv[1], torch.zeros(3, 2), "secret 1: three equal rewards at turn 0, none at turn 1")


def test_unnormalised_and_zero_for_a_rollout_alone():
    """No std division (unlike Eq. 1): rewards 0 and 10 give -10 and +10. A lone rollout gets 0."""
    pair = leave_one_out(torch.tensor([[[0.0], [10.0]]]), torch.ones(1, 2, 1, dtype=torch.bool))
    check(pair.flatten(), torch.tensor([-10.0, 10.0]), "two active rollouts with rewards 0 and 10")
    alone = leave_one_out(torch.tensor([[[5.0], [7.0]]]), torch.tensor([[[True], [False]]]))
    check(
        alone.flatten(),
        torch.zeros(2),
        "rollout 0 alone at its turn (reward 5); rollout 1 inactive (7 is no reward)",
    )


def test_the_others_are_the_active_ones():
    """Four rollouts, two active with rewards 2 and 6 (the inactive cells hold 100): -4 and +4."""
    values = torch.tensor([[[2.0], [100.0], [6.0], [100.0]]])
    active = torch.tensor([[[True], [False], [True], [False]]])
    check(
        leave_one_out(values, active).flatten(),
        torch.tensor([-4.0, 0.0, 4.0, 0.0]),
        "rewards 2, 6 on rollouts 0 and 2; rollouts 1 and 3 inactive",
    )
