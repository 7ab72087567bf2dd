"""ECHO against GRPO and RLOO on the binary question set, scored on what no choice looked at: each
run's kept checkpoint (RUN/best, chosen on its validation secrets) played on the held-out secrets
of its own split (train.py --split-seed) and on 1..200, greedy and sampled at T = 1, with its
comparison thresholds against the median of the current candidates (bench/bisection_behaviour.py).

Paper: section 6 (ECHO vs trajectory-level baselines); App. C "Bisection as a special case of the
EDP objective". The runs are bench/reproduce.py's, e.g.

    python bench/reproduce.py --question-set binary --train-flags "--split-seed 1" --jobs 2 --tag final
    python bench/binary_final.py --runs runs/reproduce/binary

Writes {"runs": [{"estimator", "seed", "steps", "changed" (the train.py settings that differ from
the binary preset's), "kept_step", "split_seed", "universe_least",
"train_seconds", "threads", "samples", "heldout_greedy",
"heldout_sampled", "n200_greedy", "n200_sampled", "threshold_median_corr_greedy",
"threshold_median_corr_sampled", "eliminated_fraction_per_turn"}, ...], "paired": {...},
"references": {SPLIT_SEED: {"bisection" | "fixed_sequence" | "random": {"heldout", "n200"}}}}: rates
as fractions, per other estimator the paired t-test over seeds of ECHO minus it, and what the
reference policies (reference.py, greedy) resolve on the same secrets: bisection is the ceiling,
the best belief-agnostic fixed sequence (fitted to each universe) what needs no belief at all.

A run whose directory is no longer under --runs (trained on another machine, or its files lost)
keeps its row from the output file, so the finals can be trained and scored a few runs at a time;
delete the file to drop such rows.
"""
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench.bisection_behaviour import final_fields, heldout_and_n200  # noqa: E402
from bench.common import RESULTS, save_results  # noqa: E402
from bench.reproduce import PER_RUN_FIELDS  # noqa: E402
from cli import arg, fail, parse_config, use_threads  # noqa: E402

import models  # noqa: E402
from experiment import eval_seed  # noqa: E402
from env import GameConfig, play, secret_split  # noqa: E402
from reference import BayesPolicy, FixedSequencePolicy, RandomPolicy  # noqa: E402
from stats import paired_t_test  # noqa: E402
from train import config_from_flags  # noqa: E402

COMPARED = ("heldout_greedy", "heldout_sampled", "n200_greedy", "n200_sampled")


@dataclass
class FinalConfig:
    runs: str = arg("runs/reproduce/binary", "directory of the runs, one ESTIMATOR-seedS each (bench/reproduce.py)")
    samples: int = arg(0, "sampled episodes (T = 1) per secret (0: the run's own --eval-samples)", at_least=0)
    threads: int = arg(0, "torch threads (0: every core)", at_least=0)
    rescore: bool = arg(False, "play every run under --runs again, also those whose rows the output file already holds")
    out: str = arg(os.path.join(RESULTS, "binary_final.json"), "where the figures are written (other run sets: "
                   "bench/results/binary_scores_NAME.json)", writes="file")


def run_facts(run_dir: Path, samples: int) -> dict:
    """What identifies a finished run and how it is scored, read from its files (nothing played)."""
    summary = json.loads((run_dir / "summary.json").read_text())
    config = json.loads((run_dir / "train_config.json").read_text())
    if config["question_set"] != "binary":
        fail("binary_final.py", f"{run_dir} was trained on the {config['question_set']} question set, not binary")
    if not (run_dir / "best").exists():
        fail("binary_final.py", f"{run_dir} kept no checkpoint (RUN/best): train it with --validation-secrets above 0")
    preset = vars(config_from_flags(["--question-set", "binary"]))     # what the run changed from it
    changed = {k: v for k, v in config.items() if k in preset and k not in PER_RUN_FIELDS and v != preset[k]}
    return {"estimator": summary["estimator"], "seed": summary["seed"], "steps": summary["steps"], "changed": changed,
            "kept_step": summary["kept"]["step"], "split_seed": config["split_seed"],
            "universe_least": config["universe_least"], "train_seconds": summary["train_seconds"],
            "threads": config["threads"], "samples": samples or config["eval_samples"]}


