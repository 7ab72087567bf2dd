"""Estimator math on hand-worked numbers: Eq. 1, the baselines, and Eq. 2."""

import math

import hypothesis
import pytest
import torch
from hypothesis import strategies as st

from baselines import (
    ESTIMATORS,
    Credit,
    EstimatorContext,
    belief_features,
    discounted_return_to_go,
    echo_belief,
    echo_zeropad,
    gigpo,
    grpo,
    leave_one_out,
    pbrs,
    potential_shaped_rewards,
    return_to_go,
    rloo,
    rloo_std,
    turn_groups,
)
from echo import approx_kl, clipped_objective, echo_advantages, group_normalize


def credit(rollouts, n_before=None, n_after=None, max_turns=None, belief=None, prompt=None):
    """A Credit from ragged per-rollout lists: rollouts[b][g] = [r_0, r_1, ...]; belief and prompt
    (ids of C_t and of the whole prompt) are ragged the same way, default: all different."""
    B, G = len(rollouts), len(rollouts[0])
    T = max_turns or max(len(r) for group in rollouts for r in group)
    rewards = torch.zeros(B, G, T, dtype=torch.float64)
    active = torch.zeros(B, G, T, dtype=torch.bool)
    ids = {"belief": torch.full((B, G, T), -1), "prompt": torch.full((B, G, T), -1)}
    for b, group in enumerate(rollouts):
        for g, r in enumerate(group):
            rewards[b, g, : len(r)] = torch.tensor(r, dtype=torch.float64)
            active[b, g, : len(r)] = True
            for name, given in (("belief", belief), ("prompt", prompt)):
                ids[name][b, g, : len(r)] = (
                    torch.tensor(given[b][g]) if given else 1000 + 100 * g + torch.arange(len(r))
                )

    def fill(x, default):
        if x is None:
            return torch.full((B, G, T), default)
        return torch.tensor(x, dtype=torch.float64)

    return Credit(
        rewards=rewards,
        active=active,
        n_before=fill(n_before, 100.0),
        n_after=fill(n_after, 50.0),
        belief=ids["belief"],
        prompt=ids["prompt"],
        n_max=100,
        max_turns=T,
    )


# Secret 0 has rollouts 0, 1, 2: rollout 2 resolved at turn 0, so only 0 and 1 are active at
# turn 1. Secret 1 has three rollouts with identical rewards, one turn each.
BATCH = [[[1.0, 0.3], [0.5, 0.7], [0.0]], [[1.0], [1.0], [1.0]]]


def test_eq1_normalises_over_rollouts_active_at_each_turn():
    """Turn 0 of secret 0: mean 0.5, sample std 0.5 -> (1, 0, -1). Turn 1: only two rollouts
    are active (mean 0.5, std 0.2 sqrt 2) -> -+1/sqrt 2. No spread (secret 1) -> 0, not NaN.
    Cells of turns not played stay 0."""
    c = credit(BATCH)
    adv = echo_advantages(c.rewards, c.active)
    expected = torch.tensor(
        [[[1, -1 / math.sqrt(2)], [0, 1 / math.sqrt(2)], [-1, 0]], [[0, 0], [0, 0], [0, 0]]],
        dtype=torch.float32,
    )
    assert adv.shape == (2, 3, 2) and torch.allclose(adv, expected, atol=1e-5)


def test_eq1_single_rollout_or_zero_spread_gives_zero():
    single = credit([[[3.0], []]])  # one active rollout at turn 0
    assert echo_advantages(single.rewards, single.active).tolist() == [[[0.0], [0.0]]]
    flat = credit([[[2.0], [2.0]]])
    adv = echo_advantages(flat.rewards, flat.active)
    assert adv.abs().sum() == 0 and not torch.isnan(adv).any()


