"""SmolLM2-135M-Instruct, the pretrained model this code has trained: on CPU cores with ECHO
(bench/smollm2_learning.py: one seed, no control; bench/LAB.md) and, where its file exists, on
one GPU by ECHO and GRPO from one start (bench/smollm2_gpu.py; RESULTS.md's speed section). No
number is typed here: each is read from a file.
"""

import itertools

from bench import report_tables
from bench.report_tables import (
    cite,
    load,
    meta,
    missing,
    named,
    num,
    rendered,
)

GPU = "smollm2_gpu.json"
STUDY = "smollm2_study.json"
STEP = "smollm2_step.json"
PHASES = ("rollout", "scoring", "update", "evaluation", "warm-up", "warm-up probe")
# What the two runs of bench/smollm2_step.py may differ in, as its rows name them.
STEP_SETTINGS = (
    "precision",
    "candidate_format",
    "prompt_layout",
    "micro_batch",
    "micro_tokens",
    "max_new_tokens",
    "warmup_episodes",
    "eval_rows",
)


def phase_cells(run: dict | None, phase: str) -> list[str]:
    """A phase's seconds and peak resident GB in one run of the bench ("-" where it has none)."""
    figures = (run or {}).get("phases", {}).get(phase)
    if not figures:
        return ["-", "-"]
    peak = figures.get("peak_gb")
    return [f"{figures['seconds']:g}", "-" if peak is None else f"{peak:g}"]


# Settings added after a run of the bench was made: that code played as these values do (App. B's
# prompt as one user message; micro-batches bounded in rows only; the sampled evaluation's rows
# all at once).
BEFORE_THE_SETTING = {"prompt_layout": "paper", "micro_tokens": 0, "eval_rows": 0}


def step_settings(run: dict) -> str:
    """The settings of one run of the bench that it may differ from the other in."""
    played = {**BEFORE_THE_SETTING, **run["config"]}
    return ", ".join(f"{k} {played[k]}" for k in STEP_SETTINGS)


def section_smollm2_cpu_step(name: str = STEP, title: str = "") -> list[str]:
    """bench/LAB.md: one RL step of SmolLM2 on a CPU, by phase, before and after (the file `name`
    of bench/smollm2_step.py; `title`: what its heading adds)."""
    data = load(name)
    if data is None:
        return rendered(
            "smollm2_step.md", rows=None, title=title, missing=missing(name, STEP_COMMAND)[0]
        )
    before = data.get("before")
    runs = [("before", before), ("now", data)] if before else [("now", data)]
    measured = [p for p in PHASES if any(p in r.get("phases", {}) for _, r in runs)]
    rows = [[phase] + [c for _, r in runs for c in phase_cells(r, phase)] for phase in measured]
    rows.append(
        ["step (rollout + scoring + update)"]
        + [c for _, r in runs for c in (f"{r['step_seconds']:g}", "")]
    )
    figures = {
        "title": title,
        "file": cite(name, data),
        "config": data["config"],
        "runs": [
            f"{label}: {r['threads']} threads, flags `{r['train_flags'] or '(none)'}` "
            f"({step_settings(r)}), {r['turns']} turns, mean prompt "
            f"{r['mean_prompt_tokens']:g} tokens"
            + (f", the evaluation on {r['eval_secrets']} secrets" if "eval_secrets" in r else "")
            for label, r in runs
        ],
        "rows": rows,
        "header": ["Phase"] + [f"{label}: {u}" for label, _ in runs for u in ("s", "peak GiB")],
    }
    return rendered("smollm2_step.md", **figures)


STEP_COMMAND = "python bench/smollm2_step.py"
STEP_FP32 = "smollm2_step_fp32.json"


def section_smollm2_cpu_step_fp32() -> list[str]:
    """bench/LAB.md: the same step where the CPU does not multiply bf16, in float32."""
    return section_smollm2_cpu_step(STEP_FP32, ", float32 on a CPU without bf16")


FLOOR = "smollm2_step_floor.json"
FLOOR_COMMAND = "python bench/smollm2_step.py --floor --out bench/results/" + FLOOR
STEP_TARGET_S = 60  # the step time aimed at: a minute for B = 4 x G = 4 on 2 cores


