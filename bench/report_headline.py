"""The headline of RESULTS.md (bench/report_results.py builds it): ECHO against GRPO and RLOO on
the held-out secrets, and the paper's generalization test on 1..200 (section 5.1, "Game
dynamics"), both from bench/generalization.py's file, per question set.

The paper set's headline reads one split only: the one bench/results/sealed.json names, drawn and
written before any run played it ({"split_seed", "drawn", "rule"}), and of that split only the
default command's runs (train.py with no flag but the split). Until that file exists the headline
says the sealed test has not been played and shows no test figure. The split the defaults were
compared on (the split of the flag groups) is shown apart, labelled as such, never as the
headline; every other row is in bench/LAB.md. Means are mean +- SEM over seeds, and ECHO minus
each other estimator is paired by seed (stats.paired_by_seed), computed here from the rows. No
number is typed here: each is read from a file.
"""

import re

from bench import report_tables
from bench.report_binary import preset_choice
from bench.report_claims import released_rloo
from bench.report_generalization import by_estimator, flags_of, pct
from bench.report_screens import section_defaults_chosen
from bench.report_tables import (
    REFERENCE_NAMES,
    cite,
    load,
    ms,
    named,
    nan,
    num,
    rendered,
    seed_range,
    table,
)
from tools.stats import paired_by_seed

FILE, SEALED = "generalization.json", "sealed.json"
HELDOUT = [("heldout_greedy", "greedy"), ("heldout_sampled", "sampled")]
GEN200 = [("gen200_greedy", "greedy"), ("gen200_sampled", "sampled")]


def sealed() -> dict | None:
    """sealed.json: the split drawn for the test before any run played it, or None."""
    return load(SEALED)


def default_rows(d: dict, question_set: str, split: int) -> list[dict]:
    """The runs of one question set and split that changed nothing but the split."""
    return [
        r
        for r in d["runs"]
        if r["question_set"] == question_set and r["split_seed"] == split and flags_of(r) == "-"
    ]


def compared_splits(d: dict, test: int | None) -> list[int]:
    """The paper set's splits on which flag groups were compared (other than the sealed one)."""
    return sorted(
        {r["split_seed"] for r in d["runs"] if r["question_set"] == "paper" and flags_of(r) != "-"}
        - {test}
    )


def references(d: dict, question_set: str, split: int) -> list[dict]:
    return [
        r for r in d["references"] if (r["question_set"], r["split_seed"]) == (question_set, split)
    ]


def group_table(d: dict, rows: list[dict], figures: list, refs_key: str | None, by_seed: bool):
    """Per estimator mean +- SEM over seeds of `figures`, where `refs_key` the references of the
    same secrets below them (greedy; the game's section has every split's), and where `by_seed`
    the redundant turns, the repeat ratio and the greedy figure seed by seed."""
    first = figures[0][0]
    header = ["Policy", "Seeds (steps)"] + [f"Resolve, {name}" for _, name in figures]
    if by_seed:
        header += ["Redundant turns, greedy", "Repeat ratio", "Greedy resolve by seed"]
    out = []
    for estimator, rs in by_estimator(rows).items():
        steps = "/".join(str(s) for s in sorted({r["steps"] for r in rs}))
        cells = [ms([r[k] for r in rs]) for k, _ in figures]
        if by_seed:
            ordered = sorted(rs, key=lambda r: r["seed"])
            cells += [
                ms([r["gen200_redundant_rate_greedy"] for r in rs]),
                ms([r.get("gen200_repeat_ratio") for r in rs], 2, 1.0),
                ", ".join(pct(r[first]) for r in ordered),
            ]
        seeds = seed_range(sorted(r["seed"] for r in rs))
        out.append([estimator.upper(), f"{seeds} ({steps})"] + cells)
    refs = references(d, rows[0]["question_set"], rows[0]["split_seed"]) if refs_key else []
    for r in refs:
        name = REFERENCE_NAMES.get(r["policy"], r["policy"])
        out.append([f"{name} (reference)", "-", pct(r[refs_key])] + [""] * (len(header) - 3))
    return table(header, out)


def paired(rows: list[dict], figures: list) -> dict:
    """ECHO against each other estimator on `figures`, paired by seed (templates/macros.md)."""
    return {"tests": paired_by_seed(rows, "echo", [k for k, _ in figures]), "figures": figures}


def sealed_figures(d: dict, seal: dict, figures: list, refs_key: str, by_seed: bool) -> dict:
    """The headline's figures: the sealed split's default runs (None where it has none)."""
    rows = default_rows(d, "paper", seal["split_seed"])
    if not rows:
        return None
    return {
        "seal_file": cite(SEALED, seal),
        "unplayed": unplayed(seal, rows),
        "table": block(group_table(d, rows, figures, refs_key, by_seed)),
        "paired": paired(rows, figures),
    }


def block(lines: list[str]) -> str:
    return "\n".join(lines).strip("\n")


def curves(once: bool) -> list[str]:
    """Where the sealed runs' training is summarised (bench/reproduce.py's files: curves, steps to
    90%, seconds), where they exist; said once, under the second table."""
    found = [
        n
        for n in ("json", "md", "png")
        if (report_tables.DIR / f"reproduce_paper_sealed.{n}").exists()
    ]
    return [named(f"reproduce_paper_sealed.{n}") for n in found] if once else []


