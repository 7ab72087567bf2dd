"""Wall time of a full evaluation: 3 runs x the 20 held-out secrets, tables, logs and figures.

Goal: under 2 minutes on 2 CPU cores, for the reference policies and for the tiny
model (lm/warmup.py). The tiny model's one-time format warm-up is cached before timing starts.
    python bench/eval_speed.py [--suites reference,tiny]
"""

import contextlib
import io
import os
import sys
import tempfile
import time
from dataclasses import dataclass

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import evaluate
from bench.common import RESULTS, save_results
from tools.cli import arg, parse_config

SUITES = {
    "reference": "random,fixed_sequence,greedy_oracle,bayes",
    "tiny": "tiny",
    "tiny+react": "tiny+react",
}
GOAL_S = 120.0


@dataclass
class EvalSpeedConfig:
    suites: str = arg("reference,tiny", f"comma list of {', '.join(SUITES)}")
    out: str = arg(
        os.path.join(RESULTS, "eval_speed.json"), "where the figures are written", writes="file"
    )


def main(argv=None):
    args = parse_config(EvalSpeedConfig, argv, description=__doc__.splitlines()[0])
    results = {}
    for suite in args.suites.split(","):
        policies = SUITES[suite]
        if "tiny" in policies:
            # builds and caches the warm-up if needed: not part of the timing
            evaluate.load_lm("tiny")
        load_before = os.getloadavg()[0]  # other processes on the machine slow the timing down
        with tempfile.TemporaryDirectory() as out, contextlib.redirect_stdout(io.StringIO()):
            start = time.perf_counter()
            tables = evaluate.main(["--policies", policies, "--runs", "3", "--out", out])
            seconds = time.perf_counter() - start
        turns = sum(r["hints"]["Turns"] for r in tables.values())
        results[suite] = {
            "policies": policies,
            "runs": 3,
            "secrets": 20,
            "turns": turns,
            "seconds": round(seconds, 2),
            "goal_seconds": GOAL_S,
            "cpus": os.cpu_count(),
            "load_average_1min": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        }
        print(
            f"{suite:10s} {policies:40s} {turns:5d} turns, 3 runs x 20 secrets: {seconds:6.1f} s "
            f"(goal < {GOAL_S:.0f} s){'' if seconds < GOAL_S else '  OVER GOAL'}; load average "
            f"{load_before:.1f} -> {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
        )
    save_results(results, args.out)


if __name__ == "__main__":
    main(sys.argv[1:])
