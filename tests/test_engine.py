"""The fast rollout engine (lm/engine.py) against the eager reference (policy.py): same tokens, same
log-probs, the eager attention's logits from the grouped one, the adapted model's logits from the
rollout copy, and train.py's Eq. 2 unchanged by it (or weighted by the truncated importance
ratio)."""

import json
import math
from dataclasses import replace

import pytest
import torch
from test_lora import qwen_dir  # noqa: F401  (a fixture: a random Qwen2 and a BPE tokenizer, saved)
from test_policy import mixed_prompts, random_policy, tokenizer  # noqa: F401  (tokenizer: fixture)
from test_train import model_dir, run  # noqa: F401  (model_dir: a fixture)

import config
import update
from echo import behaviour_weights
from env import GameConfig
from lm import models, tinylm
from lm.engine import (
    GROUPED,
    FusedAttention,
    FusedMLP,
    StaticDecoder,
    blocked_inverse_cdf,
    folded_state_dict,
    fused_state_dict,
    next_power_of_two,
    read_length,
    refresh,
    rollout_policy,
)
from policy import LMPolicy, SampleConfig, inverse_cdf, process_logits
from rollouts import play_rollouts
from tools.cli import settings
from tools.ranks import Ranks
from update import CompiledLayers, UpdateConfig


def test_next_power_of_two():
    assert [next_power_of_two(n) for n in (1, 2, 3, 5, 8, 9, 64)] == [1, 2, 4, 8, 8, 16, 64]
    assert next_power_of_two(40, least=256) == 256 and next_power_of_two(300, least=256) == 512


def test_read_length_reads_at_most_a_quarter_more_in_four_lengths_per_doubling():
    """How far a decode reads its cache: at least the n positions it can fill, at most a quarter
    more past `least`, never past the cache's power of two, a multiple of 16; and four lengths
    per doubling of n (what bounds the number of graphs)."""
    for least in (64, 256):
        for n in range(1, 5000):
            r = read_length(n, least)
            assert n <= r <= next_power_of_two(n, least) and r >= least
            assert n <= least or (r - n <= n / 4 and r % 16 == 0)
        for k in range(7, 12):
            assert len({read_length(n, least) for n in range(2**k + 1, 2 ** (k + 1) + 1)}) <= 4


@pytest.fixture
def gqa_policy(tokenizer):  # noqa: F811
    """A small random Qwen2 whose 6 query heads share 2 key/value heads, 3 to a group (Qwen2.5-1.5B:
    6)."""
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(0)
    model = Qwen2ForCausalLM(
        Qwen2Config(
            vocab_size=len(tokenizer),
            hidden_size=96,
            intermediate_size=128,
            num_hidden_layers=2,
            num_attention_heads=6,
            num_key_value_heads=2,
            max_position_embeddings=1024,
        )
    )
    return LMPolicy(model.eval(), tokenizer, "qwen2-gqa")


def test_grouped_query_attention_gives_the_eager_logits(gqa_policy, monkeypatch):
    """The rollout copy's attention, float32, on left-padded rows of different lengths: the
    next-token logits of transformers' eager attention (repeat_kv, then products) within 1e-5 at
    every one of 8 decode steps, over the static cache and over a growing one. Each decode step
    hands SDPA the 2 key/value heads once, against groups of 3 queries, and the static cache only
    as far as it can be filled. The trained model keeps its attention."""
    reference = rollout_policy(gqa_policy, torch.float32, attention="eager")
    grouped = rollout_policy(gqa_policy, torch.float32, StaticDecoder(min_positions=1024))
    assert gqa_policy.model.config._attn_implementation == "sdpa"
    assert grouped.model.config._attn_implementation == GROUPED
    calls, sdpa = [], torch.nn.functional.scaled_dot_product_attention
    monkeypatch.setattr(
        torch.nn.functional,
        "scaled_dot_product_attention",
        lambda q, k, v, **kw: calls.append((q.shape, k.shape)) or sdpa(q, k, v, **kw),
    )
    prompts, steps = mixed_prompts(gqa_policy), 8
    assert len({len(p) for p in prompts}) > 1
    for decoder in (grouped.decoder, LMPolicy.eager_decoder):
        want, want_advance = LMPolicy.eager_decoder(reference, prompts, steps)
        got, advance = decoder(grouped, prompts, steps)
        for _ in range(steps):
            assert (got - want).abs().max() < 1e-5
            tok = torch.multinomial(
                want.softmax(-1), 1, generator=torch.Generator().manual_seed(len(calls))
            )[:, 0]
            want, got = want_advance(tok), advance(tok)
    decode = [(q, k) for q, k in calls if q[2] == 3]  # (rows, H_kv, 3 queries, D)
    assert len(decode) >= 2 * 2 * (steps - 1) and all(q[1] == k[1] == 2 for q, k in decode)
    assert any(k[2] == read_length(max(map(len, prompts)) + steps) < 1024 for _, k in decode)


