"""Policies that read their belief: the paper's generalization test, scored on what no choice
looked at. The paper trains on secrets 1..100 and evaluates "secrets up to N = 200 to test
generalization" (section 5.1, "Game dynamics"): a policy that asks what its current belief needs
holds there; one that replays a question sequence fitted to 1..100 runs out of questions and
repeats itself.

Each run's kept checkpoint (RUN/best where the run chose one on its validation secrets, else its
last, RUN/checkpoint) is played on the held-out secrets of its own split (train.py --split-seed,
1..100) and on all of 1..200, greedy and sampled at T = 1 (the run's own --eval-samples per
secret, seeded as its final evaluation, so the held-out figures are train.py's). Beside resolve:
the share of turns that repeat a question already asked to the same arm, and the comparison
thresholds against the median of C_t and the fraction of C_t eliminated per turn
(bench/bisection_behaviour.py; the binary set's measure of bisection), and whether the policy
reads its history at all: the repeat ratio of its sampled play (metrics.repeat_ratio; 1: the
answer it was just given changes nothing about asking the same again). The reference policies
(reference.py, greedy) on the same secrets bound it: the Bayes policy (bisection on the binary
set), the best belief-agnostic fixed sequence (fitted to each universe), random questions. Per
question set and flags, ECHO minus each other estimator, paired by seed (stats.paired_t_test).

    python bench/reproduce.py --question-set paper --jobs 2
    python bench/reproduce.py --question-set binary --jobs 2 --train-flags "--split-seed 2"
    python bench/generalization.py --runs runs/reproduce/paper,runs/reproduce/binary

Runs with more flags (--train-flags "--refusal-rate 0.3 --steps 80", with --out elsewhere) are
scored beside them (--runs ...,runs/OTHER/paper) and shown as their own group.

Writes {"runs": [{"question_set", "estimator", "seed", "split_seed", "steps", "kept_step",
"changed" (train.py settings that differ from the question set's defaults), "train_seconds",
"threads", "samples", "heldout_greedy", "heldout_sampled", "gen200_greedy", "gen200_sampled",
"gen200_redundant_rate_greedy", "gen200_redundant_rate_sampled",
"gen200_eliminated_fraction_greedy", "gen200_threshold_median_corr_greedy",
"gen200_threshold_median_corr_sampled", "gen200_threshold_points_greedy",
"gen200_threshold_points_sampled" (the distinct (threshold, median) pairs each correlation rests on;
bisection_behaviour.summary), "gen200_opening_greedy", "gen200_opening_share_greedy" (the most
common families of the first two questions on 1..200, and the share of secrets opened so;
bisection_behaviour.opening), "heldout_repeat_ratio", "gen200_repeat_ratio" (sampled play;
metrics.repeat_ratio), "measured" ({"date", "scored", "trained"}: cli.code_version of the scoring
and of the training)}, ...],
"references": [{"question_set", "policy", "split_seed", "heldout", "gen200"}, ...],
"defaults": {question_set: train.py's defaults the rows' "changed" is taken against},
"paired": {question_set: {flags: {other estimator: {figure: {mean_difference, t, p, seeds}}}}}},
rates as fractions; flags: the train.py settings beyond the split that a run changed (runs are
paired only with runs of the same flags; "-": none). A run whose directory is gone keeps its row
from the output file, so runs can be trained and scored a few at a time, unless a run scored now is
the same training again (set, estimator, seed, split, steps, flags): its row replaces the older one.
Delete the file to drop the rest.
"""

import json
import math
import os
import sys
from dataclasses import dataclass, replace
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench.bisection_behaviour import (
    again_probabilities,
    behaviour,
    greedy_turns,
    heldout_and_n200,
    sampled_batch,
)
from bench.common import RESULTS, code_version, save_results, today
from bench.report_generalization import by_flags, flags_of
from bench.reproduce import PER_RUN_FIELDS
from config import config_from_flags
from env import GameConfig, play, secret_split
from experiment import eval_seed
from lm import models
from metrics import repeat_ratio
from reference import BayesPolicy, FixedSequencePolicy, RandomPolicy
from tools.cli import arg, fail, parse_config, use_threads
from tools.stats import paired_by_seed

