"""The sealed test split: a held-out split seed drawn once, at random, and recorded with its date
before any run plays it; the final defaults are then trained and scored on it once (the paper
set's ECHO, GRPO and RLOO: bench/reproduce.py, then bench/generalization.py), and nothing is
chosen after it. Drawn by the operating system's random source, among seeds no result file has
used, under one rule fixed before the draw: its 20 held-out secrets share none with split 0's,
on which (with the probe 201..300) every setting was screened (bench/screen.py), so no test
secret chose anything. A second draw is refused: the file is written once, unless `--supersede`
says why the sealed split must be played anew (the code its runs measured changed); the earlier
draw then stays in the record, under "earlier", and its split is never drawn again.

    python bench/seal.py            # writes bench/results/sealed.json; then, with its seed S:
    python bench/reproduce.py --seeds 0,1,2,3,4,5 --train-flags "--split-seed S" \
        --out runs/reproduce-sealed-S --tag sealed --jobs 2
    python bench/generalization.py --runs runs/reproduce-sealed-S/paper
"""

import json
import os
import random
import sys
from dataclasses import dataclass
from datetime import datetime, timezone

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench.common import RESULTS, save_results
from env import secret_split
from tools.cli import arg, fail, parse_config

RULE = (
    "a seed in 1..999999 that no file of bench/results used as a split, whose 20 held-out "
    "secrets of 1..100 share none with split 0's (the validation secrets of every screen)"
)


@dataclass
class SealConfig:
    results: str = arg(RESULTS, "the results folder whose files name the splits used")
    out: str = arg(os.path.join(RESULTS, "sealed.json"), "the record of the draw", writes="file")
    supersede: str = arg("", "why a split already drawn is replaced by a new draw (empty: refuse)")


def used_splits(results: str) -> set[int]:
    """Every split seed a result file names: a row's "split_seed", or a key of splits.json."""
    used = {0, 1}
    for name in os.listdir(results):
        if not name.endswith(".json"):
            continue
        data = json.load(open(os.path.join(results, name)))
        rows = data.get("runs", []) if isinstance(data, dict) else []
        used |= {r["split_seed"] for r in rows if isinstance(r, dict) and "split_seed" in r}
        if name == "splits.json":
            used |= {int(s) for s in data["splits"]}
    return used


def draw(rng: random.Random, used: set[int]) -> tuple[int, int]:
    """(seed, the draws refused before it) under RULE."""
    validation = set(secret_split(100, 20, 0)[1])
    for refused in range(10_000):
        seed = rng.randint(1, 999_999)
        if seed not in used and not validation & set(secret_split(100, 20, seed)[1]):
            return seed, refused
    raise RuntimeError("no seed met the rule in 10,000 draws")


def earlier_draws(cfg: SealConfig) -> list[dict]:
    """The draws cfg.out already records, newest first, the one it replaces with its reason."""
    if not os.path.exists(cfg.out):
        return []
    if not cfg.supersede:
        fail("seal.py", f"{cfg.out} already records a draw: the test split is drawn once.")
    old = json.load(open(cfg.out))
    older = old.pop("earlier", [])
    return [{**old, "superseded": cfg.supersede}] + older


def main(argv=None) -> dict:
    cfg = parse_config(SealConfig, argv, description=__doc__.splitlines()[0])
    earlier = earlier_draws(cfg)
    used = used_splits(cfg.results) | {e["split_seed"] for e in earlier}
    seed, refused = draw(random.SystemRandom(), used)
    record = {
        "split_seed": seed,
        "drawn": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "rule": RULE,
        "refused_draws": refused,
        "heldout": secret_split(100, 20, seed)[1],
        "played_by": "python bench/reproduce.py --seeds 0,1,2,3,4,5 --train-flags "
        f'"--split-seed {seed}" --out runs/reproduce-sealed-{seed} --tag sealed --jobs 2 (ECHO, '
        "GRPO, RLOO at the defaults), then python bench/generalization.py --runs "
        f"runs/reproduce-sealed-{seed}/paper; nothing is chosen after it",
    }
    if earlier:
        record["earlier"] = earlier
    save_results(record, cfg.out)
    print(f"sealed test split: --split-seed {seed} (held-out {record['heldout']})")
    return record


if __name__ == "__main__":
    main(sys.argv[1:])
