"""Run the graded tests where the student's code cannot reach the grade, and read what they say.

`run` starts exercises/runner.py (the only process that runs the student's code, forking one
child per exercise), optionally as another user, with a scrubbed environment and a private home;
it reads each exercise's lines from a pipe of its own, at most MAX_BYTES per exercise, until the
runner ends or its time is up, then ends whatever the runner left behind. The grader's process,
the one that calls this, never imports the code being graded.

When the grader runs as root (Gradescope runs run_autograder as root), the runner runs as a user
id no other process has (`fresh_uid`): it cannot read what only root may (the hidden tests'
expected values) nor write the results, and once it is done every process left with that id is
ended (`end_all`).
"""

from __future__ import annotations

import json
import os
import pwd
import random
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

MAX_BYTES = 4_000_000  # of one exercise's lines: more is cut off (the runner stops writing)
STARTUP = 120.0  # seconds the runner may take to import torch before any test runs


class HarnessError(Exception):
    """The tests could not be run at all (the runner did not start): the grader's fault, never
    the submission's."""


@dataclass
class Runner:
    """A started exercises/runner.py: it imports torch, then waits for its jobs (`finish`)."""

    process: subprocess.Popen
    pipes: dict  # exercise -> (read end here, write end's number in the runner)
    ready: int  # where the runner says its imports are done
    home: Path
    uid: int | None
    stopped: bool = False


def start(root: Path, numbers, *, python: str = sys.executable, uid: int | None = None) -> Runner:
    """Start a runner in `root` for these exercises, as `uid` where given, with a scrubbed
    environment and a home of its own. It runs no test until `finish` gives it its jobs, so it can
    warm up while something else runs."""
    pipes = {n: os.pipe() for n in numbers}
    ready_r, ready_w = os.pipe()
    home = Path(tempfile.mkdtemp(prefix="grading-home-"))
    if uid is not None:
        os.chown(home, uid, uid)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "TMPDIR": str(home),
        "LANG": "C.UTF-8",
        "OMP_NUM_THREADS": "1",  # one thread per child: the children share the cores
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONHASHSEED": "0",
        "HF_HUB_OFFLINE": "1",
    }
    as_user = {} if uid is None else {"user": uid, "group": uid, "extra_groups": []}
    try:
        process = subprocess.Popen(
            [python, str(root / "exercises" / "runner.py"), str(ready_w)],  # the copy's own
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            cwd=root,
            env=env,
            pass_fds=[ready_w, *(w for _, w in pipes.values())],
            start_new_session=True,
            **as_user,
        )
    finally:
        for fd in (ready_w, *(w for _, w in pipes.values())):
            os.close(fd)
    return Runner(process, pipes, ready_r, home, uid)


