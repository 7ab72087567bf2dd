"""Train a Clue Selector Game policy with ECHO or a baseline: `python train.py --estimator echo`.

Section 4 of the paper, each step in this order (section 5.1 for the game and the baselines;
config.py for the values, App. C "Training Hyperparameters"):

    1. play    B secrets x G rollouts each, sampled from pi_old (rollouts.play_rollouts)
    2. credit  one advantage per turn from the estimator (ESTIMATORS: Eq. 1 for echo)
    3. update  Eq. 2, the clipped objective, in minibatches (update.ppo_update)
    4. log     train/ (the update), clue/ (the batch's play), eval/ (the held-out secrets)

What a research run adds (directory, logs, checkpoints, --resume, the checkpoint kept on
validation secrets where asked, offline data, credit probe, curves) is called at the points marked
`# run:` (experiment.py, fidelity.py); torchrun runs it on several processes (tools/ranks.py).
With no flags it trains the tiny model on 2 CPU cores in minutes; `--model DIR` is written to
train Qwen2.5-1.5B-Instruct in the same loop. Its llm preset sets LoRA rank 16, lr 5e-6, top-p
0.9, 128 new tokens, one pass of 4 optimizer steps, the paper's episode starts (no opening
questions or refusals) and candidate list, B = 8, a micro-batch of 16 and a warm-up of 64
episodes, one pass at lr 5e-4 (llm-full, at --lora-rank 0: lr 1e-6, warm-up lr 1e-5); on a CPU
llm-cpu then sets candidates as runs, App. B's instructions as a system message, B = 4,
forward passes of at most 3072 tokens, 64 new tokens, evaluations every 10 steps (their sampled
play 16 rows at a time) and no credit probe, and llm-cpu-bf16 bf16 where the CPU computes it in
hardware (config.py says where each comes from). A run resumed keeps the values the presets gave
it (experiment.changed_on_resume).

Departures from the paper, and why (update.py lists those of Eq. 2's update):
- A format warm-up (lm/warmup.py) first teaches the JSON action: were every action unreadable,
  Eq. 1 would give no credit.
- The learning rate decays linearly to 0 (CleanRL's anneal_lr).
- The binary preset (or `--validation-secrets N` > 0) keeps the checkpoint that plays best on
  training secrets set aside (experiment.py says why); the defaults on the paper's question set
  (`--validation-secrets 0`) keep the last, as the paper does: it describes no selection.
- Eq. 1 is taken over the rollouts still active at turn t (echo.py says why).
- Rollouts start after 0..3 random questions, a family an arm owns goes unanswered with chance
  0.3, and candidates are written as runs FIRST-LAST (episodes.episode_starts,
  game.prompts.candidate_text): from the paper's starts one question sequence fits 1..100 and is
  replayed on 1..200. B = 6 for 80 steps: minutes on 2 cores (binary, llm: B = 8; llm-cpu: 4).
  RESULTS.md says what chose each of these values.
"""

from __future__ import annotations

import sys
import time
from dataclasses import asdict, replace

# before torch: cli sets how OpenMP's idle threads wait (tools/cli.py)
from tools.cli import applied_presets, fail, settings, use_threads

# isort: split

import torch

from baselines import ESTIMATORS, EstimatorContext, credit_from_batch
from config import (
    PRESETS,
    TrainConfig,
    check_config,
    config_from_flags,
    kept_on_resume,
    warmup_config,
)
from env import GameConfig
from episodes import (
    OfflineConfig,
    OfflineData,
    SplitConfig,
    StartConfig,
    episode_starts,
    split_secrets,
)
from experiment import Run, RunConfig, batch_metrics
from fidelity import credit_probe
from lm import engine, models
from lm.models import ModelConfig
from lm.warmup import starting_policy
from oracle import OracleConfigError, make_oracle
from policy import SampleConfig
from rollouts import RolloutBatch, episode_seed, play_rollouts
from tools.ranks import setup as ranks_setup
from tools.stats import mean_sem
from update import CompiledLayers, UpdateConfig, ppo_update, sampled_logprobs_are_old, trainable