def section_smollm2_cpu_step_floor() -> list[str]:
    """bench/LAB.md: the step's arithmetic beside what these cores can do (bench/smollm2_step.py
    --floor): per phase its seconds, its matrix products' GFLOP and the least time they take at the
    fastest rate the model's products ran at here."""
    data = load(FLOOR)
    if data is None:
        return rendered(
            "smollm2_step_floor.md", floor=None, missing=missing(FLOOR, FLOOR_COMMAND)[0]
        )
    floor, timed = data["floor"], data["phases"]
    rates = floor["product_rates"]
    best = max(rates, key=rates.get)
    spent = {
        phase: (timed[phase]["seconds"], sum(ops.values())) for phase, ops in floor["gflop"].items()
    }
    gflop = sum(g for _, g in spent.values())
    spent["step"] = (data["step_seconds"], gflop)
    rows = [
        [phase, f"{seconds:g}", f"{g:.0f}", f"{g / seconds:.0f}", f"{g / rates[best]:.0f}"]
        for phase, (seconds, g) in spent.items()
    ]
    figures = {
        "file": cite(FLOOR, data),
        "d": data,
        "floor": floor,
        "machine": report_tables.machine_text(data["machine"]),
        "rows": rows,
        "rates": [[shape, f"{rate:g}"] for shape, rate in rates.items()],
        "best": best,
        "best_rate": rates[best],
        "least": gflop / rates[best],
        "target": STEP_TARGET_S,
        "needed": gflop / STEP_TARGET_S,
    }
    return rendered("smollm2_step_floor.md", **figures)


PRECISION = "cpu_precision.json"
KERNELS = "bf16_kernels.json"
FIRST_RUN = "first_run_smollm2.json"
PIECES = {"warmup_batch_seconds": "the warm-up's batch", "decode_seconds": "greedy decode"}


# Warm-up settings added after a first run was made: that code ran as these values do (the probe's
# states all at once).
WARMUP_BEFORE_THE_SETTING = {"probe_rows": 0}
# Warm-up settings train.py sets from its own (warmup_config): a difference shows as train.py's.
WARMUP_FROM_TRAIN = {"batch_tokens", "batch_size", "epochs", "episodes", "lr", "n_max"}


def first_run_differences(before: dict, now: dict) -> list[str]:
    """The settings two runs of bench/first_run.py differ in: train.py's (its run directory aside)
    and the warm-up's own."""
    old, new = before["train_config"], now["train_config"]
    keys = sorted((set(old) | set(new)) - {"out"})
    differences = [f"{k} {old.get(k)} (now {new.get(k)})" for k in keys if old.get(k) != new.get(k)]
    old = {**WARMUP_BEFORE_THE_SETTING, **before["warmup"]["warmup"]}
    new = now["warmup"]["warmup"]
    keys = sorted((set(old) | set(new)) - WARMUP_FROM_TRAIN)
    return differences + [
        f"the warm-up's {k} {old.get(k)} (now {new.get(k)})"
        for k in keys
        if old.get(k) != new.get(k)
    ]


def seconds_figures(name: str, d: dict) -> dict:
    """A file of bench/cpu_precision.py's two pieces timed per precision, for the template: its
    citation, repeats, machine and a row per piece (fp32 s, bf16 s, their ratio)."""
    p = d["precisions"]
    return {
        "d": d,
        "file": cite(name, d),
        "repeats": d["command"].partition("--repeats ")[2].split(" ")[0] or "2",
        "machine": report_tables.machine_text(d["machine"]),
        "rows": [
            [piece, f"{p['fp32'][k]:g}", f"{p['bf16'][k]:g}", f"{d['bf16_over_fp32'][k]:g}"]
            for k, piece in PIECES.items()
        ],
    }


# bench/bf16_kernels.py's gaps to torch's bf16 kernels, in the table's order
GAPS = ("logprob_gap_max", "logprob_gap_mean", "gradient_relative_gap")


