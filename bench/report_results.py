"""RESULTS.md, built from the JSON in bench/results: every table with its command, machine, date and
protocol, and whether the code it depends on has changed since it was measured. No number is
typed here: each is read from a file, and means +- SEM and paired t-tests are computed from
per-seed values (stats.mean_sem, stats.paired_t_test). The output depends on the files and on
git's HEAD only (no clock, fixed order and float formats), so running it twice writes the same
bytes; `--check` exits 1 if RESULTS.md or the README's summary differs from what it would write,
naming first any result whose code has changed without the text saying so (CI runs it).

    python bench/report_results.py [--check]

It also writes the README's results summary (between its two `results summary` comments) from
the same files. The binary set's sections are in bench/report_binary.py, the speed section in
bench/report_speed.py, the reading and formatting they share in bench/report_tables.py; a new
section is a function returning its lines, added to SECTIONS.

Has the code changed? Each result file records the commit of the code it measured ("commit", and
"uncommitted": {path: blob} for files that differed from it then; bench/common.code_version);
where a file does not, provenance.json gives the commit that last changed its figures, traced
from git. report_tables.DEPENDS lists, per kind of result, the source files its figures depend
on; those that differ now from what was measured are named beside the figures (the figures are
of the older code). A result kind with no DEPENDS line is an error.

Files read (in bench/results). Each carries "command", "machine" (a dict of bench/common.machine
or a sentence), "date" (ISO) and "commit"; where an older file does not, provenance.json gives
them ({"files": {FILE: {"command", "machine", "date", "commit", "commit_from", "note"?,
"checkpoint"?}}}). A file converted from an older markdown or text result also carries "source",
that file.

- reproduce_binary_60min_*.json (bench/reproduce.py): {"question_set", "tag", "estimators",
  "seeds", "window" (final-window steps), "jobs", "threads", "train_config":
  {"differs_from_default", "same_across_runs", "per_run", "presets", "resolved" (every train.py
  field on which all runs agree)}, "runs": {ESTIMATOR: [one per seed: {"run_name", "seed", "steps",
  "kept": {"step", "dir": best|checkpoint}, "final_eval" (held-out evaluation of the kept
  checkpoint: "eval/resolve_rate", "eval/sampled_resolve_rate", "eval/zero_rate",
  "eval/eliminated_mean", "eval/episode_length", ...), "last_eval", "steps_to_90",
  "steps_to_90_greedy", "train_seconds", "final_window": {METRIC: mean over the last `window`
  steps}}]}}. Converted files lack what their source did not print.
- fidelity_NAME.json (fidelity.py's fidelity.json plus command, machine, date), beside its
  fidelity_NAME.csv (the drawn turns) and .png: {"config": {"policy": "tiny" (before RL) or a
  checkpoint directory, "question_set", "secrets", "group_size", "turns", "branches",
  "alternatives", ...}, "policy_name", "batch_turns", "a_b_rms", "noise_se_mean",
  "branching_seconds", "rows": [{"estimator", "turns" ("all", "t=0", a band ...), "n", "pearson",
  "pearson_lo", "pearson_hi", "spearman", "sign", "scaled_error", "scaled_error_lo",
  "scaled_error_hi"}], "floors": {"all": E[Var(A_B | R)] / E[A_B^2], ...}}.
- fidelity_floor.json (bench/fidelity_floor.py): {"method", "draws", "files": {FIDELITY_JSON:
  {"data", "turns", "bins", "floor", "floor_lo", "floor_hi", "a_b_rms", "noise_se_mean"}}}.
- eval_paper_model_summary.json: {"command", "machine", "date", "protocol", "rows": the lines of
  an evaluate.py output directory's model_summary.jsonl ({"model_key", "group", "n_runs",
  "resolve_rate", "resolve_rate_sem", "zero_rate", "zero_rate_sem", "quality", "quality_sem",
  ...}; a language model's sampled row is its model_key + " [T=1]")}, or that list alone; beside
  eval_paper.txt, the same directory's tables.txt.
- splits.json (bench/splits.py): {"n_heldout", "splits": {SEED: {"heldout", "validation"}},
  "shared": [{"from", "to", "heldout", "validation", "training"}]}.
- bisection_behaviour_NAME.json (bench/bisection_behaviour.py), beside its .png: {"policy greedy",
  "policy sampled", "bisection (Bayes)", "random": {"comparisons", "threshold_median_corr",
  "mean_fraction_eliminated", "zero_share", ...}, "checkpoint": {"path", "played": kept|last,
  "step"}}.
- capacity_check_NAME.json (bench/capacity_check.py): {"config", "parameters", "training_states",
  "epoch_losses", "heldout", "n200": {"greedy", "sampled", "behaviour_greedy",
  "behaviour_sampled"}}.
- generalization.json (bench/generalization.py): its docstring gives the schema.
- screens.json (bench/screen.py): its docstring gives the schema.
- binary_final.json, binary_scores_NAME.json (by a script bench/generalization.py replaced):
  {"runs": [{"estimator", "seed", "steps", "changed", "kept_step", "split_seed", "universe_least",
  "train_seconds", "threads", "samples",
  "heldout_greedy", "heldout_sampled", "n200_greedy", "n200_sampled",
  "threshold_median_corr_greedy", "threshold_median_corr_sampled", "eliminated_fraction_per_turn"}],
  "paired": {ESTIMATOR: {FIGURE: {"mean_difference", "t", "p", "seeds"}}}}.
- binary_defaults.json (bench/binary_defaults.py): {"runs_dir", "rules": {RULE: window},
  "criterion", "runs": [{"name", "settings", "seed", "split_seed", "steps", "evaluations",
  "train_seconds", "kept_step", "kept_validation", "last_validation", "cross_validated": {RULE:
  score}}], "rule_means": {RULE: score}, "chosen_rule", "ranking", "chosen"}.
- smollm2_learning.json (bench/smollm2_learning.py): {"warmup", "config", "train_flags", "steps":
  [{"step", "seconds", "valid_action_rate", "reward", ...}]}; where "train_flags" is missing,
  provenance.json's note gives the flags the script passed to train.py.
- the speed files env_speed, eval_speed, rollouts, threads, ranks_speed, ranks_speed_gpu,
  gpu_step, gpu_step_lora_sweep, gpu_step_draw, gpu_step_fused, gpu_step_h200, gpu_step_cpu_small,
  profile_step, profile_step_binary, profile_step_binary_bf16, train_gpu, train_gpu_default (.json):
  as their bench scripts write them
  (train_gpu*: bench/device_runs.py, from the metrics of train.py runs on a GPU machine).
"""

