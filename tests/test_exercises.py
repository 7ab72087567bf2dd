"""The course kit (exercises/): the catalog names real, marked functions; the build stubs each
exactly once, keeps everything else and leaves no solution line; the grader grades each
exercise on its own. CI (.ci/run) also grades a fresh student copy and runs its test suite."""
import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from exercises import build
from exercises.catalog import EXERCISES, stubs_by_place

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = all(build.BEGIN in (ROOT / s.path).read_text() for e in EXERCISES for s in e.stubs)
pytestmark = pytest.mark.skipif(not REFERENCE, reason="the student version: the kit is built from the reference")


def test_the_catalog_names_marked_functions_in_course_order_each_with_its_tests():
    assert [e.number for e in EXERCISES] == list(range(1, len(EXERCISES) + 1)) and len(EXERCISES) >= 8
    for e in EXERCISES:
        assert len(list((ROOT / "exercises" / "tests").glob(f"test_ex{e.number:02d}_*.py"))) == 1, e.number
        for stub in e.stubs:
            _, found = build.stub_out(stub.path, (ROOT / stub.path).read_text(), stubs_by_place())
            assert [f[2] for f in found].count(stub.function) == 1, (stub.path, stub.function)


@pytest.fixture(scope="module")
def student(tmp_path_factory):
    out = tmp_path_factory.mktemp("kit") / "student"
    out.mkdir()
    return out, build.build(out)


def stubbed_bodies(path: Path) -> dict:
    """function name -> the exercise number its body raises, for every stubbed function of a file."""
    stubs = {}
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.FunctionDef) and isinstance(node.body[-1], ast.Raise):
            call = node.body[-1].exc
            if isinstance(call, ast.Call) and getattr(call.func, "id", "") == "NotImplementedError":
                stubs[node.name] = ast.literal_eval(call.args[0])
    return stubs


def test_the_build_stubs_every_exercise_once_and_copies_the_rest(student):
    out, solutions = student
    assert sorted((s[1], s[2]) for s in solutions) == sorted(stubs_by_place())
    for e in EXERCISES:
        for stub in e.stubs:
            message = stubbed_bodies(out / stub.path)[stub.function]
            assert message.startswith(f"Exercise {e.number}, ") and "Hint:" in message and "Shapes:" in message
    untouched = ["train.py", "experiment.py", "exercises/grade.py", "tests/test_train.py", "README.md"]
    assert all((out / f).read_bytes() == (ROOT / f).read_bytes() for f in untouched)
    assert not (out / ".git").exists() and not (out / "exercises" / "instructor_tests").exists()
    assert not any(line.strip() in (build.BEGIN, build.END) for p in out.rglob("*.py") for line in p.read_text().splitlines())


def test_the_build_refuses_what_it_cannot_stub_cleanly(tmp_path):
    places = stubs_by_place()
    for text, message in (("def f():\n    # BEGIN SOLUTION\n    return 1\n    # END SOLUTION\n", "no exercise names"),
                          ("def update_belief():\n    # BEGIN SOLUTION\n    return 1\n", "not closed"),
                          ("x = 1\n# END SOLUTION\n", "without")):
        with pytest.raises(build.BuildError, match=message):
            build.stub_out("env.py", text, places)
    (tmp_path / "kept.py").write_text("    mean = torch.where(m, v, 0.0).sum(dim=dims)\n")
    solutions = [(3, "echo.py", "group_normalize", ["    mean = torch.where(m, v, 0.0).sum(dim=dims)", "    n"])]
    assert build.surviving_lines(tmp_path, ["kept.py"], solutions) == ["kept.py:1: mean = torch.where(m, v, 0.0).sum(dim=dims)"]
    with pytest.raises(build.BuildError, match="not empty"):
        build.build(tmp_path)


def grade(directory: Path, *flags) -> subprocess.CompletedProcess:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "exercises/grade.py", *flags], cwd=directory, env=env,
                          capture_output=True, text=True, timeout=600)


def test_each_exercise_is_graded_alone(student):
    """In the student copy every exercise fails; with exercise 3 (Eq. 1) solved by a loop, which
    is not the reference's code, exercise 3 alone passes; the Gradescope file says the same."""
    out, _ = student
    fresh = grade(out, "--expect", "fail")
    assert fresh.returncode == 0 and fresh.stdout.count("FAIL") == len(EXERCISES), fresh.stdout
    echo = (out / "echo.py").read_text()
    start = echo.index("    raise NotImplementedError(", echo.index("def group_normalize"))
    end = echo.index("\n\n\ndef echo_advantages")
    loop = '''    import itertools, statistics
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    x, on = values.double(), active.bool()
    out = torch.zeros_like(x)
    for index in itertools.product(*[[slice(None)] if d in dims else range(n) for d, n in enumerate(x.shape)]):
        xs = x[index][on[index]].tolist()
        if len(xs) > 1:
            out[index] = torch.where(on[index], (x[index] - statistics.mean(xs)) / (statistics.stdev(xs) + eps), 0.0)
    return out'''
    (out / "echo.py").write_text(echo[:start] + loop + echo[end:])
    result = grade(out, "--gradescope", str(out / "results.json"))
    lines = {int(line.split()[0]): line for line in result.stdout.splitlines() if line.endswith(("PASS", "FAIL"))}
    assert result.returncode == 1 and lines[3].endswith("PASS"), result.stdout
    assert all(lines[e.number].endswith("FAIL") for e in EXERCISES if e.number != 3), result.stdout
    scores = {t["number"]: (t["score"], t["max_score"]) for t in json.loads((out / "results.json").read_text())["tests"]}
    assert scores["3"][0] == scores["3"][1] > 0 and all(s == 0 for n, (s, _) in scores.items() if n != "3")
