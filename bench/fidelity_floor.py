"""Theorem 3.2 (ii)'s floor with an interval: E[Var(A_B | R)] / E[A_B^2], estimated by the
fidelity lab (fidelity.return_only_floor) from the drawn turns of each fidelity_NAME.csv in the
results folder (fidelity.py's turns: A_B, its branching standard error, the episode's return R),
with a bootstrap 95% interval.

The estimator sorts the turns by R and cuts them into bins of `bin_size`; the floor is the mean
within-bin variance of A_B, less the mean branching noise se^2, over E[A_B^2] (0 if negative).
The turns of one episode share R, so they share a bin; a bootstrap over single turns would put
copies of one turn into one bin and shrink that bin's variance. The bins are resampled whole
instead (with replacement, each keeping its turns): every draw recomputes the three means over
the bins drawn. The point estimate is fidelity.return_only_floor itself, which equals the same
computation over every bin once (checked here).

    python bench/fidelity_floor.py [--draws 2000] [--seed 0]
"""

import csv
import math
import os
import random
import sys
from dataclasses import dataclass

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import torch

from bench.common import RESULTS, save_results
from fidelity import return_only_floor
from tools.cli import arg, fail, parse_config

BIN_SIZE = 6  # fidelity.return_only_floor's bins


@dataclass
class FloorConfig:
    draws: int = arg(2000, "bootstrap resamples of the return bins", at_least=100)
    seed: int = arg(0, "seed of the resampling")
    results: str = arg(RESULTS, "the folder holding fidelity_NAME.csv files")
    out: str = arg(
        os.path.join(RESULTS, "fidelity_floor.json"), "where the figures are written", writes="file"
    )


def return_bins(returns: torch.Tensor, bin_size: int = BIN_SIZE) -> list[torch.Tensor]:
    """The turns' indices sorted by return and cut into bins as fidelity.return_only_floor does."""
    order = returns.argsort()
    return [
        order[s : s + bin_size]
        for s in range(0, len(order) - 1, bin_size)
        if len(order[s : s + bin_size]) > 1
    ]


def floor_of_bins(a_b: torch.Tensor, se: torch.Tensor, bins: list[torch.Tensor]) -> float:
    """The floor over these bins (repeats allowed): mean within-bin variance less mean se^2, over
    the mean of A_B^2, the means taken over the bins' turns."""
    turns = torch.cat(bins)
    variance = sum(a_b[b].var().item() for b in bins) / len(bins)
    return max(0.0, variance - se[turns].square().mean().item()) / a_b[turns].square().mean().item()


def floor_interval(a_b, se, returns, draws: int, seed: int) -> dict:
    """Point estimate and bootstrap 95% interval over the return bins."""
    bins = return_bins(returns)
    point = return_only_floor(a_b, se, returns, BIN_SIZE)
    if not math.isclose(point, floor_of_bins(a_b, se, bins), rel_tol=1e-9, abs_tol=1e-12):
        raise RuntimeError("the bins here are not fidelity.return_only_floor's")
    rng = random.Random(seed)
    values = sorted(
        floor_of_bins(a_b, se, [bins[rng.randrange(len(bins))] for _ in bins]) for _ in range(draws)
    )
    return {
        "turns": len(a_b),
        "bins": len(bins),
        "bin_size": BIN_SIZE,
        "floor": point,
        "floor_lo": values[int(0.025 * draws)],
        "floor_hi": values[int(0.975 * draws) - 1],
        "a_b_rms": a_b.square().mean().sqrt().item(),
        "noise_se_mean": se.mean().item(),
    }


def read_turns(path: str) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(A_B, its branching SE, the episode's return R) of every drawn turn of a fidelity.csv."""
    with open(path) as f:
        rows = list(csv.DictReader(f))
    return tuple(
        torch.tensor([float(r[k]) for r in rows], dtype=torch.float64)
        for k in ("a_b", "a_b_se", "episode_return")
    )


def main(argv=None) -> dict:
    cfg = parse_config(FloorConfig, argv, description=__doc__.splitlines()[0])
    names = sorted(
        n for n in os.listdir(cfg.results) if n.startswith("fidelity_") and n.endswith(".csv")
    )
    if not names:
        fail(
            "bench/fidelity_floor.py",
            f"no fidelity_NAME.csv in {cfg.results}: run python fidelity.py and copy its "
            "fidelity.csv there first",
        )
    files = {}
    for name in names:
        figures = floor_interval(*read_turns(os.path.join(cfg.results, name)), cfg.draws, cfg.seed)
        files[name[: -len(".csv")] + ".json"] = {"data": name, **figures}
        print(
            f"{name}: floor {figures['floor']:.3f} [{figures['floor_lo']:.3f}, "
            f"{figures['floor_hi']:.3f}] over {figures['turns']} turns in {figures['bins']} bins"
        )
    result = {
        "method": "bootstrap 95% over the return bins (each resampled whole, with replacement)",
        "draws": cfg.draws,
        "seed": cfg.seed,
        "files": files,
    }
    save_results(result, cfg.out)
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