def test_reading_the_cache_only_as_far_as_filled_never_changes_a_sampled_token(gqa_policy):
    """The rollout copy as --rollout fast builds it, in float32 (grouped attention, caches read
    to read_length, the host reading the tokens steps behind): with the same per-rollout seeds,
    the eager reference's tokens, log-probs and entropies (within 1e-5) for batches of other sizes
    and lengths, each reading its cache well short of its size, at several read lengths."""
    fast = rollout_policy(gqa_policy, torch.float32, StaticDecoder(min_positions=1024))
    prompts = mixed_prompts(gqa_policy)
    for batch, n in ((prompts[:3], 8), (prompts, 24), (prompts[3:], 40), (prompts[::-1], 100)):
        sample = SampleConfig(max_new_tokens=n)
        want, got = generations(gqa_policy, batch, sample), generations(fast, batch, sample)
        assert [g.completion_ids for g in got] == [w.completion_ids for w in want]
        assert (
            max(abs(a - b) for g, w in zip(got, want) for a, b in zip(g.logprobs, w.logprobs))
            < 1e-5
        )
        assert max(abs(g.entropy - w.entropy) for g, w in zip(got, want)) < 1e-5
    assert len({read for _, _, read in fast.decoder.shapes}) >= 3
    assert all(read < positions for _, positions, read in fast.decoder.shapes)


def test_blocked_inverse_cdf_hand_worked():
    """probs 0.1, 0.2, 0.3, 0.4 in blocks of 2 (cumulative 0.1, 0.3 | 0.6, 1.0): each uniform takes
    the first token whose cumulative probability reaches it, across the block boundary too; a
    vocabulary that is no multiple of the block (3 tokens in blocks of 2) never yields the
    padding."""
    probs = torch.tensor([[0.1, 0.2, 0.3, 0.4]]).expand(6, 4)
    u = torch.tensor([0.05, 0.2, 0.29, 0.31, 0.7, 0.999])
    assert (
        blocked_inverse_cdf(probs, u, width=2).tolist()
        == [0, 1, 1, 2, 3, 3]
        == inverse_cdf(probs, u).tolist()
    )
    odd = torch.tensor([[0.5, 0.25, 0.25]]).expand(3, 3)
    assert blocked_inverse_cdf(odd, torch.tensor([0.4, 0.6, 0.9999]), width=2).tolist() == [0, 1, 2]


@pytest.mark.parametrize("V", [1000, 1024, 4099])
def test_blocked_inverse_cdf_finds_the_reference_token(V):
    """Against policy.inverse_cdf on 64 rows of flat, peaked and top-p-truncated distributions
    (many tokens of probability 0): the same token wherever the target is not within rounding
    (1e-6) of a cumulative boundary, and never a token of probability 0."""
    torch.manual_seed(V)
    for scale, top_p in ((1.0, 1.0), (8.0, 1.0), (3.0, 0.5)):
        probs = process_logits(torch.randn(64, V) * scale, top_p=top_p).exp()
        cdf = probs.double().cumsum(-1)
        u = torch.rand(64)
        got, want = blocked_inverse_cdf(probs, u), inverse_cdf(probs, u)
        near = ((cdf - (u.double() * cdf[:, -1])[:, None]).abs() < 1e-6).any(-1)
        assert (~near).sum() > 48 and torch.equal(got[~near], want[~near])
        for ends in (u, 1 - u * 1e-6, u * 1e-9):  # the top and bottom of the distribution too
            assert (probs.gather(1, blocked_inverse_cdf(probs, ends)[:, None]) > 0).all()


