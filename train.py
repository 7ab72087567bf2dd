"""Train a Clue Selector Game policy with ECHO or a baseline: `python train.py --estimator echo`.

Section 4 of the paper, each step in this order (section 5.1 for the game and the baselines,
App. C "Training Hyperparameters" for the values):

    1. play    B secrets x G rollouts each, sampled from pi_old (rollouts.play_rollouts)
    2. credit  one advantage per turn from the estimator (ESTIMATORS: Eq. 1 for echo)
    3. update  Eq. 2, the clipped objective, in minibatches (update.ppo_update)
    4. log     train/ (the update), clue/ (the batch's play), eval/ (the held-out secrets)

What a research run adds (directory, logs, checkpoints, --resume, the checkpoint kept on
validation secrets, offline data, credit probe, curves) is called at the points marked `# run:`
(experiment.py, fidelity.py); torchrun runs it on several processes (ranks.py). With no flags it
trains the tiny model on 2 CPU cores in minutes; `--model DIR` is written to train
Qwen2.5-1.5B-Instruct in the same loop (the llm preset sets LoRA and lr).

Departures from the paper, and why (update.py lists those of Eq. 2's update):
- A format warm-up (warmup.py) first teaches the JSON action: were every action unreadable,
  Eq. 1 would give no credit.
- The learning rate decays linearly to 0 (CleanRL's anneal_lr).
- It keeps the checkpoint that plays best on training secrets set aside (`validation_secrets` >
  0; experiment.py says why); the paper reports its last. Eq. 1 is taken over the rollouts still
  active at turn t (echo.py says why).
- Rollouts start after 0..3 random questions, a family an arm owns goes unanswered with chance
  0.3, and candidates are written as runs FIRST-LAST (episodes.episode_starts,
  prompts.candidate_text): from the paper's starts one question sequence fits 1..100 and is
  replayed on 1..200. B = 6 for 80 steps: minutes on 2 cores (binary, llm: B = 8). RESULTS.md
  says what chose each of these values.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, fields, replace

from cli import Preset, applied_presets, arg, fail, parse_config, use_threads  # before torch

import torch

import engine
import models
from baselines import ESTIMATORS, EstimatorContext, credit_from_batch
from env import QUESTION_SETS, GameConfig
from episodes import UNIVERSES, episode_starts, split_secrets
from experiment import OfflineData, Run, batch_metrics, check_config
from fidelity import credit_probe
from oracle import OracleConfigError, make_oracle
from policy import SampleConfig
from rollouts import RolloutBatch, episode_seed, play_rollouts
from prompts import CANDIDATE_FORMATS
from ranks import setup as ranks_setup
from stats import mean_sem
from update import CompiledLayers, ppo_update, sampled_logprobs_are_old, trainable
from warmup import starting_policy

WARMUP_MODES = ("auto", "always", "never")


@dataclass
class TrainConfig:
    estimator: str = arg("echo", f"credit assignment: one of {', '.join(ESTIMATORS)}")
    model: str = arg("tiny", "tiny | smollm2 | Hugging Face id on disk | local model directory")
    tiny_layers: int = arg(2, "layers of the built-in tiny model (tinylm.TinyConfig)", at_least=1)
    tiny_width: int = arg(128, "hidden size of the tiny model (32-dim heads, 4x MLP)", at_least=32)
    precision: str = arg(
        "auto",
        "fp32, or bf16 (autocast over float32 trainable weights); auto: bf16 on a GPU, else fp32",
        choices=("auto", "bf16", "fp32"),
    )
    lora_rank: int = arg(0, "LoRA rank; 0: full fine-tuning", at_least=0)
    lora_alpha: int = arg(32, "LoRA alpha (the paper's code: 32)", at_least=1)
    lora_dropout: float = arg(0.05, "LoRA dropout (the paper's code: 0.05)", at_least=0, below=1)
    lora_targets: str = arg(
        "q_proj,k_proj,v_proj,o_proj", "modules LoRA adapts (the paper's code: attention's)"
    )
    gradient_checkpointing: bool = arg(False, "recompute activations in the backward pass")
    warmup: str = arg(
        "auto",
        "warm-up (warmup.py) of a model but tiny: auto (below the threshold)",
        choices=WARMUP_MODES,
    )
    warmup_threshold: float = arg(
        0.9, "valid-action rate below which the warm-up runs", at_least=0, at_most=1
    )
    warmup_episodes: int = arg(300, "random-policy episodes of warm-up data", at_least=1)
    warmup_epochs: int = arg(3, "passes over the warm-up data", at_least=1)
    warmup_lr: float = arg(3e-3, "warm-up learning rate", above=0)
    question_set: str = arg(
        "paper", "paper (every family) or binary (yes/no questions)", choices=QUESTION_SETS
    )
    expected_info: bool = arg(
        False, "r_info: the elimination expected under b_t (not the paper's; env.py)"
    )
    redundancy_penalty: float = arg(
        -0.1, "r_t of a question asked again to the same arm (App. C: -0.1)", at_most=0
    )
    oracle: str = arg("rule", "rule (offline, exact) or llm (OpenAI-compatible, OPENAI_API_KEY)")
    oracle_model: str = arg("gpt-4o-mini", "model of the LLM oracle (paper: gpt-4o-mini, T = 0)")
    steps: int = arg(80, "RL steps (one batch of B x G episodes each)", at_least=1)
    secrets_per_step: int = arg(6, "B: training secrets per step", at_least=1)
    group_size: int = arg(4, "G: rollouts per secret, the group of Eq. 1 (paper: 4)", at_least=2)
    lr: float = arg(5e-4, "AdamW learning rate", above=0)
    ppo_epochs: int = arg(4, "passes of Eq. 2 over each batch", at_least=1)
    num_minibatches: int = arg(4, "optimizer steps per pass (1: Eq. 2 over the batch)", at_least=1)
    micro_batch: int = arg(64, "turns per forward pass (gradients accumulate)", at_least=1)
    clip_eta: float = arg(0.2, "eta of Eq. 2 (paper: the TRL default, 0.2)", above=0)
    ratio_level: str = arg(
        "sequence", "sequence (the paper's rho per action) or token", choices=("sequence", "token")
    )
    kl_beta: float = arg(0.0, "weight of KL to the initial policy (paper: 0)", at_least=0)
    grad_clip: float = arg(0.5, "gradient-norm clip (paper: 0.5)", above=0)
    target_kl: float = arg(
        0.0, "stop a batch's update once KL(pi_old || pi) passes this (0: never)", at_least=0
    )
    adam_beta2: float = arg(
        0.99, "Adam's second-moment decay (PPO practice; torch's: 0.999)", at_least=0, below=1
    )
    adam_eps: float = arg(1e-5, "Adam's epsilon (PPO practice: 1e-5)", above=0)
    anneal_lr: bool = arg(True, "decay the learning rate linearly to 0 over the run")
    temperature: float = arg(1.0, "sampling temperature of the rollouts (paper: 1.0)", above=0)
    top_p: float = arg(0.9, "top-p of the rollouts (paper: 0.9)", above=0, at_most=1)
    max_new_tokens: int = arg(64, "longest action, in tokens (paper: 64)", at_least=1)
    n_max: int = arg(100, "secrets are 1..n_max (paper: 100 for training)", at_least=2)
    n_heldout: int = arg(20, "secrets of 1..n_max held out for evaluation", at_least=1)
    split_seed: int = arg(
        0, "seed of the held-out split and the validation secrets (episodes.py)", at_least=0
    )
    universe: str = arg(
        "full",
        "C_0 of a training secret: full (1..n_max, the paper's) or random (episodes.py)",
        choices=("full", *UNIVERSES),
    )
    universe_least: int = arg(2, "the fewest numbers a random universe holds", at_least=1)
    universe_share: float = arg(
        1.0, "share of a step's secrets whose universe is random", at_least=0, at_most=1
    )
    prefix_turns: int = arg(
        3, "K: rollouts start after 0..K random questions (0: the paper)", at_least=0
    )
    refusal_rate: float = arg(
        0.3, "chance an arm's family goes unanswered (0: the paper)", at_least=0, at_most=1
    )
    hidden_share: float = arg(
        0.0, "share of secrets whose prompts leave C_t out (0: the paper)", at_least=0, at_most=1
    )
    candidate_format: str = arg(
        "runs", "how prompts write C_t (prompts.candidate_text)", choices=CANDIDATE_FORMATS
    )
    eval_every: int = arg(5, "evaluate on the held-out secrets every this many steps", at_least=1)
    eval_samples: int = arg(
        4, "sampled episodes per held-out secret beside greedy (0: none)", at_least=0
    )
    credit_probe: int = arg(
        32, "turns whose credit is set against A_B at each evaluation (0: off)", at_least=0
    )
    save_every: int = arg(5, "checkpoint every this many steps (and at the end)", at_least=1)
    offline_episodes: int = arg(512, "offline: episodes played once by pi_0", at_least=1)
    offline_sft_fraction: float = arg(
        0.3, "offline: share of steps spent on filtered SFT first", at_least=0, at_most=1
    )
    gigpo_step_weight: float = arg(
        1.0, "gigpo: weight of the step-level advantage (GiGPO's default)", at_least=0
    )
    gigpo_gamma: float = arg(
        0.95, "gigpo: discount of the step-level return (GiGPO's)", at_least=0, at_most=1
    )
    seed: int = arg(0, "seed of secrets, sampling and minibatch order", at_least=0)
    seeds: str = arg("", "comma-separated seeds: one run per seed (overrides --seed)")
    out: str = arg("runs", "runs go to OUT/RUN_NAME (-2, -3, ... if taken)", writes="directory")
    run_name: str = arg("", "default: ESTIMATOR-QUESTION_SET-seedSEED")
    resume: bool = arg(False, "continue the latest run of RUN_NAME from its last checkpoint")
    time_limit_min: float = arg(
        0.0, "stop after the step that passes this many minutes (0: none)", at_least=0
    )
    validation_secrets: int = arg(
        0, "training secrets set aside to choose the kept checkpoint (0: the last)", at_least=0
    )
    validation_window: int = arg(
        3, "evaluations in a row whose mean validation score chooses it", at_least=1
    )
    rollout: str = arg(
        "auto",
        "what samples: eager (policy.py) or fast (engine.py); auto: fast on CUDA",
        choices=("auto", "eager", "fast"),
    )
    old_logprobs: str = arg(
        "auto",
        "pi_old of Eq. 2: auto or recompute (update.old_logprobs)",
        choices=("auto", "recompute"),
    )
    compile_update: bool = arg(False, "torch.compile the layers for Eq. 2's passes (engine.py)")
    behaviour_is_cap: float = arg(
        0.0, "C: Eq. 2's terms times min(C, pi_old / pi_copy) (0: off)", at_least=0
    )
    device: str = arg("", "cpu | cuda; default: cuda if there is one")
    threads: int = arg(0, "torch threads on a CPU (0: every core; cli.use_threads)", at_least=0)


# The tiny model's defaults on the paper's set, above; presets change a few, and a flag the user
# gives wins (cli.parse_config).
PRESETS = {
    "llm": Preset(
        "--model is not tiny (the paper's code: LoRA r16 on q/k/v/o, lr 5e-6; the paper's "
        "episodes and B; 2 passes of Eq. 2 and top-p 1: the tiny model's were chosen for it alone)",
        lambda c: c.model != "tiny",
        dict(
            lora_rank=16,
            lr=5e-6,
            micro_batch=16,
            warmup_episodes=64,
            warmup_epochs=1,
            warmup_lr=5e-4,
            ppo_epochs=2,
            prefix_turns=0,
            refusal_rate=0.0,
            candidate_format="list",
            secrets_per_step=8,
            top_p=1.0,
        ),
    ),
    "llm-full": Preset(
        "--model is not tiny and --lora-rank 0 (full fine-tuning)",
        lambda c: c.model != "tiny" and c.lora_rank == 0,
        dict(lr=1e-6, warmup_lr=1e-5),
    ),
    "binary": Preset(
        "--question-set binary (G, the checkpoint rule: split 1's validation secrets, "
        "bench/binary_defaults.py; Eq. 2's passes: split 0's held-out scores; all chosen with the "
        "paper's episode starts and list; 200 steps are a budget, and top-p 1 and B = 8 the "
        "defaults of the time, neither compared on this set)",
        lambda c: c.question_set == "binary",
        dict(
            steps=200,
            ppo_epochs=4,
            group_size=8,
            validation_secrets=10,
            validation_window=5,
            top_p=1.0,
            prefix_turns=0,
            refusal_rate=0.0,
            candidate_format="list",
            secrets_per_step=8,
        ),
    ),
}


def config_from_flags(argv=None, prog: str | None = None) -> TrainConfig:
    """The run's config: the flags given, the presets that apply for the rest, the defaults."""
    doc = __doc__.splitlines()[0]
    return parse_config(TrainConfig, argv, description=doc, prog=prog, presets=PRESETS)


