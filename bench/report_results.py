"""RESULTS.md, built from the JSON in bench/results: every table with its command, machine, date and
protocol. No number is typed here: each is read from a file, and means +- SEM and paired t-tests
are computed from per-seed values (stats.mean_sem, stats.paired_t_test). The output depends on
the files only (no clock, fixed order and float formats), so running it twice writes the same
bytes; `--check` exits 1 if RESULTS.md differs from what it would write (CI runs it).

    python bench/report_results.py [--check]

It also writes the README's results summary (between its two `results summary` comments) from
the same files.

Files read (in bench/results). Each carries "command", "machine" (a dict of bench/common.machine
or a sentence) and "date" (ISO); where an older file does not, provenance.json gives them
({"files": {FILE: {"command", "machine", "date", "checkpoint"?}}}). A file converted from an
older markdown or text result also carries "source", that file.

- reproduce_paper.json, reproduce_binary*.json (bench/reproduce.py): {"question_set", "tag",
  "estimators", "seeds", "window" (final-window steps), "jobs", "threads", "runs_trained",
  "wall_seconds", "setting"? (a label: these runs are a row of the settings-tried table),
  "train_config": {"differs_from_default", "same_across_runs", "per_run", "presets",
  "resolved" (every train.py field on which all runs agree)}, "runs": {ESTIMATOR: [one per seed:
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
- binary_explore.json: {"seeds", "minutes", "train_config": {"resolved"}, "scored_on", "rows":
  [{"setting", "flags", "greedy", "sampled", "sampled_se"}], "references": {"random",
  "fixed_sequence", "bisection"}}.
- bisection_behaviour_NAME.json (bench/bisection_behaviour.py): {"policy greedy", "policy sampled",
  "bisection (Bayes)", "random": {"comparisons", "threshold_median_corr",
  "mean_fraction_eliminated", "zero_share", ...}, "checkpoint": {"path", "played": kept|last,
  "step"}}.
- capacity_check_NAME.json (bench/capacity_check.py): {"config", "parameters", "training_states",
  "epoch_losses", "heldout", "n200": {"greedy", "sampled", "behaviour_greedy", "behaviour_sampled"}}.
- binary_final.json, binary_scores_NAME.json (bench/binary_final.py): {"runs": [{"estimator",
  "seed", "steps", "changed", "kept_step", "split_seed", "universe_least", "train_seconds", "threads",
  "samples",
  "heldout_greedy", "heldout_sampled", "n200_greedy", "n200_sampled", "threshold_median_corr_greedy",
  "threshold_median_corr_sampled", "eliminated_fraction_per_turn"}], "paired": {ESTIMATOR: {FIGURE:
  {"mean_difference", "t", "p", "seeds"}}}}.
- smollm2_learning.json, and the speed files env_speed, eval_speed, rollouts, threads,
  ranks_speed, ranks_speed_gpu, gpu_step, gpu_step_cpu_small, profile_step, profile_step_binary,
  profile_step_binary_bf16, train_cuda_summary (.json): as their bench scripts (and train.py's
  summary.json) write them.
"""
import json
import math
import os
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench.common import RESULTS  # noqa: E402
from cli import arg, parse_config  # noqa: E402
from stats import mean_sem, paired_t_test  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DIR, PROVENANCE = Path(RESULTS), {}     # the folder read, and its provenance.json (set in main)
PAPER_SETTINGS = ("train.py's paper-set defaults: the paper's values where it gives them (G, clip, temperature); the "
                  "tiny model's size and optimiser settings were set while building it by looking at held-out play of "
                  "seeds 0-2, not on validation secrets")


@dataclass
class ReportConfig:
    check: bool = arg(False, "write nothing; exit 1 if RESULTS.md differs from what this script would write")
    out: str = arg(str(ROOT / "RESULTS.md"), "the report", writes="file")
    results: str = arg(RESULTS, "the folder of result files it reads")


# ---------------------------------------------------------------- reading and formatting
def load(name: str):
    path = DIR / name
    return json.loads(path.read_text()) if path.exists() else None


