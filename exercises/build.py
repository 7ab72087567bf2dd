"""Write the student version of the whole project: `python exercises/build.py --out DIR`.

Every body between `# BEGIN SOLUTION` and `# END SOLUTION` (the markers of nbgrader and
otter-grader) is replaced by a stub that raises NotImplementedError with the exercise's number,
a hint and the shapes in and out (exercises/catalog.py); every other byte of the project is
copied as it is. nbgrader and otter-grader build notebooks (and R Markdown) only, not a project
of plain .py files, hence this script. Not copied: the git history (it holds the solutions),
the instructor's hidden tests (exercises/instructor_tests/), virtual environments and runs.

The build checks itself and stops with an error if any check fails: each exercise of the
catalog is stubbed exactly once, every marker pair is closed and inside a catalogued function,
the stubbed files still parse, and no line of any solution survives anywhere in DIR.
"""
from __future__ import annotations

import argparse
import ast
import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from exercises.catalog import stubs_by_place  # noqa: E402

BEGIN, END = "# BEGIN SOLUTION", "# END SOLUTION"
NOT_COPIED = ("exercises/instructor_tests/",)
SKIPPED_DIRS = {".git", ".venv", "venv", ".ci/venv", "runs", "__pycache__", ".hypothesis", "theory/out"}
SHORTEST_CHECKED = 16   # solution lines at least this long must not appear in DIR ("return r" may)


class BuildError(Exception):
    pass


def project_files(root: Path) -> list[str]:
    """The files of the project, relative to root: git's tracked and untracked-but-not-ignored
    files when root is a git checkout, else every file outside the skipped directories."""
    try:
        listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], cwd=root,
                                capture_output=True, text=True, check=True).stdout.split("\0")
        files = [f for f in listed if f and (root / f).is_file()]
    except (OSError, subprocess.CalledProcessError):
        rel = [p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()]
        files = [f for f in rel if not any(f.startswith(d + "/") or f"/{d}/" in "/" + f for d in SKIPPED_DIRS)]
    return sorted(f for f in files if not f.startswith(NOT_COPIED))


def stub_lines(exercise, stub, indent: str) -> list[str]:
    """The body the student gets: one raise whose message says what to write, wrapped to read."""
    message = (f"Exercise {exercise.number}, {exercise.name} [{exercise.paper}]: write {stub.function}. "
               f"Hint: {stub.hint}. Shapes: {stub.shapes}. See exercises/README.md.")
    chunks = textwrap.wrap(message, width=max(40, 96 - len(indent) - 8), drop_whitespace=False)
    return ([f"{indent}raise NotImplementedError("] + [f"{indent}    {json.dumps(c)}" for c in chunks[:-1]]
            + [f"{indent}    {json.dumps(chunks[-1])})"])


def stub_out(path: str, text: str, places: dict) -> tuple[str, list]:
    """(the file with every marked body stubbed, [(exercise number, path, function, solution lines)])."""
    lines = text.split("\n")
    functions = [(n.lineno, n.end_lineno, n.name) for n in ast.walk(ast.parse(text))
                 if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    out, found, i = [], [], 0
    while i < len(lines):
        if lines[i].strip() != BEGIN:
            if lines[i].strip() == END:
                raise BuildError(f"{path}:{i + 1}: {END} without {BEGIN}")
            out.append(lines[i])
            i += 1
            continue
        j = next((k for k in range(i + 1, len(lines)) if lines[k].strip() in (BEGIN, END)), None)
        if j is None or lines[j].strip() != END:
            raise BuildError(f"{path}:{i + 1}: {BEGIN} is not closed by {END}")
        inside = [f for f in functions if f[0] < i + 1 <= f[1]]
        name = max(inside)[2] if inside else None        # the innermost function around the marker
        if (path, name) not in places:
            raise BuildError(f"{path}:{i + 1}: a solution in {name or 'no function'}, which no exercise names")
        exercise, stub = places[(path, name)]
        out += stub_lines(exercise, stub, lines[i][:len(lines[i]) - len(lines[i].lstrip())])
        found.append((exercise.number, path, name, lines[i + 1:j]))
        i = j + 1
    return "\n".join(out), found


def surviving_lines(out: Path, files: list[str], solutions: list) -> list[str]:
    """Where a solution line (of SHORTEST_CHECKED characters or more) still appears in DIR."""
    needles = {line.strip() for *_, block in solutions for line in block if len(line.strip()) >= SHORTEST_CHECKED}
    hits = []
    for f in files:
        try:
            text = (out / f).read_text()
        except (UnicodeDecodeError, OSError):
            continue            # binary files (figures) hold no code
        hits += [f"{f}:{n}: {line.strip()}" for n, line in enumerate(text.splitlines(), 1) if line.strip() in needles]
    return hits


def build(out: Path, root: Path = ROOT) -> list:
    """Write the student version into `out` (absent or empty). Returns the stubbed solutions."""
    if out.exists() and any(out.iterdir()):
        raise BuildError(f"{out} is not empty: give a new or empty directory")
    if out.resolve().is_relative_to(root.resolve()):
        raise BuildError(f"{out} is inside the project: give a directory outside {root}")
    places, files, solutions = stubs_by_place(), project_files(root), []
    for f in files:
        (out / f).parent.mkdir(parents=True, exist_ok=True)
        if f.endswith(".py") and BEGIN in (root / f).read_text():
            text, found = stub_out(f, (root / f).read_text(), places)
            ast.parse(text)                     # the student's file must still import
            (out / f).write_text(text)
            solutions += found
        else:
            shutil.copy2(root / f, out / f)
    counts = [sum((path, fn) == (s[1], s[2]) for s in solutions) for path, fn in places]
    if any(n != 1 for n in counts):
        missed = [place for place, n in zip(places, counts) if n != 1]
        raise BuildError(f"exercise functions without exactly one marked body: {missed}")
    hits = surviving_lines(out, files, solutions)
    if hits:
        raise BuildError("solution lines survive in the student version:\n  " + "\n  ".join(hits[:20]))
    return solutions


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    parser.add_argument("--out", required=True, help="where the student version is written (new or empty)")
    args = parser.parse_args(argv)
    out = Path(args.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
        solutions = build(out)
    except BuildError as e:
        print(f"build.py: {e}", file=sys.stderr)
        return 2
    numbers = sorted({s[0] for s in solutions})
    print(f"wrote the student version to {out}: {len(solutions)} function bodies of exercises "
          f"{', '.join(map(str, numbers))} stubbed; no solution line survives; "
          f"grade it with `cd {out} && python exercises/grade.py`")
    return 0


if __name__ == "__main__":
    sys.exit(main())
