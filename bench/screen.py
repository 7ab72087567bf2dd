"""Screening a training change on validation: does it make policies read their belief on numbers
they never trained on? The paper's generalization test (secrets up to 200, section 5.1) must
only report, so a change is judged here on what no reported figure uses: the held-out secrets of
another split (split 0's; the test split 3594 holds none of them out, they are among its
training secrets, bench/results/splits.json) and secrets 201..300 in the universe 1..300 (the
probe: numbers no test secret has, a universe wider than any trained on or tested).

Each run's kept checkpoint (bench/generalization.py's rule) is played greedy on its split's
held-out secrets of 1..100 and on the probe; beside resolve, the share of probe turns that ask an
arm what it was already asked, the share that are unreadable (a policy can swap one wasted turn
for the other), and the probe's most common opening (bisection_behaviour). Runs
are grouped by the train.py settings they changed from the defaults (and their estimator); each
group is set against the default group, paired by seed (stats.paired_t_test). Train the runs
with any names, e.g.

    python train.py --estimator echo --seed S --threads 1 --out runs/screen \\
        --run-name refusal6-sS --refusal-rate 0.6
    python bench/screen.py --runs runs/screen

Writes {"runs": [{"question_set", "estimator", "seed", "split_seed", "steps", "kept_step",
"changed", "train_seconds", "threads", "heldout_greedy", "probe_greedy",
"probe_redundant_rate_greedy", "probe_invalid_rate_greedy", "probe_opening_greedy", "measured"}],
"probe": {"secrets", "n_max"}, "defaults"}, rates as fractions. A row whose run directory is gone is
kept from the output file (its flags taken again against today's defaults) unless a run of the same
split, estimator, seed and flags is scored now.
"""

import json
import os
import sys
from dataclasses import dataclass, replace
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench.bisection_behaviour import behaviour, greedy_turns
from bench.common import RESULTS, save_results
from bench.generalization import (
    heldout_of,
    kept_checkpoint,
    measured,
    retaken,
    run_config,
    run_facts,
    set_defaults,
)
from bench.report_generalization import flags_of
from env import GameConfig
from evaluate import evaluate_policy
from lm import models
from oracle import RuleOracle
from tools.cli import arg, fail, parse_config, use_threads

PROBE = {"secrets": [201, 300], "n_max": 300}  # first and last secret, and the universe 1..n_max


@dataclass
class ScreenConfig:
    runs: str = arg(
        "runs/screen", "comma-separated directories holding train.py runs (RUN/summary.json)"
    )
    threads: int = arg(0, "torch threads (0: every core)", at_least=0)
    out: str = arg(
        os.path.join(RESULTS, "screens.json"), "where the figures are written", writes="file"
    )


def probe_secrets() -> list[int]:
    return list(range(PROBE["secrets"][0], PROBE["secrets"][1] + 1))


def screened(run_dir: Path) -> dict:
    """One run's kept checkpoint, greedy, on its split's held-out secrets and on the probe."""
    config = run_config(run_dir)
    facts = {k: v for k, v in run_facts(run_dir, 0).items() if k != "samples"}  # greedy play only
    policy = models.load_policy_for(
        "screen.py", str(kept_checkpoint(run_dir)), "cpu", "fp32", trainable=False
    )
    game = GameConfig(
        question_set=facts["question_set"], candidate_format=config["candidate_format"]
    )
    turns = greedy_turns(policy, probe_secrets(), replace(game, n_max=PROBE["n_max"]))
    probe = behaviour(turns)
    return {
        **facts,
        "heldout_greedy": evaluate_policy(policy, heldout_of(config), game, RuleOracle(), 0, 0)[
            "eval/resolve_rate"
        ],
        "probe_greedy": sum(r.turn_resolved for r, _ in turns) / len(probe_secrets()),
        "probe_redundant_rate_greedy": probe["redundant_rate"],
        "probe_opening_greedy": probe["opening"],
        "probe_invalid_rate_greedy": sum(r.invalid for r, _ in turns) / max(len(turns), 1),
        "measured": measured(run_dir),
    }


def identity(row: dict) -> tuple:
    """What names a screened run: its question set, split, flags, estimator and seed."""
    return row["question_set"], row["split_seed"], flags_of(row), row["estimator"], row["seed"]


def main(argv=None):
    cfg = parse_config(ScreenConfig, argv, description=__doc__.splitlines()[0])
    use_threads(cfg.threads)
    run_dirs = sorted(
        p.parent for d in cfg.runs.split(",") if d for p in Path(d).glob("*/summary.json")
    )
    if not run_dirs:
        fail("screen.py", f"no finished runs (RUN/summary.json) in {cfg.runs}")
    scored = {identity(run_facts(d, 0)) for d in run_dirs}
    if len(scored) < len(run_dirs):
        fail(
            "screen.py",
            "two runs have the same split, estimator, seed and flags: "
            "score them from separate calls",
        )
    before = json.loads(Path(cfg.out).read_text()) if os.path.exists(cfg.out) else {"runs": []}
    then = before.get("defaults", {})  # a carried row's flags, taken again against today's defaults
    rows = [
        r
        for r in (retaken(r, then.get(r["question_set"])) for r in before["runs"])
        if identity(r) not in scored
    ]
    for run_dir in run_dirs:
        r = screened(run_dir)
        rows.append(r)
        print(
            f"{run_dir.name}: {flags_of(r)} {r['estimator']} seed {r['seed']}: "
            f"held-out {r['heldout_greedy']:.2f}, probe {r['probe_greedy']:.2f}, "
            f"redundant {r['probe_redundant_rate_greedy']:.2f}, invalid "
            f"{r['probe_invalid_rate_greedy']:.2f}",
            flush=True,
        )
    rows.sort(key=identity)
    save_results(
        {
            "runs": rows,
            "probe": PROBE,
            "defaults": {qs: set_defaults(qs) for qs in sorted({r["question_set"] for r in rows})},
        },
        cfg.out,
    )


if __name__ == "__main__":
    main(sys.argv[1:])