@pytest.mark.parametrize(
    "sample",
    [
        SampleConfig(max_new_tokens=24),
        SampleConfig(max_new_tokens=24, greedy=True),
        SampleConfig(max_new_tokens=24, temperature=0.7, top_p=0.9),
    ],
)
def test_fast_sampling_gives_the_reference_generations(gqa_policy, sample):
    """The engine's fast sampling (blocked_inverse_cdf; compiled on CUDA, eager here), float32:
    the reference's tokens, log-probs and entropies (within 1e-5) under the same per-rollout
    seeds, sampled, greedy, and with a temperature and top-p."""
    fast = rollout_policy(gqa_policy, torch.float32, StaticDecoder(fast_sampling=True))
    prompts = mixed_prompts(gqa_policy)
    want, got = generations(gqa_policy, prompts, sample), generations(fast, prompts, sample)
    assert fast.decoder.draw.keywords["draw"] is blocked_inverse_cdf
    assert [g.completion_ids for g in got] == [w.completion_ids for w in want]
    assert max(abs(a - b) for g, w in zip(got, want) for a, b in zip(g.logprobs, w.logprobs)) < 1e-5
    assert max(abs(g.entropy - w.entropy) for g, w in zip(got, want)) < 1e-5


@pytest.mark.parametrize("seeding", ["per-rollout", "shared"])
def test_the_engine_loop_gives_the_reference_generations(tokenizer, seeding):  # noqa: F811
    """StaticDecoder.generate, the host reading each step's tokens 3 steps after the device made
    them, against LMPolicy.generate's loop on the same model: the same Generations when rows end
    at different steps before the limit, at most 3 steps run past the last end (cut off); a
    generator shared by the batch keeps the host in step, so it ends in the reference's state."""
    eager = random_policy(tokenizer, "qwen2")
    fast = rollout_policy(eager, None, StaticDecoder(lookahead=3))
    for policy in (eager, fast):
        policy.stop_ids = set(range(0, len(tokenizer), 7))  # a row ends at its first such token
    prompts, sample = mixed_prompts(eager), SampleConfig(max_new_tokens=40)

    def play(policy):
        gen = (
            [torch.Generator().manual_seed(20 + i) for i in range(len(prompts))]
            if seeding == "per-rollout"
            else torch.Generator().manual_seed(20)
        )
        return policy.generate(prompts, sample, gen), gen

    (want, want_gen), (got, got_gen) = play(eager), play(fast)
    assert [g.completion_ids for g in got] == [w.completion_ids for w in want]
    assert [g.text for g in got] == [w.text for w in want]
    assert max(abs(a - b) for g, w in zip(got, want) for a, b in zip(g.logprobs, w.logprobs)) < 1e-5
    assert max(abs(g.entropy - w.entropy) for g, w in zip(got, want)) < 1e-5
    ends = [len(w.completion_ids) for w in want]
    assert len(set(ends)) > 1 and max(ends) < sample.max_new_tokens
    steps, past = sum(fast.decoder.shapes.values()), 0 if seeding == "shared" else 3
    assert max(ends) - 1 <= steps <= max(ends) - 1 + past
    if seeding == "shared":
        assert torch.equal(got_gen.get_state(), want_gen.get_state())


def generations(policy, prompts, sample, seed=10):
    gens = [torch.Generator().manual_seed(seed + i) for i in range(len(prompts))]
    return policy.generate(prompts, sample, None if sample.greedy else gens)


@pytest.mark.parametrize("arch", ["tiny", "qwen2"])
@pytest.mark.parametrize("greedy", [False, True])
def test_static_decoder_gives_the_eager_tokens_and_logprobs(tokenizer, arch, greedy):  # noqa: F811
    """The static-cache decoder, float32, with the same per-rollout seeds: the same tokens and
    log-probs within 1e-5. Its caches are reused across calls of other sizes and lengths (as
    rollouts finish), with padding rows, and what an earlier call left beyond the prompt is
    never read."""
    if arch == "tiny":  # the built-in model as train.py builds it
        eager = LMPolicy(tinylm.build_model(tokenizer).eval(), tokenizer, "tiny")
    else:
        eager = random_policy(tokenizer, "qwen2")
    fast = rollout_policy(eager, None, StaticDecoder())
    prompts = mixed_prompts(eager)  # 5 prompts of very different lengths
    sample = SampleConfig(max_new_tokens=24, greedy=greedy)
    # 3, 5 (8 rows: 3 padding), 2 rows
    for batch in (prompts[:3], prompts, prompts[3:], prompts[::-1]):
        want, got = generations(eager, batch, sample), generations(fast, batch, sample)
        assert [g.completion_ids for g in got] == [w.completion_ids for w in want]
        assert all(len(g.completion_ids) > 0 for g in got)
        gap = max(abs(a - b) for g, w in zip(got, want) for a, b in zip(g.logprobs, w.logprobs))
        assert gap < 1e-5
    # one cache per row bucket, as long as its longest need
    rows, lengths = zip(*fast.decoder.buffers)
    assert set(rows) == {2, 4, 8} and all(n == next_power_of_two(n, least=256) for n in lengths)
    assert max(lengths) == next_power_of_two(
        max(map(len, prompts)) + sample.max_new_tokens, least=256
    )


