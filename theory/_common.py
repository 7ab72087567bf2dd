"""Small helpers shared by the theory scripts: config-to-CLI, saving, confidence intervals.

Nothing here implements the paper; it keeps bit_reveal.py and return_aliasing.py free of
plumbing. Following STYLE.md habit 3, every entry point has one dataclass of parameters,
CLI flags are generated from its fields, and unknown flags or wrong types are errors.
"""

import argparse
import dataclasses
import json
import math
from pathlib import Path

import numpy as np


def parse_config(cls, argv=None, description=None):
    """Build an instance of dataclass `cls` from command-line flags.

    Each field `foo_bar` becomes `--foo-bar` with the field's type and default; the help text
    is the field's `metadata["help"]`. Booleans take `--flag/--no-flag`. argparse rejects
    unknown flags and values that do not parse as the field's type (exit status 2).
    """
    parser = argparse.ArgumentParser(description=description, allow_abbrev=False)
    for f in dataclasses.fields(cls):
        flag = "--" + f.name.replace("_", "-")
        help_text = f"{f.metadata.get('help', '')} (default: {f.default})"
        if f.type in (bool, "bool"):
            parser.add_argument(flag, dest=f.name, action=argparse.BooleanOptionalAction,
                                default=f.default, help=help_text)
        else:
            kind = {"int": int, "float": float, "str": str}.get(f.type, f.type)
            parser.add_argument(flag, dest=f.name, type=kind, default=f.default, help=help_text)
    return cls(**vars(parser.parse_args(argv)))


def save_config(cfg, out_dir, name):
    """Write the resolved config as `<name>_config.json` next to the run's outputs (STYLE.md
    habit 3); both scripts share the default output folder, hence the name prefix."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{name}_config.json"
    path.write_text(json.dumps(dataclasses.asdict(cfg), indent=2) + "\n")
    return path


def wilson_interval(successes, n, z=1.96):
    """Wilson score interval for a binomial proportion; unlike the normal interval it stays
    inside [0, 1] and is not degenerate when there are 0 successes, which matters here because
    the belief-agnostic success rates are as small as 2^-11."""
    if n == 0:
        return 0.0, 1.0
    phat = successes / n
    denom = 1.0 + z * z / n
    centre = (phat + z * z / (2 * n)) / denom
    half = z * math.sqrt(phat * (1 - phat) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def mean_interval(x, z=1.96):
    """Normal-approximation interval for the mean of i.i.d. samples x: mean -/+ z * sd / sqrt(n)."""
    x = np.asarray(x, dtype=float)
    mean = float(x.mean())
    half = z * float(x.std(ddof=1)) / math.sqrt(len(x)) if len(x) > 1 else float("inf")
    return mean, mean - half, mean + half