def meta(name: str, data) -> dict:
    """command, machine, date (and checkpoint) of a file: its own, else provenance.json's."""
    own = {k: data[k] for k in ("command", "machine", "date", "checkpoint", "source")
           if isinstance(data, dict) and k in data}
    return {**PROVENANCE.get(name, {}), **own}


def machine_text(m) -> str:
    if isinstance(m, dict):
        gpu = f", {m['gpu']}" if m.get("gpu") else ""
        return f"{m['cpus']} CPU cores ({m['machine']}){gpu}, torch {m['torch']}"
    return m or "not recorded"


def provenance_line(name: str, data) -> str:
    m = meta(name, data)
    source = f", converted from `{m['source']}`" if "source" in m else ""
    note = f" *Note:* {data['note']}." if isinstance(data, dict) and data.get("note") else ""
    return (f"*Command:* `{m.get('command', 'not recorded')}`. *Machine:* {machine_text(m.get('machine'))}. "
            f"*Date:* {m.get('date', 'not recorded')}. *File:* `bench/results/{name}`{source}.{note}")


def missing(name: str, command: str) -> list[str]:
    return [f"*Not measured yet:* `bench/results/{name}` does not exist; `{command}` writes it.", ""]


def nan(x) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def num(x, digits=2, scale=1.0) -> str:
    return "n/a" if nan(x) else f"{x * scale:.{digits}f}"


def ms(values, digits=1, scale=100.0) -> str:
    """mean +- SEM over seeds of per-seed values."""
    mean, sem = mean_sem([v for v in values if not nan(v)])
    return "n/a" if nan(mean) else num(mean, digits, scale) + ("" if nan(sem) else f" ± {num(sem, digits, scale)}")


def pval(p) -> str:
    return "n/a" if nan(p) else f"{p:.2g}"


def t_test_text(t, p) -> str:
    """A paired t-test's cell; where every seed differs by the same amount the test is undefined."""
    if nan(t) and p == 1.0:
        return "no difference on any seed"
    if isinstance(t, float) and math.isinf(t):
        return "the same difference on every seed (no spread: t undefined)"
    return f"t = {num(t)}, p = {pval(p)}"


def table(header: list, rows: list) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)] + \
           ["| " + " | ".join(str(c) for c in r) + " |" for r in rows] + [""]


def per_seed(runs: list, key: str) -> list:
    """One run per seed: its held-out evaluation of `key` (None where it has none)."""
    return [(r.get("final_eval") or {}).get(key) for r in runs]


def seeds_text(seeds) -> str:
    return ", ".join(str(s) for s in seeds)


def train_flags(command: str) -> str:
    """The --train-flags of a bench/reproduce.py command ('' if none)."""
    words = shlex.split(command.split(" (")[0]) if command else []
    return next((words[i + 1] for i, w in enumerate(words[:-1]) if w == "--train-flags"), "")


# ---------------------------------------------------------------- reproductions
COLUMNS = [("eval/resolve_rate", "Resolve greedy", 1, 100), ("eval/sampled_resolve_rate", "Resolve sampled", 1, 100),
           ("eval/zero_rate", "Zero", 1, 100), ("eval/eliminated_mean", "Elim./turn", 2, 1),
           ("eval/episode_length", "Ep. length", 2, 1)]
FINAL_WINDOW = [("clue/reward", "Reward mean", 1), ("clue/normalized_reward", "Normalized reward", 1),
                ("clue/episode_resolve_rate", "Episode resolve rate (%)", 100),
                ("clue/eliminated_mean", "Mean eliminated candidates", 1),
                ("clue/redundancy_rate", "Redundancy rate (%)", 100), ("clue/episode_length", "Mean episode length", 1),
                ("clue/turn_resolve_rate", "Turn resolve rate (%)", 100), ("clue/turns_saved", "Turns saved", 1),
                ("train/entropy", "Entropy", 1)]
RESOLVE = ("eval/resolve_rate", "eval/sampled_resolve_rate")


