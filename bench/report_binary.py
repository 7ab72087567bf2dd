"""The binary question set's sections of bench/LAB.md (bench/report_results.py builds it): the
kept checkpoints on their split's held-out secrets and on 1..200 (binary_final.json, by a script
that bench/generalization.py has replaced, on an older tokenizer), with what
each setting was chosen on and what that split shares with the split those choices looked at
(bench/splits.py), the defaults chosen on validation secrets (bench/binary_defaults.py), whether
the policy uses its belief (bench/bisection_behaviour.py), the capacity check
(bench/capacity_check.py) and the older 60-minute reproductions. Paper: App. C, "Bisection as a
special case of the EDP objective".
"""

import re

from bench import report_tables
from bench.report_tables import (
    DIR,
    cite,
    first_commit_with,
    is_ancestor,
    last_commit_of,
    load,
    machine_text,
    meta,
    missing,
    ms,
    named,
    names,
    nan,
    num,
    rendered,
    seeds_text,
)

FINAL = "binary_final.json"
RESOLVE = ("eval/resolve_rate", "eval/sampled_resolve_rate")  # held-out, greedy and sampled


def split_of(name: str, data) -> int:
    """The held-out split a bench run played: its command's --split-seed, else 0 (the default)."""
    found = re.search(r"--split-seed[ =](\d+)", meta(name, data).get("command", ""))
    return int(found.group(1)) if found else 0


def section_binary() -> list[str]:
    final = load("binary_final.json")
    figures = {"references": (final or {}).get("references", {}), **final_figures()}
    figures["defaults"] = defaults_figures()  # in the order the section cites them
    figures["belief"] = belief_figures()
    general = load("generalization.json")
    figures["since"] = since_split_one(general) if general else None
    figures |= capacity_figures()
    g8 = load("reproduce_binary_60min_g8.json")
    figures["older"] = g8["train_config"]["resolved"] if g8 else None
    figures["reproductions"] = [
        reproduction_figures("reproduce_binary_60min_g8.json", "ECHO"),
        reproduction_figures("reproduce_binary_60min_all.json", "ECHO, GRPO and RLOO"),
    ]
    return rendered("binary.md", **figures)


def final_figures() -> dict:
    """Kept checkpoints on their own split's held-out secrets and on 1..200 (binary_final.json)."""
    files = [(n, load(n)) for n in names("binary_final.json") + names("binary_scores_*.json")]
    if not files:
        return {"finals": []}
    seeds = sorted({r["split_seed"] for _, d in files for r in d["runs"]})
    protocol_figures = {  # the protocol's, cited before the tables' files as the section reads
        "choice": preset_choice(),
        "shared": shared_secrets(load("splits.json"), seeds),
    }
    finals = []
    for name, d in files:
        rows = [
            [
                r["estimator"],
                r["seed"],
                " ".join(f"`--{k.replace('_', '-')} {v}`" for k, v in r["changed"].items())
                or "none",
                f"{r['steps']} ({r['kept_step']})",
                r["split_seed"],
                r["universe_least"] or "-",
                f"{r['train_seconds'] / 60:.0f} ({r['threads'] or 'all'})",
                f"{num(r['heldout_greedy'], 1, 100)} / {num(r['heldout_sampled'], 1, 100)}",
                f"{num(r['n200_greedy'], 1, 100)} / {num(r['n200_sampled'], 1, 100)}",
                f"{num(r['threshold_median_corr_greedy'])} / "
                f"{num(r['threshold_median_corr_sampled'])}",
                num(r["eliminated_fraction_per_turn"]),
            ]
            for r in d["runs"]
        ]
        keys = dict.fromkeys(k for tests in d["paired"].values() for k in tests)  # the file's order
        figures = [(k, k.replace("_", " ")) for k in keys]
        paired = {"tests": d["paired"], "figures": figures}
        finals.append({"file": cite(name, d), "rows": rows, "paired": paired})
    return {"finals": finals, **protocol_figures}


