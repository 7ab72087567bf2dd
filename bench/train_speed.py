"""The RL phase of one train.py run, `python train.py --estimator echo [--train-flags]`, timed
for a revision you name and for the working tree, in one bench run on one machine, with the
outcome of each (held-out resolve; steps to 90%, sampled and greedy, each only where measured).

The runs' metric rows are compared step for step, every logged number but the timings
(`identical_rows`, `first_difference`): a change meant to change no behaviour plays the same run.

The revision is checked out with `git worktree` into a temporary directory and run with this
interpreter; both runs get the same command line and start from a cached format warm-up (each
builds its own once, not timed), so the figure is the RL phase: the sum of the logged seconds per
step. With --cold each run starts instead from an empty cache of its own ($ECHO_CACHE_DIR), so its
process time is what a newcomer's first `python train.py` takes: the warm-up, the RL steps, and
everything around them. The same flags can still mean different settings where the two revisions'
defaults differ: each run's saved train_config.json is compared, and the fields that differ are
written with the figures (a speed-up between different settings is not a speed-up of the code).

    python bench/train_speed.py --baseline REVISION [--estimator echo] \\
        [--train-flags "--steps 40"] [--cold]
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench.common import RESULTS, save_results
from tools.cli import arg, fail, parse_config

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@dataclass
class TrainSpeedConfig:
    baseline: str = arg("", "git revision to compare the working tree with (required)")
    estimator: str = arg("echo", "estimator of both runs")
    seed: int = arg(0, "seed of both runs")
    train_flags: str = arg("", "more train.py flags, the same for both runs")
    cold: bool = arg(
        False,
        "each run from an empty warm-up cache of its own: the process time is the whole first run",
    )
    out: str = arg(
        os.path.join(RESULTS, "train_speed.json"), "where the figures are written", writes="file"
    )


def first_reaching(evals: list, index: int):
    """The first evaluated step whose resolve (index 1: greedy, 2: sampled) reaches 0.9; None if
    none does or the revision did not measure it."""
    return next((e[0] for e in evals if e[index] is not None and e[index] >= 0.9), None)


def run(code_dir: str, out_dir: str, cfg: TrainSpeedConfig) -> dict:
    """One train.py run in code_dir; its RL seconds, outcome and saved config, from its own logs."""
    cmd = [
        sys.executable,
        "train.py",
        "--estimator",
        cfg.estimator,
        "--seed",
        str(cfg.seed),
        "--out",
        out_dir,
        *cfg.train_flags.split(),
    ]
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("OMP_NUM_THREADS", "OMP_WAIT_POLICY", "GOMP_SPINCOUNT")
    }
    if cfg.cold:
        # empty: this run builds its own warm-up
        env["ECHO_CACHE_DIR"] = os.path.join(out_dir, "cache")
    else:
        warm = cmd + ["--steps", "1", "--run-name", "warm"]  # last, so they win over --train-flags
        # builds the warm-up cache
        subprocess.run(warm, cwd=code_dir, env=env, check=True, capture_output=True)
    start = time.perf_counter()
    subprocess.run(cmd, cwd=code_dir, env=env, check=True, capture_output=True)
    wall = time.perf_counter() - start
    run_dir = next(
        d
        for d in sorted(os.listdir(out_dir))
        if d not in ("warm", "cache") and not d.startswith("warm-")
    )
    run_dir = os.path.join(out_dir, run_dir)
    rows = [json.loads(line) for line in open(os.path.join(run_dir, "metrics.jsonl"))]
    saved = os.path.join(run_dir, "train_config.json")
    evals = [
        (r["step"], r["eval/resolve_rate"], r.get("eval/sampled_resolve_rate"))
        for r in rows
        if "eval/resolve_rate" in r
    ]
    return {
        "command": " ".join(["python", *cmd[1:]]).replace(out_dir, "OUT"),
        "rl_seconds": round(sum(r["train/seconds_per_step"] for r in rows), 1),
        "process_wall": round(wall, 1),
        "final_greedy_resolve": evals[-1][1],
        "final_sampled_resolve": evals[-1][2],
        "steps_to_90_sampled": first_reaching(evals, 2),
        "steps_to_90_greedy": first_reaching(evals, 1),
        "evaluations": evals,
        "train_config": json.load(open(saved)) if os.path.exists(saved) else None,
        "rows": [{k: v for k, v in r.items() if "seconds" not in k} for r in rows],
    }


def first_difference(a: list[dict], b: list[dict]) -> dict | None:
    """Where two runs' metric rows first differ, every logged number but the timings compared
    exactly (NaN equal to NaN): {step, names}; None where they agree step for step."""
    same = lambda x, y: x == y or (x != x and y != y)  # noqa: E731
    for row_a, row_b in zip(a, b):
        names = sorted(k for k in set(row_a) | set(row_b) if not same(row_a.get(k), row_b.get(k)))
        if names:
            return {"step": row_a.get("step"), "names": names}
    return None if len(a) == len(b) else {"step": min(len(a), len(b)) + 1, "names": ["(steps)"]}


def config_differences(a: dict | None, b: dict | None) -> dict | None:
    """{field: [baseline value, current value]} where the two saved configs differ (None if either
    is missing)."""
    if a is None or b is None:
        return None
    ignore = {"out", "run_name", "presets"}
    return {
        k: [a.get(k), b.get(k)]
        for k in sorted(set(a) | set(b))
        if k not in ignore and a.get(k) != b.get(k)
    }


def main(argv=None):
    cfg = parse_config(TrainSpeedConfig, argv, description=__doc__.splitlines()[0])
    if not cfg.baseline:
        fail(
            "train_speed.py",
            "give the revision to compare with, e.g. --baseline HEAD~5 (a commit, tag or branch).",
        )
    tmp = tempfile.mkdtemp(prefix="echo-train-speed-")
    worktree = os.path.join(tmp, "baseline")
    if (
        subprocess.run(
            ["git", "worktree", "add", "--detach", worktree, cfg.baseline],
            cwd=ROOT,
            capture_output=True,
        ).returncode
        != 0
    ):
        shutil.rmtree(tmp, ignore_errors=True)
        fail(
            "train_speed.py",
            f"git cannot check out --baseline {cfg.baseline!r}: give a commit, tag or branch of "
            "this repository.",
        )
    try:
        results = {
            "baseline_revision": cfg.baseline,
            "estimator": cfg.estimator,
            "seed": cfg.seed,
            "train_flags": cfg.train_flags,
            "cold": cfg.cold,
            "baseline": run(worktree, os.path.join(tmp, "runs-baseline"), cfg),
            "current": run(ROOT, os.path.join(tmp, "runs-current"), cfg),
        }
    finally:
        subprocess.run(
            ["git", "worktree", "remove", "--force", worktree], cwd=ROOT, capture_output=True
        )
        shutil.rmtree(tmp, ignore_errors=True)
    results["config_differences"] = config_differences(
        results["baseline"]["train_config"], results["current"]["train_config"]
    )
    # the same settings, so a speed-up of the code
    results["like_for_like"] = results["config_differences"] == {}
    # a change that should change no behaviour (a refactor) plays the same run, number for number
    rows = [results[side].pop("rows") for side in ("baseline", "current")]
    results["first_difference"] = first_difference(*rows)
    results["identical_rows"] = results["first_difference"] is None
    results["speedup"] = round(
        results["baseline"]["rl_seconds"] / results["current"]["rl_seconds"], 2
    )
    for side in ("baseline", "current"):
        r = results[side]
        sampled = (
            "not measured"
            if r["final_sampled_resolve"] is None
            else f"{r['final_sampled_resolve']:.2f}"
        )
        print(
            f"{side:9s} RL phase {r['rl_seconds']:6.1f} s (process {r['process_wall']:.0f} s): "
            f"held-out resolve greedy {r['final_greedy_resolve']:.2f}, sampled {sampled}; "
            f"steps to 90%: sampled {r['steps_to_90_sampled']}, greedy {r['steps_to_90_greedy']}"
        )
    differences = results["config_differences"]
    if differences:
        print(
            "the two runs' settings differ (each revision's defaults), "
            "so this is not a like-for-like timing: "
            + ", ".join(f"{k} {a} vs {b}" for k, (a, b) in differences.items())
        )
    elif differences is None:
        print(
            "one revision saves no train_config.json: check by hand that both ran the same settings"
        )
    print(f"RL phase, baseline / current: {results['speedup']:.2f}x")
    difference = results["first_difference"]
    print(
        "every logged number but the timings, step for step: "
        + ("identical" if difference is None else f"differs first at {difference}")
    )
    save_results(results, cfg.out)


if __name__ == "__main__":
    main(sys.argv[1:])