def run_row(run_dir: Path, samples: int) -> dict:
    """The figures of one run: its kept checkpoint on its own held-out split and on 1..200, sampled
    with the seed of the run's own final evaluation (so the held-out figures are train.py's)."""
    facts, config = run_facts(run_dir, samples), json.loads((run_dir / "train_config.json").read_text())
    policy = models.load_policy_for("binary_final.py", str(run_dir / "best"), "cpu", "fp32", trainable=False)
    return {**facts, **final_fields(heldout_and_n200(policy, heldout_of(config), facts["samples"],
                                                     eval_seed(config["seed"], config["steps"])))}


def scored_before(facts: dict, previous: list[dict]) -> dict | None:
    """The row of the same finished run in an earlier output, if any: the same run, kept step and
    samples (its train_seconds, to the digit, tell one training of a seed from another)."""
    same = json.loads(json.dumps(facts))          # as the file holds it: tuples as lists, keys as strings
    return next((r for r in previous if {k: r.get(k) for k in same} == same), None)


def carried_over(previous: list[dict], rows: list[dict]) -> list[dict]:
    """The earlier rows of runs (estimator, seed) not scored now: runs whose directories are gone."""
    now = {(r["estimator"], r["seed"]) for r in rows}
    return [r for r in previous if (r["estimator"], r["seed"]) not in now]


def heldout_of(config: dict) -> list[int]:
    """The held-out secrets of a run's own split (its train_config.json)."""
    return secret_split(config["n_max"], config["n_heldout"], config["split_seed"])[1]


def references(heldout: list[int]) -> dict:
    """Greedy resolve of the reference policies on these held-out secrets (1..100) and on 1..200,
    the two sets the runs are scored on."""
    sets = {"heldout": (heldout, GameConfig(question_set="binary")),
            "n200": (list(range(1, 201)), GameConfig(question_set="binary", n_max=200))}
    policies = {"bisection": BayesPolicy, "fixed_sequence": FixedSequencePolicy, "random": lambda: RandomPolicy(0)}
    return {name: {key: sum(e.resolved for e in play(make(), secrets, cfg).episodes) / len(secrets)
                   for key, (secrets, cfg) in sets.items()} for name, make in policies.items()}


def paired(rows: list[dict], first: str = "echo") -> dict:
    """{other estimator: {figure: {mean_difference, t, p, seeds}}}: `first` minus the other, paired by seed."""
    by = {(r["estimator"], r["seed"]): r for r in rows}
    out = {}
    for other in sorted({r["estimator"] for r in rows} - {first}):
        seeds = sorted(s for e, s in by if e == other and (first, s) in by)
        out[other] = {}
        for key in COMPARED:
            a, b = [by[first, s][key] for s in seeds], [by[other, s][key] for s in seeds]
            t, p = paired_t_test(a, b)
            out[other][key] = {"mean_difference": sum(x - y for x, y in zip(a, b)) / max(len(seeds), 1),
                               "t": t, "p": p, "seeds": seeds}
    return out


def main(argv=None):
    cfg = parse_config(FinalConfig, argv, description=__doc__.splitlines()[0])
    use_threads(cfg.threads)
    run_dirs = sorted(p.parent for p in Path(cfg.runs).glob("*-seed*/summary.json"))
    if not run_dirs:
        fail("binary_final.py", f"no finished runs (ESTIMATOR-seedS/summary.json) in {cfg.runs}")
    before = json.loads(Path(cfg.out).read_text()) if os.path.exists(cfg.out) else {"runs": [], "references": {}}
    rows = []
    for run_dir in run_dirs:      # a run scored before is not played again (about 10 minutes each on one core)
        facts = run_facts(run_dir, cfg.samples)
        rows.append((not cfg.rescore and scored_before(facts, before["runs"])) or run_row(run_dir, cfg.samples))
        print(", ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in rows[-1].items()), flush=True)
    splits = {r["split_seed"]: heldout_of(json.loads((d / "train_config.json").read_text())) for r, d in zip(rows, run_dirs)}
    refs = {str(split): references(heldout) for split, heldout in splits.items()}
    for row in carried_over(before["runs"], rows):
        print(f"{row['estimator']}-seed{row['seed']}: no directory under {cfg.runs}, its row kept from {cfg.out}")
        rows.append(row)
        split = str(row["split_seed"])
        refs.setdefault(split, before["references"][split])
    rows.sort(key=lambda r: (r["estimator"], r["seed"]))
    for split, ref in refs.items():
        print(f"references, split {split}: " + ", ".join(f"{k} {v['heldout']:.3f} / {v['n200']:.3f}" for k, v in ref.items()))
    save_results({"runs": rows, "paired": paired(rows), "references": refs}, cfg.out)


if __name__ == "__main__":
    main(sys.argv[1:])
