"""The fast rollout engine: what sampling runs on when a GPU runs it.

Paper: section 4 (G rollouts per instance, sampled from pi_old) and App. C "Training
Hyperparameters" (Qwen2.5-1.5B-Instruct, bf16). policy.py's eager decoder is the readable
reference and the CPU path; this module is written to make the same numbers cheaper to get on a
GPU, where a decode step at the paper's batch reads a few GB (the weights and the KV cache) and
should take about as long as reading them does, not the tens of milliseconds that ~1,000 small
kernel launches from Python take (bench/gpu_step.py measures both; RESULTS.md's speed table gives
the machines it has run on).

Five pieces, each there because of a cost of decoding one token for every live rollout:
- `grouped_query_attention`: the rollout copy's attention. Qwen2.5-1.5B has 12 query heads and 2
  key/value heads. transformers' stock path copies each key/value head out to its 6 query heads
  (`repeat_kv`) before attention whenever a mask is given or the step is compiled, as it is here,
  so a decode step would write and read the cache 6 times over. Here a token's 12 query heads are
  viewed as 2 groups of 6 queries against the 2 key/value heads, so each key and value is read
  once. It is registered in transformers' attention interface under its own name and only the
  rollout copy is built with it: the trained model's scoring keeps the stock attention.
- `FusedAttention`, `FusedMLP`: the rollout copy's projections fused, q/k/v into one matrix and
  gate/up into one, so a decode step runs 4 GEMMs per layer where the stock layer runs 7: at 64
  rows the key/value projections' GEMMs (0.8 MB of weights each at Qwen2.5-1.5B's shape) took
  about 5 microseconds each in an H100 profile, where reading their weights takes well under one.
  `refresh` stacks the trained weights into them (`fused_state_dict`).
- `StaticDecoder`: a decoder for `LMPolicy.generate` over a static KV cache (transformers'
  StaticCache): every decode step has the same shapes, so on CUDA the forward is compiled and
  captured as a CUDA graph (torch.compile, mode "reduce-overhead"): one graph for each shape the
  run meets. To keep those few, a batch is padded up to a power of two of rows and its cache to a
  power of two of positions; the caches are kept and reused, because a graph reads and writes
  fixed addresses. Padding rows repeat the first prompt; their tokens are never read. Attention
  reads a cache only as far as this call can fill it (`read_length`: at most a quarter more), not
  to the power of two, so a batch pays for the positions it has.
- `StaticDecoder.generate`: LMPolicy.generate's loop with the host `lookahead` steps behind the
  device: each step's tokens are copied to the host without waiting, and the host reads them (the
  JSON scan, which rows ended) while the device computes the next steps, instead of stopping the
  device at every token. Once every row has ended it has run at most `lookahead` steps too many,
  whose tokens are cut off; the tokens and log-probs are those of the reference loop. Where it
  compiles (CUDA) it draws with `blocked_inverse_cdf`, compiled: the sampling step's thirty-odd
  small kernels over the whole vocabulary become a few.
- `rollout_policy` / `refresh`: the policy sampling runs on. With LoRA, a separate plain model
  holding W + s * B @ A (computed in float32, then stored in bf16), rather than merging the
  adapter into the frozen base and unmerging it again: in bf16 each round trip rounds the base,
  which would drift over a run. For full fine-tuning, the float32 weights once cast to bf16,
  rather than at every forward under autocast. `refresh` copies the trained weights in after each
  update, in place (the graphs keep their addresses). Eq. 2 still scores pi_old on the training
  model (update.old_logprobs), so its first ratio is still exactly 1; what the two models'
  log-probs differ by is logged per token as train/behaviour_logprob_gap (max) and _drift (mean),
  per action (what Eq. 2's rho sees) as train/behaviour_action_log_ratio_max_abs and _mean_abs, and
  train.py --behaviour-is-cap can weight each action's term of Eq. 2 by the truncated ratio
  min(C, pi_old / pi_copy) (echo.behaviour_weights).

Still paid per token, with top-p < 1: the sort of the whole vocabulary. On a CPU the engine
draws with policy.sample_next itself, so its tokens are the reference's bit for bit; compiled,
its sums add in another order, and a uniform within rounding of a boundary can take the
neighbouring token (on a GPU the bf16 copy's logits already differ from the trained model's by
far more).
"""

