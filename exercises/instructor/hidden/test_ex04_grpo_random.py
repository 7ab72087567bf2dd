"""Hidden tests of exercise 4 (kept out of the student copy): GRPO on random batches against a loop
over the secrets, with episodes of random lengths and garbage in the cells of turns not played.
Eq. 1's normalisation is replaced as in the graded tests (test_ex04_grpo.py), so exercise 3 is
not needed.

WRONG and RIGHT, at the end, are answers the graded tests must tell apart (see exercise 1's file)."""

import statistics

import torch
from expect import check
from test_ex04_grpo import credit, whole_group_normalize_in_place

import baselines
from baselines import EstimatorContext


def by_loop(rewards, active):
    B, G, T = rewards.shape
    out = torch.zeros(B, G, T, dtype=torch.float64)
    for b in range(B):
        returns = [
            sum(float(rewards[b, g, t]) for t in range(T) if active[b, g, t]) for g in range(G)
        ]
        if G > 1:
            mean, std = statistics.mean(returns), statistics.stdev(returns)
            for g in range(G):
                for t in range(T):
                    if active[b, g, t]:
                        out[b, g, t] = (returns[g] - mean) / (std + 1e-6) if std > 0 else 0.0
    return out


def test_random_batches_match_a_loop():
    """30 random batches, episodes of random lengths, garbage in unplayed cells: the loop's
    normalised returns on the played turns."""
    gen = torch.Generator().manual_seed(5)
    for case in range(30):
        B, G, T = (int(x) for x in torch.randint(1, 6, (3,), generator=gen))
        lengths = torch.randint(1, T + 1, (B, G), generator=gen)  # every rollout plays turn 0
        active = torch.arange(T)[None, None, :] < lengths[..., None]
        rewards = torch.randn(B, G, T, generator=gen, dtype=torch.float64)
        rewards = torch.where(active, rewards, 5.0)  # unplayed cells hold garbage
        with whole_group_normalize_in_place():
            adv = baselines.grpo(credit(rewards, active), EstimatorContext())
        check(
            adv,
            by_loop(rewards, active),
            f"random batch {case}: rewards {rewards.tolist()}, active "
            f"{active.int().tolist()} (5.0 marks a cell not played)",
            tol=1e-5,
        )


# ---------------------------------------------------------------- answers to tell apart
# Each is planted as baselines.grpo, so it may use only what baselines.py defines.


def grpo__per_turn(c, ctx):
    """Wrong: each turn's reward normalised among the rollouts active at that turn (that is ECHO)."""
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
