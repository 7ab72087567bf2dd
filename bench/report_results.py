"""RESULTS.md and bench/LAB.md, built from the JSON in bench/results. RESULTS.md reads like the
paper's results section: one section per claim of the paper, in the paper's order (the game and
its references; Table 1 for every policy; ECHO against GRPO and RLOO; generalization to 1..200;
credit against the true advantage; the theorems; speed), each with its table, its command and
protocol in a few sentences, and its figure where one exists. What was tried on the way (screens,
flag groups, other splits, older runs, capacity checks, bisection behaviour, SmolLM2 on CPU cores,
every timing) is bench/LAB.md, linked once. No number is typed here: each is read from a file,
and means +- SEM and paired t-tests are computed from per-seed values (stats.mean_sem,
stats.paired_t_test). The output depends on the files and on git's HEAD only (no clock, fixed
order and float formats), so running it twice writes the same bytes; `--check` exits 1 if
RESULTS.md, bench/LAB.md or the README's summary differs from what it would write, naming first
any result whose code has changed without the text saying so (CI runs it).

    python bench/report_results.py [--check]

It also writes the README's results summary (between its two `results summary` comments, one
short line per claim), and draws credit_grid.png again from its JSON (bench/report_credit_grid.py,
which `--check` holds to the same bytes). The sections are in bench/report_claims.py (the game,
Table 1, credit, the theorems), bench/report_headline.py (ECHO against GRPO and RLOO, and
generalization: the sealed split only), bench/report_speed.py and the lab's in
bench/report_screens.py, report_generalization.py, report_binary.py, report_smollm2.py; the reading
and formatting they share in bench/report_tables.py. A new section is a function returning its
lines, added to RESULTS or LAB below.

Has the code changed? Each result file records the commit of the code it measured ("commit", and
"uncommitted": {path: blob} for files that differed from it then; bench/common.code_version);
where a file does not, provenance.json gives the commit that last changed its figures, traced
from git. report_tables.DEPENDS lists, per kind of result, the source files its figures depend
on; a row or column whose files differ now from what was measured carries a mark (†), and one
footnote per section names the files (the figures are of the older code). A result kind with no
DEPENDS line is an error.

Files read (in bench/results). Each carries "command", "machine" (a dict of bench/common.machine
or a sentence), "date" (ISO) and "commit"; where an older file does not, provenance.json gives
them ({"files": {FILE: {"command", "machine", "date", "commit", "commit_from", "note"?,
"checkpoint"?}}}). A file converted from an older markdown or text result also carries "source",
that file.

- reproduce_binary_60min_*.json (bench/reproduce.py): {"question_set", "tag", "estimators",
  "seeds", "window" (final-window steps), "jobs", "threads", "train_config":
  {"differs_from_default", "same_across_runs", "per_run", "presets", "resolved" (every train.py
  field on which all runs agree)}, "runs": {ESTIMATOR: [one per seed: {"run_name", "seed",
  "steps", "kept": {"step", "dir": best|checkpoint}, "final_eval" (held-out evaluation of the kept
  checkpoint: "eval/resolve_rate", "eval/sampled_resolve_rate", "eval/zero_rate",
  "eval/eliminated_mean", "eval/episode_length", ...), "last_eval", "steps_to_90",
  "steps_to_90_greedy", "train_seconds", "final_window": {METRIC: mean over the last `window`
  steps}}]}}. Converted files lack what their source did not print.
- fidelity_NAME.json (fidelity.py's fidelity.json plus command, machine, date), beside its
  fidelity_NAME.csv (the drawn turns) and .png: {"config": {"policy": "tiny" (before RL) or a
  checkpoint directory, "question_set", "secrets", "group_size", "turns", "branches",
  "alternatives", ...}, "policy_name", "batch_turns", "a_b_rms", "noise_se_mean",
  "branching_seconds", "rows": [{"estimator", "turns" ("all", "t=0", a band ...), "n", "pearson",
  "pearson_lo", "pearson_hi", "spearman", "sign", "scaled_error", "scaled_error_lo",
  "scaled_error_hi"}], "floors": {"all": E[Var(A_B | R)] / E[A_B^2], ...}}.
- credit_grid.json (bench/credit_grid.py), beside its credit_grid.png, which this script draws
  again from it: {"config", "secret", "seed", "panels": [{"policy", "label", "run" (a checkpoint's
  run: "path", "played", "step", "run_name", "estimator", "seed", "settings"), "game", "active",
  "returns", and (G, T) grids, None where a rollout did not play: "question", "candidates_before",
  "candidates_after", "reward", "resolved", "echo", "grpo", "rloo", "a_b", "a_b_se";
  "seconds_since_start"}], "seconds", "cpu_seconds", "threads", "load_average"}.
- fidelity_floor.json (bench/fidelity_floor.py): {"method", "draws", "files": {FIDELITY_JSON:
  {"data", "turns", "bins", "floor", "floor_lo", "floor_hi", "a_b_rms", "noise_se_mean"}}}.
- eval_paper_model_summary.json: {"command", "machine", "date", "protocol", "rows": the lines of
  an evaluate.py output directory's model_summary.jsonl ({"model_key", "group", "n_runs",
  "resolve_rate", "resolve_rate_sem", "zero_rate", "zero_rate_sem", "quality", "quality_sem",
  ...}; a language model's sampled row is its model_key + " [T=1]")}, or that list alone; beside
  eval_paper.txt, the same directory's tables.txt.
- splits.json (bench/splits.py): {"n_heldout", "splits": {SEED: {"heldout", "validation"}},
  "shared": [{"from", "to", "heldout", "validation", "training"}]}.
- bisection_behaviour_NAME.json (bench/bisection_behaviour.py), beside its .png: {"policy greedy",
  "policy sampled", "bisection (Bayes)", "random": {"comparisons", "threshold_median_corr",
  "mean_fraction_eliminated", "zero_share", ...}, "checkpoint": {"path", "played": kept|last,
  "step"}}.
- capacity_check_NAME.json (bench/capacity_check.py): {"config", "parameters", "training_states",
  "epoch_losses", "heldout", "n200": {"greedy", "sampled", "behaviour_greedy",
  "behaviour_sampled"}}.
- generalization.json (bench/generalization.py): its docstring gives the schema.
- sealed.json (written before any run plays the split it names): {"split_seed", "drawn" (a date),
  "rule", ...}: the split RESULTS.md's headline reads, and only it.
- screens.json (bench/screen.py): its docstring gives the schema.
- binary_final.json, binary_scores_NAME.json (by a script bench/generalization.py replaced):
  {"runs": [{"estimator", "seed", "steps", "changed", "kept_step", "split_seed", "universe_least",
  "train_seconds", "threads", "samples", "heldout_greedy", "heldout_sampled", "n200_greedy",
  "n200_sampled", "threshold_median_corr_greedy", "threshold_median_corr_sampled",
  "eliminated_fraction_per_turn"}], "paired": {ESTIMATOR: {FIGURE: {"mean_difference", "t", "p",
  "seeds"}}}}.
- binary_defaults.json (bench/binary_defaults.py): {"runs_dir", "rules": {RULE: window},
  "criterion", "runs": [{"name", "settings", "seed", "split_seed", "steps", "evaluations",
  "train_seconds", "kept_step", "kept_validation", "last_validation", "cross_validated": {RULE:
  score}}], "rule_means": {RULE: score}, "chosen_rule", "ranking", "chosen"}.
- smollm2_gpu.json (bench/smollm2_gpu.py; its docstring gives the schema), where it exists.
- smollm2_step.json (bench/smollm2_step.py): {"phases": {phase: {"seconds", "peak_gb"}},
  "step_seconds", "turns", "mean_prompt_tokens", "config", "train_flags", "threads", "before" (the
  same, of an earlier commit)}.
- table1.json (bench/table1.py; its docstring gives the schema), where it exists.
- smollm2_learning.json (bench/smollm2_learning.py): {"warmup", "config", "train_flags", "steps":
  [{"step", "seconds", "valid_action_rate", "reward", ...}]}; where "train_flags" is missing,
  provenance.json's note gives the flags the script passed to train.py.
- the speed files env_speed, eval_speed, rollouts, threads, ranks_speed, ranks_speed_gpu,
  gpu_step, gpu_step_lora_sweep, gpu_step_draw, gpu_step_fused, gpu_step_h200, gpu_step_cpu_small,
  profile_step, profile_step_binary, profile_step_binary_bf16, train_gpu, train_gpu_default
  (.json): as their bench scripts write them (train_gpu*: bench/device_runs.py, from the metrics
  of train.py runs on a GPU machine).
"""

