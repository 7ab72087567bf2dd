"""The section of RESULTS.md on one batch's credit, turn by turn (bench/report_results.py builds
it), from bench/credit_grid.py's file, and that file's figure drawn again from it:
bench/report_results.py writes credit_grid.png beside its JSON, and with --check says whether the
committed figure is the one its JSON draws. No number is typed here: each is read from the file.
"""

import io
from pathlib import Path

from bench import report_tables
from bench.credit_grid import caption, save, turn_to_look_at
from bench.report_tables import load, meta, missing, named, num, provenance_line

FILE, FIGURE = "credit_grid.json", "credit_grid.png"


def head(panel: dict) -> str:
    """A panel's label up to its colon: "before RL", "after RL"."""
    return panel["label"].split(":")[0]


def signed(x: float) -> str:
    return f"{x:+.2f}"


def panel_text(p: dict) -> str:
    """A panel's policy, and what its rollouts did."""
    run = p["run"]
    if p["policy"] == "tiny":
        policy = "the warm-up policy a default `python train.py` run starts from"
    elif run is None:
        policy = f"`{p['policy']}`"
    else:
        settings = ", ".join(f"{k} {v}" for k, v in run["settings"].items()) or "the defaults"
        kept = ", the run's kept checkpoint" if run["kept"] else ""
        policy = (
            f"`{run['path']}` ({run['estimator']} run {run['run_name']}, seed {run['seed']}, step "
            f"{run['step']}{kept}; settings: {settings})"
        )
    turns = [sum(row) for row in p["active"]]
    return (
        f"{policy}; turns played per rollout {', '.join(map(str, turns))}, returns "
        f"{', '.join(num(r) for r in p['returns'])}."
    )


def section_credit_grid() -> list[str]:
    lines = ["## One batch's credit, turn by turn (Eq. 1 at work)", ""]
    d = load(FILE)
    if d is None:
        return lines + missing(
            FILE, "python bench/credit_grid.py --policies tiny,RUN/checkpoint --out bench/results"
        )
    c, first = d["config"], d["panels"][0]
    lines += [
        provenance_line(FILE, d),
        "",
        f"*Protocol:* secret {d['secret']}, G = {c['group_size']} rollouts per panel, sampled "
        f"at T = 1 with seed {d['seed']} (bench/credit_grid.py's docstring gives the game); each "
        "turn's credit from ECHO (Eq. 1), episodic GRPO and per-turn RLOO (baselines.ESTIMATORS), "
        "and A_B by branching (fidelity.bayesian_advantages; "
        f"K = {c['branches']} secrets per action, M = {c['alternatives']} alternatives), with its "
        "standard error. Nothing is trained or chosen here; one batch illustrates, fidelity's "
        "correlations above measure.",
        "",
        *[f"- {head(p)[:1].upper() + head(p)[1:]}: {panel_text(p)}" for p in d["panels"]],
        "",
        f"*Time:* the first panel ({head(first)}, all that `python bench/credit_grid.py` "
        f"draws) took {time_text(d)}; the command took {num(d['seconds'], 1)} s in all, "
        f"{num(d['cpu_seconds'], 1)} s of CPU time.",
        "",
        f"*Caption:* {caption(d)}",
        "",
        f"*Figure:* {named(FIGURE)}",
        "",
        f"![One secret's rollouts, each turn's credit and A_B](bench/results/{FIGURE})",
        "",
    ]
    return lines


def time_text(d: dict) -> str:
    """How long the warm-up panel took, on how many threads and cores, and how loaded they were."""
    first, cores = d["panels"][0], (d.get("machine") or {}).get("cpus")
    shared = (
        f", shared with other jobs (load average {num(d['load_average'], 1)})"
        if cores and d["load_average"] > cores
        else ""
    )
    return (
        f"{num(first['seconds_since_start'], 1)} s from the command's start on {d['threads']} "
        f"threads of {cores or 'unrecorded'} cores{shared}"
    )


def summary_line() -> str | None:
    """The README's line: what the figure shows, the turn its caption names, the command's time."""
    d = load(FILE)
    if d is None:
        return None
    pick = turn_to_look_at(d)
    if pick is None:
        example = "no turn of this batch shows it"
    else:
        n, g, t = pick
        p = d["panels"][n]
        example = (
            f'here "{p["question"][g][t]}", {p["candidates_before"][g][t]} -> '
            f"{p['candidates_after'][g][t]} candidates {head(p)}: GRPO {signed(p['grpo'][g][t])}, "
            f"ECHO {signed(p['echo'][g][t])}, A_B {signed(p['a_b'][g][t])} ± "
            f"{num(p['a_b_se'][g][t])}"
        )
    labels = " and ".join(head(p) for p in d["panels"])
    return (
        f"- **One secret's credit, turn by turn** (`{meta(FILE, d).get('command')}`: secret "
        f"{d['secret']}'s G = {d['config']['group_size']} rollouts {labels}, each turn's credit "
        "from ECHO, GRPO and RLOO over A_B measured by branching): GRPO gives every turn of a "
        "rollout its return's place in the group, so it blames a good question in a rollout that "
        f"ends below its group's ({example}), where Eq. 1 sets each turn against the other "
        "rollouts' at that turn. The first panel, all that `python bench/credit_grid.py` draws, "
        f"took {time_text(d)}. ![Each turn of one secret's rollouts with its credit from ECHO, "
        f"GRPO and RLOO and A_B](bench/results/{FIGURE})"
    )


def figure() -> tuple[Path, bytes] | None:
    """(the figure's path, the bytes its JSON draws), or None where there is no JSON."""
    d = load(FILE)
    if d is None:
        return None
    png = io.BytesIO()
    save(d, png)
    return report_tables.DIR / FIGURE, png.getvalue()
