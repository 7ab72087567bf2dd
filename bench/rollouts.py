"""RolloutBatch throughput: the batched engine (rollouts.play_rollouts: one generation per turn over
every live episode) versus one episode at a time, same model, same secrets, same seed, in one run.
One-at-a-time is measured twice: with our own KV-cached decoder (policy.generate, which stops as
soon as the action's JSON closes), and the way the paper's code plays (train_echo.py
_run_single_episode): Hugging Face `model.generate` per episode per turn, sampling until EOS or
the token limit, the JSON cut out of the text afterwards. Also the peak memory of the batched
tiny-model rollout of 64 episodes, measured in a fresh process.

The batched rollout is also set against the arithmetic bound of its model calls: their
floating-point operations (the matrix products of every layer, attention over the cache, the
output layer for the rows that need it) divided by the rate this machine's torch multiplies a
matrix of the model's width (measured here), separately for the prefill (each distinct prompt,
once) and the decode (one token per live episode per call), counting real tokens only: padding
is waste, not work. A model that is not installed (SmolLM2's package) is skipped with one line.

Goals: batched >= 2.5x one at a time for the tiny model on 2 cores, its prefill within 1.5x of
the bound; peak memory under 2 GB.
    python bench/rollouts.py [--episodes 64] [--smollm2-episodes 16]
"""

import os
import subprocess
import sys
import time
from dataclasses import dataclass

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import torch

from bench.common import RESULTS, save_results
from env import CSG, GameConfig
from lm import models
from lm.models import ModelConfig
from lm.warmup import WarmupConfig, starting_policy
from policy import SampleConfig
from rollouts import play_rollouts
from tools.cli import arg, parse_config


def secrets_for(n: int) -> list[int]:
    return [1 + (17 * i) % 100 for i in range(n)]


def call_flops(model, tokens: int, context: int, output_rows: int) -> float:
    """Floating-point operations of one forward call over `tokens` real tokens (padding is not
    work the game asks for): 2 per weight per token for the layers' matrices, attention scores and
    values over `context` keys, and the output layer."""
    cfg = model.config
    d, layers, vocab = cfg.hidden_size, cfg.num_hidden_layers, cfg.vocab_size
    weights = sum(p.numel() for n, p in model.named_parameters() if "layers." in n and p.dim() == 2)
    return 2 * weights * tokens + 4 * layers * d * tokens * context + 2 * d * vocab * output_rows


def matmul_rate(d: int) -> float:
    """FLOP/s of this machine's torch on (4096 x d) @ (d x 4d), the shape of a prefill's MLP."""
    a, b = torch.randn(4096, d), torch.randn(d, 4 * d)
    for _ in range(3):
        a @ b
    start, reps = time.perf_counter(), 20
    for _ in range(reps):
        a @ b
    return 2 * 4096 * d * 4 * d * reps / (time.perf_counter() - start)


def batched(policy, n: int, seed: int = 0) -> dict:
    meter = {"prefill": [0.0, 0.0], "decode": [0.0, 0.0]}  # kind -> [seconds, flops]
    forward = policy.model.forward

    def metered(*args, **kwargs):
        ids, mask = kwargs["input_ids"], kwargs["attention_mask"]
        kind = "prefill" if kwargs.get("logits_to_keep") == 1 else "decode"
        rows = ids.shape[0] if kind == "prefill" else ids.numel()
        start = time.perf_counter()
        out = forward(*args, **kwargs)
        meter[kind][0] += time.perf_counter() - start
        real = int(mask[:, -ids.shape[1] :].sum())  # the tokens passed, less their padding
        meter[kind][1] += call_flops(policy.model, real, mask.shape[1], rows)
        return out

    policy.model.forward = metered
    start = time.perf_counter()
    out = play_rollouts(
        policy,
        secrets_for(n),
        1,
        GameConfig(),
        SampleConfig(),
        generator=torch.Generator().manual_seed(seed),
    )
    seconds = time.perf_counter() - start
    policy.model.forward = forward
    tokens = sum(len(c) for c in out.completion_ids)
    rate = matmul_rate(policy.model.config.hidden_size)
    bound = {
        k: {
            "seconds": round(s, 3),
            "gflop": round(f / 1e9, 2),
            "bound_seconds": round(f / rate, 3),
            "of_bound": round(s / (f / rate), 2) if f else None,
        }
        for k, (s, f) in meter.items()
    }
    return {
        "seconds": seconds,
        "episodes": n,
        "turns": len(out.records),
        "tokens": tokens,
        "matmul_gflops": round(rate / 1e9, 1),
        "arithmetic": bound,
    }


def one_at_a_time(policy, n: int, seed: int = 0) -> dict:
    gen = torch.Generator().manual_seed(seed)
    start, turns, tokens = time.perf_counter(), 0, 0
    for secret in secrets_for(n):
        game = CSG([secret], GameConfig())
        while game.active:
            (g,) = policy.generate(policy.encode(game.messages()), SampleConfig(), gen)
            game.step([g.text])
            turns, tokens = turns + 1, tokens + len(g.completion_ids)
    return {"seconds": time.perf_counter() - start, "episodes": n, "turns": turns, "tokens": tokens}