def preset_choice() -> dict | None:
    """What chose the binary preset's settings: the flags bench/binary_defaults.py compared, the
    ECHO run (seed, split) whose validation secrets chose them (a seed and split train that same
    run again), and the split of the older runs whose held-out scores chose the passes of Eq. 2."""
    defaults, older = load("binary_defaults.json"), load("reproduce_binary_60min_g8.json")
    if not defaults:
        return None
    (run,) = [r for r in defaults["runs"] if r["name"] == defaults["chosen"]]
    return {
        "flags": ", ".join(f"`--{k.replace('_', '-')}`" for k in run["settings"]),
        "seed": run["seed"],
        "split": run["split_seed"],
        "older_split": older["train_config"]["resolved"].get("split_seed", 0) if older else None,
    }


def shared_secrets(splits: dict | None, seeds: list) -> dict | None:
    """What the splits scored here share with split 0's held-out secrets (splits.json)."""
    shared = [
        {"to": s["to"], "seen": seeds_text(s["heldout"]), "count": len(s["heldout"])}
        for s in (splits or {}).get("shared", [])
        if s["from"] == 0 and s["to"] in seeds
    ]
    if not shared:
        return None
    command = meta("splits.json", splits).get("command")
    file = cite("splits.json", splits)
    return {"splits": shared, "n": splits["n_heldout"], "command": command, "file": file}


def capacity_figures() -> dict:
    """bench/capacity_check.py: the model trained supervised on the Bayes policy's actions."""
    files = [(n, load(n)) for n in names("capacity_check_*.json")]
    if not files:
        command = "python bench/capacity_check.py --out bench/results/capacity_check_NAME.json"
        return {
            "capacity": None,
            "capacity_missing": missing("capacity_check_NAME.json", command)[0],
        }

    def both(r, k):
        return f"{num(r['behaviour_greedy'].get(k))} / {num(r['behaviour_sampled'].get(k))}"

    rows = [
        [
            f"{d['config']['layers']} x {d['config']['width']} ({d['parameters']:,})",
            split_of(n, d),
            f"{d['training_states']:,} states x {d['config']['epochs']} epochs, "
            f"final loss {d['epoch_losses'][-1]:.3f}",
        ]
        + [
            f"{num(d[s]['greedy'], 1, 100)} / {num(d[s]['sampled'], 1, 100)}"
            for s in ("heldout", "n200")
        ]
        + [both(d[s], "threshold_median_corr") for s in ("heldout", "n200")]
        + [both(d["heldout"], "mean_fraction_eliminated")]
        + [
            " / ".join(num(d[s].get("halving_share"), 1, 100) for s in ("heldout", "n200")),
            cite(n, d),
        ]
        for n, d in files
    ]
    machines = "; ".join(sorted({machine_text(meta(n, d).get("machine")) for n, d in files}))
    return {"capacity": rows, "capacity_machines": machines}


def reproduction_figures(name: str, title: str) -> dict:
    """One of the older 60-minute reproductions (bench/reproduce.py's file): its settings and
    each estimator's held-out resolve over seeds; the rest is in its own report beside it."""
    data = load(name)
    if data is None:
        command = "python bench/reproduce.py --question-set binary --estimators echo,grpo,rloo"
        return {"title": title, "missing": missing(name, command + " --jobs 2 --tag 60min_all")[0]}
    rows = [
        [e] + [ms([(r.get("final_eval") or {}).get(k) for r in rs]) for k in RESOLVE]
        for e, rs in data["runs"].items()
    ]
    stem = name[: -len(".json")]
    return {
        "title": title,
        "r": data["train_config"]["resolved"],
        "file": cite(name, data),
        "also": [named(f"{stem}.{x}") for x in ("md", "png") if (DIR / f"{stem}.{x}").exists()],
        "seeds": seeds_text(data["seeds"]),
        "precision": data.get("per_seed_precision"),
        "rows": rows,
    }


