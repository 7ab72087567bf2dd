"""Grade the exercises: `python exercises/grade.py`, in the student copy or in the reference.

    python exercises/grade.py          one line per exercise: points, tests passed, PASS or FAIL
    python exercises/grade.py 3 -v     exercise 3 only, and why each of its failing tests failed
    python -m pytest exercises/tests/test_ex03_eq1.py     pytest's own report of exercise 3

Each exercise is graded by its own tests, exercises/tests/test_exNN_*.py, which depend on that
exercise alone, in a process of its own (exercises/runner.py): a file that does not import costs
only the exercises whose tests import it, and the feedback names it. This process never imports
the code it grades: it reads what each test computed and compares it with what was expected
(exercises/judge.py). An exercise earns its points (exercises/catalog.py) in proportion to the
tests it passes. A test that runs longer than --timeout seconds fails, and the exercise's later
tests are not run. Once exercises 1-3 and 6-8 pass, one step of `python train.py --estimator echo`
runs on the code being graded ("See it work" in exercises/README.md); --no-train-check skips it.

    --hidden-tests DIR      also run DIR/test_exNN_*.py (the instructor's tests the copy leaves out)
    --expected FILE         the expected values the hidden tests' checks are held to (the kit's
                            build records them from the reference)
    --gradescope FILE       also write the results.json that Gradescope autograders read
    --expect fail           exit 0 only when every exercise fails (CI: a fresh student copy)
"""

from __future__ import annotations

import argparse
import json
import math
import re
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from exercises import harness, judge  # noqa: E402
from exercises.catalog import EXERCISES  # noqa: E402

TEST_FILE = re.compile(r"test_ex(\d+)_\w+\.py")
TRAIN_NEEDS = (1, 2, 3, 6, 7, 8)  # what `train.py --estimator echo` runs of the student's code
TRAIN_CHECK = "--estimator echo --steps 1 --secrets-per-step 2 --group-size 2 --eval-every 1"
TRAIN_CHECK += " --n-heldout 2 --eval-samples 1 --credit-probe 0"


def test_files(folder: Path, kind: str, numbers) -> dict:
    """{exercise: [(kind, path)]} of the test_exNN_*.py files in folder, for these exercises."""
    found = {}
    for path in sorted(folder.glob("test_ex*.py")):
        n = int(TEST_FILE.search(path.name).group(1))
        if n in numbers:
            found.setdefault(n, []).append((kind, path.resolve()))
    return found


def grade(
    root: Path,
    jobs: dict,
    expected: dict | None = None,
    *,
    python: str = sys.executable,
    uid: int | None = None,
    timeout: float = 10.0,
    exercise_timeout: float = 60.0,
) -> tuple[dict, dict]:
    """Run and judge: ({exercise: [Verdict]}, {exercise: the stub's message}). The tests are
    those of the files in `jobs`, or, with `expected`, those it holds values for."""
    lines = harness.run(
        root, jobs, python=python, uid=uid, test_timeout=timeout, exercise_timeout=exercise_timeout
    )
    verdicts, stubs = {}, {}
    for n, files in jobs.items():
        if expected is None:
            tests = judge.listed_tests(files)
        else:
            tests = [t for t in expected if t.split("::")[0] in _ids(files)]
        verdicts[n], stubs[n] = judge.judge(tests, lines.get(n, []), expected)
    return verdicts, stubs


def _ids(files) -> set:
    return {f"{kind}/{Path(path).name}" for kind, path in files}


def train_check(extra: list[str]) -> str:
    """One step of `python train.py --estimator echo` on the graded code: '' if it ran with a finite
    loss, else what went wrong."""
    with tempfile.TemporaryDirectory() as out:
        try:
            done = subprocess.run(
                [sys.executable, "train.py", *TRAIN_CHECK.split(), *extra, "--out", out],
                cwd=ROOT,
                capture_output=True,
                text=True,
                timeout=1200,
            )
        except subprocess.TimeoutExpired:
            return "train.py ran for over 20 minutes"
        if done.returncode != 0:
            tail = (done.stdout + done.stderr).strip().splitlines()[-12:]
            return "train.py stopped:\n" + "\n".join(tail)
        rows = [
            json.loads(line) for path in Path(out).rglob("metrics.jsonl") for line in path.open()
        ]
        losses = [row["train/loss"] for row in rows if "train/loss" in row]
        if not losses or not all(math.isfinite(x) for x in losses):
            return f"train.py ran, but its loss is {losses or 'missing'}"
    return ""


