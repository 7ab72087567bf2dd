"""Train a Clue Selector Game policy with ECHO or a baseline: `python train.py --estimator echo`.

Paper: section 4 (ECHO, Eq. 1 and Eq. 2), section 5.1 (CSG, baselines), App. C "Training
Hyperparameters" (KL beta = 0, gradient-norm clip 0.5, the TRL default clip range 0.2, sampling
at temperature 1.0) and the training metrics of tab:metric_definitions (App. C).

The loop, in the order things happen each step:
    1. play   B secrets x G rollouts with pi_old (policy.rollout), or, for `offline`, draw the
              same number of episodes from a dataset collected once at step 0
    2. credit one advantage per turn from the estimator (baselines.ESTIMATORS; echo = Eq. 1)
    3. update `ppo_epochs` passes of Eq. 2 over the batch; log pi_old is recomputed under the
              pre-update weights with the same padded passes, so the first step's ratio is 1
    4. log    train/ (optimisation), clue/ (the batch's game behaviour), eval/ (greedy play of
              the held-out secrets every `eval_every` steps); checkpoint atomically

With no flags it trains the built-in tiny model on 2 CPU cores in minutes (warm-up included);
`--model Qwen/Qwen2.5-1.5B-Instruct` (on disk) trains the paper's model with the same code.
"""
from __future__ import annotations

import json
import math
import random
import shutil
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

from cli import arg, fail, parse_config, save_config, use_threads  # before torch: it sets how idle threads wait

import torch

import baselines
import fidelity
import models
from baselines import ESTIMATORS, Credit, credit_from_rollout, episode_returns, turn_stats
from echo import approx_kl, clipped_objective
from env import GameConfig, play, secret_split
from metrics import run_metrics, training_metrics
from oracle import OracleConfigError, make_oracle
from policy import Rollout, SampleConfig, rollout
from ranks import Ranks, finish as ranks_finish, setup as ranks_setup
from stats import mean_sem
from tinylm import TinyConfig
from warmup import WarmupConfig, prepared