def test_eq1_bounds_a_lone_penalty_whatever_its_size():
    """One rollout of G = 4 penalised, three rewarded 0.5, 0.6, 0.7: with the sample std its
    advantage is -(G - 1) / sqrt(G) = -1.5 in the limit, whatever the penalty (-1.46 at -0.1,
    -1.49 at -1.0); a larger penalty only squeezes the others' spread (0.56 -> 0.25)."""

    def advantages(penalty):
        c = credit([[[0.5], [0.6], [0.7], [penalty]]])
        return echo_advantages(c.rewards, c.active)[0, :, 0]

    mild, harsh = advantages(-0.1), advantages(-1.0)
    assert -1.5 < harsh[3] < mild[3] < harsh[3] + 0.05 and advantages(-1e6)[3] == pytest.approx(
        -1.5, abs=1e-4
    )
    assert mild[2] - mild[0] == pytest.approx(0.556, abs=1e-3) and harsh[2] - harsh[
        0
    ] == pytest.approx(0.249, abs=1e-3)


def test_group_normalize_is_eq1_over_any_group_axes():
    """The one implementation of Eq. 1's normalisation: over the group axis it is ECHO's
    advantage; over (G, T) it normalises all of a secret's active cells together (as PBRS uses
    it): secret 0's five active rewards 1, 0.3, 0.5, 0.7, 0 have mean 0.5 and sample std 0.3808."""
    c = credit(BATCH)
    assert torch.equal(
        group_normalize(c.rewards, c.active).float(), echo_advantages(c.rewards, c.active)
    )
    over_all = group_normalize(c.rewards, c.active, dims=(1, 2))
    five = torch.tensor([1.0, 0.3, 0.5, 0.7, 0.0], dtype=torch.float64)
    expected = (five - 0.5) / (five.std() + 1e-6)
    assert torch.allclose(over_all[0][c.active[0]], expected, atol=1e-9)  # row-major: (g, t)
    assert over_all[1].abs().sum() == 0 and over_all[0, 2, 1] == 0  # no spread; an inactive cell


def test_grpo_broadcasts_the_normalised_episode_return():
    """Returns of secret 0's rollouts: 1.3, 1.2, 0.0 (mean 0.8333, std 0.7234); secret 1: equal."""
    adv = grpo(credit(BATCH), EstimatorContext())
    returns = torch.tensor([1.3, 1.2, 0.0], dtype=torch.float64)
    z = (returns - returns.mean()) / returns.std()
    assert torch.allclose(adv[0, :, 0], z, atol=1e-5) and torch.allclose(
        adv[0, :2, 1], z[:2], atol=1e-5
    )
    # one value per rollout, on its played turns only
    assert adv[0, 2, 1] == 0 and adv[1].abs().sum() == 0


def test_rloo_per_turn_leave_one_out():
    """Turn 0: 1 - (0.5 + 0)/2 = 0.75, 0.5 - 0.5 = 0, 0 - 0.75; turn 1: 0.3 - 0.7 = -0.4, +0.4."""
    adv = rloo(credit(BATCH), EstimatorContext())
    expected = torch.tensor(
        [[[0.75, -0.4], [0.0, 0.4], [-0.75, 0.0]], [[0.0, 0.0]] * 3], dtype=torch.float64
    )
    assert torch.allclose(adv, expected, atol=1e-9)
    c = credit([[[5.0], []]])
    assert leave_one_out(c.rewards, c.active).abs().sum() == 0


def test_return_to_go_sums_each_rollouts_later_turns():
    c = credit([[[1.0, 2.0, 3.0], [4.0]]])
    assert return_to_go(c.rewards, c.active).tolist() == [[[6.0, 5.0, 3.0], [4.0, 0.0, 0.0]]]


def test_pbrs_shaping_telescopes_and_preserves_the_return():
    """With Phi(terminal) = 0 the shaped return of an episode is its return minus Phi(b_0), so
    shaping cannot change which policy is optimal (Ng et al. 1999)."""
    c = credit([[[0.5, 0.4, 1.9]]], n_before=[[[100, 50, 10]]], n_after=[[[50, 10, 1]]])
    ctx = EstimatorContext()
    shaped = potential_shaped_rewards(c, ctx)
    phi0 = belief_features(torch.tensor([100.0]), torch.tensor([0]), 100, 3) @ ctx.phi
    assert torch.isclose(shaped.sum(), c.rewards.sum() - phi0[0], atol=1e-9)
    # pbrs credit at turn t is the shaped return-to-go, normalised over the group
    adv = pbrs(c, EstimatorContext(phi=ctx.phi))
    assert adv.shape == (1, 1, 3) and torch.isfinite(adv).all()


