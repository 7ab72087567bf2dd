"""The sections of RESULTS.md that are not the headline (bench/report_results.py builds the file):
the game and its reference policies (section 5.1), Table 1 of the paper for every policy, credit
against the true advantage A_B (section 3, Theorem 3.2 (ii); fidelity.py, bench/credit_grid.py)
and the theorems checked numerically (theory/, App. A and C). Each is a function returning its
lines; no number is typed here: each is read from a file.
"""

import re

from bench import report_credit_grid, report_tables
from bench.report_binary import split_of
from bench.report_tables import (
    REFERENCE_NAMES,
    cite,
    load,
    missing,
    named,
    nan,
    num,
    rendered,
    seed_range,
)
from tools import report

GENERALIZATION, TABLE1 = "generalization.json", "eval_paper_model_summary.json"
SEEDS_TABLE1 = "table1.json"  # Table 1 over training seeds (bench/table1.py)
# Table 1's columns as the paper heads them (TeX l. 646; tools.report.TABLE1: the column, the key,
# digits, scale), and App. C's LateCalib beside them.
TABLE1_COLUMNS = report.TABLE1 + [("LateCalib", "late_calib", 3, 1)]
REFERENCES = {
    "bayes": "the Bayes policy (bisection on the binary set)",
    "fixed_sequence": "the best fixed sequence, fitted to each universe",
    "random": "random questions",
}


# ---------------------------------------------------------------- (a) the game
def section_game() -> list[str]:
    """The game in a few sentences, and the reference policies on each split's secrets."""
    import config
    from env import GameConfig

    figures = {"game": GameConfig(), "cfg": config.TrainConfig(), "rows": None}
    d = load(GENERALIZATION)
    if d is None:
        missed = missing(GENERALIZATION, "python bench/generalization.py --runs DIR")
        return rendered("game.md", **figures, missing=missed[0]) + [""]
    seal = load("sealed.json")
    test = seal["split_seed"] if seal else None
    splits = sorted({r["split_seed"] for r in d["references"]}, key=lambda s: (s != test, s))
    keys = sorted(
        {(r["question_set"], r["policy"]) for r in d["references"]},
        key=lambda k: (k[0] != "paper", list(REFERENCES).index(k[1]) if k[1] in REFERENCES else 9),
    )
    by = {(r["question_set"], r["policy"], r["split_seed"]): r for r in d["references"]}
    figures["rows"] = [
        [REFERENCES.get(policy, policy), question_set]
        + [
            f"{num(r['heldout'], 1, 100)} / {num(r['gen200'], 1, 100)}" if r else "-"
            for r in (by.get((question_set, policy, s)) for s in splits)
        ]
        for question_set, policy in keys
    ]
    figures["header"] = ["Reference policy", "Question set"] + [
        f"Split {s}{' (the test)' if s == test else ''}: held-out / 1..200 resolve %"
        for s in splits
    ]
    return rendered("game.md", **figures, file=cite(GENERALIZATION, d)) + [""]


# ---------------------------------------------------------------- (b) Table 1
def policy_name(key: str) -> str:
    """A Table 1 row's policy; a checkpoint of bench/reproduce.py's runs: its estimator, seed."""
    found = re.fullmatch(r"checkpoint:.*/([\w+.-]+)-seed(\d+)/\w+", key)
    return f"`{found[1]}`, seed {found[2]}" if found else f"`{key}`"


def spread_text(figure: list | None, digits: int, scale: float) -> str:
    """mean ± SEM of a [mean, SEM] pair, the SEM left out where there is none (one seed)."""
    if figure is None or nan(figure[0]):
        return "n/a"
    return num(figure[0], digits, scale) + (
        "" if nan(figure[1]) else f" ± {num(figure[1], digits, scale)}"
    )


def section_table1() -> list[str]:
    """RESULTS.md's Table 1: every estimator over its training seeds, on the sealed split."""
    data = load(SEEDS_TABLE1)
    if data is None:
        return rendered("table1.md", rows=None) + [""]
    rows = []
    for r in data["rows"]:
        plays = ("greedy", "sampled") if r["kind"] == "estimator" else ("greedy",)
        name = REFERENCE_NAMES.get(r["policy"], r["policy"])
        name = f"{name} (reference)" if r["kind"] == "reference" else f"`{name}`"
        cells = [
            " / ".join(spread_text(r[play][key], d, sc) for play in plays)
            for _, key, d, sc in TABLE1_COLUMNS
        ]
        rows.append([name, seed_range(r["seeds"])] + cells)
    header = ["Policy", "Seeds"] + [name for name, *_ in TABLE1_COLUMNS]
    training = [  # bench/reproduce.py's summaries of the runs: curves, steps to 90%, seconds
        named(f"{stem}.{x}")
        for stem in ("reproduce_paper_sealed", "reproduce_paper_sealed_all")
        for x in ("json", "md", "png")
        if (report_tables.DIR / f"{stem}.{x}").exists()
    ]
    figures = {"rows": rows, "header": header, "split": data["split_seed"], "training": training}
    return rendered("table1.md", **figures, file=cite(SEEDS_TABLE1, data)) + [""]


