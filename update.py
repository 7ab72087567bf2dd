"""Eq. 2's update (section 4): the passes of the clipped objective over a batch's turns, in
minibatches, with the KL term, the gradient clip and the optimizer step; and around it what the
update needs and reports: pi_old's log-probs of the batch's actions, and its train/ metrics.

    J(theta) = 1 / sum_t |G_t| * sum_t sum_{g in G_t} min(rho A, clip(rho, 1 - eta, 1 + eta) A)

(echo.clipped_objective computes one minibatch's part of J; `ppo_update` optimises it.
`CompiledLayers`, train.py --compile-update, compiles the trained model's decoder layers for its
passes, whose micro-batches on a GPU otherwise wait on the host launching small kernels.)

Departures from the paper, and why:
- Eq. 2 runs `ppo_epochs` passes, `num_minibatches` optimizer steps each (PPO practice); the
  paper takes one step per batch.
- Adam's beta2 is 0.99, eps 1e-5 (PPO practice), and a step whose gradient is not finite is
  skipped and counted: one such step would make every weight NaN.
- pi_old is scored again with the update's own padded passes, so that the first ratio is exactly
  1, unless the trained model sampled the batch in float32 (`sampled_logprobs_are_old`): then
  the sampled log-probs are pi_old's, to rounding. On a GPU a bf16 copy samples (engine.py); how
  far its log-probs are from pi_old's is logged, per token and per action.
"""

from __future__ import annotations

import math

import torch

from echo import approx_kl, behaviour_weights, clipped_objective
from rollouts import RolloutBatch
from ranks import Ranks


def ppo_update(
    policy, optimizer, batch, advantages, cfg, shuffle, ref_policy, ranks, sampled_are_old
) -> dict:
    """Eq. 2 on one batch (rollouts.RolloutBatch): `ppo_epochs` passes over its turns, each dealt to
    `num_minibatches` optimizer steps. advantages: (N,), one per turn in play order. cfg:
    train.TrainConfig; ranks: ranks.Ranks (each minibatch spans every rank's turns); pi_old: see
    `old_logprobs`. Returns the train/ metrics (UpdateLog)."""
    micro, sizes = batch.micro_batches(cfg.micro_batch, ranks)  # the turns of each forward pass
    b_logprobs, ref_logprobs = old_logprobs(policy, ref_policy, batch, micro, cfg, sampled_are_old)
    b_advantages, eta, level = advantages.to(policy.device), cfg.clip_eta, cfg.ratio_level
    if cfg.behaviour_is_cap > 0:  # sampled by engine.py's copy, not by pi_old (echo.py)
        weights = behaviour_weights(b_logprobs, batch.logprobs, cfg.behaviour_is_cap)
        b_advantages = b_advantages * weights.to(policy.device)
    live = live_turns(b_advantages, ref_policy is None and cfg.target_kl == 0 and sampled_are_old)
    log, params = UpdateLog(b_logprobs, batch.logprobs), trainable(policy)
    policy.model.train()
    for _ in range(cfg.ppo_epochs):  # the passes, each dealing the micro-batches anew
        order = torch.randperm(len(micro), generator=shuffle).tolist()
        for chunks in minibatches(order, cfg.num_minibatches):  # one optimizer step each
            n_terms = sum(sizes[j] for j in chunks)  # Eq. 2's sum_t |G_t|, over this minibatch
            optimizer.zero_grad(set_to_none=False)  # zeros: a step that scored nothing stays one
            for mb in [m for m in ([i for i in micro[j] if live[i]] for j in chunks) if m]:
                newlogprob, mask = policy.score(*batch.actions(mb), cfg.temperature, cfg.top_p)
                oldlogprob = padded(b_logprobs, mb)
                objective, stats = clipped_objective(
                    newlogprob, oldlogprob, mask, b_advantages[mb], eta, n_terms, level
                )
                loss, kl_ref = -objective, None
                if ref_policy is not None:  # + beta KL(pi || pi_ref), the k3 estimate
                    kl_ref = approx_kl(padded(ref_logprobs, mb) - newlogprob, mask).sum() / n_terms
                    loss = loss + cfg.kl_beta * kl_ref
                loss.backward()
                log.scored(newlogprob, oldlogprob, mask, stats, loss, kl_ref, n_terms)
            if log.kl_exceeds(cfg.target_kl, n_terms, ranks):  # pi is far enough from pi_old
                break
            ranks.sum_gradients(params)  # every rank's share of the minibatch: the same step
            if log.stepped(float(torch.nn.utils.clip_grad_norm_(params, cfg.grad_clip))):
                optimizer.step()
        if log.early_stop:
            break
    policy.model.eval()
    return log.report(ranks)


def minibatches(order: list[int], n: int) -> list[list[int]]:
    """The micro-batches of a pass, in `order`, dealt to n minibatches (fewer if there are fewer
    micro-batches than n: none is empty)."""
    return [order[k::n] for k in range(min(n, len(order)))]


def trainable(policy) -> list:
    """The trained parameters, their gradients zeros: Adam steps on zeros where a minibatch scores
    nothing (every advantage 0), as where it scores turns whose gradients are 0."""
    params = [p for p in policy.model.parameters() if p.requires_grad]
    for p in params:
        p.grad = torch.zeros_like(p)
    return params


def padded(per_turn: list, turns: list[int]) -> torch.Tensor:
    """The turns' per-token values, right-padded to the longest: (len(turns), L)."""
    return torch.nn.utils.rnn.pad_sequence([per_turn[i] for i in turns], batch_first=True)


