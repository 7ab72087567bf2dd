"""Eq. 2's update (section 4): the passes of the clipped objective over a batch's turns, in
minibatches, with the KL term, the gradient clip and the optimizer step; and around it what the
update needs and reports: pi_old's log-probs of the batch's actions, and its train/ metrics.

    J(theta) = 1 / sum_t |G_t| * sum_t sum_{g in G_t} min(rho A, clip(rho, 1 - eta, 1 + eta) A)

(echo.clipped_objective computes one minibatch's part of J; `ppo_update` optimises it.
`CompiledLayers`, train.py --compile-update, compiles the trained model's decoder layers for its
passes, whose micro-batches on a GPU otherwise wait on the host launching small kernels.)

Departures from the paper, and why:
- J is optimised as PPO optimises its objective: `ppo_epochs` passes over each batch, each pass a
  uniformly random deal of the batch's (rollout, turn) terms, all turns t mixed, into
  `num_minibatches` shares of (nearly) equal size, one optimizer step each (`minibatches`). Each
  step divides its share's sum by the share's own count (PPO's minibatch mean), so every term of
  a pass weighs the same; with the batch's count instead the shares' parts would add up to J. The
  TeX writes J as one average over the batch and gives no number of steps per batch (the paper's
  code takes 4 per generated batch, one pass, each over a quarter of the batch's episodes in
  order: TRL's steps_per_generation). Several steps per batch reuse each sampled batch.
- The log-probs of Eq. 2's ratio are those of the distribution the actions are sampled from,
  temperature and top-p applied (policy.process_logits); the paper's pi_theta is the model's own.
- Adam's beta2 is 0.99, eps 1e-5 (PPO practice), and a step whose gradient is not finite is
  skipped and counted: one such step would make every weight NaN.
- pi_old is scored again with the padded passes of the first pass's minibatches, so that the
  first ratio is exactly 1, unless the trained model sampled the batch in float32
  (`sampled_logprobs_are_old`): then the sampled log-probs are pi_old's, to rounding. On a GPU a
  bf16 copy samples (lm/engine.py); how far its log-probs are from pi_old's is logged, per token
  and per action.
- Eq. 2's passes run with every dropout off (`without_dropout`), as pi_old is scored and sampled:
  with it on (LoRA's, 0.05 in the paper's code) pi_theta would be a random function of theta, the
  first ratio would not be 1 and the clip would act on that noise. The warm-up keeps LoRA's
  dropout (lm/warmup.py); the tiny model has none.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import torch

from echo import approx_kl, behaviour_weights, clipped_objective
from policy import padded_batches
from rollouts import RolloutBatch, TurnKey
from tools.ranks import Ranks


@dataclass(frozen=True)
class UpdateConfig:
    """What Eq. 2's update reads: train.py's flags of the same names (their defaults and meanings
    are in config.TrainConfig; tools.cli.settings builds this from it)."""

    ppo_epochs: int  # passes of Eq. 2 over each batch
    num_minibatches: int  # optimizer steps per pass
    micro_batch: int  # turns per forward pass (gradients accumulate over a minibatch's)
    micro_tokens: int  # tokens per forward pass at most, padding included (0: no bound)
    clip_eta: float  # eta of Eq. 2
    ratio_level: str  # "sequence": one rho per action, as the paper; "token": one per token
    kl_beta: float  # weight of the KL to the initial policy (0: no reference policy)
    grad_clip: float  # the gradient's norm is clipped to this before each optimizer step
    target_kl: float  # stop the batch's update once KL(pi_old || pi) passes this (0: never)
    temperature: float  # of the sampling distribution the actions are scored under
    top_p: float  # of the sampling distribution the actions are scored under
    behaviour_is_cap: float  # C: each term times min(C, pi_old / pi_copy) (0: off)
    old_logprobs: str  # "auto": the sampled log-probs where they are pi_old's; "recompute"


def ppo_update(
    policy,
    optimizer,
    batch: RolloutBatch,
    advantages: torch.Tensor,
    update_cfg: UpdateConfig,
    shuffle: torch.Generator,
    ref_policy,
    ranks: Ranks,
    sampled_are_old: bool,
) -> dict:
    """Eq. 2 on one batch: `ppo_epochs` passes over its turns, each dealt to `num_minibatches`
    optimizer steps; ref_policy: pi_ref of the KL term, or None. Its train/ metrics (UpdateLog)."""
    layouts = passes(batch.turn_keys(ranks), shuffle, update_cfg, ranks.rank)  # each pass's steps
    b_logprobs, ref_logprobs = old_logprobs(
        policy, ref_policy, batch, layouts[0], update_cfg, sampled_are_old
    )
    b_advantages = weighted_advantages(advantages.to(policy.device), b_logprobs, batch, update_cfg)
    live = live_turns(b_advantages, update_cfg, ref_policy, sampled_are_old)  # those it scores
    eta = update_cfg.clip_eta
    level = update_cfg.ratio_level
    params = trainable(policy)
    log = UpdateLog(b_logprobs, batch.logprobs)
    policy.model.train()  # for checkpointed layers, which run only in training mode
    without_dropout(policy.model)
    for layout in layouts:  # the passes, each a random deal of the batch's turns
        for minibatch in layout:  # one optimizer step each
            n_terms = minibatch.size  # the step's terms, every rank's: it averages over its own
            optimizer.zero_grad(set_to_none=False)  # keeps trainable()'s zeros (its docstring)
            for turns in live_micro_batches(minibatch, live):
                newlogprob, mask = policy.score(
                    *batch.actions(turns), update_cfg.temperature, update_cfg.top_p
                )
                oldlogprob = padded(b_logprobs, turns)
                objective, stats = clipped_objective(
                    newlogprob, oldlogprob, mask, b_advantages[turns], eta, n_terms, level
                )
                loss = -objective
                if ref_policy is not None:  # + beta KL(pi || pi_ref), the k3 estimate
                    ref_logprob = padded(ref_logprobs, turns)
                    kl_ref = approx_kl(ref_logprob - newlogprob, mask).sum() / n_terms
                    loss = loss + update_cfg.kl_beta * kl_ref
                    log.record_kl_ref(kl_ref, n_terms)
                loss.backward()
                log.record_micro_batch(newlogprob, oldlogprob, mask, stats, loss)
            log.record_minibatch_kl(n_terms, ranks)
            if 0 < update_cfg.target_kl < log.kl_old:  # pi is far enough from pi_old: stop here
                log.record_early_stop()
                break
            ranks.sum_gradients(params)  # every rank's share of the minibatch: the same step
            log.record_step(clipped_step(optimizer, params, update_cfg.grad_clip))
        if log.early_stop:
            break
    policy.model.eval()
    return log.report(ranks)


def weighted_advantages(b_advantages, b_logprobs: list, batch, update_cfg: UpdateConfig):
    """The advantages as Eq. 2 weighs them: each times min(C, pi_old / pi_copy) of its action
    where `behaviour_is_cap` C > 0, for actions sampled by lm/engine.py's copy of the weights, not
    by pi_old itself (echo.behaviour_weights); as they are otherwise."""
    if update_cfg.behaviour_is_cap <= 0:
        return b_advantages
    weights = behaviour_weights(b_logprobs, batch.logprobs, update_cfg.behaviour_is_cap)
    return b_advantages * weights.to(b_advantages.device)


class MicroBatch(NamedTuple):
    """One forward pass of Eq. 2's update: this rank's turns of it (indices in play order), and
    how many turns it holds over every rank (its share of Eq. 2's sum_t |G_t|)."""

    turns: list[int]
    size: int


class Minibatch(NamedTuple):
    """One optimizer step of Eq. 2's update: its forward passes (this rank's turns of each), and
    its number of turns over every rank, the n_terms its objective is divided by."""

    micro: list[MicroBatch]
    size: int


def passes(keys: list[TurnKey], shuffle: torch.Generator, update_cfg: UpdateConfig, rank: int):
    """Every pass's minibatches, drawn at once from the run's generator: `ppo_epochs` lists of
    `minibatches`. keys: every rank's turns (RolloutBatch.turn_keys)."""
    return [minibatches(keys, shuffle, update_cfg, rank) for _ in range(update_cfg.ppo_epochs)]


def minibatches(keys: list[TurnKey], shuffle: torch.Generator, update_cfg: UpdateConfig, rank):
    """One pass of Eq. 2 as PPO deals it: the batch's turns (every rank's) in a uniformly random
    order, dealt to `num_minibatches` shares of (nearly) equal size, so every share mixes all
    turns t; within a share its turns sort by length (little padding, equal prompts side by side)
    and are cut into forward passes (`forward_passes`), each rank keeping its own turns. Fewer
    shares than `num_minibatches` where there are fewer turns. The random order is drawn over the
    turns in one order whatever the number of ranks, so is the deal."""
    turns = sorted(keys, key=lambda k: (k.secret, k.rollout, k.turn, k.rank, k.index))
    order = torch.randperm(len(turns), generator=shuffle).tolist()
    n = update_cfg.num_minibatches
    out = []
    for k in range(min(n, len(turns))):
        share = sorted(turns[i] for i in order[k::n])  # TurnKey's order: by length
        chunks = forward_passes(share, update_cfg.micro_batch, update_cfg.micro_tokens)
        micro = [
            MicroBatch([t.index for t in chunk if t.rank == rank], len(chunk)) for chunk in chunks
        ]
        out.append(Minibatch(micro, len(share)))
    return out


def forward_passes(share: list[TurnKey], most_turns: int, most_tokens: int) -> list[list]:
    """A share's turns, sorted by length, cut into forward passes of at most `most_turns` turns
    and at most `most_tokens` tokens, padding included (policy.padded_batches; 0: no bound)."""
    lengths = [t.prompt_length + t.completion_length for t in share]
    return [[share[i] for i in batch] for batch in padded_batches(lengths, most_turns, most_tokens)]


def live_micro_batches(minibatch: Minibatch, live: list[bool]) -> list[list[int]]:
    """The turns a minibatch's forward passes score: of each of its micro-batches, this rank's
    live turns (`live_turns`); a micro-batch with none is left out."""
    scored = []
    for micro in minibatch.micro:
        turns = [i for i in micro.turns if live[i]]
        if turns:
            scored.append(turns)
    return scored


def without_dropout(model) -> None:
    """Every dropout of `model` off (its modules in eval mode), the rest left in the mode it is in:
    rho of Eq. 2 is then pi_theta / pi_old of one deterministic policy, exactly 1 before the first
    optimizer step (the departures above)."""
    for module in model.modules():
        if isinstance(module, torch.nn.Dropout):
            module.eval()


def clipped_step(optimizer, params: list, grad_clip: float) -> float:
    """The gradient's norm clipped to `grad_clip`, then the optimizer's step, unless the norm is
    not finite: a step on such a gradient would make every weight NaN, so it is skipped (and
    counted, UpdateLog.record_step). Returns the norm before clipping."""
    grad_norm = float(torch.nn.utils.clip_grad_norm_(params, grad_clip))
    if math.isfinite(grad_norm):
        optimizer.step()
    return grad_norm


def trainable(policy) -> list:
    """The trained parameters, each with a gradient of zeros. A minibatch whose every turn has
    advantage 0 scores no micro-batch (`live_turns`), so nothing writes its gradient: it stays
    these zeros (zero_grad(set_to_none=False) keeps them), and Adam steps on it as it steps on a
    scored minibatch whose gradient is 0, so the run takes the same steps either way."""
    params = [p for p in policy.model.parameters() if p.requires_grad]
    for p in params:
        p.grad = torch.zeros_like(p)
    return params


def padded(per_turn: list, turns: list[int]) -> torch.Tensor:
    """The turns' per-token values, right-padded to the longest: (len(turns), L)."""
    return torch.nn.utils.rnn.pad_sequence([per_turn[i] for i in turns], batch_first=True)


def live_turns(
    b_advantages: torch.Tensor, update_cfg: UpdateConfig, ref_policy, sampled_are_old: bool
) -> list[bool]:
    """The turns Eq. 2's passes score. A turn of advantage 0 adds exactly 0 to Eq. 2 and to its
    gradient, so with nothing else to score it for (no KL term, no target KL) it is skipped, while
    n_terms still counts it; but never where pi_old was scored, for those passes must stay the
    update's own, so that the first ratio is exactly 1."""
    if ref_policy is None and update_cfg.target_kl == 0 and sampled_are_old:
        return (b_advantages != 0).tolist()
    return [True] * len(b_advantages)


def old_logprobs(
    policy,
    ref_policy,
    batch: RolloutBatch,
    layout: list[Minibatch],
    update_cfg: UpdateConfig,
    sampled_are_old: bool = False,
) -> tuple[list, list]:
    """log pi_old and log pi_ref of every action token, (tokens,) per turn: scored with the padded
    passes of the first pass's minibatches (`layout`), so Eq. 2's first ratio is exactly 1, or
    pi_old taken as sampled where `sampled_are_old`; None per turn where there is no reference
    policy."""
    C = batch.completion_ids
    b_logprobs, ref_logprobs = [None] * len(C), [None] * len(C)
    if sampled_are_old:
        b_logprobs = [
            torch.tensor(lp, dtype=torch.float32, device=policy.device) for lp in batch.logprobs
        ]
    scorers = [(ref_logprobs, ref_policy)]
    if not sampled_are_old:
        scorers.insert(0, (b_logprobs, policy))
    with torch.no_grad():
        for minibatch in layout:
            for turns in [m.turns for m in minibatch.micro if m.turns]:
                for store, scorer in scorers:
                    if scorer is None:
                        continue
                    actions = batch.actions(turns)
                    logp = scorer.score(*actions, update_cfg.temperature, update_cfg.top_p)[0]
                    for row, i in enumerate(turns):
                        store[i] = logp[row, : len(C[i])]
    return b_logprobs, ref_logprobs


def sampled_logprobs_are_old(update_cfg: UpdateConfig, sampler, policy, online: bool) -> bool:
    """Whether a batch's sampled log-probs are pi_old's: played now (not offline data), by the
    trained model itself (not lm/engine.py's bf16 copy), in float32. Sampling (a KV-cached decode)
    and scoring (a padded pass) then differ by rounding, ~1e-6 a token; the pass saved is ~1/10 of
    a CPU step."""
    return (
        update_cfg.old_logprobs == "auto"
        and online
        and sampler is policy
        and policy.compute_dtype is None
    )


class UpdateLog:
    """The train/ metrics of one `ppo_update`, recorded as it goes and reported once: what the
    clip did, how far pi moved from pi_old, the optimizer's steps, and how far the log-probs the
    actions were sampled with lie from pi_old's (the behaviour gap). Its record_* methods only
    record; `kl_old` (the last minibatch's KL) and `early_stop` are read by the update."""

    def __init__(self, b_logprobs: list, sampled: list):
        per_token = [
            old.cpu().double() - torch.tensor(lp, dtype=torch.float64)
            for old, lp in zip(b_logprobs, sampled)
        ]
        gaps = torch.cat(per_token).abs()
        per_action = torch.stack([d.sum() for d in per_token]).abs()  # |log rho_sampler|
        self.gap_max = gaps.max().item()
        self.action_gap_max = per_action.max().item()
        self.sums = dict.fromkeys(("clipped", "ratio_sum", "terms", "kl_ref", "loss"), 0.0)
        self.sums |= {"drift": gaps.sum().item(), "drift_tokens": len(gaps)}
        self.sums |= {"action_drift": per_action.sum().item(), "actions": len(per_action)}
        self.grad_norms = []  # of each step taken
        self.skipped = 0  # steps skipped on a gradient that was not finite
        self.early_stop = False
        self.kl_old = 0.0  # KL(pi_old || pi) per action of the last minibatch, over every rank
        self.minibatch_kl_sum = 0.0  # of the minibatch scored so far, this rank's
        self.minibatch_loss = 0.0  # likewise
        self.ratio_max = 0.0
        self.first_log_ratio_max = 0.0

    def record_micro_batch(self, newlogprob, oldlogprob, mask, stats: dict, loss):
        """One micro-batch of a minibatch, after its backward pass."""
        log_ratio = (newlogprob.detach() - oldlogprob) * mask  # log pi - log pi_old per token
        self.minibatch_kl_sum += approx_kl(log_ratio, mask).sum().item()  # KL(pi_old || pi)
        if not self.grad_norms:  # before the first step rho is 1 (to rounding, if pi_old sampled)
            first = float(log_ratio.sum(-1).abs().max())
            self.first_log_ratio_max = max(self.first_log_ratio_max, first)
        for key in ("clipped", "ratio_sum", "terms"):
            self.sums[key] += stats[key]
        self.ratio_max = max(self.ratio_max, stats["ratio_max"])
        self.minibatch_loss += loss.item()

    def record_kl_ref(self, kl_ref: torch.Tensor, n_terms: int) -> None:
        """A micro-batch's KL(pi || pi_ref) part (its sum over the terms, divided by n_terms)."""
        self.sums["kl_ref"] += kl_ref.item() * n_terms

    def record_minibatch_kl(self, n_terms: int, ranks: Ranks) -> None:
        """The minibatch's KL(pi_old || pi) per action, summed over every rank, as `kl_old`."""
        total = torch.tensor([self.minibatch_kl_sum], dtype=torch.float64)
        self.kl_old = ranks.sum(total).item() / n_terms
        self.minibatch_kl_sum = 0.0

    def record_early_stop(self) -> None:
        """The update stops before this minibatch's step (target_kl)."""
        self.early_stop = True

    def record_step(self, grad_norm: float) -> None:
        """The minibatch's optimizer step, and its loss, or a step skipped (`clipped_step`)."""
        if math.isfinite(grad_norm):
            self.grad_norms.append(grad_norm)
            self.sums["loss"] += self.minibatch_loss
        else:
            self.skipped += 1
        self.minibatch_loss = 0.0

    def report(self, ranks: Ranks) -> dict:
        totals = ranks.sum(torch.tensor(list(self.sums.values()), dtype=torch.float64))
        s = dict(zip(self.sums, totals.tolist()))
        steps = len(self.grad_norms)
        terms = max(s["terms"], 1)
        return {
            "train/loss": s["loss"] / steps if steps else math.nan,
            "train/clip_fraction": s["clipped"] / terms,
            "train/ratio_mean": s["ratio_sum"] / s["terms"] if s["terms"] else math.nan,
            "train/ratio_max": ranks.max(self.ratio_max),
            "train/kl": self.kl_old,
            "train/kl_ref": s["kl_ref"] / terms,
            "train/optimizer_steps": steps,
            "train/nonfinite_steps_skipped": self.skipped,
            "train/early_stop": float(self.early_stop),
            "train/grad_norm": sum(self.grad_norms) / steps if steps else math.nan,
            "train/first_step_log_ratio_max": ranks.max(self.first_log_ratio_max),
            "train/behaviour_logprob_gap": ranks.max(self.gap_max),
            "train/behaviour_logprob_drift": s["drift"] / max(s["drift_tokens"], 1),
            "train/behaviour_action_log_ratio_max_abs": ranks.max(self.action_gap_max),
            "train/behaviour_action_log_ratio_mean_abs": s["action_drift"] / max(s["actions"], 1),
        }


def decoder_layers(model) -> list:
    """The model's transformer blocks: the modules of the classes transformers keeps whole on one
    device (`_no_split_modules`, e.g. Qwen2DecoderLayer), under a peft wrapper or not."""
    inner = model.get_base_model() if hasattr(model, "get_base_model") else model
    names = set(getattr(inner, "_no_split_modules", None) or ())
    return [m for m in inner.modules() if type(m).__name__ in names]


class CompiledLayers:
    """The trained model's decoder layers compiled (torch.compile) for Eq. 2's passes, as a context
    around the update (train.py --compile-update): inside it each layer runs its compiled forward,
    outside it the eager one, so generation and evaluation, whose KV caches would make the layers
    compile again, never meet them.

    Why: on a GPU the update's passes wait on the host, not the GPU. An eager layer launches its
    dozens of kernels one by one from Python, and LoRA adds a dropout, two products, a scale and a
    sum to each adapted projection, forward and backward, for little arithmetic; compiled, the
    small kernels fuse and a layer's Python runs once, at compile time. The shapes are dynamic
    (rows and length change with every micro-batch) and every layer runs the same code on
    parameters passed in as inputs, so the layers share their graphs: one with gradient and one
    without (pi_old's scoring pass), compiled on the first micro-batch that needs each. Inside the
    block LMPolicy.score runs its plain pass (`plain_scoring`): a KV cache handed through the
    layers would give each layer a graph of its own (its index in the cache is a constant of it).
    With `on` False it compiles nothing and the block changes nothing."""

    def __init__(self, policy, on: bool = True):
        self.policy, self.layers = policy, decoder_layers(policy.model) if on else []
        self.compiled = [torch.compile(layer.forward, dynamic=True) for layer in self.layers]

    def __enter__(self):
        for layer, forward in zip(self.layers, self.compiled):
            layer.forward = forward  # an instance attribute, over the class's forward
        self.policy.plain_scoring = bool(self.layers)
        return self

    def __exit__(self, *exc):
        for layer in self.layers:
            layer.__dict__.pop("forward", None)
        self.policy.plain_scoring = False
