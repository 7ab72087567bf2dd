"""RESULTS.md, built from the JSON in bench/results: every table with its command, machine, date and
protocol. No number is typed here: each is read from a file, and means +- SEM and paired t-tests
are computed from per-seed values (stats.mean_sem, stats.paired_t_test). The output depends on
the files only (no clock, fixed order and float formats), so running it twice writes the same
bytes; `--check` exits 1 if RESULTS.md differs from what it would write (CI runs it).

    python bench/report_results.py [--check]

It also writes the README's results summary (between its two `results summary` comments) from
the same files. The binary set's sections are in bench/report_binary.py, the reading and
formatting they share in bench/report_tables.py.

Files read (in bench/results). Each carries "command", "machine" (a dict of bench/common.machine
or a sentence) and "date" (ISO); where an older file does not, provenance.json gives them
({"files": {FILE: {"command", "machine", "date", "checkpoint"?}}}). A file converted from an
older markdown or text result also carries "source", that file.

- reproduce_paper.json, reproduce_binary*.json (bench/reproduce.py): {"question_set", "tag",
  "estimators", "seeds", "window" (final-window steps), "jobs", "threads", "runs_trained",
  "wall_seconds", "train_config": {"differs_from_default", "same_across_runs", "per_run",
  "presets", "resolved" (every train.py field on which all runs agree)}, "runs": {ESTIMATOR: [one per seed:
  {"run_name", "seed", "steps", "kept": {"step", "dir": best|checkpoint}, "final_eval" (held-out
  evaluation of the kept checkpoint: "eval/resolve_rate", "eval/sampled_resolve_rate",
  "eval/zero_rate", "eval/eliminated_mean", "eval/episode_length", ...), "last_eval",
  "steps_to_90", "steps_to_90_greedy", "train_seconds", "final_window": {METRIC: mean over the
  last `window` steps}}]}}. Converted files lack what their source did not print.
- fidelity_NAME.json (fidelity.py's fidelity.json plus command, machine, date): {"config":
  {"policy": "tiny" (before RL) or a checkpoint directory, "question_set", "secrets",
  "group_size", "turns", "branches", "alternatives", ...}, "policy_name", "batch_turns",
  "a_b_rms", "noise_se_mean", "branching_seconds", "rows": [{"estimator", "turns" ("all", "t=0",
  a band ...), "n", "pearson", "pearson_lo", "pearson_hi", "spearman", "sign", "scaled_error",
  "scaled_error_lo", "scaled_error_hi"}], "floors": {"all": E[Var(A_B | R)] / E[A_B^2], ...}}.
- eval_paper_model_summary.json: {"command", "machine", "date", "protocol", "rows": the lines of
  an evaluate.py output directory's model_summary.jsonl ({"model_key", "group", "n_runs",
  "resolve_rate", "resolve_rate_sem", "zero_rate", "zero_rate_sem", "quality", "quality_sem",
  ...}; a language model's sampled row is its model_key + " [T=1]")}, or that list alone.
- bisection_behaviour_NAME.json (bench/bisection_behaviour.py): {"policy greedy", "policy sampled",
  "bisection (Bayes)", "random": {"comparisons", "threshold_median_corr",
  "mean_fraction_eliminated", "zero_share", ...}, "checkpoint": {"path", "played": kept|last,
  "step"}}.
- capacity_check_NAME.json (bench/capacity_check.py): {"config", "parameters", "training_states",
  "epoch_losses", "heldout", "n200": {"greedy", "sampled", "behaviour_greedy", "behaviour_sampled"}}.
- unseen_numbers.json (bench/unseen_numbers.py): {"trained_max", "n_max", "rows": [{"checkpoint":
  {"path", "played", "step"}, "embedding_cosine_trained", "embedding_cosine_unseen",
  "resolve_trained_range", "resolve_unseen_range", "named_share_unseen", "largest_named",
  "halving_share_trained_range", "halving_share_unseen_range"}], "bisection": the same, no
  embedding}.
- binary_final.json, binary_scores_NAME.json (bench/binary_final.py): {"runs": [{"estimator",
  "seed", "steps", "changed", "kept_step", "split_seed", "universe_least", "train_seconds", "threads",
  "samples",
  "heldout_greedy", "heldout_sampled", "n200_greedy", "n200_sampled", "threshold_median_corr_greedy",
  "threshold_median_corr_sampled", "eliminated_fraction_per_turn"}], "paired": {ESTIMATOR: {FIGURE:
  {"mean_difference", "t", "p", "seeds"}}}}.
- binary_defaults.json (bench/binary_defaults.py): {"runs_dir", "rules": {RULE: window}, "criterion",
  "runs": [{"name", "settings", "seed", "split_seed", "steps", "evaluations", "train_seconds",
  "kept_step", "kept_validation", "last_validation", "cross_validated": {RULE: score}}],
  "rule_means": {RULE: score}, "chosen_rule", "ranking", "chosen"}.
- smollm2_learning.json, and the speed files env_speed, eval_speed, rollouts, threads,
  ranks_speed, ranks_speed_gpu, gpu_step, gpu_step_cpu_small, profile_step, profile_step_binary,
  profile_step_binary_bf16, train_cuda_summary (.json): as their bench scripts (and train.py's
  summary.json) write them.
"""
import os
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench import report_tables  # noqa: E402
from bench.common import RESULTS  # noqa: E402
from bench.report_binary import section_binary  # noqa: E402
from bench.report_tables import (load, machine_text, meta, missing, ms, names, nan, num, per_seed,  # noqa: E402
                                 protocol, provenance_line, reproduction_table, RESOLVE, seeds_text, table,
                                 final_window)
