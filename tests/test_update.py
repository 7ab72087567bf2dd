"""Eq. 2's minibatches as PPO deals them: each optimizer step of a pass averages over a uniformly
random share of the batch's turns, every turn t mixed, the shares of a pass of (nearly) equal size
and covering each turn once; within a share the forward passes are sorted by length."""

import random
from collections import Counter
from dataclasses import replace

import pytest
import torch

import config
import update
from env import GameConfig
from lm import tinylm
from policy import LMPolicy, SampleConfig
from rollouts import TurnKey, play_rollouts
from tools.cli import settings
from tools.ranks import Ranks


@pytest.fixture(scope="module")
def policy():
    """A small random Llama with the tiny tokenizer: its actions are unreadable, so every episode
    plays all T = 10 turns."""
    tok = tinylm.build_tokenizer()
    model = tinylm.build_model(
        tok, tinylm.TinyConfig(hidden_size=32, num_layers=1, intermediate_size=64)
    )
    return LMPolicy(model, tok, "small")


def test_each_step_of_a_pass_averages_over_a_random_share_of_every_turn_t(policy):
    """The default update (4 passes x 4 minibatches, micro-batches of 64) on a seeded batch of
    4 secrets x 4 rollouts x 10 turns: each optimizer step scores 40 turns, of at least 8 of the 10
    turns t (a share sorted by turn would hold 1-4), each pass scores every turn once, and the
    shares differ from pass to pass."""
    batch = play_rollouts(
        policy,
        [3, 17, 42, 88],
        4,
        GameConfig(),
        SampleConfig(max_new_tokens=8),
        seeds=list(range(16)),
    )
    n = len(batch.records)
    assert n == 160 and {r.turn for r in batch.records} == set(range(10))
    depth = {
        (tuple(p), tuple(c)): r.turn for p, c, r in zip(*batch.actions(range(n)), batch.records)
    }
    steps, scored, score = [], Counter(), policy.score

    def recording_score(prompts, completions, *a):
        if torch.is_grad_enabled():  # Eq. 2's passes, not pi_old's
            scored.update(depth[(tuple(p), tuple(c))] for p, c in zip(prompts, completions))
            steps[-1] += [depth[(tuple(p), tuple(c))] for p, c in zip(prompts, completions)]
        return score(prompts, completions, *a)

    policy.score = recording_score
    optimizer = torch.optim.AdamW(policy.model.parameters(), lr=1e-3)
    step = optimizer.step
    optimizer.step = lambda *a, **k: steps.append([]) or step(*a, **k)
    steps.append([])
    try:
        update.ppo_update(
            policy,
            optimizer,
            batch,
            torch.randn(n, generator=torch.Generator().manual_seed(1)),
            settings(update.UpdateConfig, config.TrainConfig()),
            shuffle=torch.Generator().manual_seed(0),
            ref_policy=None,
            ranks=Ranks(),
            sampled_are_old=True,
        )
    finally:
        del policy.score
    steps = steps[:-1]  # the list opened after the last step
    cfg = config.TrainConfig()
    assert len(steps) == cfg.ppo_epochs * cfg.num_minibatches
    assert all(len(s) == n // cfg.num_minibatches for s in steps)
    assert all(len(set(s)) >= 8 for s in steps), [sorted(set(s)) for s in steps]
    assert scored == Counter({t: cfg.ppo_epochs * 16 for t in range(10)})
    shares = [steps[k :: cfg.num_minibatches] for k in range(cfg.num_minibatches)]
    assert any(a != b for share in shares for a, b in zip(share, share[1:]))


def keys_of(n_turns: int, rng: random.Random) -> list[TurnKey]:
    """TurnKeys of a made-up batch: prompts that grow with the turn t, as the game's do."""
    return [
        TurnKey(
            prompt_length=50 + 10 * (i % 10) + rng.randrange(3),
            prompt_hash=rng.randrange(10**6),
            completion_length=rng.randrange(4, 9),
            secret=i // 40,
            rollout=(i // 10) % 4,
            turn=i % 10,
            rank=0,
            index=i,
        )
        for i in range(n_turns)
    ]


@pytest.mark.parametrize("n_turns", [37, 160, 196])
def test_the_deal_covers_the_batch_in_equal_shares_sorted_within(n_turns):
    """minibatches: num_minibatches shares whose sizes differ by at most 1 and that hold every
    turn once; each share's forward passes hold at most micro_batch turns, sorted by length, and
    their sizes add up to the share's; the same generator state deals the same shares."""
    keys = keys_of(n_turns, random.Random(n_turns))
    update_cfg = settings(update.UpdateConfig, replace(config.TrainConfig(), micro_batch=16))
    layout = update.minibatches(keys, torch.Generator().manual_seed(5), update_cfg, rank=0)
    sizes = [m.size for m in layout]
    assert len(layout) == update_cfg.num_minibatches and max(sizes) - min(sizes) <= 1
    turns = [i for m in layout for micro in m.micro for i in micro.turns]
    assert sorted(turns) == list(range(n_turns))
    for m in layout:
        assert sum(micro.size for micro in m.micro) == m.size
        assert all(len(micro.turns) == micro.size <= 16 for micro in m.micro)
        lengths = [keys[i].prompt_length for micro in m.micro for i in micro.turns]
        assert lengths == sorted(lengths)
    again = update.minibatches(keys, torch.Generator().manual_seed(5), update_cfg, rank=0)
    assert again == layout
