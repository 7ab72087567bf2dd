"""Grading time per submission: the Gradescope bundle's run_autograder on the reference's own
exercise files (a submission that scores 100), timed end to end, several times.

    python bench/grading_time.py [--runs 3] [--bundle DIR] [--save]

Without --bundle it builds one from this checkout (`python exercises/build.py --autograder`, not
timed). As root, as on Gradescope, the submission's code runs as an unprivileged user, with the
interpreter exercises/instructor/unprivileged.py gives. Prints each run's seconds; with --save it
also writes bench/results/grading_time.json: {"runs": [seconds, ...], "median", "score",
"as_root"}, with the command, machine, date and commit (bench/common.save_results). Every file
there must be read by RESULTS.md's report (tests/test_results_claims.py): a saved figure needs its
section in bench/report_tables.py and bench/report_results.py first.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import RESULTS, ROOT, save_results  # noqa: E402

EDITED = ("env.py", "echo.py", "baselines.py", "metrics.py", "theory/return_aliasing.py")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    parser.add_argument("--runs", type=int, default=3, help="gradings timed")
    parser.add_argument("--bundle", default=None, help="a bundle to time (default: build one)")
    parser.add_argument("--save", action="store_true", help="also write the JSON file")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        bundle = Path(args.bundle or Path(tmp) / "bundle")
        if not args.bundle:
            build = [sys.executable, "exercises/build.py", "--autograder", str(bundle)]
            subprocess.run(build, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
        submission = Path(tmp) / "submission"
        for path in EDITED:
            (submission / path).parent.mkdir(parents=True, exist_ok=True)
            (submission / path).write_text((Path(ROOT) / path).read_text())
        flags = []
        if "--submission-python" in (bundle / "autograde.py").read_text():
            python = subprocess.run(
                [sys.executable, "exercises/instructor/unprivileged.py", tmp],
                cwd=ROOT,
                capture_output=True,
                text=True,
                check=True,
            ).stdout.strip()
            flags = ["--submission-python", python]
        seconds, scores = [], []
        for run in range(args.runs):
            results = Path(tmp) / f"results-{run}.json"
            start = time.perf_counter()
            subprocess.run(
                [str(bundle / "run_autograder"), "--submission", str(submission)]
                + ["--results", str(results), *flags],
                env={**os.environ, "AUTOGRADER_PYTHON": sys.executable},
                check=True,
            )
            seconds.append(round(time.perf_counter() - start, 2))
            scores.append(json.loads(results.read_text())["score"])
            print(f"run {run + 1}: {seconds[-1]:.2f} s, score {scores[-1]}")
    figures = {
        "runs": seconds,
        "median": statistics.median(seconds),
        "score": scores[-1],
        "as_root": os.geteuid() == 0,
    }
    print(f"median {figures['median']:.2f} s per submission")
    if args.save:
        save_results(figures, os.path.join(RESULTS, "grading_time.json"))


if __name__ == "__main__":
    main()