COMPARED = ("heldout_greedy", "heldout_sampled", "gen200_greedy", "gen200_sampled")
REFERENCES = {
    "bayes": BayesPolicy,
    "fixed_sequence": FixedSequencePolicy,
    "random": lambda: RandomPolicy(0),
}


@dataclass
class GeneralizationConfig:
    runs: str = arg(
        "runs/reproduce/paper,runs/reproduce/binary",
        "comma-separated directories of runs, one ESTIMATOR-seedS each (bench/reproduce.py)",
    )
    samples: int = arg(
        0, "sampled episodes (T = 1) per secret (0: the run's own --eval-samples)", at_least=0
    )
    threads: int = arg(0, "torch threads (0: every core)", at_least=0)
    rescore: bool = arg(
        False, "play every run again, also those whose rows the output file already holds"
    )
    out: str = arg(
        os.path.join(RESULTS, "generalization.json"), "where the figures are written", writes="file"
    )


def kept_checkpoint(run_dir: Path) -> Path:
    """The checkpoint a run keeps: RUN/best if it chose one on validation secrets, else its last."""
    return run_dir / "best" if (run_dir / "best").exists() else run_dir / "checkpoint"


# Settings added to train.py after some runs were made: such a run's config lacks them, and it
# played as the paper does (no refusals, every candidate listed).
BEFORE_THE_FIELD = {"refusal_rate": 0.0, "candidate_format": "list", "prefix_turns": 0}


def run_config(run_dir: Path) -> dict:
    """A run's train_config.json, with the settings it predates at the values it played."""
    return {**BEFORE_THE_FIELD, **json.loads((run_dir / "train_config.json").read_text())}


def set_defaults(question_set: str) -> dict:
    """train.py's defaults for a question set (with its preset), leaving out what names a run."""
    return {
        k: v
        for k, v in vars(config_from_flags(["--question-set", question_set])).items()
        if k not in PER_RUN_FIELDS
    }


def changed_from(config: dict, defaults: dict) -> dict:
    """The settings of `config` that differ from `defaults`: a run's flags."""
    return {k: v for k, v in config.items() if k in defaults and v != defaults[k]}


def retaken(row: dict, then: dict | None) -> dict:
    """A carried row with "changed" taken again against today's defaults, from the defaults it was
    taken against (`then`, as the output file recorded them; a setting added since, at
    BEFORE_THE_FIELD's value or today's default): a run made at an earlier default keeps naming
    it."""
    if then is None:  # a file written before the defaults were recorded: its rows stand as they are
        return row
    played = {**BEFORE_THE_FIELD, **then, **row["changed"]}
    return {**row, "changed": changed_from(played, set_defaults(row["question_set"]))}


def run_facts(run_dir: Path, samples: int) -> dict:
    """What identifies a finished run and how it is scored, read from its files (nothing played)."""
    summary = json.loads((run_dir / "summary.json").read_text())
    config = run_config(run_dir)
    changed = changed_from(config, set_defaults(config["question_set"]))
    return {
        "question_set": config["question_set"],
        "estimator": summary["estimator"],
        "seed": summary["seed"],
        "split_seed": config["split_seed"],
        "steps": summary["steps"],
        "kept_step": summary["kept"]["step"],
        "changed": changed,
        "train_seconds": summary["train_seconds"],
        "threads": config["threads"],
        "samples": samples or config["eval_samples"],
    }


def heldout_of(config: dict) -> list[int]:
    """The held-out secrets of a run's own split (its train_config.json)."""
    return secret_split(config["n_max"], config["n_heldout"], config["split_seed"])[1]