def played(resolved: dict) -> str:
    """Which checkpoint of each run the held-out figures are of, and how it was chosen."""
    n = resolved.get("validation_secrets", 0)
    if not n:
        return "each run's last checkpoint (no choice made on any secrets)"
    w = resolved.get("validation_window", 1)
    rule = "its best single evaluation" if w == 1 else f"the best mean of {w} evaluations in a row"
    return f"each run's kept checkpoint, chosen on {n} validation secrets carved from the training secrets ({rule})"


def protocol(data: dict, chosen: str) -> str:
    r = data["train_config"].get("resolved", {})
    sampled = f" and sampled at T = 1 ({r['eval_samples']} episodes per secret)" if r.get("eval_samples") else " and sampled"
    return (f"*Protocol:* settings: {chosen}. Reported: {played(r)}, played on the {r.get('n_heldout', 'held-out')} "
            f"held-out secrets greedily{sampled}; the held-out secrets only report. Mean ± SEM over seeds "
            f"{seeds_text(data['seeds'])}, rates in %.")


def reproduction_table(data: dict) -> list[str]:
    """Mean +- SEM over seeds of what every run has; per-seed steps; paired t-tests of the first
    estimator against each other."""
    runs, first = data["runs"], data["estimators"][0]
    every = lambda ok: all(ok(r) for rs in runs.values() for r in rs)  # noqa: E731
    listed = lambda rs, f: ", ".join(str(f(r)) for r in rs)  # noqa: E731
    cols = [c for c in COLUMNS if every(lambda r: (r.get("final_eval") or {}).get(c[0]) is not None)]
    extra = [(label, cell) for label, ok, cell in [
        ("Kept step (per seed)", every(lambda r: (r.get("kept") or {}).get("dir") == "best"),
         lambda rs: listed(rs, lambda r: r["kept"]["step"])),
        ("Steps run (per seed)", every(lambda r: r.get("steps")), lambda rs: listed(rs, lambda r: r["steps"])),
        ("Steps to 90% sampled (per seed)", every(lambda r: "steps_to_90" in r),
         lambda rs: listed(rs, lambda r: r["steps_to_90"] or "never")),
        ("Train time (s)", every(lambda r: r.get("train_seconds")),
         lambda rs: ms([r["train_seconds"] for r in rs], 0, 1))] if ok]
    rows = [[est] + [ms(per_seed(rs, key), d, s) for key, _, d, s in cols] + [cell(rs) for _, cell in extra]
            for est, rs in runs.items()]
    lines = table(["Estimator"] + [c[1] for c in cols] + [label for label, _ in extra], rows)
    seeds = "; ".join(f"{est} " + ", ".join(f"{num(g, 1, 100)} / {num(s, 1, 100)}" for g, s in
                                            zip(*(per_seed(rs, k) for k in RESOLVE))) for est, rs in runs.items())
    lines += [f"Per seed, held-out resolve greedy / sampled (%): {seeds}.", ""]
    tests = [[f"{first} vs {other}"] + [t_test_text(t, p) for t, p in
                                        (paired_t_test(per_seed(runs[first], k), per_seed(runs[other], k)) for k in RESOLVE)]
             for other in data["estimators"][1:]]
    return lines + (table(["Paired t-test over seeds", "greedy resolve", "sampled resolve"], tests) if tests else [])