import os
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench import report_tables
from bench.common import RESULTS
from bench.gpu_step import GpuStepConfig
from bench.report_binary import section_binary
from bench.report_generalization import (
    FILE,
    generalization_summary,
    row_changes,
    section_generalization,
)
from bench.report_screens import section_screens
from bench.report_speed import paper_hours, section_speed
import train
from bench.report_tables import (
    RESOLVE,
    code_changes,
    load,
    machine_text,
    meta,
    missing,
    ms,
    named,
    nan,
    num,
    per_seed,
    provenance_line,
    seeds_text,
    table,
)
from cli import arg, parse_config

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class ReportConfig:
    check: bool = arg(
        False,
        "write nothing; exit 1 if RESULTS.md or the README's summary differs from what this "
        "script would write",
    )
    out: str = arg(str(ROOT / "RESULTS.md"), "the report", writes="file")
    readme: str = arg(
        str(ROOT / "README.md"), "the README whose results summary is written", writes="file"
    )
    results: str = arg(RESULTS, "the folder of result files it reads")
    repo: str = arg(str(ROOT), "the git checkout whose HEAD is the code as it is now")


# ---------------------------------------------------------------- fidelity, Table 1
def section_fidelity() -> list[str]:
    lines = [
        "## Credit measured against the true advantage (fidelity)",
        "",
        "The true per-turn Bayesian advantage A_B(h_t, a_t) is measured by branching "
        "(draw the secret from the exact belief b_t, replay h_t, take a_t or an alternative, "
        "play on), and every estimator's credit for the same turns is set against it.",
        "",
    ]
    found = names("fidelity_*.json", "fidelity_floor.json")
    if not found:
        return lines + missing("fidelity_NAME.json", "python fidelity.py")
    files = sorted(
        ((n, load(n)) for n in found), key=lambda f: (f[1]["config"]["policy"] != "tiny", f[0])
    )
    floors = load("fidelity_floor.json") or {"files": {}}

    def label(d):
        return "before RL" if d["config"]["policy"] == "tiny" else f"`{d['config']['policy']}`"

    for n, d in files:
        c, stem = d["config"], n[: -len(".json")]
        companions = "; ".join(
            f"{what} {named(stem + ext)}"
            for what, ext in (("*Turns:*", ".csv"), ("*Figure:*", ".png"))
            if (report_tables.DIR / (stem + ext)).exists()
        )
        lines += [
            f"{label(d)}: {provenance_line(n, d)} {c['secrets']} secrets x {c['group_size']} "
            f"rollouts ({d['batch_turns']} turns) on the {c['question_set']} set; "
            f"A_B of {next((r['n'] for r in d['rows'] if r['turns'] == 'all'), c['turns'])} drawn "
            f"turns (K = {c['branches']} secrets per action, M = {c['alternatives']} "
            f"alternatives): RMS A_B {num(d['a_b_rms'])}, mean branching standard error "
            f"{num(d['noise_se_mean'])}." + (f" {companions}." if companions else ""),
            "",
        ]
    interval = (
        ""
        if not floors["files"]
        else f" [{floors['method']}, {floors['draws']} draws: bench/fidelity_floor.py]"
    )
    if floors["files"]:
        lines += [f"The floor's interval: {provenance_line('fidelity_floor.json', floors)}", ""]
    lines += [
        "*Protocol:* one batch per policy, every estimator's credit for the same turns; "
        "nothing here is trained or chosen. Pearson correlation with A_B over all drawn turns "
        "[bootstrap 95% over the turns]. The last row is Theorem 3.2 (ii)'s floor for any credit "
        "that is a function of the return alone, E[Var(A_B | R)] / E[A_B^2], "
        "estimated on the same turns (within-return-bin variance of the measured A_B less the "
        f"branching noise){interval}: a point estimate from that many turns, not a bound.",
        "",
    ]

    def overall(d, e):
        return next((r for r in d["rows"] if r["estimator"] == e and r["turns"] == "all"), None)

    def cell(r):
        if r is None:
            return "n/a"
        return f"{num(r['pearson'])} [{num(r['pearson_lo'])}, {num(r['pearson_hi'])}]"

    estimators = dict.fromkeys(r["estimator"] for _, d in files for r in d["rows"])
    rows = [[e] + [cell(overall(d, e)) for _, d in files] for e in estimators]
    rows.append(
        ["floor of any return-only credit, E[Var(A_B given R)] / E[A_B^2]"]
        + [floor_text(d, floors["files"].get(n)) for n, d in files]
    )
    return lines + table(["Estimator"] + [label(d) for _, d in files], rows)