def test_static_decoder_cache_holds_prompt_and_completion(tokenizer):  # noqa: F811
    """Each cache has room for the longest prompt of the batch plus max_new_tokens, rounded up
    to a power of two (at least 256 positions)."""
    eager = random_policy(tokenizer, "llama")
    fast = rollout_policy(eager, None, StaticDecoder(min_positions=16))
    prompt = [[7] * 40]
    generations(fast, prompt, SampleConfig(max_new_tokens=30))
    assert set(fast.decoder.buffers) == {(1, 128)}  # 40 + 30 = 70 -> 128


@pytest.fixture
def adapted(qwen_dir):  # noqa: F811
    """A LoRA model whose adapters are far from their zero start."""
    policy = models.load_policy(qwen_dir, "cpu", "fp32", lora=models.LoraConfig(rank=4))
    torch.manual_seed(3)
    with torch.no_grad():
        for n, p in policy.model.named_parameters():
            if "lora_B" in n:
                p.normal_(0, 0.5)
    return policy


def logits(policy, ids=None):
    ids = torch.tensor([[5, 6, 7, 8, 9, 10, 11]]) if ids is None else ids
    with torch.no_grad():
        return policy.model(input_ids=ids).logits.float()


def test_rollout_copy_with_lora_folded_in_gives_the_adapted_logits(adapted):
    """W + s * B @ A in a plain model: float32 gives the peft model's logits within 1e-5; bf16
    within bf16's rounding, far closer than the base without its adapter. The frozen base is
    left as it was (nothing merged into it and unmerged again)."""
    base_before = {k: v.clone() for k, v in adapted.model.state_dict().items() if "base_layer" in k}
    want = logits(adapted)
    with adapted.model.disable_adapter():
        without = logits(adapted)
    assert (want - without).abs().max() > 0.1  # the adapter matters
    exact = rollout_policy(adapted, torch.float32)
    assert not any("lora" in k for k in exact.model.state_dict())  # a plain model
    assert (logits(exact) - want).abs().max() < 1e-5
    half = rollout_policy(adapted, torch.bfloat16)
    assert all(p.dtype == torch.bfloat16 for p in half.model.parameters())
    assert (logits(half) - want).abs().max() < 0.1 * (want - without).abs().max()
    assert all(torch.equal(v, adapted.model.state_dict()[k]) for k, v in base_before.items())


def test_refresh_copies_the_trained_weights_in_place(adapted):
    """After an update the copy follows the adapter, at the same addresses (captured graphs stay
    valid)."""
    copy = rollout_policy(adapted, torch.float32)
    addresses = [p.data_ptr() for p in copy.model.parameters()]
    with torch.no_grad():
        for n, p in adapted.model.named_parameters():
            if "lora_A" in n:
                p.mul_(-2.0)
    assert (logits(copy) - logits(adapted)).abs().max() > 1e-3  # stale until refreshed
    refresh(copy, adapted)
    assert (logits(copy) - logits(adapted)).abs().max() < 1e-5
    assert [p.data_ptr() for p in copy.model.parameters()] == addresses


def test_folded_state_dict_of_a_plain_model_is_its_own(tokenizer):  # noqa: F811
    policy = random_policy(tokenizer, "qwen2")
    folded, own = folded_state_dict(policy.model), policy.model.state_dict()
    assert folded.keys() == own.keys() and all(torch.equal(folded[k], own[k]) for k in own)