from cli import arg, parse_config  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PAPER_SETTINGS = ("train.py's paper-set defaults: the paper's values where it gives them (G, clip, temperature); the "
                  "tiny model's size and optimiser settings were set while building it by looking at held-out play of "
                  "seeds 0-2, not on validation secrets")


@dataclass
class ReportConfig:
    check: bool = arg(False, "write nothing; exit 1 if RESULTS.md differs from what this script would write")
    out: str = arg(str(ROOT / "RESULTS.md"), "the report", writes="file")
    results: str = arg(RESULTS, "the folder of result files it reads")


def section_paper() -> list[str]:
    lines = ["## The reproduction on the paper's question set", ""]
    data = load("reproduce_paper.json")
    if data is None:
        return lines + missing("reproduce_paper.json", "python bench/reproduce.py --estimators echo,grpo,rloo,pbrs,"
                                                         "pbrs+rloo,offline,gigpo,echo-belief,echo-zeropad --seeds 3,4,5 --jobs 2")
    flags = " ".join(f"--{k.replace('_', '-')} {v}" for k, v in data["train_config"].get("differs_from_default", {}).items())
    fresh = [s for s in data["seeds"] if s not in (0, 1, 2)]
    clean = (f"; the seeds here ({seeds_text(fresh)}) were looked at by no choice, the 20 held-out secrets were, so the "
             "figures below are clean in their seeds only" if len(fresh) == len(data["seeds"]) else
             "; the figures below are not clean held-out estimates")
    chosen = PAPER_SETTINGS + clean + (f"; these runs also set {flags}" if flags else "")
    lines += [provenance_line("reproduce_paper.json", data), "", protocol(data, chosen), ""] + reproduction_table(data)
    first, runs = data["estimators"][0], data["runs"]
    if first != "grpo" and all("final_window" in r for r in runs.get("grpo", [{}])):
        lines += final_window(data, first, "grpo")
    side = (f"Train time: {data['jobs']} runs side by side, {data['threads']} thread(s) each, while other work shared "
            "the machine; read it as a rough cost. " if data.get("jobs") else "")
    return lines + [side + "Greedy play can fall into repeating one question, which sampled play escapes: read the "
                    "sampled column.", ""]


