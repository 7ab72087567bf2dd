"""RESULTS.md and bench/LAB.md, built from the JSON in bench/results. RESULTS.md reads like the
paper's results section: its answer first, then Table 1 for every policy, then one section per
claim of the paper, in the paper's order (the game and its references; ECHO against GRPO and
RLOO; generalization to 1..200; credit against the true advantage; the theorems; speed), each
with its table, its command and protocol in a few sentences, and its figure where one exists.
What was tried on the way (screens, flag groups, other splits, older runs, capacity checks,
bisection behaviour, SmolLM2 on CPU cores, every timing) is bench/LAB.md, linked once. No number
is typed here: each is read from a file, and means +- SEM and paired t-tests are computed from
per-seed values (stats.mean_sem, stats.paired_t_test). The output depends on the files and on
git's HEAD only (no clock, fixed order and float formats), so running it twice writes the same
bytes; `--check` exits 1 if RESULTS.md, bench/LAB.md or the README's summary differs from what it
would write, naming first any result whose code has changed without the text saying so (CI runs
it).

    python bench/report_results.py [--check]

It also writes the README's results summary (between its two `results summary` comments, one
short line per claim), and draws credit_grid.png again from its JSON (bench/report_credit_grid.py,
which `--check` holds to the same bytes). The sections are in bench/report_claims.py (the game,
Table 1, credit, the theorems), bench/report_headline.py (ECHO against GRPO and RLOO, and
generalization: the sealed split only), bench/report_speed.py and the lab's in
bench/report_screens.py, report_generalization.py, report_binary.py, report_smollm2.py; the reading
and formatting they share in bench/report_tables.py. Each section's sentences are a template of
bench/templates/ (jinja2), fed by a function that returns its figures and rows; a new section is
such a pair, its function added to RESULTS_SECTIONS or LAB_SECTIONS below.

Has the code changed? Each result file records the commit of the code it measured; the list of
files that ends each document gives, per file, what has changed since among the source files its
figures depend on (report_tables.DEPENDS; a result kind with no DEPENDS line is an error).
bench/README.md gives the files read and what each holds.
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
    chosen_run,
    first_run_summary,
    section_smollm2,
    section_smollm2_cpu_step,
    section_smollm2_cpu_step_floor,
    section_smollm2_cpu_step_fp32,
    section_smollm2_gpu,
    section_smollm2_study,
    section_smollm2_without_bf16,
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


RESULTS_SECTIONS = [  # the answer's first lines come before them (templates/results.md)
    section_table1,
    section_game,
    section_versus,
    section_generalization,
    section_credit,
    section_theorems,
    section_speed_and_gpu,
    section_smollm2_study,
]
LAB_SECTIONS = [
    section_table1_older,
    section_screens,
    section_every_run,
    section_binary,
    section_smollm2,
    section_smollm2_cpu_step,
    section_smollm2_cpu_step_fp32,
    section_smollm2_cpu_step_floor,
    section_smollm2_without_bf16,
    report_credit_grid.section_time,
    section_speed,
]


def llm_status() -> dict | None:
    """SmolLM2's step on CPU cores (smollm2_step.json), for the first lines."""
    data = load("smollm2_step.json")
    if data is None:
        return None
    status = {"step_seconds": f"{data['step_seconds']:g}", "cpus": data["machine"]["cpus"]}
    return status | {"study": study_status()}


def study_status() -> dict | None:
    """SmolLM2's study on CPU cores (smollm2_study.json), for the first lines: the resolve % of
    the warm-up and of each kept checkpoint (with the step it was kept at, and its second play
    where it was played again) once all are played, on the held-out secrets greedy and on 1..200
    greedy / sampled."""
    d = load("smollm2_study.json")
    if d is None:
        return None
    kept = d.get("kept", {})
    if "step0" not in d or len(kept) < len(d["study"]["estimators"].split(",")):
        return {"kept": None}
    shown = (("heldout", "greedy"), ("gen200", "greedy"), ("gen200", "sampled"))
    resolve = lambda p: " / ".join(f"{100 * p[s][k]:.1f}" for s, k in shown)  # noqa: E731
    step = {e: chosen_run(d, e)["kept_step"] for e in kept}
    again = d.get("replayed", {})  # a kept checkpoint played a second time, where the others were
    return {
        "step0": resolve(d["step0"]),
        "kept": {
            e: {"resolve": resolve(p), "step": step[e], "again": again.get(e) and resolve(again[e])}
            for e, p in kept.items()
        },
    }


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
    refs = [r for r in d["references"] if r["question_set"] == "paper" and r["split_seed"] == split]
    return {"split": split, "refs": refs, "names": REFERENCE_NAMES}


def credit_summary() -> dict | None:
    """The README's figures of credit: the tiny model before RL, each estimator's r against A_B,
    and the floor of any return-only credit with its interval where fidelity_floor.json has it."""
    fid = load("fidelity_tiny-before-rl.json")
    if fid is None:
        return None
    floors = (load("fidelity_floor.json") or {"files": {}})["files"]
    rows = {row["estimator"]: row for row in fid["rows"] if row["turns"] == "all"}
    return {
        "rows": {e: rows[e] for e in ("echo", "grpo", "rloo") if e in rows},
        "floor": fid["floors"].get("all"),
        "interval": floors.get("fidelity_tiny-before-rl.json"),
    }


def readme_summary() -> list[str]:
    """The README's results summary, at most 12 lines, one short line per claim, every number read
    from the files above."""
    d, seal = load("generalization.json"), sealed()
    figures = {
        "game": game_summary(),
        "table1": load("table1.json"),
        "answers": answers(),
        "compared": compared_splits(d, seal and seal["split_seed"]) if d else [],
        "binary": binary_summary(),
        "credit": credit_summary(),
        "cpu": cpu_summary(),
        "llm_cpu": smollm2_cpu_summary(),
        "llm_first": first_run_summary(),
        "llm_study": study_status(),
        "gpu": gpu_summary(),
        "llm_gpu": smollm2_gpu_summary(),
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
