"""What every entry point shares: flags generated from a config dataclass, how the process uses
the machine's cores (and whether its CPU computes bfloat16: `cpu_computes_bf16`), and which code
it runs (`code_version`, recorded with each run and result).

Every entry point (train.py, evaluate.py, the theory scripts, the benchmarks) keeps its
hyperparameters in one dataclass; each field `foo_bar` becomes `--foo-bar` with the field's
type and default, and its help is the field's metadata["help"] (write fields with `arg`).
Unknown flags, values of the wrong type and values out of a field's range (`config_problem`) are
errors: one sentence and exit status 2, before the program reads or writes anything. Each part
below the entry point takes a small dataclass of the fields it reads, built from the entry
point's config by `settings` (env.GameConfig, update.UpdateConfig, ...).

Threads. Entry points import this module before torch, so that OpenMP's idle threads spin only
briefly before they sleep (GOMP_SPINCOUNT=1000; libgomp, which torch's Linux wheels use, reads
it once, when torch loads it). Threads that spin long (libgomp's default, or 10000) make two
torch processes sharing 2 cores run several times slower each, as each spins on the other's
core; threads that sleep at once (OMP_WAIT_POLICY=PASSIVE) make a run alone slower, as waking
them costs on every one of the tiny model's many small operations. The brief spin is as fast as
the longer ones for a run alone, and two runs with 2 threads each side by side take about twice
a run alone's time, as two runs of 1 thread would (bench/threads.py). A value set in the
environment wins. The count of threads stays what it was at the start, whatever else starts
later: a run's numbers depend on it (to rounding), and must not on the machine's load.
`use_threads` then gives torch every core the process may run on, divided among the runs it
starts side by side.
"""

import argparse
import dataclasses
import json
import math
import operator
import os
import subprocess
import sys
from pathlib import Path

os.environ.setdefault("GOMP_SPINCOUNT", "1000")


def arg(default, meaning: str, *, writes: str | None = None, choices: tuple = (), **bounds):
    """A dataclass field with its one-line meaning, shown by --help, and the values that make
    sense: `bounds` on a number (at_least, above, at_most, below; a float must also be finite,
    always), the choices of a word, and for a path the program writes, writes="directory" or
    "file". `config_problem` checks them."""
    if unknown := set(bounds) - set(BOUNDS):
        raise TypeError(f"arg() takes the bounds {', '.join(BOUNDS)}, not {', '.join(unknown)}")
    bounds = {k: v for k, v in bounds.items() if v is not None}
    metadata = {"help": meaning, "bounds": bounds, "writes": writes, "choices": tuple(choices)}
    return dataclasses.field(default=default, metadata=metadata)


BOUNDS = {
    "at_least": (operator.ge, "at least"),
    "above": (operator.gt, "greater than"),
    "at_most": (operator.le, "at most"),
    "below": (operator.lt, "less than"),
}


def config_problem(cfg) -> str | None:
    """The first value of a config that makes no sense, as a sentence naming its flag; None when
    every value is finite, within its field's bounds or choices, and every path it writes can be
    written."""
    for f in dataclasses.fields(cfg):
        value, flag = getattr(cfg, f.name), "--" + f.name.replace("_", "-")
        if isinstance(value, float) and not math.isfinite(value):
            return f"{flag} must be a finite number, not {value}."
        for bound, limit in f.metadata.get("bounds", {}).items():
            holds, words = BOUNDS[bound]
            if not holds(value, limit):
                return f"{flag} must be {words} {limit}, not {value}."
        if (choices := f.metadata.get("choices")) and value not in choices:
            return f"{flag} must be {', '.join(choices[:-1])} or {choices[-1]}, not {value!r}."
        if (
            f.metadata.get("writes")
            and value
            and (problem := unwritable(Path(value), f.metadata["writes"]))
        ):
            return f"{flag} {value} {problem}."
    return None


def unwritable(path: Path, kind: str) -> str | None:
    """Why nothing can be written at `path` as a `kind` ("directory" or "file"), or None."""
    if kind == "directory" and path.exists() and not path.is_dir():
        return "is a file, not a directory: give a directory (it is made if it does not exist)"
    if kind == "file" and path.is_dir():
        return "is a directory: give the name of a file"
    existing = next(p for p in [path, *path.parents] if p.exists())
    if existing != path and not existing.is_dir():
        return f"cannot be made: {existing} is a file, not a directory"
    if not os.access(existing, os.W_OK):
        return f"cannot be written: {existing} is not writable"
    return None


