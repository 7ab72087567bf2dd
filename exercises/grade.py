"""Grade the exercises: `python exercises/grade.py`, in the student copy or in the reference.

    python exercises/grade.py          one line per exercise: points, tests passed, PASS or FAIL
    python exercises/grade.py 3 -v     exercise 3 only, and why each of its failing tests failed
    python -m pytest exercises/tests/test_ex03_eq1.py     pytest's own report of exercise 3

Each exercise is graded by its own tests, exercises/tests/test_exNN_*.py, which depend on that
exercise alone, and earns its points (exercises/catalog.py) in proportion to the tests it passes.
A test that runs longer than --timeout seconds fails, and the exercise's later tests are not run.
Once exercises 1-3 and 6-8 pass, one step of `python train.py --estimator echo` runs on the
code being graded ("See it work" in exercises/README.md); --no-train-check skips it.

    --hidden-tests DIR      also run DIR/test_exNN_*.py (the instructor's tests the copy leaves out)
    --gradescope FILE       also write the results.json that Gradescope autograders read
    --expect fail           exit 0 only when every exercise fails (CI: a fresh student copy)
"""

from __future__ import annotations

import argparse
import json
import math
import re
import signal
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
VISIBLE = ROOT / "exercises" / "tests"
sys.path[:0] = [str(ROOT), str(VISIBLE)]
from exercises.catalog import EXERCISES  # noqa: E402

TEST_FILE = re.compile(r"test_ex(\d+)_\w+\.py")
STUB = re.compile(r"NotImplementedError: (Exercise \d+, .*)", re.S)
TRAIN_NEEDS = (1, 2, 3, 6, 7, 8)  # what `train.py --estimator echo` runs of the student's code
TRAIN_CHECK = [
    "--estimator",
    "echo",
    "--steps",
    "1",
    "--secrets-per-step",
    "2",
    "--group-size",
    "2",
    "--eval-every",
    "1",
    "--n-heldout",
    "2",
    "--eval-samples",
    "1",
    "--credit-probe",
    "0",
]


class TestTimeout(BaseException):
    """Raised into a test that ran too long; a BaseException, so `except Exception` cannot swallow it."""


class Tally:
    """A pytest plugin: per exercise, which tests passed (visible and hidden) and why the others failed."""

    def __init__(self, timeout: float):
        self.timeout = timeout
        self.results = {
            e.number: {
                "visible": {},
                "hidden": {},
                "failures": [],
                "stub": None,
                "timed_out": False,
            }
            for e in EXERCISES
        }

    def exercise(self, path) -> dict | None:
        match = TEST_FILE.search(Path(str(path)).name)
        return self.results.get(int(match.group(1))) if match else None

    def pytest_runtest_setup(self, item):
        result = self.exercise(item.path)
        if result and result["timed_out"]:
            pytest.fail("not run: an earlier test of this exercise ran out of time", pytrace=False)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item):
        timed = self.timeout > 0 and hasattr(signal, "setitimer")  # SIGALRM: not on Windows
        if timed:

            def out_of_time(signum, frame):
                raise TestTimeout(
                    f"this test ran longer than {self.timeout:g} s (an endless loop?)"
                )

            signal.signal(signal.SIGALRM, out_of_time)
            signal.setitimer(signal.ITIMER_REAL, self.timeout)
        yield
        if timed:
            signal.setitimer(signal.ITIMER_REAL, 0)

    def pytest_runtest_logreport(self, report):
        if report.when != "call" and report.passed:
            return  # setup and teardown count only when they fail
        path = report.location[0]
        result = self.exercise(path)
        if result is None:
            return
        kind = "visible" if (ROOT / path).resolve().parent == VISIBLE else "hidden"
        test = report.nodeid.split("::")[-1].split("[")[
            0
        ]  # the cases of a parametrized test are one test
        result[kind][test] = result[kind].get(test, True) and report.passed
        if report.failed:
            reason = why(report)
            result["timed_out"] |= reason.startswith("TestTimeout")
            stub = STUB.search(reason)
            if stub:
                result["stub"], reason = stub.group(1).split("\n  at ")[0], "not written yet"
            result["failures"].append((kind, test, reason))

    def pytest_collectreport(self, report):
        if report.failed:  # a test file that does not even import
            result = self.exercise(report.nodeid)
            if result is not None:
                kind = "visible" if (ROOT / report.nodeid).resolve().parent == VISIBLE else "hidden"
                result[kind][report.nodeid] = False
                result["failures"].append(
                    (kind, Path(report.nodeid).name, "could not be imported:\n" + why(report))
                )


