"""Write the student copy of the project, or Gradescope's autograder for it.

    python exercises/build.py --out DIR                the student copy
    python exercises/build.py --out DIR --hints code   ... with hints that spell out the code
    python exercises/build.py --autograder DIR         the autograder (DIR/autograder.zip to upload)

Every body between `# BEGIN SOLUTION` and `# END SOLUTION` (the markers of nbgrader and
otter-grader) is replaced by a stub that raises NotImplementedError with the exercise's number,
a hint and the shapes in and out (exercises/catalog.py); every other file of the project is
copied as it is, but for the instructor's side of the kit (INSTRUCTOR_SIDE: the hidden tests, the
answers and code hints, this script, the kit's own tests, CI) and the git history. nbgrader and
otter-grader build notebooks (and R Markdown) only, not a project of plain .py files, hence this
script.

The build checks itself and stops with an error if any check fails: each exercise of the catalog
is stubbed exactly once, every marker pair is closed and inside a catalogued function, the
stubbed files still parse, no line of any solution survives anywhere in DIR, and no function of
DIR passes an exercise's graded tests in the place of its stub (exercises/instructor/standins.py).
"""

from __future__ import annotations

import argparse
import ast
import json
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from exercises.catalog import EXERCISES, stubs_by_place  # noqa: E402
from exercises.instructor import bundle  # noqa: E402
from exercises.instructor.code_hints import CODE_HINTS  # noqa: E402

BEGIN, END = "# BEGIN SOLUTION", "# END SOLUTION"
INSTRUCTOR_SIDE = ("exercises/instructor/", "exercises/build.py", "tests/test_exercise", ".ci/")
SKIPPED_DIRS = {".git", ".venv", "venv", ".ci", "runs", "__pycache__", ".hypothesis", "theory/out"}
SHORTEST_CHECKED = 16  # solution lines at least this long must not appear in DIR ("return r" may)


class BuildError(Exception):
    pass


def project_files(root: Path) -> list[str]:
    """The files of the project, relative to root, but the instructor's side: git's tracked and
    untracked-but-not-ignored files when root is a git checkout, else every file outside the
    skipped directories."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split("\0")
        files = [f for f in listed if f and (root / f).is_file()]
    except (OSError, subprocess.CalledProcessError):
        rel = [p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()]
        files = [
            f
            for f in rel
            if not any(f.startswith(d + "/") or f"/{d}/" in "/" + f for d in SKIPPED_DIRS)
        ]
    return sorted(f for f in files if not f.startswith(INSTRUCTOR_SIDE))


def stub_lines(exercise, stub, indent: str, hint: str) -> list[str]:
    """The body the student gets: one raise whose message says what to write, wrapped to read."""
    message = (
        f"Exercise {exercise.number}, {exercise.name} [{exercise.paper}]: write {stub.function}. "
        f"Hint: {hint}. Shapes: {stub.shapes}. See exercises/README.md."
    )
    chunks = textwrap.wrap(message, width=max(40, 96 - len(indent) - 8), drop_whitespace=False)
    return (
        [f"{indent}raise NotImplementedError("]
        + [f"{indent}    {json.dumps(c)}" for c in chunks[:-1]]
        + [f"{indent}    {json.dumps(chunks[-1])})"]
    )


def stub_out(path: str, text: str, places: dict, hints: str = "paper") -> tuple[str, list]:
    """(the file with every marked body stubbed, [(exercise number, path, function, solution
    lines)])."""
    lines = text.split("\n")
    functions = [
        (n.lineno, n.end_lineno, n.name)
        for n in ast.walk(ast.parse(text))
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]
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
        name = max(inside)[2] if inside else None  # the innermost function around the marker
        if (path, name) not in places:
            raise BuildError(
                f"{path}:{i + 1}: a solution in {name or 'no function'}, which no exercise names"
            )
        exercise, stub = places[(path, name)]
        hint = CODE_HINTS[(path, name)] if hints == "code" else stub.hint
        out += stub_lines(exercise, stub, lines[i][: len(lines[i]) - len(lines[i].lstrip())], hint)
        found.append((exercise.number, path, name, lines[i + 1 : j]))
        i = j + 1
    return "\n".join(out), found


def surviving_lines(out: Path, files: list[str], solutions: list) -> list[str]:
    """Where a solution line (of SHORTEST_CHECKED characters or more) still appears in DIR."""
    needles = {
        line.strip()
        for *_, block in solutions
        for line in block
        if len(line.strip()) >= SHORTEST_CHECKED
    }
    hits = []
    for f in files:
        try:
            text = (out / f).read_text()
        except (UnicodeDecodeError, OSError):
            continue  # binary files (figures) hold no code
        hits += [
            f"{f}:{n}: {line.strip()}"
            for n, line in enumerate(text.splitlines(), 1)
            if line.strip() in needles
        ]
    return hits


def reference_source(path: str, function: str, root: Path = ROOT) -> str:
    """The reference's whole definition of a top-level function."""
    text = (root / path).read_text()
    node = next(
        n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef) and n.name == function
    )
    return ast.get_source_segment(text, node)


