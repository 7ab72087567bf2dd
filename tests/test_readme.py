"""The README's reading map stays true: every `file.py`: `name` it points a reader to exists, and
the file table lists every top-level module."""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def defined_names(path: Path) -> set:
    """Top-level functions, classes and constants of a file, and Class.method for their methods."""
    names = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        if isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        if isinstance(node, ast.ClassDef):
            names |= {f"{node.name}.{n.name}" for n in node.body if isinstance(n, ast.FunctionDef)}
    return names


def test_every_function_the_reading_map_names_exists():
    section = README.split("## Reading the paper with the code")[1].split("\n## ")[0]
    pointers = re.findall(r"`([\w/]+\.py)`: ((?:`[\w.]+`(?:, )?)+)", section)
    assert len(pointers) >= 20
    for path, names in pointers:
        assert (ROOT / path).is_file(), path
        for name in re.findall(r"`([\w.]+)`", names):
            assert name in defined_names(ROOT / path), f"{path}: {name}"


def test_the_file_table_lists_every_module():
    for module in ROOT.glob("*.py"):
        assert f"`{module.name}`" in README, module.name