def train(cfg: TrainConfig) -> dict:
    """One training run: set-up, then each step play -> credit -> update -> log; its summary
    (RUN/summary.json)."""
    check_config(cfg)
    use_threads(cfg.threads)
    ranks = ranks_setup(cfg.device)  # one rank, unless launched by torchrun (tools/ranks.py)
    cfg = replace(cfg, device=ranks.device) if ranks.on else cfg
    torch.manual_seed(cfg.seed)
    game_cfg = settings(GameConfig, cfg)
    update_cfg = settings(UpdateConfig, cfg)
    sample = SampleConfig(cfg.temperature, cfg.top_p, cfg.max_new_tokens)
    with open_run(cfg, ranks, game_cfg) as run:  # run: its directory, logs and checkpoints
        policy = run.initial_policy(settings(ModelConfig, cfg), warmup_config(cfg))  # run
        sampler = engine.sampler(policy, cfg.rollout)  # the policy, or its bf16 copy (lm/engine.py)
        ref_policy = reference_policy(cfg)  # pi_ref of the KL term, or None
        optimizer = adamw(cfg, policy)
        estimator = ESTIMATORS[cfg.estimator]
        ctx = EstimatorContext(cfg.gigpo_step_weight, cfg.gigpo_gamma, ranks.sum)
        start = run.begin(policy, optimizer, ctx)  # run: --resume restores its state
        offline = offline_data(cfg, run, policy, sample, ctx) if not estimator.online else None
        sampled_are_old = sampled_logprobs_are_old(update_cfg, sampler, policy, offline is None)
        update_context = CompiledLayers(policy, on=cfg.compile_update)
        for step in range(start, cfg.steps):
            started = time.time()
            # 1. play: G rollouts of each of B training secrets, sampled from pi_old (section 4)
            if offline is None:
                batch = play(cfg, step, run, sampler, sample)
            else:  # offline: episodes of the fixed dataset instead
                batch = offline.step_batch(step, run.rng, ctx)
            played = time.time()
            # 2. credit: one advantage per turn (Eq. 1 for echo; baselines.py for the others)
            credit = credit_from_batch(batch, game_cfg.n_max)
            advantages = batch.from_grid(estimator.advantages(credit, ctx)).float()  # (N,)
            # 3. update: Eq. 2, at a learning rate annealed linearly to 0 over the run's budget
            lr_now = cfg.lr * max(1 - run.budget_used(step), 0.0) if cfg.anneal_lr else cfg.lr
            optimizer.param_groups[0]["lr"] = lr_now  # one group: the trainable parameters
            row = {"step": step + 1, "train/lr": lr_now}
            row |= batch_metrics(batch, credit, advantages, ranks)
            if cfg.credit_probe and offline is None and (step + 1) % cfg.eval_every == 0:  # run
                seed = cfg.seed * 100_003 + step
                row |= credit_probe(policy, batch, advantages, game_cfg, cfg.credit_probe, seed)
            with update_context:  # the layers compiled for it, where asked (update.CompiledLayers)
                row |= ppo_update(
                    policy,
                    optimizer,
                    batch,
                    advantages,
                    update_cfg=update_cfg,
                    shuffle=run.shuffle,
                    ref_policy=ref_policy,
                    ranks=ranks,
                    sampled_are_old=sampled_are_old,
                )
            engine.refresh(sampler, policy)  # the next batch is sampled from the updated weights
            row["train/seconds_rollout"] = played - started
            row["train/seconds_update"] = time.time() - played
            # 4. log: evaluate, keep the best on validation secrets where asked, save (experiment)
            if run.end_step(step, row, policy, optimizer, ctx, started):
                break  # out of steps, or out of time (time_limit_min)
        return run.finish()


