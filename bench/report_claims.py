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
    brief_line,
    code_changes,
    footnote,
    load,
    marked,
    meta,
    missing,
    named,
    nan,
    num,
    source_line,
    table,
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

    game, cfg = GameConfig(), config.TrainConfig()
    lines = [
        "## The game and its references",
        "",
        "The Clue Selector Game (§5.1): a secret drawn from 1..N, found in at most "
        f"T = {game.max_turns} turns by routing questions to {game.n_arms} arms whose oracle "
        "answers truthfully; the belief b_t is the set of candidates still possible. Training "
        f"plays N = {cfg.n_max} less {cfg.n_heldout} held-out secrets, drawn by the split "
        "(`--split-seed`); the paper's generalization test plays every secret of 1..200. The "
        "reference policies (reference.py, greedy, nothing trained) give the scale: the Bayes "
        "policy asks what its belief needs, the best fixed sequence is one sequence per universe "
        "whatever the answers.",
        "",
    ]
    d = load(GENERALIZATION)
    if d is None:
        return lines + missing(GENERALIZATION, "python bench/generalization.py --runs DIR")
    seal = load("sealed.json")
    test = seal["split_seed"] if seal else None
    splits = sorted({r["split_seed"] for r in d["references"]}, key=lambda s: (s != test, s))
    keys = sorted(
        {(r["question_set"], r["policy"]) for r in d["references"]},
        key=lambda k: (k[0] != "paper", list(REFERENCES).index(k[1]) if k[1] in REFERENCES else 9),
    )
    by = {(r["question_set"], r["policy"], r["split_seed"]): r for r in d["references"]}
    changed = code_changes(GENERALIZATION, d)
    rows = [
        [marked(REFERENCES.get(policy, policy), changed), question_set]
        + [
            f"{num(r['heldout'], 1, 100)} / {num(r['gen200'], 1, 100)}" if r else "-"
            for r in (by.get((question_set, policy, s)) for s in splits)
        ]
        for question_set, policy in keys
    ]
    heads = [
        f"Split {s}{' (the test)' if s == test else ''}: held-out / 1..200 resolve %"
        for s in splits
    ]
    lines += [
        f"*File:* `bench/results/{GENERALIZATION}` (its references, by "
        f"`{meta(GENERALIZATION, d).get('command')}`). *Protocol:* each policy plays the split's "
        "held-out secrets of 1..100 and every secret of 1..200 once, greedy.",
        "",
    ]
    return (
        lines
        + table(["Reference policy", "Question set"] + heads, rows)
        + footnote({f"`{GENERALIZATION}` (the references)": changed})
    )


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
    lines = ["## Table 1 of the paper, over training seeds", ""]
    data = load(SEEDS_TABLE1)
    if data is None:
        return lines + [
            "Not yet run: every estimator's runs of the sealed split are training "
            "(`bench/table1.py`, on the runs of `bench/reproduce.py`; its docstring says how). "
            "An older table, of one seed's checkpoint re-played, is in bench/LAB.md.",
            "",
        ]
    changed = code_changes(SEEDS_TABLE1, data)
    rows = []
    for r in data["rows"]:
        plays = ("greedy", "sampled") if r["kind"] == "estimator" else ("greedy",)
        name = REFERENCE_NAMES.get(r["policy"], r["policy"])
        name = f"{name} (reference)" if r["kind"] == "reference" else f"`{name}`"
        cells = [
            " / ".join(spread_text(r[play][key], d, sc) for play in plays)
            for _, key, d, sc in TABLE1_COLUMNS
        ]
        seeds = f"{r['seeds'][0]}-{r['seeds'][-1]}" if len(r["seeds"]) > 1 else str(r["seeds"][0])
        rows.append([marked(name, changed), seeds] + cells)
    lines += [
        source_line(SEEDS_TABLE1, data),
        "",
        f"*Protocol:* the runs of split {data['split_seed']} (the sealed test; "
        "`bench/reproduce.py`, the default command), each training seed's kept checkpoint "
        "played once on the split's held-out secrets, greedy / sampled at T = 1; mean ± SEM "
        "over training seeds (the references: over plays, run r at seed r). Resolve, Zero and "
        "Reason% in %, the others rates; metrics.py defines each.",
        "",
    ]
    header = ["Policy", "Seeds"] + [name for name, *_ in TABLE1_COLUMNS]
    return lines + table(header, rows) + footnote({f"`{SEEDS_TABLE1}`": changed})


