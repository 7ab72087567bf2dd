"""lm/bf16.py: bf16 products computed in float32 kernels compute what torch's bf16 kernels compute
under autocast (the reference: those kernels, which are exact on any CPU, only slow without bf16
arithmetic), forward and backward, in a layer and in a whole LoRA policy."""

import json

import pytest
import torch
from torch import nn

import lm.models
from bench import bf16_kernels
from lm.bf16 import (
    compute_bf16_in_fp32,
    computes_bf16_in_fp32,
    linear_in_fp32,
    torch_bf16_kernels,
)
from lm.models import LoraConfig

BF16_ULP = 2.0**-7  # the spacing of bf16 values in [1, 2): 7 stored mantissa bits


def layer_pass(layer: nn.Linear, x: torch.Tensor, patched: bool):
    """(output, input gradient, weight gradient) of `layer` under bf16 autocast."""
    x = x.clone().requires_grad_()
    layer.zero_grad()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = linear_in_fp32(layer, x) if patched else layer(x)
    y.float().square().sum().backward()
    return y, x.grad, layer.weight.grad


def test_a_linear_layer_computes_what_bf16_autocast_computes_forward_and_backward():
    """Output, input gradient and weight gradient in the dtypes autocast gives them, each result
    torch's bf16 kernel's to the last bit but where the two sum in another order (fewer than 1%
    of the entries, none by more than a bf16 spacing of the largest); float32 operands are rounded
    to bf16 first, as autocast rounds them (left unrounded, 42% of the outputs differ)."""
    torch.manual_seed(0)
    layer = nn.Linear(256, 96)
    x = torch.randn(64, 256)
    ours = layer_pass(layer, x, patched=True)
    reference = layer_pass(layer, x, patched=False)
    for a, b in zip(ours, reference):
        assert a.dtype == b.dtype
        assert (a == b).float().mean() > 0.99
        assert (a.float() - b.float()).abs().max() <= BF16_ULP * b.float().abs().max()
    assert reference[0].dtype == torch.bfloat16 and reference[2].dtype == torch.float32


def test_outside_autocast_a_patched_layer_is_the_plain_layer():
    """Without autocast nothing is rounded: the float32 layer's own output, bit for bit."""
    torch.manual_seed(0)
    layer, x = nn.Linear(32, 8), torch.randn(4, 32)
    assert torch.equal(linear_in_fp32(layer, x), layer(x))


def test_a_frozen_weight_is_widened_once_and_again_after_it_is_written_to():
    """A frozen bf16 weight's float32 copy is kept between calls, and replaced once the weight is
    written to in place (a rollout copy refreshed with the trained weights)."""
    torch.manual_seed(0)
    layer = nn.Linear(16, 4, bias=False).to(torch.bfloat16).requires_grad_(False)
    compute_bf16_in_fp32(layer)
    x = torch.randn(2, 16)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        before = layer(x)
        kept = layer.widened_weight[1]
        assert torch.equal(layer(x), before) and layer.widened_weight[1] is kept
        with torch.no_grad():
            layer.weight.mul_(2)
        assert torch.equal(layer(x), 2 * before)


@pytest.mark.parametrize("hardware", [True, False])
def test_load_policy_computes_bf16_in_fp32_only_on_a_cpu_without_bf16(monkeypatch, hardware):
    """A bf16 policy on a CPU without bf16 arithmetic gets float32 kernels; on one with it, and
    in fp32, torch's own."""
    monkeypatch.setattr(lm.models, "cpu_computes_bf16", lambda: hardware)
    bf16 = lm.models.load_policy("tiny", "cpu", "bf16")
    assert computes_bf16_in_fp32(bf16.model) is not hardware
    assert not computes_bf16_in_fp32(lm.models.load_policy("tiny", "cpu", "fp32").model)
    assert not computes_bf16_in_fp32(torch_bf16_kernels(bf16.model))


def test_a_lora_policy_scores_as_under_torch_bf16_kernels(monkeypatch):
    """The tiny LoRA policy's log-probs of fixed actions and its adapters' gradients agree with
    torch's bf16 kernels' far more closely than float32's do: the same precision, computed
    otherwise. (Through SmolLM2's 30 layers the few results rounded otherwise grow until the
    gap is float32's: bench/results/bf16_kernels.json.)"""
    monkeypatch.setattr(lm.models, "cpu_computes_bf16", lambda: False)
    lora = LoraConfig(rank=8, alpha=16, dropout=0.0)
    prompts, actions = [[1, 5, 9, 13, 17] * 6, [2, 6, 10, 14] * 5], [[3, 4, 5, 6], [8, 9]]

    def scored(precision: str, kernels=lambda model: model):
        torch.manual_seed(0)
        policy = lm.models.load_policy("tiny", "cpu", precision, lora=lora)
        kernels(policy.model)
        logp, _ = policy.score(prompts, actions)
        logp.sum().backward()
        grads = [p.grad.flatten() for p in policy.model.parameters() if p.requires_grad]
        return logp.detach(), torch.cat(grads)

    ours, reference = scored("bf16"), scored("bf16", torch_bf16_kernels)
    wide = scored("fp32")

    def gap(a):
        return (a[0] - reference[0]).abs().max(), (a[1] - reference[1]).norm()

    assert all(o < w / 4 for o, w in zip(gap(ours), gap(wide)))


def test_the_bench_finds_bf16_in_fp32_kernels_nearer_torch_bf16_kernels_than_fp32(tmp_path):
    """bench/bf16_kernels.py on the tiny model: the gaps of both ways to torch's bf16 kernels, the
    float32 kernels' the smaller, and both pieces timed in each precision."""
    result = bf16_kernels.main(["--model", "tiny", "--repeats", "1", "--out", str(tmp_path / "k")])
    ours, wide = (result["agreement"][way] for way in bf16_kernels.WAYS[1:])
    assert result["agreement"]["tokens"] > 0
    assert all(0 <= ours[k] < wide[k] for k in ours)
    assert set(result["precisions"]) == {"fp32", "bf16"}
    assert json.loads((tmp_path / "k").read_text())["bf16_over_fp32"] == result["bf16_over_fp32"]
