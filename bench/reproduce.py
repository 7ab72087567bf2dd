"""The reproduction: train each estimator on 3 seeds with one train.py config, evaluate each final
policy on the held-out secrets, and write a markdown report with

- mean +- SEM over seeds of the held-out resolve (greedy and sampled at T = 1), zero-elimination
  rate, eliminated per turn and episode length, steps to 90% sampled held-out resolve, train time;
- a paired t-test over seeds of ECHO against each other estimator (held-out resolve);
- the paper's seed-level final-window table (App. B, tab:echo_grpo_final_window_stats): per seed
  the mean of each training metric over the last `window` steps, ECHO vs GRPO, paired t-tests;
- the training curves with SEM bands.

Runs are independent processes (`python train.py`), `jobs` at a time, each with its share of
the cores (cli.use_threads), so a 2-core machine runs two seeds side by side. Finished runs are
reused and checkpointed ones resumed, so an interrupted reproduction continues where it stopped.

    python bench/reproduce.py [--question-set paper|binary] [--estimators echo,grpo,rloo] [--jobs 2]
"""
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
from bench.common import RESULTS  # noqa: E402
from cli import arg, fail, parse_config  # noqa: E402
from stats import mean_sem, paired_t_test  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class ReproduceConfig:
    estimators: str = arg("echo,grpo,rloo", "comma-separated estimators to train (the first is compared with the rest)")
    seeds: str = arg("0,1,2", "comma-separated seeds (paired across estimators)")
    question_set: str = arg("paper", "paper or binary")
    train_flags: str = arg("", "more train.py flags for every run, e.g. '--steps 60 --lr 3e-4'")
    jobs: int = arg(0, "runs side by side, each with cores / jobs threads (0: one per core)")
    window: int = arg(0, "final window of training steps for the final-window table (0: the paper's 100 of 350, scaled)")
    out: str = arg("runs/reproduce", "runs go to OUT/QUESTION_SET/ESTIMATOR-seedS")
    report: str = arg(RESULTS, "the markdown report and figure are also copied here")


COLUMNS = [("eval/resolve_rate", "Resolve greedy", 1), ("eval/sampled_resolve_rate", "Resolve sampled", 1),
           ("eval/zero_rate", "Zero", 1), ("eval/eliminated_mean", "Elim./turn", 0),
           ("eval/episode_length", "Ep. length", 0)]
# The rows of tab:echo_grpo_final_window_stats: (training metric, name, scale, lower is better)
FINAL_WINDOW = [("clue/reward", "Reward mean", 1, False), ("clue/normalized_reward", "Normalized reward", 1, False),
                ("clue/episode_resolve_rate", "Episode resolve rate", 100, False),
                ("clue/eliminated_mean", "Mean eliminated candidates", 1, False),
                ("clue/redundancy_rate", "Redundancy rate", 100, True), ("clue/episode_length", "Mean episode length", 1, True),
                ("clue/turn_resolve_rate", "Turn resolve rate", 100, False), ("clue/turns_saved", "Turns saved", 1, False),
                ("train/entropy", "Entropy", 1, True)]


def train_one(cfg: ReproduceConfig, estimator: str, seed: int, threads: int) -> None:
    base = Path(cfg.out) / cfg.question_set
    name = f"{estimator}-seed{seed}"
    resume = ["--resume"] if (base / name / "checkpoint" / "trainer_state.pt").exists() else []
    if not resume and (base / name).exists():
        shutil.rmtree(base / name)  # stopped before its first checkpoint: nothing to resume, start over
    cmd = [sys.executable, "train.py", "--estimator", estimator, "--seed", str(seed), "--question-set",
           cfg.question_set, "--out", str(base.resolve()), "--run-name", name, "--threads", str(threads),
           *cfg.train_flags.split(), *resume]
    with open(base / f"{name}.log", "a") as log:
        subprocess.run(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, check=True)


