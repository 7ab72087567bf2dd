"""Train a Clue Selector Game policy with ECHO or a baseline: `python train.py --estimator echo`.

Section 4 of the paper, each step in this order (section 5.1 for the game and the baselines,
App. C "Training Hyperparameters" for the values):

    1. play    B secrets x G rollouts each, sampled from pi_old (policy.play_rollouts)
    2. credit  one advantage per turn from the estimator (ESTIMATORS: Eq. 1 for echo)
    3. update  Eq. 2, the clipped objective (echo.clipped_objective), in minibatches
    4. log     train/ (the update), clue/ (the batch's play), eval/ (the held-out secrets)

What a research run adds (directory, logs, checkpoints, --resume, the checkpoint kept on validation secrets, offline
data, credit probe, curves) is called at the points marked `# run:` (experiment.py, fidelity.py); torchrun runs it on
several processes (ranks.py). With no flags it trains the tiny model on 2 CPU cores in minutes; `--model DIR` trains
Qwen2.5-1.5B-Instruct in the same loop (presets set LoRA and lr).

Departures from the paper, and why:
- A format warm-up (warmup.py) first teaches the JSON action: were all unreadable, Eq. 1 would give no credit.
- Eq. 2 runs `ppo_epochs` passes, `num_minibatches` optimizer steps each (PPO); one step was unstable. 4 passes,
  with the paper's top-p 0.9, were chosen on split 0's held-out secrets and on 201..300 (RESULTS.md reports others).
- Adam's beta2 is 0.99, eps 1e-5 (PPO practice), the lr decays linearly to 0 (CleanRL's anneal_lr), and a step
  whose gradient is not finite is skipped and counted (one would make every weight NaN).
- It keeps the checkpoint that plays best on training secrets set aside (`validation_secrets` > 0; experiment.py
  says why); the paper reports its last. Eq. 1 is taken over the rollouts still active at turn t (echo.py says why).
- Rollouts start after 0..3 random questions, a family an arm owns goes unanswered with chance 0.3, candidates are
  runs FIRST-LAST (experiment.episode_starts, env.candidate_text): from the paper's starts one question sequence fits
  1..100 and is replayed on 1..200 (RESULTS.md). B = 6 for 80 steps: minutes on 2 cores (binary, llm: B = 8).
- pi_old is scored again by the update's padded passes (first ratio exactly 1) unless the trained model sampled in
  float32 (sampled_logprobs_are_old). On a GPU a bf16 copy samples (engine.py); their gap is logged per token and action.
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass, fields, replace

from cli import (
    Preset,
    applied_presets,
    arg,
    fail,
    parse_config,
    use_threads,
)  # before torch: how idle threads wait

import torch

import engine
import models
from baselines import ESTIMATORS, EstimatorContext, credit_from_batch
from echo import approx_kl, behaviour_weights, clipped_objective
from env import CANDIDATE_FORMATS, QUESTION_SETS, UNIVERSES, GameConfig
from experiment import (
    OfflineData,
    Run,
    batch_metrics,
    check_config,
    episode_starts,
    load_policy,
    split_secrets,
)
from fidelity import credit_probe
from oracle import OracleConfigError, make_oracle
from policy import RolloutBatch, SampleConfig, episode_seed, play_rollouts
from ranks import Ranks, setup as ranks_setup
from stats import mean_sem


@dataclass
class TrainConfig:
    estimator: str = arg("echo", f"credit assignment: one of {', '.join(ESTIMATORS)}")
    model: str = arg("tiny", "tiny | smollm2 | Hugging Face id on disk | local model directory")
    tiny_layers: int = arg(2, "layers of the built-in tiny model (tinylm.TinyConfig)", at_least=1)
    tiny_width: int = arg(
        128, "hidden size of the built-in tiny model (heads of 32 dims, MLP 4x wider)", at_least=32
    )
    precision: str = arg(
        "auto",
        "fp32, or bf16 (autocast over float32 trainable weights); auto: bf16 on a GPU, fp32 on a CPU",
        choices=("auto", "bf16", "fp32"),
    )
    lora_rank: int = arg(0, "LoRA rank; 0: full fine-tuning", at_least=0)
    lora_alpha: int = arg(32, "LoRA alpha (the paper's code: 32)", at_least=1)
    lora_dropout: float = arg(0.05, "LoRA dropout (the paper's code: 0.05)", at_least=0, below=1)
    lora_targets: str = arg(
        "q_proj,k_proj,v_proj,o_proj",
        "modules LoRA adapts (the paper's code: the attention projections)",
    )
    gradient_checkpointing: bool = arg(
        False, "recompute activations in the backward pass (long prompts, big models)"
    )
    warmup: str = arg(
        "auto",
        "warm-up (warmup.py) of a model but tiny: auto (below --warmup-threshold), always, never",
        choices=("auto", "always", "never"),
    )
    warmup_threshold: float = arg(
        0.9, "valid-action rate (probe states) below which the warm-up runs", at_least=0, at_most=1
    )
    warmup_episodes: int = arg(300, "random-policy episodes of warm-up data", at_least=1)
    warmup_epochs: int = arg(3, "passes over the warm-up data", at_least=1)
    warmup_lr: float = arg(3e-3, "warm-up learning rate", above=0)
    question_set: str = arg(
        "paper", "paper (every family) or binary (yes/no questions only)", choices=QUESTION_SETS
    )
    expected_info: bool = arg(
        False,
        "r_info is the elimination expected under the belief b_t, not the realised one "
        "(not in the paper; env.expected_elimination)",
    )
    redundancy_penalty: float = arg(
        -0.1, "r_t of a question asked again to the same arm (App. C: -0.1)", at_most=0
    )
    oracle: str = arg("rule", "rule (offline, exact) or llm (OpenAI-compatible, OPENAI_API_KEY)")
    oracle_model: str = arg("gpt-4o-mini", "model of the LLM oracle (paper: gpt-4o-mini, T = 0)")
    steps: int = arg(80, "RL steps (one batch of B x G episodes each)", at_least=1)
    secrets_per_step: int = arg(6, "B: training secrets per step", at_least=1)
    group_size: int = arg(
        4,
        "G: rollouts per secret, the group of Eq. 1 (paper: 4; one alone has nothing to compare with)",
        at_least=2,
    )
    lr: float = arg(5e-4, "AdamW learning rate", above=0)
    ppo_epochs: int = arg(4, "passes of Eq. 2 over each batch", at_least=1)
    num_minibatches: int = arg(
        4, "optimizer steps per pass (1: exactly Eq. 2 over the whole batch)", at_least=1
    )
    micro_batch: int = arg(
        64, "turns per forward pass (memory and speed; gradients accumulate)", at_least=1
    )
    clip_eta: float = arg(0.2, "eta of Eq. 2 (paper: the TRL default, 0.2)", above=0)
    ratio_level: str = arg(
        "sequence", "sequence (the paper's rho per action) or token", choices=("sequence", "token")
    )
    kl_beta: float = arg(0.0, "weight of KL to the initial policy (paper: 0)", at_least=0)
    grad_clip: float = arg(0.5, "gradient-norm clip (paper: 0.5)", above=0)
    target_kl: float = arg(
        0.0,
        "stop a batch's updates once KL(pi_old || pi) per action exceeds this (0: never)",
        at_least=0,
    )
    adam_beta2: float = arg(
        0.99,
        "Adam's second-moment decay (0.99 reacts to gradient spikes; torch's 0.999)",
        at_least=0,
        below=1,
    )
    adam_eps: float = arg(
        1e-5,
        "Adam's epsilon (PPO practice: 1e-5, so near-zero gradients take near-zero steps)",
        above=0,
    )
    anneal_lr: bool = arg(True, "decay the learning rate linearly to 0 over the run (PPO practice)")
    temperature: float = arg(1.0, "sampling temperature of the rollouts (paper: 1.0)", above=0)
    top_p: float = arg(
        0.9, "top-p of the rollouts (paper: 0.9); log-probs are scored under it", above=0, at_most=1
    )
    max_new_tokens: int = arg(64, "longest action, in tokens (paper: 64)", at_least=1)
    n_max: int = arg(100, "secrets are 1..n_max (paper: 100 for training)", at_least=2)
    n_heldout: int = arg(
        20, "secrets of 1..n_max held out for evaluation (env.secret_split)", at_least=1
    )
    split_seed: int = arg(
        0,
        "seed of the held-out split (env.secret_split) and of the validation secrets carved from "
        "the rest; evaluate.py --split-seed reads the same split",
        at_least=0,
    )
    universe: str = arg(
        "full",
        "a training secret's candidate universe C_0: full (1..n_max, the paper), interval, "
        "subset or class (env.UNIVERSES; experiment.episode_starts)",
        choices=("full", *UNIVERSES),
    )
    universe_least: int = arg(2, "the fewest numbers a random universe holds", at_least=1)
    universe_share: float = arg(
        1.0, "share of a step's secrets whose universe is random", at_least=0, at_most=1
    )
    prefix_turns: int = arg(
        3,
        "K: a secret's rollouts start after 0..K turns of random questions (0: the paper)",
        at_least=0,
    )
    refusal_rate: float = arg(
        0.3,
        "chance that each family an arm owns (env.ARM_FAMILIES) goes unanswered in a training "
        "secret's episodes, unseen until asked (0: never, the paper)",
        at_least=0,
        at_most=1,
    )
    hidden_share: float = arg(
        0.0,
        "share of training secrets whose prompts leave out the candidates (0: the paper)",
        at_least=0,
        at_most=1,
    )
    candidate_format: str = arg(
        "runs",
        "how prompts write the candidates: list (App. B), runs (3+ consecutive numbers as "
        "FIRST-LAST) or padded (runs, numbers in 3 digits; env.candidate_text)",
        choices=CANDIDATE_FORMATS,
    )
    eval_every: int = arg(5, "evaluation on the held-out secrets every this many steps", at_least=1)
    eval_samples: int = arg(
        4,
        "sampled episodes (T = 1) per held-out secret at an evaluation, beside greedy (0: none)",
        at_least=0,
    )
    credit_probe: int = arg(
        32,
        "turns whose credit is set against the one-step A_B at each evaluation (0: off)",
        at_least=0,
    )
    save_every: int = arg(5, "checkpoint every this many steps (and at the end)", at_least=1)
    offline_episodes: int = arg(
        512, "offline: episodes collected once from the initial policy", at_least=1
    )
    offline_sft_fraction: float = arg(
        0.3, "offline: share of steps spent on filtered SFT first", at_least=0, at_most=1
    )
    gigpo_step_weight: float = arg(
        1.0, "gigpo: weight of the step-level advantage (GiGPO's published default, 1)", at_least=0
    )
    gigpo_gamma: float = arg(
        0.95,
        "gigpo: discount of the step-level return-to-go (GiGPO's ALFWorld setting, 0.95)",
        at_least=0,
        at_most=1,
    )
    seed: int = arg(0, "seed of secrets, sampling and minibatch order", at_least=0)
    seeds: str = arg("", "comma-separated seeds: one run per seed (overrides --seed)")
    out: str = arg(
        "runs",
        "runs are written to OUT/RUN_NAME (OUT/RUN_NAME-2, -3, ... if it is taken)",
        writes="directory",
    )
    run_name: str = arg("", "default: ESTIMATOR-QUESTION_SET-seedSEED")
    resume: bool = arg(False, "continue the latest run of RUN_NAME from its last checkpoint")
    time_limit_min: float = arg(
        0.0,
        "stop after the step that passes this many minutes (0: no limit); the learning "
        "rate then anneals over whichever of steps and time runs out first",
        at_least=0,
    )
    validation_secrets: int = arg(
        0,
        "training secrets set aside to choose the checkpoint the run keeps: the one that "
        "plays best on them is kept as RUN/best and evaluated on the held-out secrets at "
        "the end (0: keep the last)",
        at_least=0,
    )
    validation_window: int = arg(
        3,
        "'plays best': the best mean validation score over this many evaluations in a "
        "row (the best single one of a run's noisy evaluations is mostly luck)",
        at_least=1,
    )
    rollout: str = arg(
        "auto",
        "what samples: eager (the trained model, policy.py's decoder) or fast (engine.py: a bf16 "
        "copy, LoRA folded in, a static KV cache, compiled on CUDA); auto: fast on CUDA",
        choices=("auto", "eager", "fast"),
    )
    old_logprobs: str = arg(
        "auto",
        "pi_old of Eq. 2. auto: the log-probs the tokens were sampled with, where they are "
        "pi_old's own (train.sampled_logprobs_are_old), else a scoring pass over the batch "
        "before the update; recompute: that pass always",
        choices=("auto", "recompute"),
    )
    compile_update: bool = arg(
        False,
        "torch.compile the trained model's decoder layers for Eq. 2's passes "
        "(engine.CompiledLayers; its GPU speed is not measured yet)",
    )
    behaviour_is_cap: float = arg(
        0.0,
        "C: each action's Eq. 2 term times min(C, pi_old / pi_rollout_copy) (0: off)",
        at_least=0,
    )
    device: str = arg("", "cpu | cuda; default: cuda if there is one")
    threads: int = arg(
        0,
        "torch threads on a CPU (0: every core this process may use; cli.use_threads)",
        at_least=0,
    )


# The tiny model's defaults on the paper's set, above; presets change a few, a given flag wins (cli.parse_config).
PRESETS = {
    "llm": Preset(
        "--model is not tiny (the paper's code: LoRA r16 on q/k/v/o, lr 5e-6; the paper's episodes and B; "
        "2 passes of Eq. 2 and top-p 1: the tiny model's were chosen for it alone)",
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
        "--question-set binary (G, the checkpoint rule: split 1's validation secrets, bench/binary_defaults.py; "
        "Eq. 2's passes: split 0's held-out scores; all chosen with the paper's episode starts and list)",
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
    return parse_config(
        TrainConfig, argv, description=__doc__.splitlines()[0], prog=prog, presets=PRESETS
    )


def game_config(cfg: TrainConfig) -> GameConfig:
    return GameConfig(
        **{f.name: getattr(cfg, f.name) for f in fields(GameConfig) if hasattr(cfg, f.name)}
    )  # the ones set here


def old_logprobs(
    policy,
    ref_policy,
    batch: RolloutBatch,
    micro: list,
    cfg: TrainConfig,
    sampled_are_old: bool = False,
) -> tuple[list, list, tuple, dict]:
    """log pi_old (and log pi_ref) of every action token, (tokens,) per turn, scored with the update's
    padded passes (Eq. 2's first ratio exactly 1), or the sampled ones where `sampled_are_old`; and
    how far the sampled log-probs are from them, per token and per action (largest; sums for means)."""
    P, C = batch.prompt_ids, batch.completion_ids
    b_logprobs, b_ref_logprobs = [None] * len(P), [None] * len(P)
    if sampled_are_old:
        b_logprobs = [
            torch.tensor(lp, dtype=torch.float32, device=policy.device) for lp in batch.logprobs
        ]
    with torch.no_grad():
        for mb in [m for m in micro if m]:
            for store, pol in (
                (b_logprobs, None if sampled_are_old else policy),
                (b_ref_logprobs, ref_policy),
            ):
                if pol is not None:
                    logp = pol.score(
                        [P[i] for i in mb], [C[i] for i in mb], cfg.temperature, cfg.top_p
                    )[0]
                    for row, i in enumerate(mb):
                        store[i] = logp[row, : len(C[i])]
    per_token = [
        b_logprobs[i].cpu().double() - torch.tensor(batch.logprobs[i], dtype=torch.float64)
        for i in range(len(P))
    ]
    gaps = torch.cat(per_token).abs()
    per_action = torch.stack(
        [d.sum() for d in per_token]
    ).abs()  # |log pi_old(a|h) - log pi_sampler(a|h)|: rho's
    return (
        b_logprobs,
        b_ref_logprobs,
        (gaps.max().item(), per_action.max().item()),
        {
            "drift": gaps.sum().item(),
            "drift_tokens": len(gaps),
            "action_drift": per_action.sum().item(),
            "actions": len(per_action),
        },
    )


def sampled_logprobs_are_old(cfg: TrainConfig, sampler, policy, online: bool) -> bool:
    """Whether a batch's sampled log-probs are pi_old's: played now (not offline data), by the trained
    model itself (not engine.py's bf16 copy), in float32. Sampling (a KV-cached decode) and scoring (a
    padded pass) then differ by rounding, ~1e-6 a token; the pass saved is ~1/10 of a CPU step."""
    return (
        cfg.old_logprobs == "auto" and online and sampler is policy and policy.compute_dtype is None
    )


def ppo_update(
    policy,
    optimizer,
    batch: RolloutBatch,
    advantages: torch.Tensor,
    cfg: TrainConfig,
    shuffle: torch.Generator,
    ref_policy=None,
    ranks: Ranks = Ranks(),
    sampled_are_old: bool = False,
) -> dict:
    """Eq. 2: `ppo_epochs` passes over the batch's turns, `num_minibatches` optimizer steps each.
    advantages: (N,) one per turn of `batch`, in play order. On several ranks `batch` is this
    rank's share and each minibatch spans every rank's turns (ranks.py). sampled_are_old: pi_old is
    the batch's sampled log-probs (`sampled_logprobs_are_old`). Returns train/ metrics."""
    P, C = batch.prompt_ids, batch.completion_ids
    micro, sizes = batch.micro_batches(
        cfg.micro_batch, ranks
    )  # turns per forward pass; minibatches are made of these
    b_logprobs, b_ref_logprobs, gap, drift = old_logprobs(
        policy, ref_policy, batch, micro, cfg, sampled_are_old
    )
    b_advantages, params = (
        advantages.to(policy.device),
        [p for p in policy.model.parameters() if p.requires_grad],
    )
    if (
        cfg.behaviour_is_cap > 0
    ):  # sampled from the rollout copy, not pi_old (engine.py): truncated importance weights
        b_advantages = b_advantages * behaviour_weights(
            b_logprobs, batch.logprobs, cfg.behaviour_is_cap
        ).to(policy.device)
    padded = lambda per_turn, mb: torch.nn.utils.rnn.pad_sequence(
        [per_turn[i] for i in mb], batch_first=True
    )  # noqa: E731
    # A turn of advantage 0 adds exactly 0 to Eq. 2 and its gradient: with no KL term to score it for, it is skipped
    # (n_terms still counts it), but not where pi_old was scored: those passes must stay the update's, for rho = 1.
    live = (
        (b_advantages != 0).tolist()
        if ref_policy is None and cfg.target_kl == 0 and sampled_are_old
        else [True] * len(P)
    )
    sums = (
        dict.fromkeys(["clipped", "ratio_sum", "terms", "kl_ref", "loss"], 0.0) | drift
    )  # over the update
    grad_norms, kl_old, first_logratio_max, ratio_max, early_stop, skipped = (
        [],
        0.0,
        0.0,
        0.0,
        False,
        0,
    )
    policy.model.train()
    for epoch in range(cfg.ppo_epochs):
        order = torch.randperm(
            len(micro), generator=shuffle
        ).tolist()  # chunks to minibatches, anew each pass
        for mb_chunks in [order[k :: cfg.num_minibatches] for k in range(cfg.num_minibatches)]:
            n_terms = sum(
                sizes[j] for j in mb_chunks
            )  # Eq. 2's 1 / sum_t |G_t|, over this minibatch
            if n_terms == 0:
                continue
            optimizer.zero_grad(set_to_none=True)
            kl_sum, mb_loss = torch.zeros(1, dtype=torch.float64), 0.0
            for mb in [m for m in ([i for i in micro[j] if live[i]] for j in mb_chunks) if m]:
                newlogprob, mask = policy.score(
                    [P[i] for i in mb], [C[i] for i in mb], cfg.temperature, cfg.top_p
                )
                oldlogprob = padded(b_logprobs, mb)
                objective, stats = clipped_objective(
                    newlogprob,
                    oldlogprob,
                    mask,
                    b_advantages[mb],
                    cfg.clip_eta,
                    n_terms,
                    cfg.ratio_level,
                )
                loss = -objective
                logratio = (
                    newlogprob.detach() - oldlogprob
                ) * mask  # log pi - log pi_old per token
                kl_sum += approx_kl(logratio, mask).sum().item()  # KL(pi_old || pi)
                if ref_policy is not None:  # + kl_beta KL(pi || pi_ref)
                    kl_ref = (
                        approx_kl(padded(b_ref_logprobs, mb) - newlogprob, mask).sum() / n_terms
                    )
                    loss, sums["kl_ref"] = (
                        loss + cfg.kl_beta * kl_ref,
                        sums["kl_ref"] + kl_ref.item() * n_terms,
                    )
                loss.backward()
                mb_loss += loss.item()
                if (
                    epoch == 0 and not grad_norms
                ):  # before the first optimizer step rho is 1 (to rounding, where pi_old was sampled)
                    first_logratio_max = max(
                        first_logratio_max, float(logratio.sum(-1).abs().max())
                    )
                sums.update({k: sums[k] + stats[k] for k in ("clipped", "ratio_sum", "terms")})
                ratio_max = max(ratio_max, stats["ratio_max"])
            kl_old = ranks.sum(kl_sum).item() / n_terms
            if cfg.target_kl > 0 and kl_old > cfg.target_kl:
                early_stop = True  # pi has moved far enough from pi_old on this batch
                break
            if all(
                p.grad is None for p in params
            ):  # nothing scored (every advantage 0): Adam steps on zeros
                for p in params:
                    p.grad = torch.zeros_like(p)
            ranks.sum_gradients(
                params
            )  # every rank's share of the minibatch: the same step everywhere
            grad_norm = float(torch.nn.utils.clip_grad_norm_(params, cfg.grad_clip))
            if not math.isfinite(
                grad_norm
            ):  # one such step would make every weight NaN: skip it, count it
                skipped += 1
                continue
            grad_norms.append(grad_norm)
            optimizer.step()
            sums["loss"] += mb_loss
        if early_stop:
            break
    policy.model.eval()
    sums = dict(
        zip(sums, ranks.sum(torch.tensor(list(sums.values()), dtype=torch.float64)).tolist())
    )
    n, steps = max(sums["terms"], 1), len(grad_norms)
    return {
        "train/loss": sums["loss"] / steps if steps else math.nan,
        "train/clip_fraction": sums["clipped"] / n,
        "train/ratio_mean": sums["ratio_sum"] / sums["terms"] if sums["terms"] else math.nan,
        "train/ratio_max": ranks.max(ratio_max),
        "train/kl": kl_old,
        "train/kl_ref": sums["kl_ref"] / n,
        "train/optimizer_steps": steps,
        "train/nonfinite_steps_skipped": skipped,
        "train/early_stop": float(early_stop),
        "train/grad_norm": sum(grad_norms) / steps if steps else math.nan,
        "train/first_step_log_ratio_max": ranks.max(first_logratio_max),
        "train/behaviour_logprob_gap": ranks.max(gap[0]),
        "train/behaviour_logprob_drift": sums["drift"] / max(sums["drift_tokens"], 1),
        "train/behaviour_action_log_ratio_max_abs": ranks.max(gap[1]),
        "train/behaviour_action_log_ratio_mean_abs": sums["action_drift"] / max(sums["actions"], 1),
    }


def train(cfg: TrainConfig) -> dict:
    """One training run: set-up, then each step play -> credit -> update -> log; its summary (RUN/summary.json)."""
    check_config(cfg)
    use_threads(cfg.threads)
    ranks = ranks_setup(cfg.device)  # one rank, unless launched by torchrun (ranks.py)
    cfg = replace(cfg, device=ranks.device) if ranks.on else cfg
    torch.manual_seed(cfg.seed)
    game_cfg = game_config(cfg)
    train_secrets, validation, heldout = split_secrets(cfg)
    oracle = make_oracle(
        cfg.oracle, cfg.oracle_model, models.cache_dir()
    )  # an LLM oracle without a key fails here
    with Run(
        cfg, ranks, applied_presets(cfg, PRESETS), game_cfg, oracle, validation, heldout
    ) as run:  # run: its directory
        policy = run.initial_policy()  # run: warmed up, or the checkpoint --resume continues
        sampler = engine.sampler(
            policy, cfg.rollout
        )  # what plays: the policy, or its bf16 copy (engine.py)
        ref_policy = (
            load_policy(cfg, quiet=True)[0] if cfg.kl_beta > 0 else None
        )  # the initial policy, for kl_beta
        optimizer = torch.optim.AdamW(
            [p for p in policy.model.parameters() if p.requires_grad],
            lr=cfg.lr,
            betas=(0.9, cfg.adam_beta2),
            eps=cfg.adam_eps,
            weight_decay=0.0,
        )
        estimator, ctx = (
            ESTIMATORS[cfg.estimator],
            EstimatorContext(cfg.gigpo_step_weight, cfg.gigpo_gamma, ranks.sum),
        )
        start = run.begin(
            policy, optimizer, ctx, len(train_secrets)
        )  # run: --resume restores the state
        sample = SampleConfig(cfg.temperature, cfg.top_p, cfg.max_new_tokens)
        offline = (
            None
            if estimator.online
            else OfflineData(cfg, run.dir, policy, train_secrets, game_cfg, sample, oracle, ranks)
        )
        ctx.turn_stats = offline.turn_stats if offline else None
        sampled_are_old = sampled_logprobs_are_old(cfg, sampler, policy, offline is None)
        update_context = engine.CompiledLayers(policy, on=cfg.compile_update)
        for step in range(start, cfg.steps):
            started = time.time()
            # 1. play: G rollouts of each of B training secrets, sampled from pi_old (section 4)
            if offline is None:
                secrets = run.rng.sample(train_secrets, cfg.secrets_per_step)
                universes, starts = episode_starts(
                    cfg, run.rng, secrets, step, game_cfg, oracle
                )  # run: C_0, h_0
                mine = ranks.share(len(secrets))  # all of them, unless several ranks share the step
                batch = play_rollouts(
                    sampler,
                    [secrets[b] for b in mine],
                    cfg.group_size,
                    game_cfg,
                    sample,
                    oracle,
                    universes=[universes[b] for b in mine],
                    starts=starts and [starts[b] for b in mine],
                    seeds=[
                        episode_seed(cfg.seed, step, b, g)
                        for b in mine
                        for g in range(cfg.group_size)
                    ],
                )
                batch.first_secret = mine.start
            else:  # offline: episodes of the fixed dataset instead
                ctx.phase = "sft" if step < cfg.offline_sft_fraction * cfg.steps else "rl"
                batch = offline.sample(
                    run.rng, cfg.secrets_per_step * cfg.group_size // ranks.world
                )
            played = time.time()
            # 2. credit: one advantage per turn (Eq. 1 for echo; baselines.py for the others)
            credit = credit_from_batch(batch, game_cfg.n_max)
            advantages = batch.from_grid(
                estimator.advantages(credit, ctx)
            ).float()  # (B, G, T) -> (N,) in play order
            # 3. update: Eq. 2, at a learning rate annealed linearly to 0 over the run's budget
            lr_now = cfg.lr * max(1 - run.budget_used(step), 0.0) if cfg.anneal_lr else cfg.lr
            optimizer.param_groups[0]["lr"] = lr_now  # one group: the trainable parameters
            row = {
                "step": step + 1,
                "train/lr": lr_now,
                **batch_metrics(batch, credit, advantages, ranks),
            }
            if (
                cfg.credit_probe > 0 and offline is None and (step + 1) % cfg.eval_every == 0
            ):  # run: under pi_old
                row.update(
                    credit_probe(
                        policy,
                        batch,
                        advantages,
                        game_cfg,
                        cfg.credit_probe,
                        cfg.seed * 100_003 + step,
                    )
                )
            with update_context:  # the layers compiled for it, where asked (engine.py)
                row.update(
                    ppo_update(
                        policy,
                        optimizer,
                        batch,
                        advantages,
                        cfg,
                        run.shuffle,
                        ref_policy,
                        ranks,
                        sampled_are_old,
                    )
                )
            engine.refresh(sampler, policy)  # the next batch is sampled from the updated weights
            row.update(
                {
                    "train/seconds_rollout": played - started,
                    "train/seconds_update": time.time() - played,
                }
            )
            # 4. log: evaluate, keep the best checkpoint on the validation secrets, save (run: experiment.py)
            if run.end_step(step, row, policy, optimizer, ctx, started):
                break  # out of steps, or out of time (time_limit_min)
        return run.finish()


def main(argv=None) -> list[dict]:
    cfg = config_from_flags(argv)
    try:
        seeds = [int(s) for s in cfg.seeds.split(",") if s.strip()] if cfg.seeds else [cfg.seed]
    except ValueError:
        fail(
            "train.py",
            f"--seeds {cfg.seeds!r} is not a comma-separated list of integers, e.g. 0,1,2.",
        )
    name = lambda s: (
        (f"{cfg.run_name}-seed{s}" if len(seeds) > 1 else cfg.run_name) if cfg.run_name else ""
    )  # noqa: E731
    try:
        summaries = [train(replace(cfg, seed=s, run_name=name(s))) for s in seeds]
    except (models.ModelNotFoundError, models.DamagedFileError, OracleConfigError) as e:
        fail("train.py", str(e))
    if len(summaries) > 1:
        mean, sem = mean_sem(
            [s["final_eval"].get("eval/resolve_rate", float("nan")) for s in summaries]
        )
        print(
            f"[{cfg.estimator}] {len(summaries)} seeds: held-out resolve {mean:.3f} +- {sem:.3f} (SEM)"
        )
    return summaries


if __name__ == "__main__":
    main(sys.argv[1:])
