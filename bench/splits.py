"""Which secrets each held-out split holds, and what two splits share: for each `--split-seed`,
the held-out secrets (env.secret_split, drawn the same way by train.py and evaluate.py) and the
binary preset's validation secrets carved from the training ones (train.split_secrets); for each
pair of splits, which of the first's held-out secrets the second holds out, validates on or
trains on. A held-out secret that two splits share was looked at by every choice made on the
first split's held-out scores.

    python bench/splits.py [--seeds 0,1]
"""

import os
import sys
from dataclasses import dataclass

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import config
from bench.common import RESULTS, save_results
from episodes import SplitConfig, split_secrets
from tools.cli import arg, parse_config, settings


@dataclass
class SplitsConfig:
    seeds: str = arg("0,1", "comma list of split seeds (train.py --split-seed)")
    out: str = arg(
        os.path.join(RESULTS, "splits.json"), "where the lists are written", writes="file"
    )


def splits(seeds: list[int]) -> dict:
    """{"n_max", "n_heldout", "validation_secrets", "splits": {SEED: {"heldout", "validation"}},
    "shared": [{"from", "to", "heldout", "validation", "training"}]}: for each ordered pair, the
    held-out secrets of split `from` that split `to` holds out, validates on, trains on."""
    out, sets = {}, {}
    for seed in seeds:
        cfg = config.config_from_flags(["--question-set", "binary", "--split-seed", str(seed)])
        training, validation, heldout = split_secrets(settings(SplitConfig, cfg))
        out[str(seed)] = {"heldout": heldout, "validation": validation}
        sets[seed] = (set(training), set(validation), set(heldout))
    shared = [
        {
            "from": a,
            "to": b,
            **{
                k: sorted(sets[a][2] & sets[b][i])
                for i, k in ((2, "heldout"), (1, "validation"), (0, "training"))
            },
        }
        for a in seeds
        for b in seeds
        if a != b
    ]
    return {
        "n_max": cfg.n_max,
        "n_heldout": cfg.n_heldout,
        "validation_secrets": cfg.validation_secrets,
        "splits": out,
        "shared": shared,
    }


def main(argv=None) -> dict:
    cfg = parse_config(SplitsConfig, argv, description=__doc__.splitlines()[0])
    result = splits([int(s) for s in cfg.seeds.split(",")])
    for pair in result["shared"]:
        print(
            f"split {pair['from']}'s held-out secrets that split {pair['to']} holds out: "
            f"{pair['heldout']}; validates on: {pair['validation']}; trains on: {pair['training']}"
        )
    save_results(result, cfg.out)
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
