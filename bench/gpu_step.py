"""The paper's scale on one GPU, with nothing downloaded: a model of Qwen2.5-1.5B-Instruct's
architecture built from its published config with random weights, fed the game's real prompts,
timed through one ECHO step of train.py's own code at the paper's batch, for LoRA (bf16 frozen
base, float32 adapters) and for full fine-tuning (float32 weights, bf16 autocast).

Reports seconds per step split into rollout / scoring (pi_old) / update, peak GPU memory, and
batched generation against `model.generate` one episode at a time. Random weights never close
the action's JSON, so every turn writes max_new_tokens and every episode runs all 10 turns: the
step timed is the longest one a run can have. On a CPU, `--shape small` is a smoke test.

The paper's batch (its train_echo.py with TRL): 16 groups of G = 4 rollouts per generation,
one pass, 4 optimizer steps; completions up to 128 tokens.
    python bench/gpu_step.py [--modes lora,full] [--tokenizer DIR] [--shape qwen2.5-1.5b|small]
"""
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench.common import RESULTS, save_results  # noqa: E402
import torch  # noqa: E402

import models  # noqa: E402
import tinylm  # noqa: E402
import train  # noqa: E402
from baselines import ESTIMATORS, EstimatorContext, credit_from_batch  # noqa: E402
from bench.rollouts import hf_generate_per_episode  # noqa: E402
from cli import arg, parse_config  # noqa: E402
from env import GameConfig  # noqa: E402
from policy import LMPolicy, SampleConfig, play_rollouts  # noqa: E402

QWEN25_15B = dict(  # Qwen/Qwen2.5-1.5B-Instruct config.json, as published
    vocab_size=151936, hidden_size=1536, intermediate_size=8960, num_hidden_layers=28, num_attention_heads=12,
    num_key_value_heads=2, max_position_embeddings=32768, rope_theta=1000000.0, rms_norm_eps=1e-6,
    tie_word_embeddings=True, hidden_act="silu", use_sliding_window=False)
SMALL = dict(vocab_size=1024, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
             num_key_value_heads=2, max_position_embeddings=4096, tie_word_embeddings=True)


@dataclass
class GpuStepConfig:
    modes: str = arg("lora,full", "comma list: lora (the paper's r = 16 adapters) and/or full fine-tuning")
    shape: str = arg("qwen2.5-1.5b", "qwen2.5-1.5b (the paper's model, 1.5B parameters) or small (a CPU smoke test)")
    tokenizer: str = arg("", "a tokenizer directory (e.g. SmolLM2's, a ChatML BPE like Qwen's); empty: a BPE trained here")
    secrets: int = arg(16, "B: secrets per step (the paper's generation batch: 16 groups)")
    group_size: int = arg(4, "G (the paper: 4)")
    max_new_tokens: int = arg(128, "completion length limit (the paper's rollouts: 128)")
    micro_batch: int = arg(32, "turns per forward pass of the update")
    generate_episodes: int = arg(1, "episodes played one at a time with model.generate, for the comparison")
    out: str = arg(os.path.join(RESULTS, "gpu_step.json"), "where the figures are written", writes="file")


def build(cfg: GpuStepConfig, mode: str, directory: str) -> LMPolicy:
    """The random model saved once in `directory`, loaded as train.py loads a model for `mode`."""
    from transformers import AutoTokenizer, Qwen2Config, Qwen2ForCausalLM
    if not os.path.exists(os.path.join(directory, "config.json")):
        tokenizer = AutoTokenizer.from_pretrained(cfg.tokenizer) if cfg.tokenizer else tinylm.bpe_tokenizer()
        shape = QWEN25_15B if cfg.shape == "qwen2.5-1.5b" else SMALL
        with torch.device("cuda" if torch.cuda.is_available() else "cpu"):
            model = Qwen2ForCausalLM(Qwen2Config(**shape, eos_token_id=tokenizer.eos_token_id,
                                                 pad_token_id=tokenizer.pad_token_id)).to(torch.bfloat16)
        model.save_pretrained(directory)
        tokenizer.save_pretrained(directory)
        del model
    lora = models.LoraConfig() if mode == "lora" else None
    return models.load_policy(directory, None, "auto", lora=lora)


