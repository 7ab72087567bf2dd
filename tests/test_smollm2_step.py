"""bench/smollm2_step.py's floor (`--floor`): the step's matrix-product operations counted, the same
step played again from the same weights, and the rate of the model's products on these cores. Run
here on the tiny model with a small batch; bench/results/smollm2_step_floor.json is SmolLM2's."""

import json

import pytest
import torch

from bench import smollm2_step


def test_counting_counts_a_layers_products_forward_and_backward():
    """A linear layer's forward (2mnk), its backward (two products of that size) and one more
    product: exactly their operations, under the phase's name; nothing is kept without a dict."""
    x = torch.randn(64, 128, requires_grad=True)
    layer = torch.nn.Linear(128, 32, bias=False)
    counts = {}
    with smollm2_step.counting(counts, "update"):
        layer(x).sum().backward()
        x.detach() @ x.detach().T
    assert counts == {
        "update": {
            "aten.mm": pytest.approx((3 * 2 * 64 * 128 * 32 + 2 * 64 * 128 * 64) / 1e9, abs=1e-3)
        }
    }
    with smollm2_step.counting(None, "update"):
        layer(x)


def test_the_floor_plays_the_timed_step_again_and_times_every_shape(tmp_path):
    """The counted step plays the timed step's episodes (its weights restored), both phases have
    operations, every projection shape has a rate, and no evaluation or warm-up phase runs."""
    out = tmp_path / "floor.json"
    smollm2_step.main(
        ["--floor", "--rate-seconds", "0.05", "--out", str(out), "--train-flags",
         "--model tiny --secrets-per-step 2 --group-size 2 --max-new-tokens 16"]
    )  # fmt: skip
    d = json.loads(out.read_text())
    floor = d["floor"]
    assert floor["same_episodes"] is True
    assert floor["gflop"]["rollout"]["aten.mm"] > 0
    assert set(floor["product_rates"]) == {
        "attention q/o",
        "attention k/v",
        "MLP up",
        "MLP down",
        "head",
    }
    assert all(rate > 0 for rate in floor["product_rates"].values())
    assert floor["product_rows"] == round(
        d["mean_prompt_tokens"]
    )  # the tiny model's passes are unbounded
    assert set(d["phases"]) == {"rollout", "scoring", "update"} and "eval_resolve" not in d
