"""The speed tables (bench/report_speed.py): bench/LAB.md's row for bench/train_speed.py, read
from its file, the two runs' times and outcomes in words, the revision it was compared with left
to the file (no commit in the text); a GPU run's row; and RESULTS.md's GPU tables and the README's
GPU line, which say what the files show (the defaults of the code measured, the top-p sampled,
the micro-batches that fit, a timeout as a timeout)."""

import json
import subprocess
from pathlib import Path

from test_results_claims import commit_all

from bench import report_tables
from bench.common import code_version
from bench.report_speed import section_speed


def test_a_cold_train_speed_file_is_one_row_naming_both_runs(tmp_path):
    side = lambda wall, greedy: {
        "rl_seconds": wall / 2,
        "process_wall": wall,
        "final_greedy_resolve": greedy,
        "final_sampled_resolve": 1.0,
    }
    data = {
        "command": "python bench/train_speed.py --baseline 0123abc --cold",
        "machine": "2 CPU cores",
        "date": "2026-01-01",
        "estimator": "echo",
        "train_flags": "",
        "cold": True,
        "like_for_like": False,
        "config_differences": {"universe": [None, "full"]},
        "baseline_revision": "0123abc",
        "baseline": side(130.0, 0.0),
        "current": side(162.0, 1.0),
    }
    (tmp_path / "train_speed_cold.json").write_text(json.dumps(data))
    with report_tables.reading(str(tmp_path)):
        text = "\n".join(section_speed())
    assert (
        "`python bench/train_speed.py --baseline REVISION --cold`" in text and "0123abc" not in text
    )
    assert "the whole run from an empty warm-up cache (settings that differ: universe)" in text
    assert (
        "an older revision (the file names it) 130.0 s, held-out resolve greedy 0.00, sampled 1.00"
        in text
    )
    assert "the code measured 162.0 s, held-out resolve greedy 1.00" in text


def test_device_runs_summarise_a_metrics_file_and_fill_one_speed_row(tmp_path):
    """bench/device_runs.py on hand-made metrics rows: sums, median, fastest, the first evaluated
    step at 90%, the per-action drift; the speed table shows them in one row."""
    from bench.device_runs import summarise

    rows = [
        {
            "step": 1,
            "train/seconds_per_step": 10.0,
            "train/behaviour_action_log_ratio_mean_abs": 0.02,
            "train/behaviour_action_log_ratio_max_abs": 0.5,
        },
        {
            "step": 2,
            "train/seconds_per_step": 2.0,
            "eval/resolve_rate": 0.5,
            "eval/sampled_resolve_rate": 0.95,
            "train/behaviour_action_log_ratio_mean_abs": 0.04,
            "train/behaviour_action_log_ratio_max_abs": 0.1,
        },
        {
            "step": 3,
            "train/seconds_per_step": 3.0,
            "eval/resolve_rate": 1.0,
            "eval/sampled_resolve_rate": 1.0,
        },
    ]
    r = summarise("default", "python train.py --estimator echo", 20.0, rows)
    assert (r["steps"], r["rl_seconds"], r["median_step_seconds"], r["fastest_step_seconds"]) == (
        3,
        15.0,
        3.0,
        2.0,
    )
    assert (r["final_greedy_resolve"], r["steps_to_90_sampled"], r["steps_to_90_greedy"]) == (
        1.0,
        2,
        3,
    )
    assert (
        r["behaviour_action_log_ratio_mean_abs"] == 0.03
        and r["behaviour_action_log_ratio_max_abs"] == 0.5
    )
    data = {
        "runs": [r],
        "machine": "one GPU",
        "date": "2026-01-01",
        "command": "python train.py --estimator echo",
    }
    (tmp_path / "train_gpu.json").write_text(json.dumps(data))
    with report_tables.reading(str(tmp_path)):
        text = "\n".join(section_speed())
    assert (
        "(default): 3 steps, 20 s the whole command, RL phase 15.0 s (median step 3.0 s, "
        "fastest 2.0 s)" in text
    )
    assert (
        "held-out resolve greedy 1.00, sampled 1.00" in text
        and "mean \\|.\\| 0.03, largest 0.5" in text
    )


