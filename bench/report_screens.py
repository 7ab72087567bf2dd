"""The screens (bench/report_results.py builds the files) from bench/screen.py's file:
bench/LAB.md's section of training changes judged on validation (another split's held-out
secrets, and secrets 201..300 no test secret has), per group of runs that share a split, an
estimator and flags, each set against the default group of its split, paired by seed; and
RESULTS.md's table of the paper set's defaults that depart from the paper, each with the
validation group that chose it, or the test split it was compared on where the file has none. No
number is typed here: each is read from the file.
"""

from bench import paper_figures
from bench.report_generalization import changed_text, flags_of, measured_cell, pct, run_cells
from bench.report_tables import (
    cite,
    load,
    missing,
    ms,
    num,
    rendered,
    seeds_text,
    t_test_text,
)
from env import secret_split
from tools.stats import paired_t_test

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


def paired(runs: list[dict], base: list[dict], key: str) -> tuple | None:
    """(mean difference, t, p, seeds) of a group minus the default group on one figure, paired
    over the seeds both have; None with fewer than 2 such seeds."""
    by = {r["seed"]: r[key] for r in base}
    seeds = sorted(r["seed"] for r in runs if r["seed"] in by)
    if len(seeds) < 2 or runs is base:
        return None
    mine = {r["seed"]: r[key] for r in runs}
    a, b = [mine[s] for s in seeds], [by[s] for s in seeds]
    return (sum(x - y for x, y in zip(a, b)) / len(seeds), *paired_t_test(a, b), seeds)


def against(runs: list[dict], base: list[dict], key: str) -> str:
    """A group minus the default group on one figure, paired over the seeds both have."""
    found = paired(runs, base, key)
    if found is None:
        return "-"
    diff, t, p, seeds = found
    return f"{num(diff, 1, 100)} ({t_test_text(t, p)}; seeds {seeds_text(seeds)})"


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
    d = load(FILE)
    if d is None:
        missed = missing(FILE, "python bench/screen.py --runs runs/screen")[0]
        return rendered("screens.md", groups=None, missing=missed)
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
    per_run = [
        run_cells(r)
        + [
            pct(r["heldout_greedy"]),
            pct(r["probe_greedy"]),
            pct(r["probe_redundant_rate_greedy"]),
            pct(r.get("probe_invalid_rate_greedy")),
            r["probe_opening_greedy"].replace("_", " ") or "n/a",
            measured_cell(r, FILE),
        ]
        for r in runs
    ]
    figures = {
        "file": cite(FILE, d),
        "probe": d["probe"],
        "overlap": overlap_text(d["runs"]),
        "passing": num(SCREEN_PASS, 0, 100),
        "groups": rows,
        "group_header": ["Split", "Estimator", "Flags", "Seeds", "Pass"]
        + [name for _, name in FIGURES]
        + ["Held-out against the default", "Probe against the default"],
        "runs": per_run,
    }
    return rendered("screens.md", **figures)


# ---------------------------------------------------------------- what chose the defaults
# Each default of the paper set that departs from the paper: (train.py's field, what it is, the
# paper's value: the TeX's, else its released code's as config.py's table gives it, the value it
# was compared with (None: compared with nothing)). The defaults themselves are read from config.py.
DEPARTURES = [  # (field, meaning, the value it was compared with); the paper's: paper_figures
    ("prefix_turns", "the most random questions an episode opens with", 0),
    ("refusal_rate", "chance a family an arm owns goes unanswered", 0),
    ("candidate_format", "how the prompt writes the candidates", "list"),
    ("secrets_per_step", "B, secrets per step", 8),
    ("steps", "RL steps", None),
    ("ppo_epochs", "passes of Eq. 2 over each batch", 2),
    ("top_p", "top-p of the rollouts", 1.0),
]


def screened(runs: list[dict], field: str, value) -> dict:
    """{split: ECHO's runs that changed `field` to `value` and nothing else} of the screens."""
    out = {}
    for r in runs:
        others = {k: v for k, v in r["changed"].items() if k != "split_seed"}
        if r["estimator"] == "echo" and others == {field: value}:
            out.setdefault(r["split_seed"], []).append(r)
    return out


def passed(runs: list[dict]) -> str:
    """How many runs reach the pass mark on the probe."""
    return f"{sum(r['probe_greedy'] >= SCREEN_PASS for r in runs)} of {len(runs)}"


def section_defaults_chosen(compared: list[int]) -> list[str]:
    """One table (templates/defaults_chosen.md): each default of the paper set that departs from
    the paper, the paper's value, the flag that plays the value it was compared with, and what
    chose it: its validation groups in screens.json, each set against ECHO at the defaults of the
    same split (paired by seed), else the test splits `compared` on."""
    import config

    today, d = vars(config.TrainConfig()), load(FILE)
    runs = [r for r in (d or {"runs": []})["runs"] if r["question_set"] == "paper"]
    rows = []
    for field, meaning, value in DEPARTURES:
        screens = []
        for split, rs in sorted(screened(runs, field, value).items()):
            base = groups(runs).get((split, "echo", "-"), [])
            screens.append(
                {
                    "split": split,
                    "passed": passed(rs),
                    "base_passed": passed(base),
                    "probe": ms([r["probe_greedy"] for r in rs]),
                    "base_probe": ms([r["probe_greedy"] for r in base]),
                    "found": paired(rs, base, "probe_greedy"),
                }
            )
        rows.append(
            {
                "field": field,
                "meaning": meaning,
                "default": today[field],
                "paper": paper_figures.SETTINGS[field].cell(),
                "compared_with": "-" if value is None else changed_text({field: value}),
                "budget": value is None,  # compared with nothing
                "screens": screens,
            }
        )
    lo, hi = d["probe"]["secrets"] if d else ("?", "?")
    lines = rendered(
        "defaults_chosen.md",
        rows=rows,
        compared=compared,
        file=FILE,
        lo=lo,
        hi=hi,
        passing=num(SCREEN_PASS, 0, 100),
    )
    if d:
        cite(FILE, d)
    return lines
