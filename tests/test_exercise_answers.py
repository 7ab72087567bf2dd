"""The graded tests tell right answers from wrong ones: planted in a built copy, each wrong answer
written down in the hidden tests' files (exercises/instructor/answers.py) turns its exercise, and
only it, to FAIL; the two right answers of every exercise, written differently from the
reference, PASS (visible and hidden tests). The one-at-a-time check of every wrong answer is
slow (47 gradings): `python -m pytest -m slow tests/test_exercise_answers.py`."""

import os
import re
import shutil
import subprocess
import sys
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
WRONG = (
    [(e.number, answer) for e in EXERCISES for answer in answers.wrong(e.number)]
    if REFERENCE
    else []
)


@pytest.fixture(scope="module")
def copy(tmp_path_factory):
    """A built copy, and the text of its stubbed files, to start each planting from."""
    out = tmp_path_factory.mktemp("answers") / "student"
    build.build(out, check_stand_ins=False)
    # where the autograder puts them
    shutil.copytree(answers.HIDDEN, out / "exercises" / "instructor" / "hidden")
    return out, {path: (out / path).read_text() for path in EDITED}


def graded(copy, planted: list) -> dict:
    """Plant these answers in the copy (the other stubs stay stubs), grade it: {exercise: PASS?}.
    An answer must fail on its values, never on a name its module lacks."""
    out, stubbed = copy
    for path, text in stubbed.items():
        (out / path).write_text(text)
    for answer in planted:
        answers.plant(out, answer)
    flags = ["--hidden-tests", "exercises/instructor/hidden", "--no-train-check", "-v"]
    done = subprocess.run(
        [sys.executable, "exercises/grade.py", *flags],
        cwd=out,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    lines = re.findall(r"^ ?(\d+) .* (PASS|FAIL)$", done.stdout, re.M)
    assert len(lines) == len(EXERCISES), done.stdout + done.stderr
    assert "NameError" not in done.stdout, done.stdout
    return {int(n): verdict == "PASS" for n, verdict in lines}


def test_every_exercise_lists_three_wrong_and_two_right_answers():
    """At least three wrong answers and two right ones per exercise, each planted over a stub."""
    stubs = {s.function for e in EXERCISES for s in e.stubs}
    for e in EXERCISES:
        assert len(answers.wrong(e.number)) >= 3 and len(answers.right(e.number)) == 2, e.number
        for answer in answers.right(e.number):
            assert sorted(answers.stub_of(f) for f in answer) == sorted(
                s.function for s in e.stubs
            ), e.number
        assert all(
            answers.stub_of(f) in stubs for answer in answers.wrong(e.number) for f in answer
        )


ROUNDS = max((len(answers.wrong(e.number)) for e in EXERCISES), default=0)


@pytest.mark.parametrize("parity", [1, 0])
@pytest.mark.parametrize("round_", range(ROUNDS))
def test_wrong_answers_fail_their_exercises_beside_right_answers(copy, round_, parity):
    """Round r plants wrong answer r (cycling through each exercise's list) in the exercises of one
    parity and right answer r % 2 in the others: exactly the wrong ones FAIL. Over the rounds every
    wrong and every right answer is planted, and every wrong one beside right answers in the
    exercises of the other parity (exercise 4 builds on exercise 3's function, for one)."""
    planted = [
        answers.wrong(e.number)[round_ % len(answers.wrong(e.number))]
        if e.number % 2 == parity
        else answers.right(e.number)[round_ % 2]
        for e in EXERCISES
    ]
    verdicts = graded(copy, planted)
    assert [n for n, ok in verdicts.items() if not ok] == [
        e.number for e in EXERCISES if e.number % 2 == parity
    ], verdicts


@pytest.mark.slow
@pytest.mark.parametrize("number, answer", WRONG, ids=[a[-1].__name__ for _, a in WRONG])
def test_a_wrong_answer_fails_its_exercise_only(copy, number, answer):
    """One wrong answer at a time, right ones in every other exercise: only its exercise FAILs."""
    planted = [answer if e.number == number else answers.right(e.number)[0] for e in EXERCISES]
    verdicts = graded(copy, planted)
    assert [n for n, ok in verdicts.items() if not ok] == [number], verdicts