@dataclass
class TrainConfig:
    estimator: str = arg("echo", f"credit assignment: one of {', '.join(ESTIMATORS)}")
    model: str = arg("tiny", "tiny | smollm2 | Hugging Face id on disk | local model directory")
    tiny_layers: int = arg(2, "layers of the built-in tiny model (tinylm.TinyConfig)")
    tiny_width: int = arg(128, "hidden size of the built-in tiny model (heads of 32 dims, MLP 4x wider)")
    precision: str = arg("auto", "fp32, or bf16 (autocast over float32 trainable weights); auto: bf16 on a GPU, fp32 on a CPU")
    lora_rank: int = arg(-1, "LoRA rank, 0 = full fine-tuning; -1: 0 for the tiny model, 16 otherwise (the paper's code)")
    lora_alpha: int = arg(32, "LoRA alpha (the paper's code: 32)")
    lora_dropout: float = arg(0.05, "LoRA dropout (the paper's code: 0.05)")
    lora_targets: str = arg("q_proj,k_proj,v_proj,o_proj", "modules LoRA adapts (the paper's code: the attention projections)")
    gradient_checkpointing: bool = arg(False, "recompute activations in the backward pass (long prompts, big models)")
    warmup: str = arg("auto", "format warm-up (warmup.py): auto (when the valid-action rate is below --warmup-threshold), "
                              "always, or never")
    warmup_threshold: float = arg(0.9, "valid-action rate on the probe states below which the warm-up runs")
    warmup_episodes: int = arg(-1, "random-policy episodes of warm-up data; -1: 300 for the tiny model, 64 otherwise")
    warmup_epochs: int = arg(-1, "passes over the warm-up data; -1: 3 for the tiny model, 1 otherwise")
    warmup_lr: float = arg(-1.0, "warm-up learning rate; -1: 3e-3 (tiny), 5e-4 (LoRA), 1e-5 (full fine-tuning)")
    question_set: str = arg("paper", "paper (every family) or binary (yes/no questions only)")
    expected_info: bool = arg(False, "r_info is the elimination expected under the belief b_t, not the realised one "
                                     "(not in the paper; env.expected_elimination)")
    oracle: str = arg("rule", "rule (offline, exact) or llm (OpenAI-compatible, OPENAI_API_KEY)")
    oracle_model: str = arg("gpt-4o-mini", "model of the LLM oracle (paper: gpt-4o-mini, T = 0)")
    steps: int = arg(-1, "RL steps (one batch of B x G episodes each); -1: 40 (paper set), 400 (binary set)")
    secrets_per_step: int = arg(8, "B: training secrets per step")
    group_size: int = arg(-1, "G: rollouts per secret, the group of Eq. 1; -1: 4 (paper set: the paper's), 8 (binary set)")
    lr: float = arg(-1.0, "AdamW learning rate; -1: 5e-4 (tiny), 5e-6 (LoRA: the paper's code), 1e-6 (full fine-tuning)")
    ppo_epochs: int = arg(-1, "passes of Eq. 2 over each batch; -1: 2 (paper set), 4 (binary set)")
    num_minibatches: int = arg(4, "optimizer steps per pass (1: exactly Eq. 2 over the whole batch)")
    micro_batch: int = arg(-1, "turns per forward pass (memory and speed; gradients accumulate); -1: 64 tiny, 16 otherwise")
    clip_eta: float = arg(0.2, "eta of Eq. 2 (paper: the TRL default, 0.2)")
    ratio_level: str = arg("sequence", "sequence (the paper's rho per action) or token")
    kl_beta: float = arg(0.0, "weight of KL to the initial policy (paper: 0)")
    grad_clip: float = arg(0.5, "gradient-norm clip (paper: 0.5)")
    target_kl: float = arg(0.0, "stop a batch's updates once KL(pi_old || pi) per action exceeds this (0: never)")
    adam_beta2: float = arg(0.99, "Adam's second-moment decay (0.99 reacts to gradient spikes; torch default 0.999)")
    adam_eps: float = arg(1e-5, "Adam's epsilon (PPO practice: 1e-5, so near-zero gradients take near-zero steps)")
    anneal_lr: bool = arg(True, "decay the learning rate linearly to 0 over `steps` (PPO practice)")
    temperature: float = arg(1.0, "sampling temperature of the rollouts (paper: 1.0)")
    top_p: float = arg(1.0, "top-p of the rollouts (paper: 0.9); log-probs are scored under it")
    max_new_tokens: int = arg(64, "longest action, in tokens (paper: 64)")
    n_max: int = arg(100, "secrets are 1..n_max (paper: 100 for training)")
    n_heldout: int = arg(20, "secrets of 1..n_max held out for evaluation (env.secret_split)")
    eval_every: int = arg(5, "evaluation on the held-out secrets every this many steps")
    eval_samples: int = arg(4, "sampled episodes (T = 1) per held-out secret at each evaluation, beside greedy (0: greedy only)")
    credit_probe: int = arg(32, "at each evaluation, turns of the batch whose credit is set against the one-step "
                                "Bayesian advantage (train/credit_onestep_corr; fidelity.py; 0: off)")
    save_every: int = arg(5, "checkpoint every this many steps (and at the end)")
    offline_episodes: int = arg(512, "offline: episodes collected once from the initial policy")
    offline_sft_fraction: float = arg(0.3, "offline: share of steps spent on filtered SFT first")
    gigpo_step_weight: float = arg(1.0, "gigpo: weight of the step-level advantage (GiGPO's published default, 1)")
    gigpo_gamma: float = arg(0.95, "gigpo: discount of the step-level return-to-go (GiGPO's ALFWorld setting, 0.95)")
    seed: int = arg(0, "seed of secrets, sampling and minibatch order")
    seeds: str = arg("", "comma-separated seeds: one run per seed (overrides --seed)")
    out: str = arg("runs", "runs are written to OUT/RUN_NAME")
    run_name: str = arg("", "default: ESTIMATOR-QUESTION_SET-seedSEED")
    resume: bool = arg(False, "continue RUN_NAME from its last checkpoint")
    time_limit_min: float = arg(-1.0, "stop after the step that passes this many minutes (0: none; -1: none on the "
                                      "paper set, 60 on the binary set); the learning rate then anneals over "
                                      "whichever of steps and time runs out first")
    validation_secrets: int = arg(-1, "training secrets set aside to choose the checkpoint the run keeps: the one that "
                                     "plays best on them (greedy and sampled resolve) is kept as RUN/best and "
                                     "evaluated on the held-out secrets at the end (0: keep the last; -1: 0 on the "
                                     "paper set, 10 on the binary set)")
    validation_window: int = arg(3, "'plays best': the best mean validation score over this many evaluations in a "
                                    "row (the best single one of a run's noisy evaluations is mostly luck)")
    device: str = arg("", "cpu | cuda | '' (auto)")
    threads: int = arg(0, "torch threads on a CPU (0: every core this process may use; cli.use_threads)")


def with_defaults(cfg: TrainConfig) -> TrainConfig:
    """The config with every -1 ("per kind of model" or "per question set") resolved: what the run
    saves and uses. The binary set's defaults were settled in bench/results/binary_explore.md, its G in
    reproduce_binary_60min_g8.md."""
    tiny, binary = cfg.model == "tiny", cfg.question_set == "binary"
    lora_rank = cfg.lora_rank if cfg.lora_rank >= 0 else (0 if tiny else 16)
    return replace(cfg, lora_rank=lora_rank,
                   steps=cfg.steps if cfg.steps > 0 else 400 if binary else 40,
                   ppo_epochs=cfg.ppo_epochs if cfg.ppo_epochs > 0 else 4 if binary else 2,
                   group_size=cfg.group_size if cfg.group_size >= 0 else 8 if binary else 4,
                   time_limit_min=cfg.time_limit_min if cfg.time_limit_min >= 0 else 60 if binary else 0,
                   validation_secrets=cfg.validation_secrets if cfg.validation_secrets >= 0 else 10 if binary else 0,
                   lr=cfg.lr if cfg.lr > 0 else 5e-4 if tiny else 5e-6 if lora_rank else 1e-6,
                   micro_batch=cfg.micro_batch if cfg.micro_batch > 0 else 64 if tiny else 16,
                   warmup_episodes=cfg.warmup_episodes if cfg.warmup_episodes > 0 else 300 if tiny else 64,
                   warmup_epochs=cfg.warmup_epochs if cfg.warmup_epochs > 0 else 3 if tiny else 1,
                   warmup_lr=cfg.warmup_lr if cfg.warmup_lr > 0 else 3e-3 if tiny else 5e-4 if lora_rank else 1e-5)


def game_config(cfg: TrainConfig) -> GameConfig:
    return GameConfig(n_max=cfg.n_max, question_set=cfg.question_set, expected_info=cfg.expected_info)


