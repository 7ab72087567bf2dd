"""The code's shape, as a reader beside the paper needs it: files and functions short enough to
read in one sitting at the formatter's line length, Eq. 2's update a screen long, and no two
modules that import each other (one concern leaked into the other)."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORE = "env oracle policy engine echo baselines metrics evaluate experiment".split()
LINES = {"train": 420, **{name: 550 for name in CORE}}


def functions(path: Path) -> dict[str, int]:
    """Each function's (and method's) name -> its length in lines, decorators left out."""
    tree = ast.parse(path.read_text())
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef)
    return {n.name: n.end_lineno - n.lineno + 1 for n in ast.walk(tree) if isinstance(n, kinds)}


def test_core_modules_and_their_functions_fit_a_sitting():
    """train.py holds at most 420 lines, every other core module at most 550, and no function in
    them is over 60 lines (measured on the formatted files, so lines were not widened to fit)."""
    for name, limit in LINES.items():
        path = ROOT / f"{name}.py"
        assert len(path.read_text().splitlines()) <= limit, name
        long = {f: n for f, n in functions(path).items() if n > 60}
        assert not long, f"{name}.py: {long}"


def test_eq2_update_and_the_training_loop_are_a_screen_long():
    """ppo_update (Eq. 2: passes, minibatches, the objective, the KL term, the clip, the step) is
    at most 45 lines, and train's loop (play, credit, update, log) at most 60."""
    assert functions(ROOT / "update.py")["ppo_update"] <= 45
    assert functions(ROOT / "train.py")["train"] <= 60


def imports(path: Path, modules: dict[str, Path]) -> set[str]:
    """The project's modules that `path` imports, at its top or inside a function."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
    return {m for m in found if m in modules}


def project_modules() -> dict[str, Path]:
    """Dotted name -> file, for every Python file of the project that is imported by name."""
    files = [p for p in ROOT.rglob("*.py") if not {".venv", "venv", "runs"} & set(p.parts)]
    named = {}
    for p in files:
        parts = p.relative_to(ROOT).with_suffix("").parts
        named[".".join(parts)] = p
        if parts[0] == "theory" and parts[-1] == "__init__":
            named["theory"] = p
    return named


def first_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A chain of imports from a module back to itself (depth first), or None."""
    state = {}  # name -> "open" while on the current path, "done" once its imports are checked

    def visit(name, path):
        state[name] = "open"
        for nxt in sorted(graph[name]):
            if state.get(nxt) == "open":
                return [*path, name, nxt]
            if nxt not in state and (found := visit(nxt, [*path, name])):
                return found
        state[name] = "done"
        return None

    return next((c for name in sorted(graph) if name not in state and (c := visit(name, []))), None)


def test_no_import_cycle_anywhere_in_the_tree():
    """No chain of imports leads from a module back to itself: the top-level modules, bench/,
    theory/ and the course kit (its build and autograder included)."""
    modules = project_modules()
    graph = {name: imports(path, modules) - {name} for name, path in modules.items()}
    assert first_cycle(graph) is None, " -> ".join(first_cycle(graph))


def test_the_cycle_check_finds_a_cycle_and_only_a_cycle():
    """The check is not vacuous: a loop through three modules is found, a chain is not."""
    assert first_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert first_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None
