"""The speed section of RESULTS.md (bench/report_results.py builds the file): one row per timing
file of the bench scripts (and bench/device_runs.py's summary of train.py runs on a GPU), each
with the command, machine and date that wrote it, and the files it depends on that have changed
since it was measured: such a row times older code (bench/report_tables.code_changes).
"""

import re

from bench.report_tables import code_cell, load, machine_text, meta, num, table


def threads_figure(d: dict) -> str:
    by = {}
    for r in d["runs"]:
        t = r["seconds_each"]
        by.setdefault(r["setting"], []).append(
            f"{min(t):.1f}-{max(t):.1f}" if len(t) > 1 else f"{t[0]:.1f}"
        )
    return (
        f"a training step of {d['episodes']} secrets (their rollouts and Eq. 2's update) "
        "per process, seconds each with 1 / 2 / 3 processes side by side: "
        + "; ".join(f"setting {k}: {' / '.join(v)}" for k, v in by.items())
    )


def rollouts_figure(d: dict) -> str:
    return "; ".join(
        f"{m}, {v['batched']['episodes']} episodes: batched {v['batched']['seconds']:.1f} s, "
        f"one at a time {v['one_at_a_time']['seconds']:.1f} s ({v['speedup_vs_one_at_a_time']}x), "
        f"`model.generate` per episode {v['hf_generate_per_episode']['seconds']:.1f} s "
        f"({v['speedup_vs_hf_generate_per_episode']}x)"
        for m, v in d.items()
        if isinstance(v, dict) and "batched" in v
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
    "train_speed_cold.json": train_speed_figure,
    "env_speed.json": env_figure,
    "eval_speed.json": lambda d: "; ".join(
        f"{v['policies']}: {v['runs']} runs x {v['secrets']} secrets ({v['turns']} "
        f"turns) in {v['seconds']} s"
        for v in d.values()
        if isinstance(v, dict) and "policies" in v
    ),
    "rollouts.json": rollouts_figure,
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
            rows.append(
                [
                    f"`{command}`{note}",
                    figure(data),
                    machine_text(m.get("machine")),
                    m.get("date", "not recorded"),
                    f"`{name}`",
                    code_cell(name, data),
                ]
            )
    return [
        "## Speed",
        "",
        "*Protocol:* each row times the code of the commit its file records "
        "(bench/common.code_version; for a file whose benchmark recorded none, "
        "provenance.json gives the commit that last changed its figures, traced from git). "
        "The last column names the files the row depends on that have changed since: "
        "such a row times older code, and a timing of the code as it is now needs the benchmark "
        "run again. Nothing is chosen by these figures.",
        "",
    ] + table(
        ["Benchmark", "Figure", "Machine", "Date", "File (`bench/results/`)", "Code changed since"],
        rows,
    )
