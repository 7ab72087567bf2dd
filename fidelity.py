"""The fidelity lab: every estimator's credit set against the true per-turn Bayesian advantage.

Paper: section 3 "Bayesian Value and Advantage": Q_B(h_t, a) = E_{z ~ b_t}[Q_z(h_t, a)] and
A_B(h_t, a_t) = Q_B(h_t, a_t) - E_{a' ~ pi(.|h_t)} Q_B(h_t, a'); Theorem 3.2 (ii) with App. A
Theorem A.3: credit that is a function of the return R = sum_t r_t alone (the paper writes it
G; here G is the group size) is off A_B by at least E[Var(A_B | R)]; section 4: ECHO's turn-wise
normalisation "is not an exact belief-local advantage after rollouts diverge". In the Clue
Selector Game b_t = Unif(C_t) is known exactly, so A_B can be measured on the real game with
the real policy:

    1. play     B secrets x G rollouts of the policy, sampled at T = 1, as train.py does
    2. credit   each estimator's advantage for every turn, from its own rollout group
    3. truth    for turns (h_t, a_t) drawn from the batch, by branching: K secrets z ~ b_t, the
                history h_t replayed for each (env.CSG.branch), the action taken, the policy
                carried on to the horizon; Q_B(h_t, a) = the mean return-to-go sum_{s >= t} r_s.
                A_B(h_t, a_t) = Q_B(h_t, a_t) - the mean of Q_B(h_t, a'_m) over M actions
                a'_m ~ pi(.|h_t): unbiased, with its standard error from the branches
    4. compare  per estimator, overall and by turn: Pearson and Spearman correlation, sign
                agreement, and the error left after the best scale c (min_c E[(c A - A_B)^2],
                relative to E[A_B^2], c >= 0), with bootstrap intervals over the drawn turns; and
                the floor of every return-only credit, E[Var(A_B | R)] (relative), estimated from
                the same turns (within-return-bin variance, less the branching noise).

A cheaper reference needs no branching: the one-step Bayesian advantage A1_B, the same with
the return-to-go cut to the turn's own reward, E_{z ~ b_t}[r_t(a)] computed exactly over every
z in C_t. train.py logs the correlation of its estimator with A1_B (train/credit_onestep_corr,
`credit_probe`).

    python fidelity.py [--policy tiny | CHECKPOINT_DIR] [--quick]
"""

from __future__ import annotations

import json
import math
import random
import sys
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

# before torch: cli sets how OpenMP's idle threads wait (tools/cli.py)
from tools.cli import arg, fail, parse_config, save_config, use_threads

# isort: split

import torch

from baselines import ESTIMATORS, EstimatorContext, credit_from_batch
from env import CSG, GameConfig, answer_partition, secret_split
from game.prompts import read_action
from lm import models
from lm.models import ModelConfig
from lm.warmup import WarmupConfig, starting_policy
from policy import SampleConfig
from rollouts import play_rollouts


@dataclass
class FidelityConfig:
    policy: str = arg(
        "tiny", "tiny (the warmed-up model, before RL) or a checkpoint directory of train.py"
    )
    question_set: str = arg("paper", "paper or binary")
    secrets: int = arg(8, "B: secrets of the batch the estimators credit", at_least=1)
    group_size: int = arg(4, "G: rollouts per secret (train.py's default)", at_least=2)
    turns: int = arg(
        96, "turns (h_t, a_t) of the batch whose A_B is measured by branching", at_least=1
    )
    branches: int = arg(24, "K: secrets z ~ b_t (branches) per action", at_least=1)
    alternatives: int = arg(
        4, "M: actions a' ~ pi(.|h_t) whose Q_B make the baseline of A_B", at_least=1
    )
    bootstrap: int = arg(
        1000, "bootstrap resamples of the drawn turns for the intervals", at_least=1
    )
    quick: bool = arg(
        False, "a small, fast setting (tests): 2 secrets x 4 rollouts, 12 turns, K = 6, M = 2"
    )
    seed: int = arg(0, "seed of the batch, the draws and the branches", at_least=0)
    threads: int = arg(0, "torch threads (0: every core; cli.use_threads)", at_least=0)
    out: str = arg(
        "runs/fidelity",
        "the table, CSV, figure and config are written to OUT/<policy name>",
        writes="directory",
    )


TURN_BANDS = [
    ("t=0", 0, 0),
    ("t=1-2", 1, 2),
    ("t=3-5", 3, 5),
    ("t>=6", 6, 99),
]