from __future__ import annotations

import time
from copy import deepcopy
from functools import partial

import torch
import torch.nn.functional as F
from torch import nn
from transformers import AttentionInterface
from transformers.integrations.sdpa_attention import sdpa_attention_forward
from transformers.masking_utils import AttentionMaskInterface, sdpa_mask
from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS
from transformers.models.llama.modeling_llama import apply_rotary_pos_emb, eager_attention_forward

from policy import JsonScanner, LMPolicy, SampleConfig, positions, sample_next

GROUPED = "echo_grouped_query"  # the rollout copy's attention, by its name in transformers


def grouped_query_attention(
    module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    scaling: float | None = None,
    dropout: float = 0.0,
    read_length: int | None = None,
    **kwargs,
) -> tuple[torch.Tensor, None]:
    """Attention as transformers' interface calls it: query (B, H, Lq, D), key and value
    (B, H_kv, L, D), a boolean mask (B, 1, Lq, L) or None; returns (B, Lq, H, D). Query head h
    attends with key/value head h // (H / H_kv), as repeat_kv pairs them. `read_length`: only the
    first read_length positions of the cache are read (the rest cannot be filled yet)."""
    if read_length is not None:
        key, value = key[:, :, :read_length], value[:, :, :read_length]
        attention_mask = None if attention_mask is None else attention_mask[..., :read_length]
    groups = getattr(module, "num_key_value_groups", 1)
    B, H, Lq, D = query.shape
    if Lq != 1 or groups == 1:  # a prompt's prefill (not compiled), or a key/value head per head
        return sdpa_attention_forward(
            module, query, key, value, attention_mask, dropout=dropout, scaling=scaling, **kwargs
        )
    # One token: its H query heads as H_kv groups of H / H_kv queries, each group against its own
    # key/value head, so the kernel reads every key and value once. The mask (B, 1, 1, L) is the
    # same for every head and query and broadcasts.
    grouped = query.view(B, H // groups, groups, D)  # (B, H_kv, H / H_kv, D)
    out = F.scaled_dot_product_attention(
        grouped, key, value, attn_mask=attention_mask, scale=scaling
    )
    return out.reshape(B, H, 1, D).transpose(1, 2), None  # (B, 1, H, D)


# Registered under our own name: a model uses it only when built with attn_implementation=GROUPED
# (the rollout copy, `rollout_policy`); every other model in the process keeps its attention. Its
# masks are SDPA's (boolean, (B, 1, Lq, L)).
AttentionInterface.register(GROUPED, grouped_query_attention)
AttentionMaskInterface.register(GROUPED, sdpa_mask)


class FusedAttention(nn.Module):
    """A decoder layer's attention (Llama's and Qwen2's, without a sliding window) with its q, k
    and v projections as one matrix: one GEMM per decode step where there were three, two of them
    (to the 2 key/value heads) so small that launching them cost more than reading their weights.
    Otherwise the stock forward: rotary positions, the cache's update, the attention registered
    under the config's name, the output projection."""

    def __init__(self, attention: nn.Module):
        super().__init__()
        q, k, v = attention.q_proj, attention.k_proj, attention.v_proj
        assert getattr(attention, "sliding_window", None) is None, "a sliding window is not fused"
        self.config, self.layer_idx, self.head_dim = (
            attention.config,
            attention.layer_idx,
            attention.head_dim,
        )
        self.num_key_value_groups, self.scaling, self.is_causal = (
            attention.num_key_value_groups,
            attention.scaling,
            True,
        )
        self.sizes = [q.out_features, k.out_features, v.out_features]
        self.qkv_proj = nn.Linear(
            q.in_features,
            sum(self.sizes),
            bias=q.bias is not None,
            device=q.weight.device,
            dtype=q.weight.dtype,
        )
        self.o_proj = attention.o_proj

    def forward(
        self,
        hidden_states: torch.Tensor,
        position_embeddings: tuple[torch.Tensor, torch.Tensor],
        attention_mask: torch.Tensor | None,
        past_key_values=None,
        **kwargs,
    ) -> tuple[torch.Tensor, None]:
        shape = (*hidden_states.shape[:-1], -1, self.head_dim)  # (B, L, heads, D)
        query, key, value = (
            x.view(shape).transpose(1, 2)
            for x in self.qkv_proj(hidden_states).split(self.sizes, -1)
        )
        query, key = apply_rotary_pos_emb(query, key, *position_embeddings)
        if past_key_values is not None:
            key, value = past_key_values.update(key, value, self.layer_idx)
        attend = ALL_ATTENTION_FUNCTIONS.get_interface(
            self.config._attn_implementation, eager_attention_forward
        )
        out, _ = attend(self, query, key, value, attention_mask, scaling=self.scaling, **kwargs)
        return self.o_proj(out.reshape(*shape[:-2], -1)), None


class FusedMLP(nn.Module):
    """The gated MLP, down(act(gate x) * up x), with gate and up as one matrix: one GEMM reading
    both."""

    def __init__(self, mlp: nn.Module):
        super().__init__()
        gate = mlp.gate_proj
        self.gate_up_proj = nn.Linear(
            gate.in_features,
            2 * gate.out_features,
            bias=False,
            device=gate.weight.device,
            dtype=gate.weight.dtype,
        )
        self.down_proj, self.act_fn = mlp.down_proj, mlp.act_fn

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gate, up = self.gate_up_proj(x).chunk(2, dim=-1)
        return self.down_proj(self.act_fn(gate) * up)


# Each fused weight (and bias) of a layer and the stock weights it stacks, in order.
FUSED = {
    "self_attn.qkv_proj": ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj"),
    "mlp.gate_up_proj": ("mlp.gate_proj", "mlp.up_proj"),
}


def fuse_projections(model: nn.Module) -> nn.Module:
    """The rollout copy's layers with FusedAttention and FusedMLP, in place; their weights are
    left to `refresh` (fused_state_dict)."""
    for layer in model.model.layers:
        layer.self_attn, layer.mlp = FusedAttention(layer.self_attn), FusedMLP(layer.mlp)
    return model


def fused_state_dict(state: dict) -> dict:
    """A stock state dict in the fused layout: each layer's q, k, v (weights and biases) stacked
    into qkv_proj, gate and up into gate_up_proj, by rows (output features) in FUSED's order."""
    out = dict(state)
    for key in state:
        for fused, parts in FUSED.items():
            prefix, dot, suffix = key.partition(parts[0] + ".")
            if dot and not suffix.count("."):  # e.g. model.layers.3. + self_attn.q_proj. + weight
                out[f"{prefix}{fused}.{suffix}"] = torch.cat(
                    [out.pop(f"{prefix}{p}.{suffix}") for p in parts]
                )
    return out


def next_power_of_two(n: int, least: int = 1) -> int:
    return max(least, 1 << (n - 1).bit_length())


def read_length(n: int, least: int = 64) -> int:
    """How far a decode reads a cache whose last filled position is n: n rounded up to a
    multiple of an eighth of its power of two, so at most a quarter more than n (four lengths
    per doubling, each a multiple of 16 past `least`, which keeps the number of graphs small)."""
    if n <= least:
        return least
    step = next_power_of_two(n) // 8
    return -(-n // step) * step


def blocked_inverse_cdf(
    probs: torch.Tensor, uniforms: torch.Tensor, width: int = 128
) -> torch.Tensor:
    """policy.inverse_cdf's token found in two levels: the block of `width` tokens where the
    target (u x the total) falls, from the blocks' cumulative sums, then the token within it.
    (B, V), (B,) -> (B,). Why: torch's cumulative sum over a 152k vocabulary runs each row on one
    thread block, so at 64 rows it took 0.24 ms of a 3.6 ms decode step on an H100
    (gpu_step_draw.json's profile); here the only long pass is a sum, which a GPU splits across the
    whole chip. Its sums add in another order, so a uniform within rounding (about 1e-7) of a
    boundary can take the neighbouring token."""
    B, V = probs.shape
    blocks = F.pad(probs, (0, -V % width)).view(B, -1, width)  # (B, n, w): no mass past V
    block_cdf = blocks.sum(-1).cumsum(-1)  # (B, n)
    target = uniforms[:, None] * block_cdf[:, -1:]  # (B, 1)
    # j: the first block reaching it; before: the mass of the blocks before j. (B, 1) each
    j = torch.searchsorted(block_cdf, target).clamp(max=block_cdf.shape[1] - 1)
    before = block_cdf.gather(1, (j - 1).clamp(min=0)) * (j > 0)
    inner = blocks.gather(1, j[:, :, None].expand(B, 1, width))[:, 0]  # (B, w)
    k = torch.searchsorted(before + inner.cumsum(-1), target)  # (B, 1): the first token reaching it
    # Where rounding leaves the target past the block's own running sum, its last token with mass
    # (never a token of probability 0, whose log-prob would be -inf).
    last = (torch.arange(width, device=probs.device) * (inner > 0)).amax(-1, keepdim=True)
    return (j * width + torch.where(k < width, k, last))[:, 0].clamp(max=V - 1)


class StaticDecoder:
    """`LMPolicy.decoder` over static KV caches, one per (rows, positions) shape, kept for reuse.
    One decoder serves one model: its caches and its compiled forward are that model's.
    `compile_graphs`: None compiles on CUDA only (on a CPU the graphs would save nothing);
    True/False force it.
    `lookahead`: decode steps the device may run ahead of the host's reading of the tokens (0: the
    host reads every step's tokens before the next step starts, as LMPolicy.generate does).
    `fast_sampling`: each step's draw (policy.sample_next) with blocked_inverse_cdf, compiled into a
    few fused kernels; None: where the forward is compiled. Off, the draw is the reference's own."""

    def __init__(
        self,
        compile_graphs: bool | None = None,
        min_positions: int = 256,
        lookahead: int = 2,
        fast_sampling: bool | None = None,
    ):
        self.compile_graphs, self.min_positions = compile_graphs, min_positions
        self.lookahead = lookahead
        self.fast_sampling = fast_sampling
        self.draw = None  # the draw: sample_next, or its fast form
        self.buffers = {}  # (rows, positions) -> the cache and the step's inputs, fixed addresses
        self.forward = None  # the model's forward, compiled on first use when compiling
        self.compiled = False
        self.shapes = {}  # (rows, positions, read) -> decode steps run: a graph each if compiling
        self.compile_seconds = 0.0  # each compiled shape's first two steps: compile, capture

    def _buffer(self, policy: LMPolicy, rows: int, length: int) -> dict:
        from transformers import StaticCache

        key = (rows, length)
        if key not in self.buffers:
            dev = policy.device
            self.buffers[key] = {
                "cache": StaticCache(config=policy.model.config, max_cache_len=length),
                "tokens": torch.zeros((rows, 1), dtype=torch.long, device=dev),
                "positions": torch.zeros((rows, 1), dtype=torch.long, device=dev),
                "mask": torch.zeros((rows, length), dtype=torch.long, device=dev),
            }
        return self.buffers[key]

    def _forward(self, policy: LMPolicy):
        if self.forward is None:
            on_cuda = policy.device.type == "cuda"
            if self.compile_graphs or (self.compile_graphs is None and on_cuda):
                # one graph per shape met: the default limit of 8 would fall back to eager
                torch._dynamo.config.cache_size_limit = max(
                    torch._dynamo.config.cache_size_limit, 128
                )
                self.forward = torch.compile(
                    policy.model.forward, mode="reduce-overhead" if on_cuda else "default"
                )
                self.compiled = True
            else:
                self.forward = policy.model.forward
        return self.forward

    def _draw(self):
        """sample_next as this decoder draws (see `fast_sampling`); compiled for any number of
        rows."""
        if self.draw is None:
            fast = self.compiled if self.fast_sampling is None else self.fast_sampling
            self.draw = partial(sample_next, draw=blocked_inverse_cdf) if fast else sample_next
            if fast and self.compiled:
                self.draw = torch.compile(self.draw, dynamic=True)
        return self.draw

    def start(self, policy: LMPolicy, prompt_ids: list[list[int]], max_new_tokens: int):
        """(next-token logits (B, V), advance), as `LMPolicy.eager_decoder`."""
        B = len(prompt_ids)
        rows = next_power_of_two(B)
        padding = [prompt_ids[0]] * (rows - B)
        logits, prefill, mask = policy.prefill(list(prompt_ids) + padding)
        Lp = mask.shape[1]
        buf = self._buffer(policy, rows, next_power_of_two(Lp + max_new_tokens, self.min_positions))
        cache = buf["cache"]
        for source, layer in zip(prefill.layers, cache.layers):
            if not layer.is_initialized:
                layer.lazy_initialization(source.keys, source.values)
            layer.keys[:, :, :Lp] = source.keys  # what lies beyond Lp is masked out until written
            layer.values[:, :, :Lp] = source.values
            layer.cumulative_length.fill_(Lp)  # where the next token's keys and values go
        buf["mask"].zero_()
        buf["mask"][:, :Lp] = mask
        buf["positions"].copy_(positions(mask)[:, -1:] + 1)
        forward, step = self._forward(policy), [Lp]
        # the grouped attention reads the cache up to the last position this call can write; the
        # stock one all of it
        reads = policy.model.config._attn_implementation == GROUPED
        read = {"read_length": read_length(Lp + max_new_tokens)} if reads else {}
        shape = (rows, buf["mask"].shape[1], read.get("read_length", buf["mask"].shape[1]))

        def advance(tok: torch.Tensor) -> torch.Tensor:
            buf["tokens"][:B, 0] = tok
            buf["mask"][:, step[0]] = 1
            first = self.compiled and self.shapes.get(shape, 0) < 2
            if first:
                sync(policy.device)
                began = time.perf_counter()
            with policy.autocast():
                out = forward(
                    input_ids=buf["tokens"],
                    attention_mask=buf["mask"],
                    position_ids=buf["positions"],
                    past_key_values=cache,
                    use_cache=True,
                    **read,
                ).logits[:B, -1]
            if first:
                sync(policy.device)
                self.compile_seconds += time.perf_counter() - began
            self.shapes[shape] = self.shapes.get(shape, 0) + 1
            buf["positions"].add_(1)
            step[0] += 1
            return out.clone()  # a graph's output is overwritten by its next replay

        return logits[:B], advance

    __call__ = start

    @torch.no_grad()
    def generate(
        self,
        policy: LMPolicy,
        prompt_ids: list[list[int]],
        sample: SampleConfig = SampleConfig(),
        generator: torch.Generator | list | None = None,
    ) -> list:
        """LMPolicy.generate's Generations (the same tokens, log-probs and entropies under the same
        seeds), the host reading each step's tokens up to `lookahead` steps after the device made
        them."""
        dev, steps = policy.device, sample.max_new_tokens
        logits, advance = self.start(policy, prompt_ids, steps)
        B, texts = logits.shape[0], policy.token_texts()
        per_row = isinstance(generator, list) and not sample.greedy
        # A generator shared by the batch (or torch's own) is advanced by every step drawn: steps
        # past the reference's last one would change what it draws next, so then the host keeps in
        # step.
        lookahead = self.lookahead if per_row or sample.greedy else 0
        if per_row:  # each row's uniforms up front, as LMPolicy.generate draws them
            uniforms = [torch.rand(steps, generator=g, device=dev) for g in generator]
            uniforms = torch.stack(uniforms)  # (B, steps)
        tokens = torch.zeros((B, steps), dtype=torch.long, device=dev)
        logps, ents = torch.zeros((B, steps), device=dev), torch.zeros((B, steps), device=dev)
        on_host = torch.zeros((steps, B), dtype=torch.long, pin_memory=dev.type == "cuda")
        arrived = []  # per step, on CUDA: an event marking that its tokens have reached the host
        scanners, length, read = [JsonScanner() for _ in range(B)], [0] * B, 0

        def read_step(j: int) -> None:  # the host's bookkeeping of step j, LMPolicy.generate's
            if arrived:
                arrived[j].synchronize()
            for b, t in enumerate(on_host[j].tolist()):
                if not length[b] and (t in policy.stop_ids or scanners[b].feed(texts[t])):
                    length[b] = j + 1  # this turn's action ends with step j's token

        # A generator shared by the batch is torch.multinomial's: drawn by the reference's own code.
        draw = self._draw() if per_row or sample.greedy else sample_next
        for k in range(steps):
            tok, logp, ent = draw(
                logits, sample, uniforms[:, k] if per_row else None, None if per_row else generator
            )
            tokens[:, k], logps[:, k], ents[:, k] = tok, logp, ent
            on_host[k].copy_(tok, non_blocking=True)
            if dev.type == "cuda":
                arrived.append(torch.cuda.Event())
                arrived[-1].record()
            while read <= k - lookahead:
                read_step(read)
                read += 1
            if all(length) or k + 1 == steps:
                break
            logits = advance(tok)
        while read <= k:  # the steps the host has not read yet
            read_step(read)
            read += 1
        return policy.generations(
            prompt_ids, tokens[:, : k + 1], logps[:, : k + 1], ents[:, : k + 1], length
        )


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def folded_state_dict(model) -> dict:
    """The weights of `model` as a plain model of its architecture holds them: for a peft LoRA
    model, each adapted weight is W + s * B @ A, computed in float32; otherwise the model's own."""
    inner = model.get_base_model() if hasattr(model, "get_base_model") else model
    state = {
        k.replace(".base_layer", ""): v for k, v in inner.state_dict().items() if ".lora_" not in k
    }
    for name, module in inner.named_modules():
        adapters = getattr(module, "lora_A", None)
        if adapters is None or not hasattr(module, "base_layer"):
            continue
        weight = module.base_layer.weight.float()
        for a in module.active_adapters:
            if a in adapters:
                weight = weight + module.scaling[a] * (
                    module.lora_B[a].weight.float() @ adapters[a].weight.float()
                )
        state[f"{name}.weight"] = weight
    return state


@torch.no_grad()
def refresh(rollout: LMPolicy, policy: LMPolicy) -> None:
    """Copy the trained weights into the rollout model, in place (its addresses, and so any
    captured graph, stay valid)."""
    if rollout is not policy:
        state = folded_state_dict(policy.model)
        fused = any(isinstance(m, FusedMLP) for m in rollout.model.modules())
        rollout.model.load_state_dict(fused_state_dict(state) if fused else state, strict=True)


def rollout_policy(
    policy: LMPolicy,
    dtype: torch.dtype | None = torch.bfloat16,
    decoder: StaticDecoder | None = None,
    attention: str = GROUPED,
    fused: bool = True,
) -> LMPolicy:
    """The policy that samples: a plain copy of `policy`'s current weights in `dtype` (LoRA folded
    in) with `attention` (GROUPED, or a transformers name such as "sdpa"), decoding with `decoder`;
    `fused`: its projections fused (fuse_projections). dtype None keeps the trained model itself
    (the eager reference)."""
    if dtype is None:
        return LMPolicy(policy.model, policy.tokenizer, policy.name, policy.compute_dtype, decoder)
    from transformers import AutoModelForCausalLM

    inner = (
        policy.model.get_base_model() if hasattr(policy.model, "get_base_model") else policy.model
    )
    config = deepcopy(inner.config)  # from_config writes the dtype and attention into it
    with torch.device(policy.device):
        model = AutoModelForCausalLM.from_config(
            config, dtype=dtype, attn_implementation=attention
        ).eval()
        if fused:
            fuse_projections(model)
    model.requires_grad_(False)
    copy = LMPolicy(
        model,
        policy.tokenizer,
        f"{policy.name} ({str(dtype).removeprefix('torch.')} rollout copy)",
        None,
        decoder,
    )
    refresh(copy, policy)
    return copy


def sampler(policy: LMPolicy, rollout: str) -> LMPolicy:
    """train.py's --rollout: the trained policy itself ("eager"), or a bf16 rollout copy decoding
    over a StaticDecoder ("fast"; "auto": fast on CUDA). Call `refresh` after each update."""
    fast = rollout == "fast" or (rollout == "auto" and policy.device.type == "cuda")
    return rollout_policy(policy, torch.bfloat16, StaticDecoder()) if fast else policy
