"""What a graded test says when it fails: the hand-worked case, what was computed, what was
expected.

    check(computed, expected, case, tol=1e-6)

Equal means: tensors of the same shape within `tol` (NaN where NaN is expected), numbers within
`tol`, an exact number where a Fraction is expected, and containers of the same type (a frozenset
is not a list) holding equal items (exercises/values.py). Otherwise check raises AssertionError
with a message grade.py prints as it is:

    turn 1 of secret 0 (rollouts 0 and 1 play it)
      computed: [-0.5, 0.5] (shape (2,), float64)
      expected: [-0.7071, 0.7071] (shape (2,), float64)

When exercises/grade.py runs the tests, each check is also handed to `record`, and the grader
compares it again in a process that never runs the student's code. Where the expected value is
HELD (the hidden tests, and the Gradescope copies of these), only the grader has it: the test goes
on to its next check, and the grader judges them all.
"""

from __future__ import annotations

from exercises import values

HELD = object()  # in the place of an expected value that only the grader holds
record = None  # exercises/runner.py sets it: record(case, computed, expected or HELD, tol)


def message(case: str, computed, expected, problem: str) -> str:
    """The failure as the student reads it (computed and expected as encoded by values.encode)."""
    return (
        f"{case}\n  computed: {values.show(computed)}\n  expected: {values.show(expected)}"
        f"\n  {problem}"
    )


def check(computed, expected, case: str, tol: float = 1e-6):
    """Fail unless `computed` equals `expected` (see the module docstring)."""
    got = values.encode(computed)
    want = expected if expected is HELD else values.encode(expected)
    if record is not None:
        record(case, got, want, tol)
    if want is HELD:
        if record is None:
            raise AssertionError(
                f"{case}: its expected value is held by the grader: run this test with "
                "`python exercises/grade.py --hidden-tests DIR --expected FILE`"
            )
        return
    problem = values.compare(got, want, tol)
    if problem:
        raise AssertionError(message(case, got, want, problem))