def stand_ins(out: Path, root: Path = ROOT, numbers=None) -> dict:
    """Run exercises/instructor/standins.py on the copy: which functions of it pass an exercise
    (of `numbers`, default all)."""
    spec = [
        {
            "number": e.number,
            "tests": [
                str(p)
                for p in sorted((out / "exercises" / "tests").glob(f"test_ex{e.number:02d}_*.py"))
            ],
            "stubs": [
                {
                    "path": s.path,
                    "module": s.path.removesuffix(".py").replace("/", "."),
                    "function": s.function,
                    "reference": reference_source(s.path, s.function, root),
                }
                for s in e.stubs
            ],
        }
        for e in EXERCISES
        if numbers is None or e.number in numbers
    ]
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "spec.json").write_text(json.dumps(spec))
        try:
            done = subprocess.run(
                [
                    sys.executable,
                    str(root / "exercises" / "instructor" / "standins.py"),
                    str(out),
                    str(Path(tmp) / "spec.json"),
                    str(Path(tmp) / "found.json"),
                ],
                capture_output=True,
                text=True,
                timeout=1800,
            )
        except subprocess.TimeoutExpired:
            raise BuildError("the search for stand-ins ran over 30 minutes") from None
        if done.returncode != 0 or not (Path(tmp) / "found.json").exists():
            raise BuildError(f"the search for stand-ins stopped:\n{done.stderr[-2000:]}")
        return json.loads((Path(tmp) / "found.json").read_text())


def build(out: Path, root: Path = ROOT, hints: str = "paper", check_stand_ins: bool = True) -> list:
    """Write the student copy into `out` (absent or empty). Returns the stubbed solutions."""
    if out.exists() and any(out.iterdir()):
        raise BuildError(f"{out} is not empty: give a new or empty directory")
    if out.resolve().is_relative_to(root.resolve()):
        raise BuildError(f"{out} is inside the project: give a directory outside {root}")
    out.mkdir(parents=True, exist_ok=True)
    places, files, solutions = stubs_by_place(), project_files(root), []
    for f in files:
        (out / f).parent.mkdir(parents=True, exist_ok=True)
        if f.endswith(".py") and BEGIN in (root / f).read_text():
            text, found = stub_out(f, (root / f).read_text(), places, hints)
            ast.parse(text)  # the student's file must still import
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
        raise BuildError("solution lines survive in the student copy:\n  " + "\n  ".join(hits[:20]))
    if check_stand_ins:
        found = stand_ins(out, root)
        if found["passes"]:
            raise BuildError(
                "functions of the student copy pass an exercise in the place of its stub:\n  "
                + "\n  ".join(f"exercise {n}, {stub}: {f}" for n, stub, f in found["passes"])
            )
    return solutions


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--out", help="where the student copy is written (new or empty)")
    where.add_argument("--autograder", help="where the autograder is written (new or empty)")
    parser.add_argument(
        "--hints",
        choices=("paper", "code"),
        default="paper",
        help="paper: hints point at the paper and the docstrings; code: they spell out the code",
    )
    args = parser.parse_args(argv)
    try:
        if args.out:
            solutions = build(Path(args.out), hints=args.hints)
        else:
            out = Path(args.autograder)
            if out.exists() and any(out.iterdir()):
                raise BuildError(f"{out} is not empty: give a new or empty directory")
            solutions = build(out / "student", hints=args.hints)
            bundle.write(out)
    except (BuildError, bundle.BundleError) as e:
        print(f"build.py: {e}", file=sys.stderr)
        return 2
    numbers = sorted({s[0] for s in solutions})
    stubbed = (
        f"{len(solutions)} function bodies of exercises {', '.join(map(str, numbers))} stubbed; "
        "no solution line survives; no function of the copy passes an exercise"
    )
    if args.out:
        print(
            f"wrote the student copy to {args.out}: {stubbed}; grade it with "
            f"`cd {args.out} && python exercises/grade.py`"
        )
    else:
        print(
            f"wrote the autograder to {args.autograder} (its student copy: {stubbed}); upload "
            f"{Path(args.autograder) / 'autograder.zip'} to Gradescope"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
