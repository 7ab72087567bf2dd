"""Eq. 1 at work on one batch: a secret's G rollouts turn by turn, the credit each estimator gives
every turn, and the true Bayesian advantage A_B beneath it.

Paper: section 4, Eq. 1 (a turn's reward normalised over the rollouts G_t of its secret still
active at turn t), set against section 5.1's "Episodic Return (GRPO)" (the return normalised over
the G rollouts, on every turn) and per-turn RLOO; section 3 "Bayesian Value and Advantage" (A_B);
Theorem 3.2 (ii): a credit that is a function of the return alone cannot follow A_B from turn to
turn. fidelity.py measures that as correlations over many turns; this draws it on one batch.

One figure, a panel per policy: a row per rollout g, a column per turn t. In each cell the
question asked (short form), |C_t| -> |C_{t+1}| and r_t; under it the turn's credit from ECHO
(Eq. 1), GRPO and RLOO (baselines.ESTIMATORS) and A_B measured by branching
(fidelity.bayesian_advantages, with its standard error), all on one colour scale; a turn that the
rollout did not play (it had found the secret) is grey. `--policies tiny,RUN/checkpoint` draws
the warm-up policy a default run starts from (before RL), then that run's checkpoint (after RL),
on the same secret and seed; the caption names a turn to look at. The console prints the same
numbers as a table. OUT/credit_grid.json holds them with the command, machine, date and commit
(bench/common.save_results), the run of each checkpoint (its settings, seed and step) and the
command's time; OUT/credit_grid.png draws them (bench/report_results.py draws the committed
figure again from its JSON).

Protocol: fidelity.py's, on one secret. The G rollouts are sampled at T = 1 with no top-p cut (as
fidelity's branches and alternatives are), from C_0 = 1..N with the rule oracle, in the game of
the policy's run (its question set and candidate format; train.py's defaults for the warm-up
policy), without the opening random turns and refusals of training episodes: the game held-out
evaluation plays. A_B of every turn: K secrets drawn from b_t per action, M alternatives a'. K
and M are small by default, so that the warm-up panel takes about 25 s on 2 cores with the tiny
model's warm-up cached (bench/LAB.md gives the time measured: 24.2 s) and about 85 s the first
time, which trains the warm-up; at them A_B's standard error is of the order of A_B itself, so
read A_B's sign where it is larger than its error.

    python bench/credit_grid.py [--policies tiny,runs/echo-paper-seed0/checkpoint] [--seed N]
"""

import time

STARTED = time.perf_counter()  # the command's time is counted from here, before torch loads

import json  # noqa: E402
import os  # noqa: E402
import random  # noqa: E402
import sys  # noqa: E402
import textwrap  # noqa: E402
from dataclasses import asdict, dataclass, fields  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import matplotlib  # noqa: E402

from bench.common import save_results  # noqa: E402

matplotlib.use("Agg")  # files only, no window
import matplotlib.pyplot as plt  # noqa: E402
import torch  # noqa: E402
from matplotlib.cm import ScalarMappable  # noqa: E402
from matplotlib.colors import Normalize  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

import fidelity  # noqa: E402
from baselines import ESTIMATORS, EstimatorContext, credit_from_batch  # noqa: E402
from bench.bisection_behaviour import checkpoint_played  # noqa: E402
from bench.generalization import changed_from, run_config, set_defaults  # noqa: E402
from config import (
    config_from_flags,  # noqa: E402
    warmup_config,  # noqa: E402
)
from env import GameConfig, secret_split  # noqa: E402
from game.grammar import render_question  # noqa: E402
from game.questions import parse_question  # noqa: E402
from lm import (
    models,  # noqa: E402
    warmup,  # noqa: E402
)
from lm.models import ModelConfig  # noqa: E402
from policy import SampleConfig  # noqa: E402
from rollouts import play_rollouts  # noqa: E402
from tools.cli import (  # noqa: E402
    arg,
    fail,
    parse_config,
    settings,  # noqa: E402
    use_threads,
)


@dataclass
class CreditGridConfig:
    policies: str = arg(
        "tiny",
        "a panel each, comma-separated: tiny (the warm-up policy a default train.py run starts "
        "from: before RL) or a checkpoint directory of a train.py run (the kept one is the path "
        "RUN/summary.json names: RUN/best, or RUN/checkpoint where the run chose none)",
    )
    secret: int = arg(
        0, "the secret played (0: drawn by --seed from the training secrets)", at_least=0
    )
    seed: int = arg(0, "seed of the rollouts and of the branching", at_least=0)
    group_size: int = arg(4, "G: rollouts of the secret (train.py's default)", at_least=2)
    branches: int = arg(6, "K: secrets z ~ b_t per action when A_B is measured", at_least=2)
    alternatives: int = arg(
        2, "M: actions a' ~ pi(.|h_t) whose mean Q_B is A_B's baseline", at_least=1
    )
    threads: int = arg(0, "torch threads (0: every core; cli.use_threads)", at_least=0)
    out: str = arg(
        "runs/credit_grid", "credit_grid.json and credit_grid.png go here", writes="directory"
    )