def belief_figures() -> dict:
    """bench/bisection_behaviour.py: whether each checkpoint asks what its belief calls for."""
    files = [(n, load(n)) for n in names("bisection_behaviour_*.json")]
    if not files:
        command = "python bench/bisection_behaviour.py --checkpoint RUN/best"
        return {"rows": None, "missing": missing("bisection_behaviour_NAME.json", command)[0]}
    share = lambda x: "n/a" if nan(x) else num(x, 0, 100) + "%"
    count = lambda x: "n/a" if x is None else str(x)
    cells = lambda r: [
        num(r["mean_fraction_eliminated"]),
        count(r["comparisons"]),
        num(r.get("threshold_median_corr")),
        share(r["zero_share"]),
    ]

    def which(name, d):  # RUN/best is the checkpoint the run kept, RUN/checkpoint its last
        c = meta(name, d).get("checkpoint") or {}
        kind = {"kept": "kept checkpoint", "last": "last checkpoint"}.get(
            c.get("played"), f"`{c.get('path', '?')}`"
        )
        return f"{kind}, step {c['step'] if c.get('step') is not None else 'not recorded'}"

    files.sort(key=lambda f: (split_of(*f), f[0]))
    rows = [
        [n[len("bisection_behaviour_") : -len(".json")], split_of(n, d), which(n, d)]
        + [" / ".join(pair) for pair in zip(cells(d["policy greedy"]), cells(d["policy sampled"]))]
        + [cite(n, d)]
        for n, d in files
    ]
    # the reference policies on each split's secrets
    for split in sorted({split_of(*f) for f in files}):
        mine = [(n, d) for n, d in files if split_of(n, d) == split]
        for k in ("bisection (Bayes)", "random"):
            same = all(cells(d[k]) == cells(mine[0][1][k]) for _, d in mine)
            where = f" (the same in every file of split {split})" if same else f" ({mine[0][0]})"
            rows.append(
                [k + where, split, "reference"] + cells(mine[0][1][k]) + [named(mine[0][0])]
            )
    pngs = [n[: -len(".json")] + ".png" for n, _ in files]
    return {
        "rows": rows,
        "machines": sorted({machine_text(meta(n, d).get("machine")) for n, d in files}),
        "dates": sorted({meta(n, d).get("date", "not recorded") for n, d in files}),
        "figures": [named(p) for p in pngs if (report_tables.DIR / p).exists()],
    }


def defaults_figures() -> dict:
    """bench/binary_defaults.py: the binary set's defaults chosen on validation secrets alone."""
    d = load("binary_defaults.json")
    if d is None:
        command = "python bench/binary_defaults.py --runs runs/defaults"
        return {"rows": None, "missing": missing("binary_defaults.json", command)[0]}
    rules = list(d["rules"])

    def setting(r):
        flags = [f"`--{k.replace('_', '-')} {v}`" for k, v in r["settings"].items()]
        return ", ".join(flags) or "none"

    rows = [
        [
            r["name"],
            setting(r),
            f"{r['steps']} ({r['kept_step']})",
            f"{r['train_seconds'] / 60:.0f}",
            num(r["kept_validation"], 1, 100),
            num(r["last_validation"], 1, 100),
        ]
        + [num(r["cross_validated"][k], 1, 100) for k in rules]
        for r in d["runs"]
    ]
    means = ["mean over runs"] + [""] * 5 + [num(d["rule_means"][k], 1, 100) for k in rules]
    cross = [f"Cross-validated: {k}" for k in rules]
    return {"d": d, "file": cite("binary_defaults.json", d), "rows": rows + [means], "cross": cross}


def since_split_one(general: dict) -> dict | None:
    """What differs between the binary set's runs of binary_final.json (by the script
    bench/generalization.py replaced) and its rows of generalization.json: the split, the script,
    and whether the built-in model's tokenizer wrote numbers digit by digit (git: the commit that
    first said so in lm/tinylm.py, against the last commit that changed binary_final.json and the
    commits that scored the rows). Only what the files and git show."""
    final = load("binary_final.json")
    rows = [r for r in general["runs"] if r["question_set"] == "binary"]
    if not final or not rows:
        return None
    echo = [r for r in final["runs"] if r["estimator"] == "echo"]
    digit, last = first_commit_with("digit by digit", "lm/tinylm.py"), last_commit_of(FINAL)
    scored = [(r.get("measured") or {}).get("scored") or {} for r in rows]
    after = digit and all(s.get("commit") and is_ancestor(digit, s["commit"]) for s in scored)
    return {
        "then": seeds_text(sorted({r["split_seed"] for r in final["runs"]})),
        "now": seeds_text(sorted({r["split_seed"] for r in rows})),
        "date": meta(FINAL, final).get("date"),
        "echo": ms([r["heldout_greedy"] for r in echo]),
        "seeds": seeds_text(sorted(r["seed"] for r in echo)),
        "before_digits": bool(
            digit and last and last != digit and is_ancestor(last, digit) and after
        ),
        "untrained": all(not (r.get("measured") or {}).get("trained") for r in rows),
    }