def run_row(run_dir: Path, samples: int) -> dict:
    """The figures of one run's kept checkpoint on its held-out secrets and on 1..200."""
    facts, config = run_facts(run_dir, samples), run_config(run_dir)
    if facts["samples"] < 1:
        fail(
            "generalization.py",
            f"{run_dir} evaluated no sampled episodes: give --samples 1 or more",
        )
    policy = models.load_policy_for(
        "generalization.py", str(kept_checkpoint(run_dir)), "cpu", "fp32", trainable=False
    )
    s = heldout_and_n200(
        policy,
        heldout_of(config),
        facts["samples"],
        eval_seed(config["seed"], config["steps"]),
        facts["question_set"],
        config["candidate_format"],
    )
    held, gen = s["heldout"], s["n200"]
    return {
        **facts,
        "heldout_greedy": held["greedy"],
        "heldout_sampled": held["sampled"],
        "gen200_greedy": gen["greedy"],
        "gen200_sampled": gen["sampled"],
        "gen200_redundant_rate_greedy": gen["behaviour_greedy"]["redundant_rate"],
        "gen200_redundant_rate_sampled": gen["behaviour_sampled"]["redundant_rate"],
        "gen200_eliminated_fraction_greedy": gen["behaviour_greedy"]["mean_fraction_eliminated"],
        "gen200_threshold_median_corr_greedy": gen["behaviour_greedy"].get(
            "threshold_median_corr", math.nan
        ),
        "gen200_threshold_median_corr_sampled": gen["behaviour_sampled"].get(
            "threshold_median_corr", math.nan
        ),
        "gen200_threshold_points_greedy": gen["behaviour_greedy"]["threshold_points"],
        "gen200_threshold_points_sampled": gen["behaviour_sampled"]["threshold_points"],
        "gen200_opening_greedy": gen["behaviour_greedy"]["opening"],
        "gen200_opening_share_greedy": gen["behaviour_greedy"]["opening_share"],
        "heldout_repeat_ratio": held["repeat_ratio_sampled"],
        "gen200_repeat_ratio": gen["repeat_ratio_sampled"],
        "measured": measured(run_dir),
    }


def measured(run_dir: Path) -> dict:
    """When and with which code a row was measured: the date and code that scored it, and the code
    that trained the run (None where its summary.json predates the record). A file gathers rows a
    few runs at a time, so its rows can be of different code; its header names only the last."""
    trained = json.loads((run_dir / "summary.json").read_text()).get("code")
    return {"date": today(), "scored": code_version(), "trained": trained}


def with_later_figures(run_dir: Path, row: dict) -> dict:
    """A row scored before some figures were: the greedy play on 1..200 again (deterministic, so
    the other greedy figures stay as they are) for the correlation's distinct (threshold, median)
    pairs and the opening, and the repeat ratios from sampled play on the row's seeds. The sampled
    count of points stays unknown."""
    greedy_figures = ("gen200_threshold_points_greedy", "gen200_opening_greedy")
    if all(k in row for k in greedy_figures) and "gen200_repeat_ratio" in row:
        return row
    config = run_config(run_dir)
    policy = models.load_policy_for(
        "generalization.py", str(kept_checkpoint(run_dir)), "cpu", "fp32", trainable=False
    )
    game = GameConfig(question_set=row["question_set"], candidate_format=config["candidate_format"])
    if not all(k in row for k in greedy_figures):
        greedy = behaviour(greedy_turns(policy, list(range(1, 201)), replace(game, n_max=200)))
        row = {
            **row,
            "gen200_threshold_points_greedy": greedy["threshold_points"],
            "gen200_threshold_median_corr_greedy": greedy.get("threshold_median_corr", math.nan),
            "gen200_opening_greedy": greedy["opening"],
            "gen200_opening_share_greedy": greedy["opening_share"],
        }
    if "gen200_repeat_ratio" in row:
        return row
    seed = eval_seed(config["seed"], config["steps"])
    ratio = lambda secrets, g: repeat_ratio(
        *again_probabilities(policy, sampled_batch(policy, secrets, g, row["samples"], seed))
    )
    return {
        **row,
        "heldout_repeat_ratio": ratio(heldout_of(config), game),
        "gen200_repeat_ratio": ratio(list(range(1, 201)), replace(game, n_max=200)),
    }


def references(question_set: str, split_seed: int) -> list[dict]:
    """Greedy resolve of the reference policies on a split's held-out secrets and on 1..200."""
    sets = {
        "heldout": (secret_split(seed=split_seed)[1], GameConfig(question_set=question_set)),
        "gen200": (list(range(1, 201)), GameConfig(question_set=question_set, n_max=200)),
    }
    return [
        {
            "question_set": question_set,
            "policy": name,
            "split_seed": split_seed,
            **{
                key: sum(e.resolved for e in play(make(), secrets, cfg).episodes) / len(secrets)
                for key, (secrets, cfg) in sets.items()
            },
        }
        for name, make in REFERENCES.items()
    ]


