"""The paper's setting on a small scale: a Qwen2-architecture model with a real byte-level BPE
tokenizer (both built here, offline), trained with the precision recipe and with LoRA."""

import json
from dataclasses import replace

import pytest
import torch
from safetensors.torch import load_file

import evaluate
import train
from env import CSG, GameConfig
from lm import models, tinylm, warmup
from policy import SampleConfig


@pytest.fixture(scope="module")
def qwen_dir(tmp_path_factory):
    """A random Qwen2 (the paper's architecture, 2 small layers) and a BPE tokenizer with ChatML."""
    from transformers import Qwen2Config, Qwen2ForCausalLM

    path = tmp_path_factory.mktemp("qwen")
    tokenizer = tinylm.bpe_tokenizer()
    torch.manual_seed(0)
    model = Qwen2ForCausalLM(
        Qwen2Config(
            vocab_size=len(tokenizer),
            hidden_size=64,
            intermediate_size=128,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            max_position_embeddings=2048,
            tie_word_embeddings=True,
            eos_token_id=tokenizer.eos_token_id,
            pad_token_id=tokenizer.pad_token_id,
        )
    )
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return str(path)


def prompts_and_completions(policy, n=6):
    game = CSG([42, 7, 99], GameConfig())
    game.step(
        [
            '{"arm": 3, "question": "What is the last digit?"}',
            "nothing",
            '{"arm": 0, "question": "Is it even?"}',
        ]
    )
    prompts = policy.encode(game.messages())
    actions = [
        '{"arm": 1, "question": "Is the number prime?"}',
        '{"arm": 4, "question": "Is it between 10 and 40?"}',
        '{"arm": 2, "question": "Is the number divisible by 3?"}',
    ]
    completions = [policy.tokenizer(a, add_special_tokens=False)["input_ids"] for a in actions]
    return (prompts * 2)[:n], (completions * 2)[:n]


def adam_updates(policy, steps=5, lr=1e-6):
    """The change of every trainable weight after `steps` AdamW steps (train.py's settings) on
    the log-likelihood of fixed actions."""
    params = [p for p in policy.model.parameters() if p.requires_grad]
    before = [p.detach().clone() for p in params]
    opt = torch.optim.AdamW(params, lr=lr, betas=(0.9, 0.99), eps=1e-5, weight_decay=0.0)
    prompts, completions = prompts_and_completions(policy)
    policy.model.train()
    for _ in range(steps):
        logp, mask = policy.score(prompts, completions)
        opt.zero_grad()
        (-(logp.sum() / mask.sum())).backward()
        torch.nn.utils.clip_grad_norm_(params, 0.5)
        opt.step()
    return torch.cat([(p.detach() - b).flatten() for p, b in zip(params, before)])


def test_bf16_compute_recipe_moves_the_weights_like_float32(qwen_dir):
    """The GPU recipe run on the CPU: bf16 autocast over float32 weights. Five AdamW steps at
    lr 1e-6 change at least half of the trainable weights (pure-bf16 weights round such updates
    away: about 1% changed), and the update agrees with a float32 run's (cosine >= 0.99)."""
    fp32 = adam_updates(models.load_policy(qwen_dir, "cpu", "fp32"))
    policy = models.load_policy(qwen_dir, "cpu", "bf16")
    assert policy.compute_dtype == torch.bfloat16
    assert all(p.dtype == torch.float32 for p in policy.model.parameters() if p.requires_grad)
    bf16 = adam_updates(policy)
    assert (bf16 != 0).double().mean() >= 0.5
    assert torch.nn.functional.cosine_similarity(bf16.double(), fp32.double(), dim=0) >= 0.99
    # what the recipe replaces: the same steps stepping bfloat16 weights directly
    pure = models.load_policy(qwen_dir, "cpu", "fp32")
    pure.model.to(torch.bfloat16)
    assert (adam_updates(pure) != 0).double().mean() < 0.5


def test_lora_generation_and_scoring_agree(qwen_dir):
    """With an active adapter (B moved off its zero start), the log-probs recorded while sampling
    equal those recomputed by score() to 1e-4; only the adapter is trainable, in float32."""
    policy = models.load_policy(qwen_dir, "cpu", "fp32", lora=models.LoraConfig(rank=4))
    trainable = [n for n, p in policy.model.named_parameters() if p.requires_grad]
    assert trainable and all("lora_" in n for n in trainable)
    with torch.no_grad():
        for n, p in policy.model.named_parameters():
            if "lora_B" in n:
                p.normal_(0, 0.5)
    prompts, _ = prompts_and_completions(policy)
    out = policy.generate(
        prompts, SampleConfig(max_new_tokens=10), torch.Generator().manual_seed(0)
    )
    with torch.no_grad():
        logp, mask = policy.score(prompts, [g.completion_ids for g in out])
    for i, g in enumerate(out):
        assert torch.allclose(logp[i, : len(g.logprobs)], torch.tensor(g.logprobs), atol=1e-4)


