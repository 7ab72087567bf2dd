"""Gradescope's autograder for the kit: what `python exercises/build.py --autograder DIR` writes,
and the script that grades a submission there (this file, copied into DIR).

DIR holds what Gradescope's zip must hold at its root (and DIR/autograder.zip is that zip):

    setup.sh         run once when Gradescope builds the image: a virtual environment at
                     /autograder/venv with CPU-only torch and the project's pinned requirements
    run_autograder   run for each submission: `python autograde.py`
    autograde.py     this file
    student/         a fresh student copy (every exercise stubbed), as build.py writes it
    hidden/          the hidden tests (exercises/instructor/hidden), without their answers

For each submission, autograde.py copies student/ to a scratch directory, puts on it only the
files a student edits (those holding the stubs, found in the submission by their path or, for a
flat upload, their name) and the hidden tests, and grades it with exercises/grade.py: the
submission's own tests and conftest.py never run. Each test has --test-timeout seconds; if the
whole grading outlasts --grading-timeout (an endless loop that ignores the per-test limit), each
exercise is graded again on its own, and one that still does not finish scores 0. Whatever
happens, results.json is written.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
GRADESCOPE = Path("/autograder")
ANSWERS_HEADING = (
    "# " + "-" * 64 + " answers to tell apart"
)  # where a hidden test file's answers begin


def edited_files(catalog_exercises) -> list[str]:
    return sorted({s.path for e in catalog_exercises for s in e.stubs})


# ---------------------------------------------------------------- the bundle (run by build.py)

SETUP = """#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image: Python, a virtual
# environment at /autograder/venv, CPU-only torch (PyPI's Linux wheel brings several GB of CUDA)
# and the project's pinned requirements.
set -euo pipefail
apt-get update
apt-get install -y python3 python3-venv python3-pip
python3 -m venv /autograder/venv
/autograder/venv/bin/pip install --upgrade pip
/autograder/venv/bin/pip install --index-url https://download.pytorch.org/whl/cpu {torch}
/autograder/venv/bin/pip install -r /autograder/source/student/requirements.txt
"""

RUN = """#!/usr/bin/env bash
# Gradescope runs this for each submission (from /autograder/run_autograder, with the bundle in
# /autograder/source); it grades /autograder/submission into /autograder/results/results.json.
# Flags are passed on to autograde.py (`--help`); AUTOGRADER_PYTHON overrides the interpreter.
here="$(cd "$(dirname "$0")" && pwd)"
source_dir="$here"; [ -f "$source_dir/autograde.py" ] || source_dir=/autograder/source
exec "${AUTOGRADER_PYTHON:-/autograder/venv/bin/python}" "$source_dir/autograde.py" "$@"
"""


def write_autograder(out: Path) -> list:
    """Write the bundle into `out` (absent or empty). Returns the stubbed solutions of its student copy."""
    from exercises.build import BuildError, build

    if out.exists() and any(out.iterdir()):
        raise BuildError(f"{out} is not empty: give a new or empty directory")
    root = HERE.parent.parent
    solutions = build(out / "student")
    (out / "hidden").mkdir()
    for test in sorted((HERE / "hidden").glob("*.py")):  # without the answers at their end
        (out / "hidden" / test.name).write_text(
            test.read_text().split(ANSWERS_HEADING)[0].rstrip() + "\n"
        )
    shutil.copy2(Path(__file__), out / "autograde.py")
    pins = [line.strip() for line in (root / "requirements.txt").read_text().splitlines()]
    torch = next(p for p in pins if p.startswith("torch=="))
    for name, text in (("setup.sh", SETUP.format(torch=torch)), ("run_autograder", RUN)):
        (out / name).write_text(text)
        (out / name).chmod(0o755)
    with zipfile.ZipFile(out / "autograder.zip", "w", zipfile.ZIP_DEFLATED) as z:
        for path in sorted(out.rglob("*")):
            if path.is_file() and path.name != "autograder.zip":
                z.write(path, path.relative_to(out).as_posix())
    return solutions


# ---------------------------------------------------------------- grading a submission (on Gradescope)


def find(submission: Path, path: str) -> Path | None:
    """The submitted file for a project path: the same path under the submission (or one folder
    down), else the only file of the same name."""
    for candidate in [submission / path, *(d / path for d in submission.iterdir() if d.is_dir())]:
        if candidate.is_file():
            return candidate
    same_name = [p for p in submission.rglob(Path(path).name) if p.is_file()]
    return same_name[0] if len(same_name) == 1 else None


def grade(work: Path, results: Path, flags: list[str], timeout: float) -> bool:
    """Run grade.py in the work copy; True if it wrote `results` in time."""
    results.unlink(missing_ok=True)
    try:
        subprocess.run(
            [
                sys.executable,
                "exercises/grade.py",
                "--hidden-tests",
                "exercises/instructor/hidden",
                "--no-train-check",
                "--gradescope",
                str(results),
                *flags,
            ],
            cwd=work,
            timeout=timeout,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        return False
    return results.is_file()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description="Grade one submission for Gradescope.", allow_abbrev=False
    )
    parser.add_argument(
        "--source", default=str(HERE), help="the bundle (default: this file's folder)"
    )
    parser.add_argument("--submission", default=str(GRADESCOPE / "submission"))
    parser.add_argument("--results", default=str(GRADESCOPE / "results" / "results.json"))
    parser.add_argument("--test-timeout", type=float, default=10.0, help="seconds a test may run")
    parser.add_argument(
        "--grading-timeout",
        type=float,
        default=150.0,
        help="seconds for all the exercises at once; past it, each is graded on its own",
    )
    parser.add_argument(
        "--exercise-timeout", type=float, default=45.0, help="seconds for one exercise then"
    )
    parser.add_argument("--hidden-visibility", default="after_published")
    args = parser.parse_args(argv)
    source, results = Path(args.source), Path(args.results)
    results.parent.mkdir(parents=True, exist_ok=True)
    try:
        sys.path.insert(0, str(source / "student"))
        from exercises.catalog import EXERCISES

        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp) / "work"
            shutil.copytree(source / "student", work)
            shutil.copytree(source / "hidden", work / "exercises" / "instructor" / "hidden")
            used, missing = [], []
            for path in edited_files(EXERCISES):
                found = find(Path(args.submission), path)
                if found is None:
                    missing.append(path)
                else:
                    shutil.copyfile(found, work / path)
                    used.append(path)
            flags = [
                "--timeout",
                str(args.test_timeout),
                "--hidden-visibility",
                args.hidden_visibility,
            ]
            if grade(work, results, flags, args.grading_timeout):
                report = json.loads(results.read_text())
                stopped = []
            else:
                report, stopped = {"tests": []}, []
                for e in EXERCISES:
                    part = Path(tmp) / f"results-{e.number}.json"
                    if grade(work, part, [str(e.number), *flags], args.exercise_timeout):
                        report["tests"] += json.loads(part.read_text())["tests"]
                    else:
                        stopped.append(e.number)
                        report["tests"].append(
                            {
                                "name": f"Exercise {e.number}: {e.name}",
                                "number": f"{e.number}.1",
                                "score": 0.0,
                                "max_score": float(e.points),
                                "visibility": "visible",
                                "output": f"grading stopped after {args.exercise_timeout:g} s: the code "
                                "ran on (an endless loop?) and no result came back",
                            }
                        )
                report["score"] = round(sum(t["score"] for t in report["tests"]), 2)
        notes = [f"graded your {', '.join(used) or 'nothing'}"]
        if missing:
            notes.append(
                f"not found in the submission, so graded as not written: {', '.join(missing)}"
            )
        if stopped:
            notes.append(f"exercises {', '.join(map(str, stopped))} did not finish and score 0")
        report["output"] = (
            "; ".join(notes) + ". Only these files count: the tests are the course's own."
        )
    except Exception as e:  # whatever went wrong, Gradescope gets a results.json that says so
        report = {
            "score": 0.0,
            "output": f"the autograder failed: {type(e).__name__}: {e}",
            "tests": [],
        }
    results.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