def test_echo_belief_groups_by_belief_and_falls_back_for_a_belief_held_alone():
    """Secret 0, turn 0: all four rollouts share C_0, so Eq. 1 over the four. Turn 1: rollouts 0
    and 1 hold belief 7, rollouts 2 and 3 belief 8 and 9. The pair is normalised between itself
    (-1/sqrt 2, +1/sqrt 2 for 0.2, 0.6); rollouts 2 and 3 are alone with their beliefs, so they
    take the Eq. 1 advantage of turn 1 over all four (rewards 0.2, 0.6, 0.0, 1.0)."""
    rewards = [[[1.0, 0.2], [0.0, 0.6], [0.5, 0.0], [0.5, 1.0]]]
    beliefs = [[[1, 7], [1, 7], [1, 8], [1, 9]]]
    c = credit(rewards, belief=beliefs)
    adv = echo_belief(c, EstimatorContext())
    eq1 = echo_advantages(c.rewards, c.active).double()
    assert torch.allclose(adv[0, :, 0], eq1[0, :, 0])  # one belief: Eq. 1
    assert torch.allclose(
        adv[0, :2, 1], torch.tensor([-1, 1], dtype=torch.float64) / math.sqrt(2), atol=1e-5
    )
    assert torch.allclose(adv[0, 2:, 1], eq1[0, 2:, 1]) and adv[0, 2, 1] != 0  # the fallback
    r1 = torch.tensor([0.2, 0.6, 0.0, 1.0], dtype=torch.float64)
    assert torch.allclose(adv[0, 2:, 1], ((r1 - r1.mean()) / r1.std())[2:], atol=1e-5)


def test_echo_zeropad_reproduces_the_released_code():
    """The released advantages.py pads each finished episode with reward 0 to T turns and takes
    mean and std (unbiased, floored at 1e-4) over all G at each turn. G = 3: rollout 2 resolved
    at turn 0. Turn 1 by hand, with the pad: rewards (0.3, 0.7, 0) -> mean 1/3, std
    sqrt(0.1233..)."""
    c = credit([[[1.0, 0.3], [0.5, 0.7], [0.0]]])
    adv = echo_zeropad(c, EstimatorContext())
    r1 = torch.tensor([0.3, 0.7, 0.0], dtype=torch.float64)
    expected_t1 = (r1 - r1.mean()) / r1.std()
    # the pad gets no credit
    assert torch.allclose(adv[0, :2, 1], expected_t1[:2]) and adv[0, 2, 1] == 0
    assert adv[0, 0, 1] == pytest.approx(
        (0.3 - 1 / 3) / math.sqrt(((0.3 - 1 / 3) ** 2 + (0.7 - 1 / 3) ** 2 + (1 / 3) ** 2) / 2)
    )
    # the bias: ECHO compares 0.3 with 0.7 only (-1/sqrt 2); the pad lifts rollout 0 to about -0.09
    assert echo_advantages(c.rewards, c.active)[0, 0, 1] == pytest.approx(
        -1 / math.sqrt(2), abs=1e-5
    )
    flat = echo_zeropad(credit([[[2.0], [2.0]]]), EstimatorContext())
    assert flat.abs().sum() == 0  # floor, not NaN


def test_rloo_std_reproduces_the_released_code_by_hand():
    """The released per-turn RLOO, turn 1 of the batch of the echo-zeropad test by hand: padded
    rewards (0.3, 0.7, 0); rollout 0's leave-one-out mean (0.7 + 0) / 2 = 0.35, divided by the std
    of all three."""
    c = credit([[[1.0, 0.3], [0.5, 0.7], [0.0]]])
    r1 = torch.tensor([0.3, 0.7, 0.0], dtype=torch.float64)
    adv = rloo_std(c, EstimatorContext())
    assert adv[0, 0, 1] == pytest.approx((0.3 - 0.35) / r1.std().item()) and adv[0, 2, 1] == 0


