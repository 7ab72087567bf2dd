"""The grader's test runner: the one part of grading that runs the student's code.

    python exercises/runner.py READY_FD < SPEC     (exercises/harness.py starts it in the copy)

It imports torch and numpy once, then forks one child per exercise (at most `parallel` at a
time), so that each exercise's tests run in a process of their own: a file that does not import,
an endless loop or a crash costs only the exercises whose tests run into it. A child imports the
exercise's test files, calls each test function (graded tests take no argument), and writes one
JSON line per test to the exercise's pipe: every check the test made (the case, the computed
value, the expected value unless it is held), the error that stopped it, and the stub's message
if it ran into one. A file that does not import gives one line naming the project file at fault
and the error's first line.

Nothing here decides a grade: the grader reads these lines (bounded in size), trusts none of
them, and compares each computed value with the expected one itself.

It says "ready" on READY_FD once its imports are done, then reads SPEC (JSON): {"jobs":
[{"exercise": N, "files": [[kind, path], ...], "fd": the pipe to write to}], "test_timeout":
seconds per test, "exercise_timeout": seconds per exercise, "parallel": children at a time}. The
copy being graded is its working directory.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import sys
import time
import traceback
from pathlib import Path

STUB = "Exercise "  # how a stub's NotImplementedError message starts (exercises/build.py)
ERROR_CHARS = 1500  # of one error message


class TestTimeout(BaseException):
    """Raised into a test that ran too long; a BaseException, so `except Exception` cannot swallow
    it (a loop that catches everything is ended by the exercise's own time limit)."""


def main(ready_fd: int) -> None:
    root = Path.cwd().resolve()
    sys.path[:0] = [str(root), str(root / "exercises" / "tests")]
    for module in ("numpy", "torch"):  # imported once here, so that each child starts warm
        try:
            __import__(module)
        except ImportError:
            pass
    os.write(ready_fd, b"ready\n")
    os.close(ready_fd)
    spec = json.load(sys.stdin)  # the jobs come once the grader has laid their files out
    fds = [job["fd"] for job in spec["jobs"]]
    pending, running = list(spec["jobs"]), {}
    while pending or running:
        while pending and len(running) < max(1, spec["parallel"]):
            job = pending.pop(0)
            pid = os.fork()
            if pid == 0:
                child(job, [fd for fd in fds if fd != job["fd"]], root, spec["test_timeout"])
            _setpgid(pid)
            os.close(job["fd"])  # the parent sees the end of the pipe when the child ends
            running[pid] = time.monotonic() + spec["exercise_timeout"]
        done, _ = os.waitpid(-1, os.WNOHANG)
        if done in running:
            del running[done]
            _kill_group(done)  # whatever the child left running
        for pid, deadline in list(running.items()):
            if time.monotonic() > deadline:
                _kill_group(pid)
        if not done:
            time.sleep(0.02)


def _setpgid(pid: int) -> None:
    try:
        os.setpgid(pid, pid)
    except OSError:  # the child did it first, or has already ended
        pass


def _kill_group(pid: int) -> None:
    for kill in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        try:
            kill()
        except OSError:
            pass


def child(job: dict, others: list, root: Path, test_timeout: float) -> None:
    """Run one exercise's tests and write their lines to job["fd"]; never returns."""
    try:
        os.setpgid(0, 0)
        for fd in others:  # the other exercises' pipes, where the runner still holds them
            try:
                os.close(fd)
            except OSError:
                pass
        quiet = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):  # what the student's code prints goes nowhere
            os.dup2(quiet, fd)
        out = os.fdopen(job["fd"], "w", buffering=1)
        run_exercise(job["files"], root, test_timeout, lambda line: _emit(out, line))
    finally:
        os._exit(0)


def _emit(out, line: dict) -> None:
    try:
        out.write(json.dumps(line) + "\n")
    except (OSError, ValueError):  # the grader stopped reading (too much written): stop too
        os._exit(0)