def names(pattern: str, *but: str) -> list[str]:
    return [n for n in report_tables.names(pattern) if n not in but]


def floor_text(d: dict, interval: dict | None) -> str:
    """The floor of a fidelity file, with its bootstrap interval where bench/fidelity_floor.py gave
    one."""
    point = num(d["floors"].get("all"))
    return (
        point
        if interval is None
        else f"{point} [{num(interval['floor_lo'])}, {num(interval['floor_hi'])}]"
    )


def section_table1() -> list[str]:
    lines = ["## Table 1 of the paper for every policy (paper set)", ""]
    data = load("eval_paper_model_summary.json")
    if data is None:
        return lines + missing(
            "eval_paper_model_summary.json",
            "python evaluate.py --question-set paper --policies ... "
            "--out DIR, then DIR/model_summary.jsonl as a JSON list",
        )
    by_key = {r["model_key"]: r for r in (data["rows"] if isinstance(data, dict) else data)}

    # mean +- SEM over runs; blank where the policy has no such row
    def pair(r, key, digits, scale):
        if r is None:
            return ""
        sem = (
            ""
            if nan(r.get(key)) or nan(r.get(key + "_sem"))
            else f" ± {num(r[key + '_sem'], digits, scale)}"
        )
        return num(r.get(key), digits, scale) + sem

    rows = [
        [f"`{k}`"]
        + [
            pair(r, key, d, s)
            for key, d, s in (("resolve_rate", 1, 100), ("zero_rate", 1, 100), ("quality", 3, 1))
            for r in (by_key[k], by_key.get(k + " [T=1]"))
        ]
        for k in by_key
        if not k.endswith(" [T=1]")
    ]
    how = data.get("protocol", "") if isinstance(data, dict) else ""
    tables = (
        f" evaluate.py's tables.txt of the same evaluation: {named('eval_paper.txt')}."
        if (report_tables.DIR / "eval_paper.txt").exists()
        else ""
    )
    lines += [
        provenance_line("eval_paper_model_summary.json", data) + tables,
        "",
        f"*Protocol:* {how}. Policies are played as they are: nothing is chosen here. "
        "Mean ± SEM over runs; Resolve and Zero in %.",
        "",
    ]
    return lines + table(
        [
            "Policy",
            "Resolve greedy",
            "Resolve sampled",
            "Zero greedy",
            "Zero sampled",
            "Qual. greedy",
            "Qual. sampled",
        ],
        rows,
    )