CREDITS = ("echo", "grpo", "rloo")  # the estimators drawn, by their names in ESTIMATORS
ROWS = (  # the credit rows under each rollout's questions: (key in a panel, label)
    ("echo", "ECHO (Eq. 1)"),
    ("grpo", "GRPO (return)"),
    ("rloo", "RLOO (per turn)"),
    ("a_b", "A_B (branching)"),
)
SHORTER = (  # grammar.render_question's English, shortened to fit a cell
    ("Is the number ", ""),
    ("Does the number ", ""),
    ("What is the ", ""),
    ("Is the ", ""),
    ("sum of the digits", "digit sum"),
    ("number of digits", "digits"),
    (" inclusive", ""),
    ("strictly between ", "inside "),
    ("between ", "in "),
    (" and ", ".."),
    ("greater than ", "> "),
    ("at least ", ">= "),
    ("less than ", "< "),
    ("at most ", "<= "),
    ("divisible by ", "div by "),
    ("a perfect ", ""),
    ("a power of two", "power of 2"),
    (" number", ""),
)


def short_question(record) -> str:
    """A turn's question in a few words: the canonical English of what the game read
    (grammar.render_question), shortened; in parentheses, as written, one it could not read."""
    if record.invalid:
        return "(unreadable)"
    query = parse_question(record.question)
    if query is None:
        text = record.question.removeprefix("Is the number ").rstrip("?")
        return f"({text})" if len(text) <= 18 else f"({text[:17]}…)"
    text = render_question(query)
    for long, short in SHORTER:
        text = text.replace(long, short)
    text = text.removeprefix("a ")
    return text if len(text) <= 20 else text[:19] + "…"


def branching_streams(seed: int) -> tuple[random.Random, torch.Generator]:
    """The random streams A_B is measured with: the secrets of the branches, and the actions."""
    return random.Random(seed), torch.Generator().manual_seed(seed)


def play(policy, game: GameConfig, secret: int, group_size: int, seed: int):
    """G rollouts of one secret, sampled at T = 1 with no top-p cut: a policy.RolloutBatch."""
    generator = torch.Generator().manual_seed(seed)
    return play_rollouts(policy, [secret], group_size, game, SampleConfig(), generator=generator)


def measure(policy, game: GameConfig, secret: int, cfg: CreditGridConfig) -> dict:
    """One panel's numbers: the batch's turns, each estimator's credit, A_B. Every grid is (G, T),
    None where the rollout did not play turn t."""
    batch = play(policy, game, secret, cfg.group_size, cfg.seed)
    credit = credit_from_batch(batch, game.n_max)
    grids = {  # (1, G, T) -> (G, T): the batch is one secret
        name: ESTIMATORS[name].advantages(credit, EstimatorContext())[0] for name in CREDITS
    }
    rng, generator = branching_streams(cfg.seed)
    truth = fidelity.bayesian_advantages(
        batch,
        list(range(len(batch.records))),
        policy,
        fidelity.lm_actor(policy, generator),
        game,
        cfg.branches,
        cfg.alternatives,
        rng,
        generator,
    )
    per_turn = {
        "question": [short_question(r) for r in batch.records],
        "candidates_before": [r.candidates_before for r in batch.records],
        "candidates_after": [r.candidates_after for r in batch.records],
        "reward": [r.reward for r in batch.records],
        "resolved": [r.turn_resolved for r in batch.records],
        "a_b": [x["a_b"] for x in truth],
        "a_b_se": [x["a_b_se"] for x in truth],
    }
    _, g, t = batch.cells()
    cells = [[None] * game.max_turns for _ in range(cfg.group_size)]
    out = {key: [row[:] for row in cells] for key in (*per_turn, *CREDITS)}
    for i, (gi, ti) in enumerate(zip(g.tolist(), t.tolist())):
        for key, values in per_turn.items():
            out[key][gi][ti] = values[i]
        for name in CREDITS:
            out[name][gi][ti] = grids[name][gi, ti].item()
    returns = torch.where(credit.active, credit.rewards, 0.0).sum(-1)[0]  # (G,)
    return {
        "active": credit.active[0].tolist(),
        "returns": returns.tolist(),
        **out,
    }