def check_config(cfg: TrainConfig) -> None:
    """Fail at once, with one sentence, on settings that cannot work."""
    n_train = cfg.n_max - cfg.n_heldout
    try:
        game_config(cfg)
    except ValueError as e:
        fail("train.py", f"{e}.")
    problems = [
        (cfg.estimator not in ESTIMATORS, f"unknown estimator {cfg.estimator!r}; choose one of {', '.join(ESTIMATORS)}"),
        (cfg.group_size < 2, f"group_size is {cfg.group_size}: group-relative credit needs G >= 2 rollouts per secret"),
        (cfg.secrets_per_step < 1 or cfg.steps < 1, "secrets_per_step and steps must be at least 1"),
        (not 0 < cfg.n_heldout < cfg.n_max, f"n_heldout must be between 1 and n_max - 1 = {cfg.n_max - 1}"),
        (cfg.secrets_per_step > n_train - cfg.validation_secrets,
         f"secrets_per_step {cfg.secrets_per_step} exceeds the {n_train - cfg.validation_secrets} training secrets"),
        (cfg.ratio_level not in ("sequence", "token"), "ratio_level must be sequence or token"),
        (not 0 < cfg.top_p <= 1 or cfg.temperature <= 0, "need 0 < top_p <= 1 and temperature > 0"),
        (cfg.ppo_epochs < 1 or cfg.num_minibatches < 1 or cfg.micro_batch == 0, "ppo_epochs, num_minibatches, micro_batch must be >= 1"),
        (cfg.validation_window < 1, "validation_window must be at least 1"),
        (cfg.precision not in ("auto", "bf16", "fp32"), "precision must be auto, bf16 or fp32"),
        (cfg.warmup not in ("auto", "always", "never"), "warmup must be auto, always or never"),
    ]
    for bad, message in problems:
        if bad:
            fail("train.py", f"{message}.")


def episode_seed(seed: int, step: int, secret: int, rollout: int) -> int:
    """The sampling seed of one rollout: a function of (run seed, step, secret index, rollout),
    so a run plays the same episodes however its secrets are batched or shared out to ranks."""
    return hash((seed, step, secret, rollout)) & (2**63 - 1)


def micro_batches(batch: Rollout, size: int, ranks: Ranks) -> tuple[list[list[int]], list[int]]:
    """The batch's turns in chunks of at most `size` for the forward passes: sorted so that
    lengths are alike within a chunk, which keeps padding small, and equal prompts sit side by
    side, so a chunk runs each of its prompts once. The chunks are also the units dealt out to
    Eq. 2's minibatches. On several ranks they are cut from every rank's turns together (the sort
    keys are gathered), each rank keeping its own turns of each chunk, so the cut is the same
    whatever the number of ranks. Returns (this rank's turns of each chunk, each chunk's size)."""
    P, C = batch.prompt_ids, batch.completion_ids
    b, g, t = (x.tolist() for x in batch.cells())
    keys = [(len(P[i]), hash(tuple(P[i])), len(C[i]), batch.first_secret + b[i], g[i], t[i], ranks.rank, i)
            for i in range(len(P))]
    keys = sorted(ranks.gather(keys))                       # every rank's turns, in one order
    chunks = [keys[k:k + size] for k in range(0, len(keys), size)]
    return [[key[-1] for key in chunk if key[-2] == ranks.rank] for chunk in chunks], [len(c) for c in chunks]


