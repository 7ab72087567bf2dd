"""What every benchmark shares: where results go, and writing its figures to a file with the
command, machine, date and code that produced them (bench/report_results.py prints the first
three, and says whether the code a figure depends on has changed since)."""

import datetime
import json
import os
import platform
import shlex
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from tools import cli  # noqa: F401  (before torch: it sets how idle OpenMP threads wait)
from tools.cli import code_version  # noqa: F401  (bench scripts import it from here)

# isort: split

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")


def machine() -> dict:
    """The machine a figure was measured on: architecture, the cores this process may use, the
    CPU's vector instructions as torch uses them (e.g. AVX2, AVX512) and whether it multiplies
    bfloat16 in hardware (a CPU's figures in bf16 differ several times over on this alone), the
    torch version, the OS, and the GPU if torch sees one."""
    import torch

    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {
        "machine": platform.machine(),
        "cpus": cpus,
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "cpu_bf16": cli.cpu_computes_bf16(),
        "torch": str(torch.__version__),  # not its TorchVersion, which torch.load refuses
        "platform": platform.platform(),
        "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
    }


def command_line(argv=None, script=None) -> str:
    """The command as typed from the repository root: `python bench/x.py --flag value`."""
    script = script or sys.argv[0]
    argv = sys.argv[1:] if argv is None else argv
    return " ".join(
        ["python", os.path.relpath(os.path.abspath(script), ROOT), *map(shlex.quote, argv)]
    )


def today() -> str:
    return datetime.date.today().isoformat()


def save_results(results: dict, path: str, command: str | None = None) -> None:
    """Benchmarks print their figures and also write them here (JSON), with the command, machine,
    date and code version (keys the results do not already have)."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    provenance = {
        "command": command or command_line(),
        "machine": machine(),
        "date": today(),
        **code_version(),
    }
    with open(path, "w") as f:
        json.dump(
            {**results, **{k: v for k, v in provenance.items() if k not in results}}, f, indent=2
        )
    print("wrote", path)
