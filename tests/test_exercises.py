"""The course kit (exercises/): the catalog names real, marked functions; the build stubs each
exactly once, keeps everything else, leaves out the instructor's side and leaves no solution in
the copy (no line of one, no function that passes an exercise in a stub's place); the grader
grades each exercise on its own, says why a test failed, and runs train.py once the exercises it
needs pass. The answers and the autograder have their own files (tests/test_exercise_*.py)."""

import ast
import inspect
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from exercises import build
from exercises.catalog import EXERCISES, stubs_by_place
from exercises.instructor import answers
from exercises.instructor.code_hints import CODE_HINTS

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = all(build.BEGIN in (ROOT / s.path).read_text() for e in EXERCISES for s in e.stubs)
pytestmark = pytest.mark.skipif(
    not REFERENCE, reason="the student copy: the kit is built from the reference"
)
EDITED = sorted({s.path for e in EXERCISES for s in e.stubs})


def graded_tests(folder: Path, number: int) -> list:
    return sorted(folder.glob(f"test_ex{number:02d}_*.py"))


def test_the_catalog_names_marked_functions_in_course_order_each_with_its_tests():
    """Exercises numbered 1..n, points adding up to 100, one visible and one hidden test file each,
    every stub a marked function of its file with a code hint too."""
    assert [e.number for e in EXERCISES] == list(range(1, len(EXERCISES) + 1)) and len(
        EXERCISES
    ) >= 8
    assert sum(e.points for e in EXERCISES) == 100
    for e in EXERCISES:
        assert len(graded_tests(ROOT / "exercises" / "tests", e.number)) == 1, e.number
        assert len(graded_tests(answers.HIDDEN, e.number)) == 1, e.number
        for stub in e.stubs:
            _, found = build.stub_out(stub.path, (ROOT / stub.path).read_text(), stubs_by_place())
            assert [f[2] for f in found].count(stub.function) == 1, (stub.path, stub.function)
    assert set(CODE_HINTS) == set(stubs_by_place())


def test_every_graded_test_takes_no_argument_and_says_what_it_checks():
    """The stand-in search calls graded tests directly, so none takes a fixture; each has a
    docstring."""
    for path in [
        *(ROOT / "exercises" / "tests").glob("test_ex*.py"),
        *answers.HIDDEN.glob("test_ex*.py"),
    ]:
        tests = [
            n
            for n in ast.parse(path.read_text()).body
            if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")
        ]
        assert tests, path
        for node in tests:
            assert not node.args.args and ast.get_docstring(node), f"{path.name}: {node.name}"


def test_every_hint_points_at_a_passage_quoted_in_the_copy():
    """exercises/paper.md quotes each exercise's passage; every default hint sends the student to
    the paper or a docstring, and differs from the code-level hint an instructor may choose."""
    paper = (ROOT / "exercises" / "paper.md").read_text()
    passages = [
        "Lemma A.5",
        "CSG's explicit EDP interpretation",
        "CSG Reward Composition",
        "Eq. 1",
        "Eq. 2",
        '"Baselines"',
        "The KL estimate",
        "Main Evaluation Metric Definitions",
        "Corollary A.4",
        "Theorem 3.2 (ii)",
    ]
    assert all(p in paper for p in passages), [p for p in passages if p not in paper]
    for e in EXERCISES:
        for stub in e.stubs:
            assert ("paper" in stub.hint or "docstring" in stub.hint) and stub.hint != CODE_HINTS[
                (stub.path, stub.function)
            ]


def test_the_hand_out_lists_every_exercise_with_its_points():
    """The hand-out's table has one row per exercise, in order, with the catalog's points."""
    rows = [
        line.strip("| ").split(" | ")
        for line in (ROOT / "exercises" / "README.md").read_text().splitlines()
        if re.match(r"\| \d+ \|", line)
    ]
    assert [(int(row[0]), int(row[3])) for row in rows] == [(e.number, e.points) for e in EXERCISES]


@pytest.fixture(scope="module")
def student(tmp_path_factory):
    """A student copy, built with every check but the search for stand-ins (the autograder's build,
    tests/test_exercise_autograder.py, runs that one on the same copy)."""
    out = tmp_path_factory.mktemp("kit") / "student"
    return out, build.build(out, check_stand_ins=False)


def stubbed_bodies(path: Path) -> dict:
    """function name -> the message its body raises, for every stubbed function of a file."""
    stubs = {}
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.FunctionDef) and isinstance(node.body[-1], ast.Raise):
            call = node.body[-1].exc
            if isinstance(call, ast.Call) and getattr(call.func, "id", "") == "NotImplementedError":
                stubs[node.name] = ast.literal_eval(call.args[0])
    return stubs