def same_run(facts: dict, row: dict) -> bool:
    """Whether an earlier output's row is of this finished run: the same run, kept step and samples
    (its train_seconds, to the digit, tell one training of a seed from another). Not "changed": that
    is taken against the defaults of the day it was written."""
    # as the file holds it
    same = {k: v for k, v in json.loads(json.dumps(facts)).items() if k != "changed"}
    return {k: row.get(k) for k in same} == same


def scored_before(facts: dict, previous: list[dict]) -> dict | None:
    """The row of the same finished run in an earlier output, if any, with "changed" taken again
    against today's defaults (a run's flags are what it changed from them)."""
    row = next((r for r in previous if same_run(facts, r)), None)
    return row and {**row, "changed": facts["changed"]}


def identity(row: dict) -> tuple:
    """What names a run among the rows: question set, flags beyond the split, estimator, seed."""
    return row["question_set"], flags_of(row), row["estimator"], row["seed"]


def trained_again(facts: dict, row: dict) -> bool:
    """Whether a run scored now is the same training as an earlier row's, played again (the same
    command: set, estimator, seed, split, steps and flags), so that it replaces that row."""
    keys = ("question_set", "estimator", "seed", "split_seed", "steps")
    return all(facts[k] == row.get(k) for k in keys) and flags_of(facts) == flags_of(row)


def carried_over(previous: list[dict], facts: list[dict]) -> list[dict]:
    """The earlier rows of runs not scored now (`facts`: run_facts of those that are): runs whose
    directories are gone and that were not trained again."""
    return [r for r in previous if not any(same_run(f, r) or trained_again(f, r) for f in facts)]


def main(argv=None):
    cfg = parse_config(GeneralizationConfig, argv, description=__doc__.splitlines()[0])
    use_threads(cfg.threads)
    run_dirs = sorted(
        p.parent for d in cfg.runs.split(",") if d for p in Path(d).glob("*-seed*/summary.json")
    )
    before = (
        json.loads(Path(cfg.out).read_text())
        if os.path.exists(cfg.out)
        else {"runs": [], "references": []}
    )
    if not run_dirs and not before["runs"]:
        fail("generalization.py", f"no finished runs (ESTIMATOR-seedS/summary.json) in {cfg.runs}")
    then = before.get("defaults", {})
    # flags against today's defaults
    previous = [retaken(r, then.get(r["question_set"])) for r in before["runs"]]
    rows, scored = [], []
    for run_dir in run_dirs:  # a run scored before is not played again
        facts = run_facts(run_dir, cfg.samples)
        scored.append(facts)
        earlier = not cfg.rescore and scored_before(facts, previous)
        rows.append(
            with_later_figures(run_dir, earlier) if earlier else run_row(run_dir, cfg.samples)
        )
        print(
            ", ".join(
                f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in rows[-1].items()
            ),
            flush=True,
        )
    for row in carried_over(previous, scored):
        print(
            f"{row['question_set']} {row['estimator']}-seed{row['seed']}: "
            f"no directory under {cfg.runs}, its row kept from {cfg.out}"
        )
        rows.append(row)
    rows.sort(key=identity)
    done = {
        (r["question_set"], r["split_seed"]): r
        for r in before["references"]
        if r["policy"] == "bayes"
    }
    refs = []
    for question_set, split in sorted({(r["question_set"], r["split_seed"]) for r in rows}):
        refs += (
            [
                r
                for r in before["references"]
                if (r["question_set"], r["split_seed"]) == (question_set, split)
            ]
            if (question_set, split) in done
            else references(question_set, split)
        )
    for r in refs:
        print(
            f"reference {r['policy']}, {r['question_set']} set, split {r['split_seed']}: "
            f"held-out {r['heldout']:.3f}, 1..200 {r['gen200']:.3f}"
        )
    sets = sorted({r["question_set"] for r in rows})
    save_results(
        {
            "runs": rows,
            "references": refs,
            "defaults": {qs: set_defaults(qs) for qs in sets},
            "paired": {
                qs: {
                    flags: paired_by_seed(group, "echo", COMPARED)
                    for flags, group in by_flags(
                        [r for r in rows if r["question_set"] == qs]
                    ).items()
                }
                for qs in sets
            },
        },
        cfg.out,
    )


if __name__ == "__main__":
    main(sys.argv[1:])
