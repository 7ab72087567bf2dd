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
from bench.report_binary import preset_chosen_on, since_split_one
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
    seed_range,
    t_test_text,
    table,
)
from tools.stats import paired_by_seed

FILE, SEALED = "generalization.json", "sealed.json"
HELDOUT = [("heldout_greedy", "greedy"), ("heldout_sampled", "sampled")]
GEN200 = [("gen200_greedy", "greedy"), ("gen200_sampled", "sampled")]

# What the released code's per-turn RLOO is (baselines.py's `rloo-std`, tests/test_echo.py).
RLOO_IDENTITY = [
    "*The paper's RLOO per-turn.* Its released code (advantages.py) divides each turn's "
    "leave-one-out difference by the same zero-padded group std it uses for ECHO, and (r - the "
    "others' mean) / std = G/(G-1) (r - the mean) / std: its RLOO is ECHO's zero-padded "
    "advantage times a constant (`--estimator rloo-std` here, equal to G/(G-1) times "
    "`echo-zeropad` on any batch). Under Adam and the ratio clip a constant scale on A changes "
    "almost nothing, so the released code's two estimators should train alike, and the gap the "
    "paper's Table 1 reports between them is not one this identity explains. echo's `rloo` is "
    "the unnormalised leave-one-out, a choice where the TeX is silent.",
    "",
]


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


def paired_lines(rows: list[dict], figures: list) -> list[str]:
    """ECHO minus each other estimator on `figures`, paired by seed, in one paragraph."""
    parts = []
    for other, tests in paired_by_seed(rows, "echo", [k for k, _ in figures]).items():
        seeds = next(iter(tests.values()))["seeds"]
        parts.append(
            f"ECHO minus {other.upper()}, paired over seeds {seed_range(seeds)}: "
            + ", ".join(
                f"{name} {num(tests[k]['mean_difference'], 1, 100)} points "
                f"({t_test_text(tests[k]['t'], tests[k]['p'])})"
                for k, name in figures
            )
        )
    return ["; ".join(parts) + ".", ""] if parts else []


def sealed_heading(seal: dict | None) -> str:
    return (
        f"### Paper set, the sealed split {seal['split_seed']} (the test)"
        if seal
        else "### Paper set, the sealed test"
    )


def not_played(seal: dict | None) -> list[str]:
    """What the headline says while it has no figure to show."""
    if seal is None:
        return [
            "The sealed test has not been played yet: no split has been drawn into "
            "`bench/results/sealed.json` before its runs, so no figure of this section is a test "
            "figure.",
            "",
        ]
    return [
        f"Split {seal['split_seed']} was drawn on {seal.get('drawn', 'a date not recorded')} "
        "(`bench/results/sealed.json`); its runs have not been scored yet, so no figure of this "
        "section is a test figure.",
        "",
    ]


def sealed_lines(d: dict, figures: list, refs_key: str, by_seed: bool) -> list[str]:
    """The headline: the sealed split's default runs, or the sentence that it is not played."""
    seal = sealed()
    lines = [sealed_heading(seal), ""]
    rows = default_rows(d, "paper", seal["split_seed"]) if seal else []
    if not rows:
        return lines + not_played(seal)
    rule = f" under the rule it records ({seal['rule']})" if seal.get("rule") else ""
    lines += [
        f"Split {seal['split_seed']} was drawn on {seal.get('drawn', 'a date not recorded')}"
        f"{rule}, before any run played it ({cite(SEALED, seal)}); the runs are the "
        f"default command's ({cite(FILE, d)})." + unplayed(seal, rows),
        "",
    ]
    lines += group_table(d, rows, figures, refs_key, by_seed) + paired_lines(rows, figures)
    return lines + curves_line(by_seed)


def curves_line(once: bool) -> list[str]:
    """Where the sealed runs' training is summarised (bench/reproduce.py's files: curves, steps to
    90%, seconds), where they exist; said once, under the second table."""
    found = [
        n
        for n in ("json", "md", "png")
        if (report_tables.DIR / f"reproduce_paper_sealed.{n}").exists()
    ]
    if not once or not found:
        return []
    files = ", ".join(named(f"reproduce_paper_sealed.{n}") for n in found)
    return [f"The sealed runs' training (curves, evaluations, seconds): {files}.", ""]


def unplayed(seal: dict, rows: list[dict]) -> str:
    """The sentence naming the runs sealed.json plans (its command's --seeds, each estimator) that
    have no row yet; empty when every one has."""
    found = re.search(r"--seeds ([\d,]+)", seal.get("played_by", ""))
    if not found:
        return ""
    planned = [int(s) for s in found[1].split(",")]
    played = {(r["estimator"], r["seed"]) for r in rows}
    missing = sorted(
        (e, s) for e in {"echo", "grpo", "rloo"} for s in planned if (e, s) not in played
    )
    if not missing:
        return ""
    return (
        f" Of the {3 * len(planned)} runs it plans (ECHO, GRPO and RLOO, seeds "
        f"{seed_range(planned)}), {len(missing)} are not yet trained and scored: "
        + ", ".join(f"{e.upper()} seed {s}" for e, s in missing)
        + "."
    )