def released_rloo(split: int) -> dict | None:
    """Table 1's greedy held-out resolve of the released RLOO (`rloo-std`) and of the estimator it
    is G/(G-1) times (`echo-zeropad`), on `split`: what the identity predicts, measured."""
    data = load(SEEDS_TABLE1)
    if data is None or data["split_seed"] != split:
        return None
    rows = {r["policy"]: r for r in data["rows"] if r["kind"] == "estimator"}
    if not {"rloo-std", "echo-zeropad"} <= rows.keys():
        return None
    return {
        "seeds": seed_range(rows["rloo-std"]["seeds"]),
        **{
            e: spread_text(rows[e]["greedy"]["resolve_rate"], 1, 100)
            for e in ("rloo-std", "echo-zeropad")
        },
    }


def section_table1_older() -> list[str]:
    """bench/LAB.md: the older Table 1, one seed's checkpoints re-evaluated."""
    data = load(TABLE1)
    if data is None:
        command = (
            "python evaluate.py --question-set paper --policies ... --out DIR, then "
            "DIR/model_summary.jsonl as a JSON list"
        )
        return rendered("table1_older.md", rows=None, missing=missing(TABLE1, command)[0])
    by_key = {r["model_key"]: r for r in (data["rows"] if isinstance(data, dict) else data)}

    rows = [
        [policy_name(k)]
        + [
            spread_text([r.get(key), r.get(key + "_sem")], d, s) if r else ""  # one row, or none
            for key, d, s in (("resolve_rate", 1, 100), ("zero_rate", 1, 100), ("quality", 3, 1))
            for r in (by_key[k], by_key.get(k + " [T=1]"))
        ]
        for k in by_key
        if not k.endswith(" [T=1]")
    ]
    split = split_of(TABLE1, data)
    screens = load("screens.json") or {"runs": []}
    figures = {
        "file": cite(TABLE1, data),
        "how": data.get("protocol", "") if isinstance(data, dict) else "",
        "split": split,
        "screened": any(r["split_seed"] == split for r in screens["runs"]),
        "rows": rows,
        "header": ["Policy"]
        + [f"{w} {play}" for w in ("Resolve", "Zero", "Qual.") for play in ("greedy", "sampled")],
    }
    return rendered("table1_older.md", **figures)


# ---------------------------------------------------------------- (e) credit against A_B
def fidelity_label(d: dict) -> str:
    policy = d["config"]["policy"]
    return "before RL" if policy == "tiny" else policy_name("checkpoint:" + policy)


def section_credit() -> list[str]:
    found = [n for n in report_tables.names("fidelity_*.json") if n != "fidelity_floor.json"]
    grid = report_credit_grid.grid_figures()
    if not found:
        missed = missing("fidelity_NAME.json", "python fidelity.py")[0]
        return rendered("credit.md", files=None, missing=missed, **grid) + [""]
    files = sorted(
        ((n, load(n)) for n in found), key=lambda f: (f[1]["config"]["policy"] != "tiny", f[0])
    )
    floors = load("fidelity_floor.json") or {"files": {}}
    policies = [
        {
            "label": fidelity_label(d),
            "file": cite(n, d),
            "turns": named(csv) if (report_tables.DIR / csv).exists() else None,
            "d": d,
            "all": {r["estimator"]: r for r in d["rows"] if r["turns"] == "all"},
            "interval": floors["files"].get(n),
            "png": png if (report_tables.DIR / png).exists() and named(png) else None,
        }
        for n, d in files
        for csv, png in [(n[: -len(".json")] + ".csv", n[: -len(".json")] + ".png")]
    ]
    floor_file = cite("fidelity_floor.json", floors) if floors["files"] else None
    batch = ("secrets", "group_size", "question_set", "branches", "alternatives")
    configs = sorted({tuple(d["config"][k] for k in batch) for _, d in files}, key=repr)
    estimators = list(dict.fromkeys(r["estimator"] for _, d in files for r in d["rows"]))
    return rendered(
        "credit.md",
        files=policies,
        floor_file=floor_file,
        configs=[dict(zip(batch, c)) for c in configs],
        estimators=estimators,
        **grid,
    ) + [""]


# ---------------------------------------------------------------- (f) the theorems
def section_theorems() -> list[str]:
    """What tests/test_theory.py checks of the paper's theory, and how to run it."""
    return rendered("theorems.md") + [""]