def finish(
    runner: Runner,
    jobs: dict,
    *,
    test_timeout: float = 10.0,
    exercise_timeout: float = 60.0,
    parallel: int = 0,
) -> dict:
    """Run each exercise's test files {exercise: [(kind, path), ...]}; returns {exercise: [line,
    ...]}, the lines its child wrote (parsed JSON; unreadable lines dropped). Ends the runner."""
    parallel = parallel or len(os.sched_getaffinity(0))
    spec = {
        "jobs": [
            {"exercise": n, "files": [[k, str(p)] for k, p in files], "fd": runner.pipes[n][1]}
            for n, files in jobs.items()
        ],
        "test_timeout": test_timeout,
        "exercise_timeout": exercise_timeout,
        "parallel": parallel,
    }
    try:
        if not _ready(runner.ready):
            stop(runner)
            why = runner.process.stderr.read(4000).decode(errors="replace").strip()
            raise HarnessError(f"the test runner did not start: {why[-2000:]}")
        runner.process.stdin.write(json.dumps(spec).encode())
        runner.process.stdin.close()
        rounds = -(-len(jobs) // parallel)  # ceil
        deadline = time.monotonic() + rounds * exercise_timeout + 30
        return _read({n: runner.pipes[n][0] for n in jobs}, deadline, runner.process)
    finally:
        stop(runner)


def run(
    root: Path,
    jobs: dict,
    *,
    python: str = sys.executable,
    uid: int | None = None,
    test_timeout: float = 10.0,
    exercise_timeout: float = 60.0,
    parallel: int = 0,
) -> dict:
    """`start` and `finish` in one: each exercise's test files run in `root`."""
    runner = start(root, jobs, python=python, uid=uid)
    return finish(
        runner,
        jobs,
        test_timeout=test_timeout,
        exercise_timeout=exercise_timeout,
        parallel=parallel,
    )


def _ready(fd: int) -> bool:
    """Wait for the runner's "ready" (its imports done, no test run yet)."""
    with selectors.DefaultSelector() as sel:
        sel.register(fd, selectors.EVENT_READ)
        if not sel.select(timeout=STARTUP):
            return False
    return os.read(fd, 16).startswith(b"ready")


def _read(fds: dict, deadline: float, runner: subprocess.Popen) -> dict:
    """Each exercise's lines until its pipe closes, the runner ends (a process the student's code
    left behind may hold a pipe open) or the deadline; MAX_BYTES at most each."""
    data = {n: bytearray() for n in fds}
    with selectors.DefaultSelector() as sel:
        for n, fd in fds.items():
            sel.register(fd, selectors.EVENT_READ, n)
        ended = False
        while sel.get_map() and time.monotonic() < deadline:
            wait = 0 if ended else max(0.0, min(0.2, deadline - time.monotonic()))
            ready = sel.select(timeout=wait)
            if ended and not ready:
                break  # the runner's children are done, and all they wrote is read
            if not ended and runner.poll() is not None:
                ended, deadline = True, min(deadline, time.monotonic() + 2.0)
            for key, _ in ready:
                chunk = os.read(key.fd, 65536)
                n = key.data
                if not chunk or len(data[n]) + len(chunk) > MAX_BYTES:
                    sel.unregister(key.fd)
                    _close(key.fd)  # a child that goes on writing gets EPIPE and stops
                if chunk and len(data[n]) + len(chunk) <= MAX_BYTES:
                    data[n] += chunk
    return {n: _lines(bytes(b)) for n, b in data.items()}


def _lines(raw: bytes) -> list:
    lines = []
    for text in raw.decode(errors="replace").splitlines():
        try:
            line = json.loads(text)
        except (ValueError, RecursionError):
            continue  # a line cut off, or not the runner's
        if isinstance(line, dict):
            lines.append(line)
    return lines


def _close(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass


def stop(runner: Runner) -> None:
    """End the runner and what it started: its session, and every process of its uid. Once."""
    if runner.stopped:
        return
    runner.stopped = True
    try:
        os.killpg(runner.process.pid, signal.SIGKILL)
    except OSError:
        pass
    runner.process.wait()
    for fd in (runner.ready, *(r for r, _ in runner.pipes.values())):
        _close(fd)
    if runner.uid is not None:
        end_all(runner.uid)
    shutil.rmtree(runner.home, ignore_errors=True)


def end_all(uid: int) -> None:
    """Kill every process of `uid` (a fresh one, so nothing else has it): kill(-1) sent by a
    process of that uid reaches exactly the processes that uid owns."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setgid(uid)
            os.setuid(uid)
            os.kill(-1, signal.SIGKILL)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)


def fresh_uid() -> int:
    """A user id that no process has and no user is named for: the student's code runs as it."""
    taken = set()
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            taken |= {
                int(x)
                for line in status.read_text().splitlines()
                if line.startswith(("Uid:", "Gid:"))
                for x in line.split()[1:]
            }
        except (OSError, ValueError):
            continue
    rng = random.SystemRandom()
    while True:
        uid = rng.randrange(200_000, 2_000_000_000)
        if uid not in taken:
            try:
                pwd.getpwuid(uid)
            except KeyError:  # no user has it either
                return uid
