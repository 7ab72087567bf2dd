"""The fast rollout engine (engine.py) against the eager reference (policy.py): same tokens, same
log-probs, the adapted model's logits from the rollout copy, and train.py's Eq. 2 unchanged by it."""
import json

import pytest
import torch

import models
import tinylm
from engine import StaticDecoder, folded_state_dict, next_power_of_two, refresh, rollout_policy
from policy import LMPolicy, SampleConfig
from test_lora import qwen_dir  # noqa: F401  (a fixture: a random Qwen2 and a BPE tokenizer, saved)
from test_policy import mixed_prompts, random_policy, tokenizer  # noqa: F401  (tokenizer: a fixture)
from test_train import model_dir, run  # noqa: F401  (model_dir: a fixture)


def test_next_power_of_two():
    assert [next_power_of_two(n) for n in (1, 2, 3, 5, 8, 9, 64)] == [1, 2, 4, 8, 8, 16, 64]
    assert next_power_of_two(40, least=256) == 256 and next_power_of_two(300, least=256) == 512


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
    if arch == "tiny":   # the built-in model as train.py builds it
        eager = LMPolicy(tinylm.build_model(tokenizer).eval(), tokenizer, "tiny")
    else:
        eager = random_policy(tokenizer, "qwen2")
    fast = rollout_policy(eager, None, StaticDecoder())
    prompts = mixed_prompts(eager)                                  # 5 prompts of very different lengths
    sample = SampleConfig(max_new_tokens=24, greedy=greedy)
    for batch in (prompts[:3], prompts, prompts[3:], prompts[::-1]):  # 3, 5 (8 rows: 3 padding), 2 rows
        want, got = generations(eager, batch, sample), generations(fast, batch, sample)
        assert [g.completion_ids for g in got] == [w.completion_ids for w in want]
        assert all(len(g.completion_ids) > 0 for g in got)
        gap = max(abs(a - b) for g, w in zip(got, want) for a, b in zip(g.logprobs, w.logprobs))
        assert gap < 1e-5
    rows, lengths = zip(*fast.decoder.buffers)     # one cache per row bucket, as long as its longest need
    assert set(rows) == {2, 4, 8} and all(n == next_power_of_two(n, least=256) for n in lengths)
    assert max(lengths) == next_power_of_two(max(map(len, prompts)) + sample.max_new_tokens, least=256)


def test_static_decoder_cache_holds_prompt_and_completion(tokenizer):  # noqa: F811
    """Each cache has room for the longest prompt of the batch plus max_new_tokens, rounded up
    to a power of two (at least 256 positions)."""
    eager = random_policy(tokenizer, "llama")
    fast = rollout_policy(eager, None, StaticDecoder(min_positions=16))
    prompt = [[7] * 40]
    generations(fast, prompt, SampleConfig(max_new_tokens=30))
    assert set(fast.decoder.buffers) == {(1, 128)}      # 40 + 30 = 70 -> 128


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


def logits(policy, ids=torch.tensor([[5, 6, 7, 8, 9, 10, 11]])):
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
    assert (want - without).abs().max() > 0.1                      # the adapter matters
    exact = rollout_policy(adapted, torch.float32)
    assert not any("lora" in k for k in exact.model.state_dict())   # a plain model
    assert (logits(exact) - want).abs().max() < 1e-5
    half = rollout_policy(adapted, torch.bfloat16)
    assert all(p.dtype == torch.bfloat16 for p in half.model.parameters())
    assert (logits(half) - want).abs().max() < 0.1 * (want - without).abs().max()
    assert all(torch.equal(v, adapted.model.state_dict()[k]) for k, v in base_before.items())


def test_refresh_copies_the_trained_weights_in_place(adapted):
    """After an update the copy follows the adapter, at the same addresses (captured graphs stay valid)."""
    copy = rollout_policy(adapted, torch.float32)
    addresses = [p.data_ptr() for p in copy.model.parameters()]
    with torch.no_grad():
        for n, p in adapted.model.named_parameters():
            if "lora_A" in n:
                p.mul_(-2.0)
    assert (logits(copy) - logits(adapted)).abs().max() > 1e-3       # stale until refreshed
    refresh(copy, adapted)
    assert (logits(copy) - logits(adapted)).abs().max() < 1e-5
    assert [p.data_ptr() for p in copy.model.parameters()] == addresses


def test_folded_state_dict_of_a_plain_model_is_its_own(tokenizer):  # noqa: F811
    policy = random_policy(tokenizer, "qwen2")
    folded, own = folded_state_dict(policy.model), policy.model.state_dict()
    assert folded.keys() == own.keys() and all(torch.equal(folded[k], own[k]) for k in own)


@pytest.mark.parametrize("rollout", ["eager", "fast"])
def test_training_on_the_rollout_copy_keeps_eq2_first_ratio_one(tmp_path, model_dir, rollout):  # noqa: F811
    """train.py --rollout fast samples from the bf16 copy: pi_old is still scored on the trained
    model, so Eq. 2's first ratio is exactly 1; what sampling and scoring differ by is logged
    (zero-ish for eager, the bf16 copy's rounding for fast)."""
    (summary,) = run(tmp_path, model_dir, "--steps", "2", "--rollout", rollout)
    rows = [json.loads(line) for line in open(tmp_path / summary["run_name"] / "metrics.jsonl")]
    assert all(r["train/first_step_log_ratio_max"] == 0.0 for r in rows)
    drift = [r["train/behaviour_logprob_drift"] for r in rows]
    if rollout == "eager":
        assert max(drift) < 1e-5
    else:
        assert 1e-5 < min(drift) and max(drift) < 0.1
        assert all(r["train/behaviour_logprob_gap"] >= d for r, d in zip(rows, drift))


def test_unknown_rollout_engine_is_refused(tmp_path, model_dir, capsys):  # noqa: F811
    with pytest.raises(SystemExit):
        run(tmp_path, model_dir, "--steps", "1", "--rollout", "vllm")
    assert "rollout must be auto, eager or fast" in capsys.readouterr().err


@pytest.mark.slow
def test_compiled_static_decoder_gives_the_eager_tokens(tokenizer):  # noqa: F811
    """torch.compile of the decode step (inductor on a CPU; on CUDA the same call captures CUDA
    graphs): the same tokens as eager, across batch sizes (a recompile, then shapes reused)."""
    eager = random_policy(tokenizer, "qwen2")
    fast = rollout_policy(eager, None, StaticDecoder(compile=True))
    prompts, sample = mixed_prompts(eager), SampleConfig(max_new_tokens=24)
    for batch in (prompts, prompts[:3], prompts[3:]):
        want, got = generations(eager, batch, sample), generations(fast, batch, sample)
        assert [g.completion_ids for g in got] == [w.completion_ids for w in want]
        assert max(abs(a - b) for g, w in zip(got, want) for a, b in zip(g.logprobs, w.logprobs)) < 1e-5
