"""The advantage estimators compared in the paper, in one registry (section 5.1 "Baselines").

Same environment, reward and policy; only the credit differs. Every estimator reads the batch
as a (B, G, T) grid (`Credit`: B secrets x G rollouts x T turns, `active` marking the turns that
were played) and returns one advantage per cell; train.py optimises Eq. 2 with them:

    echo        Eq. 1: per-turn rewards, normalised over the secret's rollouts active at turn t
    grpo        episodic return sum_t r_t, normalised over the G rollouts, broadcast to every
                turn (the paper's main RL baseline, "Episodic Return (GRPO)")
    rloo        per-turn leave-one-out: r_t - mean of the other active rollouts at turn t
    pbrs        potential-based shaping (Ng et al. 1999), r'_t = r_t + Phi(b_{t+1}) - Phi(b_t),
                with a potential Phi learned over the belief; credit = shaped return-to-go,
                normalised over the secret's group
    pbrs+rloo   the shaped per-turn reward r'_t with the per-turn leave-one-out baseline
    offline     "Offline SFT+RL": trajectories collected once from the initial policy; first
                supervised (filtered behaviour cloning of the turns better than their turn's
                mean), then single-turn offline RL on the same fixed data; no online play

Beyond the paper:
    echo-belief  Eq. 1 with the group taken over the rollouts at turn t that also hold the same
                 belief C_t: an exact anchor on b_t. A rollout alone with its belief falls back to
                 its turn's group (Eq. 1), so no turn loses its credit.
    echo-zeropad the paper's released code (advantages.py): finished rollouts padded with reward 0
                 and Eq. 1 taken over all G at every turn, std floored at 1e-4; an ablation that
                 shows the bias of counting rollouts that are no longer playing
    rloo-std     the paper's released code's per-turn RLOO (advantages.py): the leave-one-out
                 difference on the same zero-padded grid, divided by the same std as echo-zeropad
    gigpo        GiGPO (Feng et al. 2025, verl-agent): an episode-level advantage (the return
                 normalised over the G rollouts) plus `gigpo_step_weight` times a step-level one,
                 the discounted return-to-go (`gigpo_gamma`) normalised over the rollouts of the
                 secret in an identical state at turn t (same candidates, same arm histories:
                 the same prompt); a state reached by one rollout has step-level advantage 0

Adding an estimator: write f(credit, ctx) -> (B, G, T) advantages and add it to ESTIMATORS.
`ctx` (EstimatorContext) is everything an estimator reads besides the batch: its settings from
train.py's config, how to sum a statistic over the ranks of a torchrun launch, and what it
carries from step to step (saved with every checkpoint).

What the released RLOO is: r - mean of the other G - 1 = G / (G - 1) (r - mean of all G), so the
released code's RLOO per turn is its ECHO times G / (G - 1), 4/3 at G = 4, on every batch
(`rloo_std`, tests/test_echo.py). Adam normalises each step by the gradient's own scale and Eq. 2's
clip acts on the ratio, not on A, so a constant scale on every advantage changes little more than
the rounding; the two should train alike. The paper's Table 1 gives ECHO 45.3% and RLOO per-turn
13.8% resolve: a gap this identity leaves to something other than the credit (seeds, runs, or
settings the TeX does not give). `rloo` is another estimator, the unnormalised leave-one-out.

Choices where the paper is silent: RLOO is the unnormalised leave-one-out of Ahmadian et al.
(2024) (with the std of Eq. 1 it would equal ECHO times G_t / (G_t - 1)); PBRS uses gamma = 1,
Phi(terminal) = 0, and Phi(b) = w . [1, x, x^2, t/T] with x = log|C_t| / log N, refit each batch
by ridge regression of the return-to-go and averaged over batches (ctx.phi). GiGPO follows
its paper's equations: one return per trajectory in the episode-level statistics (the
verl-agent code's default weighs each trajectory by its number of steps), mean and std
normalisation ("mean_std_norm", as its ALFWorld runs), gamma 0.95 and step weight 1 (its
published ALFWorld settings), anchor states matched exactly (here they can be: the prompt is the
state) rather than by hashing observations.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import torch

from echo import echo_advantages, group_normalize


def on_one_rank(values: torch.Tensor) -> torch.Tensor:
    """The sum of a statistic over the ranks when there is one rank: the statistic itself."""
    return values


@dataclass
class EstimatorContext:
    """What an estimator reads besides the batch."""

    gigpo_step_weight: float = 1.0  # gigpo: weight of the step-level advantage
    gigpo_gamma: float = 0.95  # gigpo: discount of the step-level return-to-go
    # ranks.Ranks.sum under torchrun: a statistic of the whole batch
    sum_over_ranks: Callable = on_one_rank
    phi: torch.Tensor | None = None  # pbrs: the potential's weights, averaged over steps
    turn_stats: tuple | None = None  # offline: (mean, std) of the reward at each turn t, (T,) each
    phase: str = "sft"  # offline: "sft" (behaviour cloning), then "rl"

    def carried(self) -> dict:
        """What changes from step to step: saved with a checkpoint, restored on --resume."""
        return {"phi": self.phi, "phase": self.phase}


@dataclass
class Credit:
    """What an estimator may read: the batch as a (B, G, T) grid, one cell per (secret, rollout,
    turn). Cells of turns that were not played (the rollout had resolved) are inactive and 0."""

    rewards: torch.Tensor  # (B, G, T) r_t, float64
    active: torch.Tensor  # (B, G, T) bool: rollout g played turn t, i.e. g is in G_t
    n_before: torch.Tensor  # (B, G, T) |C_t|
    n_after: torch.Tensor  # (B, G, T) |C_{t+1}|
    belief: torch.Tensor  # (B, G, T) long: equal ids <=> equal candidate sets C_t (-1 inactive)
    prompt: torch.Tensor  # (B, G, T) long: equal ids <=> equal prompts (C_t and arm histories)
    n_max: int
    max_turns: int


def credit_from_batch(batch, n_max: int) -> Credit:
    """Lay a rollouts.RolloutBatch's turns out as the (B, G, T) grid of Eq. 1."""
    recs = batch.records
    grid = lambda values: batch.to_grid(torch.tensor(values, dtype=torch.float64))

    def ids(things) -> torch.Tensor:  # equal things, equal ids
        seen = {}
        return batch.to_grid(torch.tensor([seen.setdefault(x, len(seen)) for x in things]), fill=-1)

    return Credit(
        rewards=grid([r.reward for r in recs]),
        active=batch.to_grid(torch.ones(len(recs), dtype=torch.bool), fill=False),
        n_before=grid([r.candidates_before for r in recs]),
        n_after=grid([r.candidates_after for r in recs]),
        belief=ids(batch.beliefs),
        prompt=ids(tuple(p) for p in batch.prompt_ids),
        n_max=n_max,
        max_turns=batch.max_turns,
    )


