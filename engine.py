"""The fast rollout engine: what sampling runs on when a GPU runs it.

Paper: section 4 (G rollouts per instance, sampled from pi_old) and App. C "Training
Hyperparameters" (Qwen2.5-1.5B-Instruct, bf16). policy.py's eager decoder is the readable
reference and the CPU path; this module is written to make the same numbers cheaper to get on a
GPU, where a decode step at the paper's batch reads a few GB (the weights and the KV cache) and
should take about as long as reading them does, not the tens of milliseconds that ~1,000 small
kernel launches from Python take (bench/gpu_step.py measures both; RESULTS.md's speed table gives
the machines it has run on).

Two pieces:
- `StaticDecoder`: a decoder for `LMPolicy.generate` over a static KV cache (transformers'
  StaticCache): every decode step has the same shapes, so on CUDA the forward is compiled and
  captured as a CUDA graph (torch.compile, mode "reduce-overhead"): one graph for each shape the
  run meets. To keep those few, a batch is padded up to a power of two of rows and its cache to a
  power of two of positions; the caches are kept and reused, because a graph reads and writes
  fixed addresses. Padding rows repeat the first prompt; their tokens are never read.
- `rollout_policy` / `refresh`: the policy sampling runs on. With LoRA, a separate plain model
  holding W + s * B @ A (computed in float32, then stored in bf16), rather than merging the
  adapter into the frozen base and unmerging it again: in bf16 each round trip rounds the base,
  which would drift over a run. For full fine-tuning, the float32 weights once cast to bf16,
  rather than at every forward under autocast. `refresh` copies the trained weights in after each
  update, in place (the graphs keep their addresses). Eq. 2 still scores pi_old on the training
  model (train.old_logprobs), so its first ratio is still exactly 1; what the two models'
  log-probs differ by is logged as train/behaviour_logprob_gap (max) and _drift (mean).
"""
from __future__ import annotations

import torch

from policy import LMPolicy, positions


def next_power_of_two(n: int, least: int = 1) -> int:
    return max(least, 1 << (n - 1).bit_length())


class StaticDecoder:
    """`LMPolicy.decoder` over static KV caches, one per (rows, positions) shape, kept for reuse.
    One decoder serves one model: its caches and its compiled forward are that model's.
    `compile`: None compiles on CUDA only (on a CPU the graphs would save nothing); True/False force it."""

    def __init__(self, compile: bool | None = None, min_positions: int = 256):
        self.compile, self.min_positions = compile, min_positions
        self.buffers = {}        # (rows, positions) -> the cache and the step's inputs, at fixed addresses
        self.forward = None      # the model's forward, compiled on first use when compiling

    def _buffer(self, policy: LMPolicy, rows: int, length: int) -> dict:
        from transformers import StaticCache
        key = (rows, length)
        if key not in self.buffers:
            dev = policy.device
            self.buffers[key] = {"cache": StaticCache(config=policy.model.config, max_cache_len=length),
                                 "tokens": torch.zeros((rows, 1), dtype=torch.long, device=dev),
                                 "positions": torch.zeros((rows, 1), dtype=torch.long, device=dev),
                                 "mask": torch.zeros((rows, length), dtype=torch.long, device=dev)}
        return self.buffers[key]

    def _forward(self, policy: LMPolicy):
        if self.forward is None:
            on_cuda = policy.device.type == "cuda"
            if self.compile or (self.compile is None and on_cuda):
                # one graph per shape met: the default limit of 8 would fall back to eager
                torch._dynamo.config.cache_size_limit = max(torch._dynamo.config.cache_size_limit, 64)
                self.forward = torch.compile(policy.model.forward, mode="reduce-overhead" if on_cuda else "default")
            else:
                self.forward = policy.model.forward
        return self.forward

    def __call__(self, policy: LMPolicy, prompt_ids: list[list[int]], max_new_tokens: int):
        """(next-token logits (B, V), advance), as `LMPolicy.eager_decoder`."""
        B = len(prompt_ids)
        rows = next_power_of_two(B)
        logits, prefill, mask = policy.prefill(list(prompt_ids) + [prompt_ids[0]] * (rows - B))   # padding rows
        Lp = mask.shape[1]
        buf = self._buffer(policy, rows, next_power_of_two(Lp + max_new_tokens, self.min_positions))
        cache = buf["cache"]
        for source, layer in zip(prefill.layers, cache.layers):
            if not layer.is_initialized:
                layer.lazy_initialization(source.keys, source.values)
            layer.keys[:, :, :Lp] = source.keys       # what lies beyond Lp is masked out until written
            layer.values[:, :, :Lp] = source.values
            layer.cumulative_length.fill_(Lp)         # where the next token's keys and values go
        buf["mask"].zero_()
        buf["mask"][:, :Lp] = mask
        buf["positions"].copy_(positions(mask)[:, -1:] + 1)
        forward, step = self._forward(policy), [Lp]

        def advance(tok: torch.Tensor) -> torch.Tensor:
            buf["tokens"][:B, 0] = tok
            buf["mask"][:, step[0]] = 1
            with policy.autocast():
                out = forward(input_ids=buf["tokens"], attention_mask=buf["mask"], position_ids=buf["positions"],
                              past_key_values=cache, use_cache=True).logits[:B, -1]
            buf["positions"].add_(1)
            step[0] += 1
            return out.clone()   # a graph's output is overwritten by its next replay
        return logits[:B], advance


