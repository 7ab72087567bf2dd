"""The Gradescope autograder end to end: `python exercises/build.py --autograder DIR` writes what
Gradescope runs, and its run_autograder, given a submission, always writes a results.json that
scores the submitted exercise files alone: a reference submission gets full points; edited tests,
a broken file, an endless loop cost nothing beyond the exercises they touch; and a submission
that tampers with the grading (rewrites the results, patches pytest or the kit's checks, prints
the hidden tests) gains nothing from it. Run as root, as Gradescope runs it, the submission's
code runs as an unprivileged user; the tests that need that are skipped otherwise."""

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import pytest

from exercises import build
from exercises.catalog import EXERCISES
from exercises.instructor import answers, unprivileged

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = all(build.BEGIN in (ROOT / s.path).read_text() for e in EXERCISES for s in e.stubs)
pytestmark = pytest.mark.skipif(
    not REFERENCE, reason="the student copy: the kit is built from the reference"
)
EDITED = sorted({s.path for e in EXERCISES for s in e.stubs})
TOTAL = sum(e.points for e in EXERCISES)
AS_ROOT = os.geteuid() == 0
needs_root = pytest.mark.skipif(not AS_ROOT, reason="the user separation needs root")


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


@pytest.fixture(scope="module")
def submission_python():
    """An interpreter with this one's packages that the unprivileged user can run."""
    folder = Path(tempfile.mkdtemp(prefix="submission-python-"))
    yield unprivileged.interpreter(folder)
    shutil.rmtree(folder, ignore_errors=True)


def submit(bundle: Path, tmp_path: Path, files: dict, python: str, *flags) -> dict:
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
            "--submission-python",
            python,
            *flags,
        ],
        env={**os.environ, "AUTOGRADER_PYTHON": sys.executable, "OMP_NUM_THREADS": "1"},
        timeout=600,
        check=True,
    )
    return json.loads(results.read_text())


def reference_files(folder: str = "") -> dict:
    return {f"{folder}{path}": (ROOT / path).read_text() for path in EDITED}


def stubbed_files(bundle: Path) -> dict:
    """The student copy's files as handed out: every stub unwritten."""
    return {path: (bundle / "student" / path).read_text() for path in EDITED}


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
    """setup.sh and run_autograder at the zip's root, executable; setup.sh installs a Python of
    3.11 or newer and only CPU-only torch and numpy at requirements.txt's pins; the student copy
    holds no instructor file; the hidden tests hold no reference code and no expected value, and
    the visible tests are graded from copies whose every check expects HELD."""
    with zipfile.ZipFile(bundle / "autograder.zip") as z:
        names = set(z.namelist())
    assert {"setup.sh", "run_autograder", "autograde.py", "secret/expected.json"} <= names
    assert {"student/exercises/grade.py", "student/exercises/runner.py"} <= names
    assert any(n.startswith("secret/hidden/test_ex03_") for n in names)
    assert not any(n.startswith(("student/exercises/instructor", "student/.ci")) for n in names)
    for script in ("setup.sh", "run_autograder"):
        assert (bundle / script).stat().st_mode & stat.S_IXUSR
    setup = (bundle / "setup.sh").read_text()
    pins = dict(
        line.split("==")
        for line in (ROOT / "requirements.txt").read_text().splitlines()
        if "==" in line and not line.startswith("#")
    )
    installs = [line for line in setup.splitlines() if "pip install" in line]
    assert installs[0].endswith(f"torch=={pins['torch']}") and "--index-url" in installs[0]
    assert 'TORCH_INDEX_URL:-https://download.pytorch.org/whl/cpu}"' in setup
    assert installs[1].split("pip install ")[1].split() == [f"numpy=={pins['numpy']}"]
    assert "python3.11" in setup and "sys.version_info < (3, 11)" in setup
    for test in (bundle / "secret" / "hidden").glob("*.py"):
        text = test.read_text()
        assert "HELD" in text and "def by_" not in text and "RIGHT" not in text, test.name
    for test in (bundle / "secret" / "visible").glob("*.py"):
        calls = [n for n in ast_calls(test.read_text()) if n.func.id == "check"]
        assert calls and all(getattr(c.args[1], "id", None) == "HELD" for c in calls), test.name


def ast_calls(text: str) -> list:
    import ast

    return [
        n
        for n in ast.walk(ast.parse(text))
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
    ]