import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench import paper_figures, report_credit_grid, report_tables  # noqa: E402
from bench.common import RESULTS  # noqa: E402
from bench.report_binary import section_binary  # noqa: E402
from bench.report_claims import (  # noqa: E402
    section_credit,
    section_game,
    section_table1,
    section_table1_older,
    section_theorems,
)
from bench.report_generalization import section_generalization as section_every_run  # noqa: E402
from bench.report_headline import (  # noqa: E402
    answers,
    binary_summary,
    compared_splits,
    sealed,
    section_generalization,
    section_versus,
)
from bench.report_screens import section_screens  # noqa: E402
from bench.report_smollm2 import (  # noqa: E402
    section_smollm2,
    section_smollm2_cpu_step,
    section_smollm2_gpu,
    smollm2_cpu_summary,
    smollm2_gpu_summary,
)
from bench.report_speed import (  # noqa: E402
    cpu_summary,
    gpu_summary,
    section_speed,
    section_speed_claim,
)
from bench.report_tables import (  # noqa: E402
    REFERENCE_NAMES,
    document,
    load,
    meta,
    num,
    provenance,
    rendered,
)
from tools.cli import arg, parse_config  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class ReportConfig:
    check: bool = arg(
        False,
        "write nothing; exit 1 if RESULTS.md, bench/LAB.md or the README's summary differs from "
        "what this script would write",
    )
    out: str = arg(str(ROOT / "RESULTS.md"), "the report", writes="file")
    lab: str = arg(str(ROOT / "bench" / "LAB.md"), "the lab book", writes="file")
    readme: str = arg(
        str(ROOT / "README.md"), "the README whose results summary is written", writes="file"
    )
    results: str = arg(RESULTS, "the folder of result files it reads")
    repo: str = arg(str(ROOT), "the git checkout whose HEAD is the code as it is now")