def section_smollm2_without_bf16() -> list[str]:
    """bench/LAB.md: SmolLM2 on a CPU that does not multiply bf16: each precision's seconds for the
    same work, bf16 in float32 kernels beside torch's bf16 kernels, and the README's command run to
    its end from an empty cache."""
    figures = {"precision": None, "kernels": None, "first": None}
    precision, kernels, first = load(PRECISION), load(KERNELS), load(FIRST_RUN)
    if precision is not None:
        figures["precision"] = seconds_figures(PRECISION, precision)
    else:
        figures["precision_missing"] = missing(PRECISION, "python bench/cpu_precision.py")[0]
    if kernels is not None:
        gaps = kernels["agreement"]
        figures["kernels"] = seconds_figures(KERNELS, kernels) | {
            "gaps": [[way, *(f"{gaps[way][k]:g}" for k in GAPS)] for way in gaps if way != "tokens"]
        }
    else:
        figures["kernels_missing"] = missing(KERNELS, "python bench/bf16_kernels.py")[0]
    if first is not None:
        figures["first"] = {
            "d": first,
            "file": cite(FIRST_RUN, first),
            "machine": report_tables.machine_text(first["machine"]),
            "minutes": f"{first['wall_seconds'] / 60:.1f}",
        }
        if first.get("before"):
            figures["first"]["before"] = {
                "d": first["before"],
                "minutes": f"{first['before']['wall_seconds'] / 60:.1f}",
                "machine": "the same machine"
                if first["before"]["machine"] == first["machine"]
                else report_tables.machine_text(first["before"]["machine"]),
                "differences": first_run_differences(first["before"], first),
            }
    else:
        figures["first_missing"] = missing(FIRST_RUN, "python bench/first_run.py")[0]
    return rendered("smollm2_no_bf16.md", **figures)


def smollm2_flags(m: dict, data: dict) -> dict:
    """The train.py flags bench/smollm2_learning.py passed ({"--group-size": "4", ...}): the file's
    own, else those provenance.json traced from the script at the file's commit."""
    flags = data.get("train_flags") or m.get("train_flags") or []
    return dict(zip(flags[::2], flags[1::2])) if all(f.startswith("--") for f in flags[::2]) else {}