def why(report) -> str:
    """The failure in a few lines: expect.py's message as it is; else the exception and the line
    of the project (the student's code) it came from."""
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is None:
        return str(report.longrepr).strip().splitlines()[-1]
    message = crash.message.strip()
    if message.startswith("AssertionError") and Path(crash.path).name == "expect.py":
        return message.removeprefix("AssertionError: ")
    entries = [
        e
        for e in getattr(report.longrepr.reprtraceback, "reprentries", [])
        if getattr(e, "reprfileloc", None)
    ]
    own = [e.reprfileloc for e in entries if inside_project(e.reprfileloc.path)]
    where = own[-1] if own else crash
    return f"{message}\n  at {where.path}:{where.lineno}"


def inside_project(path: str) -> bool:
    p = (ROOT / path).resolve()
    return (
        p.is_relative_to(ROOT)
        and not p.is_relative_to(ROOT / "exercises")
        and ".venv" not in p.parts
    )


def graded_files(numbers, hidden_tests: str | None) -> list[str]:
    folders = [VISIBLE] + ([Path(hidden_tests)] if hidden_tests else [])
    return sorted(
        str(p)
        for folder in folders
        for p in folder.glob("test_ex*.py")
        if int(TEST_FILE.search(p.name).group(1)) in numbers
    )


def run_tests(files: list[str], timeout: float) -> dict:
    tally = Tally(timeout)
    pytest.main(
        [
            *files,
            "-p",
            "no:terminal",
            "-p",
            "no:cacheprovider",
            "-o",
            "addopts=",
            "-W",
            "ignore",
            "--rootdir",
            str(ROOT),
        ],
        plugins=[tally],
    )
    return tally.results


def score(e, r) -> tuple[float, int, int]:
    """(points earned, tests passed, tests run): the points in proportion to the tests passed."""
    outcomes = [*r["visible"].values(), *r["hidden"].values()]
    passed = sum(outcomes)
    return (e.points * passed / len(outcomes) if outcomes else 0.0), passed, len(outcomes)


def feedback(r, kinds=("visible", "hidden")) -> str:
    lines = [
        f"{test}: {reason}"
        for kind, test, reason in r["failures"]
        if kind in kinds and reason != "not written yet"
    ]
    if r["stub"]:
        lines.insert(
            0,
            textwrap.fill(
                "not written yet (the stub still raises). " + r["stub"], 96, subsequent_indent="  "
            ),
        )
    return "\n".join(lines)


def gradescope(results: dict, graded: list, hidden_visibility: str) -> dict:
    """Gradescope's results.json: per graded exercise, one entry for the tests the student sees and
    one for the hidden tests, each with its share of the exercise's points."""
    tests = []
    for e in graded:
        r = results[e.number]
        n = len(r["visible"]) + len(r["hidden"])
        for part, (kind, visibility) in enumerate(
            (("visible", "visible"), ("hidden", hidden_visibility)), 1
        ):
            outcomes = r[kind]
            if not outcomes and (kind == "hidden" or n):
                continue
            share = e.points * len(outcomes) / n if n else e.points
            passed = sum(outcomes.values())
            tests.append(
                {
                    "name": f"Exercise {e.number}: {e.name}"
                    + (" (hidden tests)" if kind == "hidden" else ""),
                    "number": f"{e.number}.{part}",
                    "score": round(share * passed / max(len(outcomes), 1), 2),
                    "max_score": round(share, 2),
                    "visibility": visibility,
                    "output": f"{passed}/{len(outcomes)} tests passed\n" + feedback(r, (kind,)),
                }
            )
    return {"score": round(sum(t["score"] for t in tests), 2), "tests": tests}


