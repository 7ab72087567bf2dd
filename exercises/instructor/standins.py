"""The build's search for stand-ins: a function of the student copy that passes an exercise's
graded tests in the place of its stub, so that the copy would hand the student a solution.

    python exercises/instructor/standins.py COPY SPEC OUT     (exercises/build.py runs it)

SPEC (JSON) lists, per exercise, its stubs (path, function, the reference's source of that
function) and its graded test files. Every function defined in the copy (at module level or in a
class body), whatever its signature, is put in each stub's place in every way the stub could call
it (`adapters`): with the stub's arguments as they come; bound by name to its parameters where
they share a name, the stub's remaining positional arguments filling the rest in order; and, for
either, its result or the first item of a tuple it returns (a helper that computes the answer and
more). Every name, in every loaded module, that held the stub then holds the candidate; the
exercise's other stubs get the reference's code. The exercise's graded tests are called; a
candidate that passes them all stands in; one that runs out of time is not tried other ways. OUT
(JSON) receives {"tried": {function: calls tried}, "passes": [[exercise, function, candidate],
...], "not_imported": [module, ...]}.

The kit's own grading code (exercises/*.py, not its tests) is no candidate: it computes no part
of the paper, and it forks, redirects and exits. The candidates are the project's own functions
called with wrong arguments, so they run in a scratch directory (with HOME there too), silenced,
each test under a time limit, unable to start or signal a process or to end this one.
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
import subprocess
import sys
import tempfile
from pathlib import Path

SECONDS_PER_TEST = 1.0  # a graded test takes milliseconds; a candidate that runs on is none


class OutOfTime(BaseException):
    pass


def on_alarm(signum, frame):
    raise OutOfTime()


# What a candidate may not do while it is tried: start processes (a function of bench/ would start
# training runs), signal them, or end this one. Each is turned into an OutOfTime for the call.
REFUSED = [(subprocess, "Popen")] + [
    (os, name)
    for name in ("_exit", "fork", "forkpty", "system", "popen", "kill", "killpg", "posix_spawn")
    + ("posix_spawnp", "execv", "execve", "execvp", "execvpe", "execl", "execle", "execlp")
    if hasattr(os, name)
]
ALLOWED = {(module, name): getattr(module, name) for module, name in REFUSED}


def refused(*args, **kwargs):
    raise OutOfTime()


def import_everything(copy: Path) -> tuple[list, list]:
    """Import every module of the copy but the kit's grading code; returns (modules, names of
    those that would not import)."""
    modules, failed = [], []
    kit = copy / "exercises"
    for path in sorted(copy.rglob("*.py")):
        if path.parent == kit:
            continue
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


def adapters(stub, f) -> list[tuple[str, object]]:
    """The ways the stub's body could call f with its own arguments: (how, a function taking the
    stub's arguments). Empty when f cannot take them in any of these ways."""
    try:
        mine, theirs = inspect.signature(stub), inspect.signature(f)
    except (TypeError, ValueError):
        return []
    ways = []
    required = [p for p in mine.parameters.values() if p.default is p.empty]
    try:
        theirs.bind(*range(len(required)))
        ways.append(("as is", f))
    except TypeError:
        pass
    params = list(theirs.parameters.values())
    if all(p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) for p in params) and params:

        def by_name(*args, **kwargs):
            given = mine.bind(*args, **kwargs)
            given.apply_defaults()
            named = {k: v for k, v in given.arguments.items() if k in theirs.parameters}
            rest = [v for k, v in given.arguments.items() if k not in theirs.parameters]
            call = {}
            for p in params:
                if p.name in named:
                    call[p.name] = named[p.name]
                elif p.default is p.empty and rest and p.kind is not p.KEYWORD_ONLY:
                    call[p.name] = rest.pop(0)
                elif p.default is p.empty:
                    raise TypeError(f"nothing of the stub's for {p.name}")
            return f(**call)

        names = [p.name for p in params]
        if set(names) & set(mine.parameters) and names != list(mine.parameters):
            ways.append(("by name", by_name))  # only where a name is shared: else it is "as is"
    return [
        (f"{how}{', first item' if first else ''}", _first(g) if first else g)
        for how, g in ways
        for first in (False, True)
    ]


def _first(g):
    def first_item(*args, **kwargs):
        result = g(*args, **kwargs)
        if not isinstance(result, tuple) or len(result) < 2:
            raise TypeError("not a tuple")
        return result[0]

    return first_item


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


def verdict(tests, scratch: str) -> str:
    """ "pass" if every test passes, each within SECONDS_PER_TEST; "stuck" if one ran out of time
    or tried what the candidate may not do; else "fail". The first failure ends the run."""
    for test in tests:
        os.chdir(scratch)
        for module, name in REFUSED:
            setattr(module, name, refused)
        try:
            outcome = one_test(test)
        except OutOfTime:  # the alarm went off as the test ended
            outcome = "stuck"
        finally:
            for (module, name), allowed in ALLOWED.items():
                setattr(module, name, allowed)
        if outcome != "pass":
            return outcome
    return "pass"


def one_test(test) -> str:
    signal.setitimer(signal.ITIMER_REAL, SECONDS_PER_TEST)
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            test()
    except OutOfTime:
        return "stuck"
    except BaseException as e:  # the candidate failed the test, or exited
        if isinstance(e, KeyboardInterrupt):
            raise
        return "fail"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    return "pass"


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
            tried[name] = 0
            for qualname, f in candidates:
                if f in stubs.values():
                    continue
                for how, g in adapters(stub, f):  # a function stuck one way is not tried others
                    tried[name] += 1
                    with planted([(spots[name], g), *others]):
                        outcome = verdict(tests, scratch)
                    if outcome == "pass":
                        found.append([exercise["number"], name, f"{qualname} ({how})"])
                    if outcome == "stuck":
                        break
    Path(out_path).write_text(
        json.dumps({"tried": tried, "passes": found, "not_imported": not_imported})
    )
    os.chdir(copy)
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main(*sys.argv[1:])
