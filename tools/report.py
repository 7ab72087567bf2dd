"""The paper's tables and figures from episode logs, and the logs themselves on disk.

Paper: Table 1 (tab:csg_main_results), App. C (the LateCalib / recovery, arm-routing and
hint-type tables), App. D (the four-table episode data: model_summary, runs, episodes, turns).
The tables' `group` column is the policy's kind (reference, api, lm), as the paper's data name it.
evaluate.py plays the games; this module turns its turn rows into tables, text, CSV/JSONL files
and PNG figures, and reads the files back (`python evaluate.py --from-logs DIR`).
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np

import metrics
from tools import diagnostics, stats

SAMPLED = " [T=1]"  # the row of a language model sampled at T = 1, beside its greedy row


class LogError(ValueError):
    """Logs that cannot be read back: the user gave the wrong directory."""


def turns_by_model(turn_rows) -> dict:
    """{model_key: {run_id: [episode (turn rows in order)]}} in order of first appearance."""
    out = {}
    for r in turn_rows:
        out.setdefault(r["model_key"], {}).setdefault(r["run_id"], {}).setdefault(
            r["episode_id"], []
        ).append(r)
    return {
        m: {
            run: [sorted(ep, key=lambda r: r["turn"]) for ep in eps.values()]
            for run, eps in runs.items()
        }
        for m, runs in out.items()
    }


def candidate_curve(episodes, max_turns: int) -> list[float]:
    """Mean log2 |C_t| after t = 0..T turns; an episode that ended early keeps its last size."""
    sizes = np.array(  # (episodes, T + 1)
        [
            (
                [ep[0]["candidates_before"]]
                + [r["candidates_after"] for r in ep]
                + [ep[-1]["candidates_after"]] * max_turns
            )[: max_turns + 1]
            for ep in episodes
        ],
        dtype=float,
    )
    return np.log2(sizes).mean(axis=0).tolist()


def build_tables(turn_rows, n_arms: int, max_turns: int) -> dict:
    """Every number the tables print, per policy, from the turn rows alone."""
    results = {}
    kinds = {r["model_key"]: r["group"] for r in turn_rows}
    for model, runs in turns_by_model(turn_rows).items():
        per_run = {run: metrics.run_metrics(eps) for run, eps in runs.items()}
        pooled = [ep for eps in runs.values() for ep in eps]
        results[model] = {
            "group": kinds[model],
            "runs": per_run,
            "summary": {
                k: stats.mean_sem([m[k] for m in per_run.values()]) for k in metrics.RUN_KEYS
            },
            "arms": diagnostics.arm_diagnostics(pooled, n_arms),
            "hints": diagnostics.hint_distribution(pooled),
            "recovery": {event: metrics.recovery(pooled, event) for event in metrics.EVENTS},
            "resolve": metrics.resolve(pooled),
            "candidates": candidate_curve(pooled, max_turns),
            "resolve_over_secrets": resolve_over_secrets(pooled),
        }
    return results


def resolve_over_secrets(episodes) -> tuple[float, float]:
    """(mean, SEM) over secrets of each secret's resolve rate, all its episodes pooled: the
    standard error of a resolve rate when the evaluation secrets are the sample."""
    by_secret = {}
    for ep in episodes:
        if ep and "secret" in ep[0]:
            by_secret.setdefault(ep[0]["secret"], []).append(metrics.episode_resolved(ep))
    return stats.mean_sem([sum(v) / len(v) for v in by_secret.values()])


def _num(x, digits=3, scale=1.0) -> str:
    return (
        "n/a"
        if x is None or (isinstance(x, float) and math.isnan(x))
        else f"{x * scale:.{digits}f}"
    )


def _ms(pair, digits=3, scale=1.0) -> str:
    mean, sem = pair
    return _num(mean, digits, scale) + ("" if math.isnan(sem) else f" ± {_num(sem, digits, scale)}")


def _render(title: str, header: list, rows: list) -> str:
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows)]

    def line(cells):
        first, rest = (
            str(cells[0]).ljust(widths[0]),
            [str(c).rjust(w) for c, w in zip(cells[1:], widths[1:])],
        )
        return "  ".join([first] + rest)

    return "\n".join([title, line(header), "-" * len(line(header))] + [line(r) for r in rows])


# (column, runs-table key, digits, scale) of the two tables printed as mean ± SEM over runs.
TABLE1 = [
    ("Resolve", "resolve_rate", 1, 100),
    ("Zero", "zero_rate", 1, 100),
    ("Qual.", "quality_mean", 3, 1),
    ("Ground", "grounded_rate", 3, 1),
    ("GRecover", "grounded_recover_rate", 3, 1),
    ("ResAfterZero", "res_after_zero", 3, 1),
    ("Reason%", "reason_pct", 1, 1),
]
AGGREGATE_TABLE = [
    ("Efficiency", "efficiency", 3, 1),
    ("Reward", "mean_total_reward", 3, 1),
    ("Elim", "mean_eliminated", 2, 1),
    ("FinalCands", "mean_final_candidates", 2, 1),
    ("ArmMatch", "arm_match_rate", 3, 1),
    ("Redund.", "redundancy_rate", 3, 1),
    ("Divers.", "diversity_rate", 3, 1),
    ("Turns", "mean_turns_taken", 2, 1),
]
LATE_TABLE = [
    ("LateCalib", "late_calib", 3, 1),
    ("ZeroEvents", "zero_events", 1, 1),
    ("Rec1", "rec1", 3, 1),
    ("RecQ", "rec_q", 3, 1),
    ("NextZero", "next_zero", 3, 1),
    ("NextBad", "next_bad", 3, 1),
    ("TTR", "ttr", 2, 1),
    ("TTRsucc", "ttr_succ", 3, 1),
]
RECOVERY_COLUMNS = ["Rec1", "GRec1", "RecQ", "Gain", "TTR", "TTRsucc", "Sust2", "NextRed", "EpRes"]
EVENT_TITLES = {
    "zero": "zero-elimination events",
    "bad": "bad events (zero or wasted)",
    "low": "low-quality events (answered, Qual < 0.5)",
    "late_bad": "late bad events (bad from the fifth turn on)",
}


def format_tables(results: dict, info: dict) -> str:
    """Every table as text: Table 1, LateCalib, arm diagnostics, hint types, four recovery
    tables."""
    g, e = info["game"], info["eval"]
    decoding = (
        "greedy" if e["temperature"] == 0 else f"sampled (T={e['temperature']}, top-p {e['top_p']})"
    )
    out = [
        f"CSG evaluation: {e['eval_set']} set, {len(info['secrets'])} secrets, N={g['n_max']}, "
        f"T={g['max_turns']}, {g['question_set']} questions, {e['oracle']} oracle, {e['runs']} "
        "runs, "
        f"{decoding} decoding"
    ]
    out += mean_sem_tables(results)
    if any(m + SAMPLED in results for m in results):
        out.append(sampled_table(results))
    out += [arm_table(results), hint_table(results), *recovery_tables(results)]
    if info.get("skipped"):
        out.append("\n".join(dict.fromkeys(info["skipped"].values())))  # rows left out, and why
    return "\n\n".join(out)


def mean_sem_tables(results: dict) -> list[str]:
    """Table 1, LateCalib with recovery, and the paper's script's aggregates: mean +- SEM over
    runs."""
    titles = {
        "Table 1 (tab:csg_main_results): mean ± SEM over runs, Resolve/Zero/Reason% in %": TABLE1,
        "LateCalib and recovery after ZeroEvents (App. C): mean ± SEM over runs": LATE_TABLE,
        "The paper's evaluation-script aggregates (per episode, then over episodes): mean ± SEM "
        "over runs": AGGREGATE_TABLE,
    }
    return [
        _render(
            title,
            ["Model"] + [c[0] for c in columns],
            [
                [m] + [_ms(r["summary"][key], digits, scale) for _, key, digits, scale in columns]
                for m, r in results.items()
            ],
        )
        for title, columns in titles.items()
    ]


def sampled_table(results: dict) -> str:
    """Resolve of each policy played greedy and sampled at T = 1, over runs and over secrets."""
    sampled = [m for m in results if m + SAMPLED in results]
    return _render(
        "Resolve, greedy and sampled at T = 1 (%): mean ± SEM over runs | mean ± SE over "
        "the secrets (all episodes of a secret pooled)",
        ["Model", "Greedy (runs)", "Greedy (secrets)", "Sampled (runs)", "Sampled (secrets)"],
        [
            [
                m,
                _ms(results[m]["summary"]["resolve_rate"], 1, 100),
                _ms(results[m]["resolve_over_secrets"], 1, 100),
                _ms(results[m + SAMPLED]["summary"]["resolve_rate"], 1, 100),
                _ms(results[m + SAMPLED]["resolve_over_secrets"], 1, 100),
            ]
            for m in sampled
        ],
    )


def arm_table(results: dict) -> str:
    """App. C's arm routing and belief diagnostics, all runs pooled."""
    arm_columns = list(next(iter(results.values()))["arms"])
    return _render(
        "Arm routing and belief diagnostics (tab:arm_routing_belief_diagnostics), all runs pooled",
        ["Model"] + arm_columns,
        [[m] + [_num(r["arms"][c]) for c in arm_columns] for m, r in results.items()],
    )