# ---------------------------------------------------------------- SmolLM2
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
    mean = lambda rows, key: sum(r[key] for r in rows) / k
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
    lines = ["## SmolLM2-135M-Instruct with ECHO on CPU cores: one seed, no control", ""]
    data = load("smollm2_learning.json")
    if data is None:
        return lines + missing("smollm2_learning.json", "python bench/smollm2_learning.py")
    c, w, steps, m = (
        data["config"],
        data["warmup"],
        data["steps"],
        meta("smollm2_learning.json", data),
    )
    flags, f = smollm2_flags(m, data), smollm2_figures(data)
    change = lambda key, label: f"{label} {num(f[key + '_first'], 3)} -> {num(f[key + '_last'], 3)}"
    batch = (
        f"{c['secrets_per_step']} secrets x {flags['--group-size']} rollouts"
        if "--group-size" in flags
        else f"{c['secrets_per_step']} secrets"
    )
    heldout = f" on {flags['--n-heldout']} held-out secrets" if "--n-heldout" in flags else ""
    lines += [
        provenance_line("smollm2_learning.json", data),
        "",
        "*Protocol:* LoRA on SmolLM2-135M-Instruct, the format warm-up, "
        f"then ECHO on secrets 1..{c['n_max']}, {batch} a step, lr {c['lr']:g}, "
        f"{c['minutes']:g}-minute limit; settings set for speed on this machine, "
        f"not chosen on any score. One seed, {f['n']} steps, and no control run "
        "(no other estimator, no run without RL), so nothing here separates what ECHO taught from "
        "what the format warm-up and the valid-action rate changed: "
        "read it as a run of the code on a real instruct model, not as evidence of learning. "
        f"Held-out resolve is of the step's policy{heldout}; nothing is kept. "
        f"Warm-up: valid actions {num(w['valid_before'], 3)} -> {num(w['valid_after'], 3)} "
        f"({w['seconds']:g} s).",
        "",
    ]
    lines += table(
        [
            "Step",
            "s/step",
            "Valid actions",
            "Reward",
            "Eliminated (fraction)",
            "Resolved",
            "Ep. length",
            "Held-out greedy",
            "Held-out sampled",
        ],
        [
            [
                r["step"],
                r["seconds"],
                r["valid_action_rate"],
                r["reward"],
                r["fraction_eliminated"],
                r["resolve_rate"],
                r["episode_length"],
                num(r["heldout_greedy"]),
                num(r["heldout_sampled"]),
            ]
            for r in steps
        ],
    )
    return lines + [
        f"Mean of the first {f['k']} steps -> the last {f['k']} (training batches, sampled): "
        f"{change('reward', 'reward')}, {change('valid_action_rate', 'valid-action rate')}, "
        f"{change('resolve_rate', 'resolve rate')}, {change('episode_length', 'episode length')}; "
        f"the reward of single steps ranges {num(f['reward_min'])}-{num(f['reward_max'])}.",
        "",
    ]


