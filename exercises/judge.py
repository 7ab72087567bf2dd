"""Decide each graded test from what the runner wrote, and say why it failed.

The runner (exercises/runner.py) writes, per test, the checks it made with their computed values.
The grader trusts none of it: it knows which tests there are (from the test files, or from the
expected values), compares every computed value with the expected one itself (exercises/values.py),
and a test it has no line for has failed. With `expected` (the values the reference computed, held
by the grader: Gradescope's autograder) every expected value comes from there; without it (a
student grading their own copy) the expected values the test passed to `check` are used.

A hidden test's feedback is written from the grader's own knowledge only: the case as the
reference recorded it, the expected value, and the computed value's numbers; never a string the
student's code could have chosen.
"""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass
from pathlib import Path

from exercises import values

REASON_CHARS = 900  # of one failing test's feedback
OUTPUT_CHARS = 4000  # of one exercise's feedback
NOT_WRITTEN = "not written yet"


@dataclass
class Verdict:
    test: str  # "visible/test_ex03_eq1.py::test_name"
    passed: bool
    reason: str = ""  # why it failed, as the student reads it

    @property
    def kind(self) -> str:
        return self.test.split("/")[0]

    @property
    def name(self) -> str:
        return self.test.split("::")[-1]


def listed_tests(files: list) -> list[str]:
    """The test ids of these [(kind, path)] files: their top-level functions named test_*."""
    return [
        f"{kind}/{Path(path).name}::{node.name}"
        for kind, path in files
        for node in ast.parse(Path(path).read_text()).body
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")
    ]


def judge(tests: list[str], lines: list, expected: dict | None = None) -> tuple[list, str]:
    """(a Verdict per test, the stub's message or ''), from one exercise's runner lines."""
    by_test, import_errors, stub = {}, {}, ""
    for line in lines:
        if isinstance(line.get("test"), str):
            by_test.setdefault(line["test"], line)
        elif isinstance(line.get("import_error"), dict):
            error = line["import_error"]
            import_errors.setdefault(str(error.get("file")), str(error.get("error"))[:600])
    verdicts = []
    for test in tests:
        line = by_test.get(test)
        hidden = test.startswith("hidden/")
        if line is None:
            file = test.split("::")[0]
            if file in import_errors:
                why = "the test file could not be imported" + (
                    " (the visible tests' feedback says why)"
                    if hidden
                    else f": {import_errors[file]}"
                )
            else:
                why = "did not run: the exercise's tests stopped before it (a crash, or over time)"
            verdicts.append(Verdict(test, False, why))
            continue
        if not hidden and isinstance(line.get("stub"), str) and not stub:
            stub = line["stub"][:1500]
        held = expected[test]["checks"] if expected is not None else None
        verdicts.append(Verdict(test, *_decide(line, held, hidden)))
    return verdicts, stub


def _decide(line: dict, held: list | None, hidden: bool) -> tuple[bool, str]:
    """(passed, reason) of one test's line; `held`: [[case, expected, tol], ...] or None."""
    checks = line.get("checks") if isinstance(line.get("checks"), list) else []
    error = line.get("error")
    if error == NOT_WRITTEN:
        return False, NOT_WRITTEN
    if held is None:  # the expected values are the ones the test itself passed
        held = [
            [c.get("case"), c["expected"], c.get("tol", 1e-6)]
            for c in checks
            if isinstance(c, dict) and "expected" in c
        ]
        if len(held) < len(checks):
            return False, "its expected values are held by the grader: give --expected"
    for i, (case, want, tol) in enumerate(held):
        got = checks[i] if i < len(checks) and isinstance(checks[i], dict) else None
        if got is None or "computed" not in got:
            why = "it stopped before this check" if hidden or not error else str(error)
            return False, _clip(f"{case}\n  {why}")
        try:
            problem = values.compare(got["computed"], want, float(tol))
        except Exception:  # a value no encoder wrote
            problem = "the computed value could not be read"
        if problem:
            computed = values.show(got["computed"], values.strings(want) if hidden else None)
            text = f"{case}\n  computed: {computed}\n  expected: {values.show(want)}\n  {problem}"
            return False, _clip(text)
    if error:
        return False, "it raised an error or ran out of time" if hidden else _clip(str(error))
    return True, ""


def _clip(text: str, limit: int = REASON_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 30] + "\n  ... (cut here)"


def score(points: int, verdicts: list) -> tuple[float, int, int]:
    """(points earned, tests passed, tests): the points in proportion to the tests passed."""
    passed = sum(v.passed for v in verdicts)
    return (points * passed / len(verdicts) if verdicts else 0.0), passed, len(verdicts)


def feedback(verdicts: list, stub: str = "", kinds=("visible", "hidden")) -> str:
    """Why the failing tests failed, the stub's hint first, at most OUTPUT_CHARS."""
    lines = [
        f"{v.name}: {v.reason}"
        for v in verdicts
        if v.kind in kinds and not v.passed and v.reason != NOT_WRITTEN
    ]
    if stub and "visible" in kinds:
        wrapped = textwrap.fill(
            "not written yet (the stub still raises). " + stub, 96, subsequent_indent="  "
        )
        lines.insert(0, wrapped)
    elif any(v.reason == NOT_WRITTEN for v in verdicts if v.kind in kinds):
        lines.insert(0, "not written yet (the stub still raises)")
    return _clip("\n".join(lines), OUTPUT_CHARS)


def gradescope(exercises: list, verdicts: dict, stubs: dict, hidden_visibility: str) -> dict:
    """Gradescope's results.json: per exercise, one entry for the tests the student sees and one
    for the hidden tests, each with its share of the exercise's points."""
    tests = []
    for e in exercises:
        mine = verdicts[e.number]
        for part, (kind, visibility) in enumerate(
            (("visible", "visible"), ("hidden", hidden_visibility)), 1
        ):
            these = [v for v in mine if v.kind == kind]
            if not these and (kind == "hidden" or mine):
                continue
            share = e.points * len(these) / len(mine) if mine else e.points
            passed = sum(v.passed for v in these)
            tests.append(
                {
                    "name": f"Exercise {e.number}: {e.name}"
                    + (" (hidden tests)" if kind == "hidden" else ""),
                    "number": f"{e.number}.{part}",
                    "score": round(share * passed / max(len(these), 1), 2),
                    "max_score": round(share, 2),
                    "visibility": visibility,
                    "output": f"{passed}/{len(these)} tests passed\n"
                    + feedback(these, stubs.get(e.number, ""), (kind,)),
                }
            )
    return {"score": round(sum(t["score"] for t in tests), 2), "tests": tests}
