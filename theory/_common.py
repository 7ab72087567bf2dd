"""Small helpers shared by the theory scripts: config-to-CLI, saving, confidence intervals.

Nothing here implements the paper; it keeps the theory scripts free of plumbing. CLI flags
come from the project's cli.parse_config (one dataclass per entry point, STYLE.md habit 3).
"""

import dataclasses
import json
import math
from pathlib import Path

import numpy as np

from cli import parse_config  # noqa: F401  (re-exported: the theory scripts import it from here)


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