# ---------------------------------------------------------------- the README's summary
SUMMARY = (
    "<!-- results summary: written by bench/report_results.py -->",
    "<!-- end of results summary -->",
)


OLDER = " Measured on older code: RESULTS.md names the files changed since."


def older_code(name: str, data) -> str:
    """The README's words for a figure whose code has changed since (RESULTS.md names the files)."""
    return OLDER if code_changes(name, data) else ""


def readme_summary() -> list[str]:
    """The README's results summary, at most 10 lines, every number read from the files above."""
    lines = []
    fid, floors = load("fidelity_tiny-before-rl.json"), load("fidelity_floor.json") or {"files": {}}
    if fid:
        r = {row["estimator"]: row for row in fid["rows"] if row["turns"] == "all"}
        shown = [e for e in ("echo", "grpo", "rloo", "onestep A1_B") if e in r]
        interval = floors["files"].get("fidelity_tiny-before-rl.json")
        floor = f"estimated at {num(fid['floors'].get('all'))} E[A_B^2]" + (
            f" [bootstrap 95% over return bins: {num(interval['floor_lo'])}, "
            f"{num(interval['floor_hi'])}]"
            if interval
            else " (a point estimate)"
        )
        lines.append(
            "- **Credit against the true advantage A_B** (the tiny model before RL, one batch, "
            f"A_B measured by branching on {r['echo']['n']} turns; Pearson [bootstrap 95%]): "
            + ", ".join(
                f"{e} {num(r[e]['pearson'])} [{num(r[e]['pearson_lo'])}, {num(r[e]['pearson_hi'])}]"
                for e in shown
            ).replace("onestep A1_B", "the one-step Bayesian advantage")
            + ". Theorem 3.2 (ii): a credit that is a function of the return alone errs by at "
            f"least E[Var(A_B | R)]; on these turns that floor is {floor}, "
            f"with branching noise (mean standard error {num(fid['noise_se_mean'])}) "
            f"of the order of A_B itself (RMS {num(fid['a_b_rms'])})."
            + older_code("fidelity_tiny-before-rl.json", fid)
        )
    general = load(FILE)
    if general:
        # a row's own code too
        older = code_changes(FILE, general) or any(row_changes(r) for r in general["runs"])
        lines.append(generalization_summary(general) + (OLDER if older else ""))
    final = load("binary_final.json")
    if final:
        splits = load("splits.json")
        lines.append(
            binary_final_summary(final, splits)
            + (
                older_code("binary_final.json", final)
                or splits
                and older_code("splits.json", splits)
                or ""
            )
        )
    g8 = load("reproduce_binary_60min_g8.json")
    # the older runs' settings were chosen on held-out scores: shown only until the finals exist
    if g8 and not final:
        runs, limit = g8["runs"]["echo"], g8["train_config"]["resolved"]["time_limit_min"]
        lines.append(
            f"- **Binary question set**, older runs of up to {limit:g} minutes "
            f"({machine_text(meta('reproduce_binary_60min_g8.json', g8).get('machine'))}): "
            f"held-out resolve (%) ECHO {ms(per_seed(runs, RESOLVE[0]), 0)} greedy / "
            f"{ms(per_seed(runs, RESOLVE[1]), 0)} sampled over seeds {seeds_text(g8['seeds'])}; "
            "its settings were chosen on held-out scores, so this figure is not a clean estimate."
        )
    smol = load("smollm2_learning.json")
    if smol:
        lines.append(smollm2_summary(smol) + older_code("smollm2_learning.json", smol))
    # the default run on the current engine where it has been measured, else the older file's
    gpu_runs = "train_gpu_default.json" if load("train_gpu_default.json") else "train_gpu.json"
    step, runs = load("gpu_step.json"), load(gpu_runs)
    if step and runs and step.get("device", "cpu") != "cpu":
        lines.append(
            gpu_summary(step, runs, load("train_speed_cold.json"))
            + (older_code("gpu_step.json", step) or older_code(gpu_runs, runs))
        )
    return lines + [
        "",
        "Every figure, with its command, machine, date, protocol and whether its code has changed "
        "since, is in `RESULTS.md`.",
    ]