def section_table1_older() -> list[str]:
    """bench/LAB.md: the older Table 1, one seed's checkpoints re-evaluated."""
    lines = ["## An older Table 1: one seed's checkpoints, re-played (older code)", ""]
    data = load(TABLE1)
    if data is None:
        return lines + missing(
            TABLE1,
            "python evaluate.py --question-set paper --policies ... --out DIR, then "
            "DIR/model_summary.jsonl as a JSON list",
        )
    by_key = {r["model_key"]: r for r in (data["rows"] if isinstance(data, dict) else data)}
    changed = code_changes(TABLE1, data)

    def pair(r, key, digits, scale):  # mean +- SEM over runs; blank where there is no such row
        if r is None:
            return ""
        sem = r.get(key + "_sem")
        spread = "" if nan(r.get(key)) or nan(sem) else f" ± {num(sem, digits, scale)}"
        return num(r.get(key), digits, scale) + spread

    rows = [
        [marked(policy_name(k), changed)]
        + [
            pair(r, key, d, s)
            for key, d, s in (("resolve_rate", 1, 100), ("zero_rate", 1, 100), ("quality", 3, 1))
            for r in (by_key[k], by_key.get(k + " [T=1]"))
        ]
        for k in by_key
        if not k.endswith(" [T=1]")
    ]
    how = data.get("protocol", "") if isinstance(data, dict) else ""
    split = split_of(TABLE1, data)
    screens = load("screens.json") or {"runs": []}
    validation = (
        f" Split {split}'s held-out secrets are also the screens' validation secrets "
        "(bench/LAB.md), so this table is no test."
        if any(r["split_seed"] == split for r in screens["runs"])
        else ""
    )
    lines += [
        source_line(TABLE1, data)
        + f" The same evaluation's tables.txt: {named('eval_paper.txt')}.",
        "",
        f"*Protocol:* {how}, on split {split}; policies are played as they are, nothing is chosen "
        f"here; mean ± SEM over runs, Resolve and Zero in %.{validation} Each trained policy is "
        "one training seed's checkpoint, and its runs are plays of it: greedy plays of one "
        "checkpoint are the same every time, so a greedy row's spread says nothing of "
        "training's (RESULTS.md's Table 1 is over training seeds).",
        "",
    ]
    header = ["Policy"] + [
        f"{what} {play}" for what in ("Resolve", "Zero", "Qual.") for play in ("greedy", "sampled")
    ]
    return lines + table(header, rows) + footnote({f"`{TABLE1}`": changed})


# ---------------------------------------------------------------- (e) credit against A_B
def fidelity_label(d: dict) -> str:
    policy = d["config"]["policy"]
    return "before RL" if policy == "tiny" else policy_name("checkpoint:" + policy)


def turns_text(name: str) -> str:
    """The drawn turns a fidelity file was computed from, where they are beside it."""
    csv = name[: -len(".json")] + ".csv"
    return f", its turns {named(csv)}" if (report_tables.DIR / csv).exists() else ""


def floor_text(d: dict, interval: dict | None) -> str:
    """The floor of a fidelity file, with its bootstrap interval where bench/fidelity_floor.py
    gave one."""
    point = num(d["floors"].get("all"))
    if interval is None:
        return point
    return f"{point} [{num(interval['floor_lo'])}, {num(interval['floor_hi'])}]"