def ppo_update(policy, opt, batch: Rollout, advantages: torch.Tensor, cfg: TrainConfig,
               gen: torch.Generator, ref_policy=None, ranks: Ranks = Ranks()) -> dict:
    """`ppo_epochs` passes of Eq. 2 over the batch's turns, `num_minibatches` optimizer steps each.

    advantages: (N,) one per turn of `batch`, in play order. With several ranks, `batch` is this
    rank's share and Eq. 2 runs over every rank's turns (ranks.py).
    """
    P, C = batch.prompt_ids, batch.completion_ids
    micro, sizes = micro_batches(batch, cfg.micro_batch, ranks)
    score = lambda pol, m: pol.score([P[i] for i in m], [C[i] for i in m], cfg.temperature, cfg.top_p)  # noqa: E731
    rows = lambda per_turn, m: torch.nn.utils.rnn.pad_sequence([per_turn[i] for i in m], batch_first=True)  # noqa: E731
    b_logprobs, b_ref_logprobs = [None] * len(P), [None] * len(P)      # per turn: (tokens,)
    with torch.no_grad():   # pi_old: the same passes as the updates', so the first ratio is exactly 1
        for m in [m for m in micro if m]:
            for store, pol in ((b_logprobs, policy), (b_ref_logprobs, ref_policy)):
                if pol is not None:
                    logp = score(pol, m)[0]
                    for row, i in enumerate(m):
                        store[i] = logp[row, :len(C[i])]
    # pi_old recomputed vs the log-probs recorded while sampling: they agree unless sampling and
    # scoring compute differently (other kernels or precision), which would bias every ratio.
    gap = max((b_logprobs[i].cpu() - torch.tensor(batch.logprobs[i])).abs().max().item() for i in range(len(P)))
    b_advantages = advantages.to(policy.device)
    params = [p for p in policy.model.parameters() if p.requires_grad]
    stats = torch.zeros(5, dtype=torch.float64)     # clip fraction, ratio sum, terms, KL to the reference, loss
    grad_norms, approx_kl_old, first_log_ratio_max, ratio_max, stopped, skipped = [], 0.0, 0.0, 0.0, False, 0
    policy.model.train()
    for epoch in range(cfg.ppo_epochs):
        perm = torch.randperm(len(micro), generator=gen).tolist()     # each epoch, chunks to minibatches at random
        for chunks in [perm[k::cfg.num_minibatches] for k in range(cfg.num_minibatches)]:
            n_terms = sum(sizes[j] for j in chunks)   # Eq. 2: divide by the (rollout, turn) terms of the minibatch
            if n_terms == 0:
                continue
            opt.zero_grad(set_to_none=True)
            kl_sum, minibatch_loss = torch.zeros(1, dtype=torch.float64), 0.0
            for m in [micro[j] for j in chunks if micro[j]]:
                newlogprob, mask = score(policy, m)
                oldlogprob = rows(b_logprobs, m)
                objective, st = clipped_objective(newlogprob, oldlogprob, mask, b_advantages[m],
                                                  cfg.clip_eta, n_terms, cfg.ratio_level)
                loss = -objective
                log_ratio = (newlogprob.detach() - oldlogprob) * mask                 # log pi / pi_old per token
                kl_sum += approx_kl(log_ratio, mask).sum().item()                    # KL(pi_old || pi)
                if ref_policy is not None:
                    kl_ref = approx_kl(rows(b_ref_logprobs, m) - newlogprob, mask).sum() / n_terms  # KL(pi || pi_ref)
                    loss = loss + cfg.kl_beta * kl_ref
                    stats[3] += kl_ref.item() * n_terms
                loss.backward()
                minibatch_loss += loss.item()
                if epoch == 0 and not grad_norms:   # the first optimizer step: rho must be exactly 1
                    first_log_ratio_max = max(first_log_ratio_max, float(log_ratio.sum(-1).abs().max()))
                stats[:3] += torch.tensor([st["clip_fraction"], st["ratio_sum"], st["terms"]], dtype=torch.float64)
                ratio_max = max(ratio_max, st["ratio_max"])
            approx_kl_old = ranks.sum(kl_sum).item() / n_terms
            if cfg.target_kl > 0 and approx_kl_old > cfg.target_kl:
                stopped = True    # pi has moved far enough from pi_old on this batch: no more steps
                break
            ranks.sum_gradients(params)    # every rank's share of the minibatch: the same step everywhere
            grad_norm = float(torch.nn.utils.clip_grad_norm_(params, cfg.grad_clip))
            if not math.isfinite(grad_norm):   # one such step would make every weight NaN: skip it, count it
                skipped += 1
                continue
            grad_norms.append(grad_norm)
            opt.step()
            stats[4] += minibatch_loss
        if stopped:
            break
    policy.model.eval()
    clip_fraction, ratio_sum, terms, kl_ref, loss = ranks.sum(stats).tolist()
    n = max(terms, 1)
    mean = lambda xs: sum(xs) / len(xs) if xs else float("nan")  # noqa: E731
    return {"train/loss": loss / len(grad_norms) if grad_norms else float("nan"),
            "train/clip_fraction": clip_fraction / n, "train/ratio_mean": ratio_sum / n,
            "train/ratio_max": ranks.max(ratio_max), "train/kl": approx_kl_old, "train/kl_ref": kl_ref / n,
            "train/optimizer_steps": len(grad_norms), "train/nonfinite_steps_skipped": skipped,
            "train/early_stop": float(stopped),
            "train/grad_norm": mean(grad_norms), "train/first_step_log_ratio_max": ranks.max(first_log_ratio_max),
            "train/behaviour_logprob_gap": ranks.max(gap)}


def batch_metrics(batch: Rollout, credit: Credit, advantages: torch.Tensor, ranks: Ranks = Ranks()) -> dict:
    """clue/ behaviour of the training batch (metrics.training_metrics) plus credit diagnostics;
    with several ranks, of every rank's share together."""
    played = credit.active.any(-1)                                          # (B, G): rollouts in the batch
    returns = episode_returns(credit)
    stds = [returns[b][played[b]].std().item() for b in range(len(returns)) if played[b].sum() > 1]
    rows, episodes, entropy, stds, advantages = (ranks.gather(x) for x in (
        [r.as_dict() for r in batch.records], batch.episodes, batch.entropy, stds, advantages.abs().tolist()))
    out = {f"clue/{k}": v for k, v in training_metrics(rows, episodes, batch.max_turns).items()}
    out["train/group_return_std"] = sum(stds) / len(stds) if stds else 0.0  # near 0: the group collapsed
    out["train/entropy"] = sum(entropy) / len(entropy)
    out["train/advantage_abs_mean"] = sum(advantages) / len(advantages)
    return out


def credit_probe(policy, batch: Rollout, advantages: torch.Tensor, game_cfg: GameConfig, n: int, seed: int) -> dict:
    """A cheap look at the credit's quality (fidelity.py measures it fully): on n turns of the
    batch, the correlation of this estimator's advantages with the one-step Bayesian advantage
    A1_B = E_{z ~ b_t}[r_t(a_t)] - E_{a' ~ pi} E_{z ~ b_t}[r_t(a')], exact over C_t, 3 a' each."""
    rng = random.Random(seed)
    picks = sorted(rng.sample(range(len(batch.records)), min(n, len(batch.records))))
    games, actions = fidelity.states_and_alternatives(batch, picks, policy, game_cfg, 3,
                                                      torch.Generator(policy.device).manual_seed(seed))
    a1 = torch.tensor(fidelity.onestep_advantages(games, actions, game_cfg), dtype=torch.float64)
    return {"train/credit_onestep_corr": fidelity.pearson(advantages[picks].double().cpu(), a1)}