def cpu_run_like(runs: dict, default: dict, cold: dict | None) -> dict | None:
    """The CPU's cold run (bench/train_speed.py --cold) of the GPU's default run: the one of the
    same code where both files record it (the same command then plays the same settings), else
    the one of as many steps (the defaults may have moved since)."""
    if not cold:
        return None
    commit, cold_meta = runs.get("commit") or "", meta("train_speed_cold.json", cold)
    revisions = (
        ((cold_meta.get("commit") or ""), cold["current"]),
        (cold.get("baseline_revision") or "", cold["baseline"]),
    )
    if commit and all(rev for rev, _ in revisions):
        return next(
            (r for rev, r in revisions if commit.startswith(rev) or rev.startswith(commit)), None
        )
    return next(
        (r for _, r in revisions if (r.get("train_config") or {}).get("steps") == default["steps"]),
        None,
    )


def gpu_summary(step: dict, runs: dict, cold: dict | None) -> str:
    """The README's line for the GPU files: the default run there (beside the CPU's, where measured)
    and the paper's step on its model's shape, with what that shape's random weights mean."""
    default = next(r for r in runs["runs"] if r["command"] == "python train.py --estimator echo")
    same = cpu_run_like(runs, default, cold)
    cpu = (
        f", beside {same['process_wall']} s on "
        f"{machine_text(meta('train_speed_cold.json', cold).get('machine'))}"
        if same
        else ""
    )
    # the settings of that run that are not today's defaults: the command alone no longer plays it
    today, then = vars(train.TrainConfig()), (same or {}).get("train_config") or {}
    moved = [
        f"`--{k.replace('_', '-')} {then[k]}`"
        for k in (
            "ppo_epochs",
            "secrets_per_step",
            "prefix_turns",
            "refusal_rate",
            "candidate_format",
            "top_p",
        )
        if k in then and then[k] != today[k]
    ]
    settings = f" with {' '.join(moved)}, the defaults of the code it ran" if moved else ""
    # MODE/fast[/micro-batch-K][/compiled-update]
    modes = {m: v for m, v in step["modes"].items() if m.split("/")[1] == "fast"}

    def label(m):
        parts = m.split("/")
        mode = parts[0].replace("full", "full fine-tuning").replace("lora", "LoRA")
        return mode + "".join(
            f" (update micro-batch {k.removeprefix('micro-batch-')})"
            if k.startswith("micro-batch-")
            else " (update's layers compiled)"
            for k in parts[2:]
        )

    too_big = [label(m) for m, v in modes.items() if v.get("out_of_memory")]
    timed = "; ".join(
        f"{label(m)} {v['step_s']} s (rollout {v['rollout_s']} s, scoring {v['scoring_s']} s, "
        f"update {v['update_s']} s; decode {v['decode_tokens_per_s']:,.0f} tokens/s, "
        f"{v['percent_of_bandwidth_bound']:.0f}% of the memory-bandwidth bound; "
        f"peak {v['peak_gpu_memory_gb']} GB; {paper_hours(v['step_s'])})"
        for m, v in modes.items()
        if not v.get("out_of_memory")
    )
    timed += "".join(f"; {m} did not fit in the GPU's memory" for m in too_big)
    return (
        f"- **On one {step['device']}**, one run each: the tiny run `{default['command']}` "
        f"({default['steps']} steps{settings}; from an empty cache) "
        f"reached held-out resolve {num(default['final_greedy_resolve'])} greedy / "
        f"{num(default['final_sampled_resolve'])} sampled in {default['process_wall']:.0f} s "
        f"(its steps and evaluations {default['rl_seconds']:.0f} s){cpu}. "
        f"One step of the paper's batch ({step['config']['secrets']} x "
        f"{step['config']['group_size']}, up to {step['config']['max_new_tokens']} new tokens, "
        f"the update in micro-batches of {GpuStepConfig.micro_batch} unless named) "
        f"on {step['shape']}'s shape with random weights, which write every token and play all 10 "
        f"turns: {timed}. The paper's model itself has not been trained on a GPU."
    )