def section_credit() -> list[str]:
    lines = ["## Credit against the true advantage", ""]
    found = [n for n in report_tables.names("fidelity_*.json") if n != "fidelity_floor.json"]
    if not found:
        return lines + missing("fidelity_NAME.json", "python fidelity.py")
    files = sorted(
        ((n, load(n)) for n in found), key=lambda f: (f[1]["config"]["policy"] != "tiny", f[0])
    )
    floors = load("fidelity_floor.json") or {"files": {}}
    changes = {f"`{n}`": code_changes(n, d) for n, d in files}
    sources = [f"{fidelity_label(d)}, {brief_line(n, d)}{turns_text(n)}" for n, d in files]
    if floors["files"]:
        sources.append(f"the floor's interval, {brief_line('fidelity_floor.json', floors)}")
        changes["`fidelity_floor.json`"] = code_changes("fidelity_floor.json", floors)
    lines += [f"*Files:* {'; '.join(sources)}."]
    batches = sorted(
        {
            f"{c['secrets']} secrets x {c['group_size']} rollouts on the {c['question_set']} set; "
            f"on turns drawn from it, A_B(h_t, a_t) is measured by branching (K = {c['branches']} "
            f"secrets drawn from b_t per action, M = {c['alternatives']} alternatives; "
            "fidelity.py)"
            for c in (d["config"] for _, d in files)
        }
    )
    lines += [
        "",
        f"*Protocol:* per policy one batch of {' or '.join(batches)} and each estimator's credit "
        "for "
        "the same turns is set against it: Pearson r [bootstrap 95% over the turns]. The last "
        "row is Theorem 3.2 (ii)'s floor for any credit that is a function of the return alone, "
        "E[Var(A_B | R)] / E[A_B^2], estimated on the same turns (within-return-bin variance less "
        "the branching noise) [bootstrap 95% over the return bins]: a point estimate, not a "
        "bound. Nothing is trained or chosen here.",
        "",
    ]
    overall = lambda d, e: next(  # noqa: E731
        (r for r in d["rows"] if r["estimator"] == e and r["turns"] == "all"), None
    )

    def cell(r):
        return (
            "n/a"
            if r is None
            else f"{num(r['pearson'])} [{num(r['pearson_lo'])}, {num(r['pearson_hi'])}]"
        )

    estimators = dict.fromkeys(r["estimator"] for _, d in files for r in d["rows"])
    rows = [[e] + [cell(overall(d, e)) for _, d in files] for e in estimators]
    rows.append(
        ["floor of any return-only credit"]
        + [floor_text(d, floors["files"].get(n)) for n, d in files]
    )
    header = ["Estimator"] + [
        marked(
            f"{fidelity_label(d)}: {next((r['n'] for r in d['rows'] if r['turns'] == 'all'), '?')}"
            f" turns, RMS A_B {num(d['a_b_rms'])}, branching SE {num(d['noise_se_mean'])}",
            code_changes(n, d),
        )
        for n, d in files
    ]
    lines += table(header, rows)
    images = [
        f"![{fidelity_label(d)}: each turn's credit against A_B](bench/results/{png})"
        for n, d in files
        for png in [n[: -len(".json")] + ".png"]
        if (report_tables.DIR / png).exists() and named(png)
    ]
    lines += [" ".join(images), ""] if images else []
    grid, grid_changes = report_credit_grid.section_credit_grid()
    return lines + grid + footnote({**changes, **grid_changes})


# ---------------------------------------------------------------- (f) the theorems
THEOREMS = [
    (
        'Theorem 3.2 (i), "Performance gap" (App. A, Theorem A.2)',
        "theory/bit_reveal.py",
        "on the bit-reveal EDP E_d, enumerated exactly: the best deterministic belief-agnostic "
        "policy succeeds with probability 2^(1-d) exactly, the proof's adaptive policy on all "
        "2^d strings; stochastic belief-agnostic policies match mu_0(0) 2^(1-d) (exact, and "
        "within Wilson intervals by Monte Carlo); a REINFORCE learner that sees b_t learns to "
        "succeed, one that sees only t stays under the bound",
    ),
    (
        'Theorem 3.2 (ii), "Estimator insufficiency"; Theorem A.3 and Corollary A.4',
        "theory/return_aliasing.py",
        "on a six-number game enumerated in exact fractions: A_B from the recursion equals A_B "
        "from raw histories; the best function of R is E[A_B | R], its error E[Var(A_B | R)], "
        "which is strictly positive at turn 1; Pi_R is an orthogonal projection with spectrum "
        "{0, 1} and rank the number of return levels; functions of r_t (and ECHO's normalised "
        "r_t against GRPO's normalised R) err less there; Monte Carlo converges to the exact "
        "errors",
    ),
    (
        "the same, through the game's code on a small game",
        "theory/csg_aliasing.py",
        "the checks above through env.py, the rule oracle and App. C's reward, on a game small "
        "enough to enumerate (the test: secrets 1..6, T = 2, a fixed menu of four questions): at "
        "every turn the least-squares error over functions of R equals E[Var(A_B | R)] > 0",
    ),
    (
        'App. C, "Bisection as a special case of the EDP objective"',
        "theory/bisection.py",
        "E[u] = 2p(1-p) exactly for yes/no questions played through the game, 1 - sum_k p_k^2 "
        "for value questions; the best question of the binary bank reaches the most even split; "
        "the Bayes policy resolves every secret in at most ceil(log2 N) turns, on average as the "
        "best binary search tree",
    ),
]


def section_theorems() -> list[str]:
    """What tests/test_theory.py checks of the paper's theory, and how to run it: no results file
    holds these numbers, so none is given here."""
    return [
        "## The theorems, checked numerically",
        "",
        "No results file holds these checks: each is a test that computes its numbers (exact "
        "fractions or integer counts where the statement is exact, Wilson intervals where it is "
        "Monte Carlo) and compares them with the statement. `python -m pytest "
        "tests/test_theory.py` runs them all; `python -m theory.NAME` prints a module's tables "
        "(to theory/out/, not kept); the floor of Theorem 3.2 (ii) measured on trained policies "
        "is in the credit section above.",
        "",
    ] + table(
        ["Statement", "Module", "What the tests check"],
        [[claim, f"`{module}`", checks] for claim, module, checks in THEOREMS],
    )