def lora_gradients(qwen_dir, casts: bool, dropout: float):
    """log-probs of fixed actions and the adapter's gradients, LoRA under bf16 autocast, with
    peft's input casts on or off; the same adapter (seeded, B moved off zero) either way."""
    torch.manual_seed(1)
    policy = models.load_policy(
        qwen_dir, "cpu", "bf16", lora=models.LoraConfig(rank=4, dropout=dropout)
    )
    with torch.no_grad():
        for n, p in policy.model.named_parameters():
            if "lora_B" in n:
                p.normal_(0, 0.05)
    models.input_casts(policy.model, casts)
    prompts, completions = prompts_and_completions(policy)
    policy.model.train()
    torch.manual_seed(7)  # the same dropout draws
    logp, mask = policy.score(prompts, completions)
    (-(logp.sum() / mask.sum())).backward()
    grads = torch.cat(
        [p.grad.flatten() for p in policy.model.parameters() if p.requires_grad]
    ).double()
    return logp.detach(), grads


def test_lora_without_input_casts_computes_what_peft_computes(qwen_dir):
    """load_policy turns off peft's float32 cast of each adapted projection's input under bf16
    autocast, where the adapter's products run in bf16 anyway. Without dropout the log-probs and
    the gradients are bit for bit those of peft's default. With LoRA's dropout (p = 0.05), which
    then runs in bf16, they agree within bf16's rounding: every gradient within 2% of the
    gradient's norm (bf16 keeps 8 bits, 0.4% per rounding), cosine above 0.999."""
    assert all(
        not m.cast_input_dtype_enabled
        for m in models.load_policy(
            qwen_dir, "cpu", "bf16", lora=models.LoraConfig(rank=4)
        ).model.modules()
        if hasattr(m, "cast_input_dtype_enabled")
    )
    (logp, grads), (want_logp, want) = (
        lora_gradients(qwen_dir, casts, 0.0) for casts in (False, True)
    )
    assert torch.equal(logp, want_logp) and torch.equal(grads, want) and want.abs().max() > 0
    (logp, grads), (want_logp, want) = (
        lora_gradients(qwen_dir, casts, 0.05) for casts in (False, True)
    )
    assert (grads - want).norm() < 0.02 * want.norm()
    assert torch.nn.functional.cosine_similarity(grads, want, dim=0) > 0.999


FLAGS = [
    "--secrets-per-step",
    "2",
    "--group-size",
    "2",
    "--max-new-tokens",
    "8",
    "--eval-every",
    "2",
    "--save-every",
    "1",
    "--n-heldout",
    "4",
    "--micro-batch",
    "8",
    "--lora-rank",
    "4",
    "--lr",
    "1e-3",
    "--eval-samples",
    "1",
    "--credit-probe",
    "0",
    "--warmup",
    "always",
    "--warmup-episodes",
    "2",
    "--warmup-epochs",
    "1",
    "--warmup-lr",
    "1e-2",
]


def test_lora_run_trains_only_the_adapter_saves_resumes_and_evaluates(
    tmp_path, qwen_dir, capsys, monkeypatch
):
    monkeypatch.setenv("ECHO_CACHE_DIR", str(tmp_path / "cache"))
    """train.py with LoRA (after a small warm-up of the adapter): the checkpoint is an adapter
    naming its base; the base's weights are untouched; 2 steps in one go == 1 step, stop,
    --resume; evaluate.py plays the checkpoint; the merged export is a plain model giving the
    same log-probs as base + adapter."""

    def run(name, steps, *extra):
        return train.main(
            [
                "--model",
                qwen_dir,
                "--out",
                str(tmp_path),
                "--run-name",
                name,
                "--steps",
                str(steps),
                *FLAGS,
                *extra,
            ]
        )

    run("straight", 2)
    run("cut", 1)
    run("cut", 2, "--resume")
    ckpt = tmp_path / "straight" / "checkpoint"
    config = json.loads((ckpt / "adapter_config.json").read_text())
    assert (
        config["base_model_name_or_path"] == str(models.Path(qwen_dir).resolve())
        and config["r"] == 4
    )
    assert not (ckpt / "model.safetensors").exists()  # the adapter only
    a, b = (
        load_file(tmp_path / n / "checkpoint" / "adapter_model.safetensors")
        for n in ("straight", "cut")
    )
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    # the adapter is not at its zero start
    assert any(v.abs().sum() > 0 for k, v in a.items() if "lora_B" in k)
    base = load_file(models.Path(qwen_dir) / "model.safetensors")
    tuned = models.load_policy(str(ckpt), "cpu", "fp32", trainable=False)
    for name, w in tuned.model.get_base_model().state_dict().items():
        key = name.replace(".base_layer", "")
        if key in base and "lora" not in name:
            assert torch.equal(w, base[key]), name  # the base never moved
    evaluate.main(
        [
            "--policies",
            f"checkpoint:{ckpt}",
            "--runs",
            "1",
            "--max-secrets",
            "2",
            "--samples",
            "1",
            "--out",
            str(tmp_path / "eval"),
            "--no-figures",
        ]
    )
    assert "checkpoint:" in capsys.readouterr().out
    merged = models.merge_adapter(str(ckpt), str(tmp_path / "merged"))
    plain = models.load_policy(str(merged), "cpu", "fp32")
    assert not (merged / "adapter_config.json").exists()
    prompts, completions = prompts_and_completions(plain)
    with torch.no_grad():
        assert torch.allclose(
            plain.score(prompts, completions)[0], tuned.score(prompts, completions)[0], atol=1e-4
        )