def smollm2_figures(data: dict) -> dict:
    """The first and last k steps' means (k = up to 4, at most half the steps), and the per-step
    range of the reward."""
    steps = data["steps"]
    k = min(4, len(steps) // 2)
    mean = lambda rows, key: sum(r[key] for r in rows) / k  # noqa: E731
    return {
        "k": k,
        "n": len(steps),
        **{
            f"{key}_{end}": mean(rows, key)
            for key in ("reward", "valid_action_rate", "resolve_rate", "episode_length")
            for end, rows in (("first", steps[:k]), ("last", steps[-k:]))
        },
        "reward_min": min(r["reward"] for r in steps),
        "reward_max": max(r["reward"] for r in steps),
    }


def section_smollm2() -> list[str]:
    data = load("smollm2_learning.json")
    if data is None:
        missed = missing("smollm2_learning.json", "python bench/smollm2_learning.py")[0]
        return rendered("smollm2_learning.md", steps=None, missing=missed)
    c, m = data["config"], meta("smollm2_learning.json", data)
    flags = smollm2_flags(m, data)
    batch = (
        f"{c['secrets_per_step']} secrets x {flags['--group-size']} rollouts"
        if "--group-size" in flags
        else f"{c['secrets_per_step']} secrets"
    )
    steps = [
        [r["step"], r["seconds"], r["valid_action_rate"], r["reward"], r["fraction_eliminated"]]
        + [r["resolve_rate"], r["episode_length"], num(r["heldout_greedy"])]
        + [num(r["heldout_sampled"])]
        for r in data["steps"]
    ]
    figures = {
        "file": cite("smollm2_learning.json", data),
        "c": c,
        "w": data["warmup"],
        "f": smollm2_figures(data),
        "batch": batch,
        "heldout": f" on {flags['--n-heldout']} held-out secrets" if "--n-heldout" in flags else "",
        "steps": steps,
    }
    return rendered("smollm2_learning.md", **figures)


# ---------------------------------------------------------------- on one GPU
def played_cells(p: dict) -> list[str]:
    """Held-out and 1..200: resolve greedy / sampled, the valid-action and redundant shares."""
    return [
        f"{num(p[s]['greedy'], 1, 100)} / {num(p[s]['sampled'], 1, 100)}"
        for s in ("heldout", "gen200")
    ] + [num(p["gen200"]["valid_rate"]), num(p["gen200"]["redundancy_rate"])]


def section_smollm2_gpu() -> list[str]:
    """bench/smollm2_gpu.py's file, where it exists: the common start (step 0) and each
    estimator's run at the learning rate chosen on validation secrets, on the held-out secrets
    and on 1..200; each run's last evaluated point. Nothing where the file does not exist."""
    d = load(GPU)
    if d is None:
        return []
    rows = [["step 0 (the common start)", "-"] + played_cells(d["step0"])]
    rows += [
        [f"{e.upper()}, kept checkpoint", f"{c['lr']:g}"] + played_cells(c)
        for e, c in d["chosen"].items()
    ]
    last = [
        [
            r["estimator"].upper(),
            f"{r['lr']:g}",
            r["steps"] if r["steps"] is not None else "did not finish",
            r["kept_step"] if r["kept_step"] is not None else "-",
        ]
        + (
            [
                r["curve"][-1]["step"],
                f"{num(r['curve'][-1]['heldout_greedy'])} / "
                f"{num(r['curve'][-1]['heldout_sampled'])}",
                num(r["curve"][-1]["validation"]),
                num(r["curve"][-1]["reward"]),
            ]
            if r["curve"]
            else ["-"] * 4
        )
        for r in d["runs"]
    ]
    return rendered("smollm2_gpu.md", file=cite(GPU, d), d=d, played=rows, last=last)


def smollm2_gpu_summary() -> dict | None:
    """The README's figures of bench/smollm2_gpu.py's file, where it exists: step 0 and each
    chosen run, held-out and 1..200 greedy resolve."""
    d = load(GPU)
    if d is None:
        return None
    return {"step 0": d["step0"]} | {
        f"{e.upper()} (lr {c['lr']:g})": c for e, c in d["chosen"].items()
    }


def smollm2_cpu_summary() -> dict | None:
    """The README's figures of SmolLM2 on CPU cores: one step's seconds and its largest phase peak
    (RESULTS.md's section sets them beside the earlier code's)."""
    data = load(STEP)
    if data is None:
        return None
    peak = max(p["peak_gb"] for p in data["phases"].values() if "peak_gb" in p)
    return {"d": data, "step": f"{data['step_seconds']:g}", "peak": f"{peak:g}"}


def first_run_summary() -> dict | None:
    """The README's figures of its SmolLM2 command run from an empty cache (first_run_smollm2.json):
    its minutes, peak, precision and the CPU (its vector instructions, and bf16 or not)."""
    data = load(FIRST_RUN)
    if data is None or data["exit_status"] != 0:
        return None
    m = data["machine"]
    cpu = f"{m.get('cpu_capability', 'a CPU')} {'with' if m.get('cpu_bf16') else 'without'} bf16"
    return {"d": data, "minutes": f"{data['wall_seconds'] / 60:.0f}", "cpu": cpu}


# ---------------------------------------------------------------- the study on 2 CPU cores
def study_run_cells(run: dict, choice: dict, kept: dict, screen_steps: int) -> list:
    """One run of bench/smollm2_study.py: its rate, progress, validation score at the screen's
    last step and whether it was chosen, then its kept checkpoint's play (`study_played_cells`)
    where it has been played, else its last evaluation on the held-out secrets."""
    chosen = choice.get(run["estimator"], {}).get("lr")
    is_chosen = chosen is not None and float(chosen) == run["lr"]
    screened = [p for p in run["curve"] if p["step"] == screen_steps]
    cells = [
        f"{run['estimator'].upper()}, lr {run['lr']:g}",
        run["steps"],
        num(screened[0]["validation_score"]) if screened else "-",
        "yes" if is_chosen else "-",
    ]
    if is_chosen and run["estimator"] in kept:
        return (
            cells
            + [f"kept checkpoint (step {run['kept_step']})"]
            + study_played_cells(kept[run["estimator"]])
        )
    last = run["curve"][-1] if run["curve"] else None
    if last is None:
        return cells + ["-"] * 6
    valid = last.get("heldout_invalid_rate")
    return cells + [
        f"evaluation at step {last['step']}",
        f"{num(last['heldout_greedy'], 1, 100)} / {num(last['heldout_sampled'], 1, 100)}",
        "-",
        num(1 - valid) if valid is not None else "n/a",
        f"{num(last.get('heldout_redundancy_rate'))} / -",
        "-",
    ]


def section_smollm2_study() -> list[str]:
    """RESULTS.md: bench/smollm2_study.py's file as far as the study has come: one row per run
    (its screen score, then its last evaluation, or its kept checkpoint's play once played) and
    the start's row once it is played."""
    d = load(STUDY)
    if d is None:
        missed = missing(STUDY, "python bench/smollm2_study.py")[0]
        return rendered("smollm2_study.md", d=None, missing=missed)
    study, choice, kept = d["study"], d.get("choice", {}), d.get("kept", {})
    runs = []
    if "step0" in d:
        start = ["step 0 (the warm-up)", 0, "-", "-", "the start of every run"]
        runs.append(start + study_played_cells(d["step0"]))
    runs += [study_run_cells(r, choice, kept, study["screen_steps"]) for r in d.get("runs", [])]
    runs += [study_replay_cells(d, e) for e in d.get("replayed", {})]
    done = "step0" in d and len(kept) == len(study["estimators"].split(","))
    status = (
        "The study is complete."
        if done
        else "*In progress:* the runs below have come this far; a chosen run's kept checkpoint "
        "is played once that run has reached its last step, and the start after it."
    )
    png = STUDY.replace(".json", ".png")
    if (report_tables.DIR / png).exists():
        named(png)  # the figure below, drawn from the file by bench/smollm2_study.py
    else:
        png = None
    return rendered(
        "smollm2_study.md",
        d=d,
        file=cite(STUDY, d),
        status=status,
        runs=runs,
        png=png,
        calls=study_calls(d),
        plays=study_plays(d),
    )


def chosen_run(d: dict, estimator: str) -> dict:
    """The run of bench/smollm2_study.py's file that went on past the screen for `estimator`: the
    one at its chosen rate."""
    lr = float(d["choice"][estimator]["lr"])
    return next(r for r in d["runs"] if r["estimator"] == estimator and r["lr"] == lr)


def study_replay_cells(d: dict, estimator: str) -> list:
    """A kept checkpoint played a second time, elsewhere (bench/smollm2_study.py --replay): the row
    of its run, with the second play's figures."""
    run = chosen_run(d, estimator)
    cells = [f"{estimator.upper()}, lr {run['lr']:g}", run["steps"], "-", "yes"]
    played = f"kept checkpoint (step {run['kept_step']}), played again"
    return cells + [played] + study_played_cells(d["replayed"][estimator])


def study_calls(d: dict) -> list[str]:
    """Where bench/smollm2_study.py's recorded calls trained: one line for the calls that followed
    one another at one place (date, machine, where their bf16 products ran), with each run they
    took further, from the first call's step to the last's; a place that trained nothing unsaid."""
    lines = []
    for place, calls in itertools.groupby(d.get("calls", []), key=place_text):
        calls = list(calls)
        before, after = calls[0]["steps_from"], calls[-1].get("steps_to", {})
        moved = [
            f"{run} {before.get(run, 0)} -> {n}"
            for run, n in after.items()
            if n != before.get(run, 0)
        ]
        if moved:
            count = f", {len(calls)} calls" if len(calls) > 1 else ""
            lines.append(f"{place}{count}: {', '.join(moved)}")
    return lines


def study_plays(d: dict) -> list[str]:
    """Where each play of bench/smollm2_study.py ran: the start's and each kept checkpoint's, with
    every call that played a part of it ("not recorded" for a play made before they were)."""
    plays = [("the start", d["step0"])] if "step0" in d else []
    plays += [(f"{e.upper()}'s kept checkpoint", p) for e, p in d.get("kept", {}).items()]
    plays += [(f"{e.upper()}'s kept checkpoint again", p) for e, p in d.get("replayed", {}).items()]
    lines = []
    for who, p in plays:
        places = [place_text(c) for c in p.get("played_on", [])]
        lines.append(f"{who} on {' and '.join(places)}" if places else f"{who}: not recorded")
    return lines


def place_text(call: dict) -> str:
    """A call's date, machine and where its bf16 products ran (bench/smollm2_study.here)."""
    where = report_tables.machine_text(call["machine"])
    return f"{call['date']}, {where}, bf16 products in {call['bf16_products']}"


def study_played_cells(p: dict) -> list[str]:
    """A policy played by bench/smollm2_study.py: held-out and 1..200 resolve (greedy / sampled),
    the valid-action share of the held-out greedy turns, the redundant share of the greedy turns
    (held-out / 1..200), and the held-out sampled play's repeat ratio."""
    return [
        f"{num(p[s]['greedy'], 1, 100)} / {num(p[s]['sampled'], 1, 100)}"
        for s in ("heldout", "gen200")
    ] + [
        num(p["heldout"]["valid_rate"]),
        f"{num(p['heldout']['redundancy_rate'])} / {num(p['gen200']['redundancy_rate'])}",
        num(p.get("heldout_repeat_ratio")),
    ]