def flag_parser() -> argparse.ArgumentParser:
    """grade.py's command line: the exercises to grade and the flags of the module docstring."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    add = parser.add_argument
    add("numbers", nargs="*", type=int, help="the exercises to grade (default: all)")
    add("-v", "--verbose", action="store_true", help="print why each failing test failed")
    add("--hidden-tests", default=None, help="a directory of more test_exNN_*.py files")
    add("--expected", default=None, help="the expected values of the hidden tests (JSON)")
    add("--gradescope", default=None, help="write Gradescope's results.json here")
    add(
        "--hidden-visibility",
        default="after_published",
        choices=("hidden", "after_due_date", "after_published", "visible"),
        help="when Gradescope shows students the hidden tests' results",
    )
    add("--timeout", type=float, default=10.0, help="seconds a test may run (0: no limit)")
    add("--no-train-check", action="store_true", help="skip the one-step train.py run")
    add("--train-flags", default="", help="more train.py flags for that run, e.g. a smaller model")
    add(
        "--expect",
        choices=("pass", "fail"),
        default="pass",
        help="pass: exit 0 when every exercise passes; fail: when every exercise fails",
    )
    return parser


def print_scores(graded, verdicts, stubs, verbose: bool) -> tuple[dict, float]:
    """Print one line per graded exercise (points, tests passed, PASS or FAIL), with verbose
    also why its failing tests failed. Returns ({exercise: passed}, the points earned)."""
    passed, total = {}, 0.0
    for e in graded:
        points, n_passed, n = judge.score(e.points, verdicts.get(e.number, []))
        total += points
        passed[e.number] = n > 0 and n_passed == n
        verdict = "PASS" if passed[e.number] else "FAIL"
        print(
            f"{e.number:2d}  {e.name:42s} {points:5.1f}/{e.points:<3d}points  "
            f"{n_passed:2d}/{n:<2d}tests  {verdict}"
        )
        if verbose and not passed[e.number]:
            text = judge.feedback(verdicts.get(e.number, []), stubs.get(e.number, ""))
            print(textwrap.indent(text, "      "))
    return passed, total


def print_summary(graded, passed: dict, total: float, verbose: bool) -> None:
    """The closing line: exercises passed and points earned, and how to ask why one failed."""
    summary = f"{sum(passed.values())} of {len(graded)} exercises pass; {total:.1f} of "
    summary += f"{sum(e.points for e in graded)} points"
    if not (verbose or all(passed.values())):
        summary += "; `python exercises/grade.py N -v` says why exercise N fails"
    print(summary)


def see_it_work(extra: list[str]) -> None:
    """Train one step on the graded code, say how it went ("See it work", exercises/README.md)."""
    print(
        "See it work: exercises 1-3 and 6-8 pass, so one step of `python train.py --estimator "
        "echo` runs on your code (the first time, the tiny model's format warm-up takes under "
        "a minute on 2 cores; it is cached) ..."
    )
    trouble = train_check(extra)
    print(
        "  "
        + (
            trouble.replace("\n", "\n  ")
            if trouble
            else "it trained: your belief update, reward, Eq. 1, Eq. 2, KL and metrics work in "
            "the real loop. Now run `python train.py --estimator echo`."
        )
    )


def main(argv=None) -> int:
    parser = flag_parser()
    args = parser.parse_args(argv)
    known = [e.number for e in EXERCISES]
    if any(n not in known for n in args.numbers):
        parser.error(f"the exercises are numbered {known[0]} to {known[-1]}")
    if args.hidden_tests and not Path(args.hidden_tests).is_dir():
        parser.error(f"--hidden-tests {args.hidden_tests} is not a directory")
    if args.hidden_tests and not args.expected:
        parser.error("--hidden-tests needs --expected: the hidden tests' values are held there")
    graded = [e for e in EXERCISES if e.number in (args.numbers or known)]
    numbers = {e.number for e in graded}
    jobs = test_files(ROOT / "exercises" / "tests", "visible", numbers)
    if args.hidden_tests:
        for n, files in test_files(Path(args.hidden_tests), "hidden", numbers).items():
            jobs.setdefault(n, []).extend(files)
    expected = json.loads(Path(args.expected).read_text())["tests"] if args.expected else None
    timeout = args.timeout if args.timeout > 0 else 1e9
    verdicts, stubs = grade(ROOT, jobs, expected, timeout=timeout)
    passed, total = print_scores(graded, verdicts, stubs, args.verbose)
    print_summary(graded, passed, total, args.verbose)
    if args.gradescope:
        report = judge.gradescope(graded, verdicts, stubs, args.hidden_visibility)
        Path(args.gradescope).write_text(json.dumps(report, indent=2) + "\n")
    if all(passed.get(n, False) for n in TRAIN_NEEDS) and not args.no_train_check:
        see_it_work(args.train_flags.split())
    ok = all(passed.values()) if args.expect == "pass" else not any(passed.values())
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