def loaded(spec: str, defaults) -> tuple:
    """(policy, game, run, label) of a panel: the warm-up policy in train.py's default game, or a
    checkpoint in its run's game (train_config.json beside it), with the run's record."""
    if spec == "tiny":
        model_cfg = settings(ModelConfig, defaults)
        policy = warmup.starting_policy(model_cfg, warmup_config(defaults), quiet=True)[0]
        return policy, settings(GameConfig, defaults), None, "before RL: the warm-up policy"
    if not os.path.isdir(spec):
        fail(
            "credit_grid.py",
            f"{spec!r} is neither tiny nor a directory: give a checkpoint that train.py wrote, "
            "e.g. runs/echo-paper-seed0/checkpoint.",
        )
    policy = models.load_policy_for("credit_grid.py", spec, "cpu", "fp32", trainable=False)
    run_dir = Path(spec).resolve().parent
    if not (run_dir / "train_config.json").exists():
        return policy, settings(GameConfig, defaults), None, f"{spec}"
    config = run_config(run_dir)
    played = checkpoint_played(spec)
    summary = run_dir / "summary.json"
    kept = summary.exists() and Path(json.loads(summary.read_text())["kept"]["path"]).resolve()
    run = {
        **played,
        "kept": kept == Path(spec).resolve(),  # the checkpoint summary.json names as the run's
        "run_name": run_dir.name,
        "estimator": config["estimator"],
        "seed": config["seed"],
        "settings": changed_from(config, set_defaults(config["question_set"])),
    }
    game = GameConfig(**{f.name: config[f.name] for f in fields(GameConfig) if f.name in config})
    label = f"after RL: {run['run_name']}, step {played['step']}"
    return policy, game, run, label + (", the run's kept checkpoint" if run["kept"] else "")


# ------------------------------------------------------------------ the table and the caption
def table(result: dict) -> str:
    """The numbers the figure draws, a line per turn played."""
    lines = []
    for p in result["panels"]:
        lines += [
            f"{p['label']} | secret {result['secret']}, seed {result['seed']}",
            f"{'g':>2} {'t':>2}  {'question':20s} {'|C_t| -> |C_t+1|':>16} {'r_t':>6} "
            f"{'ECHO':>6} {'GRPO':>6} {'RLOO':>6} {'A_B':>6} +- se",
        ]
        for g, row in enumerate(p["active"]):
            for t, played in enumerate(row):
                if played:
                    size = f"{p['candidates_before'][g][t]} -> {p['candidates_after'][g][t]}"
                    credit = " ".join(f"{p[name][g][t]:+6.2f}" for name, _ in ROWS)
                    lines.append(
                        f"{g + 1:2d} {t:2d}  {p['question'][g][t]:20s} {size:>16} "
                        f"{p['reward'][g][t]:+6.2f} {credit} +- {p['a_b_se'][g][t]:.2f}"
                    )
            lines.append(f"   rollout {g + 1}: return {p['returns'][g]:+.2f}")
        lines.append("")
    return "\n".join(lines)


def turn_to_look_at(result: dict) -> tuple | None:
    """(panel, g, t) of a good question in a rollout whose return is below its group's: GRPO's
    credit negative, ECHO's and A_B's positive; of those, the question that removed the largest
    share of C_t (then the largest A_B)."""
    found = [
        (1 - p["candidates_after"][g][t] / p["candidates_before"][g][t], p["a_b"][g][t], n, g, t)
        for n, p in enumerate(result["panels"])
        for g, row in enumerate(p["active"])
        for t, played in enumerate(row)
        if played and p["grpo"][g][t] < 0 < min(p["echo"][g][t], p["a_b"][g][t])
    ]
    return max(found)[2:] if found else None