def game_config(cfg: TrainConfig) -> GameConfig:
    """The game's settings, as the run's config gives them (every field of GameConfig it has)."""
    return GameConfig(
        **{f.name: getattr(cfg, f.name) for f in fields(GameConfig) if hasattr(cfg, f.name)}
    )


def train(cfg: TrainConfig) -> dict:
    """One training run: set-up, then each step play -> credit -> update -> log; its summary
    (RUN/summary.json)."""
    check_config(cfg)
    use_threads(cfg.threads)
    ranks = ranks_setup(cfg.device)  # one rank, unless launched by torchrun (ranks.py)
    cfg = replace(cfg, device=ranks.device) if ranks.on else cfg
    torch.manual_seed(cfg.seed)
    game_cfg, (train_secrets, validation, heldout) = game_config(cfg), split_secrets(cfg)
    oracle = make_oracle(cfg.oracle, cfg.oracle_model, models.cache_dir())  # a missing key fails
    presets = applied_presets(cfg, PRESETS)
    with Run(cfg, ranks, presets, game_cfg, oracle, validation, heldout) as run:  # run: its dir
        policy = run.initial_policy()  # run: warmed up, or the checkpoint --resume continues
        sampler = engine.sampler(policy, cfg.rollout)  # the policy, or its bf16 copy (engine.py)
        ref_policy = starting_policy(cfg, quiet=True)[0] if cfg.kl_beta > 0 else None  # pi_ref
        betas, wd = (0.9, cfg.adam_beta2), 0.0
        optimizer = torch.optim.AdamW(
            trainable(policy), lr=cfg.lr, betas=betas, eps=cfg.adam_eps, weight_decay=wd
        )
        estimator = ESTIMATORS[cfg.estimator]
        ctx = EstimatorContext(cfg.gigpo_step_weight, cfg.gigpo_gamma, ranks.sum)
        start = run.begin(policy, optimizer, ctx, len(train_secrets))  # run: --resume restores
        sample = SampleConfig(cfg.temperature, cfg.top_p, cfg.max_new_tokens)
        offline = None if estimator.online else OfflineData(run, policy, train_secrets, sample, ctx)
        sampled_are_old = sampled_logprobs_are_old(cfg, sampler, policy, offline is None)
        update_context = CompiledLayers(policy, on=cfg.compile_update)
        for step in range(start, cfg.steps):
            started = time.time()
            # 1. play: G rollouts of each of B training secrets, sampled from pi_old (section 4)
            if offline is None:
                batch = play(step, run, sampler, train_secrets, sample)
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
            with update_context:  # the layers compiled for it, where asked (engine.py)
                args = (batch, advantages, cfg, run.shuffle, ref_policy, ranks, sampled_are_old)
                row |= ppo_update(policy, optimizer, *args)
            engine.refresh(sampler, policy)  # the next batch is sampled from the updated weights
            row["train/seconds_rollout"] = played - started
            row["train/seconds_update"] = time.time() - played
            # 4. log: evaluate, keep the best checkpoint on validation secrets, save (experiment)
            if run.end_step(step, row, policy, optimizer, ctx, started):
                break  # out of steps, or out of time (time_limit_min)
        return run.finish()


def play(step: int, run: Run, sampler, train_secrets: list, sample: SampleConfig) -> RolloutBatch:
    """Step 1: G rollouts of each of B training secrets drawn for this step, from the starts
    episodes.episode_starts draws (C_0, h_0); on several ranks this rank's share (ranks.py)."""
    cfg, ranks = run.cfg, run.ranks
    secrets = run.rng.sample(train_secrets, cfg.secrets_per_step)
    universes, starts = episode_starts(cfg, run.rng, secrets, step, run.game_cfg, run.oracle)
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
