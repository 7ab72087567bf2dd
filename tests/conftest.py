"""Shared test setup: tests import the project's flat modules from the repository root, and under
pytest-xdist each worker keeps to its own share of the cores (`share_of_cores`).

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


def share_of_cores(cores: list[int], worker: str, workers: int) -> list[int]:
    """The cores pytest-xdist's worker `worker` ("gw0", "gw1", ...) of `workers` keeps to: every
    workers-th core from its own index on; all of them where there are more workers than cores."""
    if workers > len(cores):
        return cores
    return cores[int(worker.removeprefix("gw")) :: workers]


# Under pytest-xdist (`pytest -n auto`, the README's test command) each worker keeps to its own
# share of the cores, and so do the processes its tests start: torch sizes its threads to the
# cores it may run on (tools.cli.use_threads), and two processes' threads on the same two cores
# each run about 1.7x slower (bench/threads.py).
CORES = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
if os.environ.get("PYTEST_XDIST_WORKER") and CORES:
    os.sched_setaffinity(
        0,
        share_of_cores(
            CORES,
            os.environ["PYTEST_XDIST_WORKER"],
            int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")),
        ),
    )

# pytest-xdist (`--dist loadfile`) hands each worker whole files, by default the files with the
# most tests first. The slowest files hold a few long tests (whole training runs, the kit's bundle),
# so they came last and kept one worker busy after the other had finished; they go first instead,
# in this order, and the rest keep theirs. A name no longer here changes nothing.
SLOWEST_FILES = (
    "test_train.py",
    "test_ranks.py",
    "test_exercise_autograder.py",
    "test_phrasings.py",
    "test_engine.py",
)


def pytest_configure(config):
    if hasattr(config.option, "loadscopereorder"):  # xdist's option: files by number of tests
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(items):
    first = {name: i for i, name in enumerate(SLOWEST_FILES)}
    items.sort(key=lambda item: first.get(item.path.name, len(first)))  # a stable sort


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