def live_turns(advantages: torch.Tensor, skip_zero: bool) -> list[bool]:
    """The turns Eq. 2's passes score. A turn of advantage 0 adds exactly 0 to Eq. 2 and to its
    gradient, so with nothing else to score it for (no KL term, no target KL) it is skipped, while
    n_terms still counts it; but never where pi_old was scored, for those passes must stay the
    update's own, so that the first ratio is exactly 1."""
    return (advantages != 0).tolist() if skip_zero else [True] * len(advantages)


def old_logprobs(
    policy, ref_policy, batch: RolloutBatch, micro: list, cfg, sampled_are_old: bool = False
) -> tuple[list, list]:
    """log pi_old and log pi_ref of every action token, (tokens,) per turn: scored with the
    update's padded passes (so Eq. 2's first ratio is exactly 1), or pi_old taken as sampled where
    `sampled_are_old`; None per turn where there is no reference policy."""
    C = batch.completion_ids
    b_logprobs, ref_logprobs = [None] * len(C), [None] * len(C)
    if sampled_are_old:
        b_logprobs = [
            torch.tensor(lp, dtype=torch.float32, device=policy.device) for lp in batch.logprobs
        ]
    scorers = ([] if sampled_are_old else [(b_logprobs, policy)]) + [(ref_logprobs, ref_policy)]
    with torch.no_grad():
        for mb in [m for m in micro if m]:
            for store, scorer in scorers:
                if scorer is not None:
                    logp = scorer.score(*batch.actions(mb), cfg.temperature, cfg.top_p)[0]
                    for row, i in enumerate(mb):
                        store[i] = logp[row, : len(C[i])]
    return b_logprobs, ref_logprobs


def sampled_logprobs_are_old(cfg, sampler, policy, online: bool) -> bool:
    """Whether a batch's sampled log-probs are pi_old's: played now (not offline data), by the
    trained model itself (not engine.py's bf16 copy), in float32. Sampling (a KV-cached decode)
    and scoring (a padded pass) then differ by rounding, ~1e-6 a token; the pass saved is ~1/10 of
    a CPU step."""
    return (
        cfg.old_logprobs == "auto" and online and sampler is policy and policy.compute_dtype is None
    )


class UpdateLog:
    """The train/ metrics of one `ppo_update`, gathered as it goes and reported once: what the
    clip did, how far pi moved from pi_old, the optimizer's steps, and how far the log-probs the
    actions were sampled with lie from pi_old's (the behaviour gap)."""

    def __init__(self, b_logprobs: list, sampled: list):
        per_token = [
            old.cpu().double() - torch.tensor(lp, dtype=torch.float64)
            for old, lp in zip(b_logprobs, sampled)
        ]
        gaps = torch.cat(per_token).abs()
        per_action = torch.stack([d.sum() for d in per_token]).abs()  # |log rho_sampler|
        self.gap = (gaps.max().item(), per_action.max().item())
        self.sums = dict.fromkeys(("clipped", "ratio_sum", "terms", "kl_ref", "loss"), 0.0)
        self.sums |= {"drift": gaps.sum().item(), "drift_tokens": len(gaps)}
        self.sums |= {"action_drift": per_action.sum().item(), "actions": len(per_action)}
        self.grad_norms, self.skipped, self.early_stop = [], 0, False
        self.kl_old = self.kl_sum = self.loss = self.ratio_max = self.first_log_ratio_max = 0.0

    def scored(self, newlogprob, oldlogprob, mask, stats: dict, loss, kl_ref, n_terms: int):
        """One micro-batch of a minibatch, after its backward pass."""
        log_ratio = (newlogprob.detach() - oldlogprob) * mask  # log pi - log pi_old per token
        self.kl_sum += approx_kl(log_ratio, mask).sum().item()  # KL(pi_old || pi)
        if not self.grad_norms:  # before the first step rho is 1 (to rounding, if pi_old sampled)
            first = float(log_ratio.sum(-1).abs().max())
            self.first_log_ratio_max = max(self.first_log_ratio_max, first)
        for key in ("clipped", "ratio_sum", "terms"):
            self.sums[key] += stats[key]
        self.sums["kl_ref"] += 0.0 if kl_ref is None else kl_ref.item() * n_terms
        self.ratio_max = max(self.ratio_max, stats["ratio_max"])
        self.loss += loss.item()

    def kl_exceeds(self, target_kl: float, n_terms: int, ranks: Ranks) -> bool:
        """The minibatch's KL(pi_old || pi) per action, over every rank; whether it passes
        `target_kl` (> 0), which stops the update early."""
        total = torch.tensor([self.kl_sum], dtype=torch.float64)
        self.kl_old, self.kl_sum = ranks.sum(total).item() / n_terms, 0.0
        self.early_stop = target_kl > 0 and self.kl_old > target_kl
        return self.early_stop

    def stepped(self, grad_norm: float) -> bool:
        """Whether the optimizer may step on this gradient: not if its norm is not finite (the
        step is skipped and counted)."""
        loss, self.loss = self.loss, 0.0
        if not math.isfinite(grad_norm):
            self.skipped += 1
            return False
        self.grad_norms.append(grad_norm)
        self.sums["loss"] += loss
        return True

    def report(self, ranks: Ranks) -> dict:
        totals = ranks.sum(torch.tensor(list(self.sums.values()), dtype=torch.float64))
        s, steps = dict(zip(self.sums, totals.tolist())), len(self.grad_norms)
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
            "train/behaviour_logprob_gap": ranks.max(self.gap[0]),
            "train/behaviour_logprob_drift": s["drift"] / max(s["drift_tokens"], 1),
            "train/behaviour_action_log_ratio_max_abs": ranks.max(self.gap[1]),
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