def hint_table(results: dict) -> str:
    """App. C's hint-type distribution: turns of each type (and their share), all runs pooled."""
    hint_columns = ["ZeroElim", *diagnostics.HINT_COLUMNS]

    def cell(hints: dict, column: str) -> str:
        return f"{hints[column]} ({_num(hints[column] / max(hints['Turns'], 1), 1, 100)})"

    return _render(
        "Hint-type distribution (tab:csg_hint_distribution_all): turns (% of turns), runs pooled",
        ["Model", "Turns"] + hint_columns,
        [
            [m, r["hints"]["Turns"]] + [cell(r["hints"], c) for c in hint_columns]
            for m, r in results.items()
        ],
    )


def recovery_tables(results: dict) -> list[str]:
    """App. C's four recovery tables, one per kind of event, all runs pooled."""
    return [
        _render(
            f"Recovery after {title} (tab:csg_recovery_{event}), all runs pooled",
            ["Model", "Resolve", "N"] + RECOVERY_COLUMNS,
            [
                [m, _num(r["resolve"], 1, 100) + "%", r["recovery"][event]["N"]]
                + [_num(r["recovery"][event][c], 2 if c == "TTR" else 3) for c in RECOVERY_COLUMNS]
                for m, r in results.items()
            ],
        )
        for event, title in EVENT_TITLES.items()
    ]