@hypothesis.settings(max_examples=200, deadline=None)
@hypothesis.given(
    G=st.integers(2, 8),
    data=st.data(),
)
def test_rloo_std_is_echo_zeropad_times_g_over_g_minus_one_on_any_batch(G, data):
    """On any batch (B secrets x G rollouts of any lengths up to T, any rewards), the released RLOO
    is the released ECHO (echo-zeropad) times G / (G - 1), cell by cell, floor included."""
    B = data.draw(st.integers(1, 4))
    lengths = data.draw(st.lists(st.integers(1, 6), min_size=B * G, max_size=B * G))
    reward = st.floats(-1.5, 2.5, allow_nan=False)
    rollouts = [
        [data.draw(st.lists(reward, min_size=n, max_size=n)) for n in lengths[b * G : (b + 1) * G]]
        for b in range(B)
    ]
    c = credit(rollouts, max_turns=6)
    loo = rloo_std(c, EstimatorContext())
    scaled = G / (G - 1) * echo_zeropad(c, EstimatorContext())
    assert torch.allclose(loo, scaled, rtol=1e-9, atol=1e-9)


def test_gigpo_adds_an_anchor_state_advantage_to_the_episode_one():
    """Two rollouts of one secret share the state at turn 0 and reach the same state at turn 1
    (same prompt); a third reaches another state. gamma = 0.5, w = 1. Discounted returns-to-go:
    rollout 0: 1 + 0.5 * 2 = 2 then 2; rollout 1: 0 + 0.5 * 1 = 0.5 then 1; rollout 2: 3 then 4."""
    rewards = [[[1.0, 2.0], [0.0, 1.0], [1.0, 4.0]]]
    prompts = [[[0, 5], [0, 5], [0, 6]]]
    c = credit(rewards, prompt=prompts)
    adv = gigpo(c, EstimatorContext(gigpo_step_weight=1.0, gigpo_gamma=0.5))
    returns = torch.tensor([3.0, 1.0, 5.0], dtype=torch.float64)
    a_ep = (returns - returns.mean()) / returns.std()  # 0, -1, 1
    rtg0 = torch.tensor([2.0, 0.5, 3.0], dtype=torch.float64)
    a_step0 = (rtg0 - rtg0.mean()) / rtg0.std()
    assert torch.allclose(adv[0, :, 0], a_ep + a_step0, atol=1e-5)
    # turn 1: rollouts 0 and 1 share state 5 (returns-to-go 2, 1 -> +-1/sqrt 2);
    # rollout 2 is alone: 0
    assert torch.allclose(
        adv[0, :, 1],
        a_ep + torch.tensor([1 / math.sqrt(2), -1 / math.sqrt(2), 0.0], dtype=torch.float64),
        atol=1e-5,
    )
    assert torch.allclose(discounted_return_to_go(c.rewards, c.active, 0.5)[0, :, 0], rtg0)


def test_turn_groups_are_per_secret_and_turn():
    c = credit([[[1.0, 1.0], [1.0]], [[1.0], [1.0]]], belief=[[[3, 3], [3]], [[3], [4]]])
    ids = turn_groups(c, c.belief)
    assert ids[0, 0, 0] == ids[0, 1, 0] != ids[0, 0, 1]  # same secret, turn and belief; other turn
    # other belief; other secret
    assert ids[1, 0, 0] != ids[1, 1, 0] and ids[1, 0, 0] != ids[0, 0, 0]
    assert ids[0, 1, 1] == -1  # not played


def test_registry_names_every_estimator():
    assert set(ESTIMATORS) == {
        "echo",
        "grpo",
        "rloo",
        "pbrs",
        "pbrs+rloo",
        "offline",
        "echo-belief",
        "echo-zeropad",
        "rloo-std",
        "gigpo",
    }
    assert not ESTIMATORS["offline"].online and all(
        ESTIMATORS[k].online for k in ESTIMATORS if k != "offline"
    )


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
    assert stats["clipped"] == 2 and stats["ratio_max"] == pytest.approx(1.5)
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
        assert J.item() == pytest.approx(-0.3) and stats["clipped"] == 0


def test_approx_kl_k3_hand_worked():
    """x = log p - log q = log 2 on the one real token: exp(x) - 1 - x = 1 - log 2; the masked
    token counts nothing however large its log-ratio."""
    kl = approx_kl(torch.tensor([[math.log(2), 5.0]]), torch.tensor([[1.0, 0.0]]))
    assert kl.shape == (1,) and kl.item() == pytest.approx(1 - math.log(2))