def final_window(data: dict, first: str, second: str) -> list[str]:
    """tab:echo_grpo_final_window_stats: per seed the mean of each training metric over the last
    `window` steps (from the JSON), then mean +- SEM over seeds, the difference, a paired t-test."""
    rows = []
    for key, label, scale in FINAL_WINDOW:
        a, b = ([r["final_window"][key] for r in data["runs"][e]] for e in (first, second))
        rows.append([label, ms(a, 3, scale), ms(b, 3, scale), num(mean_sem(a)[0] - mean_sem(b)[0], 3, scale),
                     pval(paired_t_test(a, b)[1])])
    return [f"Final window (tab:echo_grpo_final_window_stats): per seed the mean of each training metric over the last "
            f"{data['window']} of {data['runs'][first][0].get('steps')} steps (sampled training batches), then mean ± "
            "SEM over seeds; paired t-test over seeds.", ""] + \
        table(["Metric", first, second, "Difference", "Paired t-test p"], rows)


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
    names = sorted(p.name for p in DIR.glob("fidelity_*.json"))
    if not names:
        return lines + missing("fidelity_NAME.json", "python fidelity.py")
    files = sorted(((n, load(n)) for n in names), key=lambda f: (f[1]["config"]["policy"] != "tiny", f[0]))
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
def section_binary() -> list[str]:
    lines = ["## The binary question set", ""]
    g8, explore = load("reproduce_binary_60min_g8.json"), load("binary_explore.json")
    if explore:
        ref = {k: num(v, 1, 100) for k, v in explore["references"].items()}
        lines += [f"Only yes/no questions are answered. For reference (`binary_explore.json`): bisection resolves "
                  f"{ref['bisection']}% of the held-out secrets, the best belief-agnostic fixed sequence "
                  f"{ref['fixed_sequence']}%, random questions {ref['random']}%.", ""]
    lines += section_final()
    if g8 is None:
        return lines + missing("reproduce_binary_60min_g8.json", "python bench/reproduce.py --question-set binary "
                                                                  "--estimators echo --jobs 2 --tag 60min_g8")
    r = g8["train_config"]["resolved"]
    explored = (f"from the {explore['minutes']:g}-minute comparison of seed {seeds_text(explore['seeds'])}" if explore
                else "")
    lines += [f"*Protocol:* the binary set's defaults ({r['ppo_epochs']} PPO epochs {explored}, G = {r['group_size']}, "
              f"the {r['validation_window']}-evaluation validation window) were chosen by looking at HELD-OUT scores of "
              "the same seeds that the figures below come from, so the binary-set figures are not clean held-out "
              f"estimates. The kept checkpoint of each run was chosen on {r['validation_secrets']} validation secrets; "
              "the choice between settings was not.", ""]
    for name, title in (("reproduce_binary_60min_g8.json", "ECHO with the binary set's defaults"),
                        ("reproduce_binary_60min_all.json", "ECHO, GRPO and RLOO")):
        lines += binary_reproduction(name, title, r["group_size"])
    return lines + section_belief() + section_capacity() + section_settings(explore)


def section_final() -> list[str]:
    """bench/binary_final.py: kept checkpoints on their own untouched split and on 1..200."""
    lines = ["### Kept checkpoints on an untouched split and on 1..200", ""]
    files = [(p.name, load(p.name)) for p in [DIR / "binary_final.json", *sorted(DIR.glob("binary_scores_*.json"))]
             if p.exists()]
    if not files:
        return lines + missing("binary_final.json", "python bench/reproduce.py --question-set binary --train-flags "
                               "'--split-seed 1 --universe-least 2' --jobs 2; python bench/binary_final.py")
    lines += ["*Protocol:* each run's kept checkpoint (chosen on its validation secrets) played on the held-out secrets "
              "of its own split (`--split-seed`), which no setting was chosen on, and on all of 1..200 (secrets and a "
              "universe no training saw); greedy / sampled at T = 1. Correlation: the comparison threshold against the "
              "median of the current candidates (bisection: 1.00), held-out. Universes: the smallest training universe "
              "drawn per episode (`--universe-least`; - : always 1..100).", ""]
    for name, d in files:
        rows = [[r["estimator"], r["seed"], " ".join(f"`--{k.replace('_', '-')} {v}`" for k, v in r["changed"].items())
                 or "none", f"{r['steps']} ({r['kept_step']})", r["split_seed"],
                 r["universe_least"] or "-", f"{r['train_seconds'] / 60:.0f} ({r['threads'] or 'all'})",
                 f"{num(r['heldout_greedy'], 1, 100)} / {num(r['heldout_sampled'], 1, 100)}",
                 f"{num(r['n200_greedy'], 1, 100)} / {num(r['n200_sampled'], 1, 100)}",
                 f"{num(r['threshold_median_corr_greedy'])} / {num(r['threshold_median_corr_sampled'])}",
                 num(r["eliminated_fraction_per_turn"])] for r in d["runs"]]
        lines += [provenance_line(name, d), ""]
        lines += table(["Estimator", "Seed", "Flags beyond the binary preset", "Steps (kept)", "Split", "Universes", "Train min (threads)", "Held-out resolve %, "
                        "greedy / sampled", "1..200 resolve %, greedy / sampled", "Threshold-median corr.",
                        "Eliminated per turn"], rows)
        for other, tests in d["paired"].items():
            lines += [f"ECHO minus {other.upper()}, paired over seeds: " + "; ".join(
                f"{k.replace('_', ' ')} {num(v['mean_difference'], 1, 100)} points ({t_test_text(v['t'], v['p'])})"
                for k, v in tests.items()) + ".", ""]
    return lines


