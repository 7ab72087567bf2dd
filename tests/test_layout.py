"""The code's shape, as a reader beside the paper needs it: the top level is the paper's loop and
its measurements, the rest in a few folders that sit below what uses them; files and functions
short enough to read in one sitting at the formatter's line length; Eq. 2's update and the
training loop a screen long; no import circle; and one name for each kind of config."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The design card's eight modules, and those of the loop and its measurements a reader beside the
# paper opens next (the README's file table says what each holds).
TOP = set(
    "env oracle policy echo baselines metrics train evaluate "
    "rollouts update reference fidelity episodes experiment config".split()
)
FOLDERS = {"game", "lm", "tools"}  # the supporting modules, grouped by concern
NOT_CHECKED = {".venv", "venv", "runs", "bench", "tests", ".ci"}  # bench/ and tests/: not the code
LINES = {"train": 420}  # any other module: 550 at the top level, 700 in a folder


def functions(path: Path) -> dict[str, int]:
    """Each function's (and method's) name -> its length in lines, decorators left out."""
    tree = ast.parse(path.read_text())
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef)
    return {n.name: n.end_lineno - n.lineno + 1 for n in ast.walk(tree) if isinstance(n, kinds)}


def checked_files() -> list[Path]:
    """Every Python file of the project but bench/'s and tests/' (and the kit's own tests')."""
    files = [p for p in ROOT.rglob("*.py") if not NOT_CHECKED & set(p.relative_to(ROOT).parts)]
    return [p for p in files if "tests" not in p.relative_to(ROOT).parts]


def test_the_top_level_is_the_papers_loop_and_the_rest_is_in_three_folders():
    """`ls *.py` shows the paper's modules only; the supporting modules sit in at most three
    folders, each a package whose docstring says what it holds and where it sits."""
    assert {p.stem for p in ROOT.glob("*.py")} == TOP
    folders = {p.parent.name for p in ROOT.glob("*/__init__.py")} - {"theory", "exercises"}
    assert folders == FOLDERS and len(FOLDERS) <= 3
    for folder in FOLDERS:
        assert len(ast.get_docstring(ast.parse((ROOT / folder / "__init__.py").read_text()))) > 80


def test_every_module_and_its_functions_fit_a_sitting():
    """train.py holds at most 420 lines, every other top-level module at most 550, a module of a
    folder (theory/ and the course kit included) at most 700, and no function of any of them is
    over 60 lines (measured on the formatted files, so lines were not widened to fit)."""
    for path in checked_files():
        rel = path.relative_to(ROOT)
        limit = LINES.get(path.stem, 550) if len(rel.parts) == 1 else 700
        assert len(path.read_text().splitlines()) <= limit, rel
        long = {f: n for f, n in functions(path).items() if n > 60}
        assert not long, f"{rel}: {long}"


def test_eq2_update_and_the_training_loop_are_a_screen_long():
    """ppo_update (Eq. 2: passes, minibatches, the objective, the KL term, the clip, the step) is
    at most 55 lines, and train's loop (play, credit, update, log) at most 60."""
    assert functions(ROOT / "update.py")["ppo_update"] <= 55
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
    """Dotted name -> file, for every Python file of the project that is imported by name (a
    package by its __init__.py too)."""
    files = [p for p in ROOT.rglob("*.py") if not {".venv", "venv", "runs"} & set(p.parts)]
    named = {}
    for p in files:
        parts = p.relative_to(ROOT).with_suffix("").parts
        named[".".join(parts)] = p
        if parts[-1] == "__init__":
            named[".".join(parts[:-1])] = p
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
    """No chain of imports leads from a module back to itself: the top-level modules, the folders,
    bench/, theory/ and the course kit (its build and autograder included)."""
    modules = project_modules()
    graph = {name: imports(path, modules) - {name} for name, path in modules.items()}
    assert first_cycle(graph) is None, " -> ".join(first_cycle(graph))


def unit(name: str) -> str:
    """The room a module lives in: its folder (game, lm, tools), or itself at the top level."""
    return name.split(".")[0]


def test_no_folder_imports_a_module_above_it():
    """Taking each folder as one room and each top-level module as another, no chain of imports
    leads from a room back to itself: a folder imports only what sits below it, never a module
    that (through any chain) imports the folder."""
    modules = project_modules()
    rooms = TOP | FOLDERS
    graph = {room: set() for room in rooms}
    for name, path in modules.items():
        if unit(name) in rooms:
            graph[unit(name)] |= {unit(m) for m in imports(path, modules) if unit(m) in rooms}
    graph = {room: targets - {room} for room, targets in graph.items()}
    assert first_cycle(graph) is None, " -> ".join(first_cycle(graph))


def test_the_cycle_check_finds_a_cycle_and_only_a_cycle():
    """The check is not vacuous: a loop through three modules is found, a chain is not."""
    assert first_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert first_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


# Each config type has one name wherever a function takes it or a line builds it; an entry point's
# own config (TrainConfig, EvalConfig, FidelityConfig, a bench or theory script's) is `cfg`.
CONFIG_NAMES = {
    "GameConfig": "game_cfg",
    "UpdateConfig": "update_cfg",
    "StartConfig": "start_cfg",
    "SplitConfig": "split_cfg",
    "RunConfig": "run_cfg",
    "OfflineConfig": "offline_cfg",
    "ModelConfig": "model_cfg",
    "WarmupConfig": "warmup_cfg",
    "SampleConfig": "sample",
    "LoraConfig": "lora",
    "TinyConfig": "tiny",
    "TrainConfig": "cfg",
    "EvalConfig": "cfg",
    "FidelityConfig": "cfg",
}


def config_names(tree: ast.Module) -> list[tuple[str, str, int]]:
    """(config type, the name it is given, line) for every parameter annotated with a config type
    and every name assigned a config built by its class or by tools.cli.settings."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args.posonlyargs + node.args.args + node.args.kwonlyargs
            for a in args:
                kind = getattr(a.annotation, "id", None) or getattr(a.annotation, "attr", None)
                if kind in CONFIG_NAMES:
                    found.append((kind, a.arg, a.lineno))
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            call = node.value
            kind = getattr(call.func, "id", None) or getattr(call.func, "attr", None)
            if kind == "settings" and call.args:
                kind = getattr(call.args[0], "id", None) or getattr(call.args[0], "attr", None)
            names = [t.id for t in node.targets if isinstance(t, ast.Name)]
            if kind in CONFIG_NAMES and names:
                found.append((kind, names[0], node.lineno))
    return found


def test_each_config_type_has_one_name_in_every_file():
    """A GameConfig is `game_cfg`, an UpdateConfig `update_cfg`, ... in every file of the code
    (CONFIG_NAMES), so `cfg` names only an entry point's own config."""
    wrong = [
        f"{path.relative_to(ROOT)}:{line} {kind} named {name}"
        for path in checked_files()
        for kind, name, line in config_names(ast.parse(path.read_text()))
        if name != CONFIG_NAMES[kind]
    ]
    assert not wrong, wrong


def test_the_name_check_sees_a_config_misnamed():
    """The check is not vacuous: a GameConfig parameter called `cfg` and an UpdateConfig built
    under another name are both found."""
    code = "def f(cfg: GameConfig): pass\nu = settings(UpdateConfig, c)\ng = GameConfig()\n"
    assert config_names(ast.parse(code)) == [
        ("GameConfig", "cfg", 1),
        ("UpdateConfig", "u", 2),
        ("GameConfig", "g", 3),
    ]
