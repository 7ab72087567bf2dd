"""Table 1 of the paper ("Main CSG results"), over training seeds: every estimator's runs of one
split (bench/reproduce.py), each seed's kept checkpoint played once by evaluate.py on the split's
held-out secrets, greedy and sampled at T = 1 (the run's own --eval-samples per secret), and the
reference policies beside them. The paper gives "mean with SEM ... across 3 independent runs"
(TeX l. 646); here a run is a training seed, so the spread is of training, not of re-playing one
checkpoint (greedy play of one checkpoint is the same every time). The references train nothing:
their spread is over `--reference-runs` plays (evaluate.py --runs; run r at seed r).

    python bench/table1.py --runs runs/reproduce-sealed-S/paper,runs/reproduce-sealed-S-all/paper

Writes {"split_seed", "question_set", "metrics" (Table 1's columns: metrics.run_metrics keys),
"rows": [{"policy", "kind" ("estimator" | "reference"), "seeds" (training seeds, or the plays of
a reference), "greedy": {metric: [mean, SEM]}, "sampled": {...} (estimators only),
"per_seed": {seed: {"greedy": {...}, "sampled": {...}}}}], "runs": {run directory: its
train_config.json}} with the command, machine, date and commit.
"""

import os
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench.common import RESULTS, save_results  # noqa: I001  (before torch: tools.cli)

import evaluate
from bench.generalization import kept_checkpoint, run_config
from tools import report, stats
from tools.cli import arg, fail, parse_config

# Table 1's columns (TeX l. 646; tools.report.TABLE1, metrics.run_metrics' names) and App. C's
# LateCalib beside them.
TABLE1 = tuple(key for _, key, *_ in report.TABLE1) + ("late_calib",)
REFERENCES = "random,fixed_sequence,greedy_oracle,bayes"


@dataclass
class Table1Config:
    runs: str = arg("", "comma-separated directories of runs, one ESTIMATOR-seedS each")
    reference_runs: int = arg(3, "plays of each reference policy (evaluate.py --runs)", at_least=1)
    threads: int = arg(0, "torch threads (0: every core)", at_least=0)
    scratch: str = arg("runs/table1", "where evaluate.py writes its logs")
    out: str = arg(os.path.join(RESULTS, "table1.json"), "the figures", writes="file")


def finished_runs(dirs: str) -> list[Path]:
    """Every run under the directories that has finished (its summary.json is written)."""
    found = [
        run
        for d in dirs.split(",")
        if d.strip()
        for run in sorted(Path(d.strip()).iterdir())
        if (run / "summary.json").exists()
    ]
    if not found:
        fail("table1.py", f"no finished run (RUN/summary.json) under {dirs!r}.")
    return found


def one_split(configs: dict) -> tuple[int, str, int]:
    """(split seed, question set, samples per secret) that all the runs share, or a stop."""
    shared = {(c["split_seed"], c["question_set"], c["eval_samples"]) for c in configs.values()}
    if len(shared) != 1:
        fail("table1.py", f"the runs mix splits, question sets or samples: {sorted(shared)}.")
    return shared.pop()


def played(results: dict, key: str) -> dict:
    """{run: Table 1's metrics} of one evaluate.py row."""
    return {run: {m: metrics[m] for m in TABLE1} for run, metrics in results[key]["runs"].items()}


def only(plays: dict) -> dict:
    """The figures of a policy played once."""
    (figures,) = plays.values()
    return figures


def spread(per_seed: list[dict]) -> dict:
    """{metric: [mean, SEM]} over seeds (stats.mean_sem: a metric a seed could not define, such
    as ResAfterZero without a zero turn, is NaN there and left out of that metric's mean)."""
    return {m: list(stats.mean_sem([s[m] for s in per_seed])) for m in TABLE1}


def estimator_rows(results: dict, runs: list[Path], configs: dict) -> list[dict]:
    """One row per estimator: its seeds' kept checkpoints, each played once, greedy and sampled."""
    by_estimator = {}
    for run in runs:
        config = configs[str(run)]
        key = f"checkpoint:{kept_checkpoint(run)}"
        seed = {  # its one play (evaluate.py --runs 1), whatever its run id
            "greedy": only(played(results, key)),
            "sampled": only(played(results, key + report.SAMPLED)),
        }
        by_estimator.setdefault(config["estimator"], {})[config["seed"]] = seed
    return [
        {
            "policy": estimator,
            "kind": "estimator",
            "seeds": sorted(seeds),
            "greedy": spread([s["greedy"] for s in seeds.values()]),
            "sampled": spread([s["sampled"] for s in seeds.values()]),
            "per_seed": {str(k): seeds[k] for k in sorted(seeds)},
        }
        for estimator, seeds in by_estimator.items()
    ]


def reference_rows(results: dict) -> list[dict]:
    """One row per reference policy: its plays (run r at seed r), greedy."""
    rows = []
    for policy in REFERENCES.split(","):
        plays = played(results, policy)
        rows.append(
            {
                "policy": policy,
                "kind": "reference",
                "seeds": sorted(int(run.removeprefix("run")) for run in plays),  # run r: seed r
                "greedy": spread(list(plays.values())),
            }
        )
    return rows


def main(argv=None) -> dict:
    cfg = parse_config(Table1Config, argv, description=__doc__.splitlines()[0])
    runs = finished_runs(cfg.runs)
    configs = {str(run): run_config(run) for run in runs}
    split, question_set, samples = one_split(configs)
    common = ["--split-seed", str(split), "--question-set", question_set, "--no-figures"]
    common += ["--threads", str(cfg.threads), "--candidate-format", "auto"]
    checkpoints = ",".join(f"checkpoint:{kept_checkpoint(run)}" for run in runs)
    trained = evaluate.main(
        [*common, "--policies", checkpoints, "--runs", "1", "--samples", str(samples)]
        + ["--out", os.path.join(cfg.scratch, f"split{split}-checkpoints")]
    )
    references = evaluate.main(
        [*common, "--policies", REFERENCES, "--runs", str(cfg.reference_runs)]
        + ["--out", os.path.join(cfg.scratch, f"split{split}-references")]
    )
    table = {
        "split_seed": split,
        "question_set": question_set,
        "metrics": list(TABLE1),
        "rows": estimator_rows(trained, runs, configs) + reference_rows(references),
        "runs": configs,
    }
    save_results(table, cfg.out)
    return table


if __name__ == "__main__":
    main(sys.argv[1:])