def open_run(cfg: TrainConfig, ranks, game_cfg: GameConfig) -> Run:
    """The run on disk (experiment.Run): its directory, the oracle it plays, its secrets' split,
    and the resolved config it saves (the presets applied first)."""
    train_secrets, validation, heldout = split_secrets(settings(SplitConfig, cfg))
    return Run(
        settings(RunConfig, cfg),
        config={"presets": applied_presets(cfg, PRESETS), **asdict(cfg)},
        ranks=ranks,
        game_cfg=game_cfg,
        oracle=make_oracle(cfg.oracle, cfg.oracle_model, models.cache_dir()),  # no key: fails
        train_secrets=train_secrets,
        validation=validation,
        heldout=heldout,
        kept_on_resume=kept_on_resume(),
    )


def reference_policy(cfg: TrainConfig):
    """pi_ref of Eq. 2's KL term (the initial policy, warmed up as the run's), or None where
    kl_beta is 0 (the paper's)."""
    if cfg.kl_beta == 0:
        return None
    return starting_policy(settings(ModelConfig, cfg), warmup_config(cfg), quiet=True)[0]


def adamw(cfg: TrainConfig, policy) -> torch.optim.AdamW:
    """The optimizer of Eq. 2's steps: AdamW over the trainable parameters, no weight decay."""
    betas = (0.9, cfg.adam_beta2)
    return torch.optim.AdamW(
        trainable(policy), lr=cfg.lr, betas=betas, eps=cfg.adam_eps, weight_decay=0.0
    )


def offline_data(cfg: TrainConfig, run: Run, policy, sample: SampleConfig, ctx) -> OfflineData:
    """The `offline` estimator's fixed dataset, played once by the initial policy."""
    return OfflineData(
        settings(OfflineConfig, cfg),
        run=run,
        policy=policy,
        train_secrets=run.train_secrets,
        sample=sample,
        ctx=ctx,
    )


def play(cfg: TrainConfig, step: int, run: Run, sampler, sample: SampleConfig) -> RolloutBatch:
    """Step 1: G rollouts of each of B training secrets drawn for this step, from the starts
    episodes.episode_starts draws (C_0, h_0); on several ranks this rank's share
    (tools/ranks.py)."""
    ranks = run.ranks
    secrets = run.rng.sample(run.train_secrets, cfg.secrets_per_step)
    universes, starts = episode_starts(
        settings(StartConfig, cfg),
        rng=run.rng,
        secrets=secrets,
        step=step,
        seed=cfg.seed,
        game_cfg=run.game_cfg,
        oracle=run.oracle,
    )
    mine = ranks.share(len(secrets))  # all of them, unless several ranks share the step
    seeds = [episode_seed(cfg.seed, step, b, g) for b in mine for g in range(cfg.group_size)]
    batch = play_rollouts(
        sampler,
        [secrets[b] for b in mine],
        cfg.group_size,
        run.game_cfg,
        sample,
        run.oracle,
        universes=[universes[b] for b in mine],
        starts=starts and [starts[b] for b in mine],
        seeds=seeds,
    )
    batch.first_secret = mine.start
    return batch


def main(argv=None) -> list[dict]:
    cfg = config_from_flags(argv)
    try:
        seeds = [int(s) for s in cfg.seeds.split(",") if s.strip()] if cfg.seeds else [cfg.seed]
    except ValueError:
        message = f"--seeds {cfg.seeds!r} is not a comma-separated list of integers, e.g. 0,1,2."
        fail("train.py", message)
    name = cfg.run_name  # with several seeds, one run each: NAME-seedS
    names = {s: f"{name}-seed{s}" if name and len(seeds) > 1 else name for s in seeds}
    try:
        summaries = [train(replace(cfg, seed=s, run_name=names[s])) for s in seeds]
    except (models.ModelNotFoundError, models.DamagedFileError, OracleConfigError) as e:
        fail("train.py", str(e))
    if len(summaries) > 1:
        nan = float("nan")
        mean, sem = mean_sem([s["final_eval"].get("eval/resolve_rate", nan) for s in summaries])
        n = len(summaries)
        print(f"[{cfg.estimator}] {n} seeds: held-out resolve {mean:.3f} +- {sem:.3f} (SEM)")
    return summaries


if __name__ == "__main__":
    main(sys.argv[1:])