def compared_lines(d: dict, figures: list, refs_key: str, by_seed: bool) -> list[str]:
    """The default runs of each split the defaults were compared on, labelled as such, while the
    sealed split has none to show (then they are bench/LAB.md's only)."""
    seal, lines = sealed(), []
    if seal and default_rows(d, "paper", seal["split_seed"]):
        return lines
    for split in compared_splits(d, seal and seal["split_seed"]):
        rows = default_rows(d, "paper", split)
        if not rows:
            continue
        lines += [
            f"### Paper set, split {split}: the split the defaults were compared on, not a test",
            "",
            "The paper set's defaults were compared on this split's figures (its flag groups are "
            "in bench/LAB.md), so these may flatter them: no test figure. The runs are the "
            f"default command's ({cite(FILE, d)}).",
            "",
        ]
        lines += group_table(d, rows, figures, None, by_seed) + paired_lines(rows, figures)
    return lines


def binary_lines(d: dict, figures: list, refs_key: str, by_seed: bool) -> list[str]:
    """The binary set's default runs, split by split, as they are."""
    lines = []
    for split in sorted({r["split_seed"] for r in d["runs"] if r["question_set"] == "binary"}):
        rows = default_rows(d, "binary", split)
        if not rows:
            continue
        lines += [f"### Binary set (yes/no questions only), split {split}", ""]
        lines += group_table(d, rows, figures, None, by_seed) + paired_lines(rows, figures)
    return lines


PROTOCOL = (
    "*Protocol:* each run trains on its split's training secrets of 1..100 with train.py's "
    "defaults for its question set (no flag but `--split-seed`; `python bench/reproduce.py`), "
    "and its kept checkpoint (chosen on its validation secrets where it has them, else its last) "
    "is played greedy and sampled at T = 1 by `python bench/generalization.py`. Resolve in %, "
    "mean ± SEM over seeds; ECHO minus each other estimator paired by seed (paired t-test)."
)


def section_versus() -> list[str]:
    """ECHO against GRPO and RLOO on the held-out secrets of 1..100, both question sets."""
    lines = ["## ECHO against GRPO and RLOO", ""]
    d = load(FILE)
    if d is None:
        return lines + not_played(sealed())
    lines += [
        PROTOCOL + " Held-out: the split's held-out secrets of 1..100, which no training saw.",
        "",
    ]
    seal = sealed()
    head = sealed_lines(d, HELDOUT, "heldout", False)
    compared = compared_lines(d, HELDOUT, "heldout", False)
    chosen = section_defaults_chosen(compared_splits(d, seal and seal["split_seed"]))
    binary = binary_lines(d, HELDOUT, "heldout", False)
    if binary:
        binary += [
            preset_chosen_on()
            + "The binary set is this code's (App. C's yes/no questions alone), so no figure of "
            "the paper's Table 1, which is of Qwen2.5-1.5B-Instruct on every family, compares "
            "with these.",
            "",
        ]
        since = since_split_one(d)
        binary += [since, ""] if since else []
    return lines + head + RLOO_IDENTITY + compared + chosen + binary


def section_generalization() -> list[str]:
    """The paper's generalization test: trained on 1..100, played on every secret of 1..200."""
    lines = ["## Generalization", ""]
    d = load(FILE)
    if d is None:
        return lines + not_played(sealed())
    lines += [
        PROTOCOL + " 1..200: every secret of 1..200 in the universe 1..200 (§5.1, "
        '"Game dynamics"), numbers and a universe no training prompt held; redundant: turns '
        "that ask an arm what it was already asked; repeat ratio: in sampled play, the "
        "probability of asking the action just answered again over its probability when taken "
        "(1: the answer changes nothing; metrics.repeat_ratio).",
        "",
    ]
    head = sealed_lines(d, GEN200, "gen200", True)
    compared = compared_lines(d, GEN200, "gen200", True)
    return lines + head + compared + binary_lines(d, GEN200, "gen200", True)


# ---------------------------------------------------------------- the README's lines
def binary_summary() -> str | None:
    """The README's line of the binary set: held-out greedy resolve per estimator."""
    d = load(FILE)
    splits = sorted(
        {r["split_seed"] for r in (d or {"runs": []})["runs"] if r["question_set"] == "binary"}
    )
    rows = default_rows(d, "binary", splits[-1]) if splits else []
    if not rows:
        return None
    cells = ", ".join(
        f"{e.upper()} {ms([r['heldout_greedy'] for r in rs])}"
        for e, rs in by_estimator(rows).items()
    )
    return (
        f"- **Binary set** (yes/no questions; split {splits[-1]}, held-out greedy resolve %, "
        f"mean ± SEM over seeds): {cells}; a question set of this code's, not the paper's, so no "
        "figure of the paper compares with it."
    )


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
        "file": cite(FILE, d),
    }