def lm_actor(policy, generator: torch.Generator):
    """actor(game) -> sampled action texts (T = 1) for game.active: the policy carrying on."""
    return lambda game: [
        g.text for g in policy.generate(policy.encode(game.messages()), SampleConfig(), generator)
    ]


def replay(records, start, turn: int, game_cfg: GameConfig) -> CSG:
    """The game of one episode at h_t: from where it started (an env.Episode: its universe, and
    the turns another policy played before it, if any), its recorded actions before turn t
    played again."""
    game = CSG([], game_cfg)
    game.episodes = [start.carried_on(start.secret)]
    for r in records:
        if r.turn < turn:
            game.step([r.raw_response])
    return game


def play_branches(starts, actor, game_cfg: GameConfig, chunk: int = 512) -> list[list[float]]:
    """starts: [(game at h_t, action text, secrets)]. Every (start, secret) is one branch: the
    action taken, then the actor to the horizon. Returns each start's returns-to-go from t.
    Branches are played together, `chunk` episodes at a time (one batched generation per turn)."""
    branches = [
        (s, ep, action)
        for s, (game, action, secrets) in enumerate(starts)
        for ep in game.branch(0, secrets).episodes
    ]
    returns = [[] for _ in starts]
    for k in range(0, len(branches), chunk):
        part = branches[k : k + chunk]
        combined = CSG([], game_cfg)
        combined.episodes = [ep for _, ep, _ in part]
        combined.step([action for _, _, action in part])
        while combined.active:
            combined.step(actor(combined))
        for s, ep, _ in part:
            returns[s].append(sum(r.reward for r in ep.records))
    return returns


def onestep_expected_reward(starts, game_cfg: GameConfig) -> list[float]:
    """E_{z ~ b_t}[r_t(a)] exactly, for each (game at h_t, action text): the action played once
    for one secret of each part of C_t that its answers tell apart (every secret of a part gets
    the same hint, so the same reward), weighted by the part's share of C_t."""
    out = []
    for game, action in starts:
        belief = game.episodes[0].candidates
        read, _ = read_action(action, game_cfg.n_arms)
        parts = answer_partition(read.question, belief, game_cfg) if read else [belief]
        branched = game.branch(0, [min(p) for p in parts])
        rewards = [r.reward for r in branched.step([action] * len(parts))]
        out.append(sum(r * len(p) for r, p in zip(rewards, parts)) / len(belief))
    return out


def states_and_alternatives(
    batch, picks, policy, game_cfg: GameConfig, m: int, generator: torch.Generator
):
    """For each picked turn index of `batch`: the game at its h_t (replayed) and its actions, the
    one taken first, then m sampled from pi(.|h_t) (T = 1)."""
    by_episode = {}
    for i, r in enumerate(batch.records):
        by_episode.setdefault(r.episode, []).append(i)
    games = []
    for i in picks:
        r = batch.records[i]
        games.append(
            replay(
                [batch.records[j] for j in by_episode[r.episode]],
                batch.starts[r.episode],
                r.turn,
                game_cfg,
            )
        )
    prompts = [policy.encode(g.messages())[0] for g in games]
    alternatives = policy.generate(
        [p for p in prompts for _ in range(m)], SampleConfig(), generator
    )
    actions = [
        [batch.records[i].raw_response] + [alternatives[n * m + j].text for j in range(m)]
        for n, i in enumerate(picks)
    ]
    return games, actions


def onestep_advantages(games, actions, game_cfg: GameConfig) -> list[float]:
    """A1_B(h_t, a_t) = E_z[r_t(a_t)] - the mean of E_z[r_t(a'_m)], each exact under b_t."""
    expected = onestep_expected_reward(
        [(g, a) for g, acts in zip(games, actions) for a in acts], game_cfg
    )
    out, k = [], 0
    for acts in actions:
        e = expected[k : k + len(acts)]
        out.append(e[0] - sum(e[1:]) / (len(e) - 1))
        k += len(acts)
    return out


