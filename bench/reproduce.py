"""The reproduction: train each estimator on 3 seeds with one train.py config, evaluate each final
policy on the held-out secrets, and write a markdown report with

- mean +- SEM over seeds of the held-out resolve (greedy and sampled at T = 1), zero-elimination
  rate, eliminated per turn and episode length, steps to 90% sampled held-out resolve, train time;
- a paired t-test over seeds of ECHO against each other estimator (held-out resolve);
- the paper's seed-level final-window table (App. B, tab:echo_grpo_final_window_stats): per seed
  the mean of each training metric over the last `window` steps, ECHO vs GRPO, paired t-tests;
- the training curves with SEM bands;
- the same as JSON, reproduce_QUESTION_SET[_TAG].json, which bench/report_results.py reads: per
  estimator and seed what the run's summary.json holds and its final-window means, the runs'
  train.py configuration (from each run's train_config.json), the command, machine and date.

Runs are independent processes (`python train.py`), `jobs` at a time, each with its share of
the cores (cli.use_threads), so a 2-core machine runs two seeds side by side. Finished runs are
reused and checkpointed ones resumed, so an interrupted reproduction continues where it stopped.

    python bench/reproduce.py [--question-set paper|binary] [--estimators echo,grpo,rloo] \\
        [--jobs 2] [--tag TAG]
"""

import dataclasses
import json
import math
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench.common import RESULTS, code_version, command_line, machine, today
from tools.cli import arg, fail, parse_config
from tools.stats import mean_sem, paired_t_test

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class ReproduceConfig:
    estimators: str = arg(
        "echo,grpo,rloo",
        "comma-separated estimators to train (the first is compared with the rest)",
    )
    seeds: str = arg("0,1,2", "comma-separated seeds (paired across estimators)")
    question_set: str = arg("paper", "paper or binary")
    train_flags: str = arg("", "more train.py flags for every run, e.g. '--steps 60 --lr 3e-4'")
    jobs: int = arg(
        0, "runs side by side, each with cores / jobs threads (0: one per core)", at_least=0
    )
    window: int = arg(
        0,
        "final window of training steps for the final-window table "
        "(0: the paper's 100 of 350, scaled)",
        at_least=0,
    )
    out: str = arg(
        "runs/reproduce", "runs go to OUT/QUESTION_SET/ESTIMATOR-seedS", writes="directory"
    )
    report: str = arg(
        RESULTS, "the markdown report, figure and JSON are also copied here", writes="directory"
    )
    tag: str = arg(
        "", "names the report files reproduce_QUESTION_SET_TAG.{md,png,json} (empty: no tag)"
    )


COLUMNS = [
    ("eval/resolve_rate", "Resolve greedy", 1),
    ("eval/sampled_resolve_rate", "Resolve sampled", 1),
    ("eval/zero_rate", "Zero", 1),
    ("eval/eliminated_mean", "Elim./turn", 0),
    ("eval/episode_length", "Ep. length", 0),
]
# Fields of a run's train_config.json that name the run rather than configure it
PER_RUN_FIELDS = {"estimator", "seed", "seeds", "run_name", "out", "resume", "threads"}
SUMMARY_FIELDS = (
    "run_name",
    "seed",
    "steps",
    "kept",
    "final_eval",
    "last_eval",
    "steps_to_90",
    "steps_to_90_greedy",
    "train_seconds",
)
# The rows of tab:echo_grpo_final_window_stats: (training metric, name, scale, lower is better)
FINAL_WINDOW = [
    ("clue/reward", "Reward mean", 1, False),
    ("clue/normalized_reward", "Normalized reward", 1, False),
    ("clue/episode_resolve_rate", "Episode resolve rate", 100, False),
    ("clue/eliminated_mean", "Mean eliminated candidates", 1, False),
    ("clue/redundancy_rate", "Redundancy rate", 100, True),
    ("clue/episode_length", "Mean episode length", 1, True),
    ("clue/turn_resolve_rate", "Turn resolve rate", 100, False),
    ("clue/turns_saved", "Turns saved", 1, False),
    ("train/entropy", "Entropy", 1, True),
]


