"""Where the time of one training step goes: train.py's step 1 (the longest episodes) timed piece by
piece with wrappers around the real functions, plus a cProfile of the same step.

Pieces: rollout = prompt building (CSG.messages), tokenising (LMPolicy.encode), prompts (the
prefill of each distinct prompt), decode (one-token model calls), the action scanner
(JsonScanner.feed), the game (CSG.step); update = the scoring passes (LMPolicy.score: its prompts
and its completions, with gradient, and without for pi_old), backward, optimizer. What is left
is the code between them.
    python bench/profile_step.py [--steps 1] [--threads 2] [--train-flags "--question-set binary"]
"""

import cProfile
import io
import os
import pstats
import random
import shlex
import sys
import time
from collections import defaultdict
from contextlib import contextmanager
from dataclasses import dataclass

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import torch

import config
import env
import policy as policy_module
import rollouts
from baselines import ESTIMATORS, EstimatorContext, credit_from_batch
from bench.common import RESULTS, save_results
from config import warmup_config
from env import GameConfig
from lm import models
from lm.models import ModelConfig
from lm.warmup import starting_policy
from tools.cli import arg, parse_config, settings, use_threads
from tools.ranks import Ranks
from update import UpdateConfig, ppo_update, sampled_logprobs_are_old


@dataclass
class ProfileConfig:
    steps: int = arg(1, "training steps to time, from step 1 of the default run")
    train_flags: str = arg(
        "", "train.py flags of the run profiled, e.g. '--question-set binary' (its preset applies)"
    )
    model: str = arg(
        "tiny",
        "tiny (the warmed-up model of step 1, as the flags build it) or a checkpoint directory "
        "(a late step)",
    )
    threads: int = arg(0, "torch threads (0: the default train.py chooses)")
    cprofile_lines: int = arg(25, "functions listed from cProfile, by own time")
    out: str = arg(
        os.path.join(RESULTS, "profile_step.json"), "where the figures are written", writes="file"
    )


SECONDS = defaultdict(float)
CALLS = defaultdict(int)


@contextmanager
def timed(name):
    start = time.perf_counter()
    try:
        yield
    finally:
        SECONDS[name] += time.perf_counter() - start
        CALLS[name] += 1


def wrap(owner, attr, name_of):
    """Time every call of owner.attr under the name name_of(args, kwargs) returns."""
    original = getattr(owner, attr)

    def wrapper(*args, **kwargs):
        with timed(name_of(args, kwargs)):
            return original(*args, **kwargs)

    setattr(owner, attr, wrapper)


PHASE = ["rollout"]


def instrument(policy, opt):
    forward = policy.model.forward

    def model_call(*args, **kwargs):
        part = (
            "prompts (prefill)"
            if kwargs.get("logits_to_keep") == 1
            else "decode"
            if kwargs["input_ids"].shape[1] == 1
            else "completions"
        )
        with timed(f"{PHASE[0]}: {part}"):
            return forward(*args, **kwargs)

    policy.model.forward = model_call
    for method, phase in (
        ("generate", lambda: "rollout"),
        ("score", lambda: "update" if torch.is_grad_enabled() else "update pi_old (no grad)"),
    ):
        original = getattr(policy_module.LMPolicy, method)

        def in_phase(*args, _original=original, _phase=phase, **kwargs):
            PHASE[0] = _phase()
            return _original(*args, **kwargs)

        setattr(policy_module.LMPolicy, method, in_phase)
    wrap(env.CSG, "messages", lambda a, k: "rollout: prompt building")
    wrap(env.CSG, "step", lambda a, k: "rollout: game")
    wrap(policy_module.LMPolicy, "encode", lambda a, k: "rollout: tokenising")
    wrap(policy_module.JsonScanner, "feed", lambda a, k: "rollout: action scanner")
    wrap(torch.Tensor, "backward", lambda a, k: "update: backward")
    wrap(opt, "step", lambda a, k: "update: optimizer")


