"""The paper's scale on one GPU, with nothing downloaded: a model of Qwen2.5-1.5B-Instruct's
architecture built from its published config with random weights, fed the game's real prompts,
timed through one ECHO step of train.py's own code at the paper's batch, for LoRA (bf16 frozen
base, float32 adapters) and for full fine-tuning (float32 weights, bf16 autocast), each with
the rollout engines side by side in one run: eager (policy.py, train.py --rollout eager), fast
(lm/engine.py, --rollout fast), fast-unfused (the same without fused projections: what fusing q/k/v
and gate/up saves), fast-eager-sampling (the same drawing with policy.sample_next's eager
kernels: what the compiled blocked draw saves) and fast-stock (lm/engine.py's static caches and
CUDA graphs on transformers' stock attention and projections, each cache read to its power of
two, the host reading every token before the next step, the eager draw: what the fast engine's
attention, read lengths, lookahead and draw save).

Each setting plays one step to warm up (compilation, CUDA graphs, allocator) and times the
second. It reports seconds per step split into rollout (prefill, decode, the game) / scoring
(pi_old) / update, peak GPU memory, and the decode rate beside its memory-bandwidth bound: a
decode step has to read the sampling model's weights and each row's KV cache up to its context,
so it cannot take less than those bytes / the device's bandwidth (measured here with a large
copy); the bound's share of the decode time is how close the engine comes. For the static
engines also the decode shapes met (one compiled graph, and on CUDA one CUDA graph, each) and
the seconds their first steps took (compilation and capture), and for every engine how far the
sampling copy's log-probability of each action is from pi_old's, recomputed on the trained
model (per action: Eq. 2's rho is per action). Random weights never close the action's JSON, so
every turn writes max_new_tokens and every episode runs all 10 turns: the step timed is the longest
one a run can have. `--micro-batch 32,64` times the update at each micro-batch on the same model and
engine, and records one that runs out of GPU memory as such: a sweep finds the largest that fits;
`--compile-update off,on` times it with the trained model's decoder layers eager and compiled
(train.py --compile-update, update.CompiledLayers; the first compiled step compiles them).
`--profile-turns N` then plays one more step of N-turn episodes under torch.profiler and keeps, for
the rollout and for the update (pi_old's scoring included), the seconds the GPU's kernels were busy
beside the wall time, and the costliest kernels and host calls: where a phase's time goes, and
whether the GPU or the host is what it waits on. On a CPU, `--shape small` is a smoke test of the
same code (its bandwidth is the RAM's). The file records the command, date, machine, commit and the
versions of torch, transformers, peft and accelerate.

The paper's batch (its train_echo.py with TRL): 16 groups of G = 4 rollouts per generation,
one pass, 4 optimizer steps; completions up to 128 tokens.
    python bench/gpu_step.py [--modes lora,full] [--engines fast-stock,fast] [--tokenizer DIR] \\
        [--shape qwen2.5-1.5b|small]
    # adds full fine-tuning to the figures of an earlier call
    python bench/gpu_step.py --modes full --merge
    # where the code runs in a copy without git's history
    python bench/gpu_step.py --commit HASH ...

On a GPU machine: install the pinned transformers, peft and accelerate with `pip install --no-deps`
(from wheels fetched elsewhere with `pip download --no-deps` where it has no network), and save
SmolLM2's tokenizer to a folder git ignores, here or there:
    python -c "import models; from transformers import AutoTokenizer; \
        d, f = models.smollm2_gguf(); \
        AutoTokenizer.from_pretrained(d, gguf_file=f).save_pretrained('runs/smollm2-tokenizer')"
then run one mode per call (`--modes lora`, then `--modes full --merge`) to keep each call short.
"""

import json
import os
import sys
import tempfile
import time
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import torch

import config
from baselines import ESTIMATORS, EstimatorContext, credit_from_batch
from bench.common import RESULTS, code_version, command_line, save_results
from bench.rollouts import hf_generate_per_episode
from env import GameConfig
from lm import engine, models, tinylm
from policy import LMPolicy, SampleConfig
from rollouts import play_rollouts
from tools.cli import arg, fail, parse_config, settings
from tools.ranks import Ranks
from update import (
    CompiledLayers,
    UpdateConfig,
    minibatches,
    old_logprobs,
    ppo_update,
    sampled_logprobs_are_old,
)

