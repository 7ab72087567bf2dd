"""Shared test setup: tests import the project's flat modules from the repository root.

In the student version of the project (exercises/build.py) some functions are stubs that raise
NotImplementedError("Exercise N, ..."). A test that runs into one, directly or in a process it
starts, is reported as skipped, "needs exercise N", not failed: the student sees one graded test
per exercise (exercises/grade.py) instead of a wall of failures, and every test that needs no
exercise still has to pass. In the reference no stub exists and this hook never acts.
"""

import os
import re
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

EXERCISE_STUB = re.compile(r"NotImplementedError: Exercise (\d+),")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    found = EXERCISE_STUB.search(report.longreprtext) if report.failed else None
    if found:
        report.outcome = "skipped"
        report.longrepr = (
            str(item.path),
            item.location[1] or 0,
            f"Skipped: needs exercise {found.group(1)}",
        )