def test_fused_state_dict_stacks_q_k_v_and_gate_up_by_rows():
    """Hand-worked: a layer's q (2 rows), k and v (1 row each) stack into qkv_proj in that order,
    weights and biases alike; gate then up into gate_up_proj; every other entry is left as it
    was."""
    w = {
        name: torch.full((rows, 2), float(i))
        for i, (name, rows) in enumerate([("q", 2), ("k", 1), ("v", 1), ("gate", 3), ("up", 3)])
    }
    layer = "model.layers.7."
    state = {
        layer + "self_attn.q_proj.weight": w["q"],
        layer + "self_attn.q_proj.bias": torch.tensor([1.0, 2.0]),
        layer + "self_attn.k_proj.weight": w["k"],
        layer + "self_attn.k_proj.bias": torch.tensor([3.0]),
        layer + "self_attn.v_proj.weight": w["v"],
        layer + "self_attn.v_proj.bias": torch.tensor([4.0]),
        layer + "self_attn.o_proj.weight": torch.ones(2, 4),
        layer + "mlp.gate_proj.weight": w["gate"],
        layer + "mlp.up_proj.weight": w["up"],
        layer + "mlp.down_proj.weight": torch.ones(2, 3),
        "lm_head.weight": torch.ones(5, 2),
    }
    fused = fused_state_dict(state)
    assert set(fused) == {
        layer + "self_attn.qkv_proj.weight",
        layer + "self_attn.qkv_proj.bias",
        layer + "self_attn.o_proj.weight",
        layer + "mlp.gate_up_proj.weight",
        layer + "mlp.down_proj.weight",
        "lm_head.weight",
    }
    assert fused[layer + "self_attn.qkv_proj.weight"][:, 0].tolist() == [0.0, 0.0, 1.0, 2.0]
    assert fused[layer + "self_attn.qkv_proj.bias"].tolist() == [1.0, 2.0, 3.0, 4.0]
    assert fused[layer + "mlp.gate_up_proj.weight"][:, 0].tolist() == [3.0, 3.0, 3.0, 4.0, 4.0, 4.0]
    # the input is not changed
    assert fused["lm_head.weight"] is state["lm_head.weight"] and len(state) == 11


@pytest.mark.parametrize("arch", ["tiny", "qwen2-gqa"])
def test_fused_projections_give_the_stock_logits(tokenizer, gqa_policy, arch):  # noqa: F811
    """The rollout copy with its projections fused (one q/k/v GEMM, one gate/up GEMM per layer),
    float32, against the same copy unfused: the next-token logits within 1e-5 on left-padded rows
    of different lengths, at the prefill and at each of 6 decode steps over the static cache, for
    the built-in Llama (no biases) and a Qwen2 with biases and 3 query heads to a key/value head."""
    policy = (
        LMPolicy(tinylm.build_model(tokenizer).eval(), tokenizer, "tiny")
        if arch == "tiny"
        else gqa_policy
    )
    stock = rollout_policy(policy, torch.float32, StaticDecoder(), fused=False)
    fused = rollout_policy(policy, torch.float32, StaticDecoder())
    layers = fused.model.model.layers
    assert all(
        isinstance(l.self_attn, FusedAttention) and isinstance(l.mlp, FusedMLP) for l in layers
    )
    assert not any(hasattr(l.self_attn, "q_proj") for l in layers)
    assert (layers[0].self_attn.qkv_proj.bias is not None) == (arch != "tiny")
    prompts, steps = mixed_prompts(policy), 6
    want, want_advance = stock.decoder(stock, prompts, steps)
    got, advance = fused.decoder(fused, prompts, steps)
    for k in range(steps):
        assert (got - want).abs().max() < 1e-5
        tok = torch.multinomial(want.softmax(-1), 1, generator=torch.Generator().manual_seed(k))[
            :, 0
        ]
        want, got = want_advance(tok), advance(tok)
    assert (got - want).abs().max() < 1e-5


@pytest.mark.parametrize("rollout", ["eager", "fast"])
def test_training_on_the_rollout_copy_keeps_eq2_first_ratio_one(
    tmp_path,
    model_dir,  # noqa: F811
    rollout,
):
    """train.py --rollout fast samples from the bf16 copy: pi_old is still scored on the trained
    model, so Eq. 2's first ratio is exactly 1; what sampling and scoring differ by is logged
    (zero-ish for eager, the bf16 copy's rounding for fast)."""
    (summary,) = run(
        tmp_path, model_dir, "--steps", "2", "--rollout", rollout, "--old-logprobs", "recompute"
    )
    rows = [json.loads(line) for line in open(tmp_path / summary["run_name"] / "metrics.jsonl")]
    assert all(r["train/first_step_log_ratio_max"] == 0.0 for r in rows)
    drift = [r["train/behaviour_logprob_drift"] for r in rows]
    if rollout == "eager":
        assert max(drift) < 1e-5
    else:
        assert 1e-5 < min(drift) and max(drift) < 0.1
        assert all(r["train/behaviour_logprob_gap"] >= d for r, d in zip(rows, drift))
    # a sum of tokens' differences
    action = [r["train/behaviour_action_log_ratio_mean_abs"] for r in rows]
    assert all(r["train/behaviour_action_log_ratio_max_abs"] >= a for r, a in zip(rows, action))
    assert (max(action) < 1e-4) if rollout == "eager" else (min(action) > 1e-5)