# ---------------------------------------------------------------- the two documents
def section_speed_and_gpu() -> list[str]:
    """Speed on 2 CPU cores and on one GPU, and SmolLM2 on one GPU where its file exists."""
    return section_speed_claim() + section_smollm2_gpu()


RESULTS_SECTIONS = [
    section_game,
    section_table1,
    section_versus,
    section_generalization,
    section_credit,
    section_theorems,
    section_speed_and_gpu,
    section_smollm2_cpu_step,
]
LAB_SECTIONS = [
    section_table1_older,
    section_screens,
    section_every_run,
    section_binary,
    section_smollm2,
    report_credit_grid.section_time,
    section_speed,
]


def traced() -> list[str]:
    """The result files that record no commit of their own: provenance.json traces theirs."""
    return [
        n
        for n in report_tables.names("*.json")
        if n != "provenance.json"
        and "commit" not in (load(n) or {"commit": None})
        and meta(n, load(n)).get("commit")
    ]


def llm_status() -> dict | None:
    """SmolLM2's step on CPU cores (smollm2_step.json), for the first lines."""
    data = load("smollm2_step.json")
    if data is None:
        return None
    return {"step_seconds": f"{data['step_seconds']:g}", "cpus": data["machine"]["cpus"]}


def build() -> str:
    report_tables.CITED.clear()
    sections = [line for section in RESULTS_SECTIONS for line in section()]
    lines = rendered(
        "results.md",
        answers=answers(),
        paper=paper_figures.TABLE1_RESOLVE,
        references=REFERENCE_NAMES,
        llm=llm_status(),
        sections="\n".join(sections).rstrip("\n"),
    )
    return document(lines + [""] + provenance("RESULTS.md"))


def build_lab() -> str:
    report_tables.CITED.clear()
    sections = [line for section in LAB_SECTIONS for line in section()]
    lines = rendered("lab.md", sections="\n".join(sections).rstrip("\n"))
    return document(lines + [""] + provenance("the lab book"))


# ---------------------------------------------------------------- the README's summary
SUMMARY = (
    "<!-- results summary: written by bench/report_results.py -->",
    "<!-- end of results summary -->",
)


def game_summary() -> dict | None:
    """The README's figures of the reference policies: the test split's, else the latest split's."""
    d = load("generalization.json")
    if not d or not d["references"]:
        return None
    seal = sealed()
    splits = sorted({r["split_seed"] for r in d["references"]})
    split = seal["split_seed"] if seal and seal["split_seed"] in splits else splits[-1]
    refs = {
        r["policy"]: r
        for r in d["references"]
        if r["question_set"] == "paper" and r["split_seed"] == split
    }
    cells = ", ".join(
        f"{REFERENCE_NAMES.get(p, p)} {num(r['heldout'], 1, 100)} / {num(r['gen200'], 1, 100)}"
        for p, r in refs.items()
    )
    return {"split": split, "cells": cells}


def table1_summary() -> dict | None:
    """The README's figures of Table 1: each estimator's held-out resolve over training seeds,
    greedy / sampled (none until table1.json exists)."""
    data = load("table1.json")
    if data is None:
        return None
    cells = ", ".join(
        f"{r['policy']} {num(r['greedy']['resolve_rate'][0], 1, 100)} / "
        f"{num(r['sampled']['resolve_rate'][0], 1, 100)}"
        for r in data["rows"]
        if r["kind"] == "estimator"
    )
    return {"split": data["split_seed"], "cells": cells}


