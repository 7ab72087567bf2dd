"""The advantage estimators compared in the paper, in one registry (section 5.1 "Baselines").

Same environment, reward and policy; only the credit differs. Every estimator maps the flat
turns of one batch (a `Credit`) to one advantage per turn, and train.py optimises Eq. 2 with it:

    echo        Eq. 1: per-turn rewards, normalised over the same secret's rollouts at depth t
    grpo        episodic return sum_t r_t, normalised over the G rollouts, broadcast to every
                turn (the paper's main RL baseline, "Episodic Return (GRPO)")
    rloo        per-turn leave-one-out: r_t - mean of the other active rollouts at depth t
    pbrs        potential-based shaping (Ng et al. 1999), r'_t = r_t + Phi(b_{t+1}) - Phi(b_t),
                with a potential Phi learned over the belief; credit = shaped return-to-go,
                normalised over the group
    pbrs+rloo   the shaped per-turn reward r'_t with the per-turn leave-one-out baseline
    offline     "Offline SFT+RL": trajectories collected once from the initial policy; first
                supervised (filtered behaviour cloning of the turns better than their depth's
                mean), then single-turn offline RL on the same fixed data; no online play

Adding an estimator: write f(credit, state) -> (N,) advantages and add it to ESTIMATORS.

Choices where the paper is silent: RLOO is the unnormalised leave-one-out of Ahmadian et al.
(2024) (with the std of Eq. 1 it would equal ECHO times G_t / (G_t - 1)); PBRS uses gamma = 1,
Phi(terminal) = 0, and Phi(b) = w . [1, x, x^2, t/T] with x = log|C_t| / log N, refit each batch
by ridge regression of the return-to-go and averaged over batches (state["phi"]).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from echo import echo_advantages, group_normalize


@dataclass
class Credit:
    """What an estimator may read: one entry per played turn, all (N,) tensors."""
    rewards: torch.Tensor
    group: torch.Tensor      # b: which secret (its G rollouts share b)
    episode: torch.Tensor    # which rollout
    depth: torch.Tensor      # t
    n_before: torch.Tensor   # |C_t|
    n_after: torch.Tensor    # |C_{t+1}|
    done: torch.Tensor       # the episode ended after this turn (resolved or out of turns)
    n_max: int
    max_turns: int


def credit_from_rollout(rollout, n_max: int, max_turns: int) -> Credit:
    """Flatten a policy.Rollout into a Credit."""
    recs = rollout.records
    episode = torch.tensor([r.episode for r in recs])
    last = {}
    for i, r in enumerate(recs):
        last[r.episode] = i
    done = torch.zeros(len(recs), dtype=torch.bool)
    done[list(last.values())] = True
    return Credit(rewards=torch.tensor([r.reward for r in recs], dtype=torch.float64),
                  group=torch.tensor([rollout.group[r.episode] for r in recs]), episode=episode,
                  depth=torch.tensor([r.turn for r in recs]),
                  n_before=torch.tensor([r.candidates_before for r in recs], dtype=torch.float64),
                  n_after=torch.tensor([r.candidates_after for r in recs], dtype=torch.float64),
                  done=done, n_max=n_max, max_turns=max_turns)


def return_to_go(values: torch.Tensor, episode: torch.Tensor, depth: torch.Tensor) -> torch.Tensor:
    """sum_{s >= t} v_s within each episode. (N,) -> (N,)"""
    out = torch.zeros_like(values)
    for e in torch.unique(episode):
        rows = torch.nonzero(episode == e).squeeze(-1)
        rows = rows[torch.argsort(depth[rows])]
        out[rows] = values[rows].flip(0).cumsum(0).flip(0)
    return out


def leave_one_out(values: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
    """v - mean of the other members of its group; 0 in a group of one. (N,) -> (N,)"""
    values = values.double()
    _, idx = torch.unique(keys, return_inverse=True)
    count = torch.zeros(int(idx.max()) + 1, dtype=values.dtype).index_add_(0, idx, torch.ones_like(values))
    total = torch.zeros_like(count).index_add_(0, idx, values)
    others = (total[idx] - values) / (count[idx] - 1).clamp(min=1)
    return torch.where(count[idx] > 1, values - others, torch.zeros_like(values)).float()


def depth_key(c: Credit) -> torch.Tensor:
    return c.group.long() * (c.max_turns + 1) + c.depth.long()


def echo(c: Credit, state: dict) -> torch.Tensor:
    return echo_advantages(c.rewards, c.group, c.depth)


def grpo(c: Credit, state: dict) -> torch.Tensor:
    """Episodic return G = sum_t r_t, normalised over the secret's G rollouts, on every turn."""
    _, idx = torch.unique(c.episode, return_inverse=True)              # (N,) episode of each turn
    n_episodes = int(idx.max()) + 1
    returns = torch.zeros(n_episodes, dtype=torch.float64).index_add_(0, idx, c.rewards)   # (E,)
    group = torch.zeros(n_episodes, dtype=torch.long).scatter_(0, idx, c.group.long())       # (E,)
    return group_normalize(returns, group)[idx]   # one value per episode, broadcast to its turns


