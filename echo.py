"""ECHO: Epistemic Credit for History-Conditioned Optimization (paper section 4).

For each training instance (a secret), G rollouts are played with pi_theta_old. At decision
depth t, rollout g took action a_t^(g) under its own belief b_t^(g) and received the
posterior-sensitive turn reward r_t^(g) = u(b_t^(g), a_t^(g), o_t^(g)) (env.turn_reward).

Eq. 1 (depth-wise group normalisation), over the rollouts G_t still active at depth t:

    A_t^(g) = (r_t^(g) - mean_{j in G_t} r_t^(j)) / (std_{j in G_t} r_t^(j) + eps)

Eq. 2 (clipped objective), with rho = pi_theta(a|h) / pi_theta_old(a|h), the action's
probability being the product of its token probabilities:

    J(theta) = 1 / sum_t |G_t| * sum_t sum_{g in G_t} min(rho A, clip(rho, 1 - eta, 1 + eta) A)

Departures from the paper's code, and why:
- Eq. 1 is taken over the rollouts still active at depth t. The paper's code padded finished
  episodes with reward 0 and normalised over all G, so a rollout that resolved early pulled the
  mean of every later depth down and handed the stragglers' turns positive credit.
- A depth with a single active rollout, or no spread, gets advantage 0 (never NaN): there is
  nothing to compare the action with. std is the sample std (ddof = 1), as torch.std and the
  paper's code compute it.
- The ratio is sequence-level as the paper states (one rho per action); `level="token"` gives
  the per-token ratio used by PPO/GRPO implementations, averaged over the action's tokens.
"""
from __future__ import annotations

import torch


def group_normalize(values: torch.Tensor, keys: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """(v - mean_k) / (std_k + eps) within each group k of equal keys; 0 in a group of one.

    values, keys: (N,). std is the sample std (ddof = 1). Pure: the math of Eq. 1.
    """
    values = values.double()
    _, idx = torch.unique(keys, return_inverse=True)                  # group index of each value
    n_groups = int(idx.max()) + 1 if len(idx) else 0
    count = torch.zeros(n_groups, dtype=values.dtype).index_add_(0, idx, torch.ones_like(values))
    mean = torch.zeros(n_groups, dtype=values.dtype).index_add_(0, idx, values) / count
    centred = values - mean[idx]
    sq = torch.zeros(n_groups, dtype=values.dtype).index_add_(0, idx, centred ** 2)
    std = (sq / (count - 1).clamp(min=1)).sqrt()
    adv = centred / (std[idx] + eps)
    return torch.where(count[idx] > 1, adv, torch.zeros_like(adv)).float()


def echo_advantages(rewards, group, depth, eps: float = 1e-6) -> torch.Tensor:
    """Eq. 1: normalise each turn reward among the same secret's rollouts active at its depth.

    rewards, group, depth: (N,) one entry per played turn (a finished rollout has no turn at
    depth t, so it is not in G_t). group = which secret's G rollouts; depth = t.
    """
    rewards, group, depth = (torch.as_tensor(x) for x in (rewards, group, depth))
    key = group.long() * (int(depth.max()) + 1 if len(depth) else 1) + depth.long()  # one key per (secret, t)
    return group_normalize(rewards.double(), key, eps)


def clipped_objective(logp_new: torch.Tensor, logp_old: torch.Tensor, mask: torch.Tensor,
                      advantages: torch.Tensor, clip_eta: float, n_terms: int,
                      level: str = "sequence") -> tuple[torch.Tensor, dict]:
    """Eq. 2's sum over these (rollout, turn) terms, divided by n_terms (all terms of the batch,
    so micro-batch sums add up to J exactly). Returns (J part, diagnostics).

    logp_new, logp_old, mask: (N, L) per action token (mask marks real tokens); advantages: (N,).
    """
    mask = mask.to(logp_new.dtype)
    if level == "sequence":
        log_ratio = ((logp_new - logp_old) * mask).sum(-1)                # log rho: (N,)
        ratio = log_ratio.exp()
        unclipped = ratio * advantages
        clipped = ratio.clamp(1 - clip_eta, 1 + clip_eta) * advantages
        terms = torch.minimum(unclipped, clipped)                          # (N,)
        was_clipped = (clipped < unclipped).float()
    elif level == "token":
        ratio_tok = (logp_new - logp_old).exp()                            # (N, L)
        adv = advantages[:, None]
        unclipped, clipped = ratio_tok * adv, ratio_tok.clamp(1 - clip_eta, 1 + clip_eta) * adv
        n_tok = mask.sum(-1).clamp(min=1)
        terms = (torch.minimum(unclipped, clipped) * mask).sum(-1) / n_tok
        was_clipped = ((clipped < unclipped).float() * mask).sum(-1) / n_tok
        ratio = ((ratio_tok * mask).sum(-1) / n_tok).detach()
    else:
        raise ValueError(f"level must be 'sequence' or 'token', not {level!r}")
    stats = {"clip_fraction": was_clipped.sum().item(), "ratio_sum": ratio.detach().sum().item(),
             "ratio_max": ratio.detach().max().item(), "terms": len(terms)}
    return terms.sum() / n_terms, stats


def kl_to_reference(logp_new: torch.Tensor, logp_ref: torch.Tensor, mask: torch.Tensor,
                    n_terms: int) -> torch.Tensor:
    """KL(pi_theta || pi_ref) per action, estimated from the sampled tokens (the k3 estimator
    exp(d) - d - 1, d = log pi_ref - log pi_theta, non-negative), summed over tokens and divided
    by n_terms like the objective. Only used when beta > 0 (the paper: beta = 0, App. D)."""
    d = (logp_ref - logp_new) * mask
    return ((d.exp() - d - 1) * mask).sum() / n_terms