def credit_summary() -> str | None:
    fid = load("fidelity_tiny-before-rl.json")
    if fid is None:
        return None
    floors = (load("fidelity_floor.json") or {"files": {}})["files"]
    r = {row["estimator"]: row for row in fid["rows"] if row["turns"] == "all"}
    shown = [e for e in ("echo", "grpo", "rloo") if e in r]
    cells = ", ".join(
        f"{e.upper()} {num(r[e]['pearson'])} [{num(r[e]['pearson_lo'])}, {num(r[e]['pearson_hi'])}]"
        for e in shown
    )
    interval = floors.get("fidelity_tiny-before-rl.json")
    floor = num(fid["floors"].get("all")) + (
        f" [{num(interval['floor_lo'])}, {num(interval['floor_hi'])}]" if interval else ""
    )
    return (
        f"- **Credit against the true advantage A_B** (the tiny model before RL, A_B by branching "
        f"on {r['echo']['n']} turns; Pearson r [bootstrap 95%]): {cells}; the floor of any "
        f"return-only credit, E[Var(A_B | R)] / E[A_B^2] (Theorem 3.2 (ii)), {floor}."
    )


def readme_summary() -> list[str]:
    """The README's results summary, at most 12 lines, one short line per claim, every number read
    from the files above."""
    d, seal = load("generalization.json"), sealed()
    figures = {
        "game": game_summary(),
        "table1": table1_summary(),
        "answers": answers(),
        "compared": compared_splits(d, seal and seal["split_seed"]) if d else [],
        "before": [line for line in (binary_summary(), credit_summary()) if line],
        "after": [
            line
            for line in (cpu_summary(), smollm2_cpu_summary(), gpu_summary(), smollm2_gpu_summary())
            if line
        ],
    }
    return rendered("summary.md", **figures)


def with_summary(readme: str) -> str:
    head, rest = readme.split(SUMMARY[0], 1)
    body = "\n".join(readme_summary())
    return head + SUMMARY[0] + "\n" + body + "\n" + SUMMARY[1] + rest.split(SUMMARY[1], 1)[1]


# ---------------------------------------------------------------- the files, and the check
def render(readme: str, results: str | None = None, repo: str | None = None, changes=True):
    """(RESULTS.md, bench/LAB.md, the README with its summary) as they should read from the
    result files in `results` (default: those in use) and the code at `repo`'s HEAD; with
    `changes` False, as they would read if no code had changed since any result (the lines that
    differ carry the marks)."""
    if results is not None:
        report_tables.use(results, repo)
    report_tables.IGNORE_CHANGES = not changes
    try:
        return build(), build_lab(), with_summary(readme)
    finally:
        report_tables.IGNORE_CHANGES = False


def blocks(text: str) -> list[str]:
    """A document's paragraphs, list items and table rows, each on one line (`wrapped` undone)."""
    out = []
    for block in text.split("\n\n"):
        if block.startswith("|"):
            out += block.splitlines()
        else:
            out += [" ".join(item.split()) for item in re.split(r"\n(?=- )", block)]
    return out


def unmarked(want: tuple, have: tuple, quiet: tuple) -> list[str]:
    """The paragraphs, items and rows that say a result's code has changed (in `want`, not in
    `quiet`) and that the current text (`have`) lacks."""
    marked = [b for w, q in zip(want, quiet) for b in blocks(w) if b not in set(blocks(q))]
    current = {b for h in have for b in blocks(h)}
    return [b for b in marked if b not in current]


def main(argv=None):
    cfg = parse_config(ReportConfig, argv, description=__doc__.splitlines()[0])
    paths = (Path(cfg.out), Path(cfg.lab), Path(cfg.readme))
    readme = paths[2].read_text()
    want = render(readme, cfg.results, cfg.repo)
    drawn = report_credit_grid.figure()  # (path, the PNG its JSON draws), or None
    if cfg.check:
        have = tuple(p.read_text() if p.exists() else "" for p in paths)
        stale = [str(p) for p, now, text in zip(paths, have, want) if now != text]
        if drawn is not None and (not drawn[0].exists() or drawn[0].read_bytes() != drawn[1]):
            stale.append(str(drawn[0]))
        if not stale:
            print(f"{', '.join(map(str, paths))} and the figure drawn here are up to date")
            return
        unsaid = unmarked(want, have, render(readme, changes=False))
        if unsaid:
            print(
                "the code of these results has changed since they were measured, and the text "
                "does not say so:",
                *(f"  {line[:200]}" for line in unsaid),
                sep="\n",
                file=sys.stderr,
            )
        print(
            f"{', '.join(stale)}: out of date; run python bench/report_results.py",
            file=sys.stderr,
        )
        sys.exit(1)
    for path, text in zip(paths, want):
        path.write_text(text)
    if drawn is not None:
        drawn[0].write_bytes(drawn[1])
    print(f"wrote {', '.join(map(str, paths))} and the figure drawn here")


if __name__ == "__main__":
    main(sys.argv[1:])