def run_exercise(files: list, root: Path, test_timeout: float, emit) -> None:
    def out_of_time(signum, frame):
        raise TestTimeout(f"this test ran longer than {test_timeout:g} s (an endless loop?)")

    signal.signal(signal.SIGALRM, out_of_time)
    import expect  # the graded tests' own helper, from exercises/tests

    checks = []
    expect.record = lambda case, got, want, tol: checks.append(
        {"case": str(case)[:2000], "computed": got, "tol": tol}
        | ({} if want is expect.HELD else {"expected": want})
    )
    timed_out = False
    for kind, path in files:
        name = Path(path).name
        signal.setitimer(signal.ITIMER_REAL, test_timeout)
        try:
            spec = importlib.util.spec_from_file_location(f"graded_{kind}_{Path(path).stem}", path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        except BaseException as e:
            emit({"import_error": {"file": f"{kind}/{name}", "error": culprit(e, root)}})
            continue
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        for test_name, test in tests_of(module):
            line = {"test": f"{kind}/{name}::{test_name}", "error": None, "stub": None}
            checks.clear()
            if timed_out:
                line["error"] = "not run: an earlier test of this exercise ran out of time"
                emit({**line, "checks": []})
                continue
            signal.setitimer(signal.ITIMER_REAL, test_timeout)
            try:
                test()
            except BaseException as e:  # a failed check, the student's error, a stub, a timeout
                signal.setitimer(signal.ITIMER_REAL, 0)
                timed_out = isinstance(e, TestTimeout)
                text = str(e)
                if isinstance(e, NotImplementedError) and text.startswith(STUB):
                    line["stub"], line["error"] = text[:ERROR_CHARS], "not written yet"
                else:
                    line["error"] = describe(e, root)
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            emit({**line, "checks": list(checks)})


def tests_of(module) -> list:
    """The module's own test functions, in the order they are defined."""
    return [
        (name, f)
        for name, f in vars(module).items()
        if name.startswith("test_")
        and callable(f)
        and getattr(f, "__module__", None) == module.__name__
    ]


def describe(e: BaseException, root: Path) -> str:
    """A failure in a few lines: a failed check's message as it is; else the exception and the
    line of the student's file it came from."""
    if isinstance(e, AssertionError) and str(e):
        return str(e)[:ERROR_CHARS]
    own = [f for f in traceback.extract_tb(e.__traceback__) if _students(f.filename, root)]
    where = f"\n  at {_rel(own[-1].filename, root)}:{own[-1].lineno}" if own else ""
    return (_first_line(e) + where)[:ERROR_CHARS]


def _first_line(e: BaseException) -> str:
    """ "TypeError: the first line of its message", or the type alone when it has none."""
    lines = str(e).strip().splitlines()
    return f"{type(e).__name__}: {lines[0]}" if lines else type(e).__name__


def culprit(e: BaseException, root: Path) -> str:
    """Why a test file did not import, naming the project file at fault: "env.py: SyntaxError:
    invalid syntax (line 310)"."""
    if isinstance(e, SyntaxError) and e.filename:
        first = f"{type(e).__name__}: {e.msg}"
        return f"{_rel(e.filename, root)}: {first} (line {e.lineno})"[:ERROR_CHARS]
    frames = traceback.extract_tb(e.__traceback__)
    own = [f for f in frames if _students(f.filename, root)] or frames[-1:]
    where = f"{_rel(own[-1].filename, root)}: " if own else ""
    line = f" (line {own[-1].lineno})" if own else ""
    return f"{where}{_first_line(e)}{line}"[:ERROR_CHARS]


def _students(filename: str, root: Path) -> bool:
    """A file of the project being graded, outside the kit (exercises/)."""
    path = Path(filename).resolve()
    return path.is_relative_to(root) and not path.is_relative_to(root / "exercises")


def _rel(filename: str, root: Path) -> str:
    path = Path(filename).resolve()
    return path.relative_to(root).as_posix() if path.is_relative_to(root) else path.name


if __name__ == "__main__":
    main(int(sys.argv[1]))
