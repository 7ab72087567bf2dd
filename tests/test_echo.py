"""Estimator math on hand-worked numbers: Eq. 1, the baselines, and Eq. 2."""
import math

import pytest
import torch

from baselines import ESTIMATORS, Credit, belief_features, grpo, leave_one_out, pbrs, potential_shaped_rewards, rloo
from echo import clipped_objective, echo_advantages, group_normalize, kl_to_reference


def credit(rewards, group, episode, depth, n_before=None, n_after=None, done=None):
    n = len(rewards)
    t = lambda x, dt=torch.float64: torch.tensor(x, dtype=dt)  # noqa: E731
    return Credit(rewards=t(rewards), group=t(group, torch.long), episode=t(episode, torch.long),
                  depth=t(depth, torch.long), n_before=t(n_before or [100] * n), n_after=t(n_after or [50] * n),
                  done=t(done or [False] * n, torch.bool), n_max=100, max_turns=10)


# Secret 0 has rollouts 0, 1, 2: rollout 2 resolved at depth 0, so only 0 and 1 are active at
# depth 1. Secret 1 has three rollouts with identical rewards.
R = [1.0, 0.5, 0.0, 0.3, 0.7, 1.0, 1.0, 1.0]
G = [0, 0, 0, 0, 0, 1, 1, 1]
E = [0, 1, 2, 0, 1, 3, 4, 5]
T = [0, 0, 0, 1, 1, 0, 0, 0]


def test_eq1_normalises_over_rollouts_active_at_each_depth():
    """Depth 0 of secret 0: mean 0.5, sample std 0.5 -> (1, 0, -1). Depth 1: only two rollouts
    are active (mean 0.5, std 0.2 sqrt 2) -> -+1/sqrt 2. No spread (secret 1) -> 0, not NaN."""
    adv = echo_advantages(R, G, T)
    expected = [1, 0, -1, -1 / math.sqrt(2), 1 / math.sqrt(2), 0, 0, 0]
    assert torch.allclose(adv, torch.tensor(expected, dtype=torch.float32), atol=1e-5)


def test_eq1_single_rollout_or_zero_spread_gives_zero():
    assert group_normalize(torch.tensor([3.0]), torch.tensor([0])).tolist() == [0.0]
    adv = group_normalize(torch.tensor([2.0, 2.0, 5.0]), torch.tensor([1, 1, 2]))
    assert adv.tolist() == [0.0, 0.0, 0.0] and not torch.isnan(adv).any()


def test_grpo_broadcasts_the_normalised_episode_return():
    """Returns of secret 0's rollouts: 1.3, 1.2, 0.0 (mean 0.8333, std 0.7234); secret 1: equal."""
    adv = grpo(credit(R, G, E, T), {})
    returns = torch.tensor([1.3, 1.2, 0.0], dtype=torch.float64)
    z = ((returns - returns.mean()) / returns.std()).float()
    assert torch.allclose(adv[:5], torch.stack([z[0], z[1], z[2], z[0], z[1]]), atol=1e-5)
    assert adv[5:].tolist() == [0.0, 0.0, 0.0]
    assert adv[0] == adv[3]   # one value per episode, on every one of its turns


def test_rloo_per_turn_leave_one_out():
    """Depth 0: 1 - (0.5 + 0)/2 = 0.75, 0.5 - 0.5 = 0, 0 - 0.75; depth 1: 0.3 - 0.7 = -0.4, +0.4."""
    adv = rloo(credit(R, G, E, T), {})
    assert torch.allclose(adv, torch.tensor([0.75, 0.0, -0.75, -0.4, 0.4, 0.0, 0.0, 0.0]), atol=1e-6)
    assert leave_one_out(torch.tensor([5.0]), torch.tensor([0])).tolist() == [0.0]


def test_pbrs_shaping_telescopes_and_preserves_the_return():
    """With Phi(terminal) = 0 the shaped return of an episode is its return minus Phi(b_0), so
    shaping cannot change which policy is optimal (Ng et al. 1999)."""
    c = credit([0.5, 0.4, 1.9], [0, 0, 0], [0, 0, 0], [0, 1, 2], n_before=[100, 50, 10],
               n_after=[50, 10, 1], done=[False, False, True])
    state = {}
    shaped = potential_shaped_rewards(c, state)
    phi0 = belief_features(torch.tensor([100.0]), torch.tensor([0]), 100, 10) @ state["phi"]
    assert torch.isclose(shaped.sum(), c.rewards.sum() - phi0[0], atol=1e-9)
    # pbrs credit at depth t is the shaped return-to-go, normalised over the group
    adv = pbrs(c, dict(state))
    assert adv.shape == (3,) and torch.isfinite(adv).all()


def test_registry_names_every_estimator():
    assert set(ESTIMATORS) == {"echo", "grpo", "rloo", "pbrs", "pbrs+rloo", "offline"}
    assert not ESTIMATORS["offline"].online and all(ESTIMATORS[k].online for k in ESTIMATORS if k != "offline")


def test_eq2_clipped_objective_hand_worked():
    """rho = 1.5 or 0.5, A = +-1, eta = 0.2: min(rho A, clip(rho) A) = 1.2, 0.5, -1.5, -0.8;
    J = (1.2 + 0.5 - 1.5 - 0.8) / 4 = -0.15; the clip is active in cases 1 and 4."""
    rho = torch.tensor([1.5, 0.5, 1.5, 0.5])
    adv = torch.tensor([1.0, 1.0, -1.0, -1.0])
    # each action has two tokens whose log-ratios add up to log rho
    logp_old = torch.full((4, 2), -1.0)
    logp_new = (logp_old + torch.log(rho)[:, None] / 2).requires_grad_(True)
    mask = torch.ones(4, 2)
    J, stats = clipped_objective(logp_new, logp_old, mask, adv, 0.2, n_terms=4)
    assert J.item() == pytest.approx(-0.15, abs=1e-6)
    assert stats["clip_fraction"] == 2 and stats["ratio_max"] == pytest.approx(1.5)
    J.backward()
    # d/d logp of rho A / 4 is rho A / 4 on each token where the unclipped branch is taken
    expected = torch.tensor([0.0, 0.5 / 4, -1.5 / 4, 0.0])[:, None].expand(4, 2)
    assert torch.allclose(logp_new.grad, expected, atol=1e-6)


def test_eq2_ratio_one_gives_the_policy_gradient_and_token_level_agrees_there():
    """At theta = theta_old, rho = 1 and J = mean(A); the token-level variant gives the same."""
    logp = torch.tensor([[-0.3, -2.0], [-1.0, 0.0]])
    mask = torch.tensor([[1.0, 1.0], [1.0, 0.0]])
    adv = torch.tensor([0.4, -1.0])
    for level in ("sequence", "token"):
        J, stats = clipped_objective(logp, logp, mask, adv, 0.2, n_terms=2, level=level)
        assert J.item() == pytest.approx(-0.3) and stats["clip_fraction"] == 0


def test_kl_to_reference_k3_hand_worked():
    """d = log pi_ref - log pi = log 2 on one token: exp(d) - d - 1 = 1 - log 2."""
    kl = kl_to_reference(torch.tensor([[0.0, 0.0]]), torch.tensor([[math.log(2), 0.0]]),
                         torch.tensor([[1.0, 0.0]]), n_terms=1)
    assert kl.item() == pytest.approx(1 - math.log(2))
