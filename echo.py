"""ECHO: Epistemic Credit for History-Conditioned Optimization (paper section 4).

For each training instance (a secret), G rollouts are played with pi_theta_old. At turn t (the
paper's "decision depth"), rollout g took action a_t^(g) under its own belief b_t^(g) and
received the posterior-sensitive turn reward r_t^(g) = u(b_t^(g), a_t^(g), o_t^(g))
(env.turn_reward). A batch of B secrets is a (B, G, T) grid of rewards with an `active` mask:
active[b, g, t] says rollout g of secret b played turn t, i.e. g is in G_t.

Eq. 1 (group normalisation at each turn), over the rollouts G_t still active at turn t:

    A_t^(g) = (r_t^(g) - mean_{j in G_t} r_t^(j)) / (std_{j in G_t} r_t^(j) + eps)

It is scale-free: no advantage exceeds (|G_t| - 1) / sqrt(|G_t|) in size (1.5 at G = 4), whatever
the reward, so a harsher penalty on one rollout of a group barely moves its credit and mostly
squeezes its group's other advantages together (tests/test_echo.py; train.py --redundancy-penalty).

Eq. 2 (clipped objective), with rho = pi_theta(a|h) / pi_theta_old(a|h), the action's
probability being the product of its token probabilities:

    J(theta) = 1 / sum_t |G_t| * sum_t sum_{g in G_t} min(rho A, clip(rho, 1 - eta, 1 + eta) A)

Departures from the paper's code, and why:
- Eq. 1 is taken over the rollouts still active at turn t. The paper's code padded finished
  episodes with reward 0 and normalised over all G, so a rollout that resolved early pulled the
  mean of every later turn down and handed the stragglers' turns positive credit (that variant
  is kept as the `echo-zeropad` ablation in baselines.py).
- A turn with a single active rollout, or no spread, gets advantage 0 (never NaN): there is
  nothing to compare the action with. std is the sample std (ddof = 1), as torch.std and the
  paper's code compute it.
- The ratio is sequence-level as the paper states (one rho per action); `level="token"` gives
  the per-token ratio used by PPO/GRPO implementations, averaged over the action's tokens.
- Where the actions were sampled from another copy of the weights than the one pi_old is scored
  on (lm/engine.py's bf16 rollout copy), each term of Eq. 2 can be weighted by the truncated
  importance ratio min(C, pi_old / pi_copy) of its action (`behaviour_weights`, train.py
  --behaviour-is-cap); the paper samples from pi_old itself and needs none.
"""

from __future__ import annotations

import torch


def group_normalize(
    values: torch.Tensor, active: torch.Tensor, dims=1, eps: float = 1e-6
) -> torch.Tensor:
    """Eq. 1's normalisation: (v - mean) / (std + eps) over the active cells of the group axis
    `dims`, with the sample std; 0 where fewer than two cells of the group are active.
    values, active: (B, G, T) -> (B, G, T), float64. Every depth-grouped estimator calls this."""
    # BEGIN SOLUTION
    v, m = values.double(), active.bool()
    n = m.sum(dim=dims, keepdim=True)  # |G_t|: (B, 1, T)
    mean = torch.where(m, v, 0.0).sum(dim=dims, keepdim=True) / n.clamp(min=1)
    var = torch.where(m, (v - mean) ** 2, 0.0).sum(dim=dims, keepdim=True) / (n - 1).clamp(min=1)
    return torch.where(m & (n > 1), (v - mean) / (var.sqrt() + eps), 0.0)
    # END SOLUTION