def one_step(policy, opt, cfg, rng, gen, shuffle):
    # prefix turns and refusals (experiment.episode_starts) are not played here
    game_cfg = settings(GameConfig, cfg)
    secrets = rng.sample(env.secret_split(cfg.n_max, cfg.n_heldout)[0], cfg.secrets_per_step)
    sample = policy_module.SampleConfig(cfg.temperature, cfg.top_p, cfg.max_new_tokens)
    with timed("rollout (total)"):
        batch = rollouts.play_rollouts(policy, secrets, cfg.group_size, game_cfg, sample, None, gen)
    with timed("credit (total)"):
        credit = credit_from_batch(batch, cfg.n_max)
        advantages = batch.from_grid(
            ESTIMATORS[cfg.estimator].advantages(credit, EstimatorContext())
        ).float()
    with timed("update (total)"):
        old = sampled_logprobs_are_old(settings(UpdateConfig, cfg), policy, policy, online=True)
        ppo_update(
            policy,
            opt,
            batch,
            advantages,
            settings(UpdateConfig, cfg),
            shuffle=shuffle,
            ref_policy=None,
            ranks=Ranks(),
            sampled_are_old=old,
        )
    return batch


def main(argv=None):
    pcfg = parse_config(ProfileConfig, argv, description=__doc__.splitlines()[0])
    cfg = config.config_from_flags(shlex.split(pcfg.train_flags))
    use_threads(pcfg.threads)
    # tiny: the run's own start (its warm-up, precision, size and adapters), as train.py loads it
    policy = (
        starting_policy(settings(ModelConfig, cfg), warmup_config(cfg), quiet=True)[0]
        if pcfg.model == "tiny"
        else models.load_policy_for("profile_step.py", pcfg.model)
    )
    opt = torch.optim.AdamW(
        [p for p in policy.model.parameters() if p.requires_grad],
        lr=cfg.lr,
        betas=(0.9, cfg.adam_beta2),
        eps=cfg.adam_eps,
    )
    rng, gen, shuffle = (
        random.Random(0),
        torch.Generator().manual_seed(0),
        torch.Generator().manual_seed(0),
    )
    instrument(policy, opt)
    profiler = cProfile.Profile()
    turns = 0
    start = time.perf_counter()
    profiler.enable()
    for _ in range(pcfg.steps):
        turns += len(one_step(policy, opt, cfg, rng, gen, shuffle).records)
    profiler.disable()
    total = time.perf_counter() - start
    print(
        f"{pcfg.steps} step(s) of train.py {pcfg.train_flags or '(the default config)'} "
        f"from step 1: {turns} turns, {total:.1f} s with {torch.get_num_threads()} threads "
        "(cProfile on: about 10-20% slower than train.py)"
    )
    rows = sorted(SECONDS.items(), key=lambda kv: (not kv[0].endswith("(total)"), kv[0]))
    for name, s in rows:
        print(f"  {name:45s} {s:7.2f} s  {100 * s / total:5.1f}%  ({CALLS[name]} calls)")
    stream = io.StringIO()
    pstats.Stats(profiler, stream=stream).sort_stats("tottime").print_stats(pcfg.cprofile_lines)
    text = stream.getvalue()
    print(text[text.index("ncalls") - 3 :] if "ncalls" in text else text)
    save_results(
        {
            "steps": pcfg.steps,
            "train_flags": pcfg.train_flags,
            "turns": turns,
            "seconds": round(total, 2),
            "threads": torch.get_num_threads(),
            "pieces": {
                k: {"seconds": round(v, 3), "share": round(v / total, 4), "calls": CALLS[k]}
                for k, v in rows
            },
            "cprofile_top": text.splitlines()[-pcfg.cprofile_lines - 2 :],
        },
        pcfg.out,
    )


if __name__ == "__main__":
    main(sys.argv[1:])