# ---------------------------------------------------------------- fidelity, Table 1
def section_fidelity() -> list[str]:
    lines = ["## Credit measured against the true advantage (fidelity)", "",
             "The true per-turn Bayesian advantage A_B(h_t, a_t) is measured by branching (draw the secret from the "
             "exact belief b_t, replay h_t, take a_t or an alternative, play on), and every estimator's credit for the "
             "same turns is set against it.", ""]
    found = names("fidelity_*.json")
    if not found:
        return lines + missing("fidelity_NAME.json", "python fidelity.py")
    files = sorted(((n, load(n)) for n in found), key=lambda f: (f[1]["config"]["policy"] != "tiny", f[0]))
    label = lambda d: "before RL" if d["config"]["policy"] == "tiny" else f"`{d['config']['policy']}`"  # noqa: E731
    for n, d in files:
        c = d["config"]
        lines += [f"{label(d)}: {provenance_line(n, d)} {c['secrets']} secrets x {c['group_size']} rollouts "
                  f"({d['batch_turns']} turns) on the {c['question_set']} set; A_B of "
                  f"{next((r['n'] for r in d['rows'] if r['turns'] == 'all'), c['turns'])} drawn turns "
                  f"(K = {c['branches']} secrets per action, M = {c['alternatives']} alternatives).", ""]
    lines += ["*Protocol:* one batch per policy, every estimator's credit for the same turns; nothing here is "
              "trained or chosen. Pearson correlation with A_B over all drawn turns [bootstrap 95% over the turns]; "
              "the last row is Theorem 3.2 (ii)'s bound on the same turns.", ""]
    overall = lambda d, e: next((r for r in d["rows"] if r["estimator"] == e and r["turns"] == "all"), None)  # noqa: E731
    cell = lambda r: ("n/a" if r is None else  # noqa: E731
                      f"{num(r['pearson'])} [{num(r['pearson_lo'])}, {num(r['pearson_hi'])}]")
    estimators = dict.fromkeys(r["estimator"] for _, d in files for r in d["rows"])
    rows = [[e] + [cell(overall(d, e)) for _, d in files] for e in estimators]
    rows.append(["floor of any return-only credit, E[Var(A_B given R)] / E[A_B^2]"] +
                [num(d["floors"].get("all")) for _, d in files])
    return lines + table(["Estimator"] + [label(d) for _, d in files], rows)


def section_table1() -> list[str]:
    lines = ["## Table 1 of the paper for every policy (paper set)", ""]
    data = load("eval_paper_model_summary.json")
    if data is None:
        return lines + missing("eval_paper_model_summary.json", "python evaluate.py --question-set paper --policies ... "
                                                                "--out DIR, then DIR/model_summary.jsonl as a JSON list")
    by_key = {r["model_key"]: r for r in (data["rows"] if isinstance(data, dict) else data)}

    def pair(r, key, digits, scale):    # mean +- SEM over runs; blank where the policy has no such row
        if r is None:
            return ""
        sem = "" if nan(r.get(key)) or nan(r.get(key + "_sem")) else f" ± {num(r[key + '_sem'], digits, scale)}"
        return num(r.get(key), digits, scale) + sem
    rows = [[f"`{k}`"] + [pair(r, key, d, s) for key, d, s in (("resolve_rate", 1, 100), ("zero_rate", 1, 100),
                                                               ("quality", 3, 1))
                          for r in (by_key[k], by_key.get(k + " [T=1]"))]
            for k in by_key if not k.endswith(" [T=1]")]
    how = data.get("protocol", "") if isinstance(data, dict) else ""
    lines += [provenance_line("eval_paper_model_summary.json", data), "",
              f"*Protocol:* {how}. Policies are played as they are: nothing is chosen here. Mean ± SEM over runs; "
              "Resolve and Zero in %.", ""]
    return lines + table(["Policy", "Resolve greedy", "Resolve sampled", "Zero greedy", "Zero sampled", "Qual. greedy",
                          "Qual. sampled"], rows)