def run_all(cfg: ReproduceConfig) -> tuple[dict, float]:
    """{estimator: [(summary, metric rows) per seed]} and the wall time, training what is missing."""
    base = Path(cfg.out) / cfg.question_set
    base.mkdir(parents=True, exist_ok=True)
    estimators, seeds = cfg.estimators.split(","), [int(s) for s in cfg.seeds.split(",")]
    todo = [(e, s) for e in estimators for s in seeds if not (base / f"{e}-seed{s}" / "summary.json").exists()]
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    jobs = cfg.jobs or cores
    threads = max(1, cores // jobs)
    start = time.perf_counter()
    if todo:
        print(f"training {len(todo)} runs, {jobs} at a time with {threads} thread(s) each; logs in {base}", flush=True)
        with ThreadPoolExecutor(jobs) as pool:
            for future in [pool.submit(train_one, cfg, e, s, threads) for e, s in todo]:
                future.result()
    wall = time.perf_counter() - start
    results = {}
    for e in estimators:
        for s in seeds:
            run_dir = base / f"{e}-seed{s}"
            rows = [json.loads(line) for line in open(run_dir / "metrics.jsonl")]
            results.setdefault(e, []).append((json.loads((run_dir / "summary.json").read_text()), rows))
    return results, wall


def kept_and_last(summary: dict) -> str:
    last = summary["last_eval"]
    return (f"kept {summary['kept']['step']}, last {summary['steps']} "
            f"{last.get('eval/resolve_rate', math.nan):.2f}/{last.get('eval/sampled_resolve_rate', math.nan):.2f}")


def fmt(mean: float, sem: float, pct: int) -> str:
    if mean != mean:
        return "n/a"
    return f"{100 * mean:.1f} +- {100 * sem:.1f}" if pct else f"{mean:.2f} +- {sem:.2f}"


def final_window_table(results: dict, first: str, second: str, window: int) -> list[str]:
    """Per seed the mean of each training metric over the last `window` steps; mean over seeds,
    the difference and a paired t-test (tab:echo_grpo_final_window_stats)."""
    lines = [f"| Metric | {first} | {second} | Delta | Paired t-test p |", "|---|---|---|---|---|"]
    for key, label, scale, lower in FINAL_WINDOW:
        per_seed = {}
        for est in (first, second):
            per_seed[est] = [sum(r[key] for r in rows[-window:] if key in r) / max(1, sum(key in r for r in rows[-window:]))
                             for _, rows in results[est]]
        a, b = (sum(v) / len(v) for v in per_seed.values())
        _, p = paired_t_test(per_seed[first], per_seed[second])
        unit = " pts" if scale == 100 else ""
        lines.append(f"| {label}{' (lower is better)' if lower else ''} | {scale * a:.3f} | {scale * b:.3f} | "
                     f"{scale * (a - b):+.3f}{unit} | {p:.3g} |")
    return lines


def report(cfg: ReproduceConfig, results: dict, wall: float, window: int) -> str:
    seeds = cfg.seeds
    steps = results[next(iter(results))][0][0]["steps"]
    lines = [f"# Reproduction: {', '.join(results)} on the {cfg.question_set} question set", "",
             f"train.py defaults{' with ' + cfg.train_flags if cfg.train_flags else ''} ({steps} steps), tiny model, "
             f"rule oracle; seeds {seeds}; the final policy plays the 20 held-out secrets greedily and sampled "
             "(T = 1, 4 episodes per secret). Mean +- SEM over seeds (rates in %). Steps to 90%: the first "
             "periodic evaluation whose sampled held-out resolve reaches 0.9.", "",
             "| Estimator | " + " | ".join(c[1] for c in COLUMNS) + " | Steps to 90% (per seed) | Train time (s) |",
             "|---" * (len(COLUMNS) + 3) + "|"]
    finals = {}
    for est, runs in results.items():
        finals[est] = {key: [s["final_eval"].get(key, math.nan) for s, _ in runs] for key, _, _ in COLUMNS}
        cells = [fmt(*mean_sem(finals[est][key]), pct) for key, _, pct in COLUMNS]
        reach = [s["steps_to_90"] for s, _ in runs]
        secs = [s["train_seconds"] for s, _ in runs]
        lines.append(f"| {est} | " + " | ".join(cells) + f" | {', '.join(str(r) if r else 'never' for r in reach)} | "
                     f"{sum(secs) / len(secs):.0f} |")
    first = next(iter(results))
    lines += ["", "Per-seed held-out resolve, greedy / sampled: " + "; ".join(
        f"{est}: " + ", ".join(f"{g:.2f}/{s:.2f}" for g, s in zip(finals[est]["eval/resolve_rate"],
                                                                  finals[est]["eval/sampled_resolve_rate"]))
        for est in finals)]
    lines += ["Per seed, the step kept (on the validation secrets) and the last step with its held-out "
              "evaluation, greedy / sampled: " + "; ".join(
                  f"{est}: " + ", ".join(kept_and_last(s) for s, _ in runs) for est, runs in results.items()), ""]
    for other in list(results)[1:]:
        for key, label in (("eval/resolve_rate", "greedy"), ("eval/sampled_resolve_rate", "sampled")):
            t, p = paired_t_test(finals[first][key], finals[other][key])
            lines.append(f"Paired t-test over seeds, {label} held-out resolve, {first} vs {other}: t = {t:.3f}, "
                         f"p = {p:.4g} (n = {len(finals[first][key])}).")
    if "grpo" in results and first != "grpo":
        lines += ["", f"## Final-window comparison (tab:echo_grpo_final_window_stats): last {window} of {steps} steps",
                  "", "Per seed the mean of each training metric (sampled training batches) over the window; "
                  "mean over seeds; paired t-test over seeds.", ""]
        lines += final_window_table(results, first, "grpo", window)
    lines += ["", f"Wall time of the runs trained by this invocation: {wall:.0f} s."]
    return "\n".join(lines) + "\n"


def plot(results: dict, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    keys = [("clue/episode_resolve_rate", "training episodes resolved (sampled)"),
            ("eval/sampled_resolve_rate", "held-out resolve (sampled, T = 1)"),
            ("eval/resolve_rate", "held-out resolve (greedy)"), ("clue/eliminated_mean", "eliminated per turn")]
    fig, axes = plt.subplots(1, len(keys), figsize=(5 * len(keys), 4))
    for ax, (key, title) in zip(axes, keys):
        for est, runs in results.items():
            steps = sorted({r["step"] for _, rows in runs for r in rows if key in r})
            stats = [mean_sem([next((r[key] for r in rows if r["step"] == s and key in r), math.nan)
                               for _, rows in runs]) for s in steps]
            mean = [m for m, _ in stats]
            sem = [0.0 if e != e else e for _, e in stats]
            ax.plot(steps, mean, label=est, marker="o" if key.startswith("eval/") else None, ms=3)
            ax.fill_between(steps, [m - e for m, e in zip(mean, sem)], [m + e for m, e in zip(mean, sem)], alpha=0.2)
        ax.set_title(title)
        ax.set_xlabel("step")
        ax.grid(alpha=0.3)
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def check(cfg: ReproduceConfig) -> None:
    """Every run's train.py configuration, checked before anything is trained or written."""
    import train
    try:
        [int(s) for s in cfg.seeds.split(",")]
    except ValueError:
        fail("reproduce.py", f"--seeds {cfg.seeds!r} is not a comma-separated list of integers, e.g. 0,1,2.")
    for estimator in cfg.estimators.split(","):
        flags = ["--estimator", estimator, "--question-set", cfg.question_set, *cfg.train_flags.split()]
        train.check_config(train.config_from_flags(flags, prog="reproduce.py --train-flags"))


def main(argv=None):
    cfg = parse_config(ReproduceConfig, argv, description=__doc__.splitlines()[0])
    check(cfg)
    results, wall = run_all(cfg)
    steps = results[next(iter(results))][0][0]["steps"]
    window = cfg.window or max(1, round(steps * 100 / 350))
    text = report(cfg, results, wall, window)
    base = Path(cfg.out) / cfg.question_set
    (base / "report.md").write_text(text)
    plot(results, base / "curves.png")
    Path(cfg.report).mkdir(parents=True, exist_ok=True)
    (Path(cfg.report) / f"reproduce_{cfg.question_set}.md").write_text(text)
    plot(results, Path(cfg.report) / f"reproduce_{cfg.question_set}.png")
    print(text)


if __name__ == "__main__":
    main(sys.argv[1:])
