"""The fidelity lab: branching is an unbiased estimate of Q_B, the comparisons are right on
hand-made numbers, and the lab runs end to end in its quick mode."""

import math
import random
from fractions import Fraction

import pytest
import torch

import fidelity
from env import CSG, GameConfig
from theory import csg_aliasing as ca


def test_branching_estimate_of_q_b_is_unbiased_on_an_enumerable_game():
    """The real game at N = 8, T = 3 with the menu policy of theory/csg_aliasing, whose every
    trajectory is enumerated with exact probabilities. For a history h_1 and every menu action a,
    the branching estimate (secrets drawn from b_1, the policy carried on) matches the exact
    Q_B(h_1, a) = E[sum_{s >= 1} r_s | h_1, a] within 4 standard errors."""
    N, T, eps = 8, 3, Fraction(1, 2)
    traj = ca.csg_trajectories(N, T, eps)
    texts, pi = ca.menu_policy(N, eps)
    cfg = GameConfig(n_max=N, n_arms=5, max_turns=T)
    rng = random.Random(0)

    def actor(game):
        out = []
        for i in game.active:
            probs = pi(game.episodes[i].candidates)
            out.append(
                texts[rng.choices(list(probs), weights=[float(p) for p in probs.values()])[0]]
            )
        return out

    first = 1  # "greater than N/2" at turn 0
    game = CSG([2], cfg)
    game.step([texts[first]])
    prefix = traj["history"][
        next(
            i
            for i, h in enumerate(traj["history"])
            if h[0] == (first, game.episodes[0].records[0].hint)
        )
    ][:1]
    belief = sorted(game.episodes[0].candidates)
    k = 3000
    returns = fidelity.play_branches(
        [(game, texts[a], [rng.choice(belief) for _ in range(k)]) for a in range(len(texts))],
        actor,
        cfg,
    )
    for a in range(len(texts)):
        keep = [
            i
            for i, h in enumerate(traj["history"])
            if h[:1] == prefix and len(h) > 1 and h[1][0] == a
        ]
        mass = sum(traj["p"][i] for i in keep)
        exact = sum(traj["p"][i] * sum(traj["rewards"][i][1:]) for i in keep) / mass
        x = torch.tensor(returns[a], dtype=torch.float64)
        assert abs(x.mean().item() - float(exact)) < 4 * x.std().item() / math.sqrt(k) + 1e-9, (
            a,
            float(exact),
        )


def test_onestep_expected_reward_is_exact():
    """E_{z ~ Unif(C_t)}[r_t(a)] for "is it even?" at turn 0: r_info 1/2, arm match and
    diversity 0.05 each, no resolution: 0.6 whatever the secret."""
    game = CSG([42], GameConfig())
    even = '{"arm": 0, "question": "Is the number even?"}'
    assert fidelity.onestep_expected_reward([(game, even)], GameConfig()) == [pytest.approx(0.6)]
    game.step([even])
    # now redundant
    assert fidelity.onestep_expected_reward([(game, even)], GameConfig()) == [pytest.approx(-0.1)]


def test_onestep_expected_reward_equals_the_mean_over_every_secret_of_the_belief():
    """One secret per answer part stands for the whole part: the weighted sum equals playing the
    action for every z in C_t, for value, yes/no, resolving, deflected, redundant and unreadable
    actions alike."""
    cfg = GameConfig()
    game = CSG([37], cfg)
    game.step(['{"arm": 0, "question": "Is the number greater than 30?"}'])
    game.step(['{"arm": 0, "question": "Is the number less than 45?"}'])
    actions = [
        '{"arm": 3, "question": "What is the last digit?"}',
        '{"arm": 1, "question": "Is it prime?"}',
        '{"arm": 0, "question": "Is the number greater than 30?"}',
        '{"arm": 2, "question": "Is it big?"}',
        "no action at all",
        '{"arm": 3, "question": "What is the sum of the digits?"}',
    ]
    for action in actions:
        belief = sorted(game.episodes[0].candidates)
        brute = sum(r.reward for r in game.branch(0, belief).step([action] * len(belief))) / len(
            belief
        )
        assert fidelity.onestep_expected_reward([(game, action)], cfg) == [pytest.approx(brute)]


def test_agreement_measures_by_hand():
    truth = torch.tensor([1.0, -1.0, 2.0, -2.0], dtype=torch.float64)
    perfect = fidelity.agreement(3 * truth, truth)
    assert (
        perfect["pearson"] == pytest.approx(1)
        and perfect["sign"] == 1
        and perfect["scaled_error"] == pytest.approx(0)
    )
    flipped = fidelity.agreement(torch.tensor([1.0, -1.0, -2.0, 2.0], dtype=torch.float64), truth)
    assert flipped["sign"] == 0.5 and flipped["pearson"] == pytest.approx(-0.6)
    assert flipped["scaled_error"] == pytest.approx(1.0)  # c = 0 is best: no better than no credit
    # the return-only floor: A_B constant within equal-return bins (no noise) -> 0; noise is removed
    returns = torch.tensor([0.0, 0.0, 1.0, 1.0], dtype=torch.float64)
    same = torch.tensor([2.0, 2.0, -2.0, -2.0], dtype=torch.float64)
    assert fidelity.return_only_floor(same, torch.zeros(4), returns, bin_size=2) == 0
    split = torch.tensor([1.0, -1.0, 1.0, -1.0], dtype=torch.float64)
    assert fidelity.return_only_floor(split, torch.zeros(4), returns, bin_size=2) == pytest.approx(
        2.0
    )


@pytest.mark.slow
def test_quick_lab_runs_end_to_end(tmp_path):
    result = fidelity.main(["--quick", "--out", str(tmp_path)])
    names = {r["estimator"] for r in result["rows"]}
    assert {"echo", "grpo", "rloo", "gigpo", "echo-belief", "echo-zeropad", "onestep A1_B"} <= names
    assert all(-1 <= r["pearson"] <= 1 for r in result["rows"] if r["pearson"] == r["pearson"])
    assert (tmp_path / "tiny-before-rl" / "fidelity.png").exists()