def gpu_files(tmp_path: Path, version: dict, note: str | None) -> None:
    """A GPU step file (LoRA at micro-batches 32, 64 and 80, the last the fastest, 96 out of
    memory; full fine-tuning at 32) and the tiny default run's file, both measured at `version`."""

    def timed(step_s):
        return {
            "step_s": step_s,
            "rollout_s": 4.5,
            "scoring_s": 1.7,
            "update_s": 4.3,
            "prefill_s": 0.4,
            "decode_s": 4.0,
            "decode_tokens_per_s": 20000.0,
            "percent_of_bandwidth_bound": 46.0,
            "batched_generated_tokens_per_s": 1.0,
            "peak_gpu_memory_gb": 51.5,
        }

    step = {
        "device": "one GPU",
        "shape": "qwen",
        "command": "python bench/gpu_step.py",
        "machine": "m",
        "date": "d",
        "config": {
            "secrets": 16,
            "group_size": 4,
            "max_new_tokens": 128,
            "micro_batch": "32,64,80,96",
        },
        "modes": {
            "full/fast": timed(13.0),
            "lora/fast": timed(15.0),
            "lora/fast/micro-batch-64": timed(10.5),
            "lora/fast/micro-batch-80": timed(9.9),
            "lora/fast/micro-batch-96": {"out_of_memory": True, "micro_batch": 96},
        },
        **version,
    }
    (tmp_path / "gpu_step.json").write_text(json.dumps(step))
    run = {
        "name": "default",
        "command": "python train.py --estimator echo",
        "steps": 80,
        "final_greedy_resolve": 1.0,
        "final_sampled_resolve": 1.0,
        "process_wall": 370.0,
        "rl_seconds": 299.9,
        "median_step_seconds": 1.8,
        "fastest_step_seconds": 1.3,
        "behaviour_action_log_ratio_mean_abs": 0.01,
        "behaviour_action_log_ratio_max_abs": 0.3,
    }
    runs = {"runs": [run], "machine": "one GPU", "date": "d", "command": run["command"], **version}
    (tmp_path / "train_gpu_default.json").write_text(
        json.dumps({**runs, "note": note} if note else runs)
    )


def gpu_line(summary: list[str]) -> str:
    """The README summary's line of the GPU."""
    (line,) = [x for x in summary if x.startswith("- **On one")]
    return line


def test_the_gpu_line_says_what_the_files_show(tmp_path):
    """Files whose recorded train.py defaults (train_defaults) were 2 passes of Eq. 2 and top-p
    1.0: the README's GPU line and the speed section name those defaults where today's differ,
    the top-p the step sampled at, the fastest LoRA setting that fit (micro-batch 80) and the one
    that did not (96), the section only the fastest of each setting; where the run's file says
    its wall is the timeout it ran under, the line gives the time the run printed, not the
    timeout as a time, and the section's table both."""
    import config
    from bench.report_results import readme_summary
    from bench.report_speed import section_speed_claim

    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "train.py").write_text("VALUE = 1\n")
    commit_all(repo, "code")
    today = config.TrainConfig()
    note = (
        "process_wall equals the timeout it ran under (370 s): the run had printed its last line "
        "('done in 301 s', its time after the warm-up)"
    )
    then = {"train_defaults": {"steps": 80, "ppo_epochs": 2, "top_p": 1.0}, "llm_preset": {}}
    gpu_files(tmp_path, {**code_version(str(repo)), **then}, note)
    with report_tables.reading(str(tmp_path), str(repo)):
        line, text = gpu_line(readme_summary()), section_speed_claim()
        text = "\n".join(text)
    moved = [
        f"`--{k} {v}`"
        for k, v, now in (("ppo-epochs", 2, today.ppo_epochs), ("top-p", 1.0, today.top_p))
        if v != now
    ]
    assert (f"at code whose defaults were {', '.join(moved)}" in line) == bool(moved)
    assert "printed done in 301 s after its warm-up" in line and "in 370 s" not in line
    assert (
        "top-p 1.0: fastest LoRA 9.9 s (micro-batch 80)" in line
        and "LoRA at 96 did not fit" in line
    )
    assert "full fine-tuning 13.0 s (micro-batch 32)" in line
    assert "| LoRA | one GPU | 80 | 9.9 | 4.5 / 1.7 / 4.3 | 20,000 (46%) | 51.5 | 1.0 |" in text
    # per GPU and setting the fastest that fit; the others, and what did not fit, are LAB.md's
    assert "| LoRA | one GPU | 64 |" not in text and "out of the GPU's memory" not in text
    assert (
        "| not measured (370 s is the timeout it ran under; the run printed done in 301 s" in text
    )
    gpu_files(tmp_path, code_version(str(repo)), None)
    with report_tables.reading(str(tmp_path), str(repo)):
        line = gpu_line(readme_summary())
    assert "in 370 s, the whole command" in line and "timeout" not in line