def echo_advantages(rewards: torch.Tensor, active: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """Eq. 1. rewards, active: (B, G, T) -> advantages (B, G, T), 0 where inactive: each turn's
    reward normalised over the rollouts G_t of its secret still active at that turn t."""
    return group_normalize(rewards, active, dims=1, eps=eps).float()


def approx_kl(log_ratio: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """k3 estimate of KL(q || p) per action from tokens sampled from q (Schulman 2020):
    x = log p - log q per token, (exp(x) - 1) - x >= 0, summed over the action's tokens.
    (N, L) -> (N,); tokens outside the mask count nothing, whatever value they hold (inf too).
    KL(pi_old || pi): x = log pi - log pi_old; KL(pi || pi_ref): x = log pi_ref - log pi."""
    # BEGIN SOLUTION
    x = torch.where(mask.bool(), log_ratio, 0.0)  # a padding token's value, even inf, stays out
    return (x.exp() - 1 - x).sum(-1)
    # END SOLUTION


def clipped_objective(
    logp_new: torch.Tensor,
    logp_old: torch.Tensor,
    mask: torch.Tensor,
    advantages: torch.Tensor,
    clip_eta: float,
    n_terms: int,
    level: str = "sequence",
) -> tuple[torch.Tensor, dict]:
    """Eq. 2's sum over these (rollout, turn) terms, divided by n_terms: the number of terms the
    optimizer step averages over (update.py: the step's own share of the batch, as PPO's
    minibatches; with the batch's count the minibatches' parts would add up to J exactly).
    Returns (J part, stats).

    logp_new, logp_old, mask: (N, L) per action token (mask marks real tokens); advantages: (N,).
    level "sequence": one ratio per action, rho = exp(sum of its tokens' log-ratios), as the
    paper; "token": a ratio per token, each action's clipped terms averaged over its tokens.
    stats: "clipped" (terms where the clipped branch is the minimum; per token, the action's
    share), "ratio_sum" and "ratio_max" of rho (token level: its mean over the action's tokens),
    "terms" (N).
    """
    # BEGIN SOLUTION
    mask = mask.to(logp_new.dtype)
    if level == "sequence":
        log_ratio = ((logp_new - logp_old) * mask).sum(-1)  # log rho: (N,)
        ratio = log_ratio.exp()
        pg_term1 = ratio * advantages
        pg_term2 = ratio.clamp(1 - clip_eta, 1 + clip_eta) * advantages
        terms = torch.minimum(pg_term1, pg_term2)  # (N,)
        clipped = (pg_term2 < pg_term1).float()
    elif level == "token":
        ratio_tok = (logp_new - logp_old).exp()  # (N, L)
        adv = advantages[:, None]
        pg_term1, pg_term2 = ratio_tok * adv, ratio_tok.clamp(1 - clip_eta, 1 + clip_eta) * adv
        n_tok = mask.sum(-1).clamp(min=1)
        terms = (torch.minimum(pg_term1, pg_term2) * mask).sum(-1) / n_tok
        clipped = ((pg_term2 < pg_term1).float() * mask).sum(-1) / n_tok
        ratio = ((ratio_tok * mask).sum(-1) / n_tok).detach()
    else:
        raise ValueError(f"level must be 'sequence' or 'token', not {level!r}")
    stats = {
        "clipped": clipped.sum().item(),
        "ratio_sum": ratio.detach().sum().item(),
        "ratio_max": ratio.detach().max().item(),
        "terms": len(terms),
    }
    return terms.sum() / n_terms, stats
    # END SOLUTION


def behaviour_weights(logp_old, logp_behaviour, cap: float) -> torch.Tensor:
    """Truncated importance weights of actions drawn from a behaviour policy mu rather than pi_old:
    min(cap, pi_old(a|h) / mu(a|h)) per action, where an action's log-probability is the sum of
    its tokens'. logp_old, logp_behaviour: per action, its tokens' log-probs (a 1-D tensor or a
    list each). Returns (N,), float32. Eq. 2 averages over actions drawn from pi_old; weighting
    each term by this corrects for having drawn them from mu, and the cap bounds what one action
    mu found unlikely can weigh (at the price of a bias on the actions above it)."""
    log_ratio = [  # log pi_old(a|h) - log mu(a|h)
        torch.as_tensor(old, dtype=torch.float64).sum().cpu()
        - torch.as_tensor(mu, dtype=torch.float64).sum().cpu()
        for old, mu in zip(logp_old, logp_behaviour)
    ]
    return torch.stack(log_ratio).exp().clamp(max=cap).float()