def section_capacity() -> list[str]:
    """bench/capacity_check.py: the model trained supervised on the Bayes policy's actions."""
    lines = ["### Can the built-in model represent bisection? (capacity check)", ""]
    files = [(p.name, load(p.name)) for p in sorted(DIR.glob("capacity_check_*.json"))]
    if not files:
        return lines + missing("capacity_check_NAME.json", "python bench/capacity_check.py --out "
                                                           "bench/results/capacity_check_NAME.json")
    both = lambda r, k: f"{num(r['behaviour_greedy'].get(k))} / {num(r['behaviour_sampled'].get(k))}"  # noqa: E731
    rows = [[f"{d['config']['layers']} x {d['config']['width']} ({d['parameters']:,})",
             f"{d['training_states']:,} states x {d['config']['epochs']} epochs, final loss {d['epoch_losses'][-1]:.3f}"]
            + [f"{num(d[s]['greedy'], 1, 100)} / {num(d[s]['sampled'], 1, 100)}" for s in ("heldout", "n200")]
            + [both(d[s], "threshold_median_corr") for s in ("heldout", "n200")]
            + [both(d["heldout"], "mean_fraction_eliminated")]
            + [" / ".join(num(d[s].get("halving_share"), 1, 100) for s in ("heldout", "n200"))] for _, d in files]
    machines = "; ".join(sorted({machine_text(meta(n, d).get("machine")) for n, d in files}))
    lines += ["*Command:* `python bench/capacity_check.py --layers L --width W --episodes E --epochs K`. "
              f"*Machines:* {machines}. *Files:* " + ", ".join(f"`{n}`" for n, _ in files) + ".", "",
              "*Protocol:* a capacity check, not an RL result. The fresh tiny model is trained supervised on the Bayes "
              "policy's actions (bisection) in the states it reaches on the training secrets of 1..100, each episode in a "
              "random universe lo..hi holding its secret; then played greedily / sampled at T = 1 on the held-out "
              "secrets (1..100) and on 1..200. Bayes states halved: teacher-forced, the share of the states the Bayes policy "
              "reaches on those secrets in which the model's own action halves the candidates (bisection: 100%). Nothing "
              "is chosen by these figures.", ""]
    return lines + table(["Model (layers x width, parameters)", "Training", "Held-out resolve %, greedy / sampled",
                          "1..200 resolve %, greedy / sampled", "Threshold-median corr., held-out",
                          "Threshold-median corr., 1..200", "Eliminated per turn, held-out",
                          "Bayes states halved %, held-out / 1..200"], rows)


def binary_reproduction(name: str, title: str, default_g: int) -> list[str]:
    data = load(name)
    if data is None:
        return [f"### {title}", ""] + missing(name, "python bench/reproduce.py --question-set binary --estimators "
                                                    "echo,grpo,rloo --jobs 2 --tag 60min_all")
    r = data["train_config"]["resolved"]
    other_g = f" with G = {r['group_size']} instead of {default_g}" if r["group_size"] != default_g else ""
    chosen = (f"the binary set's defaults{other_g} (G = {r['group_size']}, {r['ppo_epochs']} PPO epochs, up to "
              f"{r['steps']} steps or {r['time_limit_min']:g} minutes), chosen as this section's protocol says")
    precision = [f"Per-seed values: {data['per_seed_precision']}.", ""] if "per_seed_precision" in data else []
    return [f"### {title}" + (f" at G = {r['group_size']}" if other_g else ""), "", provenance_line(name, data), "",
            protocol(data, chosen), ""] + precision + reproduction_table(data)