def smollm2_summary(d: dict) -> str:
    """The README's line for bench/smollm2_learning.py: what ran and what moved, with no verdict."""
    m = meta("smollm2_learning.json", d)
    flags, f, c = smollm2_flags(m, d), smollm2_figures(d), d["config"]
    group = f" x {flags['--group-size']} rollouts" if "--group-size" in flags else ""
    return (
        f"- **SmolLM2-135M-Instruct** (LoRA, ECHO) on {machine_text(m.get('machine'))}: "
        f"one seed, {f['n']} steps of {c['secrets_per_step']} secrets{group} on secrets "
        f"1..{c['n_max']}, no control run. Mean reward {num(f['reward_first'])} over its first "
        f"{f['k']} steps, {num(f['reward_last'])} over its last {f['k']} "
        f"(single steps {num(f['reward_min'])}-{num(f['reward_max'])}), "
        f"while the valid-action rate went from {num(f['valid_action_rate_first'])} to "
        f"{num(f['valid_action_rate_last'])}: a run of the code on a real instruct model, "
        "not evidence that it learns the game."
    )


def correlation_text(runs: list[dict]) -> str:
    """The sampled threshold-median correlation over the seeds where it could be measured, naming
    the seeds where it could not (fewer than 3 comparisons, or one fixed threshold)."""
    unmeasured = sorted(r["seed"] for r in runs if nan(r["threshold_median_corr_sampled"]))
    text = ms([r["threshold_median_corr_sampled"] for r in runs], 2, 1)
    if unmeasured and len(unmeasured) < len(runs):
        text += f" (not measurable on seed{'s' * (len(unmeasured) > 1)} {seeds_text(unmeasured)})"
    return text


def split_text(final: dict, splits: dict | None) -> str:
    """Which split the finals were scored on, and what of it earlier choices saw (splits.json):
    the held-out secrets it shares with split 0, on whose held-out scores settings were chosen."""
    seeds = sorted({r.get("split_seed") for r in final["runs"]} - {None})
    if len(seeds) != 1 or splits is None:
        return (
            f"the held-out secrets of split{'s' * (len(seeds) > 1)} {seeds_text(seeds)}"
            if seeds
            else "held-out secrets"
        )
    shared = next(
        (s["heldout"] for s in splits["shared"] if s["from"] == 0 and s["to"] == seeds[0]), None
    )
    text = f"split {seeds[0]}'s {splits['n_heldout']} held-out secrets"
    return text + (
        f", {len(shared)} of which ({seeds_text(shared)}) are also split 0's, "
        "on whose held-out scores the preset's passes of Eq. 2 were chosen"
        if shared
        else ""
    )


def binary_final_summary(final: dict, splits: dict | None = None) -> str:
    """The README's line for binary_final.json: per estimator, mean +- SEM over its seeds."""
    by = {}
    for r in final["runs"]:
        by.setdefault(r["estimator"], []).append(r)
    cell = lambda runs, k: ms([r[k] for r in runs], 0)
    parts = [
        f"{e.upper()} {cell(rs, 'heldout_greedy')} greedy / {cell(rs, 'heldout_sampled')} sampled, "
        f"1..200 {cell(rs, 'n200_greedy')} / {cell(rs, 'n200_sampled')}, "
        f"threshold-median correlation {correlation_text(rs)} sampled "
        f"(seeds {seeds_text(sorted(r['seed'] for r in rs))})"
        for e, rs in by.items()
    ]
    steps = sorted({r["steps"] for r in final["runs"]})
    minutes = sorted(r["train_seconds"] / 60 for r in final["runs"] if r.get("train_seconds"))
    threads = sorted({r["threads"] for r in final["runs"] if r.get("train_seconds")}, key=str)
    took = (
        f", trained in {minutes[0]:.0f}-{minutes[-1]:.0f} minutes a run at "
        f"{'/'.join(map(str, threads))} thread{'s' * (threads != [1])}"
        if minutes
        else ""
    )
    return (
        "- **Binary question set** (yes/no questions), the default "
        f"({'/'.join(map(str, steps))} steps){took}; kept checkpoints played on "
        f"{split_text(final, splits)}. Resolve (%, mean ± SEM over seeds): {'; '.join(parts)}."
        + "".join(
            f" On split {k}, bisection resolves {num(v['bisection']['heldout'], 0, 100)} and the "
            f"best fixed sequence {num(v['fixed_sequence']['heldout'], 0, 100)}."
            for k, v in final["references"].items()
        )
    )