def turn_groups(c: Credit, within: torch.Tensor | None = None) -> torch.Tensor:
    """Group ids for irregular groups: cells of the same secret b at the same turn t (and, if
    given, with the same `within` id, e.g. the same belief) share an id; inactive cells get -1.
    (B, G, T) long. Regular groups (all of G_t) need no ids: they are the group axis itself."""
    B, G, T = c.active.shape
    b = torch.arange(B)[:, None, None].expand(B, G, T)
    t = torch.arange(T)[None, None, :].expand(B, G, T)
    key = torch.stack([b, t, within if within is not None else torch.zeros_like(b)], -1)[c.active]
    out = torch.full((B, G, T), -1, dtype=torch.long)
    out[c.active] = torch.unique(key, dim=0, return_inverse=True)[1]
    return out


def normalize_within(
    values: torch.Tensor, groups: torch.Tensor, eps: float = 1e-6
) -> tuple[torch.Tensor, torch.Tensor]:
    """(v - mean) / (std + eps) within each group id (sample std), by scatter because the groups
    are irregular; 0 in a group of one. Returns (advantages, size of each cell's group).
    (B, G, T)"""
    # BEGIN SOLUTION
    m = groups >= 0
    idx, v = groups[m], values.double()[m]
    n_groups = int(idx.max()) + 1 if len(idx) else 0
    count = torch.zeros(n_groups, dtype=torch.float64).index_add_(0, idx, torch.ones_like(v))
    mean = torch.zeros(n_groups, dtype=torch.float64).index_add_(0, idx, v) / count
    sq = torch.zeros(n_groups, dtype=torch.float64).index_add_(0, idx, (v - mean[idx]) ** 2)
    std = (sq / (count - 1).clamp(min=1)).sqrt()
    adv = torch.zeros_like(values, dtype=torch.float64)
    size = torch.zeros_like(adv)
    adv[m] = torch.where(count[idx] > 1, (v - mean[idx]) / (std[idx] + eps), 0.0)
    size[m] = count[idx]
    return adv, size
    # END SOLUTION


def episode_returns(c: Credit) -> torch.Tensor:
    """The return R = sum_t r_t of every rollout. (B, G, T) -> (B, G)."""
    return torch.where(c.active, c.rewards, 0.0).sum(-1)


def return_to_go(values: torch.Tensor, active: torch.Tensor) -> torch.Tensor:
    """sum_{s >= t} v_s along each rollout's turns. (B, G, T) -> (B, G, T), 0 where inactive."""
    v = torch.where(active, values, 0.0)
    return torch.where(active, v.flip(-1).cumsum(-1).flip(-1), 0.0)