def train_check(extra: list[str]) -> str:
    """One step of `python train.py --estimator echo` on the graded code: '' if it ran with a finite
    loss, else what went wrong."""
    with tempfile.TemporaryDirectory() as out:
        try:
            done = subprocess.run(
                [sys.executable, "train.py", *TRAIN_CHECK, *extra, "--out", out],
                cwd=ROOT,
                capture_output=True,
                text=True,
                timeout=1200,
            )
        except subprocess.TimeoutExpired:
            return "train.py ran for over 20 minutes"
        if done.returncode != 0:
            return "train.py stopped:\n" + "\n".join(
                (done.stdout + done.stderr).strip().splitlines()[-12:]
            )
        rows = [
            json.loads(line) for path in Path(out).rglob("metrics.jsonl") for line in path.open()
        ]
        losses = [row["train/loss"] for row in rows if "train/loss" in row]
        if not losses or not all(math.isfinite(x) for x in losses):
            return f"train.py ran, but its loss is {losses or 'missing'}"
    return ""


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    parser.add_argument(
        "numbers", nargs="*", type=int, help="the exercises to grade (default: all)"
    )
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="print why each failing test failed"
    )
    parser.add_argument(
        "--hidden-tests", default=None, help="a directory of more test_exNN_*.py files"
    )
    parser.add_argument("--gradescope", default=None, help="write Gradescope's results.json here")
    parser.add_argument(
        "--hidden-visibility",
        default="after_published",
        choices=("hidden", "after_due_date", "after_published", "visible"),
        help="when Gradescope shows students the hidden tests' results",
    )
    parser.add_argument(
        "--timeout", type=float, default=10.0, help="seconds a test may run (0: no limit)"
    )
    parser.add_argument(
        "--no-train-check", action="store_true", help="skip the one-step train.py run"
    )
    parser.add_argument(
        "--train-flags", default="", help="more train.py flags for that run, e.g. a smaller model"
    )
    parser.add_argument(
        "--expect",
        choices=("pass", "fail"),
        default="pass",
        help="pass: exit 0 when every exercise passes; fail: when every exercise fails",
    )
    args = parser.parse_args(argv)
    known = [e.number for e in EXERCISES]
    if any(n not in known for n in args.numbers):
        parser.error(f"the exercises are numbered {known[0]} to {known[-1]}")
    if args.hidden_tests and not Path(args.hidden_tests).is_dir():
        parser.error(f"--hidden-tests {args.hidden_tests} is not a directory")
    graded = [e for e in EXERCISES if e.number in (args.numbers or known)]
    results = run_tests(graded_files({e.number for e in graded}, args.hidden_tests), args.timeout)
    passed = {}
    for e in graded:
        r = results[e.number]
        points, n_passed, n = score(e, r)
        passed[e.number] = n > 0 and n_passed == n
        print(
            f"{e.number:2d}  {e.name:42s} {points:5.1f}/{e.points:<3d}points  {n_passed:2d}/{n:<2d}tests  "
            f"{'PASS' if passed[e.number] else 'FAIL'}"
        )
        if args.verbose and not passed[e.number]:
            print(textwrap.indent(feedback(r), "      "))
    total = sum(score(e, results[e.number])[0] for e in graded)
    print(
        f"{sum(passed.values())} of {len(graded)} exercises pass; {total:.1f} of {sum(e.points for e in graded)} points"
        + (
            ""
            if args.verbose or all(passed.values())
            else "; `python exercises/grade.py N -v` says why exercise N fails"
        )
    )
    if args.gradescope:
        Path(args.gradescope).write_text(
            json.dumps(gradescope(results, graded, args.hidden_visibility), indent=2) + "\n"
        )
    if all(passed.get(n, False) for n in TRAIN_NEEDS) and not args.no_train_check:
        print(
            "See it work: exercises 1-3 and 6-8 pass, so one step of `python train.py --estimator echo` runs on "
            "your code (the first time, the tiny model's format warm-up takes a few minutes; it is cached) ..."
        )
        trouble = train_check(args.train_flags.split())
        print(
            "  "
            + (
                trouble.replace("\n", "\n  ")
                if trouble
                else "it trained: your belief update, reward, Eq. 1, Eq. 2, KL and metrics work in the real loop. "
                "Now run `python train.py --estimator echo`."
            )
        )
    ok = all(passed.values()) if args.expect == "pass" else not any(passed.values())
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
