"""The answers the graded tests must tell apart, and how to plant one in a built copy.

Each exercise has a file here, exNN.py, with WRONG, the mistakes a student is likely to make in
it, and RIGHT, two correct answers written differently from the reference. An answer is a
function named STUB__what (e.g. `group_normalize__population_std`); planting it replaces the
stub's whole definition in the built copy with the answer's, renamed to STUB, followed by any other
answer of the same file it calls. For an exercise of several stubs (exercises 3 and 8) a right
answer is a tuple of functions, one per stub, and a wrong answer replaces one of them in RIGHT[0].

tests/test_exercise_answers.py plants each: a wrong answer must turn its exercise, and only it,
to FAIL, and fail one of its visible tests; a right one must PASS.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import textwrap
from pathlib import Path

from exercises.catalog import EXERCISES

HIDDEN = Path(__file__).resolve().parent.parent / "hidden"


def answers_of(number: int):
    """The module of an exercise's answers (it holds WRONG and RIGHT)."""
    return importlib.import_module(f"exercises.instructor.answers.ex{number:02d}")


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
    namespace = answer.__globals__  # its exNN.py
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