def leave_one_out(values: torch.Tensor, active: torch.Tensor) -> torch.Tensor:
    """v - mean of the other active rollouts at the same turn (group axis 1); 0 in a group of
    one."""
    # BEGIN SOLUTION
    v, m = values.double(), active.bool()
    n = m.sum(dim=1, keepdim=True)
    others = (torch.where(m, v, 0.0).sum(dim=1, keepdim=True) - v) / (n - 1).clamp(min=1)
    return torch.where(m & (n > 1), v - others, 0.0)
    # END SOLUTION


def echo(c: Credit, ctx: EstimatorContext) -> torch.Tensor:
    return echo_advantages(c.rewards, c.active)


def grpo(c: Credit, ctx: EstimatorContext) -> torch.Tensor:
    """Episodic return R = sum_t r_t over the turns a rollout played, normalised over the secret's
    G rollouts (Eq. 1's normalisation), on every turn the rollout played; 0 on the others."""
    # BEGIN SOLUTION
    every_rollout = torch.ones(c.active.shape[:2], dtype=torch.bool)  # (B, G)
    adv = group_normalize(episode_returns(c), every_rollout, dims=1)  # (B, G)
    return torch.where(c.active, adv[..., None], 0.0)  # broadcast over T
    # END SOLUTION


def rloo(c: Credit, ctx: EstimatorContext) -> torch.Tensor:
    return leave_one_out(c.rewards, c.active)


def echo_belief(c: Credit, ctx: EstimatorContext) -> torch.Tensor:
    """Eq. 1 within the rollouts at turn t that hold the same belief C_t; a rollout alone with
    its belief takes its turn's Eq. 1 advantage instead (the fallback)."""
    by_belief, size = normalize_within(c.rewards, turn_groups(c, c.belief))
    return torch.where(size > 1, by_belief, echo_advantages(c.rewards, c.active).double())


def echo_zeropad(c: Credit, ctx: EstimatorContext) -> torch.Tensor:
    """The paper's released code: every rollout padded to T turns with reward 0, mean and sample
    std over all G at each turn, std floored at 1e-4; the padded cells' credit is dropped."""
    r = torch.where(c.active, c.rewards, 0.0)  # (B, G, T), zero-padded
    mean, std = r.mean(dim=1, keepdim=True), r.std(dim=1, keepdim=True).clamp(min=1e-4)
    return torch.where(c.active, (r - mean) / std, 0.0)


def rloo_std(c: Credit, ctx: EstimatorContext) -> torch.Tensor:
    """The paper's released per-turn RLOO (advantages.py, _rloo_per_turn_advantages): every rollout
    padded to T turns with reward 0; at each turn r minus the mean of the other G - 1 rollouts'
    (padded) rewards, divided by the sample std over all G (floored at 1e-4) as `echo_zeropad`
    divides; the padded cells' credit is dropped. Equal to echo_zeropad times G / (G - 1)."""
    r = torch.where(c.active, c.rewards, 0.0)  # (B, G, T), zero-padded
    G = r.shape[1]
    others = (r.sum(dim=1, keepdim=True) - r) / max(G - 1, 1)  # the leave-one-out mean
    std = r.std(dim=1, keepdim=True).clamp(min=1e-4)
    return torch.where(c.active, (r - others) / std, 0.0)


def discounted_return_to_go(
    values: torch.Tensor, active: torch.Tensor, gamma: float
) -> torch.Tensor:
    """R_t = r_t + gamma R_{t+1} along each rollout's turns. (B, G, T) -> (B, G, T)."""
    out, running = (
        torch.zeros_like(values, dtype=torch.float64),
        torch.zeros(values.shape[:2], dtype=torch.float64),
    )
    for t in reversed(range(values.shape[-1])):
        running = torch.where(active[..., t], values[..., t] + gamma * running, 0.0)
        out[..., t] = running
    return out


def gigpo(c: Credit, ctx: EstimatorContext) -> torch.Tensor:
    """GiGPO: A = A_episode + w A_step. A_episode: the return normalised over the G rollouts.
    A_step: the discounted return-to-go normalised over the rollouts of the secret that reached
    the same state at turn t (an anchor-state group); 0 for a state reached once."""
    a_episode = torch.where(c.active, grpo(c, ctx), 0.0)
    returns_to_go = discounted_return_to_go(c.rewards, c.active, ctx.gigpo_gamma)
    a_step, _ = normalize_within(returns_to_go, turn_groups(c, c.prompt))
    return torch.where(c.active, a_episode + ctx.gigpo_step_weight * a_step, 0.0)