def unplayed(seal: dict, rows: list[dict]) -> dict | None:
    """The runs sealed.json plans (its command's --seeds, each estimator) that have no row yet,
    and the seeds it plans; None when every one has a row."""
    found = re.search(r"--seeds ([\d,]+)", seal.get("played_by", ""))
    if not found:
        return None
    planned = [int(s) for s in found[1].split(",")]
    played = {(r["estimator"], r["seed"]) for r in rows}
    left = sorted((e, s) for e in {"echo", "grpo", "rloo"} for s in planned if (e, s) not in played)
    return {"planned": planned, "left": left} if left else None


def split_groups(d: dict, question_set: str, splits: list, figures: list, by_seed: bool) -> list:
    """Each split's default runs: its table and paired tests (none where it has no such runs)."""
    out = []
    for split in splits:
        rows = default_rows(d, question_set, split)
        if rows:
            out.append(
                {
                    "split": split,
                    "table": block(group_table(d, rows, figures, None, by_seed)),
                    "paired": paired(rows, figures),
                }
            )
    return out


def headline(d: dict, figures: list, refs_key: str, by_seed: bool) -> dict:
    """The figures of a headline section (templates/headline.md): the sealed split's default runs,
    or, while it has none, those of each split the defaults were compared on; the binary set's."""
    seal = sealed()
    head = sealed_figures(d, seal, figures, refs_key, by_seed) if seal else None
    compared = [] if head else compared_splits(d, seal and seal["split_seed"])
    binary = sorted({r["split_seed"] for r in d["runs"] if r["question_set"] == "binary"})
    return {
        "seal": seal,
        "sealed": head,
        "curves": curves(by_seed) if seal else [],
        "file": cite(FILE, d),
        "compared": split_groups(d, "paper", compared, figures, by_seed),
        "binary": split_groups(d, "binary", binary, figures, by_seed),
    }


def section_versus() -> list[str]:
    """ECHO against GRPO and RLOO on the held-out secrets of 1..100, both question sets."""
    d, seal = load(FILE), sealed()
    if d is None:
        return rendered("versus.md", h=None, seal=seal)
    chosen = section_defaults_chosen(compared_splits(d, seal and seal["split_seed"]))
    return rendered(
        "versus.md",
        h=headline(d, HELDOUT, "heldout", False),
        defaults=block(chosen),
        choice=preset_choice(),
    )


def section_generalization() -> list[str]:
    """The paper's generalization test: trained on 1..100, played on every secret of 1..200."""
    d = load(FILE)
    if d is None:
        return rendered("generalization.md", h=None, seal=sealed())
    return rendered("generalization.md", h=headline(d, GEN200, "gen200", True))


# ---------------------------------------------------------------- the README's lines
def binary_summary() -> dict | None:
    """The README's figures of the binary set: held-out greedy resolve per estimator, on the
    latest split of its default runs."""
    d = load(FILE)
    splits = sorted(
        {r["split_seed"] for r in (d or {"runs": []})["runs"] if r["question_set"] == "binary"}
    )
    rows = default_rows(d, "binary", splits[-1]) if splits else []
    if not rows:
        return None
    means = {e: ms([r["heldout_greedy"] for r in rs]) for e, rs in by_estimator(rows).items()}
    return {"split": splits[-1], "means": means}


# ---------------------------------------------------------------- the answer, first
def side(test: dict) -> str:
    """ECHO against another on one figure, by the paired t-test over seeds at 5%: "higher",
    "lower", or "level" (no difference the test can tell). The rule was written before the
    sealed split's runs were scored."""
    if nan(test["p"]) or test["p"] >= 0.05:
        return "level"
    return "higher" if test["mean_difference"] > 0 else "lower"


def answers() -> dict | None:
    """The figures of RESULTS.md's first lines: the sealed split's default runs, held-out and
    1..200, ECHO against each other estimator (paired by seed), and the references on the same
    secrets; None until the sealed split has runs."""
    d, seal = load(FILE), sealed()
    rows = default_rows(d, "paper", seal["split_seed"]) if d and seal else []
    if not rows:
        return None
    keys = ["heldout_greedy", "heldout_sampled", "gen200_greedy", "gen200_redundant_rate_greedy"]
    by = by_estimator(rows)
    tests = paired_by_seed(rows, "echo", keys)
    versus = {
        o: {
            k: {**t[k], "side": side(t[k]), "points": num(t[k]["mean_difference"], 1, 100)}
            for k in keys
        }
        for o, t in tests.items()
    }
    return {
        "split": seal["split_seed"],
        "seeds": seed_range(sorted({r["seed"] for r in rows})),
        "n_seeds": len({r["seed"] for r in rows}),
        "steps": "/".join(str(s) for s in sorted({r["steps"] for r in rows})),
        "mean": {e: {k: ms([r[k] for r in rs]) for k in keys} for e, rs in by.items()},
        "repeat": {
            e: ms([r.get("gen200_repeat_ratio") for r in rs], 2, 1.0) for e, rs in by.items()
        },
        "versus": versus,
        "refs": {r["policy"]: r for r in references(d, "paper", seal["split_seed"])},
        "released": released_rloo(seal["split_seed"]),
        "file": cite(FILE, d),
    }
