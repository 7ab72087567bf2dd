"""An interpreter, with this one's packages, that an unprivileged user can run: what the bundle's
grader needs as root to run the submission's code as a user of its own (`autograde.py
--submission-python`). On Gradescope that is /autograder/venv's python; on a machine where this
interpreter lives in a folder only root may enter (a pyenv under /root), it is a virtual
environment of the system's Python of the same version that reads this one's site-packages.

    python exercises/instructor/unprivileged.py DIR     the interpreter (made in DIR if need be)

Not as root, it prints this interpreter: the tests then run as the calling user anyway.
"""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
import sysconfig
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent))
from exercises.harness import fresh_uid  # noqa: E402


def runs_unprivileged(python: str) -> bool:
    """Whether a user id without privileges can start `python` and import torch and numpy."""
    uid = fresh_uid()
    try:
        done = subprocess.run(
            [python, "-c", "import torch, numpy"],
            user=uid,
            group=uid,
            extra_groups=[],
            cwd="/",
            capture_output=True,
            timeout=300,
        )
    except OSError:
        return False
    return done.returncode == 0


def interpreter(folder: Path) -> str:
    """This interpreter if an unprivileged user can run it, else one made in `folder`."""
    if os.geteuid() != 0 or runs_unprivileged(sys.executable):
        return sys.executable
    version = sysconfig.get_python_version()
    base = shutil.which(f"python{version}", path="/usr/bin:/usr/local/bin")
    if base is None:
        raise SystemExit(f"unprivileged.py: no system python{version} to make an interpreter with")
    venv = folder / "submission-python"
    shutil.rmtree(venv, ignore_errors=True)
    subprocess.run([base, "-m", "venv", "--without-pip", str(venv)], check=True)
    purelib = Path(sysconfig.get_paths(vars={"base": str(venv)})["purelib"])
    (purelib / "parent.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    python = str(venv / "bin" / "python")
    os.chmod(folder, 0o755)  # mktemp's folders are root's alone
    if not runs_unprivileged(python):
        raise SystemExit(
            f"unprivileged.py: an unprivileged user cannot import torch with {python}: make "
            "this interpreter's site-packages readable to every user"
        )
    return python


if __name__ == "__main__":
    print(interpreter(Path(sys.argv[1])))
