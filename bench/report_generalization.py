"""bench/LAB.md's section of every run bench/generalization.py scored (bench/report_results.py
builds it; RESULTS.md's headline, the sealed split only, is bench/report_headline.py's): the
paper's test of training on 1..100 and playing secrets up to 200 (section 5.1, "Game dynamics"),
per question set, each run's kept checkpoint, mean +- SEM per estimator over seeds within one
split and flags, ECHO minus each other estimator paired by seed (computed here from the rows, as
the means are), and the reference policies on the same secrets; and the row helpers the headline
shares. No number is typed here: each is read from the file.
"""

from bench import report_tables
from bench.report_tables import (
    cite,
    code_changes,
    load,
    ms,
    named,
    num,
    rendered,
    seeds_text,
)
from tools.stats import paired_by_seed

FILE = "generalization.json"
SETS = {
    "paper": "Paper question set (every family)",
    "binary": "Binary question set (yes/no questions only)",
}
FIGURES = [
    ("heldout_greedy", "held-out greedy"),
    ("heldout_sampled", "held-out sampled"),
    ("gen200_greedy", "1..200 greedy"),
    ("gen200_sampled", "1..200 sampled"),
]


def pct(x) -> str:
    return num(x, 1, 100)


def pair(row: dict, a: str, b: str) -> str:
    return f"{pct(row[a])} / {pct(row[b])}"


def correlation(row: dict, play: str) -> str:
    """The threshold-median correlation of greedy or sampled play, with the number of distinct
    (threshold, median) pairs behind it where the row counted them."""
    points = row.get(f"gen200_threshold_points_{play}")
    return num(row[f"gen200_threshold_median_corr_{play}"]) + (
        f" ({points})" if points is not None else ""
    )


def opening_cell(row: dict) -> str:
    """A row's most common opening on 1..200 (greedy) and the share of secrets opened so."""
    name = row.get("gen200_opening_greedy")
    return (
        "n/a"
        if name is None
        else f"{name.replace('_', ' ')} ({pct(row['gen200_opening_share_greedy'])})"
    )


def by_opening(runs: list[dict]) -> list[list]:
    """Rows of the runs whose opening was measured, grouped by it: the runs (estimator and seed,
    flags where any), and 1..200 greedy resolve and redundant rate, mean ± SEM over them."""
    groups = {}
    for r in runs:
        if r.get("gen200_opening_greedy") is not None:
            groups.setdefault(r["gen200_opening_greedy"], []).append(r)
    return [
        [
            name.replace("_", " "),
            len(rs),
            ", ".join(
                f"{r['estimator']} {r['seed']}"
                + ("" if flags_of(r) == "-" else f" ({flags_of(r)})")
                for r in rs
            ),
            ms([r["gen200_greedy"] for r in rs]),
            ms([r["gen200_redundant_rate_greedy"] for r in rs]),
        ]
        for name, rs in sorted(groups.items(), key=lambda g: (-len(g[1]), g[0]))
    ]


def row_changes(row: dict, name: str = FILE) -> list[str] | None:
    """The files a row of the result file `name` depends on that have changed since the code that
    measured it (the training's where the run recorded it, else the scoring's); None where that is
    not known."""
    m = row.get("measured")
    return None if not m else code_changes(name, m.get("trained") or m["scored"])


def measured_cell(row: dict, name: str = FILE) -> str:
    """When a row was measured, and how many of the files its figures depend on have changed since
    the code that measured it (`row_changes`; the file names the commit): the file gathers rows a
    few runs at a time, and its header names only the last code."""
    m = row.get("measured")
    if not m:
        return "not recorded"
    changed = row_changes(row, name)
    since = (
        "changes not known"
        if changed is None
        else f"{len(changed)} file{'s' * (len(changed) != 1)} changed since"
    )
    return f"{m['date']} ({since})"


def by_estimator(runs: list[dict]) -> dict:
    out = {}
    for r in runs:
        out.setdefault(r["estimator"], []).append(r)
    return out


def changed_text(changed: dict) -> str:
    """The settings as train.py takes them: `--lr 0.001`, and a switch alone (`--expected-info`,
    `--no-anneal-lr`)."""

    def flag(k, v):
        name = k.replace("_", "-")
        return (f"--{name}" if v else f"--no-{name}") if isinstance(v, bool) else f"--{name} {v}"

    return " ".join(f"`{flag(k, v)}`" for k, v in sorted(changed.items())) or "-"


def flags_of(row: dict) -> str:
    """The train.py settings a run changed beyond its split ("-": none). Runs of one question set
    are averaged and paired only with runs of the same flags: a comparison changes one thing."""
    return changed_text({k: v for k, v in row["changed"].items() if k != "split_seed"})


def by_split_and_flags(runs: list[dict]) -> dict:
    """{(split, flags): runs}: runs are averaged and paired only within one split and flags."""
    out = {}
    for r in sorted(runs, key=lambda r: (r["split_seed"], flags_of(r) != "-")):
        out.setdefault((r["split_seed"], flags_of(r)), []).append(r)
    return out