def caption(result: dict) -> str:
    """What to look at, from the numbers drawn."""
    text = (
        "GRPO gives every turn of a rollout its return's place in the group, so each GRPO row is "
        "one colour; ECHO (Eq. 1) and RLOO set each turn's reward against the other rollouts' at "
        "that turn t; A_B is the true advantage, measured by branching (± its standard error). "
    )
    pick = turn_to_look_at(result)
    if pick is None:
        text += (
            "No turn of this batch has a good question in a rollout below its group's return "
            "(GRPO negative, ECHO and A_B positive): another --seed draws other rollouts."
        )
    else:
        n, g, t = pick
        p = result["panels"][n]
        text += (
            f"Look at rollout {g + 1}, turn {t} ({p['label'].split(':')[0]}): "
            f'"{p["question"][g][t]}" took |C_t| from {p["candidates_before"][g][t]} to '
            f"{p['candidates_after'][g][t]} (r_t {p['reward'][g][t]:+.2f}) in a rollout whose "
            f"return is below its group's. GRPO blames it ({p['grpo'][g][t]:+.2f}); ECHO "
            f"({p['echo'][g][t]:+.2f}) does not; A_B is {p['a_b'][g][t]:+.2f} ± "
            f"{p['a_b_se'][g][t]:.2f}"
            + (
                ", positive beyond its error."
                if p["a_b"][g][t] > p["a_b_se"][g][t]
                else ", its error as large as itself, so its sign is not shown here."
            )
        )
    for p in result["panels"][1:]:
        head = p["label"].split(":")[0]
        played = [(g, t) for g, row in enumerate(p["active"]) for t, on in enumerate(row) if on]
        largest = lambda key: max(abs(p[key][g][t]) for g, t in played)  # noqa: E731
        text += (
            f" {head[:1].upper() + head[1:]}: the returns differ by at most "
            f"{max(p['returns']) - min(p['returns']):.2f}, yet GRPO's credit reaches "
            f"±{largest('grpo'):.2f} (normalised over the group, credit is scale-free; so is "
            f"ECHO's, ±{largest('echo'):.2f}), while A_B stays within ±{largest('a_b'):.2f}."
        )
    return text


# ------------------------------------------------------------------ the figure
INFO, ROW, GAP = 1.8, 1.0, 0.6  # heights, in rows, of a rollout's question cells, a credit, a gap
INCH, COLUMN, LEFT, RIGHT = 0.24, 1.3, 1.6, 1.2  # a row's height, a turn's width, margins: inches
HEAD, PANEL_HEAD = 0.5, 0.7  # inches above the panels (the title) and above each panel
ENDED = "#cccccc"  # a turn the rollout did not play
CMAP = plt.get_cmap("RdBu")  # diverging: red below 0, white at 0, blue above


def columns(panel: dict) -> int:
    """The turns a panel draws: up to the last any rollout played."""
    return max(t + 1 for row in panel["active"] for t, played in enumerate(row) if played)


def draw(result: dict):
    """The figure of a credit_grid result (its JSON): a matplotlib Figure. Each cell's rectangle
    carries the gid "p{panel}-g{rollout}-t{turn}-{row}", row "info" or a ROWS key."""
    panels = result["panels"]
    drawn = [
        abs(v) for p in panels for key, _ in ROWS for row in p[key] for v in row if v is not None
    ]
    scale = Normalize(-max(drawn, default=1.0), max(drawn, default=1.0))
    block = INFO + ROW * len(ROWS) + GAP  # one rollout, in rows
    heights = [len(p["active"]) * block * INCH for p in panels]
    words, pick = textwrap.wrap(caption(result), 170), turn_to_look_at(result)
    width = LEFT + COLUMN * max(columns(p) for p in panels) + RIGHT
    height = HEAD + sum(h + PANEL_HEAD for h in heights) + 0.2 * len(words) + 0.3
    fig = plt.figure(figsize=(width, height))
    fig.suptitle(
        f"Secret {result['secret']}, seed {result['seed']}: the credit each turn gets, on one "
        "colour scale (blue: credit, red: blame; the caption's turn outlined)",
        y=1 - 0.3 / height,
        fontsize=12,
    )
    top = height - HEAD
    for n, (p, h) in enumerate(zip(panels, heights)):
        top -= h + PANEL_HEAD
        ax = fig.add_axes(
            (LEFT / width, top / height, COLUMN * columns(p) / width, h / height),
            xlim=(0, columns(p)),
            ylim=(h / INCH, 0),
        )
        ax.axis("off")
        ax.set_title(
            f"{p['label']} (secret {result['secret']}, seed {result['seed']}, "
            f"G = {len(p['active'])})",
            fontsize=10,
            loc="left",
            pad=16,
        )
        for t in range(columns(p)):
            ax.text(t + 0.5, -0.25, f"t = {t}", ha="center", va="bottom", fontsize=8)
        for g, row in enumerate(p["active"]):
            labels(ax, p, g, g * block)
            for t in range(columns(p)):
                cell(ax, p, f"p{n}-g{g}-t{t}-", g, t, g * block, row[t], scale)
        if pick is not None and pick[0] == n:  # the caption's turn, outlined
            _, g, t = pick
            ax.add_patch(
                Rectangle((t, g * block), 1, block - GAP, fill=False, edgecolor="black", lw=2.5)
            )
        if n == 0:  # the scale, beside the first panel
            bar = fig.add_axes(((width - 0.8) / width, top / height, 0.15 / width, h / height))
            fig.colorbar(ScalarMappable(scale, CMAP), cax=bar, label="credit, advantage")
    fig.text(0.15 / width, 0.25 / height, "\n".join(words), fontsize=9, va="bottom", ha="left")
    return fig