@pytest.mark.parametrize("damaged", ["adapter_model.safetensors", "warmup.json"])
def test_a_damaged_warm_up_cache_is_made_again(qwen_dir, tmp_path, monkeypatch, damaged):
    """A cached warm-up cut short (a full disk) is trained again and replaced, never fatal."""
    monkeypatch.setenv("ECHO_CACHE_DIR", str(tmp_path / "cache"))
    warm = warmup.WarmupConfig(
        episodes=3, epochs=1, batch_size=16, lr=1e-3, probe_states=8, mode="always"
    )
    lora = models.ModelConfig(qwen_dir, "cpu", "fp32", lora_rank=4)
    warmup.prepared(lora, warm, quiet=True)
    (cached,) = (tmp_path / "cache" / "warmup").iterdir()
    whole = (cached / damaged).read_bytes()
    (cached / damaged).write_bytes(whole[: len(whole) // 2])
    calls, finetune = [], warmup.supervised_finetune
    monkeypatch.setattr(warmup, "supervised_finetune", lambda *a: calls.append(1) or finetune(*a))
    _, info = warmup.prepared(lora, warm, quiet=True)
    assert calls == [1] and info["warmed"]
    # replaced by a whole one (its loss and seconds may differ in the last digit from the first's)
    again = (cached / damaged).read_bytes()
    assert abs(len(again) - len(whole)) < 16 < len(whole) // 2
    if damaged.endswith(".json"):
        assert json.loads(again).keys() == json.loads(whole).keys()
    models.check_saved_files(cached)


def test_warm_up_cache_is_reused_and_invalidated(qwen_dir, tmp_path, monkeypatch):
    """The warm-up of a LoRA model: trained once and cached; the same settings load the cache
    (the same weights, nothing trained); a changed setting trains again."""
    monkeypatch.setenv("ECHO_CACHE_DIR", str(tmp_path / "cache"))
    warm = warmup.WarmupConfig(
        episodes=3, epochs=1, batch_size=16, lr=1e-3, probe_states=8, mode="always"
    )
    lora = models.ModelConfig(qwen_dir, "cpu", "fp32", lora_rank=4)
    first, info = warmup.prepared(lora, warm, quiet=True)
    assert info["warmed"] and info["examples"] > 0 and "valid_after" in info
    calls = []
    monkeypatch.setattr(warmup, "supervised_finetune", lambda *a: calls.append(1) or [0.0])
    again, info_again = warmup.prepared(lora, warm, quiet=True)
    assert not calls and info_again == info
    lora_weights = lambda p: {k: v for k, v in p.model.state_dict().items() if "lora_" in k}
    assert all(torch.equal(v, lora_weights(again)[k]) for k, v in lora_weights(first).items())
    warmup.prepared(lora, replace(warm, lr=2e-3), quiet=True)
    assert calls == [1]  # a new setting, a new warm-up


def test_eq2_runs_without_loras_dropout_so_its_first_ratio_is_one(tmp_path, qwen_dir):
    """LoRA's dropout (0.5 here, where it would show) is off in Eq. 2's passes, as it is where
    pi_old is scored: before any optimizer step log rho == 0 exactly, and the clip does not act."""
    train.main(
        ["--model", qwen_dir, "--out", str(tmp_path), "--run-name", "dropout", "--steps", "1"]
        + FLAGS
        + ["--lora-dropout", "0.5", "--ppo-epochs", "1", "--num-minibatches", "1"]
        + ["--old-logprobs", "recompute"]
    )
    row = json.loads((tmp_path / "dropout" / "metrics.jsonl").read_text().splitlines()[0])
    assert row["train/first_step_log_ratio_max"] == 0.0
    assert row["train/ratio_mean"] == 1.0 and row["train/clip_fraction"] == 0.0


def test_the_tiny_model_has_no_dropout_for_eq2_to_turn_off():
    """The default runs' model (lm/tinylm.py) holds no dropout module, so Eq. 2's passes without
    dropout (update.without_dropout) compute for it what they computed before."""
    policy = models.load_policy("tiny", "cpu", "fp32")
    assert not any(isinstance(m, torch.nn.Dropout) for m in policy.model.modules())
