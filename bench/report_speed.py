"""The timings (bench/report_results.py builds the files): bench/LAB.md's table of every timing
file of the bench scripts (and bench/device_runs.py's summary of train.py runs on a GPU), one row
each with the command that wrote it (the lab book's list of files gives its machine, date and
what has changed since: bench/report_tables.provenance); RESULTS.md's speed on 2 CPU cores and
on one GPU; and the README's
lines for both. What a GPU run's code defaulted to, and the top-p a GPU step sampled at, are read
from train.py at the commit its file records (report_tables.defaults_then). No number is typed
here: each is read from a file.
"""

import re

import config
from bench.report_tables import (
    cite,
    defaults_then,
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


def rollouts_figure(d: dict) -> str:
    return "; ".join(
        f"{m}, {v['batched']['episodes']} episodes: batched {v['batched']['seconds']:.1f} s, "
        f"one at a time {v['one_at_a_time']['seconds']:.1f} s ({v['speedup_vs_one_at_a_time']}x), "
        f"`model.generate` per episode {v['hf_generate_per_episode']['seconds']:.1f} s "
        f"({v['speedup_vs_hf_generate_per_episode']}x)" + bound_text(v["batched"])
        for m, v in d.items()
        if isinstance(v, dict) and "batched" in v
    )


def bound_text(batched: dict) -> str:
    """The batched prefill's and decode's time over their arithmetic bound, where recorded."""
    a = batched.get("arithmetic")
    if not a:
        return ""
    return (
        f"; batched prefill {a['prefill']['of_bound']}x its arithmetic bound, decode "
        f"{a['decode']['of_bound']}x (matmul at {batched['matmul_gflops']} GFLOP/s)"
    )


def paper_hours(step_s: float) -> str:
    """The paper's run at this step time: 350 steps, the length of its runs (bench/reproduce.py's
    final window, the paper's last 100 steps, is scaled from it)."""
    return f"350 such steps {350 * step_s / 3600:.1f} h"


def profile_text(p: dict, top: int = 3) -> str:
    """bench/gpu_step.py --profile-turns: per phase the GPU-busy share of its wall time, its
    costliest kernels and its costliest host call."""

    def phase(name: str) -> str:
        v = p[name]
        kernels = ", ".join(
            f"{k[:40]} {ms:,.0f} ms / {calls:,} calls" for k, calls, ms in v["kernels"][:top]
        )
        host = v["host"][0]
        return (
            f"{name} GPU busy {v['gpu_busy_s']} of {v['wall_s']} s (kernels: {kernels}; "
            f"most host time: {host[0][:40]} {host[2]:,.0f} ms / {host[1]:,} calls)"
        )

    return f"profiled {p['turns']}-turn step: " + "; ".join(phase(n) for n in ("rollout", "update"))


def gpu_step_figure(d: dict) -> str:
    """bench/gpu_step.py's figures; a file with the decode split (keys MODE/ENGINE) gives the bound
    too."""
    parts = []
    for m, v in d["modes"].items():
        if v.get("out_of_memory"):  # a micro-batch sweep's setting that did not fit
            parts.append(f"{m}: out of GPU memory")
            continue
        text = f"{m}: {v['step_s']} s per step"
        if "decode_s" in v:
            text += (
                f" (rollout {v['rollout_s']} s: prefill {v['prefill_s']}, decode {v['decode_s']}; "
                f"scoring {v['scoring_s']} s; update {v['update_s']} s), "
                f"decode {v['decode_tokens_per_s']:,} tokens/s = "
                f"{v['percent_of_bandwidth_bound']}% of the bandwidth bound"
            )
        text += f", batched generation {v['batched_generated_tokens_per_s']:,} tokens/s"
        if "model_generate_one_episode_tokens_per_s" in v:
            text += (
                f" vs {v['model_generate_one_episode_tokens_per_s']} for `model.generate` one "
                "episode at a time"
            )
        if v.get("peak_gpu_memory_gb") is not None:
            text += f", peak {v['peak_gpu_memory_gb']} GB"
        if v.get("graphs_captured"):
            text += (
                f", {v['graphs_captured']} CUDA graph(s), {v['compile_and_capture_s']} s compiling "
                f"and capturing, warm-up step {v['warm_up_step_s']} s"
            )
        if "behaviour_action_log_ratio_mean_abs" in v:
            text += (
                ", per-action log-ratio of the sampler to pi_old: mean |.| "
                f"{v['behaviour_action_log_ratio_mean_abs']}, largest "
                f"{v['behaviour_action_log_ratio_max_abs']}"
            )
        if d.get("device", "cpu") != "cpu" and "decode_s" in v:
            text += f"; {paper_hours(v['step_s'])}"
        if "profile" in v:
            text += "; " + profile_text(v["profile"])
        parts.append(text)
    warm = (
        "the second of two steps"
        if any("decode_s" in v for v in d["modes"].values())
        else "one cold step"
    )
    return f"{d['shape']} shape, random weights, {warm}: " + "; ".join(parts)


def device_runs_figure(d: dict) -> str:
    """bench/device_runs.py's summary of train.py runs made on another machine."""
    return "; ".join(
        f"`{r['command']}` ({r['name']}): {r['steps']} steps, {r['process_wall']:.0f} s the whole "
        f"command, RL phase {r['rl_seconds']} s (median step {r['median_step_seconds']} s, "
        f"fastest {r['fastest_step_seconds']} s), held-out resolve greedy "
        f"{num(r['final_greedy_resolve'])}, sampled {num(r['final_sampled_resolve'])}, "
        "per-action log-ratio of the bf16 copy to pi_old: mean |.| "
        f"{r['behaviour_action_log_ratio_mean_abs']}, largest "
        f"{r['behaviour_action_log_ratio_max_abs']}"
        for r in d["runs"]
    )


def profile_figure(d: dict) -> str:
    pieces = d["pieces"]
    return (
        f"{d['steps']} training step(s) from step 1 ({d['turns']} turns, "
        f"{d['threads']} thread(s)): {d['seconds']} s; rollout "
        f"{pieces['rollout (total)']['seconds']} s, update {pieces['update (total)']['seconds']} s "
        f"(backward {pieces['update: backward']['seconds']} s)"
    )


def env_figure(d: dict) -> str:
    return "game turns on one core: " + ", ".join(
        f"{d[s]['turns_per_s']:,} turns/s ({s} set"
        + (
            f"; median of {d[s]['repeats']} windows, range {d[s]['min']:,}-{d[s]['max']:,}"
            if "repeats" in d[s]
            else ""
        )
        + ")"
        for s in ("paper", "binary")
        if s in d
    )


def ranks_figure(d: dict) -> str:
    return (
        ", ".join(
            f"{r['ranks']} rank(s) on {r['device']}: {r['steps_per_minute']} steps/min"
            for r in d["runs"]
        )
        + f" ({d['steps']} steps)"
    )


def train_speed_figure(d: dict) -> str:
    """bench/train_speed.py: one train.py run of a named revision, one of the code it measured."""
    what = (
        "the whole run from an empty warm-up cache"
        if d.get("cold")
        else "the RL phase, warm-up cached"
    )

    def side(r):
        return (
            f"{r['process_wall'] if d.get('cold') else r['rl_seconds']} s, held-out resolve greedy "
            f"{num(r['final_greedy_resolve'])}, sampled {num(r['final_sampled_resolve'])}"
        )

    same = (
        "the same settings"
        if d.get("like_for_like")
        else f"settings that differ: {', '.join(d['config_differences'] or {})}"
    )
    return (
        f"`python train.py --estimator {d['estimator']} {d['train_flags']}`".replace(" `", "`")
        + f", {what} "
        f"({same}): an older revision (the file names it) {side(d['baseline'])}; the code measured "
        f"{side(d['current'])}"
    )


# file -> its figure in words, in the order of the table
SPEED = {
    "train_speed_eq2.json": train_speed_figure,
    "train_speed_house.json": train_speed_figure,
    "train_speed_cold.json": train_speed_figure,
    "env_speed.json": env_figure,
    "eval_speed.json": lambda d: "; ".join(
        f"{v['policies']}: {v['runs']} runs x {v['secrets']} secrets ({v['turns']} "
        f"turns) in {v['seconds']} s"
        for v in d.values()
        if isinstance(v, dict) and "policies" in v
    ),
    "rollouts.json": rollouts_figure,
    "rollouts_baseline.json": rollouts_figure,
    "threads.json": threads_figure,
    "profile_step.json": profile_figure,
    "profile_step_binary.json": profile_figure,
    "profile_step_binary_bf16.json": profile_figure,
    "ranks_speed.json": ranks_figure,
    "ranks_speed_gpu.json": ranks_figure,
    "gpu_step.json": gpu_step_figure,
    "gpu_step_lora_sweep.json": gpu_step_figure,
    "gpu_step_draw.json": gpu_step_figure,
    "gpu_step_fused.json": gpu_step_figure,
    "gpu_step_h200.json": gpu_step_figure,
    "gpu_step_cpu_small.json": gpu_step_figure,
    "train_gpu.json": device_runs_figure,
    "train_gpu_default.json": device_runs_figure,
}


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
            rows.append([f"`{command}`{note}", figure(data), cite(name, data)])
    return rendered("timings.md", rows=rows)


# ---------------------------------------------------------------- RESULTS.md: the claim of speed
DEFAULT_RUN = "train_speed_eq2.json"  # the newest whole default run from an empty cache
CPU = {  # file -> what it times, in the order of the table
    DEFAULT_RUN: "the default run, whole",
    "profile_step.json": "one training step",
    "profile_step_binary.json": "one training step",
    "profile_step_binary_bf16.json": "one training step",
    "threads.json": "training steps side by side",
    "rollouts.json": "rollouts, batched",
    "rollouts_baseline.json": "rollouts, batched, at an older revision (the file names it)",
}
GPU_STEPS = ["gpu_step.json", "gpu_step_lora_sweep.json", "gpu_step_h200.json"]
GPU_RUNS = ["train_gpu_default.json", "train_gpu.json"]
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


def cold_figure(d: dict) -> str:
    """bench/train_speed.py --cold: the code measured's run (the older revision's is in LAB.md)."""
    r = d["current"]
    wall = r["process_wall"] if d.get("cold") else r["rl_seconds"]
    flags = f" {d['train_flags']}" if d.get("train_flags") else ""
    return (
        f"`python train.py --estimator {d['estimator']}{flags}` from an empty warm-up cache: "
        f"{wall} s, held-out resolve {num(r['final_greedy_resolve'])} greedy / "
        f"{num(r['final_sampled_resolve'])} sampled"
    )


def cpu_figure(name: str, d: dict) -> str:
    if name.startswith("train_speed"):
        return cold_figure(d)
    if name.startswith("profile_step"):
        flags = f" (`{d['train_flags']}`)" if d.get("train_flags") else ""
        return profile_figure(d) + flags
    return SPEED[name](d)


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


def gpu_step_rows(files: list) -> list[list]:
    rows = []
    for name, d in files:
        for mode, v in d["modes"].items():
            head = [setting_name(mode), d["device"], micro_batch_of(mode, d)]
            if v.get("out_of_memory"):
                rows.append(head + ["out of the GPU's memory"] + [""] * 4 + [cite(name, d)])
                continue
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


def gpu_summary() -> str | None:
    """The README's line for the GPU: the tiny default run there, and the paper's step on its
    model's shape: the fastest LoRA and full fine-tuning settings that fit, on one machine."""
    steps = [(n, load(n)) for n in GPU_STEPS[:2] if load(n)]  # one H100, the same code
    name, d = "train_gpu_default.json", load("train_gpu_default.json")
    if not steps or not d:
        return None
    run = next(r for r in d["runs"] if r["command"] == "python train.py --estimator echo")
    moved = moved_defaults(name, d, SETTINGS[1:])
    code = f", at code whose defaults were {', '.join(moved)}" if moved else ""
    timed = [(m, v, s) for _, s in steps for m, v in s["modes"].items() if "decode_s" in v]
    best = []
    for kind in ("lora", "full"):
        mine = [t for t in timed if t[0].split("/")[1] == "fast" and t[0].startswith(kind)]
        if mine:
            m, v, s = min(mine, key=lambda t: t[1]["step_s"])
            best.append(f"{setting_name(m)} {v['step_s']} s (micro-batch {micro_batch_of(m, s)})")
    out = [
        f"{setting_name(m)} at {micro_batch_of(m, s)}"
        for _, s in steps
        for m, v in s["modes"].items()
        if v.get("out_of_memory")
    ]
    failed = f"; {', '.join(out)} did not fit" if out else ""
    top_p = "/".join(sorted({top_p_text(n, s) for n, s in steps}))
    c = steps[0][1]["config"]
    batch = f"{c['secrets']} x {c['group_size']}"
    cut = timed_out(name, d, run)
    took = (
        f" and printed done in {cut[1]} s after its warm-up ({cut[0]} s, recorded as its whole "
        "command's, is the timeout it ran under)"
        if cut
        else f" in {run['process_wall']:.0f} s, the whole command"
    )
    return (
        f"- **On one {steps[0][1]['device']}**: `{run['command']}` ({run['steps']} steps{code}) "
        f"reached held-out resolve {num(run['final_greedy_resolve'])} / "
        f"{num(run['final_sampled_resolve'])}{took}. "
        f"One step of {batch} on {steps[0][1]['shape']}'s shape, random weights, top-p {top_p}: "
        f"fastest {', '.join(best)}{failed}."
    )


def cpu_summary() -> str | None:
    """The README's line for 2 CPU cores: the default run, whole, from an empty cache."""
    d = load(DEFAULT_RUN)
    if d is None:
        return None
    machine = meta(DEFAULT_RUN, d).get("machine")
    where = f"{machine['cpus']} CPU cores" if isinstance(machine, dict) else machine_text(machine)
    return f"- **On {where}**: {cold_figure(d)}."
