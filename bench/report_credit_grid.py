"""The part of RESULTS.md's credit section on one batch's credit, turn by turn, and bench/LAB.md's
line on how long it took (bench/report_results.py builds both), from bench/credit_grid.py's file,
and that file's figure drawn again from it:
bench/report_results.py writes credit_grid.png beside its JSON, and with --check says whether the
committed figure is the one its JSON draws. No number is typed here: each is read from the file.
"""

import io
from pathlib import Path

from bench import report_tables
from bench.credit_grid import caption, save
from bench.report_tables import cite, load, meta, missing, named, num, rendered

FILE, FIGURE = "credit_grid.json", "credit_grid.png"


def head(panel: dict) -> str:
    """A panel's label up to its colon: "before RL", "after RL"."""
    return panel["label"].split(":")[0]


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


def grid_figures() -> dict:
    """The figures of the credit section's picture of one batch (templates/credit.md)."""
    d = load(FILE)
    if d is None:
        command = "python bench/credit_grid.py --policies tiny,RUN/checkpoint --out bench/results"
        return {"grid": None, "grid_missing": missing(FILE, command)[0]}
    named(FIGURE)  # the figure, drawn again from the file by figure() below
    panels = [f"{head(p)[:1].upper() + head(p)[1:]}: {panel_text(p)}" for p in d["panels"]]
    grid = {k: d[k] for k in ("secret", "seed", "config")}
    grid |= {"file": cite(FILE, d), "panels": panels, "caption": caption(d), "figure": FIGURE}
    return {"grid": grid}


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


def section_time() -> list[str]:
    """bench/LAB.md's line on how long the credit picture took to draw."""
    d = load(FILE)
    if d is None:
        return []
    figures = {"command": meta(FILE, d).get("command"), "first": head(d["panels"][0])}
    return rendered("credit_time.md", d=d, took=time_text(d), **figures)


def figure() -> tuple[Path, bytes] | None:
    """(the figure's path, the bytes its JSON draws), or None where there is no JSON."""
    d = load(FILE)
    if d is None:
        return None
    png = io.BytesIO()
    save(d, png)
    return report_tables.DIR / FIGURE, png.getvalue()