def split_kinds(d: dict) -> dict:
    """What each split of the paper set's rows is: the sealed test, an earlier sealed test (with
    bench/reproduce.py's summaries of its runs, where kept), or one the defaults were compared on
    (it holds flag groups)."""
    seal = load("sealed.json")
    test = seal["split_seed"] if seal else None
    paper = [r for r in d["runs"] if r["question_set"] == "paper"]
    earlier = {
        e["split_seed"]: [
            named(f"reproduce_paper_sealed_{e['split_seed']}.{n}")
            for n in ("md", "png", "json")
            if (report_tables.DIR / f"reproduce_paper_sealed_{e['split_seed']}.{n}").exists()
        ]
        for e in (seal or {}).get("earlier", [])
    }
    compared = sorted({r["split_seed"] for r in paper if flags_of(r) != "-"} - {test})
    return {"test": test, "earlier": earlier, "compared": compared}


def by_flags(runs: list[dict]) -> dict:
    """{flags: runs}, the runs without extra flags first."""
    out = {}
    for r in sorted(runs, key=lambda r: flags_of(r) != "-"):
        out.setdefault(flags_of(r), []).append(r)
    return out


def section_generalization() -> list[str]:
    d = load(FILE)
    if d is None:
        from bench.report_tables import missing

        command = "python bench/generalization.py --runs runs/reproduce/paper,runs/reproduce/binary"
        return rendered("every_run.md", sets=None, missing=missing(FILE, command)[0])
    sets = [
        question_set_figures(d, question_set, title)
        for question_set, title in SETS.items()
        if any(r["question_set"] == question_set for r in d["runs"])
    ]
    return rendered("every_run.md", sets=sets, file=cite(FILE, d), splits=split_kinds(d))


def run_cells(r: dict) -> list:
    """The cells that name a scored run: estimator, seed, split, flags, steps (kept)."""
    return [
        r["estimator"],
        r["seed"],
        r["split_seed"],
        changed_text(r["changed"]),
        f"{r['steps']} ({r['kept_step']})",
    ]


def run_row(r: dict, binary: bool) -> list:
    """One scored run's row of the every-run table."""
    row = run_cells(r) + [
        f"{r['train_seconds'] / 60:.0f} ({r['threads'] or 'all'})",
        pair(r, "heldout_greedy", "heldout_sampled"),
        pair(r, "gen200_greedy", "gen200_sampled"),
        pair(r, "gen200_redundant_rate_greedy", "gen200_redundant_rate_sampled"),
        f"{num(r.get('heldout_repeat_ratio'))} / {num(r.get('gen200_repeat_ratio'))}",
    ]
    if binary:
        row += [
            f"{correlation(r, 'greedy')} / {correlation(r, 'sampled')}",
            num(r["gen200_eliminated_fraction_greedy"]),
        ]
    return row + [opening_cell(r), measured_cell(r)]


RUN_HEADER = [
    "Estimator",
    "Seed",
    "Split",
    "Flags",
    "Steps (kept)",
    "Train min (threads)",
    "Held-out resolve %, greedy / sampled",
    "1..200 resolve %, greedy / sampled",
    "1..200 redundant %, greedy / sampled",
    "Repeat ratio, held-out / 1..200",
]
BINARY_HEADER = [
    "1..200 threshold-median corr., greedy / sampled",
    "1..200 eliminated per turn, greedy",
]


def question_set_figures(d: dict, question_set: str, title: str) -> dict:
    """One question set's tables: every run, the means per estimator, split and flags, ECHO paired
    against each other estimator, the openings and the references."""
    runs = [r for r in d["runs"] if r["question_set"] == question_set]
    binary = question_set == "binary"
    means, paired = [], []
    for (split, flags), group in by_split_and_flags(runs).items():
        means += [
            [e.upper(), split, flags, seeds_text(sorted(r["seed"] for r in rs))]
            + [ms([r[k] for r in rs]) for k, _ in FIGURES]
            + [
                ms([r["gen200_redundant_rate_greedy"] for r in rs]),
                ms([r.get("gen200_repeat_ratio") for r in rs], 2, 1.0),
            ]
            for e, rs in by_estimator(group).items()
        ]
        where = f" on split {split}" + (f", both with {flags}" if flags != "-" else "")
        for other, tests in paired_by_seed(group, "echo", [k for k, _ in FIGURES]).items():
            paired.append({"other": other, "tests": tests, "where": where})
    refs = [r for r in d["references"] if r["question_set"] == question_set]
    return {
        "title": title,
        "binary": binary,
        "header": RUN_HEADER
        + (BINARY_HEADER if binary else [])
        + ["1..200 opening, greedy (share %)", "Measured"],
        "rows": [run_row(r, binary) for r in runs],
        "means": means,
        "means_header": ["Estimator", "Split", "Flags", "Seeds"]
        + [f"Resolve, {name}" for _, name in FIGURES]
        + ["1..200 redundant, greedy", "Repeat ratio, 1..200"],
        "paired": paired,
        "figures": FIGURES,
        "openings": by_opening(runs),
        "refs": [[r["policy"], r["split_seed"], pct(r["heldout"]), pct(r["gen200"])] for r in refs],
    }