def folded_state_dict(model) -> dict:
    """The weights of `model` as a plain model of its architecture holds them: for a peft LoRA
    model, each adapted weight is W + s * B @ A, computed in float32; otherwise the model's own."""
    inner = model.get_base_model() if hasattr(model, "get_base_model") else model
    state = {k.replace(".base_layer", ""): v for k, v in inner.state_dict().items() if ".lora_" not in k}
    for name, module in inner.named_modules():
        adapters = getattr(module, "lora_A", None)
        if adapters is None or not hasattr(module, "base_layer"):
            continue
        weight = module.base_layer.weight.float()
        for a in module.active_adapters:
            if a in adapters:
                weight = weight + module.scaling[a] * (module.lora_B[a].weight.float() @ adapters[a].weight.float())
        state[f"{name}.weight"] = weight
    return state


@torch.no_grad()
def refresh(rollout: LMPolicy, policy: LMPolicy) -> None:
    """Copy the trained weights into the rollout model, in place (its addresses, and so any
    captured graph, stay valid)."""
    if rollout is not policy:
        rollout.model.load_state_dict(folded_state_dict(policy.model), strict=True)


def rollout_policy(policy: LMPolicy, dtype: torch.dtype | None = torch.bfloat16,
                   decoder: StaticDecoder | None = None) -> LMPolicy:
    """The policy that samples: a plain copy of `policy`'s current weights in `dtype` (LoRA folded
    in), decoding with `decoder`. dtype None keeps the trained model itself (the eager reference)."""
    if dtype is None:
        return LMPolicy(policy.model, policy.tokenizer, policy.name, policy.compute_dtype, decoder)
    from transformers import AutoModelForCausalLM
    inner = policy.model.get_base_model() if hasattr(policy.model, "get_base_model") else policy.model
    with torch.device(policy.device):
        model = AutoModelForCausalLM.from_config(inner.config, dtype=dtype).eval()
    model.requires_grad_(False)
    copy = LMPolicy(model, policy.tokenizer, f"{policy.name} ({str(dtype).removeprefix('torch.')} rollout copy)",
                    None, decoder)
    refresh(copy, policy)
    return copy


def sampler(policy: LMPolicy, rollout: str) -> LMPolicy:
    """train.py's --rollout: the trained policy itself ("eager"), or a bf16 rollout copy decoding
    over a StaticDecoder ("fast"; "auto": fast on CUDA). Call `refresh` after each update."""
    fast = rollout == "fast" or (rollout == "auto" and policy.device.type == "cuda")
    return rollout_policy(policy, torch.bfloat16, StaticDecoder()) if fast else policy