def one_step(policy, cfg: GpuStepConfig, mode: str) -> dict:
    tcfg = train.config_from_flags(["--model", "qwen", "--lora-rank", "16" if mode == "lora" else "0",
                                    "--group-size", str(cfg.group_size), "--secrets-per-step", str(cfg.secrets),
                                    "--ppo-epochs", "1", "--num-minibatches", "4", "--micro-batch", str(cfg.micro_batch),
                                    "--max-new-tokens", str(cfg.max_new_tokens)])
    params = [p for p in policy.model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=tcfg.lr, betas=(0.9, tcfg.adam_beta2), eps=tcfg.adam_eps, weight_decay=0.0)
    scoring = {"old": 0.0}
    score = policy.score

    def timed_score(*a, **k):   # the pi_old pass runs without gradient: that is "scoring"
        if torch.is_grad_enabled():
            return score(*a, **k)
        start = time.perf_counter()
        out = score(*a, **k)
        sync()
        scoring["old"] += time.perf_counter() - start
        return out
    policy.score = timed_score
    sync()
    torch.cuda.reset_peak_memory_stats() if torch.cuda.is_available() else None
    start = time.perf_counter()
    batch = play_rollouts(policy, list(range(1, cfg.secrets + 1)), cfg.group_size, GameConfig(),
                    SampleConfig(max_new_tokens=cfg.max_new_tokens), seeds=list(range(cfg.secrets * cfg.group_size)))
    sync()
    played = time.perf_counter()
    advantages = batch.from_grid(ESTIMATORS["echo"].advantages(credit_from_batch(batch, 100), EstimatorContext())).float()
    train.ppo_update(policy, opt, batch, advantages, tcfg, torch.Generator().manual_seed(0))
    sync()
    updated = time.perf_counter()
    policy.score = score
    tokens = sum(len(c) for c in batch.completion_ids)
    return {"turns": len(batch.records), "generated_tokens": tokens, "prompt_tokens": sum(map(len, batch.prompt_ids)),
            "rollout_s": round(played - start, 2), "scoring_s": round(scoring["old"], 2),
            "update_s": round(updated - played - scoring["old"], 2), "step_s": round(updated - start, 2),
            "batched_generated_tokens_per_s": round(tokens / (played - start), 1),
            "peak_gpu_memory_gb": round(torch.cuda.max_memory_allocated() / 2**30, 2) if torch.cuda.is_available() else None,
            "trainable_parameters": sum(p.numel() for p in params),
            "parameters": sum(p.numel() for p in policy.model.parameters())}


def sync():
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def main(argv=None):
    cfg = parse_config(GpuStepConfig, argv, description=__doc__.splitlines()[0])
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {"device": torch.cuda.get_device_name() if device == "cuda" else "cpu", "shape": cfg.shape,
               "config": vars(cfg) | {}, "modes": {}}
    with tempfile.TemporaryDirectory() as directory:
        for mode in cfg.modes.split(","):
            policy = build(cfg, mode, directory)
            r = one_step(policy, cfg, mode)
            if cfg.generate_episodes:   # the paper's way of playing: model.generate, one episode at a time
                sync()
                with policy.autocast():
                    one = hf_generate_per_episode(policy, cfg.generate_episodes, max_new_tokens=cfg.max_new_tokens)
                r["model_generate_one_episode_tokens_per_s"] = round(one["tokens"] / one["seconds"], 1)
                r["batched_vs_model_generate"] = round(r["batched_generated_tokens_per_s"] /
                                                       r["model_generate_one_episode_tokens_per_s"], 1)
            results["modes"][mode] = r
            print(f"{results['device']}, {cfg.shape}, {mode}: {json.dumps(r)}", flush=True)
            del policy
            if device == "cuda":
                torch.cuda.empty_cache()
    save_results(results, cfg.out)


if __name__ == "__main__":
    main(sys.argv[1:])
