"""The speed table's row for bench/train_speed.py: read from its file, the two runs' times and
outcomes in words, the revision it was compared with left to the file (no commit in the text)."""

import json

from bench import report_tables
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
        and "mean |.| 0.03, largest 0.5" in text
    )


def test_the_gpu_line_names_the_settings_its_default_run_had_that_are_no_longer_the_defaults(
    tmp_path,
):
    """The README's GPU line sets the GPU's `python train.py --estimator echo` beside the CPU's cold
    run of as many steps, and names that run's settings that today's defaults no longer have, so the
    command can be played again as it ran; a run of today's defaults names none."""
    import train
    from bench.report_results import gpu_summary

    today = vars(train.TrainConfig())
    older = {
        **today,
        "steps": 40,
        "secrets_per_step": today["secrets_per_step"] + 2,
        "candidate_format": "list",
    }
    cold = {
        "machine": "2 CPU cores",
        "date": "2026-01-01",
        "command": "python bench/train_speed.py --cold",
        "baseline": {"process_wall": 150.0, "train_config": older},
        "current": {"process_wall": 250.0, "train_config": today},
    }
    step = {
        "device": "one GPU",
        "shape": "qwen",
        "config": {"secrets": 16, "group_size": 4, "max_new_tokens": 128, "micro_batch": 32},
        "modes": {},
    }
    run = lambda steps: {
        "runs": [
            {
                "command": "python train.py --estimator echo",
                "steps": steps,
                "final_greedy_resolve": 1.0,
                "final_sampled_resolve": 1.0,
                "process_wall": 200.0,
                "rl_seconds": 180.0,
            }
        ]
    }
    with report_tables.reading(str(tmp_path)):
        line = gpu_summary(step, run(40), cold)
        assert (
            f"40 steps with `--secrets-per-step {older['secrets_per_step']}` "
            "`--candidate-format list`" in line
        )
        assert "beside 150.0 s on" in line and "in 200 s (its steps and evaluations 180 s)" in line
        line = gpu_summary(step, run(today["steps"]), cold)
    assert f"({today['steps']} steps; from an empty cache)" in line and "beside 250.0 s on" in line


def test_a_micro_batch_that_did_not_fit_is_said_so_in_the_speed_row_and_the_gpu_line(tmp_path):
    """bench/gpu_step.py's sweep records a micro-batch out of memory with no timings: the speed
    table and the README's GPU line name it as not fitting and time the others (a setting with the
    update's layers compiled named as such)."""
    from bench.report_results import gpu_summary

    timed = {
        "step_s": 10.5,
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
        "config": {"secrets": 16, "group_size": 4, "max_new_tokens": 128, "micro_batch": "64,96"},
        "modes": {
            "lora/fast/micro-batch-64": timed,
            "lora/fast/micro-batch-64/compiled-update": timed,
            "lora/fast/micro-batch-96": {"out_of_memory": True, "micro_batch": 96},
        },
    }
    (tmp_path / "gpu_step.json").write_text(json.dumps(step))
    runs = {
        "runs": [
            {
                "command": "python train.py --estimator echo",
                "steps": 80,
                "final_greedy_resolve": 1.0,
                "final_sampled_resolve": 1.0,
                "process_wall": 200.0,
                "rl_seconds": 180.0,
            }
        ]
    }
    with report_tables.reading(str(tmp_path)):
        text = "\n".join(section_speed())
        line = gpu_summary(step, runs, None)
    assert (
        "lora/fast/micro-batch-64: 10.5 s per step" in text
        and "lora/fast/micro-batch-96: out of GPU memory" in text
    )
    assert "LoRA (update micro-batch 64) 10.5 s (rollout 4.5 s" in line
    # --compile-update on
    assert "; LoRA (update micro-batch 64) (update's layers compiled) 10.5 s (rollout 4.5 s" in line
    assert "; LoRA (update micro-batch 96) did not fit in the GPU's memory." in line
    # the bench's default, not the sweep's list
    assert "the update in micro-batches of 32 unless named" in line


def test_the_gpu_default_run_is_set_beside_the_cpu_run_of_its_own_code():
    """Where the GPU file and the CPU's cold file record their code, the GPU's default run is set
    beside the cold run of the same revision (the same command then plays the same settings), and
    beside none where neither is of that code."""
    import train
    from bench.report_results import cpu_run_like

    today = vars(train.TrainConfig())
    cold = {
        "baseline_revision": "abc1234",
        "commit": "def5678" + "0" * 33,
        "baseline": {"process_wall": 150.0, "train_config": {**today, "ppo_epochs": 1}},
        "current": {"process_wall": 250.0, "train_config": today},
    }
    default = {"steps": today["steps"]}
    assert cpu_run_like({"commit": "abc1234" + "f" * 33}, default, cold) is cold["baseline"]
    assert cpu_run_like({"commit": "def5678" + "0" * 33}, default, cold) is cold["current"]
    assert cpu_run_like({"commit": "0123456" + "0" * 33}, default, cold) is None
    assert cpu_run_like({}, default, cold) is cold["current"]  # no code recorded: as many steps
    assert cpu_run_like({"commit": "abc1234"}, default, None) is None
