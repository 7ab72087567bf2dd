"""The build's search for stand-ins: a function of the student copy that passes an exercise's
graded tests in the place of its stub, so that the copy would hand the student a solution.

    python exercises/instructor/standins.py COPY SPEC OUT     (exercises/build.py runs it)

SPEC (JSON) lists, per exercise, its stubs (path, function, the reference's source of that
function) and its graded test files. For every stub, every function defined in the copy (at
module level or in a class body) that can be called with the stub's required positional
arguments is put in the stub's place: every name, in every loaded module, that held the stub now
holds the candidate; the exercise's other stubs get the reference's code. Then the exercise's
graded tests are called; a candidate that passes them all stands in. OUT (JSON) receives
{"tried": {function: candidates tried}, "passes": [[exercise, function, candidate], ...],
"not_imported": [module, ...]}.

The candidates are the project's own functions called with wrong arguments, so they run in a
scratch directory (with HOME there too), silenced, each test under a time limit.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import io
import json
import os
import shutil
import signal
import sys
import tempfile
from pathlib import Path

SECONDS_PER_TEST = 2.0


class OutOfTime(BaseException):
    pass


def on_alarm(signum, frame):
    raise OutOfTime()


def import_everything(copy: Path) -> tuple[list, list]:
    """Import every module of the copy; returns (modules, names of those that would not import)."""
    modules, failed = [], []
    for path in sorted(copy.rglob("*.py")):
        rel = path.relative_to(copy).with_suffix("")
        name = ".".join(rel.parts)
        try:
            with (
                contextlib.redirect_stdout(io.StringIO()),
                contextlib.redirect_stderr(io.StringIO()),
            ):
                modules.append(importlib.import_module(name))
        except BaseException:  # a script that needs what this machine lacks, or exits
            failed.append(name)
    return modules, failed


def functions_of(modules) -> list[tuple[str, object]]:
    """(qualified name, function) for every function the copy defines, once each."""
    found, seen = [], set()
    for module in modules:
        for obj in list(vars(module).values()):
            if getattr(obj, "__module__", None) != module.__name__:
                continue
            members = (
                [obj]
                if inspect.isfunction(obj)
                else (
                    [getattr(m, "__func__", m) for m in vars(obj).values()]
                    if inspect.isclass(obj)
                    else []
                )
            )
            for f in members:
                if inspect.isfunction(f) and f.__code__ not in seen:
                    seen.add(f.__code__)
                    found.append((f"{module.__name__}.{f.__qualname__}", f))
    return found


def required_positional(f) -> int:
    return sum(
        p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        for p in inspect.signature(f).parameters.values()
    )


def callable_like(f, n: int) -> bool:
    try:
        inspect.signature(f).bind(*range(n))
        return True
    except (TypeError, ValueError):
        return False


def holders(target) -> list[tuple[dict, str]]:
    """Every (module namespace, name) that holds `target`: where a stand-in must be put."""
    return [
        (vars(m), name)
        for m in list(sys.modules.values())
        if m is not None
        for name, value in list(vars(m).items())
        if value is target
    ]


@contextlib.contextmanager
def planted(places: list[tuple[list, object]]):
    """Put each replacement in every place its original held, and put the originals back after."""
    saved = [(ns, name, ns[name]) for spots, _ in places for ns, name in spots]
    for spots, replacement in places:
        for ns, name in spots:
            ns[name] = replacement
    try:
        yield
    finally:
        for ns, name, value in saved:
            ns[name] = value


def passes(tests, scratch: str) -> bool:
    """Every test passes, each within SECONDS_PER_TEST; a failure ends the run early."""
    for test in tests:
        os.chdir(scratch)
        signal.setitimer(signal.ITIMER_REAL, SECONDS_PER_TEST)
        try:
            with (
                contextlib.redirect_stdout(io.StringIO()),
                contextlib.redirect_stderr(io.StringIO()),
            ):
                test()
        except BaseException as e:  # the candidate failed the test, or ran out of time, or exited
            if isinstance(e, KeyboardInterrupt):
                raise
            return False
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    return True


def main(copy: str, spec_path: str, out_path: str) -> None:
    copy = Path(copy).resolve()
    spec = json.loads(Path(spec_path).read_text())
    scratch = tempfile.mkdtemp(prefix="standins-")
    os.environ.update(
        HOME=scratch, ECHO_CACHE_DIR=scratch, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1"
    )
    sys.path[:0] = [str(copy), str(copy / "exercises" / "tests")]
    os.chdir(scratch)
    modules, not_imported = import_everything(copy)
    candidates = functions_of(modules)
    signal.signal(signal.SIGALRM, on_alarm)
    tried, found = {}, []
    for exercise in spec:
        tests = [
            f
            for path in exercise["tests"]
            for name, f in sorted(vars(importlib.import_module(Path(path).stem)).items())
            if name.startswith("test_")
        ]
        stubs = {
            s["function"]: getattr(importlib.import_module(s["module"]), s["function"])
            for s in exercise["stubs"]
        }
        references = {}
        for s in exercise["stubs"]:
            namespace = {}
            exec(
                compile(s["reference"], s["path"], "exec"),
                vars(importlib.import_module(s["module"])),
                namespace,
            )
            references[s["function"]] = namespace[s["function"]]
        spots = {name: holders(stub) for name, stub in stubs.items()}
        for name, stub in stubs.items():
            others = [(spots[other], references[other]) for other in stubs if other != name]
            n = required_positional(stub)
            eligible = [
                (q, f) for q, f in candidates if f not in stubs.values() and callable_like(f, n)
            ]
            tried[name] = len(eligible)
            for qualname, f in eligible:
                with planted([(spots[name], f), *others]):
                    if passes(tests, scratch):
                        found.append([exercise["number"], name, qualname])
    Path(out_path).write_text(
        json.dumps({"tried": tried, "passes": found, "not_imported": not_imported})
    )
    os.chdir(copy)
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main(*sys.argv[1:])
