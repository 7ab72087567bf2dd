"""The reproduction (issue 4): train echo, grpo and rloo with the default config on 3 seeds each,
evaluate each final policy greedily on the held-out secrets, and write a markdown report: mean
+- SEM over seeds of resolve, zero-elimination rate, eliminated per turn and episode length,
steps to 90% held-out resolve, a paired t-test of echo vs grpo, and the training curves with
SEM bands. Finished runs are reused, so an interrupted reproduction continues where it stopped.

    python bench/reproduce.py [--question-set paper|binary] [--steps 30] [--seeds 0,1,2]
"""
import json
import math
import os
import sys
from dataclasses import dataclass, replace
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from cli import arg, parse_config  # noqa: E402
from stats import mean_sem, paired_t_test  # noqa: E402
from train import TrainConfig, train  # noqa: E402


@dataclass
class ReproduceConfig:
    estimators: str = arg("echo,grpo,rloo", "comma-separated estimators to train")
    seeds: str = arg("0,1,2", "comma-separated seeds (paired across estimators)")
    question_set: str = arg("paper", "paper or binary")
    steps: int = arg(40, "RL steps per run (train.py's default)")
    lr: float = arg(-1.0, "learning rate passed to train.py (-1: its default)")
    out: str = arg("runs/reproduce", "runs go to OUT/QUESTION_SET/ESTIMATOR-seedS")
    report: str = arg("bench/results", "the markdown report and figure are also copied here")


COLUMNS = [("eval/resolve_rate", "Resolve", 1), ("eval/zero_rate", "Zero", 1),
           ("eval/eliminated_mean", "Elim./turn", 0), ("eval/episode_length", "Ep. length", 0)]


def run_all(cfg: ReproduceConfig) -> dict:
    """{estimator: [(summary, metric rows) per seed]}, training what is not finished yet."""
    base = Path(cfg.out) / cfg.question_set
    results = {}
    for est in cfg.estimators.split(","):
        for seed in [int(s) for s in cfg.seeds.split(",")]:
            name = f"{est}-seed{seed}"
            summary_path = base / name / "summary.json"
            if not summary_path.exists():
                resume = (base / name / "checkpoint" / "trainer_state.pt").exists()
                train(replace(TrainConfig(), estimator=est, seed=seed, question_set=cfg.question_set,
                              steps=cfg.steps, lr=cfg.lr, out=str(base), run_name=name, resume=resume))
            rows = [json.loads(line) for line in open(base / name / "metrics.jsonl")]
            results.setdefault(est, []).append((json.loads(summary_path.read_text()), rows))
    return results


def fmt(mean: float, sem: float, pct: int) -> str:
    scale = 100 if pct else 1
    if mean != mean:
        return "n/a"
    return f"{scale * mean:.1f} +- {scale * sem:.1f}" if pct else f"{mean:.2f} +- {sem:.2f}"


def report(cfg: ReproduceConfig, results: dict) -> str:
    lines = [f"# Reproduction: {', '.join(results)} on the {cfg.question_set} question set",
             "", f"{cfg.steps} steps of 8 secrets x 8 rollouts (default train.py config), tiny model, rule oracle; seeds {cfg.seeds}; "
             "greedy play of the 20 held-out secrets after the last step. Mean +- SEM over seeds "
             "(Resolve and Zero in %).", "",
             "| Estimator | " + " | ".join(c[1] for c in COLUMNS) + " | Steps to 90% (per seed) | Train time (s) |",
             "|---" * (len(COLUMNS) + 3) + "|"]
    finals = {}
    for est, runs in results.items():
        finals[est] = {key: [s["final_eval"].get(key, float("nan")) for s, _ in runs] for key, _, _ in COLUMNS}
        cells = [fmt(*mean_sem(finals[est][key]), pct) for key, _, pct in COLUMNS]
        reach = [s["steps_to_90"] for s, _ in runs]
        secs = [s["train_seconds"] for s, _ in runs]
        lines.append(f"| {est} | " + " | ".join(cells) + f" | {', '.join(str(r) if r else 'never' for r in reach)} | "
                     f"{sum(secs) / len(secs):.0f} |")
    if "echo" in finals and "grpo" in finals:
        t, p = paired_t_test(finals["echo"]["eval/resolve_rate"], finals["grpo"]["eval/resolve_rate"])
        lines += ["", f"Paired t-test over seeds, held-out resolve, echo vs grpo: t = {t:.3f}, p = {p:.4g} "
                  f"(n = {len(finals['echo']['eval/resolve_rate'])}; with so few seeds read the effect size "
                  "and the per-seed values more than p)."]
        lines += ["", "Per-seed held-out resolve: " + "; ".join(
            f"{est}: {', '.join(f'{x:.2f}' for x in finals[est]['eval/resolve_rate'])}" for est in finals)]
    return "\n".join(lines) + "\n"


def plot(results: dict, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    for ax, key, title in zip(axes, ["clue/episode_resolve_rate", "eval/resolve_rate", "clue/eliminated_mean"],
                              ["training episodes resolved (sampled)", "held-out resolve (greedy)", "eliminated per turn"]):
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


def main(argv=None):
    cfg = parse_config(ReproduceConfig, argv, description=__doc__.splitlines()[0])
    results = run_all(cfg)
    text = report(cfg, results)
    base = Path(cfg.out) / cfg.question_set
    (base / "report.md").write_text(text)
    plot(results, base / "curves.png")
    Path(cfg.report).mkdir(parents=True, exist_ok=True)
    (Path(cfg.report) / f"reproduce_{cfg.question_set}.md").write_text(text)
    plot(results, Path(cfg.report) / f"reproduce_{cfg.question_set}.png")
    print(text)


if __name__ == "__main__":
    main(sys.argv[1:])
