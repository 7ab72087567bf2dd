"""Exercise 4: the episodic GRPO advantage, by value: each rollout's return R = sum of the rewards
of the turns it played, (R - mean) / (std + 1e-6) over its secret's G rollouts (sample std), on
every turn the rollout played and 0 on the others.

So that this exercise is graded alone, Eq. 1's normalisation (exercise 3) is replaced while these
tests run, in echo and in baselines, by `whole_group_normalize`: correct for a group whose cells
are all active, as GRPO's groups are (every rollout has a return). A solution that normalises
inline, or calls group_normalize in either module, is graded the same.

Wrong answers these tests tell apart: a per-turn normalisation (that is ECHO, Eq. 1); a return
that counts cells of turns not played; credit on turns not played; one normalisation over all
secrets; the return-to-go instead of the return."""

from contextlib import contextmanager

import torch
from expect import check

import baselines
import echo
from baselines import Credit, EstimatorContext

# One secret, three rollouts; rollout 2 resolved at turn 0. Its turn-1 cell was not played:
# whatever it holds (9.0 here) is no reward.
REWARDS = torch.tensor([[[1.0, 0.3], [0.5, 0.7], [0.0, 9.0]]], dtype=torch.float64)
ACTIVE = torch.tensor([[[1, 1], [1, 1], [1, 0]]], dtype=torch.bool)


def whole_group_normalize(values, active, dims=1, eps=1e-6):
    """Eq. 1's normalisation for groups whose cells are all active (what GRPO needs)."""
    if not torch.as_tensor(active).bool().all():
        raise AssertionError(
            "group_normalize was given inactive cells: GRPO normalises one return per rollout, "
            "over all G rollouts of the secret, and every rollout has a return"
        )
    v = values.double()
    mean = v.mean(dim=dims, keepdim=True)
    if v.numel() < 2 * mean.numel():  # groups of one: nothing to compare with
        return torch.zeros_like(v)
    return (v - mean) / (v.std(dim=dims, keepdim=True) + eps)


@contextmanager
def whole_group_normalize_in_place():
    saved = baselines.group_normalize, echo.group_normalize
    baselines.group_normalize = echo.group_normalize = whole_group_normalize
    try:
        yield
    finally:
        baselines.group_normalize, echo.group_normalize = saved


def credit(rewards, active):
    zeros = torch.zeros(rewards.shape)
    return Credit(
        rewards=rewards,
        active=active,
        n_before=zeros,
        n_after=zeros,
        belief=zeros.long(),
        prompt=zeros.long(),
        n_max=100,
        max_turns=rewards.shape[-1],
    )


def normalised(returns):
    r = torch.tensor(returns, dtype=torch.float64)
    return (r - r.mean()) / (r.std() + 1e-6)


def test_the_normalised_return_is_every_played_turns_credit():
    """Returns 1.3, 1.2, 0.0 (rollout 2's unplayed cell does not count): z = (R - 0.8333) / 0.7234;
    rollouts 0 and 1 get their z on both turns, rollout 2 on turn 0 only."""
    with whole_group_normalize_in_place():
        adv = baselines.grpo(credit(REWARDS, ACTIVE), EstimatorContext())
    z = normalised([1.3, 1.2, 0.0])
    check(
        adv,
        torch.tensor([[[z[0], z[0]], [z[1], z[1]], [z[2], 0.0]]]),
        "one secret: rollouts with rewards (1, 0.3), (0.5, 0.7), (0) (rollout 2 resolved at "
        "turn 0)",
        tol=1e-5,
    )


def test_each_secret_is_normalised_over_its_own_rollouts():
    """Two secrets of two one-turn rollouts: rewards (1, 3) and (10, 30) both give -1/sqrt 2,
    +1/sqrt 2; equal returns give 0."""
    rewards = torch.tensor([[[1.0], [3.0]], [[10.0], [30.0]], [[2.0], [2.0]]], dtype=torch.float64)
    with whole_group_normalize_in_place():
        adv = baselines.grpo(
            credit(rewards, torch.ones(3, 2, 1, dtype=torch.bool)), EstimatorContext()
        )
    a, b = normalised([1.0, 3.0]), normalised([10.0, 30.0])
    check(
        adv,
        torch.tensor([[[a[0]], [a[1]]], [[b[0]], [b[1]]], [[0.0], [0.0]]]),
        "three secrets of two one-turn rollouts: rewards (1, 3), (10, 30), (2, 2)",
        tol=1e-5,
    )


def test_the_return_is_the_whole_episodes():
    """Rollout 0 plays 3 turns (0, 0, 1), rollout 1 plays 3 turns (1, 0, 0): equal returns, so
    every credit is 0, although their rewards differ turn by turn (ECHO's would not be 0)."""
    rewards = torch.tensor([[[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]], dtype=torch.float64)
    with whole_group_normalize_in_place():
        adv = baselines.grpo(
            credit(rewards, torch.ones(1, 2, 3, dtype=torch.bool)), EstimatorContext()
        )
    check(
        adv,
        torch.zeros(1, 2, 3),
        "two rollouts with rewards (0, 0, 1) and (1, 0, 0): the same return 1",
        tol=1e-9,
    )