def test_the_build_stubs_every_exercise_once_and_copies_the_rest(student):
    """Each stub raises 'Exercise N, ...' with its hint and shapes; other files are byte-identical;
    the instructor's side (hidden tests, answers, build.py, the kit's tests, CI) and git stay
    out."""
    out, solutions = student
    assert sorted((s[1], s[2]) for s in solutions) == sorted(stubs_by_place())
    for e in EXERCISES:
        for stub in e.stubs:
            message = stubbed_bodies(out / stub.path)[stub.function]
            assert (
                message.startswith(f"Exercise {e.number}, ")
                and f"Hint: {stub.hint}." in message
                and "Shapes:" in message
            )
    untouched = [
        "train.py",
        "exercises/grade.py",
        "exercises/paper.md",
        "exercises/tests/test_ex03_eq1.py",
        "README.md",
    ]
    assert all((out / f).read_bytes() == (ROOT / f).read_bytes() for f in untouched)
    left_out = [
        ".git",
        ".ci",
        "exercises/instructor",
        "exercises/build.py",
        "tests/test_exercises.py",
        "tests/test_exercise_answers.py",
        "tests/test_exercise_autograder.py",
    ]
    assert not [f for f in left_out if (out / f).exists()]
    assert not any(
        line.strip() in (build.BEGIN, build.END)
        for p in out.rglob("*.py")
        for line in p.read_text().splitlines()
    )


def test_no_line_of_a_solution_or_a_right_answer_is_in_the_copy(student):
    """The reference's solution lines (16 characters or more) and the right answers' lines (32 or
    more: shorter ones such as `for t in range(T):` are everywhere) appear nowhere in the copy:
    a grep of the whole copy finds none."""
    out, solutions = student
    needles = {
        line.strip()
        for *_, block in solutions
        for line in block
        if len(line.strip()) >= build.SHORTEST_CHECKED
    }
    needles |= {
        line.strip()
        for e in EXERCISES
        for answer in answers.right(e.number)
        for f in answer
        for line in inspect.getsource(f).splitlines()[1:]
        if len(line.strip()) >= 32 and '"""' not in line
    }
    found = subprocess.run(
        ["grep", "-rnF", "--include=*.py", *[f"-e{n}" for n in needles], str(out)],
        capture_output=True,
        text=True,
    )
    hits = [h for h in found.stdout.splitlines() if h.split(":", 2)[-1].strip() in needles]
    assert found.returncode in (0, 1) and not hits, hits[:10]


def test_the_build_refuses_what_it_cannot_stub_cleanly(tmp_path):
    """Markers outside a catalogued function, unclosed or unopened; a surviving solution line; a
    non-empty DIR."""
    places = stubs_by_place()
    for text, message in (
        ("def f():\n    # BEGIN SOLUTION\n    return 1\n    # END SOLUTION\n", "no exercise names"),
        ("def update_belief():\n    # BEGIN SOLUTION\n    return 1\n", "not closed"),
        ("x = 1\n# END SOLUTION\n", "without"),
    ):
        with pytest.raises(build.BuildError, match=message):
            build.stub_out("env.py", text, places)
    (tmp_path / "kept.py").write_text("    mean = torch.where(m, v, 0.0).sum(dim=dims)\n")
    solutions = [
        (
            3,
            "echo.py",
            "group_normalize",
            ["    mean = torch.where(m, v, 0.0).sum(dim=dims)", "    n"],
        )
    ]
    assert build.surviving_lines(tmp_path, ["kept.py"], solutions) == [
        "kept.py:1: mean = torch.where(m, v, 0.0).sum(dim=dims)"
    ]
    with pytest.raises(build.BuildError, match="not empty"):
        build.build(tmp_path)


def test_the_stand_in_search_finds_a_solution_hidden_in_the_copy(student, tmp_path):
    """The clean copy has no stand-in for exercise 3; a right answer pasted, under another name,
    into a test module of the copy (one that imports torch) is found: it passes exercise 3's graded
    tests in group_normalize's place."""
    out, _ = student
    assert build.stand_ins(out, numbers=[3])["passes"] == []
    hidden = tmp_path / "student"
    subprocess.run(["cp", "-r", str(out), str(hidden)], check=True)
    source = answers.source(answers.right(3)[0][0]).replace(
        "def group_normalize(", "def normalise_each_turn(", 1
    )
    with open(hidden / "tests" / "test_echo.py", "a") as f:
        f.write("\n\n" + source + "\n")
    found = build.stand_ins(hidden, numbers=[3])
    assert [3, "group_normalize", "tests.test_echo.normalise_each_turn"] in found["passes"], found
    assert found["tried"]["group_normalize"] > 100