def hf_generate_per_episode(
    policy, n: int, seed: int = 0, max_new_tokens: int | None = None
) -> dict:
    """The paper's way: `model.generate(do_sample=True)` for one episode at a time, no stop rule
    but EOS, so a model that keeps writing after its JSON pays for every token up to the limit."""
    torch.manual_seed(seed)
    sample = SampleConfig(max_new_tokens=max_new_tokens or SampleConfig().max_new_tokens)
    start, turns, tokens = time.perf_counter(), 0, 0
    for secret in secrets_for(n):
        game = CSG([secret], GameConfig())
        while game.active:
            ids = torch.tensor(policy.encode(game.messages()), device=policy.device)
            with torch.no_grad():
                out = policy.model.generate(
                    ids,
                    attention_mask=torch.ones_like(ids),
                    do_sample=True,
                    temperature=sample.temperature,
                    top_p=sample.top_p,
                    top_k=0,
                    max_new_tokens=sample.max_new_tokens,
                    pad_token_id=policy.pad_id,
                    eos_token_id=sorted(policy.stop_ids),
                )
            new = out[0, ids.shape[1] :]
            # env reads the first JSON
            game.step([policy.tokenizer.decode(new, skip_special_tokens=True)])
            turns, tokens = turns + 1, tokens + len(new)
    return {"seconds": time.perf_counter() - start, "episodes": n, "turns": turns, "tokens": tokens}


def compare(spec: str, n: int) -> dict:
    if spec == "tiny":
        policy = starting_policy(ModelConfig(), WarmupConfig(), quiet=True)[0]
    else:
        policy = models.load_policy(spec)
    batched(policy, 4)  # warm up the kernels once
    runs = {
        "batched": batched(policy, n),
        "one_at_a_time": one_at_a_time(policy, n),
        "hf_generate_per_episode": hf_generate_per_episode(policy, n),
    }
    for name, r in runs.items():
        print(
            f"{spec:8s} {name:24s} {r['episodes']:3d} episodes, {r['turns']:4d} turns in "
            f"{r['seconds']:7.1f} s: {r['episodes'] / r['seconds']:6.2f} episodes/s, "
            f"{r['tokens'] / r['seconds']:7.0f} generated tokens/s"
        )
    for kind, a in runs["batched"]["arithmetic"].items():
        print(
            f"{spec:8s} batched {kind:8s} {a['seconds']:6.2f} s for {a['gflop']:7.2f} GFLOP: "
            f"the arithmetic bound at {runs['batched']['matmul_gflops']} GFLOP/s "
            f"(this machine's matmul) is {a['bound_seconds']:.2f} s, so {a['of_bound']}x the bound"
        )
    rate = {name: r["episodes"] / r["seconds"] for name, r in runs.items()}
    for name in ("one_at_a_time", "hf_generate_per_episode"):
        runs[f"speedup_vs_{name}"] = round(rate["batched"] / rate[name], 2)
        print(
            f"{spec:8s} speedup of the batched engine over {name}: "
            f"{runs[f'speedup_vs_{name}']:.1f}x (episodes/s)"
        )
    return runs


def peak_memory_mb(n: int) -> float:
    """Max RSS of a fresh process that loads the tiny model and plays n episodes batched."""
    code = (
        "import resource, sys; sys.path.insert(0, '.'); from bench.rollouts import batched; "
        "from lm.models import ModelConfig; from lm.warmup import WarmupConfig, starting_policy; "
        "batched(starting_policy(ModelConfig(), WarmupConfig(), quiet=True)[0], %d); "
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)" % n
    )
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True
    )
    return int(out.stdout.strip().splitlines()[-1]) / 1024  # ru_maxrss is in kB on Linux


@dataclass
class RolloutsConfig:
    episodes: int = arg(64, "episodes of the tiny model per way of playing")
    smollm2_episodes: int = arg(16, "episodes of SmolLM2-135M per way of playing (0: skip it)")
    out: str = arg(
        os.path.join(RESULTS, "rollouts.json"), "where the figures are written", writes="file"
    )


def main(argv=None):
    args = parse_config(RolloutsConfig, argv, description=__doc__.splitlines()[0])
    results = {"tiny": compare("tiny", args.episodes)}
    results["tiny"]["peak_rss_mb"] = round(peak_memory_mb(args.episodes), 1)
    print(
        f"tiny     peak memory of a batched {args.episodes}-episode rollout: "
        f"{results['tiny']['peak_rss_mb']:.0f} MB (goal < 2048)"
    )
    if args.smollm2_episodes:
        try:
            results["smollm2"] = compare("smollm2", args.smollm2_episodes)
        except models.ModelNotFoundError as e:  # an optional package: its rows are left out
            print(f"smollm2  skipped: {e}")
            results["smollm2"] = {"skipped": str(e)}
    results["threads"] = torch.get_num_threads()
    save_results(results, args.out)


if __name__ == "__main__":
    main(sys.argv[1:])
