"""The Gradescope autograder end to end: `python exercises/build.py --autograder DIR` writes what
Gradescope runs, and its run_autograder, given a submission, always writes a results.json that
scores the submitted exercise files alone: a reference submission gets full points, edited tests
change nothing, an endless loop costs only its exercise."""

import json
import os
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from exercises import build
from exercises.catalog import EXERCISES
from exercises.instructor import answers

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = all(build.BEGIN in (ROOT / s.path).read_text() for e in EXERCISES for s in e.stubs)
pytestmark = pytest.mark.skipif(
    not REFERENCE, reason="the student copy: the kit is built from the reference"
)
EDITED = sorted({s.path for e in EXERCISES for s in e.stubs})
TOTAL = sum(e.points for e in EXERCISES)


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    out = tmp_path_factory.mktemp("autograder") / "bundle"
    done = subprocess.run(
        [sys.executable, "exercises/build.py", "--autograder", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    assert done.returncode == 0, done.stderr
    return out


def submit(bundle: Path, tmp_path: Path, files: dict, *flags) -> dict:
    """Write a submission of {path: text}, run run_autograder on it, return results.json."""
    submission, results = tmp_path / "submission", tmp_path / "results" / "results.json"
    for path, text in files.items():
        (submission / path).parent.mkdir(parents=True, exist_ok=True)
        (submission / path).write_text(text)
    subprocess.run(
        [
            str(bundle / "run_autograder"),
            "--submission",
            str(submission),
            "--results",
            str(results),
            *flags,
        ],
        env={**os.environ, "AUTOGRADER_PYTHON": sys.executable, "OMP_NUM_THREADS": "1"},
        timeout=600,
        check=True,
    )
    return json.loads(results.read_text())


def reference_files(folder: str = "") -> dict:
    return {f"{folder}{path}": (ROOT / path).read_text() for path in EDITED}


def by_exercise(report: dict) -> dict:
    """{exercise: (score, max_score)} over its entries (visible and hidden tests)."""
    totals = {}
    for test in report["tests"]:
        n = int(test["number"].split(".")[0])
        score, top = totals.get(n, (0.0, 0.0))
        totals[n] = (round(score + test["score"], 2), round(top + test["max_score"], 2))
    return totals


def with_answer(tmp_path: Path, answer) -> dict:
    """The reference's files with the functions of `answer` (a tuple) planted over their own."""
    for path in EDITED:
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / path, tmp_path / path)
    answers.plant(tmp_path, answer)
    return {path: (tmp_path / path).read_text() for path in EDITED}


def test_the_bundle_holds_what_gradescope_runs(bundle):
    """setup.sh and run_autograder at the zip's root, executable; setup.sh installs CPU-only torch
    at requirements.txt's pin, then the pins; the student copy inside holds no instructor file and
    the hidden tests leave out their answers."""
    with zipfile.ZipFile(bundle / "autograder.zip") as z:
        names = set(z.namelist())
    assert {"setup.sh", "run_autograder", "autograde.py", "student/exercises/grade.py"} <= names
    assert any(n.startswith("hidden/test_ex03_") for n in names)
    assert not any(n.startswith(("student/exercises/instructor", "student/.ci")) for n in names)
    assert not any(
        "RIGHT = " in (bundle / "hidden" / n).read_text() for n in os.listdir(bundle / "hidden")
    )
    for script in ("setup.sh", "run_autograder"):
        assert (bundle / script).stat().st_mode & stat.S_IXUSR
    setup = (bundle / "setup.sh").read_text()
    torch_pin = next(
        line
        for line in (ROOT / "requirements.txt").read_text().splitlines()
        if line.startswith("torch==")
    )
    assert f"--index-url https://download.pytorch.org/whl/cpu {torch_pin}" in setup
    assert "pip install -r /autograder/source/student/requirements.txt" in setup


def test_a_reference_submission_scores_full_points(bundle, tmp_path):
    """The reference's files, uploaded in a folder (return_aliasing.py flat beside them): 100 of
    100, every exercise full, visible and hidden entries with their visibility."""
    files = reference_files("echo-main/")
    files["return_aliasing.py"] = files.pop("echo-main/theory/return_aliasing.py")
    report = submit(bundle, tmp_path, files)
    assert report["score"] == pytest.approx(TOTAL, abs=0.05), report
    assert all(score == top for score, top in by_exercise(report).values())
    assert {n: top for n, (_, top) in by_exercise(report).items()} == pytest.approx(
        {e.number: e.points for e in EXERCISES}, abs=0.02
    )
    assert {t["visibility"] for t in report["tests"]} == {"visible", "after_published"}
    assert "not found" not in report["output"]


def test_edited_tests_change_nothing(bundle, tmp_path):
    """Exercise 3 wrong (population std) and its tests, conftest.py and grade.py edited to pass
    everything: scored exactly as the same exercise files without the edits (exercise 3 short of
    full)."""
    files = with_answer(tmp_path / "planted", answers.wrong(3)[0])
    plain = submit(bundle, tmp_path / "plain", files)
    edited = submit(
        bundle,
        tmp_path / "edited",
        {
            **files,
            "exercises/tests/test_ex03_eq1.py": "def test_fine():\n    pass\n",
            "exercises/tests/conftest.py": (
                "import pytest\n\n@pytest.hookimpl(hookwrapper=True)\n"
                "def pytest_runtest_makereport(item, call):\n"
                "    outcome = yield\n    outcome.get_result().outcome = 'passed'\n"
            ),
            "exercises/grade.py": "print('all pass')\n",
        },
    )
    assert by_exercise(edited) == by_exercise(plain)
    assert by_exercise(plain)[3][0] < by_exercise(plain)[3][1]
    assert all(s == t for n, (s, t) in by_exercise(plain).items() if n != 3)


def test_an_endless_loop_costs_only_its_exercise(bundle, tmp_path):
    """group_normalize never returns: its test runs out of time, exercise 3 scores 0 with the
    reason, every other exercise scores full, and results.json is written."""
    files = reference_files()
    files["echo.py"] = files["echo.py"].replace(
        "    v, m = values.double(), active.bool()\n", "    while True:\n        pass\n", 1
    )
    report = submit(bundle, tmp_path, files, "--test-timeout", "2")
    assert by_exercise(report)[3][0] == 0 and all(
        s == t for n, (s, t) in by_exercise(report).items() if n != 3
    )
    assert "ran longer than 2 s" in next(
        t["output"] for t in report["tests"] if t["number"] == "3.1"
    )


@pytest.mark.slow
def test_a_loop_that_swallows_the_timeout_still_ends(bundle, tmp_path):
    """A loop that catches every exception outlives the per-test limit: the grading of all exercises
    is stopped, each is graded on its own, exercise 3 scores 0 as unfinished, the others full."""
    files = reference_files()
    files["echo.py"] = files["echo.py"].replace(
        "    v, m = values.double(), active.bool()\n",
        "    while True:\n        try:\n            while True:\n"
        "                pass\n        except BaseException:\n"
        "            pass\n",
        1,
    )
    report = submit(
        bundle,
        tmp_path,
        files,
        "--test-timeout",
        "2",
        "--grading-timeout",
        "15",
        "--exercise-timeout",
        "8",
    )
    assert by_exercise(report)[3][0] == 0 and all(
        s == t for n, (s, t) in by_exercise(report).items() if n != 3
    )
    assert "exercises 3 did not finish" in report["output"]