def bayesian_advantages(
    batch,
    picks,
    policy,
    actor,
    game_cfg: GameConfig,
    k: int,
    m: int,
    rng: random.Random,
    generator: torch.Generator,
) -> list[dict]:
    """For each picked turn index of `batch`: A_B by branching (with its standard error) and the
    one-step A1_B, from the same M alternative actions."""
    games, actions = states_and_alternatives(batch, picks, policy, game_cfg, m, generator)
    starts = [
        (g, a, [rng.choice(sorted(g.episodes[0].candidates)) for _ in range(k)])
        for g, acts in zip(games, actions)
        for a in acts
    ]
    returns = play_branches(starts, actor, game_cfg)
    onestep = onestep_advantages(games, actions, game_cfg)
    out = []
    for n, i in enumerate(picks):
        q = [torch.tensor(returns[n * (m + 1) + j], dtype=torch.float64) for j in range(m + 1)]
        q_alt = torch.stack([x.mean() for x in q[1:]])
        a_b = q[0].mean() - q_alt.mean()
        se = math.sqrt(q[0].var().item() / k + (q_alt.var().item() / m if m > 1 else 0.0))
        out.append(
            {
                "index": i,
                "turn": batch.records[i].turn,
                "a_b": a_b.item(),
                "a_b_se": se,
                "a1_b": onestep[n],
            }
        )
    return out


def credit_probe(
    policy, batch, advantages: torch.Tensor, game_cfg: GameConfig, n: int, seed: int
) -> dict:
    """A cheap look at the credit's quality during training (train.py, at each evaluation, under
    pi_old): on n turns of the batch, the correlation of the estimator's advantages with the
    one-step Bayesian advantage A1_B = E_{z ~ b_t}[r_t(a_t)] - E_{a' ~ pi} E_{z ~ b_t}[r_t(a')],
    exact over C_t, 3 alternatives a' each. advantages: (N,) one per turn of `batch`."""
    rng = random.Random(seed)
    picks = sorted(rng.sample(range(len(batch.records)), min(n, len(batch.records))))
    games, actions = states_and_alternatives(
        batch, picks, policy, game_cfg, 3, torch.Generator(policy.device).manual_seed(seed)
    )
    a1 = torch.tensor(onestep_advantages(games, actions, game_cfg), dtype=torch.float64)
    return {"train/credit_onestep_corr": pearson(advantages[picks].double().cpu(), a1)}


def pearson(x: torch.Tensor, y: torch.Tensor) -> float:
    x, y = x - x.mean(), y - y.mean()
    d = (x.square().sum() * y.square().sum()).sqrt()
    return (x * y).sum().item() / d.item() if d > 0 else math.nan


def spearman(x: torch.Tensor, y: torch.Tensor) -> float:
    rank = lambda v: v.argsort().argsort().double()  # ties are rare in continuous credit
    return pearson(rank(x), rank(y))


def agreement(est: torch.Tensor, truth: torch.Tensor) -> dict:
    """How well one estimator's credit tracks A_B on the same turns."""
    # the best scale c >= 0: credit is used with its sign, so an anti-correlated one gets c = 0
    c = (
        ((est * truth).sum() / est.square().sum()).clamp(min=0)
        if est.square().sum() > 0
        else torch.tensor(0.0)
    )
    return {
        "pearson": pearson(est, truth),
        "spearman": spearman(est, truth),
        "sign": ((est > 0) == (truth > 0)).double().mean().item(),
        "scaled_error": ((c * est - truth).square().mean() / truth.square().mean()).item(),
    }


def return_only_floor(
    truth: torch.Tensor, se: torch.Tensor, returns: torch.Tensor, bin_size: int = 6
) -> float:
    """E[Var(A_B | R)] / E[A_B^2] from samples: turns sorted by their episode's return R and cut
    into bins of `bin_size`; the mean within-bin variance of the measured A_B, less the mean
    branching noise se^2 (which the measured values add), relative to E[A_B^2]."""
    order = returns.argsort()
    variances = [
        truth[order[s : s + bin_size]].var().item()
        for s in range(0, len(order) - 1, bin_size)
        if len(order[s : s + bin_size]) > 1
    ]
    noise = se.square().mean().item()
    return (
        max(0.0, (sum(variances) / len(variances) - noise)) / truth.square().mean().item()
        if variances
        else math.nan
    )


def bootstrap(fn, n: int, draws: int, rng: random.Random) -> tuple[float, float]:
    """(2.5%, 97.5%) of fn(resampled indices) over `draws` resamples of n items."""
    values = sorted(
        v
        for v in (fn(torch.tensor([rng.randrange(n) for _ in range(n)])) for _ in range(draws))
        if v == v
    )
    return (
        (values[int(0.025 * len(values))], values[int(0.975 * len(values)) - 1])
        if values
        else (math.nan, math.nan)
    )


