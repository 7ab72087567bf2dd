"""bfloat16 products on a CPU that has no bfloat16 arithmetic: float32 kernels on the same operands.

Not in the paper, which trains on GPUs; this is how a `--precision bf16` run computes on a CPU
without a bf16 dot product in hardware (no avx512_bf16 or amx_bf16: tools.cli.cpu_computes_bf16).
There torch's own bf16 kernels convert every operand in software: on an AVX2 CPU SmolLM2's
warm-up batch took 19.5 times as long in bf16 as in fp32 (bench/results/cpu_precision.json), so a
bf16 run begun on a CPU that has it could not go on on one that has not.

Under bf16 autocast a linear layer rounds its operands to bf16 and returns a bf16 result, summed in
float32; its backward pass computes the gradients the same way. `linear_in_fp32` keeps that
contract and changes only the kernel: it widens the bf16 operands to float32 (exactly: every bf16
value is a float32 value), runs the float32 product, and rounds the result to bf16; autograd, going
back through the same casts, rounds the gradients to bf16 where autocast's would be. Autocast still
decides what else computes in bf16 and what in float32, and the weights stay as they are (a LoRA
run's frozen base in bf16), so the run computes the same function at the same precision. What
differs from a CPU with bf16 arithmetic: the float32 kernel sums a product's terms in another
order, so a few results round to the neighbouring bf16 value (tests/test_bf16.py bounds how
few). Through many layers those few grow: on SmolLM2's 30 a token's log-prob lies about as far
from torch's bf16 kernels' as float32's does (bench/results/bf16_kernels.json), since bf16's
roundings move it by that much and another summation order draws them anew. What is kept is
bf16's precision, its weights and autocast's choices, not its bits. Attention keeps
torch's bf16 kernel and its roundings, which a float32 attention would not make (its softmax
weights are rounded to bf16 before they multiply the values); its backward pass is the slower for
it.
"""

from types import MethodType

import torch
import torch.nn.functional as F
from torch import nn


def widened(x: torch.Tensor) -> torch.Tensor:
    """x rounded to bf16 (autocast's cast of a float32 operand), in float32."""
    return x.to(torch.bfloat16).float()


def linear_in_fp32(layer: nn.Linear, x: torch.Tensor) -> torch.Tensor:
    """`layer(x)` as bf16 autocast computes it, from a float32 product (the layer's forward once
    `compute_bf16_in_fp32` has set it); outside autocast, the layer's own."""
    if not torch.is_autocast_enabled(x.device.type):
        return F.linear(x, layer.weight, layer.bias)
    bias = None if layer.bias is None else widened(layer.bias)
    with torch.autocast(x.device.type, enabled=False):
        y = F.linear(widened(x), frozen_widened(layer), bias)
    return y.to(torch.bfloat16)


def frozen_widened(layer: nn.Linear) -> torch.Tensor:
    """The layer's weight, widened; a frozen one (a LoRA base's) widened once and kept, since
    otherwise a decode step would copy every weight to float32 again."""
    weight = layer.weight
    if weight.requires_grad:
        return widened(weight)
    kept = getattr(layer, "widened_weight", None)
    if kept is None or kept[0] != weight._version:  # never widened, or written to since
        kept = layer.widened_weight = (weight._version, widened(weight))
    return kept[1]


def compute_bf16_in_fp32(model: nn.Module) -> nn.Module:
    """`model` with each linear layer computing its bf16 products in float32 (`linear_in_fp32`):
    lm.models.load_policy calls it for a bf16 policy on a CPU without bf16 arithmetic."""
    for module in model.modules():
        if isinstance(module, nn.Linear):
            module.forward = MethodType(linear_in_fp32, module)
    return model


def torch_bf16_kernels(model: nn.Module) -> nn.Module:
    """`model` with its linear layers computing through torch's own kernels again (what
    `compute_bf16_in_fp32` is compared with: tests/test_bf16.py, bench/bf16_kernels.py)."""
    for module in model.modules():
        if isinstance(module, nn.Linear):
            module.__dict__.pop("forward", None)
    return model


def computes_bf16_in_fp32(model: nn.Module) -> bool:
    """Whether `compute_bf16_in_fp32` has set `model`'s linear layers."""
    return any(
        getattr(m.forward, "__func__", None) is linear_in_fp32
        for m in model.modules()
        if isinstance(m, nn.Linear)
    )