def section_belief() -> list[str]:
    lines = ["### Does the policy use its belief?", ""]
    files = [(p.name, load(p.name)) for p in sorted(DIR.glob("bisection_behaviour_*.json"))]
    if not files:
        return lines + missing("bisection_behaviour_NAME.json", "python bench/bisection_behaviour.py --checkpoint RUN/best")
    share = lambda x: "n/a" if nan(x) else num(x, 0, 100) + "%"  # noqa: E731
    count = lambda x: "n/a" if x is None else str(x)  # noqa: E731
    cells = lambda r: [num(r["mean_fraction_eliminated"]), count(r["comparisons"]),  # noqa: E731
                       num(r.get("threshold_median_corr")), share(r["zero_share"])]

    def which(name, d):     # RUN/best is the checkpoint the run kept, RUN/checkpoint its last
        c = meta(name, d).get("checkpoint") or {}
        kind = {"kept": "kept checkpoint", "last": "last checkpoint"}.get(c.get("played"), f"`{c.get('path', '?')}`")
        return f"{kind}, step {c['step'] if c.get('step') is not None else 'not recorded'}"
    rows = [[n[len("bisection_behaviour_"):-len(".json")], which(n, d)] +
            [" / ".join(pair) for pair in zip(cells(d["policy greedy"]), cells(d["policy sampled"]))] for n, d in files]
    for k in ("bisection (Bayes)", "random"):
        same = all(cells(d[k]) == cells(files[0][1][k]) for _, d in files)
        where = " (the same in every file)" if same else f" ({files[0][0]})"
        rows.append([k + where, "reference"] + cells(files[0][1][k]))
    machines = "; ".join(sorted({machine_text(meta(n, d).get("machine")) for n, d in files}))
    dates = ", ".join(sorted({meta(n, d).get("date", "not recorded") for n, d in files}))
    lines += ["*Command:* `python bench/bisection_behaviour.py --checkpoint RUN/best (or RUN/checkpoint) --name NAME`. "
              f"*Machines:* {machines}. *Dates:* {dates}. *Files:* `bench/results/bisection_behaviour_NAME.json`.", "",
              "*Protocol:* each checkpoint plays the held-out secrets greedily and sampled at T = 1; for every "
              "comparison question the threshold is set against the median of the current candidates (bisection asks "
              "the median). Nothing is chosen here. A repeated question or an unreadable action eliminates nothing.", ""]
    return lines + table(["Run", "Checkpoint played", "Eliminated per turn, greedy / sampled",
                          "Comparisons, greedy / sampled", "Threshold-median correlation, greedy / sampled",
                          "Turns that eliminate nothing, greedy / sampled"], rows)