def rloo(c: Credit, state: dict) -> torch.Tensor:
    return leave_one_out(c.rewards, depth_key(c))


def belief_features(n_candidates: torch.Tensor, depth: torch.Tensor, n_max: int, max_turns: int) -> torch.Tensor:
    """phi(b) for the potential: b_t = Unif(C_t) is summarised by log|C_t| / log N and t / T."""
    x = torch.log(n_candidates.double().clamp(min=1)) / math.log(n_max)
    return torch.stack([torch.ones_like(x), x, x * x, depth.double() / max_turns], dim=-1)


def potential_shaped_rewards(c: Credit, state: dict, ridge: float = 1e-3, momentum: float = 0.9) -> torch.Tensor:
    """r'_t = r_t + Phi(b_{t+1}) - Phi(b_t), Phi(terminal) = 0; refits Phi (state["phi"])."""
    f_now = belief_features(c.n_before, c.depth, c.n_max, c.max_turns)
    target = return_to_go(c.rewards, c.episode, c.depth)
    w = torch.linalg.solve(f_now.T @ f_now + ridge * torch.eye(4, dtype=f_now.dtype), f_now.T @ target)
    state["phi"] = w if "phi" not in state else momentum * state["phi"] + (1 - momentum) * w
    phi = state["phi"]
    f_next = belief_features(c.n_after, c.depth + 1, c.n_max, c.max_turns)
    phi_next = torch.where(c.done, torch.zeros_like(c.rewards), f_next @ phi)
    return c.rewards + phi_next - f_now @ phi


def pbrs(c: Credit, state: dict) -> torch.Tensor:
    """Shaped return-to-go (= return-to-go - Phi(b_t)), normalised over the secret's rollouts."""
    shaped = potential_shaped_rewards(c, state)
    return group_normalize(return_to_go(shaped, c.episode, c.depth), c.group)


def pbrs_rloo(c: Credit, state: dict) -> torch.Tensor:
    return leave_one_out(potential_shaped_rewards(c, state), depth_key(c))


def offline(c: Credit, state: dict) -> torch.Tensor:
    """Phase "sft": weight 1 on turns better than the mean reward at their depth in the fixed
    dataset, 0 otherwise (filtered behaviour cloning). Phase "rl": single-turn credit, the turn
    reward normalised by its depth's mean and std over the dataset (no future, no online play).
    state["depth_stats"] = {t: (mean, std)} is computed once from the whole dataset by train.py."""
    stats = state["depth_stats"]
    mean = torch.tensor([stats[int(t)][0] for t in c.depth], dtype=torch.float64)
    std = torch.tensor([stats[int(t)][1] for t in c.depth], dtype=torch.float64)
    if state.get("phase", "sft") == "sft":
        return (c.rewards > mean).float()
    return ((c.rewards - mean) / (std + 1e-6)).float()


@dataclass(frozen=True)
class Estimator:
    advantages: object          # f(credit, state) -> (N,) tensor
    online: bool = True         # False: trains on a fixed dataset collected once (offline)


ESTIMATORS = {"echo": Estimator(echo), "grpo": Estimator(grpo), "rloo": Estimator(rloo),
              "pbrs": Estimator(pbrs), "pbrs+rloo": Estimator(pbrs_rloo),
              "offline": Estimator(offline, online=False)}
