"""The screens section of RESULTS.md (bench/report_results.py builds it) from bench/screen.py's
file: training changes judged on validation (another split's held-out secrets, and secrets
201..300 no test secret has), per group of runs that share a split, an estimator and flags, each
set against the default group of its split, paired by seed. No number is typed here: each is
read from the file.
"""

from bench.report_generalization import changed_text, flags_of, measured_cell, pct
from bench.report_tables import (
    load,
    missing,
    ms,
    num,
    provenance_line,
    seeds_text,
    t_test_text,
    table,
)
from env import secret_split
from stats import paired_t_test

FILE, GENERALIZATION = "screens.json", "generalization.json"
# the resolve a policy must reach on secrets up to 200 on every seed (the generalization target)
SCREEN_PASS = 0.8
FIGURES = [
    ("heldout_greedy", "Held-out resolve"),
    ("probe_greedy", "Probe resolve"),
    ("probe_redundant_rate_greedy", "Probe redundant"),
    ("probe_invalid_rate_greedy", "Probe invalid"),
]


def groups(runs: list[dict]) -> dict:
    """{(split, estimator, flags): runs}, per split ECHO at the defaults first."""
    out = {}
    for r in sorted(
        runs,
        key=lambda r: (
            r["split_seed"],
            r["estimator"] != "echo" or flags_of(r) != "-",
            r["estimator"],
            flags_of(r),
        ),
    ):
        out.setdefault((r["split_seed"], r["estimator"], flags_of(r)), []).append(r)
    return out


def against(runs: list[dict], base: list[dict], key: str) -> str:
    """A group minus the default group on one figure, paired over the seeds both have."""
    by = {r["seed"]: r[key] for r in base}
    seeds = sorted(r["seed"] for r in runs if r["seed"] in by)
    if len(seeds) < 2 or runs is base:
        return "-"
    mine = {r["seed"]: r[key] for r in runs}
    a, b = [mine[s] for s in seeds], [by[s] for s in seeds]
    t, p = paired_t_test(a, b)
    return (
        f"{num(sum(x - y for x, y in zip(a, b)) / len(seeds), 1, 100)} ({t_test_text(t, p)}; "
        f"seeds {seeds_text(seeds)})"
    )


def overlap_text(screened: list[dict]) -> str:
    """Which held-out secrets of the screens' splits are also held out by a split the
    generalization file reports on (env.secret_split): those would be choosing and reporting."""
    reported = sorted({r["split_seed"] for r in (load(GENERALIZATION) or {"runs": []})["runs"]})
    parts = []
    for mine in sorted({r["split_seed"] for r in screened}):
        for theirs in reported:
            shared = sorted(set(secret_split(seed=mine)[1]) & set(secret_split(seed=theirs)[1]))
            parts.append(
                f"split {mine}'s held-out secrets that split {theirs}'s reported runs also hold "
                "out: " + (seeds_text(shared) if shared else "none")
            )
    return "; ".join(parts) + "." if parts else ""


def section_screens() -> list[str]:
    lines = ["## Training changes screened on validation", ""]
    d = load(FILE)
    if d is None:
        return lines + missing(FILE, "python bench/screen.py --runs runs/screen")
    lo, hi = d["probe"]["secrets"]
    lines += [
        provenance_line(FILE, d),
        "",
        "*Protocol:* each run trains on its split's training secrets of 1..100 and is judged by "
        "its kept checkpoint, greedy, on its split's held-out secrets "
        f"(Held-out) and on the secrets {lo}..{hi} in the universe 1..{d['probe']['n_max']} "
        "(Probe), numbers above any the generalization test plays; "
        f"{overlap_text(d['runs'])} Redundant: the share of probe turns that ask an arm what it "
        "was already asked; Invalid: the share with no readable action. "
        f"Pass: runs whose probe resolve is at least {num(SCREEN_PASS, 0, 100)}%. "
        "Against the default: the group minus ECHO at the defaults on the same split, in points, "
        "paired by seed. A group is its split, estimator and the train.py settings it changed "
        "from the defaults.",
        "",
    ]
    runs = [r for r in d["runs"] if r["question_set"] == "paper"]
    grouped = groups(runs)
    rows = []
    for (split, estimator, flags), rs in grouped.items():
        base = grouped.get((split, "echo", "-"), [])
        rows.append(
            [
                split,
                estimator.upper(),
                flags,
                seeds_text(sorted(r["seed"] for r in rs)),
                f"{sum(r['probe_greedy'] >= SCREEN_PASS for r in rs)} of {len(rs)}",
            ]
            + [ms([r.get(k) for r in rs]) for k, _ in FIGURES]
            + [against(rs, base, k) for k, _ in FIGURES[:2]]
        )
    lines += ["Mean ± SEM over seeds (%), paper set:", ""]
    lines += table(
        ["Split", "Estimator", "Flags", "Seeds", "Pass"]
        + [name for _, name in FIGURES]
        + ["Held-out against the default", "Probe against the default"],
        rows,
    )
    lines += ["Per run:", ""]
    lines += table(
        [
            "Estimator",
            "Seed",
            "Split",
            "Flags",
            "Steps (kept)",
            "Held-out %",
            "Probe %",
            "Probe redundant %",
            "Probe invalid %",
            "Probe opening",
            "Measured",
        ],
        [
            [
                r["estimator"],
                r["seed"],
                r["split_seed"],
                changed_text(r["changed"]),
                f"{r['steps']} ({r['kept_step']})",
                pct(r["heldout_greedy"]),
                pct(r["probe_greedy"]),
                pct(r["probe_redundant_rate_greedy"]),
                pct(r.get("probe_invalid_rate_greedy")),
                r["probe_opening_greedy"].replace("_", " ") or "n/a",
                measured_cell(r, FILE),
            ]
            for r in runs
        ],
    )
    return lines
