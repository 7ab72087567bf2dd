"""Gradescope's autograder bundle: what `python exercises/build.py --autograder DIR` writes beside
the student copy it builds (DIR/student).

    setup.sh         run once when Gradescope builds the image: a Python >= 3.11 and, in
                     /autograder/venv, only what grading imports (CPU-only torch and numpy, pinned)
    run_autograder   run for each submission: `python autograde.py`
    autograde.py     the grader (exercises/instructor/autograde.py)
    student/         a fresh student copy (every exercise stubbed), as build.py writes it
    secret/          what only the grader may read (autograde.py makes it root's alone):
      expected.json  every check's expected value, computed here by the reference
      visible/       the visible tests as graded: each check's expected value replaced by HELD
      hidden/        the hidden tests (cases only: their values are in expected.json)

DIR/autograder.zip holds all of it, to upload. The visible tests are graded from copies without
their expected values so that no code of the submission can hand a test's own expected value back
as its result: the grader compares every computed value with expected.json.
"""

from __future__ import annotations

import ast
import json
import shutil
import sys
import zipfile
from pathlib import Path

INSTRUCTOR = Path(__file__).resolve().parent
ROOT = INSTRUCTOR.parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
from exercises import harness, judge, values  # noqa: E402
from exercises.catalog import EXERCISES  # noqa: E402

GRADING_NEEDS = ("torch", "numpy")  # what the graded tests import beyond the standard library

SETUP = """#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image. Choose the Ubuntu
# 22.04 or 24.04 base image (exercises/instructor/README.md): this needs a Python >= 3.11, the
# system's where it is one, else Ubuntu's python3.11 package. Into /autograder/venv it installs
# only what grading imports, at the project's pins: CPU-only torch (PyPI's Linux wheel brings
# several GB of CUDA; TORCH_INDEX_URL overrides its index) and numpy.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends python3 python3-venv ca-certificates
python=python3
if ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  if apt-get install -y --no-install-recommends python3.11 python3.11-venv; then
    python=python3.11
  else
    echo "setup.sh: this image has $(python3 -V 2>&1) and no python3.11 package, and grading" \\
      "needs Python 3.11 or newer: choose Gradescope's Ubuntu 22.04 or 24.04 base image." >&2
    exit 1
  fi
fi
"$python" -m venv /autograder/venv
torch_index="${{TORCH_INDEX_URL:-https://download.pytorch.org/whl/cpu}}"
/autograder/venv/bin/pip install --index-url "$torch_index" {torch}
/autograder/venv/bin/pip install {others}
/autograder/venv/bin/python -c "import {modules}; print('setup.sh: grading can import {modules}')"
"""

RUN = """#!/usr/bin/env bash
# Gradescope runs this for each submission, as root (from /autograder/run_autograder, with the
# bundle in /autograder/source); it grades /autograder/submission into
# /autograder/results/results.json. Flags are passed on to autograde.py (`--help`);
# AUTOGRADER_PYTHON overrides the grader's interpreter.
here="$(cd "$(dirname "$0")" && pwd)"
source_dir="$here"; [ -f "$source_dir/autograde.py" ] || source_dir=/autograder/source
exec "${AUTOGRADER_PYTHON:-/autograder/venv/bin/python}" "$source_dir/autograde.py" "$@"
"""


class BundleError(Exception):
    pass


def held_copy(text: str) -> str:
    """A test file with the expected value of every check(computed, expected, case) call replaced
    by expect.HELD, so that the file holds the cases but none of their answers."""
    tree = ast.parse(text)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "check":
            if len(node.args) >= 2:
                node.args[1] = ast.Name("HELD", ast.Load())
            for keyword in node.keywords:
                if keyword.arg == "expected":
                    keyword.value = ast.Name("HELD", ast.Load())
    docstring = int(bool(ast.get_docstring(tree)))
    tree.body.insert(docstring, ast.ImportFrom("expect", [ast.alias("HELD")], 0))
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def test_files(root: Path = ROOT) -> dict:
    """{exercise: [(kind, path)]}: each exercise's visible and hidden test files in `root`."""
    return {
        e.number: [
            *(
                ("visible", p)
                for p in sorted((root / "exercises/tests").glob(f"test_ex{e.number:02d}_*.py"))
            ),
            *(
                ("hidden", p)
                for p in sorted((INSTRUCTOR / "hidden").glob(f"test_ex{e.number:02d}_*.py"))
            ),
        ]
        for e in EXERCISES
    }


def record_expected(root: Path = ROOT) -> dict:
    """Run every graded test on the reference and keep what it computed: {"tests": {test id:
    {"exercise": N, "checks": [[case, value, tol], ...]}}}. Stops if the reference fails one."""
    jobs = test_files(root)
    lines = harness.run(root, jobs)
    tests, failures = {}, []
    for n, files in jobs.items():
        by_test = {line.get("test"): line for line in lines.get(n, [])}
        errors = [line["import_error"] for line in lines.get(n, []) if "import_error" in line]
        failures += [f"{e['file']}: {e['error']}" for e in errors]
        for test in judge.listed_tests(files):
            line = by_test.get(test)
            if line is None or line.get("error"):
                failures.append(f"{test}: {line.get('error') if line else 'did not run'}")
                continue
            for check in line["checks"]:
                if "expected" in check and values.compare(
                    check["computed"], check["expected"], check["tol"]
                ):
                    failures.append(f"{test}: {check['case']}")
            tests[test] = {
                "exercise": n,
                "checks": [[c["case"], c["computed"], c["tol"]] for c in line["checks"]],
            }
    if failures:
        raise BundleError("the reference fails graded tests:\n  " + "\n  ".join(failures[:10]))
    return {"tests": tests}


def write(out: Path, root: Path = ROOT) -> None:
    """Write the bundle into `out`, where build.py has just built the student copy (out/student)."""
    secret = out / "secret"
    (secret / "visible").mkdir(parents=True)
    shutil.copytree(INSTRUCTOR / "hidden", secret / "hidden", ignore=shutil.ignore_patterns("__*"))
    for kind, path in (f for files in test_files(root).values() for f in files):
        if kind == "visible":
            (secret / "visible" / path.name).write_text(held_copy(path.read_text()))
    (secret / "expected.json").write_text(json.dumps(record_expected(root)))
    shutil.copy2(INSTRUCTOR / "autograde.py", out / "autograde.py")
    pins = [line.strip() for line in (root / "requirements.txt").read_text().splitlines()]
    pinned = {name: next(p for p in pins if p.startswith(f"{name}==")) for name in GRADING_NEEDS}
    setup = SETUP.format(
        torch=pinned["torch"],
        others=" ".join(pinned[name] for name in GRADING_NEEDS if name != "torch"),
        modules=", ".join(GRADING_NEEDS),
    )
    for name, text in (("setup.sh", setup), ("run_autograder", RUN)):
        (out / name).write_text(text)
        (out / name).chmod(0o755)
    with zipfile.ZipFile(out / "autograder.zip", "w", zipfile.ZIP_DEFLATED) as z:
        for path in sorted(out.rglob("*")):
            if path.is_file() and path.name != "autograder.zip":
                z.write(path, path.relative_to(out).as_posix())
