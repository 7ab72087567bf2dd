"""Grade the exercises: `python exercises/grade.py`, in the student copy or in the reference.

One line per exercise (number, name, tests passed / total, PASS or FAIL); exit status 0 only
when every exercise passes. Each exercise is graded by its own hand-worked tests,
exercises/tests/test_exNN_*.py, which depend on that exercise alone.

    --instructor-tests DIR   also run DIR/test_exNN_*.py (tests kept out of the student copy)
    --gradescope FILE        also write the results.json that Gradescope autograders read
    --expect fail            exit 0 only when every exercise fails (CI: a fresh student copy)
    -v                       print why each failing test failed
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from exercises.catalog import EXERCISES  # noqa: E402

TEST_FILE = re.compile(r"test_ex(\d+)_\w+\.py$")


class Tally:
    """A pytest plugin: per exercise, the tests run, the tests passed and why the others failed."""

    def __init__(self):
        self.results = {e.number: {"passed": 0, "total": 0, "failures": []} for e in EXERCISES}

    def pytest_runtest_logreport(self, report):
        if report.when != "call" and report.passed:
            return                                  # setup and teardown count only when they fail
        match = TEST_FILE.search(report.location[0])     # the test's file (nodeids of files outside the root lack it)
        if match is None or int(match.group(1)) not in self.results:
            return
        result = self.results[int(match.group(1))]
        result["total"] += 1
        result["passed"] += report.passed
        if report.failed:
            reason = report.longreprtext.strip().splitlines()[-1] if report.longreprtext.strip() else "failed"
            result["failures"].append(f"{report.nodeid.split('::')[-1]}: {reason}")

    def pytest_collectreport(self, report):
        if report.failed:                           # a test file that does not even import
            match = TEST_FILE.search(report.nodeid)
            if match and int(match.group(1)) in self.results:
                result = self.results[int(match.group(1))]
                result["total"] += 1
                result["failures"].append(f"{report.nodeid}: could not be collected")


def test_files(instructor_tests: str | None) -> list[str]:
    files = sorted(str(p) for p in (ROOT / "exercises" / "tests").glob("test_ex*.py"))
    if instructor_tests:
        files += sorted(str(p) for p in Path(instructor_tests).glob("test_ex*.py"))
    return files


def run_tests(files: list[str]) -> dict:
    import pytest
    tally = Tally()
    pytest.main([*files, "-p", "no:terminal", "-p", "no:cacheprovider", "-o", "addopts=", "--rootdir", str(ROOT)],
                plugins=[tally])
    return tally.results


def gradescope(results: dict) -> dict:
    """Gradescope's results.json: one test entry per exercise, scored by the share of its tests passed."""
    tests = []
    for e in EXERCISES:
        r = results[e.number]
        tests.append({"name": f"Exercise {e.number}: {e.name} ({e.paper})", "number": str(e.number),
                      "score": r["passed"], "max_score": r["total"], "visibility": "visible",
                      "output": f"{r['passed']}/{r['total']} tests passed" + "".join(f"\n{f}" for f in r["failures"])})
    return {"score": sum(t["score"] for t in tests), "tests": tests}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    parser.add_argument("--instructor-tests", default=None, help="a directory of extra test_exNN_*.py files")
    parser.add_argument("--gradescope", default=None, help="write Gradescope's results.json here")
    parser.add_argument("--expect", choices=("pass", "fail"), default="pass",
                        help="pass: exit 0 when every exercise passes; fail: when every exercise fails")
    parser.add_argument("-v", "--verbose", action="store_true", help="print why each failing test failed")
    args = parser.parse_args(argv)
    if args.instructor_tests and not Path(args.instructor_tests).is_dir():
        print(f"grade.py: --instructor-tests {args.instructor_tests} is not a directory.", file=sys.stderr)
        return 2
    results = run_tests(test_files(args.instructor_tests))
    for e in EXERCISES:
        r = results[e.number]
        ok = r["total"] > 0 and r["passed"] == r["total"]
        print(f"{e.number:2d}  {e.name:42s} {r['passed']:2d}/{r['total']:<2d}  {'PASS' if ok else 'FAIL'}")
        if args.verbose:
            print("".join(f"      {f}\n" for f in r["failures"]), end="")
    passed = [results[e.number]["total"] > 0 and results[e.number]["passed"] == results[e.number]["total"]
              for e in EXERCISES]
    print(f"{sum(passed)} of {len(EXERCISES)} exercises pass")
    if args.gradescope:
        Path(args.gradescope).write_text(json.dumps(gradescope(results), indent=2) + "\n")
    return 0 if (all(passed) if args.expect == "pass" else not any(passed)) else 1


if __name__ == "__main__":
    sys.exit(main())