def train_one(cfg: ReproduceConfig, estimator: str, seed: int, threads: int) -> None:
    base = Path(cfg.out) / cfg.question_set
    name = f"{estimator}-seed{seed}"
    resume = ["--resume"] if (base / name / "checkpoint" / "trainer_state.pt").exists() else []
    if not resume and (base / name).exists():
        # stopped before its first checkpoint: nothing to resume, start over
        shutil.rmtree(base / name)
    cmd = [
        sys.executable,
        "train.py",
        "--estimator",
        estimator,
        "--seed",
        str(seed),
        "--question-set",
        cfg.question_set,
        "--out",
        str(base.resolve()),
        "--run-name",
        name,
        "--threads",
        str(threads),
        *cfg.train_flags.split(),
        *resume,
    ]
    with open(base / f"{name}.log", "a") as log:
        subprocess.run(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, check=True)


def queue(estimators: list[str], seeds: list[int], finished) -> list[tuple[str, int]]:
    """The (estimator, seed) runs still to train, seed by seed: a reproduction cut off early leaves
    every estimator's run of the first seeds, whole pairs for the paired tests."""
    return [(e, s) for s in seeds for e in estimators if not finished(e, s)]


def run_all(cfg: ReproduceConfig) -> tuple[dict, dict, dict]:
    """{estimator: [(summary, metric rows) per seed]}, {run name: its train_config.json or None}
    and how the runs were trained (jobs, threads, wall time), training what is missing."""
    base = Path(cfg.out) / cfg.question_set
    base.mkdir(parents=True, exist_ok=True)
    estimators, seeds = cfg.estimators.split(","), [int(s) for s in cfg.seeds.split(",")]
    todo = queue(
        estimators, seeds, finished=lambda e, s: (base / f"{e}-seed{s}" / "summary.json").exists()
    )
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    jobs = cfg.jobs or cores
    threads = max(1, cores // jobs)
    start = time.perf_counter()
    if todo:
        print(
            f"training {len(todo)} runs, {jobs} at a time with {threads} thread(s) each; "
            f"logs in {base}",
            flush=True,
        )
        with ThreadPoolExecutor(jobs) as pool:
            for future in [pool.submit(train_one, cfg, e, s, threads) for e, s in todo]:
                future.result()
    wall = time.perf_counter() - start
    results, configs = {}, {}
    for e in estimators:
        for s in seeds:
            run_dir = base / f"{e}-seed{s}"
            rows = [json.loads(line) for line in open(run_dir / "metrics.jsonl")]
            results.setdefault(e, []).append(
                (json.loads((run_dir / "summary.json").read_text()), rows)
            )
            saved = run_dir / "train_config.json"
            configs[f"{e}-seed{s}"] = json.loads(saved.read_text()) if saved.exists() else None
    return (
        results,
        configs,
        {
            "jobs": jobs,
            "threads": threads,
            "runs_trained": len(todo),
            "wall_seconds": round(wall, 1),
        },
    )


def train_config_summary(configs: dict) -> dict:
    """The runs' resolved train.py configuration: the fields that differ from train.py's defaults
    (leaving out those that name a run: estimator, seed, ...), whether they are the same for
    every run, and `resolved`, every field on which all runs agree."""
    import config

    defaults = dataclasses.asdict(config.TrainConfig())
    fields = lambda c: {k: v for k, v in c.items() if k not in PER_RUN_FIELDS and k != "presets"}
    saved = {name: fields(c) for name, c in configs.items() if c is not None}
    diffs = {
        name: {k: v for k, v in c.items() if k not in defaults or defaults[k] != v}
        for name, c in saved.items()
    }
    first = next(iter(diffs.values()), {})
    common = {k: v for k, v in first.items() if all(k in d and d[k] == v for d in diffs.values())}
    same = len(saved) == len(configs) and all(d == common for d in diffs.values())
    return {
        "differs_from_default": common,
        "same_across_runs": same,
        "per_run": None
        if same
        else {name: {k: v for k, v in d.items() if k not in common} for name, d in diffs.items()},
        "missing": sorted(name for name, c in configs.items() if c is None),
        "presets": sorted({p for c in configs.values() if c for p in c.get("presets", [])}),
        "resolved": {
            k: v
            for k, v in next(iter(saved.values()), {}).items()
            if all(c.get(k) == v for c in saved.values())
        },
    }


def final_window_means(rows: list[dict], window: int) -> dict:
    """One run's mean of each FINAL_WINDOW training metric over its last `window` steps."""
    last = rows[-window:]
    return {
        key: sum(r[key] for r in last if key in r) / max(1, sum(key in r for r in last))
        for key, _, _, _ in FINAL_WINDOW
    }


def plain(value):
    """JSON has no NaN: None instead, in nested dicts and lists too."""
    if isinstance(value, float) and value != value:
        return None
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def results_json(
    cfg: ReproduceConfig, results: dict, train_config: dict, how: dict, window: int, argv
) -> dict:
    """Everything bench/report_results.py needs to rebuild the tables (its docstring gives the
    schema)."""
    # the directory: best or checkpoint
    kept = lambda k: {"step": k["step"], "dir": Path(k["path"]).name} if k else None
    runs = {
        est: [
            {
                **{k: summary.get(k) for k in SUMMARY_FIELDS},
                "kept": kept(summary.get("kept")),
                "final_window": final_window_means(rows, window),
            }
            for summary, rows in per_seed
        ]
        for est, per_seed in results.items()
    }
    return plain(
        {
            "question_set": cfg.question_set,
            "tag": cfg.tag,
            "estimators": list(results),
            "seeds": [int(s) for s in cfg.seeds.split(",")],
            "window": window,
            "command": command_line(argv, __file__),
            "machine": machine(),
            "date": today(),
            **code_version(),
            **how,
            "train_config": train_config,
            "runs": runs,
        }
    )


def config_header(tc: dict) -> str:
    """The runs' configuration in words, from their saved train_config.json."""
    flags = lambda d: " ".join(f"--{k.replace('_', '-')} {v}" for k, v in d.items()) or "none"
    text = (
        "train.py configuration read from the runs' train_config.json; "
        f"fields that differ from train.py's defaults: {flags(tc['differs_from_default'])}"
    )
    if tc["presets"]:
        text += f" (presets applied: {', '.join(tc['presets'])})"
    if tc["same_across_runs"]:
        text += ", the same for every run"
    else:
        text += "; differing between runs: " + "; ".join(
            f"{name} {flags(d)}" for name, d in tc["per_run"].items()
        )
    if tc["missing"]:
        text += f"; runs without a train_config.json: {', '.join(tc['missing'])}"
    return text


def played(resolved: dict) -> str:
    """Which checkpoint of each run the held-out figures are of."""
    n, window = resolved.get("validation_secrets"), resolved.get("validation_window")
    if n is None:
        return "each run's kept checkpoint (or last, without validation secrets)"
    return (
        f"the checkpoint each run keeps on {n} validation secrets "
        f"(best mean of {window} evaluations in a row)"
        if n > 0
        else "each run's last checkpoint"
    )


def kept_and_last(summary: dict) -> str:
    last = summary["last_eval"]
    return (
        f"kept {summary['kept']['step']}, last {summary['steps']} "
        f"{last.get('eval/resolve_rate', math.nan):.2f}/"
        f"{last.get('eval/sampled_resolve_rate', math.nan):.2f}"
    )


def fmt(mean: float, sem: float, pct: int) -> str:
    if mean != mean:
        return "n/a"
    return f"{100 * mean:.1f} +- {100 * sem:.1f}" if pct else f"{mean:.2f} +- {sem:.2f}"


def final_window_table(results: dict, first: str, second: str, window: int) -> list[str]:
    """Per seed the mean of each training metric over the last `window` steps; mean over seeds,
    the difference and a paired t-test (tab:echo_grpo_final_window_stats)."""
    lines = [f"| Metric | {first} | {second} | Delta | Paired t-test p |", "|---|---|---|---|---|"]
    for key, label, scale, lower in FINAL_WINDOW:
        per_seed = {
            est: [final_window_means(rows, window)[key] for _, rows in results[est]]
            for est in (first, second)
        }
        a, b = (sum(v) / len(v) for v in per_seed.values())
        _, p = paired_t_test(per_seed[first], per_seed[second])
        unit = " pts" if scale == 100 else ""
        lines.append(
            f"| {label}{' (lower is better)' if lower else ''} | {scale * a:.3f} | "
            f"{scale * b:.3f} | {scale * (a - b):+.3f}{unit} | {p:.3g} |"
        )
    return lines


def report(
    cfg: ReproduceConfig, results: dict, wall: float, window: int, train_config: dict
) -> str:
    seeds = cfg.seeds
    steps = results[next(iter(results))][0][0]["steps"]
    lines = [
        f"# Reproduction: {', '.join(results)} on the {cfg.question_set} question set",
        "",
        f"{config_header(train_config)} ({steps} steps in the first run); seeds {seeds}; "
        f"{played(train_config['resolved'])} plays the "
        f"{train_config['resolved'].get('n_heldout', '?')} held-out secrets greedily and sampled "
        f"(T = 1, {train_config['resolved'].get('eval_samples', '?')} episodes per secret). "
        "Mean +- SEM over seeds (rates in %). Steps to 90%: the first periodic evaluation whose "
        "sampled held-out resolve reaches 0.9.",
        "",
        "| Estimator | "
        + " | ".join(c[1] for c in COLUMNS)
        + " | Steps to 90% (per seed) | Train time (s) |",
        "|---" * (len(COLUMNS) + 3) + "|",
    ]
    finals = {}
    for est, runs in results.items():
        finals[est] = {
            key: [s["final_eval"].get(key, math.nan) for s, _ in runs] for key, _, _ in COLUMNS
        }
        cells = [fmt(*mean_sem(finals[est][key]), pct) for key, _, pct in COLUMNS]
        reach = [s["steps_to_90"] for s, _ in runs]
        secs = [s["train_seconds"] for s, _ in runs]
        lines.append(
            f"| {est} | "
            + " | ".join(cells)
            + f" | {', '.join(str(r) if r else 'never' for r in reach)} | "
            f"{sum(secs) / len(secs):.0f} |"
        )
    first = next(iter(results))
    lines += [
        "",
        "Per-seed held-out resolve, greedy / sampled: "
        + "; ".join(
            f"{est}: "
            + ", ".join(
                f"{g:.2f}/{s:.2f}"
                for g, s in zip(
                    finals[est]["eval/resolve_rate"], finals[est]["eval/sampled_resolve_rate"]
                )
            )
            for est in finals
        ),
    ]
    lines += [
        "Per seed, the step kept (on the validation secrets) and the last step with its held-out "
        "evaluation, greedy / sampled: "
        + "; ".join(
            f"{est}: " + ", ".join(kept_and_last(s) for s, _ in runs)
            for est, runs in results.items()
        ),
        "",
    ]
    for other in list(results)[1:]:
        for key, label in (
            ("eval/resolve_rate", "greedy"),
            ("eval/sampled_resolve_rate", "sampled"),
        ):
            t, p = paired_t_test(finals[first][key], finals[other][key])
            lines.append(
                f"Paired t-test over seeds, {label} held-out resolve, {first} vs {other}: "
                f"t = {t:.3f}, p = {p:.4g} (n = {len(finals[first][key])})."
            )
    if "grpo" in results and first != "grpo":
        lines += [
            "",
            "## Final-window comparison (tab:echo_grpo_final_window_stats): "
            f"last {window} of {steps} steps",
            "",
            "Per seed the mean of each training metric (sampled training batches) over the window; "
            "mean over seeds; paired t-test over seeds.",
            "",
        ]
        lines += final_window_table(results, first, "grpo", window)
    lines += ["", f"Wall time of the runs trained by this invocation: {wall:.0f} s."]
    return "\n".join(lines) + "\n"


def plot(results: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = [
        ("clue/episode_resolve_rate", "training episodes resolved (sampled)"),
        ("eval/sampled_resolve_rate", "held-out resolve (sampled, T = 1)"),
        ("eval/resolve_rate", "held-out resolve (greedy)"),
        ("clue/eliminated_mean", "eliminated per turn"),
    ]
    fig, axes = plt.subplots(1, len(keys), figsize=(5 * len(keys), 4))
    for ax, (key, title) in zip(axes, keys):
        for est, runs in results.items():
            steps = sorted({r["step"] for _, rows in runs for r in rows if key in r})
            stats = [
                mean_sem(
                    [
                        next((r[key] for r in rows if r["step"] == s and key in r), math.nan)
                        for _, rows in runs
                    ]
                )
                for s in steps
            ]
            mean = [m for m, _ in stats]
            sem = [0.0 if e != e else e for _, e in stats]
            ax.plot(steps, mean, label=est, marker="o" if key.startswith("eval/") else None, ms=3)
            ax.fill_between(
                steps,
                [m - e for m, e in zip(mean, sem)],
                [m + e for m, e in zip(mean, sem)],
                alpha=0.2,
            )
        ax.set_title(title)
        ax.set_xlabel("step")
        ax.grid(alpha=0.3)
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def check(cfg: ReproduceConfig) -> None:
    """Every run's train.py configuration, checked before anything is trained or written."""
    import config

    try:
        [int(s) for s in cfg.seeds.split(",")]
    except ValueError:
        fail(
            "reproduce.py",
            f"--seeds {cfg.seeds!r} is not a comma-separated list of integers, e.g. 0,1,2.",
        )
    for estimator in cfg.estimators.split(","):
        flags = [
            "--estimator",
            estimator,
            "--question-set",
            cfg.question_set,
            *cfg.train_flags.split(),
        ]
        config.check_config(config.config_from_flags(flags, prog="reproduce.py --train-flags"))


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    cfg = parse_config(ReproduceConfig, argv, description=__doc__.splitlines()[0])
    check(cfg)
    results, configs, how = run_all(cfg)
    steps = results[next(iter(results))][0][0]["steps"]
    window = cfg.window or max(1, round(steps * 100 / 350))
    train_config = train_config_summary(configs)
    text = report(cfg, results, how["wall_seconds"], window, train_config)
    data = results_json(cfg, results, train_config, how, window, argv)
    name = f"reproduce_{cfg.question_set}{'_' + cfg.tag if cfg.tag else ''}"
    base = Path(cfg.out) / cfg.question_set
    (base / "report.md").write_text(text)
    (base / "report.json").write_text(json.dumps(data, indent=2) + "\n")
    plot(results, base / "curves.png")
    Path(cfg.report).mkdir(parents=True, exist_ok=True)
    (Path(cfg.report) / f"{name}.md").write_text(text)
    (Path(cfg.report) / f"{name}.json").write_text(json.dumps(data, indent=2) + "\n")
    plot(results, Path(cfg.report) / f"{name}.png")
    print(text)
    print(f"wrote {Path(cfg.report) / name}.{{md,json,png}}")


if __name__ == "__main__":
    main(sys.argv[1:])