def test_unknown_rollout_engine_is_refused(tmp_path, model_dir, capsys):  # noqa: F811
    with pytest.raises(SystemExit):
        run(tmp_path, model_dir, "--steps", "1", "--rollout", "vllm")
    assert "rollout must be auto, eager or fast" in capsys.readouterr().err


def test_behaviour_weights_hand_worked():
    """min(C, pi_old(a|h) / mu(a|h)) per action, each action's log-probability the sum of its
    tokens': log-ratios 0.5, -1 and 2 (the last capped at C = 2); tensors or lists alike."""
    logp_old = [torch.tensor([-1.0, -2.0]), torch.tensor([-3.0]), [-0.25, -0.25]]
    logp_mu = [[-1.5, -2.0], [-2.0], torch.tensor([-1.0, -1.5])]
    weights = behaviour_weights(logp_old, logp_mu, cap=2.0)
    assert torch.allclose(weights, torch.tensor([math.exp(0.5), math.exp(-1.0), 2.0]))
    assert torch.equal(behaviour_weights(logp_old, logp_old, cap=2.0), torch.ones(3))


def test_behaviour_cap_weights_each_action_of_eq2(model_dir):  # noqa: F811
    """update.ppo_update with --behaviour-is-cap C, on actions whose sampled log-probabilities lie a
    known amount below or above the recomputed pi_old's: the same loss and the same weights as the
    update without it on advantages times min(C, pi_old / pi_sampled) per action, and not those
    of the update without it on the plain advantages."""

    def updated(cap, advantages):
        policy = models.load_policy(model_dir, "cpu", "fp32")
        # as the batch was sampled
        cfg = replace(config.TrainConfig(), behaviour_is_cap=cap, micro_batch=4, top_p=1.0)
        # weights linear in the gradients
        optimizer = torch.optim.SGD(policy.model.parameters(), lr=0.1)
        shuffle = torch.Generator().manual_seed(0)
        row = update.ppo_update(
            policy,
            optimizer,
            batch,
            advantages,
            settings(UpdateConfig, cfg),
            shuffle=shuffle,
            ref_policy=None,
            ranks=Ranks(),
            sampled_are_old=False,
        )
        return row["train/loss"], torch.cat(
            [p.detach().flatten() for p in policy.model.parameters()]
        )

    policy = models.load_policy(model_dir, "cpu", "fp32")
    batch = play_rollouts(
        policy, [3, 4], 2, GameConfig(), SampleConfig(max_new_tokens=8), seeds=[0, 1, 2, 3]
    )
    with torch.no_grad():
        old = [policy.score([p], [c])[0][0] for p, c in zip(batch.prompt_ids, batch.completion_ids)]
    n = len(old)
    shift = torch.linspace(-1.0, 1.5, n)  # log pi_old - log pi_sampled, per action
    batch.logprobs = [(lp - s / len(lp)).tolist() for lp, s in zip(old, shift)]
    advantages = torch.randn(n, generator=torch.Generator().manual_seed(1))
    loss, weights = updated(2.0, advantages)
    want_loss, want = updated(0.0, advantages * shift.exp().clamp(max=2.0))
    assert loss == pytest.approx(want_loss, rel=1e-5) and torch.allclose(weights, want, atol=1e-6)
    plain_loss, plain = updated(0.0, advantages)
    assert loss != pytest.approx(plain_loss, rel=1e-3) and not torch.allclose(
        weights, plain, atol=1e-4
    )


