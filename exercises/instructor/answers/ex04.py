"""Exercise 4's answers to tell apart, planted as baselines.grpo: WRONG, likely mistakes that must
turn the exercise to FAIL, and RIGHT, two correct answers written differently from the reference
that must PASS (exercises/instructor/answers/__init__.py plants them). An answer may use only
what the module it is planted in defines; the imports name those."""

import torch

from baselines import episode_returns, group_normalize, return_to_go
from echo import echo_advantages


def grpo__per_turn(c, ctx):
    """Wrong: each turn's reward normalised among the rollouts active at that turn (ECHO's)."""
    return echo_advantages(c.rewards, c.active).double()


def grpo__unmasked_return(c, ctx):
    """Wrong: the return sums every cell, played or not."""
    every_rollout = torch.ones(c.active.shape[:2], dtype=torch.bool)
    adv = group_normalize(c.rewards.sum(-1), every_rollout, dims=1)
    return torch.where(c.active, adv[..., None], 0.0)


def grpo__every_turn(c, ctx):
    """Wrong: the credit also lands on turns the rollout did not play."""
    every_rollout = torch.ones(c.active.shape[:2], dtype=torch.bool)
    adv = group_normalize(episode_returns(c), every_rollout, dims=1)
    return adv[..., None].expand(c.active.shape).clone()


def grpo__over_the_batch(c, ctx):
    """Wrong: one normalisation over the rollouts of every secret."""
    returns = episode_returns(c)
    adv = (returns - returns.mean()) / (returns.std() + 1e-6)
    return torch.where(c.active, adv[..., None], 0.0)


def grpo__return_to_go(c, ctx):
    """Wrong: the return from turn t on, normalised among the rollouts at turn t."""
    return group_normalize(return_to_go(c.rewards, c.active), c.active, dims=1)


def grpo__inline(c, ctx):
    """Right: Eq. 1's normalisation written out for whole groups."""
    returns = torch.where(c.active, c.rewards, 0.0).sum(-1)  # (B, G)
    mean, std = returns.mean(dim=1, keepdim=True), returns.std(dim=1, keepdim=True)
    adv = torch.where(std.isnan() | (std == 0), 0.0, (returns - mean) / (std + 1e-6))
    return torch.where(c.active, adv[..., None], 0.0)


def grpo__through_echo(c, ctx):
    """Right: echo.group_normalize on the returns laid out as a (B, G, 1) grid."""
    import echo

    returns = episode_returns(c)[..., None]  # (B, G, 1)
    adv = echo.group_normalize(returns, torch.ones_like(returns, dtype=torch.bool), dims=1)
    return torch.where(c.active, adv, 0.0)


WRONG = [
    grpo__per_turn,
    grpo__unmasked_return,
    grpo__every_turn,
    grpo__over_the_batch,
    grpo__return_to_go,
]
RIGHT = [grpo__inline, grpo__through_echo]