def test_a_reference_submission_scores_full_points(bundle, tmp_path, submission_python):
    """The reference's files, uploaded in a folder (return_aliasing.py flat beside them): 100 of
    100, every exercise full, visible and hidden entries with their visibility."""
    files = reference_files("echo-main/")
    files["return_aliasing.py"] = files.pop("echo-main/theory/return_aliasing.py")
    report = submit(bundle, tmp_path, files, submission_python)
    assert report["score"] == pytest.approx(TOTAL, abs=0.05), report
    assert all(score == top for score, top in by_exercise(report).values())
    assert {n: top for n, (_, top) in by_exercise(report).items()} == pytest.approx(
        {e.number: e.points for e in EXERCISES}, abs=0.02
    )
    assert {t["visibility"] for t in report["tests"]} == {"visible", "after_published"}
    assert "not found" not in report["output"]


def test_edited_tests_change_nothing(bundle, tmp_path, submission_python):
    """Exercise 3 wrong (population std) and its tests, conftest.py and grade.py edited to pass
    everything: scored exactly as the same exercise files without the edits (exercise 3 short of
    full)."""
    files = with_answer(tmp_path / "planted", answers.wrong(3)[0])
    plain = submit(bundle, tmp_path / "plain", files, submission_python)
    edited = submit(
        bundle,
        tmp_path / "edited",
        {
            **files,
            "exercises/tests/test_ex03_eq1.py": "def test_fine():\n    pass\n",
            "exercises/tests/expect.py": "def check(*args, **kwargs):\n    pass\n",
            "exercises/grade.py": "print('all pass')\n",
        },
        submission_python,
    )
    assert by_exercise(edited) == by_exercise(plain)
    assert by_exercise(plain)[3][0] < by_exercise(plain)[3][1]
    assert all(s == t for n, (s, t) in by_exercise(plain).items() if n != 3)


def test_a_broken_file_costs_only_the_exercises_that_import_it(bundle, tmp_path, submission_python):
    """The reference with one line of env.py broken: exercises 1 and 2 (env.py's own) score 0 and
    their feedback names env.py and the error's first line; every other exercise keeps its full
    points (metrics.py, exercise 8's, does not import env.py)."""
    files = reference_files()
    lines = files["env.py"].split("\n")
    broken = next(i for i, line in enumerate(lines) if line.startswith("def update_belief("))
    lines[broken] = "def update_belief(candidates frozenset):"
    files["env.py"] = "\n".join(lines)
    report = submit(bundle, tmp_path, files, submission_python)
    scores = by_exercise(report)
    assert [n for n, (s, t) in scores.items() if s < t] == [1, 2], scores
    assert all(scores[n][0] == 0 for n in (1, 2))
    for n in (1, 2):
        output = next(t["output"] for t in report["tests"] if t["number"] == f"{n}.1")
        assert f"env.py: SyntaxError: invalid syntax (line {broken + 1})" in output, output


def test_an_endless_loop_costs_only_its_exercise(bundle, tmp_path, submission_python):
    """group_normalize never returns: its test runs out of time, exercise 3 loses its points with
    the reason, every other exercise scores full, and results.json is written."""
    files = reference_files()
    files["echo.py"] = files["echo.py"].replace(
        "    v, m = values.double(), active.bool()\n", "    while True:\n        pass\n", 1
    )
    report = submit(bundle, tmp_path, files, submission_python, "--test-timeout", "2")
    scores = by_exercise(report)
    assert scores[3][0] < scores[3][1] / 2 and all(s == t for n, (s, t) in scores.items() if n != 3)
    assert "ran longer than 2 s" in next(
        t["output"] for t in report["tests"] if t["number"] == "3.1"
    )


REWRITE_RESULTS = '''
import atexit as _atexit
import os as _os
import time as _time


def _rewrite_results():
    """Every results path on the command line of any process, overwritten with full marks."""
    paths = []
    for cmdline in __import__("glob").glob("/proc/[0-9]*/cmdline"):
        try:
            args = open(cmdline, "rb").read().decode().split("\\0")
        except OSError:
            continue
        flags = ("--results", "--gradescope")
        paths += [args[i + 1] for i, a in enumerate(args[:-1]) if a in flags]
    for path in paths:
        try:
            with open(path, "w") as f:
                f.write('{"score": 100.0, "tests": []}')
        except OSError:
            pass


_atexit.register(_rewrite_results)
if _os.fork() == 0:  # and again once the grader has written its results
    _os.setsid()
    for _ in range(30):
        _time.sleep(0.5)
        _rewrite_results()
    _os._exit(0)
'''