# ---------------------------------------------------------------------------------------------
# Logs on disk (App. D: model_summary, runs, episodes, turns; CSV and JSONL) and figures
# ---------------------------------------------------------------------------------------------


def _plain(v):
    return None if isinstance(v, float) and math.isnan(v) else v


def _write_table(out: Path, name: str, rows: list[dict]) -> None:
    rows = [{k: _plain(v) for k, v in r.items()} for r in rows]
    with open(out / f"{name}.jsonl", "w", encoding="utf-8") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)
    columns = list(dict.fromkeys(k for r in rows for k in r))
    with open(out / f"{name}.csv", "w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, columns)
        writer.writeheader()
        writer.writerows(rows)


def write_logs(
    out: Path, turns: list, episodes: list, results: dict, info: dict, text: str
) -> None:
    out.mkdir(parents=True, exist_ok=True)
    runs = [
        {"model_key": m, "group": r["group"], "run_id": run, "seed": int(run[3:]), **values}
        for m, r in results.items()
        for run, values in r["runs"].items()
    ]
    names = {
        "quality_mean": "quality",
        "grounded_rate": "grounded",
        "grounded_recover_rate": "grounded_recover",
    }
    summary = [
        {
            "model_key": m,
            "group": r["group"],
            "n_runs": len(r["runs"]),  # the paper's names (App. D)
            **{
                names.get(k, k) + end: v
                for k, pair in r["summary"].items()
                for end, v in zip(("", "_sem"), pair)
            },
        }
        for m, r in results.items()
    ]
    for name, rows in (
        ("model_summary", summary),
        ("runs", runs),
        ("episodes", episodes),
        ("turns", turns),
    ):
        _write_table(out, name, rows)
    (out / "config.json").write_text(json.dumps(info, indent=2))
    (out / "tables.txt").write_text(text + "\n")


def read_logs(directory: str) -> tuple[list, dict]:
    """(turn rows, config) of an earlier evaluation: everything the tables need."""
    d = Path(directory)
    try:
        info = json.loads((d / "config.json").read_text())
        with open(d / "turns.jsonl", encoding="utf-8") as f:
            turns = [json.loads(line) for line in f if line.strip()]
    except (OSError, ValueError) as e:
        raise LogError(
            f"cannot read the evaluation logs in {directory!r} ({e}); give the --out "
            "directory of an earlier evaluate.py run."
        ) from e
    if not turns:
        raise LogError(f"{directory!r} holds no turns to recompute tables from.")
    return turns, info


def write_figures(results: dict, info: dict, out: Path) -> list[Path]:
    """Resolve vs Zero, candidate-set size per turn, recovery after zero events, hint types."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    figures = {
        "resolve_vs_zero.png": resolve_vs_zero,
        "candidates_per_turn.png": lambda r, ax: candidates_per_turn(r, ax, info["game"]["n_max"]),
        "recovery_after_zero.png": recovery_after_zero,
        "hint_types.png": hint_types,
    }
    sizes = {"recovery_after_zero.png": (6, 4), "hint_types.png": (7, 0.5 * len(results) + 2)}
    paths = []
    for name, draw in figures.items():
        fig, ax = plt.subplots(figsize=sizes.get(name, (5, 4)))
        draw(results, ax)
        fig.tight_layout()
        fig.savefig(out / name, dpi=120)
        plt.close(fig)
        paths.append(out / name)
    return paths


def resolve_vs_zero(results: dict, ax) -> None:
    for m in results:
        (z, zs), (r, rs) = results[m]["summary"]["zero_rate"], results[m]["summary"]["resolve_rate"]
        ax.errorbar(
            100 * z,
            100 * r,
            xerr=100 * np.nan_to_num(zs),
            yerr=100 * np.nan_to_num(rs),
            fmt="o",
            capsize=3,
        )
        ax.annotate(m, (100 * z, 100 * r), textcoords="offset points", xytext=(4, 4), fontsize=7)
    ax.set(
        xlabel="Zero (% of answered turns)",
        ylabel="Resolve (% of episodes)",
        title="Resolve vs zero-elimination rate",
    )


def candidates_per_turn(results: dict, ax, n_max: int) -> None:
    for m in results:
        curve = results[m]["candidates"]
        ax.plot(range(len(curve)), curve, marker="o", ms=3, label=m)
    ax.set(
        xlabel="turns played t", ylabel="mean log2 |C_t|", title=f"Candidate set size (N={n_max})"
    )
    ax.legend(fontsize=7)


def recovery_after_zero(results: dict, ax) -> None:
    cols = ["Rec1", "GRec1", "NextZero", "TTRsucc", "EpRes"]
    width = 0.8 / len(results)
    for j, m in enumerate(results):
        values = [np.nan_to_num(results[m]["recovery"]["zero"][c]) for c in cols]
        label = f"{m} (N={results[m]['recovery']['zero']['N']})"
        ax.bar(np.arange(len(cols)) + j * width, values, width, label=label)
    ax.set_xticks(np.arange(len(cols)) + 0.4 - width / 2, cols)
    ax.set(ylabel="fraction of zero events", title="After a zero-elimination turn", ylim=(0, 1))
    ax.legend(fontsize=7)


def hint_types(results: dict, ax) -> None:
    import matplotlib.pyplot as plt

    models = list(results)
    left = np.zeros(len(models))  # each bar's start: the shares of the columns before
    for c in diagnostics.HINT_COLUMNS:
        share = np.array(
            [results[m]["hints"][c] / max(results[m]["hints"]["Turns"], 1) for m in models]
        )
        color = plt.cm.tab20(diagnostics.HINT_COLUMNS.index(c))
        ax.barh(models, share, left=left, label=c, color=color)
        left += share
    ax.set(xlabel="share of turns", title="Hint-type distribution", xlim=(0, 1))
    ax.legend(fontsize=7, ncol=4, loc="upper center", bbox_to_anchor=(0.5, -0.25))


def plot_curves(rows: list[dict], path: Path, title: str) -> None:
    """RUN/training_curves.png: the metrics a reader of the paper's training figures looks at,
    one panel each, against the step (eval/ points are evaluations)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = [
        "clue/reward",
        "clue/episode_resolve_rate",
        "eval/sampled_resolve_rate",
        "eval/resolve_rate",
        "clue/eliminated_mean",
        "clue/redundancy_rate",
        "clue/arm_match_rate",
        "train/entropy",
        "train/clip_fraction",
    ]
    fig, axes = plt.subplots(3, 3, figsize=(14, 9.5))
    for ax, key in zip(axes.flat, keys):
        pts = [(r["step"], r[key]) for r in rows if key in r and r[key] == r[key]]
        if pts:
            ax.plot(*zip(*pts), marker="o" if key.startswith("eval/") else None, ms=3)
        ax.set_title(key, fontsize=9)
        ax.set_xlabel("step")
        ax.grid(alpha=0.3)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


class TensorBoardLog:
    """A run's per-step rows, as RUN/metrics.jsonl holds them, also written as TensorBoard event
    files under RUN/tensorboard (train.py --tensorboard): every number of a row is a scalar under
    its logged name (`train/`, `clue/`, `eval/` become TensorBoard's groups) at the row's step,
    and the run's resolved config is a text summary. `tensorboard --logdir runs` shows every run
    below runs/ side by side, while they train.

    purge_step: the first step a resumed run writes again; TensorBoard drops the events at it
    and after it that an earlier process wrote, as --resume drops those rows of metrics.jsonl.
    """

    def __init__(self, directory: Path, config: dict, purge_step: int | None = None):
        try:
            from torch.utils.tensorboard import SummaryWriter
        except ImportError as e:  # the package is pinned in requirements.txt
            raise RuntimeError(
                "--tensorboard needs the tensorboard package: pip install -r requirements.txt"
            ) from e
        self.writer = SummaryWriter(log_dir=str(directory), purge_step=purge_step)
        text = "```\n" + json.dumps(config, indent=2) + "\n```"  # markdown: kept as written
        self.writer.add_text("config", text, global_step=purge_step or 0)

    def write(self, row: dict) -> None:
        """One step's row: its numbers (a flag as 0 or 1), at its step."""
        for name, value in row.items():
            if name != "step" and isinstance(value, (int, float)):
                self.writer.add_scalar(name, float(value), global_step=row["step"])
        self.writer.flush()  # a run read while it trains shows every finished step

    def close(self) -> None:
        self.writer.close()