def test_compiled_layers_give_the_eager_logprobs_and_lora_gradients(tmp_path):
    """Eq. 2's passes inside update.CompiledLayers: the log-probs and the adapters' gradients of the
    eager layers (float32, to rounding) on micro-batches of other rows and lengths, without and with
    gradient (inside it score() runs its plain pass); one set of graphs serves every layer (fewer
    graphs than layers) and no shape compiles again; outside the block the layers run their eager
    forward again and score() shares prompts again."""
    from torch._dynamo.utils import counters
    from transformers import Qwen2Config, Qwen2ForCausalLM

    bpe = tinylm.bpe_tokenizer()
    torch.manual_seed(0)
    Qwen2ForCausalLM(
        Qwen2Config(
            vocab_size=len(bpe),
            hidden_size=64,
            intermediate_size=128,
            num_hidden_layers=4,
            num_attention_heads=4,
            num_key_value_heads=2,
            tie_word_embeddings=True,
            pad_token_id=bpe.pad_token_id,
        )
    ).save_pretrained(tmp_path)
    bpe.save_pretrained(tmp_path)
    policy = models.load_policy(
        str(tmp_path), "cpu", "fp32", lora=models.LoraConfig(rank=4, dropout=0.0)
    )
    torch.manual_seed(3)
    with torch.no_grad():
        for n, p in policy.model.named_parameters():
            if "lora_B" in n:
                # adapters far from their zero start, so their gradients are not trivial
                p.normal_(0, 0.5)
    trained = [p for p in policy.model.parameters() if p.requires_grad]

    def scored(prompts, completions):
        for p in trained:
            p.grad = None
        logp, mask = policy.score(prompts, completions)
        logp.sum().backward()
        return logp.detach(), [p.grad.clone() for p in trained]

    compiled = CompiledLayers(policy)
    assert len(compiled.layers) == 4
    torch._dynamo.reset()
    counters.clear()
    policy.model.train()
    for rows, extra in ((5, 0), (7, 3), (3, 1)):
        prompts = [[5 + i + j for j in range(4 + i + extra)] for i in range(rows)]
        completions = [[9 + i + j for j in range(2 + (i + extra) % 3)] for i in range(rows)]
        want, want_grads = scored(prompts, completions)
        with compiled:
            got, grads = scored(prompts, completions)
            with torch.no_grad():
                unscored = policy.score(prompts, completions)[0]
        assert (got - want).abs().max() < 1e-5 and (unscored - want).abs().max() < 1e-5
        # float32 summed in another order through 4 layers: ~1e-4 of the largest
        for g, w in zip(grads, want_grads):
            assert (g - w).abs().max() <= 1e-3 * w.abs().max()
    assert 1 <= counters["stats"]["unique_graphs"] < len(compiled.layers)
    assert (
        not any("forward" in layer.__dict__ for layer in compiled.layers)
        and not policy.plain_scoring
    )


def test_gpu_step_bench_runs_on_a_cpu_and_merges(tmp_path, monkeypatch):
    """bench/gpu_step.py end to end with a tiny model on the CPU, as a GPU run would call it: one
    figure per mode/engine with the step's parts adding up, the static engine's shapes and (no
    graphs on a CPU) no capture time, the per-action log-ratio of the sampler to pi_old (0 where
    the trained model samples, not 0 for the bf16 copy), the command, commit and library
    versions, and with --profile-turns the profiled step's phases; --merge adds a mode to the same
    file, a list of micro-batches times each (the default's key has no suffix), so does each of
    --compile-update off,on, which builds the compiled layers once over every decoder layer;
    outside a git checkout --commit is recorded. (torch.compile is recorded, not run: inductor
    takes 40 s here, and test_compiled_layers_give_the_eager_logprobs_and_lora_gradients checks
    the compiled layers' numbers.)"""
    from bench import gpu_step

    compiled = []
    monkeypatch.setattr(torch, "compile", lambda f, **kw: compiled.append(f) or f)
    out = tmp_path / "gpu_step.json"
    tiny = [
        "--shape",
        "small",
        "--device",
        "cpu",
        "--secrets",
        "2",
        "--group-size",
        "2",
        "--max-new-tokens",
        "4",
        "--generate-episodes",
        "0",
        "--out",
        str(out),
    ]
    gpu_step.main(
        tiny
        + [
            "--modes",
            "lora",
            "--engines",
            "eager,fast-unfused,fast-eager-sampling,fast",
            "--profile-turns",
            "1",
        ]
    )
    gpu_step.main(
        tiny
        + [
            "--modes",
            "full",
            "--engines",
            "fast",
            "--micro-batch",
            "32,3",
            "--compile-update",
            "off,on",
            "--merge",
        ]
    )
    assert len(compiled) == gpu_step.SMALL["num_hidden_layers"]
    d = json.loads(out.read_text())
    assert set(d["modes"]) == {
        "lora/eager",
        "lora/fast-unfused",
        "lora/fast-eager-sampling",
        "lora/fast",
        "full/fast",
        "full/fast/micro-batch-3",
        "full/fast/compiled-update",
        "full/fast/micro-batch-3/compiled-update",
    }
    # on the weights the first micro-batch's steps left
    assert d["modes"]["full/fast/micro-batch-3"]["turns"] > 0
    # the profiled one-turn step: its phases, no GPU kernels on a CPU
    for phase in ("rollout", "update"):
        p = d["modes"]["lora/fast"]["profile"][phase]
        assert (
            p["wall_s"] > 0 and p["gpu_busy_s"] == 0 and p["kernels"] == [] and len(p["host"]) == 12
        )
        assert all(ms >= 0 and calls >= 1 for _, calls, ms in p["host"])
    assert "profile" not in d["modes"]["full/fast"]
    assert (
        d["command"].startswith("python bench/gpu_step.py")
        and "; python bench/gpu_step.py" in d["command"]
    )
    assert d["commit"] and {"torch", "transformers", "peft", "accelerate"} <= set(d["versions"])
    for r in d["modes"].values():
        assert r["step_s"] == pytest.approx(
            r["rollout_s"] + r["scoring_s"] + r["update_s"], abs=0.03
        )
        assert r["actions"] == r["turns"] > 0
    assert d["modes"]["lora/eager"]["behaviour_action_log_ratio_max_abs"] < 1e-4
    fast = d["modes"]["lora/fast"]
    assert fast["behaviour_action_log_ratio_max_abs"] > 1e-4
    assert (
        fast["decode_shapes"] >= 1
        and fast["graphs_captured"] == 0
        and fast["compile_and_capture_s"] == 0
    )
    # as in a copy of the tree with no git history (a GPU machine)
    copied = tmp_path / "copied.json"
    monkeypatch.setattr(gpu_step, "code_version", lambda: {})
    gpu_step.main(
        tiny[:-1] + [str(copied), "--modes", "full", "--engines", "eager", "--commit", "abc123"]
    )
    assert json.loads(copied.read_text())["commit"] == "abc123"