def credit_of_every_estimator(batch, n_max: int) -> dict:
    """Each online estimator's advantage for every turn of the batch, in play order."""
    credit = credit_from_batch(batch, n_max)
    return {
        name: batch.from_grid(e.advantages(credit, EstimatorContext())).double()
        for name, e in ESTIMATORS.items()
        if e.online
    }


QUICK = dict(secrets=2, group_size=4, turns=12, branches=6, alternatives=2, bootstrap=100)


def measure(cfg: FidelityConfig) -> dict:
    """The whole lab: the batch, the credit, A_B by branching (steps 1-3), and every comparison
    (step 4)."""
    if cfg.quick:
        cfg = replace(cfg, **QUICK, quick=False)
    game_cfg = GameConfig(question_set=cfg.question_set)
    if cfg.policy == "tiny":
        policy = starting_policy(ModelConfig(), WarmupConfig(question_set=cfg.question_set), True)[
            0
        ]
    else:
        policy = models.load_policy(cfg.policy)
    rng, generator = random.Random(cfg.seed), torch.Generator().manual_seed(cfg.seed)
    batch = play_rollouts(
        policy,
        rng.sample(secret_split()[0], cfg.secrets),
        cfg.group_size,
        game_cfg,
        SampleConfig(),
        generator=generator,
    )
    credit = credit_of_every_estimator(batch, game_cfg.n_max)
    picks = sorted(rng.sample(range(len(batch.records)), min(cfg.turns, len(batch.records))))
    start = time.perf_counter()
    truth = bayesian_advantages(
        batch,
        picks,
        policy,
        lm_actor(policy, generator),
        game_cfg,
        cfg.branches,
        cfg.alternatives,
        rng,
        generator,
    )
    seconds = time.perf_counter() - start
    columns = {name: adv[picks] for name, adv in credit.items()}
    columns["onestep A1_B"] = torch.tensor([x["a1_b"] for x in truth], dtype=torch.float64)
    return {
        "config": asdict(cfg),
        "policy_name": policy.name,
        **comparisons(truth, columns, drawn_returns(batch, picks), cfg),
        "branching_seconds": round(seconds, 1),
        "batch_turns": len(batch.records),
    }


def drawn_returns(batch, picks: list[int]) -> torch.Tensor:
    """The return R = sum_t r_t of the episode each drawn turn belongs to: (len(picks),)."""
    episode_return = {}
    for r in batch.records:
        episode_return[r.episode] = episode_return.get(r.episode, 0.0) + r.reward
    returns = [episode_return[batch.records[i].episode] for i in picks]
    return torch.tensor(returns, dtype=torch.float64)


def comparisons(truth: list[dict], columns: dict, returns: torch.Tensor, cfg: FidelityConfig):
    """Step 4: each credit column against A_B, over all drawn turns and by turn band (agreement,
    with bootstrap intervals of Pearson's r and of the scaled error); the floor of every
    return-only credit; and each drawn turn's values (the CSV's rows)."""
    a_b = torch.tensor([x["a_b"] for x in truth], dtype=torch.float64)
    se = torch.tensor([x["a_b_se"] for x in truth], dtype=torch.float64)
    turn = torch.tensor([x["turn"] for x in truth])
    brng = random.Random(cfg.seed + 1)
    rows = []
    for name, est in columns.items():
        for label, keep in [("all", torch.ones_like(turn, dtype=torch.bool))] + [
            (band, (turn >= lo) & (turn <= hi))
            for band, lo, hi in TURN_BANDS
            if ((turn >= lo) & (turn <= hi)).sum() >= 6
        ]:
            e, a = est[keep], a_b[keep]
            row = {"estimator": name, "turns": label, "n": int(keep.sum()), **agreement(e, a)}
            lo, hi = bootstrap(lambda idx: pearson(e[idx], a[idx]), len(e), cfg.bootstrap, brng)
            row.update(pearson_lo=lo, pearson_hi=hi)
            lo, hi = bootstrap(
                lambda idx: agreement(e[idx], a[idx])["scaled_error"], len(e), cfg.bootstrap, brng
            )
            row.update(scaled_error_lo=lo, scaled_error_hi=hi)
            rows.append(row)
    floors = {"all": return_only_floor(a_b, se, returns)}
    for band, lo, hi in TURN_BANDS:
        keep = (turn >= lo) & (turn <= hi)
        if keep.sum() >= 12:
            floors[band] = return_only_floor(a_b[keep], se[keep], returns[keep])
    samples = [
        {
            **x,
            "episode_return": returns[n].item(),
            **{name: col[n].item() for name, col in columns.items()},
        }
        for n, x in enumerate(truth)
    ]
    return {
        "rows": rows,
        "floors": floors,
        "samples": samples,
        "noise_se_mean": se.mean().item(),
        "a_b_rms": a_b.square().mean().sqrt().item(),
    }


