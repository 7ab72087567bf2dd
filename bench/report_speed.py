"""The timings (bench/report_results.py builds the files): bench/LAB.md's table of every timing
file of the bench scripts (and bench/device_runs.py's summary of train.py runs on a GPU), one row
each with the command that wrote it (the lab book's list of files gives its machine, date and
what has changed since: bench/report_tables.provenance); RESULTS.md's speed on 2 CPU cores and
on one GPU; and the README's lines for both. Each kind of file's figure in words is a macro of
bench/templates/timing_figures.md. What a GPU run's code defaulted to, and the top-p a GPU step
sampled at, are train.py's config as the file (or provenance.json) records it
(report_tables.defaults_then). No number is typed here: each is read from a file.
"""

import re

import config
from bench.report_tables import (
    cite,
    defaults_then,
    in_words,
    load,
    machine_text,
    meta,
    moved_defaults,
    num,
    rendered,
)


def threads_figure(d: dict) -> str:
    by = {}
    for r in d["runs"]:
        t = r["seconds_each"]
        by.setdefault(r["setting"], []).append(
            f"{min(t):.1f}-{max(t):.1f}" if len(t) > 1 else f"{t[0]:.1f}"
        )
    counts = " / ".join(str(n) for n in sorted({r["processes"] for r in d["runs"]}))
    return (
        f"a training step of {d['episodes']} secrets (their rollouts and Eq. 2's update) "
        f"per process, seconds each with {counts} processes side by side: "
        + "; ".join(f"setting {k}: {' / '.join(v)}" for k, v in by.items())
    )


# file -> its figure in words, in the order of the table
# (templates/timing_figures.md's macros; threads.json's is threads_figure above).
SPEED = {
    "train_speed_eq2.json": "train_speed",
    "train_speed_house.json": "train_speed",
    "train_speed_cold.json": "train_speed",
    "env_speed.json": "env_speed",
    "eval_speed.json": "eval_speed",
    "rollouts.json": "rollouts",
    "rollouts_baseline.json": "rollouts",
    "threads.json": threads_figure,
    "profile_step.json": "profile_step",
    "profile_step_binary.json": "profile_step",
    "profile_step_binary_bf16.json": "profile_step",
    "ranks_speed.json": "ranks_speed",
    "ranks_speed_gpu.json": "ranks_speed",
    "gpu_step.json": "gpu_step",
    "gpu_step_lora_sweep.json": "gpu_step",
    "gpu_step_draw.json": "gpu_step",
    "gpu_step_fused.json": "gpu_step",
    "gpu_step_h200.json": "gpu_step",
    "gpu_step_cpu_small.json": "gpu_step",
    "train_gpu.json": "device_runs",
    "train_gpu_default.json": "device_runs",
}


def speed_figure(name: str, d: dict) -> str:
    """A timing file's figure in words (SPEED)."""
    how = SPEED[name]
    return how(d) if callable(how) else in_words(how, d)


def section_speed() -> list[str]:
    rows = []
    for name, figure in SPEED.items():
        data = load(name)
        if data:
            m = meta(name, data)
            note = f" ({m['note']})" if m.get("note") else ""
            # named in the file (and in the last column's check)
            command = re.sub(
                r"--(baseline|commit) \S+",
                lambda c: f"--{c[1]} {'REVISION' if c[1] == 'baseline' else 'HASH'}",
                m.get("command", "not recorded"),
            )
            rows.append([f"`{command}`{note}", speed_figure(name, data), cite(name, data)])
    return rendered("timings.md", rows=rows)


# ---------------------------------------------------------------- RESULTS.md: the claim of speed
DEFAULT_RUN = "train_speed_eq2.json"  # the newest whole default run from an empty cache
CPU = {  # file -> what it times, in the order of the table
    DEFAULT_RUN: "the default run, whole",
    "profile_step.json": "one training step",  # the binary set's steps are in LAB.md
    "threads.json": "training steps side by side",
    "rollouts.json": "rollouts, batched",
}
GPU_STEPS = ["gpu_step.json", "gpu_step_lora_sweep.json", "gpu_step_h200.json"]
GPU_RUNS = ["train_gpu_default.json"]  # the older code's runs (train_gpu.json) are in LAB.md
# the defaults a run on older code may have had otherwise (the settings the paper set compares)
SETTINGS = (
    "steps",
    "ppo_epochs",
    "top_p",
    "secrets_per_step",
    "prefix_turns",
    "refusal_rate",
    "candidate_format",
)