def belief_features(
    n_candidates: torch.Tensor, turn: torch.Tensor, n_max: int, max_turns: int
) -> torch.Tensor:
    """phi(b) for the potential: b_t = Unif(C_t) is summarised by log|C_t| / log N and t / T."""
    x = torch.log(n_candidates.double().clamp(min=1)) / math.log(n_max)
    return torch.stack([torch.ones_like(x), x, x * x, turn.double() / max_turns], dim=-1)


def potential_shaped_rewards(
    c: Credit, ctx: EstimatorContext, ridge: float = 1e-3, momentum: float = 0.9
) -> torch.Tensor:
    """r'_t = r_t + Phi(b_{t+1}) - Phi(b_t), Phi(terminal) = 0; refits Phi (ctx.phi). (B, G, T)"""
    turn = torch.arange(c.max_turns).expand_as(c.rewards)
    f_now = belief_features(c.n_before, turn, c.n_max, c.max_turns)[c.active]  # (N, 4)
    target = return_to_go(c.rewards, c.active)[c.active]  # (N,)
    normal = torch.cat([f_now.T @ f_now, (f_now.T @ target)[:, None]], 1)  # (4, 5)
    normal = ctx.sum_over_ranks(normal)  # of the whole batch
    w = torch.linalg.solve(normal[:, :4] + ridge * torch.eye(4, dtype=f_now.dtype), normal[:, 4])
    ctx.phi = w if ctx.phi is None else momentum * ctx.phi + (1 - momentum) * w
    phi = ctx.phi
    plays_next = torch.zeros_like(c.active)
    plays_next[..., :-1] = c.active[..., 1:]  # it plays turn t + 1: b_{t+1} is not terminal
    phi_now = belief_features(c.n_before, turn, c.n_max, c.max_turns) @ phi
    phi_next = torch.where(
        plays_next, belief_features(c.n_after, turn + 1, c.n_max, c.max_turns) @ phi, 0.0
    )
    return torch.where(c.active, c.rewards + phi_next - phi_now, 0.0)


def pbrs(c: Credit, ctx: EstimatorContext) -> torch.Tensor:
    """Shaped return-to-go (= return-to-go - Phi(b_t)), normalised over all the secret's turns."""
    shaped = potential_shaped_rewards(c, ctx)
    return group_normalize(return_to_go(shaped, c.active), c.active, dims=(1, 2))


def pbrs_rloo(c: Credit, ctx: EstimatorContext) -> torch.Tensor:
    return leave_one_out(potential_shaped_rewards(c, ctx), c.active)


def offline(c: Credit, ctx: EstimatorContext) -> torch.Tensor:
    """Phase "sft": weight 1 on turns better than the mean reward at their turn t in the fixed
    dataset, 0 otherwise (filtered behaviour cloning). Phase "rl": single-turn credit, the turn
    reward normalised by its turn's mean and std over the dataset (no future, no online play).
    ctx.turn_stats = (mean, std), each (T,), is computed once from the whole dataset."""
    mean, std = ctx.turn_stats
    if ctx.phase == "sft":
        return torch.where(c.active & (c.rewards > mean), 1.0, 0.0)
    return torch.where(c.active, (c.rewards - mean) / (std + 1e-6), 0.0)


def turn_stats(
    c: Credit, sum_over_ranks: Callable = on_one_rank
) -> tuple[torch.Tensor, torch.Tensor]:
    """(mean, sample std) of the reward at each turn t over every rollout of c (and of every
    rank's c). Each (T,)."""
    r = torch.where(c.active, c.rewards, 0.0).flatten(0, 1)  # (B * G, T)
    sums = sum_over_ranks(
        torch.stack([c.active.flatten(0, 1).sum(0).double(), r.sum(0), (r * r).sum(0)])
    )
    n, total, squares = sums  # (T,) each, the whole dataset's
    mean = total / n.clamp(min=1)
    var = (squares - n * mean * mean).clamp(min=0) / (n - 1).clamp(min=1)
    return mean, torch.where(n > 1, var.sqrt(), 0.0)


@dataclass(frozen=True)
class Estimator:
    advantages: object  # f(credit, ctx) -> (B, G, T) tensor
    online: bool = True  # False: trains on a fixed dataset collected once (offline)


ESTIMATORS = {
    "echo": Estimator(echo),
    "grpo": Estimator(grpo),
    "rloo": Estimator(rloo),
    "pbrs": Estimator(pbrs),
    "pbrs+rloo": Estimator(pbrs_rloo),
    "offline": Estimator(offline, online=False),
    "echo-belief": Estimator(echo_belief),
    "echo-zeropad": Estimator(echo_zeropad),
    "rloo-std": Estimator(rloo_std),
    "gigpo": Estimator(gigpo),
}
