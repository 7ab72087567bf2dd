"""The binary set's defaults (G, the learning rate, the checkpoint rule) chosen on validation
secrets alone. Runs that differ from each other in one setting (same seed, same split) are read
from their logs; no held-out secret is looked at.

The checkpoint rule picks a run's evaluation on its validation scores, so judging a rule on the
same scores would flatter it. train.py logs each evaluation's score on two halves of the
validation secrets (alternate ones, `eval/validation_score_a` and `_b`): a rule chooses on one
half and is scored on the other, both ways round (a two-fold cross-validation). The rule with
the best mean over the runs is chosen; each setting is then scored by that rule's
cross-validated score, and the current default is kept unless another setting scores higher.

    python bench/binary_defaults.py --runs runs/defaults

Paper: App. C (hyperparameters). Writes {"runs_dir", "rules", "criterion", "runs": [{"name",
"settings" (the train.py fields that differ between the runs), "seed", "split_seed", "steps",
"evaluations", "train_seconds" (the steps' seconds summed), "kept_step", "kept_validation",
"last_validation", "cross_validated": {RULE: score}}], "rule_means": {RULE: mean}, "chosen_rule",
"ranking" (names, best first), "chosen"} (scores as fractions: resolve greedy and sampled,
averaged).
"""

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench.common import RESULTS, save_results
from experiment import kept_evaluation
from tools.cli import arg, fail, parse_config

# name: window (0: the last)
RULES = {"last": 0, "best single": 1, "best 3 in a row": 3, "best 5 in a row": 5}
# how a run was run, not what
NOT_SETTINGS = {"out", "run_name", "resume", "threads", "device", "seeds"}


@dataclass
class DefaultsConfig:
    runs: str = arg(
        "runs/defaults", "directory of the runs compared, one train.py run directory each"
    )
    default: str = arg(
        "default", "the run with the current defaults: kept unless another scores higher"
    )
    out: str = arg(
        os.path.join(RESULTS, "binary_defaults.json"),
        "where the comparison is written",
        writes="file",
    )


def chosen_index(scores: list[float], window: int) -> int:
    """The evaluation a rule keeps: the last one (window 0) or experiment.kept_evaluation's."""
    return len(scores) - 1 if window == 0 else kept_evaluation(scores, window)


def cross_validated(a: list[float], b: list[float], window: int) -> float:
    """A rule's two-fold score: chosen on half a and scored on half b, and the other way round."""
    return (b[chosen_index(a, window)] + a[chosen_index(b, window)]) / 2


def read_run(run_dir: Path) -> dict:
    """One run's config, summary and validation evaluations (step, whole, half a, half b)."""
    rows = [
        json.loads(line)
        for line in (run_dir / "metrics.jsonl").read_text().splitlines()
        if line.strip()
    ]
    evals = [
        (
            r["step"],
            r["eval/validation_score"],
            r["eval/validation_score_a"],
            r["eval/validation_score_b"],
        )
        for r in rows
        if "eval/validation_score_a" in r
    ]
    if not evals:
        fail(
            "binary_defaults.py",
            f"{run_dir} logged no validation halves: train it with --validation-secrets 2 or more",
        )
    # a resumed run's steps too
    return {
        "name": run_dir.name,
        "config": json.loads((run_dir / "train_config.json").read_text()),
        "summary": json.loads((run_dir / "summary.json").read_text()),
        "evals": evals,
        "seconds": sum(r.get("train/seconds_per_step", 0.0) for r in rows),
    }


def compare(runs: list[dict], default: str) -> dict:
    """Each run's figures, the rule with the best mean cross-validated score, and the settings
    ranked by that rule's score (the default first among equals)."""
    keys = sorted(
        k
        for k in runs[0]["config"]
        if k not in NOT_SETTINGS and len({json.dumps(r["config"].get(k)) for r in runs}) > 1
    )
    rows = []
    for r in runs:
        _, whole, a, b = (list(x) for x in zip(*r["evals"]))
        rows.append(
            {
                "name": r["name"],
                "settings": {k: r["config"].get(k) for k in keys},
                "seed": r["config"]["seed"],
                "split_seed": r["config"]["split_seed"],
                "steps": r["summary"]["steps"],
                "evaluations": len(whole),
                "train_seconds": round(r["seconds"], 1),
                "kept_step": r["summary"]["kept"]["step"],
                "kept_validation": whole[chosen_index(whole, r["config"]["validation_window"])],
                "last_validation": whole[-1],
                "cross_validated": {rule: cross_validated(a, b, w) for rule, w in RULES.items()},
            }
        )
    means = {rule: sum(r["cross_validated"][rule] for r in rows) / len(rows) for rule in RULES}
    current = next(r["config"]["validation_window"] for r in runs if r["name"] == default)
    # a tie keeps the default run's rule
    rule = max(RULES, key=lambda k: (means[k], RULES[k] == current))
    ranking = sorted(rows, key=lambda r: (-r["cross_validated"][rule], r["name"] != default))
    return {
        "rules": RULES,
        "rows": rows,
        "rule_means": means,
        "chosen_rule": rule,
        "ranking": [r["name"] for r in ranking],
        "chosen": ranking[0]["name"],
    }


def main(argv=None):
    cfg = parse_config(DefaultsConfig, argv, description=__doc__.splitlines()[0])
    dirs = sorted(p.parent for p in Path(cfg.runs).glob("*/summary.json"))
    if not dirs:
        fail("binary_defaults.py", f"no finished runs (RUN/summary.json) in {cfg.runs}")
    runs = [read_run(d) for d in dirs]
    if cfg.default not in {r["name"] for r in runs}:
        fail(
            "binary_defaults.py",
            f"no run named {cfg.default} in {cfg.runs} (--default names the current defaults)",
        )
    out = compare(runs, cfg.default)
    for r in out["rows"]:
        print(
            f"{r['name']:>12}: {r['settings']}, kept step {r['kept_step']}, cross-validated "
            + ", ".join(f"{k} {v:.3f}" for k, v in r["cross_validated"].items())
        )
    print(
        f"rule: {out['chosen_rule']} "
        f"({', '.join(f'{k} {v:.3f}' for k, v in out['rule_means'].items())}); "
        f"ranking: {', '.join(out['ranking'])}"
    )
    save_results(
        {
            "runs_dir": cfg.runs,
            "rules": out["rules"],
            "criterion": __doc__.split("\n\n")[1].replace("\n", " "),
            "runs": out["rows"],
            "rule_means": out["rule_means"],
            "chosen_rule": out["chosen_rule"],
            "ranking": out["ranking"],
            "chosen": out["chosen"],
        },
        cfg.out,
    )


if __name__ == "__main__":
    main(sys.argv[1:])