def evaluate_heldout(policy, secrets, game_cfg: GameConfig, oracle, samples: int, seed: int) -> dict:
    """The held-out secrets, played two ways. Greedy (one episode per secret): eval/ metrics,
    the paper's Table 1 columns among them. Sampled at T = 1 as in training (`samples`
    episodes per secret, as the paper's evaluation samples): eval/sampled_resolve_rate and its
    standard error over secrets, which does not flip between 0 and 1 the way a greedy policy
    that repeats one question can (the paper evaluated its trained models sampling)."""
    game = play(policy, secrets, game_cfg, oracle)
    episodes = [[r.as_dict() for r in e.records] for e in game.episodes]
    summaries = [game.episode_summary(i) for i in range(len(secrets))]
    out = {f"eval/{k}": v for k, v in training_metrics([r for ep in episodes for r in ep], summaries,
                                                        game_cfg.max_turns).items()}
    out.update({f"eval/{k}": v for k, v in run_metrics(episodes).items()})
    if samples > 0:
        sampled = rollout(policy, secrets, samples, game_cfg, SampleConfig(), oracle,
                          torch.Generator(policy.device).manual_seed(seed))
        per_secret = torch.tensor([e["resolved"] for e in sampled.episodes], dtype=torch.float64).view(len(secrets), samples)
        out["eval/sampled_resolve_rate"], out["eval/sampled_resolve_sem"] = mean_sem(per_secret.mean(1).tolist())
        out["eval/sampled_episode_length"] = sum(e["turns_taken"] for e in sampled.episodes) / len(sampled.episodes)
    return out


class OfflineData:
    """The `offline` estimator's fixed dataset: episodes played once by the initial policy."""

    def __init__(self, data: Rollout, n_max: int):
        self.data = data
        self.turns_of = {}                         # episode -> its turns' indices in data
        for i, r in enumerate(data.records):
            self.turns_of.setdefault(r.episode, []).append(i)
        self.turn_stats = turn_stats(credit_from_rollout(data, n_max))

    def sample(self, rng: random.Random, n_episodes: int) -> Rollout:
        chosen = sorted(rng.sample(sorted(self.turns_of), min(n_episodes, len(self.turns_of))))
        d = self.data
        turns = [i for e in chosen for i in self.turns_of[e]]
        summaries = {s["episode"]: s for s in d.episodes}
        return Rollout(secrets=d.secrets, group_size=d.group_size, max_turns=d.max_turns,
                       prompt_ids=[d.prompt_ids[i] for i in turns], completion_ids=[d.completion_ids[i] for i in turns],
                       logprobs=[d.logprobs[i] for i in turns], entropy=[d.entropy[i] for i in turns],
                       records=[d.records[i] for i in turns], beliefs=[d.beliefs[i] for i in turns],
                       episodes=[summaries[e] for e in chosen])