def cpu_figure(name: str, d: dict) -> str:
    if name.startswith("train_speed"):  # the code measured's run (the older one's is in LAB.md)
        return in_words("cold_run", d)
    if name.startswith("profile_step"):
        flags = f" (`{d['train_flags']}`)" if d.get("train_flags") else ""
        return in_words("profile_step", d) + flags
    return speed_figure(name, d)


def micro_batch_of(mode: str, d: dict) -> str:
    """A mode's update micro-batch: the one it names, else the one of the file's list that no mode
    names (the bench's default in the code measured)."""
    named = [p.removeprefix("micro-batch-") for p in mode.split("/")[2:] if p.startswith("micro")]
    if named:
        return named[0]
    listed = str(d["config"].get("micro_batch", "")).split(",")
    unnamed = [m for m in listed if not any(f"micro-batch-{m}" in k for k in d["modes"])]
    return unnamed[0] if len(unnamed) == 1 else "not recorded"


def setting_name(mode: str) -> str:
    """MODE/ENGINE[/micro-batch-K][/compiled-update] in words."""
    parts = mode.split("/")
    what = {"full": "full fine-tuning", "lora": "LoRA"}.get(parts[0], parts[0])
    engine = "" if parts[1] == "fast" else f", engine {parts[1]}"
    compiled = ", update's layers compiled" if "compiled-update" in parts else ""
    return what + engine + compiled


def top_p_text(name: str, d: dict) -> str:
    """The top-p a GPU step sampled at: bench/gpu_step.py builds train.py's config for a model
    other than the tiny one, so the llm preset's over the defaults, in the code measured."""
    then = (defaults_then(name, d, "llm") or {}).get("top_p")
    return "not recorded" if then is None else f"{then}"


def fastest_modes(files: list) -> set:
    """(file, mode) of the fastest step that fit per GPU and setting: RESULTS.md's rows (the
    sweeps, and the settings that did not fit, are in LAB.md's table of every timing)."""
    best = {}
    for name, d in files:
        for mode, v in d["modes"].items():
            key = (d["device"], setting_name(mode))
            if "step_s" in v and (key not in best or v["step_s"] < best[key][0]):
                best[key] = (v["step_s"], name, mode)
    return {(name, mode) for _, name, mode in best.values()}


def gpu_step_rows(files: list) -> list[list]:
    rows, shown = [], fastest_modes(files)
    for name, d in files:
        for mode, v in d["modes"].items():
            if (name, mode) not in shown:
                continue
            head = [setting_name(mode), d["device"], micro_batch_of(mode, d)]
            rows.append(
                head
                + [
                    v["step_s"],
                    f"{v['rollout_s']} / {v['scoring_s']} / {v['update_s']}",
                    f"{v['decode_tokens_per_s']:,.0f} ({v['percent_of_bandwidth_bound']:.0f}%)",
                    v.get("peak_gpu_memory_gb", "n/a"),
                    top_p_text(name, d),
                    cite(name, d),
                ]
            )
    return rows


def timed_out(name: str, d: dict, r: dict) -> tuple[str, str] | None:
    """(the timeout, the seconds the run printed) where the file's note says the run's
    whole-command seconds are the timeout the command ran under; else None."""
    note = meta(name, d).get("note") or ""
    timeout = re.search(r"timeout it ran under \((\d+) s\)", note)
    printed = re.search(r"'done in (\d+) s'", note)
    if timeout and printed and float(timeout[1]) == r["process_wall"]:
        return timeout[1], printed[1]
    return None


