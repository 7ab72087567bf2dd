"""A newcomer's first run of a train.py command the README shows: run as typed, in a fresh process
from an empty cache ($ECHO_CACHE_DIR, so SmolLM2's GGUF file is dequantised and the format warm-up
trained as on a fresh machine), to its end; its wall seconds, its peak resident memory (the
process's own high-water mark: getrusage's ru_maxrss of the child, the weights, the warm-up, the
steps and the evaluations included), its exit status, and from its run directory the warm-up's
record, each step's seconds (rollout, update) and the held-out result.

The kernel's out-of-memory killer ends a process without a word: here it shows as exit status -9
with the peak memory it reached.

    python bench/first_run.py [--train-flags "--model smollm2 --estimator echo --steps 2"] \
        [--before FILE]

`--before` keeps an earlier run's file of this bench (e.g. before a change to the presets) in the
new one, as its "before".
"""

import json
import os
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench.common import RESULTS, save_results
from tools.cli import arg, code_version, parse_config

ROOT = Path(__file__).resolve().parent.parent
README_SMOLLM2 = "--model smollm2 --estimator echo --steps 2"  # README.md's SmolLM2 command


@dataclass
class FirstRunConfig:
    train_flags: str = arg(README_SMOLLM2, "train.py's flags, as the README gives them")
    before: str = arg("", "an earlier run's file of this bench, kept in this one as its 'before'")
    out: str = arg(os.path.join(RESULTS, "first_run_smollm2.json"), "the figures", writes="file")


def run_record(run_dir: Path) -> dict:
    """What the run wrote: its steps' seconds, the warm-up's record, its held-out result and its
    resolved config."""
    rows = [json.loads(line) for line in open(run_dir / "metrics.jsonl")]
    read = lambda name: json.loads((run_dir / name).read_text())  # noqa: E731
    summary = read("summary.json")
    warmup = read("warmup.json") if (run_dir / "warmup.json").exists() else None
    seconds = ("train/seconds_rollout", "train/seconds_update", "train/seconds_per_step")
    return {
        "steps": [{"step": r["step"], **{k: round(r[k], 1) for k in seconds}} for r in rows],
        "warmup": warmup,
        "final_eval": summary.get("final_eval"),
        "train_config": read("train_config.json"),
    }


def first_run(train_flags: str) -> dict:
    """The command run to its end from an empty cache, and what it wrote."""
    with tempfile.TemporaryDirectory(prefix="echo-first-run-") as tmp:
        env = os.environ | {"ECHO_CACHE_DIR": os.path.join(tmp, "cache")}
        argv = [sys.executable, "train.py", *shlex.split(train_flags), "--out", f"{tmp}/runs"]
        start = time.perf_counter()
        done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - start
        peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # Linux: KiB
        runs = sorted(Path(tmp, "runs").glob("*/metrics.jsonl"))
        record = run_record(runs[0].parent) if runs and done.returncode == 0 else {}
    return {
        "typed": f"python train.py {train_flags}",
        "exit_status": done.returncode,
        "wall_seconds": round(wall, 1),
        "peak_gib": round(peak_kib / 2**20, 2),
        "last_lines": done.stdout.strip().splitlines()[-3:] + done.stderr.strip().splitlines()[-3:],
        **record,
    }


def main(argv=None) -> dict:
    cfg = parse_config(FirstRunConfig, argv, description=__doc__.splitlines()[0])
    before = {"before": json.loads(Path(cfg.before).read_text())} if cfg.before else {}
    code = code_version()  # the code the run starts with, not the tree an hour later
    result = before | first_run(cfg.train_flags) | code
    steps = ", ".join(f"{s['train/seconds_per_step']} s" for s in result.get("steps", []))
    print(
        f"{result['typed']}: exit status {result['exit_status']} after {result['wall_seconds']} s, "
        f"peak {result['peak_gib']} GiB resident; steps {steps or 'none'}"
    )
    save_results(result, cfg.out)
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