def grade(directory: Path, *flags, env=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "exercises/grade.py", *flags],
        cwd=directory,
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "OMP_NUM_THREADS": "1", **(env or {})},
    )


def verdicts(stdout: str) -> dict:
    return {int(n): v for n, v in re.findall(r"^ ?(\d+) .* (PASS|FAIL)$", stdout, re.M)}


@pytest.fixture
def fresh(student, tmp_path):
    """A scratch copy of the student copy, to plant answers in."""
    out, _ = student
    subprocess.run(["cp", "-r", str(out), str(tmp_path / "copy")], check=True)
    return tmp_path / "copy"


def test_each_exercise_is_graded_alone(fresh):
    """In a fresh copy every exercise fails; with exercise 3 written (a loop, not the reference's
    code), exercise 3 alone passes, with its full points in the Gradescope file."""
    first = grade(fresh, "--expect", "fail", "--no-train-check")
    assert first.returncode == 0 and set(verdicts(first.stdout).values()) == {"FAIL"}, first.stdout
    answers.plant(fresh, answers.right(3)[0])
    result = grade(fresh, "--no-train-check", "--gradescope", str(fresh / "results.json"))
    assert result.returncode == 1
    assert verdicts(result.stdout) == {
        e.number: "PASS" if e.number == 3 else "FAIL" for e in EXERCISES
    }
    scores = {}
    for t in json.loads((fresh / "results.json").read_text())["tests"]:
        scores[t["number"].split(".")[0]] = scores.get(t["number"].split(".")[0], 0) + t["score"]
    assert scores.pop("3") == pytest.approx(15) and not any(scores.values())


def test_a_failing_test_says_why(fresh):
    """-v on a stub prints its hint; on a wrong answer, the hand-worked case with the computed and
    the expected values; on an answer that raises, the exception and the line of the student's
    file."""
    stub = grade(fresh, "3", "-v", "--no-train-check").stdout
    assert "not written yet" in stub and "Hint: Eq. 1 in exercises/paper.md" in " ".join(
        stub.split()
    )
    answers.plant(fresh, answers.wrong(3)[0])  # the population std
    wrong = grade(fresh, "3", "-v", "--no-train-check").stdout
    assert "rewards 0 and 2 with eps = 0.5\n        computed: [-0.6667, 0.6667]" in wrong
    assert "expected: [-0.5224, 0.5224]" in wrong
    echo = (
        (fresh / "echo.py")
        .read_text()
        .replace(
            "    v, m = values.double(), active.bool()\n",
            "    v, m = values.double(), active.bool()\n    v = v.rows()\n",
            1,
        )
    )
    (fresh / "echo.py").write_text(echo)
    broken = grade(fresh, "3", "-v", "--no-train-check").stdout
    line = 1 + echo.split("\n").index("    v = v.rows()")
    assert (
        "AttributeError: 'Tensor' object has no attribute 'rows'" in broken
        and f"at echo.py:{line}" in broken
    )


def test_train_check_runs_once_its_exercises_pass(fresh, tmp_path):
    """With exercises 1-3 and 6-8 written, grade.py trains one step of `train.py --estimator echo`
    on them (a smaller model here) and says so; with one of them missing it does not try."""
    for n in (1, 2, 3, 6, 7):
        answers.plant(fresh, answers.right(n)[0])
    flags = [
        "--train-flags",
        "--tiny-layers 1 --tiny-width 32 --warmup-episodes 8 --warmup-epochs 1",
    ]
    cache = {"ECHO_CACHE_DIR": str(tmp_path / "cache")}
    assert "See it work" not in grade(fresh, *flags, env=cache).stdout  # exercise 8 missing
    answers.plant(fresh, answers.right(8)[0])
    result = grade(fresh, *flags, env=cache)
    assert "See it work" in result.stdout and "it trained" in result.stdout, (
        result.stdout + result.stderr
    )


def test_code_hints_are_an_instructor_option(tmp_path):
    """--hints code puts the code-level hints in the stubs instead of the paper's."""
    out = tmp_path / "student"
    build.build(out, hints="code", check_stand_ins=False)
    for (path, function), hint in CODE_HINTS.items():
        assert f"Hint: {hint}." in stubbed_bodies(out / path)[function]