def wall_text(name: str, d: dict, r: dict) -> str:
    """A run's whole-command seconds, or, where they are the timeout it ran under, that."""
    cut = timed_out(name, d, r)
    if cut:
        return (
            f"not measured ({cut[0]} s is the timeout it ran under; the run printed done in "
            f"{cut[1]} s after its warm-up)"
        )
    return f"{r['process_wall']:.0f} s"


def gpu_run_rows(files: list) -> list[list]:
    rows = []
    for name, d in files:
        moved = moved_defaults(name, d, SETTINGS)
        settings = "not known" if moved is None else ", ".join(moved) or "none"
        for r in d["runs"]:
            rows.append(
                [
                    f"`{r['command']}`",
                    r["steps"],
                    settings,
                    r["rl_seconds"],
                    wall_text(name, d, r),
                    f"{num(r['final_greedy_resolve'])} / {num(r['final_sampled_resolve'])}",
                    cite(name, d),
                ]
            )
    return rows


def section_speed_claim() -> list[str]:
    """RESULTS.md's speed: on 2 CPU cores, and on one GPU (every timing is in LAB.md's table)."""
    cpu = [(n, load(n)) for n in CPU if load(n)]
    steps = [(n, load(n)) for n in GPU_STEPS if load(n)]
    runs = [(n, load(n)) for n in GPU_RUNS if load(n)]
    machines = sorted({machine_text(meta(n, d).get("machine")) for n, d in cpu})
    where = lambda n, d: (  # noqa: E731
        f" ({machine_text(meta(n, d).get('machine'))})" if len(machines) > 1 else ""
    )
    figures = {
        "top_p": config.config_from_flags(["--model", "qwen"]).top_p,
        "batches": sorted(
            {
                f"{c['secrets']} secrets x {c['group_size']} rollouts, up to "
                f"{c['max_new_tokens']} new tokens"
                for c in (d["config"] for _, d in steps)
            }
        ),
        "machines": machines,
        "cpu": [[CPU[n] + where(n, d), cpu_figure(n, d), cite(n, d)] for n, d in cpu],
        "steps": gpu_step_rows(steps),
        "runs": gpu_run_rows(runs),
    }
    return rendered("speed.md", **figures)


def gpu_summary() -> dict | None:
    """The README's figures of the GPU (templates/summary.md): the tiny default run there, and the
    paper's step on its model's shape: the fastest LoRA and full fine-tuning settings that fit,
    and those that did not, on one machine."""
    steps = [load(n) for n in GPU_STEPS[:2] if load(n)]  # one H100, the same code
    name, d = "train_gpu_default.json", load("train_gpu_default.json")
    if not steps or not d:
        return None
    timed = [(m, v, s) for s in steps for m, v in s["modes"].items() if "decode_s" in v]
    best = []
    for kind in ("lora", "full"):
        mine = [t for t in timed if t[0].split("/")[1] == "fast" and t[0].startswith(kind)]
        if mine:
            m, v, s = min(mine, key=lambda t: t[1]["step_s"])
            best.append((setting_name(m), v["step_s"], micro_batch_of(m, s)))
    run = next(r for r in d["runs"] if r["command"] == "python train.py --estimator echo")
    return {
        "step": steps[0],
        "run": run,
        "moved": moved_defaults(name, d, SETTINGS[1:]),
        "printed": (timed_out(name, d, run) or (None, None))[1],  # its wall is the timeout
        "top_p": "/".join(sorted({top_p_text(n, load(n)) for n in GPU_STEPS[:2] if load(n)})),
        "best": best,
        "failed": [
            f"{setting_name(m)} at {micro_batch_of(m, s)}"
            for s in steps
            for m, v in s["modes"].items()
            if v.get("out_of_memory")
        ],
    }


def cpu_summary() -> str | None:
    """The README's line for 2 CPU cores: the default run, whole, from an empty cache."""
    d = load(DEFAULT_RUN)
    if d is None:
        return None
    machine = meta(DEFAULT_RUN, d).get("machine")
    where = f"{machine['cpus']} CPU cores" if isinstance(machine, dict) else machine_text(machine)
    return f"- **On {where}**: {in_words('cold_run', d)}."