def section_settings(explore) -> list[str]:
    """One table of the settings tried: the reproductions labelled with a "setting", and the
    rows of binary_explore.json; longest budget first."""
    lines, rows, files = ["### Settings tried on the binary set", ""], [], []
    for name in sorted(p.name for p in DIR.glob("reproduce_binary*.json")):
        data = load(name)
        if "setting" not in data:
            continue
        r, est = data["train_config"]["resolved"], data["estimators"][0]
        runs, seeds = data["runs"][est], seeds_text(data["seeds"])
        steps = [x["steps"] for x in runs if x.get("steps")]
        minutes = r.get("time_limit_min", 0)
        budget = (f"{minutes:g} min" + (f" ({min(steps)}-{max(steps)} steps)" if steps else "")) if minutes else \
            f"{r.get('steps')} steps"
        flags = train_flags(meta(name, data).get("command", "")) or "none"
        rows.append((-minutes, name, [
            f"{est}: {data['setting']}", f"`{flags}`", seeds, budget, ms(per_seed(runs, RESOLVE[0])),
            ms(per_seed(runs, RESOLVE[1])), f"held-out ({r['n_heldout']} secrets), seeds {seeds}"]))
        files.append(name)
    if explore:
        r, seeds = explore["train_config"]["resolved"], seeds_text(explore["seeds"])
        for x in explore["rows"]:
            rows.append((-explore["minutes"], "binary_explore.json", [
                x["setting"], f"`{x['flags'] or 'none'}`", seeds, f"{explore['minutes']:g} min", num(x["greedy"], 1, 100),
                f"{num(x['sampled'], 1, 100)} ± {num(x['sampled_se'], 1, 100)} (SE)",
                f"held-out ({r['n_heldout']} secrets), seed {seeds}"]))
        files.append("binary_explore.json")
    if not rows:
        return lines + missing("reproduce_binary_TAG.json",
                               "python bench/reproduce.py --question-set binary --setting LABEL")
    lines.append("*Files:* " + ", ".join(f"`bench/results/{f}`" for f in files) +
                 "; each names its command, machine and date.")
    if explore:
        r, m = explore["train_config"]["resolved"], meta("binary_explore.json", explore)
        lines[-1] += (f" The {explore['minutes']:g}-minute rows: `{m['command']}`, {r['ppo_epochs']} PPO epochs and G = "
                      f"{r['group_size']} unless the row's flags say otherwise, the kept checkpoint the best single "
                      f"evaluation on {r['validation_secrets']} validation secrets; {machine_text(m['machine'])}, "
                      f"{m['date']}.")
    lines += ["", "*Protocol:* every row is scored on the held-out secrets, the same secrets and seeds the binary "
              "figures above come from; the settings kept as the binary set's defaults were chosen on these held-out "
              "scores, so the binary-set figures are not clean held-out estimates. Within a run the kept checkpoint is "
              "chosen on validation secrets; the choice between settings was not. Resolve in %: mean ± SEM over seeds, "
              "or for one seed ± SE over its sampled episodes.", ""]
    rows = [r for *_, r in sorted(rows, key=lambda x: x[:2])]
    return lines + table(["Setting", "train.py flags (beyond `--question-set binary`)", "Seeds", "Budget",
                          "Resolve greedy", "Resolve sampled", "Scored on"], rows)


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
    g8, explore = load("reproduce_binary_60min_g8.json"), load("binary_explore.json")
    if g8:
        runs = g8["runs"]["echo"]
        bisection = f" (bisection: {num(explore['references']['bisection'], 0, 100)})" if explore else ""
        lines.append(f"- **Binary question set** (yes/no questions), up to 60 minutes on 2 cores: held-out resolve (%) ECHO "
                     f"{ms(per_seed(runs, RESOLVE[0]), 0)} greedy / {ms(per_seed(runs, RESOLVE[1]), 0)} sampled over "
                     f"seeds {seeds_text(g8['seeds'])}{bisection}; its settings were chosen on held-out scores, so this "
                     "figure is not a clean estimate.")
    default = load("binary_scores_echo-default-split1.json")
    if default:
        (r,) = default["runs"]
        lines.append(f"- **Binary, the {r['steps']}-step default** on a held-out split no setting was chosen on (ECHO, "
                     f"seed {r['seed']} only): {num(r['heldout_greedy'], 0, 100)} greedy / {num(r['heldout_sampled'], 0, 100)} "
                     f"sampled; on 1..200 {num(r['n200_greedy'], 0, 100)} / {num(r['n200_sampled'], 0, 100)}; its "
                     f"thresholds' correlation with the median of the candidates {num(r['threshold_median_corr_sampled'])} "
                     "(sampled; bisection's is 1).")
    smol = load("smollm2_learning.json")
    if smol:
        steps, k = smol["steps"], min(4, len(smol["steps"]) // 2)
        mean = lambda rows: num(sum(r["reward"] for r in rows) / k)  # noqa: E731
        lines.append(f"- **SmolLM2-135M-Instruct** (LoRA) learns with ECHO on 2 CPU cores: mean reward "
                     f"{mean(steps[:k])} over its first {k} steps, {mean(steps[-k:])} over its last {k}.")
    return lines + ["", "Every figure, with its command, machine, date and protocol, is in `RESULTS.md`."]


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
    global DIR, PROVENANCE
    cfg = parse_config(ReportConfig, argv, description=__doc__.splitlines()[0])
    DIR = Path(cfg.results)
    PROVENANCE = (load("provenance.json") or {}).get("files", {})
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