def test_gpu_step_records_a_micro_batch_that_does_not_fit(tmp_path, monkeypatch):
    """A micro-batch that runs out of GPU memory is recorded as such, and the sweep goes on to the
    next one with the model back in eval mode and no gradients left from the step cut short."""
    from bench import gpu_step

    timed_setting, seen = gpu_step.timed_setting, []

    def short_of_memory(policy, sampler, cfg, mode, name, micro_batch, bytes_per_s, update_context):
        seen.append(
            (policy.model.training, any(p.grad is not None for p in policy.model.parameters()))
        )
        if micro_batch == 5:
            policy.model.train()
            trained = next(p for p in policy.model.parameters() if p.requires_grad)
            trained.grad = torch.ones_like(trained)
            raise torch.OutOfMemoryError("CUDA out of memory")
        return timed_setting(policy, sampler, cfg, mode, name, micro_batch, bytes_per_s)

    monkeypatch.setattr(gpu_step, "timed_setting", short_of_memory)
    out = tmp_path / "gpu_step.json"
    gpu_step.main(
        [
            "--shape",
            "small",
            "--device",
            "cpu",
            "--secrets",
            "2",
            "--group-size",
            "2",
            "--max-new-tokens",
            "4",
            "--generate-episodes",
            "0",
            "--out",
            str(out),
            "--modes",
            "lora",
            "--engines",
            "fast",
            "--micro-batch",
            "5,2",
        ]
    )
    modes = json.loads(out.read_text())["modes"]
    assert modes["lora/fast/micro-batch-5"] == {"out_of_memory": True, "micro_batch": 5}
    assert modes["lora/fast/micro-batch-2"]["turns"] > 0 and seen == [
        (False, False),
        (False, False),
    ]


@pytest.mark.slow
@pytest.mark.parametrize("sampler", ["trained", "copy"])
def test_compiled_static_decoder_gives_the_eager_tokens(tokenizer, sampler):  # noqa: F811
    """torch.compile of the decode step and of the fast draw (inductor on a CPU; on CUDA the same
    call captures CUDA graphs): the same tokens as eager, across batch sizes (a recompile, then
    shapes reused), on the trained model's stock attention and on the rollout copy's grouped
    attention with its read lengths (float32), which the compiled graph takes as an argument."""
    eager = random_policy(tokenizer, "qwen2")
    decoder = StaticDecoder(compile_graphs=True, min_positions=1024)
    fast = rollout_policy(eager, None if sampler == "trained" else torch.float32, decoder)
    prompts, sample = mixed_prompts(eager), SampleConfig(max_new_tokens=24)
    for batch in (prompts, prompts[:3], prompts[3:]):
        want, got = generations(eager, batch, sample), generations(fast, batch, sample)
        assert [g.completion_ids for g in got] == [w.completion_ids for w in want]
        assert (
            max(abs(a - b) for g, w in zip(got, want) for a, b in zip(g.logprobs, w.logprobs))
            < 1e-5
        )
    assert (
        decoder.compiled
        and decoder.compile_seconds > 0
        and hasattr(decoder.draw, "_torchdynamo_orig_callable")
    )