# ---------------------------------------------------------------- the binary set
# ---------------------------------------------------------------- SmolLM2, speed
def section_smollm2() -> list[str]:
    lines = ["## SmolLM2-135M learning on CPU cores", ""]
    data = load("smollm2_learning.json")
    if data is None:
        return lines + missing("smollm2_learning.json", "python bench/smollm2_learning.py")
    c, w, steps = data["config"], data["warmup"], data["steps"]
    k = min(4, len(steps) // 2)     # the first and last k steps are compared
    change = lambda key: (f"{key.replace('_', ' ')} {num(sum(r[key] for r in steps[:k]) / k, 3)} -> "  # noqa: E731
                          f"{num(sum(r[key] for r in steps[-k:]) / k, 3)}")
    lines += [provenance_line("smollm2_learning.json", data), "",
              f"*Protocol:* LoRA on SmolLM2-135M-Instruct, the format warm-up, then ECHO on secrets 1..{c['n_max']}, "
              f"{c['secrets_per_step']} secrets a step, lr {c['lr']:g}, {c['minutes']:g}-minute limit; settings set "
              "for speed on this machine, not chosen on any score. Held-out resolve is of the step's policy; nothing "
              f"is kept. Warm-up: valid actions {num(w['valid_before'], 3)} -> {num(w['valid_after'], 3)} "
              f"({w['seconds']:g} s).", ""]
    lines += table(["Step", "s/step", "Valid actions", "Reward", "Eliminated (fraction)", "Resolved", "Ep. length",
                    "Held-out greedy", "Held-out sampled"],
                   [[r["step"], r["seconds"], r["valid_action_rate"], r["reward"], r["fraction_eliminated"],
                     r["resolve_rate"], r["episode_length"], num(r["heldout_greedy"]), num(r["heldout_sampled"])]
                    for r in steps])
    return lines + [f"Mean of the first {k} steps -> the last {k} (training batches, sampled): "
                    f"{change('reward')}, {change('resolve_rate')}, {change('episode_length')}.", ""]


def threads_figure(d: dict) -> str:
    by = {}
    for r in d["runs"]:
        t = r["seconds_each"]
        by.setdefault(r["setting"], []).append(f"{min(t):.1f}-{max(t):.1f}" if len(t) > 1 else f"{t[0]:.1f}")
    return (f"a {d['episodes']}-episode rollout per process, seconds each with 1 / 2 / 3 processes side by side: "
            + "; ".join(f"setting {k}: {' / '.join(v)}" for k, v in by.items()))


def rollouts_figure(d: dict) -> str:
    return "; ".join(f"{m}, {v['batched']['episodes']} episodes: batched {v['batched']['seconds']:.1f} s, one at a "
                     f"time {v['one_at_a_time']['seconds']:.1f} s ({v['speedup_vs_one_at_a_time']}x), `model.generate` "
                     f"per episode {v['hf_generate_per_episode']['seconds']:.1f} s "
                     f"({v['speedup_vs_hf_generate_per_episode']}x)"
                     for m, v in d.items() if isinstance(v, dict) and "batched" in v)


def gpu_step_figure(d: dict) -> str:
    """bench/gpu_step.py's figures; a file with the decode split (keys MODE/ENGINE) gives the bound too."""
    parts = []
    for m, v in d["modes"].items():
        text = f"{m}: {v['step_s']} s per step"
        if "decode_s" in v:
            text += (f" (rollout {v['rollout_s']} s: prefill {v['prefill_s']}, decode {v['decode_s']}; scoring "
                     f"{v['scoring_s']} s; update {v['update_s']} s), decode {v['decode_tokens_per_s']:,} tokens/s = "
                     f"{v['percent_of_bandwidth_bound']}% of the bandwidth bound")
        text += f", batched generation {v['batched_generated_tokens_per_s']:,} tokens/s"
        if "model_generate_one_episode_tokens_per_s" in v:
            text += f" vs {v['model_generate_one_episode_tokens_per_s']} for `model.generate` one episode at a time"
        if v.get("peak_gpu_memory_gb") is not None:
            text += f", peak {v['peak_gpu_memory_gb']} GB"
        parts.append(text)
    warm = "the second of two steps" if any("decode_s" in v for v in d["modes"].values()) else "one cold step"
    return f"{d['shape']} shape, random weights, {warm}: " + "; ".join(parts)


# file -> its figure in words
SPEED = {
    "env_speed.json": lambda d: "game turns on one core: " + ", ".join(
        f"{d[s]['turns_per_s']:,} turns/s ({s} set" + (f"; median of {d[s]['repeats']} windows, range {d[s]['min']:,}-"
                                                       f"{d[s]['max']:,}" if "repeats" in d[s] else "") + ")"
        for s in ("paper", "binary") if s in d),
    "eval_speed.json": lambda d: "; ".join(f"{v['policies']}: {v['runs']} runs x {v['secrets']} secrets ({v['turns']} "
                                           f"turns) in {v['seconds']} s"
                                           for v in d.values() if isinstance(v, dict) and "policies" in v),
    "rollouts.json": rollouts_figure,
    "threads.json": threads_figure,
    "profile_step.json": lambda d: (f"{d['steps']} training step(s) from step 1 ({d['turns']} turns, "
                                    f"{d['threads']} thread(s)): {d['seconds']} s; rollout "
                                    f"{d['pieces']['rollout (total)']['seconds']} s, update "
                                    f"{d['pieces']['update (total)']['seconds']} s (backward "
                                    f"{d['pieces']['update: backward']['seconds']} s)"),
    "ranks_speed.json": lambda d: ", ".join(f"{r['ranks']} rank(s) on {r['device']}: {r['steps_per_minute']} steps/min"
                                            for r in d["runs"]) + f" ({d['steps']} steps)",
    "gpu_step.json": gpu_step_figure,
    "gpu_step_cpu_small.json": gpu_step_figure,
    "train_cuda_summary.json": lambda d: (f"the default tiny run ({d['steps']} steps): {d['train_seconds']} s, held-out "
                                          f"resolve greedy {num(d['final_eval'].get('eval/resolve_rate'))}, sampled "
                                          f"{num(d['final_eval'].get('eval/sampled_resolve_rate'))}"),
    "reproduce_paper.json": lambda d: (f"{d['runs_trained']} runs, {d['jobs']} side by side with {d['threads']} "
                                       f"thread(s) each: {d['wall_seconds']:.0f} s wall") if d.get("runs_trained") else None,
}
SPEED["ranks_speed_gpu.json"] = SPEED["ranks_speed.json"]
SPEED["profile_step_binary.json"] = SPEED["profile_step_binary_bf16.json"] = SPEED["profile_step.json"]
SPEED_ORDER = ["env_speed.json", "eval_speed.json", "rollouts.json", "threads.json", "profile_step.json",
               "profile_step_binary.json", "profile_step_binary_bf16.json", "ranks_speed.json",
               "ranks_speed_gpu.json", "gpu_step.json", "gpu_step_cpu_small.json", "train_cuda_summary.json", "reproduce_paper.json"]


def section_speed() -> list[str]:
    rows = []
    for name in SPEED_ORDER:
        data = load(name)
        figure = SPEED[name](data) if data else None
        if figure:
            m = meta(name, data)
            rows.append([f"`{m.get('command', 'not recorded')}`", figure, machine_text(m.get("machine")),
                         m.get("date", "not recorded")])
    return ["## Speed", "", "*Protocol:* timings of the code as it is; nothing is chosen by them. Each row's file is "
            "`bench/results/` plus the benchmark's name.", ""] + table(["Benchmark", "Figure", "Machine", "Date"], rows)


# ---------------------------------------------------------------- the README's summary
README = ROOT / "README.md"
SUMMARY = ("<!-- results summary: written by bench/report_results.py -->", "<!-- end of results summary -->")


def readme_summary() -> list[str]:
    """The README's results summary, at most 10 lines, every number read from the files above."""
    lines = []
    paper, fid = load("reproduce_paper.json"), load("fidelity_tiny-before-rl.json")
    if paper:
        runs = paper["runs"]
        cells = [f"{e} {ms(per_seed(runs[e], RESOLVE[0]), 0)} greedy / {ms(per_seed(runs[e], RESOLVE[1]), 0)} sampled"
                 for e in ("echo", "grpo", "rloo") if e in runs]
        steps = runs[paper["estimators"][0]][0].get("steps")
        lines.append(f"- **Paper question set**, the tiny model, {steps} steps on 2 CPU cores, seeds "
                     f"{seeds_text(paper['seeds'])}: held-out resolve (%, mean ± SEM) {'; '.join(cells)}.")
    if fid:
        r = {row["estimator"]: row["pearson"] for row in fid["rows"] if row["turns"] == "all"}
        shown = [e for e in ("echo", "grpo", "rloo") if e in r]
        lines.append(f"- **Credit against the true advantage A_B** (before RL, Pearson): "
                     f"{', '.join(f'{e} {num(r[e])}' for e in shown)}; the one-step Bayesian advantage "
                     f"{num(r.get('onestep A1_B'))}. Any credit that is a function of the return alone errs by at least "
                     f"E[Var(A_B | R)] = {num(fid['floors'].get('all'))} E[A_B^2] (Theorem 3.2 (ii)).")
    final = load("binary_final.json")
    if final:
        lines.append(binary_final_summary(final))
    unseen = load("unseen_numbers.json")
    if unseen:
        lines.append(unseen_summary(unseen))
    g8 = load("reproduce_binary_60min_g8.json")
    if g8 and not final:      # the older runs' settings were chosen on held-out scores: shown only until the finals exist
        runs = g8["runs"]["echo"]
        lines.append(f"- **Binary question set**, older runs of up to 60 minutes on 2 cores: held-out resolve (%) ECHO "
                     f"{ms(per_seed(runs, RESOLVE[0]), 0)} greedy / {ms(per_seed(runs, RESOLVE[1]), 0)} sampled over "
                     f"seeds {seeds_text(g8['seeds'])}; its settings were chosen on held-out scores, so this figure is "
                     "not a clean estimate.")
    smol = load("smollm2_learning.json")
    if smol:
        steps, k = smol["steps"], min(4, len(smol["steps"]) // 2)
        mean = lambda rows: num(sum(r["reward"] for r in rows) / k)  # noqa: E731
        lines.append(f"- **SmolLM2-135M-Instruct** (LoRA) learns with ECHO on 2 CPU cores: mean reward "
                     f"{mean(steps[:k])} over its first {k} steps, {mean(steps[-k:])} over its last {k}.")
    return lines + ["", "Every figure, with its command, machine, date and protocol, is in `RESULTS.md`."]


def unseen_summary(d: dict) -> str:
    """The README's line for bench/unseen_numbers.py: ranges over the checkpoints measured."""
    cut, top, rows = d["trained_max"], d["n_max"], d["rows"]
    span = lambda k, digits=2, scale=1.0: "-".join(dict.fromkeys(num(f(r[k] for r in rows), digits, scale)  # noqa: E731
                                                                 for f in (min, max)))
    return (f"- **Why 1..{top} is out of reach** ({len(rows)} trained checkpoints): each number is one token and training "
            f"stays inside 1..{cut}, so to the trained model the tokens {cut + 1}..{top} are nearly one vector (mean pairwise "
            f"embedding cosine {span('embedding_cosine_unseen')}, against {span('embedding_cosine_trained')} for 1..{cut}); "
            f"of the numbers their questions name on 1..{top}, {span('named_share_unseen', 0, 100)}% are above {cut}, and "
            f"they resolve {span('resolve_unseen_range', 0, 100)}% of the secrets above {cut} (bisection: "
            f"{num(d['bisection']['resolve_unseen_range'], 0, 100)}).")


def correlation_text(runs: list[dict]) -> str:
    """The sampled threshold-median correlation over the seeds where it could be measured, naming
    the seeds where it could not (fewer than 3 comparisons, or one fixed threshold)."""
    unmeasured = sorted(r["seed"] for r in runs if nan(r["threshold_median_corr_sampled"]))
    text = ms([r["threshold_median_corr_sampled"] for r in runs], 2, 1)
    if unmeasured and len(unmeasured) < len(runs):
        text += f" (not measurable on seed{'s' * (len(unmeasured) > 1)} {seeds_text(unmeasured)})"
    return text


def binary_final_summary(final: dict) -> str:
    """The README's line for bench/binary_final.py: per estimator, mean +- SEM over its seeds."""
    by = {}
    for r in final["runs"]:
        by.setdefault(r["estimator"], []).append(r)
    cell = lambda runs, k: ms([r[k] for r in runs], 0)  # noqa: E731
    parts = [f"{e.upper()} {cell(rs, 'heldout_greedy')} greedy / {cell(rs, 'heldout_sampled')} sampled, 1..200 "
             f"{cell(rs, 'n200_greedy')} / {cell(rs, 'n200_sampled')}, threshold-median correlation "
             f"{correlation_text(rs)} sampled (seeds {seeds_text(sorted(r['seed'] for r in rs))})" for e, rs in by.items()]
    steps = sorted({r["steps"] for r in final["runs"]})
    return (f"- **Binary question set** (yes/no questions), the default ({'/'.join(map(str, steps))} steps), kept checkpoints on a "
            f"held-out split no setting was chosen on, resolve (%, mean ± SEM over seeds): {'; '.join(parts)}."
            + "".join(f" On split {k}, bisection resolves {num(v['bisection']['heldout'], 0, 100)} and the best fixed "
                      f"sequence {num(v['fixed_sequence']['heldout'], 0, 100)}." for k, v in final["references"].items()))


def with_summary(readme: str) -> str:
    head, rest = readme.split(SUMMARY[0], 1)
    return head + SUMMARY[0] + "\n" + "\n".join(readme_summary()) + "\n" + SUMMARY[1] + rest.split(SUMMARY[1], 1)[1]


def build() -> str:
    lines = ["# Results", "",
             "Every table below is built by `python bench/report_results.py` from the JSON files in `bench/results/`; "
             "no number is typed by hand, and running it again writes this file byte for byte "
             "(`python bench/report_results.py --check` says whether it is up to date). Each table names the command "
             "that wrote its file, the machine, the date, and how its settings were chosen: on validation secrets "
             "carved from the training secrets, with the held-out secrets only reporting, except where its protocol "
             "line says otherwise.", ""]
    for section in (section_paper, section_fidelity, section_table1, section_binary, section_smollm2, section_speed):
        lines += section()
    return "\n".join(lines).rstrip("\n") + "\n"


def main(argv=None):
    cfg = parse_config(ReportConfig, argv, description=__doc__.splitlines()[0])
    report_tables.use(cfg.results)
    text, out = build(), Path(cfg.out)
    readme = with_summary(README.read_text())
    if cfg.check:
        stale = [p for p, want in ((out, text), (README, readme)) if not p.exists() or p.read_text() != want]
        if stale:
            print(f"{' and '.join(map(str, stale))} out of date: run python bench/report_results.py", file=sys.stderr)
            sys.exit(1)
        print(f"{out} and the README's summary are up to date")
        return
    out.write_text(text)
    README.write_text(readme)
    print(f"wrote {out} and the README's results summary")


if __name__ == "__main__":
    main(sys.argv[1:])
