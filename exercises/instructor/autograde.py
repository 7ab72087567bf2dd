"""Gradescope's grader for the kit: run_autograder runs it for each submission, as root, from the
bundle that `python exercises/build.py --autograder DIR` writes (exercises/instructor/bundle.py
says what DIR holds).

It copies the bundle's fresh student copy to a scratch directory and puts on it only the files a
student edits (those holding the stubs, found in the submission by their path or, for a flat
upload, their name): a submission's own tests, conftest.py or grade.py never run. Then:

1. The visible tests run (exercises/runner.py, one process per exercise), from copies without
   their expected values, as a user id of their own; that user can read neither the hidden tests
   nor the expected values (secret/, root's alone) and cannot write the results.
2. Every process left with that id is ended. The hidden tests are put where only a second, fresh
   user id can read them, and run as that id.
3. This process, which never imports the submission's code, compares each computed value with its
   expected value (exercises/judge.py) and writes results.json. A hidden test's feedback holds
   only what this process knows (the case as the reference recorded it, the expected value, the
   computed numbers), so no code of the submission can print a hidden file into it.

Not as root (trying the bundle on a workstation) the tests run as the calling user, without those
protections. Whatever happens, results.json is written.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
GRADESCOPE = Path("/autograder")


def find(submission: Path, path: str) -> Path | None:
    """The submitted file for a project path: the same path under the submission (or one folder
    down), else the only file of the same name."""
    for candidate in [submission / path, *(d / path for d in submission.iterdir() if d.is_dir())]:
        if candidate.is_file():
            return candidate
    same_name = [p for p in submission.rglob(Path(path).name) if p.is_file()]
    return same_name[0] if len(same_name) == 1 else None


def readable(tree: Path, mode_dirs: int = 0o755, mode_files: int = 0o644, uid: int = 0) -> None:
    """Give a tree one owner and modes (root's and world-readable, or one user's alone)."""
    for path in [tree, *tree.rglob("*")]:
        os.chown(path, uid, uid)
        os.chmod(path, mode_dirs if path.is_dir() else mode_files)


def jobs(exercises, kind: str, folder: Path, put: Path | None = None) -> dict:
    """{exercise: [(kind, path)]} of the test files in `folder`, at their place under `put`."""
    return {
        e.number: [(kind, (put or folder) / p.name)]
        for e in exercises
        for p in sorted(folder.glob(f"test_ex{e.number:02d}_*.py"))
    }


def grade_submission(args, notes: list) -> dict:
    source = Path(args.source)
    sys.path.insert(0, str(source / "student"))  # the bundle's kit, never the submission's
    from exercises import harness, judge
    from exercises.catalog import EXERCISES

    as_root = os.geteuid() == 0
    secret = source / "secret"
    if as_root:
        readable(secret, 0o700, 0o600)
    expected = json.loads((secret / "expected.json").read_text())["tests"]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "work"
        shutil.copytree(source / "student", work)
        used, missing = [], []
        for path in sorted({s.path for e in EXERCISES for s in e.stubs}):
            found = find(Path(args.submission), path)
            if found is None:
                missing.append(path)
            else:
                shutil.copyfile(found, work / path)
                used.append(path)
        held, hidden_dir = work / "exercises" / "held", work / "exercises" / "hidden"
        shutil.copytree(secret / "visible", held)
        if as_root:
            readable(Path(tmp))
        uids = (harness.fresh_uid(), harness.fresh_uid()) if as_root else (None, None)
        python = args.submission_python
        timeouts = dict(test_timeout=args.test_timeout, exercise_timeout=args.exercise_timeout)
        visible = jobs(EXERCISES, "visible", held)
        hidden = jobs(EXERCISES, "hidden", secret / "hidden", hidden_dir)
        # The hidden tests' runner starts now (importing torch while the visible tests run) and
        # gets its jobs only once the visible tests' user has nothing left running.
        later = harness.start(work, hidden, python=python, uid=uids[1])
        try:
            lines = harness.run(work, visible, python=python, uid=uids[0], **timeouts)
            shutil.copytree(secret / "hidden", hidden_dir)
            if as_root:
                readable(hidden_dir, 0o700, 0o600, uids[1])
            for n, more in harness.finish(later, hidden, **timeouts).items():
                lines.setdefault(n, []).extend(more)
        finally:
            harness.stop(later)
    verdicts, stubs = {}, {}
    for e in EXERCISES:
        tests = [t for t, info in expected.items() if info["exercise"] == e.number]
        verdicts[e.number], stubs[e.number] = judge.judge(tests, lines.get(e.number, []), expected)
    report = judge.gradescope(EXERCISES, verdicts, stubs, args.hidden_visibility)
    notes.append(f"graded your {', '.join(used) or 'nothing'}")
    if missing:
        notes.append(f"not found in the submission, so graded as not written: {', '.join(missing)}")
    stopped = [
        str(n) for n, vs in verdicts.items() if any(v.reason.startswith("did not run") for v in vs)
    ]
    if stopped:
        notes.append(f"the tests of exercises {', '.join(stopped)} did not all finish")
    return report


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description="Grade one submission for Gradescope.", allow_abbrev=False
    )
    add = parser.add_argument
    add("--source", default=str(HERE), help="the bundle (default: this file's folder)")
    add("--submission", default=str(GRADESCOPE / "submission"))
    add("--results", default=str(GRADESCOPE / "results" / "results.json"))
    add("--test-timeout", type=float, default=10.0, help="seconds a test may run")
    add("--exercise-timeout", type=float, default=60.0, help="seconds one exercise's tests may run")
    add("--hidden-visibility", default="after_published")
    add(
        "--submission-python",
        default=sys.executable,
        help="the interpreter the tests run with (as root: one the unprivileged user can run)",
    )
    args = parser.parse_args(argv)
    results = Path(args.results)
    results.parent.mkdir(parents=True, exist_ok=True)
    notes = []
    try:
        report = grade_submission(args, notes)
        report["output"] = (
            "; ".join(notes) + ". Only these files count: the tests are the course's."
        )
    except Exception as e:  # whatever went wrong, Gradescope gets a results.json that says so
        report = {"score": 0.0, "output": f"the autograder failed: {type(e).__name__}: {e}"}
        report["tests"] = []
        print(report["output"], file=sys.stderr)
    results.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