QWEN25_15B = dict(  # Qwen/Qwen2.5-1.5B-Instruct config.json, as published
    vocab_size=151936,
    hidden_size=1536,
    intermediate_size=8960,
    num_hidden_layers=28,
    num_attention_heads=12,
    num_key_value_heads=2,
    max_position_embeddings=32768,
    rope_theta=1000000.0,
    rms_norm_eps=1e-6,
    tie_word_embeddings=True,
    hidden_act="silu",
    use_sliding_window=False,
)
SMALL = dict(
    hidden_size=64,
    intermediate_size=128,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    max_position_embeddings=4096,
    tie_word_embeddings=True,
)


@dataclass
class GpuStepConfig:
    modes: str = arg(
        "lora,full", "comma list: lora (the paper's r = 16 adapters) and/or full fine-tuning"
    )
    engines: str = arg(
        "fast-stock,fast", "comma list of rollout engines: eager, fast-stock, fast-unfused, fast"
    )
    shape: str = arg(
        "qwen2.5-1.5b",
        "qwen2.5-1.5b (the paper's model, 1.5B parameters) or small (a CPU smoke test)",
    )
    tokenizer: str = arg(
        "",
        "a tokenizer directory (e.g. SmolLM2's, a ChatML BPE like Qwen's); "
        "empty: a BPE trained here",
    )
    secrets: int = arg(16, "B: secrets per step (the paper's generation batch: 16 groups)")
    group_size: int = arg(4, "G (the paper's code: 4)")
    max_new_tokens: int = arg(128, "completion length limit (the paper's rollouts: 128)")
    micro_batch: str = arg(
        "32",
        "comma list: turns per forward pass of the update, each timed on the same model and "
        "engine (one that does not fit in memory is recorded as such)",
    )
    compile_update: str = arg(
        "off",
        "comma list: off and/or on, the update's decoder layers compiled (train.py "
        "--compile-update), each timed on the same model and engine",
    )
    generate_episodes: int = arg(
        1, "episodes played one at a time with model.generate, for the comparison"
    )
    device: str = arg("", "cpu | cuda; default: cuda if there is one")
    merge: bool = arg(
        False,
        "add these figures to those --out holds (same device, shape and code), not replace them",
    )
    profile_turns: int = arg(
        0,
        "> 0: after the timed step, profile one step of episodes this long (torch.profiler): "
        "the rollout's and the update's GPU-busy seconds and costliest kernels and host calls",
    )
    commit: str = arg(
        "", "the commit of this code, recorded where it runs in a copy without git's history"
    )
    out: str = arg(
        os.path.join(RESULTS, "gpu_step.json"), "where the figures are written", writes="file"
    )


ENGINES = ("eager", "fast-stock", "fast-unfused", "fast-eager-sampling", "fast")


def build(cfg: GpuStepConfig, mode: str, directory: str) -> LMPolicy:
    """The random model saved once in `directory`, loaded as train.py loads a model for `mode`."""
    from transformers import AutoTokenizer, Qwen2Config, Qwen2ForCausalLM

    if not os.path.exists(os.path.join(directory, "config.json")):
        tokenizer = (
            AutoTokenizer.from_pretrained(cfg.tokenizer)
            if cfg.tokenizer
            else tinylm.bpe_tokenizer()
        )
        shape = (
            QWEN25_15B if cfg.shape == "qwen2.5-1.5b" else SMALL | {"vocab_size": len(tokenizer)}
        )
        torch.manual_seed(0)  # the same random weights in every call (--merge)
        with torch.device(cfg.device):
            model = Qwen2ForCausalLM(
                Qwen2Config(
                    **shape,
                    eos_token_id=tokenizer.eos_token_id,
                    pad_token_id=tokenizer.pad_token_id,
                )
            ).to(torch.bfloat16)
        model.save_pretrained(directory)
        tokenizer.save_pretrained(directory)
        del model
    lora = models.LoraConfig() if mode == "lora" else None
    return models.load_policy(directory, cfg.device, "auto", lora=lora)


