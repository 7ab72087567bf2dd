"""The README's test command runs the suite on every core (`pytest -n auto`, pytest-xdist): each
worker keeps to its own share of the cores (conftest.share_of_cores), so that torch, which sizes
its threads to the cores a process may run on, never puts two workers' threads on one core."""

import os

import pytest
from conftest import CORES, SLOWEST_FILES, share_of_cores


def test_workers_split_the_cores_between_them_and_each_core_has_one():
    cores = [0, 1, 2, 3, 4]
    shares = [share_of_cores(cores, f"gw{i}", 2) for i in range(2)]
    assert shares == [[0, 2, 4], [1, 3]]
    assert share_of_cores([3, 7], "gw1", 2) == [7]  # the cores' own numbers, not their places


def test_more_workers_than_cores_share_them_all():
    assert share_of_cores([0, 1], "gw2", 3) == [0, 1]


@pytest.mark.skipif(
    not os.environ.get("PYTEST_XDIST_WORKER") or not CORES,
    reason="runs only inside a pytest-xdist worker",
)
def test_this_worker_runs_on_its_share_alone():
    worker = os.environ["PYTEST_XDIST_WORKER"]
    workers = int(os.environ["PYTEST_XDIST_WORKER_COUNT"])
    assert os.sched_getaffinity(0) == set(share_of_cores(CORES, worker, workers))


def test_the_slowest_files_are_handed_out_first(request):
    """The session's tests begin with SLOWEST_FILES' tests, file by file in that order, and each
    file's tests stay together; under xdist its reorder by number of tests is off, so the workers
    are handed files in this order."""
    files = [item.path.name for item in request.session.items]
    present = [name for name in SLOWEST_FILES if name in files]
    blocks = [name for i, name in enumerate(files) if i == 0 or files[i - 1] != name]
    assert blocks[: len(present)] == present and len(blocks) == len(set(files))
    if hasattr(request.config.option, "loadscopereorder"):
        assert request.config.option.loadscopereorder is False