def table(result: dict) -> str:
    cfg = result["config"]
    lines = [
        f"# Credit fidelity: {result['policy_name']} ({cfg['question_set']} set)",
        "",
        f"{cfg['secrets']} secrets x {cfg['group_size']} rollouts ({result['batch_turns']} turns); "
        "A_B of "
        f"{len(result['samples'])} drawn turns by branching (K = {cfg['branches']} secrets per "
        "action, "
        f"M = {cfg['alternatives']} alternatives); RMS A_B {result['a_b_rms']:.3f}, mean branching "
        "SE "
        f"{result['noise_se_mean']:.3f}; {result['branching_seconds']} s. Scaled error: min_c E[(c "
        "A - A_B)^2] / "
        "E[A_B^2] (0 is perfect, 1 is no better than 0). Intervals: bootstrap 95% over the drawn "
        "turns.",
        "",
        "| Estimator | Turns | n | Pearson [95%] | Spearman | Sign agreement | Scaled error [95%] "
        "|",
        "|---|---|---|---|---|---|---|",
    ]
    for r in result["rows"]:
        lines.append(
            f"| {r['estimator']} | {r['turns']} | {r['n']} | {r['pearson']:.3f} "
            f"[{r['pearson_lo']:.3f}, "
            f"{r['pearson_hi']:.3f}] | {r['spearman']:.3f} | {r['sign']:.3f} | "
            f"{r['scaled_error']:.3f} "
            f"[{r['scaled_error_lo']:.3f}, {r['scaled_error_hi']:.3f}] |"
        )
    lines += [
        "",
        "Floor of any return-only credit, E[Var(A_B | R)] / E[A_B^2] (Theorem 3.2 (ii)), estimated "
        "from "
        "the same turns: " + ", ".join(f"{k}: {v:.3f}" for k, v in result["floors"].items()),
        "",
    ]
    return "\n".join(lines)


def figure(result: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [
        n
        for n in result["samples"][0]
        if n not in ("index", "turn", "a_b", "a_b_se", "a1_b", "episode_return")
    ]
    cols = 5
    fig, axes = plt.subplots(
        math.ceil(len(names) / cols),
        cols,
        figsize=(3.2 * cols, 3.0 * math.ceil(len(names) / cols)),
        squeeze=False,
    )
    a_b = [s["a_b"] for s in result["samples"]]
    for ax, name in zip(axes.flat, names):
        r = next(r for r in result["rows"] if r["estimator"] == name and r["turns"] == "all")
        ax.scatter(
            [s[name] for s in result["samples"]],
            a_b,
            s=8,
            c=[s["turn"] for s in result["samples"]],
            cmap="viridis",
        )
        ax.set_title(f"{name}: r = {r['pearson']:.2f}", fontsize=9)
        ax.set_xlabel("estimator's advantage", fontsize=8)
        ax.set_ylabel("A_B (branching)", fontsize=8)
        ax.grid(alpha=0.3)
    for ax in axes.flat[len(names) :]:
        ax.axis("off")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None) -> dict:
    cfg = parse_config(FidelityConfig, argv, description=__doc__.splitlines()[0])
    use_threads(cfg.threads)
    try:
        result = measure(cfg)
    except (models.ModelNotFoundError, models.DamagedFileError) as e:
        fail("fidelity.py", str(e))
    out = Path(cfg.out) / (
        "tiny-before-rl" if cfg.policy == "tiny" else Path(cfg.policy).parent.name or "policy"
    )
    out.mkdir(parents=True, exist_ok=True)
    text = table(result)
    (out / "fidelity.md").write_text(text)
    with open(out / "fidelity.csv", "w") as f:
        keys = list(result["samples"][0])
        f.write(",".join(keys) + "\n")
        f.writelines(",".join(str(s[k]) for k in keys) + "\n" for s in result["samples"])
    (out / "fidelity.json").write_text(
        json.dumps({k: v for k, v in result.items() if k != "samples"}, indent=2)
    )
    figure(result, out / "fidelity.png")
    save_config(cfg, out / "fidelity_config.json")
    print(text)
    print(f"wrote {out}/fidelity.{{md,csv,json,png}}")
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