def labels(ax, p: dict, g: int, y: float) -> None:
    """A rollout's labels left of its cells: its number and return, then each credit row's name."""
    found = any(p["resolved"][g][t] for t, played in enumerate(p["active"][g]) if played)
    ax.text(
        -0.06,
        y + INFO / 2,
        f"rollout {g + 1}\nreturn {p['returns'][g]:+.2f}" + ("\nfound it" if found else ""),
        ha="right",
        va="center",
        fontsize=8,
    )
    for k, (_, label) in enumerate(ROWS):
        ax.text(-0.06, y + INFO + (k + 0.5) * ROW, label, ha="right", va="center", fontsize=7)


def cell(ax, p: dict, gid: str, g: int, t: int, y: float, played: bool, scale) -> None:
    """One turn of one rollout: its question cell and its credit cells, grey where not played."""
    info = Rectangle((t, y), 1, INFO, facecolor="white" if played else ENDED, edgecolor="white")
    info.set_gid(gid + "info")
    ax.add_patch(info)
    if played:
        found = " found" if p["resolved"][g][t] else ""
        text = (
            f"{p['question'][g][t]}\n{p['candidates_before'][g][t]} → "
            f"{p['candidates_after'][g][t]}{found}\nr_t {p['reward'][g][t]:+.2f}"
        )
        ax.text(t + 0.5, y + INFO / 2, text, ha="center", va="center", fontsize=7)
    else:
        ax.text(t + 0.5, y + INFO / 2, "ended", ha="center", va="center", fontsize=7, color="grey")
    for k, (key, _) in enumerate(ROWS):
        value = p[key][g][t] if played else None
        colour = CMAP(scale(value)) if value is not None else ENDED
        box = Rectangle((t, y + INFO + k * ROW), 1, ROW, facecolor=colour, edgecolor="white")
        box.set_gid(gid + key)
        ax.add_patch(box)
        if value is not None:
            text = f"{value:+.2f}" + (f" ± {p['a_b_se'][g][t]:.2f}" if key == "a_b" else "")
            dark = abs(scale(value) - 0.5) > 0.3  # white text on the deep colours
            ax.text(
                t + 0.5,
                y + INFO + (k + 0.5) * ROW,
                text,
                ha="center",
                va="center",
                fontsize=7,
                color="white" if dark else "black",
            )


def save(result: dict, target) -> None:
    """The figure as a PNG, to a path or a binary file, whose bytes depend on the result alone
    (no software or date stamp): the report draws the same bytes from the JSON."""
    fig = draw(result)
    fig.savefig(target, format="png", dpi=90, metadata={"Software": None})
    plt.close(fig)


def main(argv=None) -> dict:
    cfg = parse_config(CreditGridConfig, argv, description=__doc__.splitlines()[0])
    load = os.getloadavg()[0]  # the machine's load as the command starts: its time depends on it
    threads = use_threads(cfg.threads)
    specs = [s.strip() for s in cfg.policies.split(",") if s.strip()]
    if not specs:
        fail("credit_grid.py", "--policies is empty: give tiny, a checkpoint directory, or both.")
    defaults = config_from_flags([])
    if cfg.secret > defaults.n_max:
        fail("credit_grid.py", f"--secret must be in 1..{defaults.n_max} (0 draws one).")
    secret = cfg.secret or random.Random(cfg.seed).choice(secret_split()[0])
    result = {"config": asdict(cfg), "secret": secret, "seed": cfg.seed, "panels": []}
    for spec in specs:
        policy, game, run, label = loaded(spec, defaults)
        panel = {"policy": spec, "label": label, "run": run, "game": asdict(game)}
        panel |= measure(policy, game, secret, cfg)
        panel["seconds_since_start"] = round(time.perf_counter() - STARTED, 1)
        result["panels"].append(panel)
    print(table(result))
    print(caption(result))
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    save(json.loads(json.dumps(result)), out / "credit_grid.png")  # what the JSON will read back
    result |= {
        "seconds": round(time.perf_counter() - STARTED, 1),
        "cpu_seconds": round(time.process_time(), 1),
        "threads": threads,
        "load_average": load,
    }
    save_results(result, str(out / "credit_grid.json"))
    print(f"wrote {out / 'credit_grid.png'}; the command took {result['seconds']} s")
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