def make_sampler(policy: LMPolicy, engine_name: str) -> LMPolicy:
    """What samples for an engine of ENGINES."""
    # the static caches and graphs alone: stock attention, no read lengths, no lookahead
    if engine_name == "fast-stock":
        return engine.rollout_policy(
            policy,
            torch.bfloat16,
            engine.StaticDecoder(lookahead=0, fast_sampling=False),
            attention="sdpa",
            fused=False,
        )
    if engine_name == "fast-eager-sampling":
        return engine.rollout_policy(
            policy, torch.bfloat16, engine.StaticDecoder(fast_sampling=False)
        )
    if engine_name == "fast-unfused":
        return engine.rollout_policy(policy, torch.bfloat16, engine.StaticDecoder(), fused=False)
    return engine.sampler(policy, engine_name)


def versions() -> dict:
    import accelerate
    import peft
    import transformers

    return {
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "transformers": transformers.__version__,
        "peft": peft.__version__,
        "accelerate": accelerate.__version__,
    }


def bandwidth(device: str, gib: float = 1.0, repeats: int = 5) -> float:
    """Bytes per second the device's memory moves: the best of a few copies of `gib` GiB (each
    reads and writes it)."""
    x = torch.empty(int(gib * 2**30) // 4, device=device)
    y = torch.empty_like(x)
    best = float("inf")
    for _ in range(repeats):
        sync()
        start = time.perf_counter()
        y.copy_(x)
        sync()
        best = min(best, time.perf_counter() - start)
    return 2 * x.numel() * 4 / best


class Timed:
    """A sampler's generation, timed: its prefill, its decode (the rest of `generate`: the
    forward per token, sampling, the host's bookkeeping), and the bytes each decode step must read
    (the weights, and every row's KV cache up to its context)."""

    def __init__(self, sampler: LMPolicy):
        c = sampler.model.config
        head = getattr(c, "head_dim", None) or c.hidden_size // c.num_attention_heads
        kv_value = (
            2
            if sampler.compute_dtype == torch.bfloat16
            or next(sampler.model.parameters()).dtype == torch.bfloat16
            else 4
        )
        self.kv_bytes = (
            c.num_hidden_layers
            * 2
            * (getattr(c, "num_key_value_heads", None) or c.num_attention_heads)
            * head
            * kv_value
        )
        self.weight_bytes = sum(p.numel() * p.element_size() for p in sampler.model.parameters())
        self.sampler, self.static = sampler, sampler.decoder
        if self.static is not None:  # engine.StaticDecoder: its own loop calls its `start`
            self.inner, self.static.start = self.static.start, self.decoder
        else:  # LMPolicy.generate's loop calls the policy's decoder
            self.inner, sampler.decoder = LMPolicy.eager_decoder, self.decoder
        self.generate = sampler.generate
        self.prefill_s = self.generate_s = 0.0
        self.steps = self.tokens = self.bytes = 0
        sampler.generate = self.timed_generate

    def decoder(self, policy, prompt_ids, max_new_tokens):
        sync()
        start = time.perf_counter()
        logits, advance = self.inner(policy, prompt_ids, max_new_tokens)
        sync()
        self.prefill_s += time.perf_counter() - start
        context = [max(map(len, prompt_ids))]

        def counted(tok):
            self.steps, self.tokens, context[0] = (
                self.steps + 1,
                self.tokens + len(tok),
                context[0] + 1,
            )
            self.bytes += self.weight_bytes + len(tok) * context[0] * self.kv_bytes
            return advance(tok)

        return logits, counted

    def restore(self):
        """The sampler's own methods again (a second call does nothing)."""
        if self.static is not None:
            self.static.__dict__.pop("start", None)  # the method again
        else:
            self.sampler.decoder = None
        self.sampler.__dict__.pop("generate", None)

    def timed_generate(self, *args, **kwargs):
        sync()
        start = time.perf_counter()
        out = self.generate(*args, **kwargs)
        sync()
        self.generate_s += time.perf_counter() - start
        return out


def action_drift(policy: LMPolicy, batch, tcfg) -> dict:
    """How far the sampler's log-probability of each action is from pi_old's, recomputed on the
    trained model as update.ppo_update does: log pi_copy(a|h) - log pi_old(a|h) per action."""
    update_cfg = settings(UpdateConfig, tcfg)
    layout = minibatches(batch.turn_keys(Ranks()), torch.Generator().manual_seed(0), update_cfg, 0)
    old = old_logprobs(policy, None, batch, layout, update_cfg)[0]
    log_ratio = torch.tensor(
        [sum(s) - float(o.sum()) for s, o in zip(batch.logprobs, old)], dtype=torch.float64
    )
    return {
        "behaviour_action_log_ratio_mean": round(log_ratio.mean().item(), 4),
        "behaviour_action_log_ratio_mean_abs": round(log_ratio.abs().mean().item(), 4),
        "behaviour_action_log_ratio_max_abs": round(log_ratio.abs().max().item(), 4),
        "actions": len(log_ratio),
    }


@contextmanager
def profiled(summaries: dict | None, phase: str, top: int = 12):
    """torch.profiler around a phase when `summaries` is given, its summary kept there: the wall
    seconds, the seconds the GPU's kernels took (busy), and the kernels and host calls that took
    most (name, calls, milliseconds)."""
    if summaries is None:
        yield
        return
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    cuda = torch.cuda.is_available()
    with profile(
        activities=[ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    ) as prof:
        sync()
        began = time.perf_counter()
        yield
        sync()
        wall = time.perf_counter() - began
    events = prof.key_averages()
    kernels = sorted(
        (e for e in events if e.device_type == DeviceType.CUDA),
        key=lambda e: -e.self_device_time_total,
    )
    host = sorted(
        (e for e in events if e.device_type == DeviceType.CPU), key=lambda e: -e.self_cpu_time_total
    )
    summaries[phase] = {
        "wall_s": round(wall, 3),
        "gpu_busy_s": round(sum(e.self_device_time_total for e in kernels) / 1e6, 3),
        "kernels": [
            [e.key[:100], e.count, round(e.self_device_time_total / 1e3, 2)] for e in kernels[:top]
        ],
        "host": [[e.key[:100], e.count, round(e.self_cpu_time_total / 1e3, 2)] for e in host[:top]],
    }


def one_step(
    policy,
    sampler,
    cfg: GpuStepConfig,
    mode: str,
    bytes_per_s: float,
    micro_batch: int,
    update_context,
    turns: int = 10,
    profile: dict | None = None,
) -> dict:
    """One step of train.py's code (play on `sampler`, credit, Eq. 2 on `policy` in passes of
    `micro_batch` turns inside `update_context`, refresh), timed by part; episodes of at most
    `turns` turns; `profile`: a dict to hold the profiles of the rollout and the update
    (`profiled`)."""
    tcfg = config.config_from_flags(
        [
            "--model",
            "qwen",
            "--lora-rank",
            "16" if mode == "lora" else "0",
            "--group-size",
            str(cfg.group_size),
            "--secrets-per-step",
            str(cfg.secrets),
            "--ppo-epochs",
            "1",
            "--num-minibatches",
            "4",
            "--micro-batch",
            str(micro_batch),
            "--max-new-tokens",
            str(cfg.max_new_tokens),
        ]
    )
    params = [p for p in policy.model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(
        params, lr=tcfg.lr, betas=(0.9, tcfg.adam_beta2), eps=tcfg.adam_eps, weight_decay=0.0
    )
    scoring = {"old": 0.0}
    score = policy.score

    def timed_score(*a, **k):  # the pi_old pass runs without gradient: that is "scoring"
        if torch.is_grad_enabled():
            return score(*a, **k)
        start = time.perf_counter()
        out = score(*a, **k)
        sync()
        scoring["old"] += time.perf_counter() - start
        return out

    policy.score = timed_score
    timed = Timed(sampler)
    try:  # a step cut short (out of memory) leaves the policy and sampler as they were
        sync()
        torch.cuda.reset_peak_memory_stats() if torch.cuda.is_available() else None
        start = time.perf_counter()
        with profiled(profile, "rollout"):
            batch = play_rollouts(
                sampler,
                list(range(1, cfg.secrets + 1)),
                cfg.group_size,
                GameConfig(max_turns=turns),
                # as train.py samples
                SampleConfig(tcfg.temperature, tcfg.top_p, cfg.max_new_tokens),
                seeds=list(range(cfg.secrets * cfg.group_size)),
            )
        sync()
        played = time.perf_counter()
        timed.restore()
        with update_context:
            # not part of the step: a scoring pass of its own
            drift = action_drift(policy, batch, tcfg)
        scoring["old"] = 0.0
        sync()
        resumed = time.perf_counter()
        with profiled(profile, "update"), update_context:
            credit = credit_from_batch(batch, 100)
            advantages = batch.from_grid(
                ESTIMATORS["echo"].advantages(credit, EstimatorContext())
            ).float()
            old = sampled_logprobs_are_old(
                settings(UpdateConfig, tcfg), sampler, policy, online=True
            )
            shuffle = torch.Generator().manual_seed(0)
            update = ppo_update(
                policy,
                opt,
                batch,
                advantages,
                settings(UpdateConfig, tcfg),
                shuffle=shuffle,
                ref_policy=None,
                ranks=Ranks(),
                sampled_are_old=old,
            )
            engine.refresh(sampler, policy)
        sync()
        updated = time.perf_counter()
    finally:
        policy.score = score
        timed.restore()
    tokens, decode_s = sum(len(c) for c in batch.completion_ids), timed.generate_s - timed.prefill_s
    bound_s = timed.bytes / bytes_per_s
    return {
        "turns": len(batch.records),
        "generated_tokens": tokens,
        "prompt_tokens": sum(map(len, batch.prompt_ids)),
        "rollout_s": round(played - start, 2),
        "prefill_s": round(timed.prefill_s, 2),
        "decode_s": round(decode_s, 2),
        "game_s": round(played - start - timed.generate_s, 2),
        "scoring_s": round(scoring["old"], 2),
        "update_s": round(updated - resumed - scoring["old"], 2),
        "step_s": round(played - start + updated - resumed, 2),
        "batched_generated_tokens_per_s": round(tokens / (played - start), 1),
        "decode_steps": timed.steps,
        "decode_tokens_per_s": round(timed.tokens / decode_s, 1),
        "bandwidth_bound_tokens_per_s": round(timed.tokens / bound_s, 1),
        "percent_of_bandwidth_bound": round(100 * bound_s / decode_s, 1),
        "behaviour_logprob_drift": update["train/behaviour_logprob_drift"],
        "behaviour_logprob_gap": update["train/behaviour_logprob_gap"],
        **drift,
        "peak_gpu_memory_gb": round(torch.cuda.max_memory_allocated() / 2**30, 2)
        if torch.cuda.is_available()
        else None,
        "trainable_parameters": sum(p.numel() for p in params),
        "parameters": sum(p.numel() for p in policy.model.parameters()),
    }


def setting_name(mode: str, engine_name: str, micro_batch: int, compiled: bool = False) -> str:
    """A setting's key in the file: MODE/ENGINE, then the update's micro-batch where it is not the
    default and /compiled-update where its layers were compiled."""
    default = int(GpuStepConfig.micro_batch)
    return (
        f"{mode}/{engine_name}"
        + (f"/micro-batch-{micro_batch}" if micro_batch != default else "")
        + ("/compiled-update" if compiled else "")
    )


def timed_setting(
    policy,
    sampler,
    cfg: GpuStepConfig,
    mode: str,
    name: str,
    micro_batch: int,
    bytes_per_s: float,
    update_context=nullcontext(),
) -> dict:
    """One setting's figures: a warm-up step (compilation, graphs, allocator), then the timed one,
    then the profiled and the one-episode-at-a-time figures where asked."""
    sync()
    began = time.perf_counter()
    one_step(policy, sampler, cfg, mode, bytes_per_s, micro_batch, update_context)
    sync()
    warm_s = time.perf_counter() - began
    r = one_step(policy, sampler, cfg, mode, bytes_per_s, micro_batch, update_context)
    r["warm_up_step_s"] = round(warm_s, 2)
    # engine.StaticDecoder, both steps together (and earlier micro-batches')
    if sampler.decoder is not None:
        r["decode_shapes"] = len(sampler.decoder.shapes)
        r["graphs_captured"] = len(sampler.decoder.shapes) if sampler.decoder.compiled else 0
        r["compile_and_capture_s"] = round(sampler.decoder.compile_seconds, 2)
    if cfg.profile_turns:  # a shorter step, so the trace stays small
        r["profile"] = {"turns": cfg.profile_turns}
        one_step(
            policy,
            sampler,
            cfg,
            mode,
            bytes_per_s,
            micro_batch,
            update_context,
            cfg.profile_turns,
            r["profile"],
        )
    # the paper's way of playing: one episode at a time
    if cfg.generate_episodes and name == "eager":
        sync()
        with policy.autocast():
            one = hf_generate_per_episode(
                policy, cfg.generate_episodes, max_new_tokens=cfg.max_new_tokens
            )
        r["model_generate_one_episode_tokens_per_s"] = round(one["tokens"] / one["seconds"], 1)
    return r


def sync():
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def main(argv=None):
    cfg = parse_config(GpuStepConfig, argv, description=__doc__.splitlines()[0])
    if unknown := set(cfg.engines.split(",")) - set(ENGINES):
        fail(
            "gpu_step.py",
            f"unknown engine {', '.join(sorted(unknown))}: choose among {', '.join(ENGINES)}.",
        )
    device = cfg.device = cfg.device or ("cuda" if torch.cuda.is_available() else "cpu")
    micro_batches = [int(m) for m in cfg.micro_batch.split(",") if m.isdigit() and int(m) > 0]
    if len(micro_batches) != len(cfg.micro_batch.split(",")):
        fail(
            "gpu_step.py",
            "--micro-batch takes positive whole numbers separated by commas, "
            f"not {cfg.micro_batch!r}.",
        )
    if not set(compile_update := cfg.compile_update.split(",")) <= {"off", "on"}:
        fail(
            "gpu_step.py",
            "--compile-update takes off and/or on, separated by commas, "
            f"not {cfg.compile_update!r}.",
        )
    results = {
        "device": torch.cuda.get_device_name() if device == "cuda" else "cpu",
        "shape": cfg.shape,
        "config": vars(cfg) | {},
        "versions": versions(),
        "modes": {},
    }
    command = command_line(argv, __file__)
    code = code_version() or ({"commit": cfg.commit, "uncommitted": None} if cfg.commit else {})
    if cfg.merge and os.path.exists(cfg.out):
        with open(cfg.out) as f:
            earlier = json.load(f)
        same = {k: earlier.get(k) for k in ("device", "shape", "commit", "uncommitted", "versions")}
        if same != {
            "device": results["device"],
            "shape": cfg.shape,
            "commit": None,
            "uncommitted": None,
            **code,
            "versions": results["versions"],
        }:
            fail(
                "gpu_step.py",
                f"{cfg.out} holds figures of another device, shape, code or library versions: "
                "leave out --merge, or give another --out.",
            )
        results["modes"], command = earlier["modes"], f"{earlier['command']}; {command}"
    bytes_per_s = bandwidth(device, 1.0 if device == "cuda" else 0.25)
    results["memory_bandwidth_gb_per_s"] = round(bytes_per_s / 1e9, 1)
    with tempfile.TemporaryDirectory() as directory:
        for mode in cfg.modes.split(","):
            policy = build(cfg, mode, directory)
            # compiles on first use
            compiled_layers = CompiledLayers(policy, on="on" in compile_update)
            for name in cfg.engines.split(","):
                sampler = make_sampler(policy, name)
                for micro_batch, compiled in [
                    (m, c == "on") for c in compile_update for m in micro_batches
                ]:
                    key = setting_name(mode, name, micro_batch, compiled)
                    try:
                        r = timed_setting(
                            policy,
                            sampler,
                            cfg,
                            mode,
                            name,
                            micro_batch,
                            bytes_per_s,
                            compiled_layers if compiled else nullcontext(),
                        )
                    except torch.OutOfMemoryError:
                        # the largest micro-batch that fits is what a sweep looks for
                        for p in policy.model.parameters():
                            p.grad = None
                        policy.model.eval()
                        torch.cuda.empty_cache()
                        r = {"out_of_memory": True, "micro_batch": micro_batch}
                    results["modes"][key] = r
                    print(f"{results['device']}, {cfg.shape}, {key}: {json.dumps(r)}", flush=True)
                    # after each setting: a run cut short keeps what it timed
                    save_results(results | code, cfg.out, command)
                del sampler
            del policy
            if device == "cuda":
                torch.cuda.empty_cache()


if __name__ == "__main__":
    main(sys.argv[1:])
