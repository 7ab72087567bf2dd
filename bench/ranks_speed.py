"""Steps per minute of train.py on 1 and 2 ranks (torchrun, tools/ranks.py): the first `steps` steps
of the default run, on the CPU with one thread per rank, and on the GPU when there is one (one GPU:
one rank; NCCL cannot put two ranks on one device).

    python bench/ranks_speed.py [--steps 6] [--ranks 1,2]
"""

import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench.common import RESULTS, save_results
from tools.cli import arg, parse_config

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@dataclass
class RanksSpeedConfig:
    steps: int = arg(6, "training steps timed (from the start of the default run)")
    ranks: str = arg("1,2", "comma list of rank counts on the CPU, one thread each ('': none)")
    gpu: bool = arg(True, "also one rank on the GPU, if there is one")
    out: str = arg(
        os.path.join(RESULTS, "ranks_speed.json"), "where the figures are written", writes="file"
    )


def run(ranks: int, device: str, steps: int, out: str) -> dict:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    launcher = (
        [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", str(ranks)]
        if ranks > 1
        else [sys.executable]
    )
    flags = [
        "--steps",
        str(steps),
        "--eval-every",
        "1000",
        "--eval-samples",
        "0",
        "--credit-probe",
        "0",
        "--save-every",
        "1000",
        "--out",
        out,
        "--run-name",
        f"{device}-{ranks}",
        "--device",
        device,
        "--threads",
        "1" if device == "cpu" else "0",
    ]
    # the warm-up cache, untimed
    subprocess.run(
        [
            *launcher,
            "train.py",
            "--steps",
            "1",
            "--out",
            out,
            "--run-name",
            f"warm-{device}-{ranks}",
            "--device",
            device,
        ],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
    )
    start = time.perf_counter()
    subprocess.run(
        [*launcher, "train.py", *flags], cwd=ROOT, env=env, check=True, capture_output=True
    )
    wall = time.perf_counter() - start
    rows = [
        json.loads(line) for line in open(os.path.join(out, f"{device}-{ranks}", "metrics.jsonl"))
    ]
    seconds = sum(r["train/seconds_rollout"] + r["train/seconds_update"] for r in rows)
    return {
        "ranks": ranks,
        "device": device,
        "steps": len(rows),
        "play_and_update_seconds": round(seconds, 1),
        "steps_per_minute": round(60 * len(rows) / seconds, 2),
        "process_wall": round(wall, 1),
    }


def main(argv=None):
    cfg = parse_config(RanksSpeedConfig, argv, description=__doc__.splitlines()[0])
    import torch

    results = {"steps": cfg.steps, "runs": []}
    with tempfile.TemporaryDirectory() as out:
        plans = [(int(r), "cpu") for r in cfg.ranks.split(",") if r.strip()]
        if cfg.gpu and torch.cuda.is_available():
            plans.append((1, "cuda"))
        for ranks, device in plans:
            r = run(ranks, device, cfg.steps, out)
            results["runs"].append(r)
            print(
                f"{device} x {ranks} rank(s): {r['steps']} steps, {r['play_and_update_seconds']} s "
                f"of play and update: {r['steps_per_minute']} steps/min",
                flush=True,
            )
    if torch.cuda.is_available():
        results["gpu"] = (
            torch.cuda.get_device_name()
            + f" (one GPU: {torch.cuda.device_count()} device(s), so one rank)"
        )
    save_results(results, cfg.out)


if __name__ == "__main__":
    main(sys.argv[1:])