def with_summary(readme: str) -> str:
    head, rest = readme.split(SUMMARY[0], 1)
    return (
        head
        + SUMMARY[0]
        + "\n"
        + "\n".join(readme_summary())
        + "\n"
        + SUMMARY[1]
        + rest.split(SUMMARY[1], 1)[1]
    )


# ---------------------------------------------------------------- the file, and the check
SECTIONS = [
    section_fidelity,
    section_generalization,
    section_screens,
    section_table1,
    section_binary,
    section_smollm2,
    section_speed,
]


def build() -> str:
    lines = [
        "# Results",
        "",
        "Every table below is built by `python bench/report_results.py` from the JSON files in "
        "`bench/results/`; no number is typed by hand, and running it again writes this file byte "
        "for byte (`python bench/report_results.py --check` says whether it is up to date). "
        "Each table names the command that wrote its file, the machine, the date, "
        "and how its settings were chosen: on validation secrets carved from the training "
        "secrets, with the held-out secrets only reporting, except where its protocol line says "
        "otherwise. Each file records the commit of the code it measured; "
        "where a file it depends on has changed since (in what it runs: "
        "an edit of comments, docstrings or layout alone is no change), the table says which "
        '("Code changed since"), and its figures are of the older code.',
        "",
    ]
    for section in SECTIONS:
        lines += section()
    return "\n".join(lines).rstrip("\n") + "\n"


def render(readme: str, changes: bool = True) -> tuple[str, str]:
    """(RESULTS.md, the README with its summary) as they should read; with `changes` False, as they
    would read if no code had changed since any result (the lines that differ carry the marks)."""
    report_tables.IGNORE_CHANGES = not changes
    try:
        return build(), with_summary(readme)
    finally:
        report_tables.IGNORE_CHANGES = False


def unmarked(want: tuple[str, str], have: tuple[str, str], quiet: tuple[str, str]) -> list[str]:
    """The lines that say a result's code has changed (in `want`, not in `quiet`) and that the
    current text (`have`) lacks."""
    marked = [
        line
        for w, q in zip(want, quiet)
        for line in w.splitlines()
        if line not in set(q.splitlines())
    ]
    current = {line for h in have for line in h.splitlines()}
    return [line for line in marked if line not in current]


def main(argv=None):
    cfg = parse_config(ReportConfig, argv, description=__doc__.splitlines()[0])
    report_tables.use(cfg.results, cfg.repo)
    out, readme_path = Path(cfg.out), Path(cfg.readme)
    readme = readme_path.read_text()
    text, new_readme = render(readme)
    if cfg.check:
        have = (out.read_text() if out.exists() else "", readme)
        if (text, new_readme) == have:
            print(f"{out} and the README's summary are up to date")
            return
        unsaid = unmarked((text, new_readme), have, render(readme, changes=False))
        if unsaid:
            print(
                "the code of these results has changed since they were measured, "
                "and the text does not say so:",
                *(f"  {line[:200]}" for line in unsaid),
                sep="\n",
                file=sys.stderr,
            )
        print(
            f"{out} or {readme_path}'s summary is out of date: run python bench/report_results.py",
            file=sys.stderr,
        )
        sys.exit(1)
    out.write_text(text)
    readme_path.write_text(new_readme)
    print(f"wrote {out} and the README's results summary")


if __name__ == "__main__":
    main(sys.argv[1:])
