"""train.py runs made on another machine (a GPU one, reached through a copy of the repository),
summarised from what it sent back: each run's metrics.jsonl, the command that ran it and the
wall seconds of that command, given here, since this machine saw none of them run.

For each run: its steps, the sum of its logged seconds per step (the RL phase, evaluations
included), the median and the fastest step (a step that meets a new decode shape compiles it: on
a GPU the fastest is a step without compilation), the held-out resolve of its last evaluation
(greedy and sampled), the first evaluated step at 90% (sampled, greedy), and how far the sampling
copy's log-probabilities were from pi_old's (train/behaviour_action_log_ratio_*: per action, what
Eq. 2's rho sees; the mean over steps of each step's mean, and the largest). The file records the
machine, date and commit given for the runs, this script's own command, and this script's bytes
(as `uncommitted`, git's hash of the file: the figures are also its work, and the report marks
them when what it runs changes).

    python bench/device_runs.py --machine "one NVIDIA H100 80GB HBM3 GPU" --date 2026-11-26 \\
        --commit HASH \\
        --runs "NAME|python train.py --estimator echo|WALL_SECONDS|PATH/metrics.jsonl;;..." \\
        [--out FILE]
"""

import json
import os
import statistics
import subprocess
import sys
from dataclasses import dataclass

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench.common import RESULTS, command_line, save_results
from bench.train_speed import first_reaching
from tools.cli import arg, fail, parse_config


@dataclass
class DeviceRunsConfig:
    runs: str = arg(
        "", "the runs, each NAME|COMMAND|WALL_SECONDS|METRICS_JSONL, separated by ';;' (required)"
    )
    machine: str = arg("", "the machine the runs ran on, in words (required)")
    date: str = arg("", "the date they ran (required)")
    commit: str = arg("", "the commit of the code they ran (required)")
    note: str = arg("", "anything else a reader needs to know about how they ran")
    out: str = arg(
        os.path.join(RESULTS, "train_gpu.json"), "where the summary is written", writes="file"
    )


def summarise(name: str, command: str, wall: float, rows: list[dict]) -> dict:
    """One run's figures from its metrics rows (train.py's metrics.jsonl, one row per step)."""
    evals = [
        (r["step"], r["eval/resolve_rate"], r.get("eval/sampled_resolve_rate"))
        for r in rows
        if "eval/resolve_rate" in r
    ]
    drift = [
        r["train/behaviour_action_log_ratio_mean_abs"]
        for r in rows
        if "train/behaviour_action_log_ratio_mean_abs" in r
    ]
    largest = [
        r["train/behaviour_action_log_ratio_max_abs"]
        for r in rows
        if "train/behaviour_action_log_ratio_max_abs" in r
    ]
    step_s = [r["train/seconds_per_step"] for r in rows]
    return {
        "name": name,
        "command": command,
        "process_wall": wall,
        "steps": len(rows),
        "rl_seconds": round(sum(step_s), 1),
        "median_step_seconds": round(statistics.median(step_s), 2),
        "fastest_step_seconds": round(min(step_s), 2),
        "final_greedy_resolve": evals[-1][1] if evals else None,
        "final_sampled_resolve": evals[-1][2] if evals else None,
        "steps_to_90_sampled": first_reaching(evals, 2),
        "steps_to_90_greedy": first_reaching(evals, 1),
        "evaluations": evals,
        "behaviour_action_log_ratio_mean_abs": round(statistics.fmean(drift), 4) if drift else None,
        "behaviour_action_log_ratio_max_abs": round(max(largest), 4) if largest else None,
    }


def parse_run(text: str) -> tuple[str, str, float, str]:
    parts = text.split("|")
    if len(parts) != 4:
        fail("device_runs.py", f"--runs: {text!r} is not NAME|COMMAND|WALL_SECONDS|METRICS_JSONL.")
    name, command, wall, path = parts
    if not os.path.exists(path):
        fail("device_runs.py", f"--runs: {name}'s {path} does not exist.")
    return name, command, float(wall), path


def main(argv=None):
    cfg = parse_config(DeviceRunsConfig, argv, description=__doc__.splitlines()[0])
    if not (cfg.runs and cfg.machine and cfg.date and cfg.commit):
        fail("device_runs.py", "give --runs, and the --machine, --date and --commit they ran on.")
    runs = []
    for name, command, wall, path in [parse_run(t.strip()) for t in cfg.runs.split(";;")]:
        rows = [json.loads(line) for line in open(path)]
        runs.append(summarise(name, command, wall, rows))
        r = runs[-1]
        print(
            f"{name}: {r['steps']} steps, RL phase {r['rl_seconds']} s (process {wall:.0f} s), "
            f"median step {r['median_step_seconds']} s; held-out resolve greedy "
            f"{r['final_greedy_resolve']}, sampled {r['final_sampled_resolve']}; "
            f"per-action |log rho_copy| mean {r['behaviour_action_log_ratio_mean_abs']}, "
            f"largest {r['behaviour_action_log_ratio_max_abs']}"
        )
    here = os.path.relpath(
        os.path.abspath(__file__), os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    )
    # the runs' code is the commit's; the figures are also this script's
    summariser = {
        here: subprocess.run(
            ["git", "hash-object", __file__], capture_output=True, text=True
        ).stdout.strip()
        or None
    }
    save_results(
        {
            "runs": runs,
            "machine": cfg.machine,
            "date": cfg.date,
            "commit": cfg.commit,
            "uncommitted": summariser,
            "note": cfg.note,
            "summarised_by": command_line(argv, __file__),
        },
        cfg.out,
        command="; ".join(r["command"] for r in runs),
    )


if __name__ == "__main__":
    main(sys.argv[1:])