def parse_config(cls, argv=None, description=None, prog=None, presets=None):
    """An instance of dataclass `cls` from command-line flags (booleans: --flag / --no-flag).

    presets: {name: Preset}. Each preset that applies to the parsed config (in order) sets its
    values on the fields the command line did not give: a flag the user gives always wins, and a
    later preset may refine an earlier one. --help shows each flag's default and preset values.
    prog: the program's name in messages; by default the file that defines `cls`, so that main(argv)
    called from Python names the script as `python script.py` does.
    """
    presets = presets or {}
    prog = (
        prog or Path(getattr(sys.modules.get(cls.__module__), "__file__", None) or sys.argv[0]).name
    )
    parser = argparse.ArgumentParser(
        prog=prog,
        description=description,
        allow_abbrev=False,
        epilog=presets_help(presets),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    given = argparse.ArgumentParser(allow_abbrev=False, add_help=False)  # the flags given only
    for f in dataclasses.fields(cls):
        flag = "--" + f.name.replace("_", "-")
        shown = [f"{name}: {p.values[f.name]}" for name, p in presets.items() if f.name in p.values]
        default = [] if f.default == "" else [f"default: {f.default}"]
        help_text = f"{f.metadata.get('help', '')}" + (
            f" ({'; '.join(default + shown)})" if default + shown else ""
        )
        kind = {"int": int, "float": float, "str": str}.get(f.type, f.type)
        for p, default in ((parser, f.default), (given, argparse.SUPPRESS)):
            if f.type in (bool, "bool"):
                p.add_argument(
                    flag,
                    dest=f.name,
                    action=argparse.BooleanOptionalAction,
                    default=default,
                    help=help_text,
                )
            else:
                p.add_argument(flag, dest=f.name, type=kind, default=default, help=help_text)
    cfg = with_presets(
        cls(**vars(parser.parse_args(argv))), presets, set(vars(given.parse_known_args(argv)[0]))
    )
    if problem := config_problem(cfg):
        parser.error(problem)
    return cfg


@dataclasses.dataclass(frozen=True)
class Preset:
    """Values of a config that depend on another setting (the model, the question set)."""

    when: str  # the condition, as --help shows it
    applies: object  # cfg -> bool
    values: dict  # field -> value


def with_presets(cfg, presets: dict, given=frozenset()):
    """cfg with each applying preset's values set, in order, on the fields not in `given`."""
    for preset in presets.values():
        if preset.applies(cfg):
            cfg = dataclasses.replace(
                cfg, **{k: v for k, v in preset.values.items() if k not in given}
            )
    return cfg


def applied_presets(cfg, presets: dict) -> list[str]:
    """The names of the presets that apply to cfg (what the saved config records)."""
    return [name for name, preset in presets.items() if preset.applies(cfg)]


def presets_help(presets: dict) -> str | None:
    if not presets:
        return None
    lines = ["presets (each sets its values on the flags you do not give):"]
    for name, p in presets.items():
        values = " ".join(f"--{k.replace('_', '-')} {v}" for k, v in p.values.items())
        lines.append(f"  {name:10s} when {p.when}: {values}")
    return "\n".join(lines)


def fail(program: str, message: str):
    """A mistake the user can fix: one sentence that says what to do, on stderr, and exit status 2
    (as argparse does for a bad flag). No traceback: the sentence is the whole message."""
    print(f"{program}: {message}", file=sys.stderr)
    raise SystemExit(2)


def save_config(cfg, path, **extra) -> Path:
    """Write the resolved config as JSON (saved with every run and checkpoint), with `extra`
    keys first (e.g. the presets applied)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({**extra, **dataclasses.asdict(cfg)}, indent=2) + "\n")
    return path


def settings(part, cfg, **given):
    """A part's settings, dataclass `part`, from an entry point's config `cfg`: each field of `part`
    that `cfg` has by the same name, `given` for the others (or to override), the part's own
    default where neither gives one. How train.py hands each module the few settings it reads
    (GameConfig, UpdateConfig, ...), so that a module's signature shows its knobs."""
    names = {f.name for f in dataclasses.fields(part)}
    taken = {name: getattr(cfg, name) for name in names if hasattr(cfg, name)}
    return part(**(taken | given))


def use_threads(threads: int = 0, parallel_runs: int = 1) -> int:
    """Set torch's intra-op threads: `threads` if > 0, else the cores this process may run on
    divided among `parallel_runs` processes (at least 1). Returns the number set."""
    import torch

    cores = (
        len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    )
    n = threads if threads > 0 else max(1, cores // max(parallel_runs, 1))
    torch.set_num_threads(n)
    return n


# The CPU flags of a bfloat16 dot product in hardware (x86: AVX512-BF16, AMX-BF16)
BF16_CPU_FLAGS = ("avx512_bf16", "amx_bf16")


def cpu_flags() -> set[str]:
    """The instruction-set flags of this machine's CPU, as Linux lists them in /proc/cpuinfo
    (an empty set elsewhere)."""
    try:
        with open("/proc/cpuinfo") as f:
            line = next((line for line in f if line.startswith("flags")), "")
    except OSError:
        return set()
    return set(line.partition(":")[2].split())


def cpu_computes_bf16(flags: set[str] | None = None) -> bool:
    """Whether the CPU multiplies bfloat16 in hardware (`BF16_CPU_FLAGS`). Without it torch's bf16
    kernels convert every operand in software and run many times slower than float32 (an AVX2
    CPU: config.py's llm-cpu-bf16 preset gives the figures), so a bf16 policy there computes its
    products in float32 kernels instead (lm/bf16.py). Read on x86 Linux only: elsewhere False,
    and a CPU run computes in float32 unless told otherwise."""
    return bool(set(BF16_CPU_FLAGS) & (cpu_flags() if flags is None else flags))


def code_version(root: str = os.path.dirname(os.path.abspath(__file__))) -> dict:
    """The code a run is trained or a figure measured with: {"commit": git's HEAD, "uncommitted":
    {path: blob} for each tracked file that differs from HEAD, its content's `git hash-object`
    (None: deleted)}, so that a later reader can tell whether a file a result depends on still
    holds the same bytes. {} outside a git checkout."""

    def git(*args):
        return subprocess.run(
            ["git", *args], cwd=root, capture_output=True, text=True, check=True
        ).stdout

    try:
        commit = git("rev-parse", "HEAD").strip()
        paths = [p for p in git("diff", "--name-only", "HEAD").splitlines() if p]
        top = git("rev-parse", "--show-toplevel").strip()
        uncommitted = {
            p: git("hash-object", os.path.join(top, p)).strip()
            if os.path.exists(os.path.join(top, p))
            else None
            for p in paths
        }
    except (OSError, subprocess.CalledProcessError):
        return {}
    return {"commit": commit, "uncommitted": uncommitted}