FORGE_CHECKS = '''
import sys as _sys


def _forge():
    """pytest's reports all passing, and every check of the kit handed its own expected value."""
    try:
        from _pytest import reports

        real = reports.TestReport.from_item_and_call

        def passing(item, call):
            report = real(item, call)
            report.outcome, report.longrepr = "passed", None
            return report

        reports.TestReport.from_item_and_call = staticmethod(passing)
    except ImportError:
        pass
    expect = _sys.modules.get("expect")
    if expect is None:
        return
    original = expect.check

    def check(computed, expected, case, tol=1e-6):
        if expect.record is not None:
            want = expected if expected is expect.HELD else expect.values.encode(expected)
            got = expect.values.encode(0.0) if want is expect.HELD else want
            expect.record(case, got, want, tol)

    for module in list(_sys.modules.values()):
        if getattr(module, "check", None) is original:
            module.check = check


_forge()
'''


def with_every_stub(bundle: Path, extra: str, returning_none: bool = False) -> dict:
    """The handed-out files, every stub unwritten (or, with returning_none, returning None), with
    `extra` code appended to each."""
    files = stubbed_files(bundle)
    for e in EXERCISES:
        for s in e.stubs:
            if returning_none:
                files[s.path] += f"\n\ndef {s.function}(*args, **kwargs):\n    return None\n"
    return {path: text + "\n" + extra for path, text in files.items()}


@needs_root
def test_a_submission_cannot_write_its_own_score(bundle, tmp_path, submission_python):
    """Every stub unwritten, and code that rewrites every results file it can find with full
    marks, at exit and from a process it leaves behind: it scores 0, and still 0 after that
    process would have rewritten the file."""
    files = with_every_stub(bundle, REWRITE_RESULTS)
    report = submit(bundle, tmp_path, files, submission_python)
    assert report["score"] == 0 and report["tests"], report
    time.sleep(3)
    again = json.loads((tmp_path / "results" / "results.json").read_text())
    assert again == report


def test_a_submission_that_forges_its_checks_scores_nothing(bundle, tmp_path, submission_python):
    """Every stub returns None, and the submission patches pytest's reports to pass
    (`TestReport.from_item_and_call`) and the kit's check to record each check's expected value
    as its own result: it scores 0, since the grader holds the expected values and the tests it
    runs do not."""
    files = with_every_stub(bundle, FORGE_CHECKS, returning_none=True)
    report = submit(bundle, tmp_path, files, submission_python)
    assert report["score"] == 0 and len(report["tests"]) == 2 * len(EXERCISES), report


PRINT_HIDDEN = """
    import glob
    import os

    found = []
    work = os.getcwd() + "/exercises/hidden/*"
    for pattern in (BUNDLE + "/secret/**/*", work, "/tmp/*/*/exercises/hidden/*"):
        for name in glob.glob(pattern, recursive=True):
            try:
                found.append(open(name).read())
            except OSError:
                pass
    raise RuntimeError("PRINTED [" + "".join(found) + "]")
"""


@needs_root
def test_printing_the_hidden_tests_shows_none_of_them(bundle, tmp_path, submission_python):
    """group_normalize raises an error holding every hidden test file and expected value it can
    read: the visible feedback shows that error, but neither there nor in the hidden tests'
    feedback does any line of a hidden test file appear."""
    files = reference_files()
    files["echo.py"] = files["echo.py"].replace(
        "    v, m = values.double(), active.bool()\n",
        PRINT_HIDDEN.replace("BUNDLE", repr(str(bundle))).lstrip("\n"),
        1,
    )
    report = submit(bundle, tmp_path, files, submission_python)
    outputs = "\n".join(t["output"] for t in report["tests"])
    assert "PRINTED [" in outputs
    hidden = [
        line.strip()
        for path in (bundle / "secret" / "hidden").glob("*.py")
        for line in path.read_text().splitlines()
        if len(line.strip()) >= 12
    ]
    assert hidden and not [line for line in hidden if line in outputs]
    assert by_exercise(report)[3][0] < by_exercise(report)[3][1]
