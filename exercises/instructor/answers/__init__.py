"""The answers the graded tests must tell apart, and how to plant one in a built copy.

Each hidden test file (exercises/instructor/hidden/test_exNN_*_random.py) ends with WRONG, the
mistakes a student is likely to make in that exercise, and RIGHT, two correct answers written
differently from the reference. An answer is a function named STUB__what (e.g.
`group_normalize__population_std`); planting it replaces the stub's whole definition in the
built copy with the answer's, renamed to STUB, followed by any other answer of the same file it
calls. For an exercise of several stubs (exercise 8) a right answer is a tuple of functions, one
per stub, and a wrong answer replaces one of them in RIGHT[0].

tests/test_exercise_answers.py plants each: a wrong answer must turn its exercise, and only it,
to FAIL; a right one must PASS.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import sys
import textwrap
from pathlib import Path

from exercises.catalog import EXERCISES

HIDDEN = Path(__file__).resolve().parent / "hidden"
GRADED = (
    HIDDEN.parent.parent / "tests"
)  # the hidden tests import expect.py and test_ex04_grpo.py from there


def answers_of(number: int):
    """The hidden test module of an exercise (it holds WRONG and RIGHT)."""
    (path,) = HIDDEN.glob(f"test_ex{number:02d}_*.py")
    if str(GRADED) not in sys.path:
        sys.path.append(str(GRADED))
    spec = importlib.util.spec_from_file_location(f"answers_ex{number:02d}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def right(number: int) -> list[tuple]:
    """Each right answer of an exercise, as a tuple of functions, one per stub."""
    return [a if isinstance(a, tuple) else (a,) for a in answers_of(number).RIGHT]


def wrong(number: int) -> list[tuple]:
    """Each wrong answer of an exercise, completed with RIGHT[0] for the exercise's other stubs."""
    module = answers_of(number)
    first = right(number)[0]
    return [tuple(f for f in first if stub_of(f) != stub_of(w)) + (w,) for w in module.WRONG]


def stub_of(answer) -> str:
    return answer.__name__.split("__")[0]


def source(answer) -> str:
    """The answer's definition renamed to its stub, then the other answers it calls."""
    namespace = answer.__globals__  # the hidden test file's
    needed, queue = [], [answer]
    while queue:
        f = queue.pop(0)
        if f in needed:
            continue
        needed.append(f)
        queue += [
            namespace[n]
            for n in f.__code__.co_names
            if "__" in n and inspect.isfunction(namespace.get(n))
        ]
    texts = [textwrap.dedent(inspect.getsource(f)) for f in needed]
    texts[0] = texts[0].replace(f"def {answer.__name__}(", f"def {stub_of(answer)}(", 1)
    return "\n\n".join(texts)


def plant(copy: Path, answer: tuple) -> None:
    """Write each function of `answer` over its stub in the copy's file."""
    paths = {s.function: s.path for e in EXERCISES for s in e.stubs}
    for f in answer:
        path = copy / paths[stub_of(f)]
        lines = path.read_text().split("\n")
        node = next(
            n
            for n in ast.parse("\n".join(lines)).body
            if isinstance(n, ast.FunctionDef) and n.name == stub_of(f)
        )
        start = min([node.lineno] + [d.lineno for d in node.decorator_list]) - 1
        path.write_text(
            "\n".join(lines[:start] + source(f).rstrip("\n").split("\n") + lines[node.end_lineno :])
        )