def offline_dataset(cfg: TrainConfig, run_dir: Path, policy, train_secrets, game_cfg, sample, oracle,
                    ranks: Ranks) -> OfflineData:
    """Collected from the initial policy, once, and kept with the run (so --resume reuses it).
    With several ranks each collects and samples its share of the secrets (its dataset is per
    rank); the per-turn reward statistics are taken over every rank's data together."""
    path = run_dir / (f"offline_dataset-rank{ranks.rank}.pt" if ranks.on else "offline_dataset.pt")
    if path.exists():
        data = torch.load(path, weights_only=False)
    else:
        rng = random.Random(cfg.seed + 10_000)
        secrets = [rng.choice(train_secrets) for _ in range(max(cfg.offline_episodes // cfg.group_size, 1))]
        mine = ranks.share(len(secrets))
        data = rollout(policy, [secrets[b] for b in mine], cfg.group_size, game_cfg, sample, oracle,
                       seeds=[episode_seed(cfg.seed + 10_000, 0, b, g) for b in mine for g in range(cfg.group_size)])
        torch.save(data, path)
    return OfflineData(data, game_cfg.n_max)


def save_checkpoint(run_dir: Path, step: int, policy, opt, state: dict, rngs: dict, cfg: TrainConfig) -> None:
    """Write run_dir/checkpoint atomically: a crash mid-write never leaves a broken checkpoint."""
    tmp, final, old = run_dir / "checkpoint.tmp", run_dir / "checkpoint", run_dir / "checkpoint.old"
    shutil.rmtree(tmp, ignore_errors=True)
    policy.save(tmp)
    rng_states = {"python": rngs["python"].getstate(), "shuffle": rngs["shuffle"].get_state()}
    torch.save({"step": step, "optimizer": opt.state_dict(), "estimator_state": state, "rngs": rng_states},
               tmp / "trainer_state.pt")
    save_config(cfg, tmp / "train_config.json")
    if final.exists():
        final.rename(old)
    tmp.rename(final)
    shutil.rmtree(old, ignore_errors=True)


def resume(run_dir: Path, opt, rngs: dict) -> tuple[int, dict, list]:
    """Restore the optimizer, the estimator's state and the random streams from the checkpoint.
    Returns (steps done, estimator state, metric rows up to it)."""
    saved = torch.load(run_dir / "checkpoint" / "trainer_state.pt", weights_only=False)
    opt.load_state_dict(saved["optimizer"])
    rngs["python"].setstate(saved["rngs"]["python"])
    rngs["shuffle"].set_state(saved["rngs"]["shuffle"])
    rows = [json.loads(line) for line in open(run_dir / "metrics.jsonl")][:saved["step"]]  # later steps are redone
    return saved["step"], saved["estimator_state"], rows


def plot_curves(rows: list[dict], path: Path, title: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    keys = ["clue/reward", "clue/episode_resolve_rate", "eval/sampled_resolve_rate", "eval/resolve_rate", "clue/eliminated_mean",
            "clue/redundancy_rate", "clue/arm_match_rate", "train/entropy", "train/clip_fraction"]
    fig, axes = plt.subplots(3, 3, figsize=(14, 9.5))
    for ax, key in zip(axes.flat, keys):
        pts = [(r["step"], r[key]) for r in rows if key in r and r[key] == r[key]]
        if pts:
            ax.plot(*zip(*pts), marker="o" if key.startswith("eval/") else None, ms=3)
        ax.set_title(key, fontsize=9)
        ax.set_xlabel("step")
        ax.grid(alpha=0.3)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_logs(run_dir: Path, rows: list[dict]) -> None:
    with open(run_dir / "metrics.jsonl", "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    keys = sorted({k for r in rows for k in r}, key=lambda k: (k != "step", k))
    with open(run_dir / "metrics.csv", "w") as f:
        f.write(",".join(keys) + "\n")
        for r in rows:
            f.write(",".join("" if r.get(k) is None else str(r.get(k)) for k in keys) + "\n")


def progress(cfg, step: int, seconds: list, row: dict) -> str:
    done = step + 1
    per = sum(seconds[-5:]) / len(seconds[-5:])
    eta = per * (cfg.steps - done)
    bar = "#" * int(20 * done / cfg.steps) + "." * (20 - int(20 * done / cfg.steps))
    ev = (f"  eval resolve {row['eval/resolve_rate']:.2f} greedy, {row.get('eval/sampled_resolve_rate', float('nan')):.2f} sampled"
          if "eval/resolve_rate" in row else "")
    return (f"[{cfg.run_name}] step {done}/{cfg.steps} |{bar}| {per:.1f} s/step, ETA {int(eta // 60)}m{int(eta % 60):02d}s"
            f"  reward {row['clue/reward']:.3f}  resolve {row['clue/episode_resolve_rate']:.2f}"
            f"  len {row['clue/episode_length']:.1f}{ev}")


def tiny_config(cfg: TrainConfig) -> TinyConfig:
    return TinyConfig(hidden_size=cfg.tiny_width, num_layers=cfg.tiny_layers, num_heads=max(1, cfg.tiny_width // 32),
                      intermediate_size=4 * cfg.tiny_width)


def prepare_policy(spec: str, cfg: TrainConfig, quiet: bool = False):
    """(policy, warm-up info): the model in the run's precision, with LoRA adapters if asked,
    after the format warm-up where it needs one (warmup.prepared; cached)."""
    lora = models.LoraConfig(cfg.lora_rank, cfg.lora_alpha, cfg.lora_dropout, cfg.lora_targets) if cfg.lora_rank else None
    warm = WarmupConfig(episodes=cfg.warmup_episodes, epochs=cfg.warmup_epochs, lr=cfg.warmup_lr,
                        n_max=cfg.n_max, batch_size=32 if spec == "tiny" else cfg.micro_batch)
    policy, info = prepared(spec, cfg.question_set, warm, cfg.device or None, quiet, tiny_config(cfg), lora,
                            cfg.precision, "always" if spec == "tiny" else cfg.warmup, cfg.warmup_threshold)
    if cfg.gradient_checkpointing:
        policy.model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    frozen_dtypes = {p.dtype for p in policy.model.parameters() if p.requires_grad} - {torch.float32}
    if frozen_dtypes:   # no optimizer steps low-precision weights: its small updates would round away
        raise RuntimeError(f"trainable parameters in {frozen_dtypes}: they must be float32")
    return policy, info


def train(cfg: TrainConfig) -> dict:
    """One training run; returns its summary (also written to run_dir/summary.json)."""
    cfg = with_defaults(replace(cfg, run_name=cfg.run_name or f"{cfg.estimator}-{cfg.question_set}-seed{cfg.seed}"))
    check_config(cfg)
    lr = cfg.lr
    run_dir = Path(cfg.out) / cfg.run_name
    if run_dir.exists() and not cfg.resume and any(run_dir.iterdir()):
        fail("train.py", f"{run_dir} already exists: pass --resume to continue it, or choose another --run-name.")
    if cfg.resume and not (run_dir / "checkpoint" / "trainer_state.pt").exists():
        fail("train.py", f"there is nothing to resume in {run_dir}: it has no checkpoint, so start it without --resume.")
    use_threads(cfg.threads)
    ranks = ranks_setup(cfg.device)        # one rank, unless launched by torchrun (ranks.py)
    if ranks.on:
        cfg = replace(cfg, device=ranks.device)
        baselines.SUM_ACROSS_RANKS = ranks.sum   # estimator state fitted on the whole batch (PBRS)
    torch.manual_seed(cfg.seed)
    game_cfg = game_config(cfg)
    train_secrets, heldout = secret_split(cfg.n_max, cfg.n_heldout)
    validation = sorted(random.Random(12345).sample(train_secrets, cfg.validation_secrets))   # never trained on
    train_secrets = [s for s in train_secrets if s not in set(validation)]
    # What a user can get wrong fails here, before anything is written: an LLM oracle without a
    # key, a model that is not on disk.
    oracle = make_oracle(cfg.oracle, cfg.oracle_model, models.cache_dir())
    estimator = ESTIMATORS[cfg.estimator]
    if not ranks.main:
        ranks.barrier()    # rank 0 builds any warm-up cache first, the others then read it
    if cfg.resume:   # the checkpoint: the whole model, or a LoRA adapter and the base it names
        policy, warm_info = models.load_policy(str(run_dir / "checkpoint"), cfg.device or None, cfg.precision), {}
    else:
        policy, warm_info = prepare_policy(cfg.model, cfg, quiet=not ranks.main)
    ref_policy = prepare_policy(cfg.model, cfg, quiet=True)[0] if cfg.kl_beta > 0 else None
    if ranks.main:
        ranks.barrier()
        run_dir.mkdir(parents=True, exist_ok=True)   # the run starts
        save_config(cfg, run_dir / "train_config.json")
        if warm_info:
            (run_dir / "warmup.json").write_text(json.dumps(warm_info, indent=2))
    opt = torch.optim.AdamW([p for p in policy.model.parameters() if p.requires_grad], lr=lr,
                            betas=(0.9, cfg.adam_beta2), eps=cfg.adam_eps, weight_decay=0.0)
    rngs = {"python": random.Random(cfg.seed), "shuffle": torch.Generator().manual_seed(cfg.seed)}
    start, state, rows = resume(run_dir, opt, rngs) if cfg.resume else (0, {}, [])
    state.update(gigpo_step_weight=cfg.gigpo_step_weight, gigpo_gamma=cfg.gigpo_gamma)   # estimator settings
    sample = SampleConfig(cfg.temperature, cfg.top_p, cfg.max_new_tokens)
    offline = None
    if not estimator.online:
        offline = offline_dataset(cfg, run_dir, policy, train_secrets, game_cfg, sample, oracle, ranks)
        state["turn_stats"] = offline.turn_stats
    say = print if ranks.main else (lambda *a, **k: None)
    say(f"[{cfg.run_name}] {cfg.estimator} on {policy.name}, {cfg.question_set} questions, "
        f"{cfg.steps} steps x {cfg.secrets_per_step} secrets x {cfg.group_size} rollouts, lr {lr:g}; "
        f"{len(train_secrets)} training / {len(heldout)} held-out secrets -> {run_dir}"
        + (f"; {ranks.world} ranks" if ranks.on else ""), flush=True)
    seconds, started = [], time.time()
    for step in range(start, cfg.steps):
        t0 = time.time()
        # 1. play
        if offline is None:
            secrets = rngs["python"].sample(train_secrets, cfg.secrets_per_step)
            mine = ranks.share(len(secrets))     # all of them, unless several ranks share the step
            batch = rollout(policy, [secrets[b] for b in mine], cfg.group_size, game_cfg, sample, oracle,
                            seeds=[episode_seed(cfg.seed, step, b, g) for b in mine for g in range(cfg.group_size)])
            batch.first_secret = mine.start
        else:
            state["phase"] = "sft" if step < cfg.offline_sft_fraction * cfg.steps else "rl"
            batch = offline.sample(rngs["python"], cfg.secrets_per_step * cfg.group_size // ranks.world)
        t_played = time.time()
        # 2. credit
        credit = credit_from_rollout(batch, game_cfg.n_max)
        advantages = batch.from_grid(estimator.advantages(credit, state)).float()   # (N,) in play order
        # 3. update, the learning rate annealed linearly to 0 over `steps` (as CleanRL's PPO) or constant
        done = max(step / cfg.steps, (time.time() - started) / 60 / cfg.time_limit_min if cfg.time_limit_min else 0)
        lr_now = lr * max(1 - done, 0.0) if cfg.anneal_lr else lr
        for param_group in opt.param_groups:
            param_group["lr"] = lr_now
        row = {"step": step + 1, "train/lr": lr_now, **batch_metrics(batch, credit, advantages, ranks)}
        if cfg.credit_probe > 0 and offline is None and (step + 1) % cfg.eval_every == 0:   # pi_old: before the update
            row.update(credit_probe(policy, batch, advantages, game_cfg, cfg.credit_probe, cfg.seed * 100_003 + step))
        row.update(ppo_update(policy, opt, batch, advantages, cfg, rngs["shuffle"], ref_policy, ranks))
        t_updated = time.time()
        # 4. log, evaluate, checkpoint
        last = step + 1 == cfg.steps or (cfg.time_limit_min > 0 and (time.time() - started) / 60 >= cfg.time_limit_min)
        last = bool(ranks.max(float(last)))      # every rank stops at the same step
        if ranks.main and ((step + 1) % cfg.eval_every == 0 or last):
            row.update(evaluate_heldout(policy, heldout, game_cfg, oracle, cfg.eval_samples, cfg.seed * 100_003 + step))
            if validation:   # the score that chooses the kept checkpoint: never the held-out secrets
                v = evaluate_heldout(policy, validation, game_cfg, oracle, max(cfg.eval_samples, 2), cfg.seed + step)
                row["eval/validation_score"] = (v["eval/resolve_rate"] + v["eval/sampled_resolve_rate"]) / 2
                recent = [r["eval/validation_score"] for r in rows + [row] if "eval/validation_score" in r]
                recent = recent[-cfg.validation_window:]
                row["eval/validation_smoothed"] = sum(recent) / len(recent)
                if row["eval/validation_smoothed"] >= state.get("best_score", -1.0):
                    state.update(best_score=row["eval/validation_smoothed"], best_step=step + 1)
                    policy.save(run_dir / "best")
        seconds.append(time.time() - t0)
        row.update({"train/seconds_per_step": seconds[-1], "train/seconds_rollout": t_played - t0,
                    "train/seconds_update": t_updated - t_played, "train/seconds_eval": time.time() - t_updated})
        row["train/oracle_failures"] = getattr(oracle, "failures", 0)
        rows.append(row)
        if ranks.main:
            write_logs(run_dir, rows)
            print(progress(cfg, step, seconds, row), flush=True)
            if (step + 1) % cfg.save_every == 0 or last:
                save_checkpoint(run_dir, step + 1, policy, opt, state, rngs, cfg)
        if last:
            break   # out of steps or out of time (--time-limit-min)
    kept = None
    if ranks.main and validation and (run_dir / "best").exists():   # the run keeps its best-on-validation policy
        best = models.load_policy(str(run_dir / "best"), cfg.device or None, cfg.precision, trainable=False)
        kept = {"step": state["best_step"], **evaluate_heldout(best, heldout, game_cfg, oracle, cfg.eval_samples,
                                                               cfg.seed * 100_003 + cfg.steps)}
    summary = finish(cfg, run_dir, rows, seconds, time.time() - started, kept) if ranks.main else {}
    ranks_finish(ranks)
    return summary


def finish(cfg: TrainConfig, run_dir: Path, rows: list[dict], seconds: list[float], wall: float,
           kept: dict | None = None) -> dict:
    """The run's summary.json, curves and closing line. With a kept (best-on-validation)
    checkpoint, final_eval is its held-out evaluation and last_eval the last step's."""
    evals = [r for r in rows if "eval/resolve_rate" in r]
    # steps to 90%: the first evaluation whose sampled held-out resolve reaches 0.9 (greedy flips)
    measure = "eval/sampled_resolve_rate" if cfg.eval_samples > 0 else "eval/resolve_rate"
    reach = next((r["step"] for r in evals if r[measure] >= 0.9), None)
    reach_greedy = next((r["step"] for r in evals if r["eval/resolve_rate"] >= 0.9), None)
    last = evals[-1] if evals else {}
    final = kept or last
    summary = {"run_name": cfg.run_name, "estimator": cfg.estimator, "question_set": cfg.question_set,
               "seed": cfg.seed, "steps": rows[-1]["step"] if rows else 0,
               "final_eval": {k: v for k, v in final.items() if k.startswith("eval/")},
               "last_eval": {k: v for k, v in last.items() if k.startswith("eval/")},
               "kept": {"step": kept["step"], "path": str(run_dir / "best")} if kept else
                       {"step": rows[-1]["step"] if rows else 0, "path": str(run_dir / "checkpoint")},
               "steps_to_90": reach, "steps_to_90_greedy": reach_greedy, "train_seconds": round(wall, 1),
               "step_seconds": round(sum(seconds), 1), "checkpoint": str(run_dir / "checkpoint")}
    (run_dir / "summary.json").write_text(json.dumps(summary, indent=2))
    plot_curves(rows, run_dir / "training_curves.png", cfg.run_name)
    fe = summary["final_eval"]
    nan = float("nan")
    print(f"[{cfg.run_name}] done in {summary['train_seconds']:.0f} s: held-out resolve greedy "
          f"{fe.get('eval/resolve_rate', nan):.3f}, sampled {fe.get('eval/sampled_resolve_rate', nan):.3f} "
          f"+- {fe.get('eval/sampled_resolve_sem', nan):.3f}; zero {fe.get('eval/zero_rate', nan):.3f}, episode length "
          f"{fe.get('eval/episode_length', nan):.2f}; steps to 90% (sampled): {reach}, greedy: {reach_greedy}; "
          f"curves in {run_dir / 'training_curves.png'}", flush=True)
    return summary


def main(argv=None) -> list[dict]:
    cfg = parse_config(TrainConfig, argv, description=__doc__.splitlines()[0])
    try:
        seeds = [int(s) for s in cfg.seeds.split(",") if s.strip()] if cfg.seeds else [cfg.seed]
    except ValueError:
        fail("train.py", f"--seeds {cfg.seeds!r} is not a comma-separated list of integers, e.g. 0,1,2.")
    try:
        summaries = [train(replace(cfg, seed=s, run_name=f"{cfg.run_name}-seed{s}" if cfg.run_name and len(seeds) > 1
                                   else cfg.run_name)) for s in seeds]
    except (models.ModelNotFoundError, OracleConfigError) as e:
        fail("train.py", str(e))
    if len(summaries) > 1:
        mean, sem = mean_sem([s["final_eval"].get("eval/resolve_rate", float("nan")) for s in summaries])
        print(f"[{cfg.estimator}] {len(summaries)} seeds: held-out resolve {mean:.3f} +- {sem:.3f} (SEM)")
    return summaries


if __name__ == "__main__":
    main(sys.argv[1:])
