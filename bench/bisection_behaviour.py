"""Does a trained policy condition on its belief? On the binary question set, for every comparison
question it asks ("is the number greater than X?"), the threshold X against the median of the
current candidates C_t (bisection asks the median; a belief-agnostic policy cannot follow C_t),
and its fractional elimination per turn against bisection's (reference.BayesPolicy) and the
random policy's, on the held-out secrets, greedy and sampled at T = 1.

Paper: section 6 "What epistemically adaptive behavior looks like"; App. C "Bisection as a
special case of the EDP objective" (2p(1-p) is largest at p = 1/2: the median).

The JSON also names the checkpoint played: its path, whether it is the run's kept checkpoint
(RUN/best, chosen on the validation secrets) or its last (RUN/checkpoint), and its step when
the run directory records it (summary.json, or the trainer state of RUN/checkpoint).
    python bench/bisection_behaviour.py --checkpoint runs/.../best [--samples 4]
"""

import copy
import json
import math
import os
import statistics
import sys
from collections import Counter
from dataclasses import dataclass, replace

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import torch

from bench.common import RESULTS, save_results
from env import CSG, GameConfig, play, secret_split
from evaluate import evaluate_policy
from game.questions import parse_question
from lm import models
from metrics import repeat_ratio
from oracle import RuleOracle
from policy import SampleConfig
from reference import BayesPolicy, RandomPolicy
from rollouts import play_rollouts
from tools.cli import arg, parse_config

COMPARISONS = {"gt", "ge", "lt", "le"}


@dataclass
class BisectionConfig:
    checkpoint: str = arg("", "a checkpoint directory of a binary-set run")
    samples: int = arg(4, "sampled episodes (T = 1) per held-out secret", at_least=0)
    split_seed: int = arg(0, "seed of the held-out split (train.py --split-seed)", at_least=0)
    name: str = arg("", "name of the figure and results (default: the run's directory name)")
    out: str = arg(RESULTS, "where the figure and figures go", writes="directory")


def turns_of(records_with_beliefs):
    """(threshold, median of C_t, |C_t|, fraction eliminated) of the comparison turns, and the
    fraction eliminated of every turn: 0 for a repeated question or an unreadable action, which
    is what keeps a policy that asks one good question and then repeats it from resolving."""
    comparisons, eliminated = [], []
    for record, belief in records_with_beliefs:
        if record.invalid or record.redundant:
            eliminated.append(0.0)
            continue
        eliminated.append(record.eliminated / record.candidates_before)
        query = parse_question(record.question)
        if (
            query is not None
            and query.kind == "yesno"
            and query.predicate.quantity == "n"
            and query.predicate.test in COMPARISONS
        ):
            x = float(query.predicate.args[0]) + (
                0.5 if query.predicate.test in ("gt", "le") else -0.5
            )
            # the cut point
            comparisons.append((x, statistics.median(belief), len(belief), eliminated[-1]))
    return comparisons, eliminated


def greedy_turns(policy, secrets, cfg):
    game = CSG(secrets, cfg)
    pairs = []
    while game.active:
        beliefs = [game.episodes[i].candidates for i in game.active]
        pairs += list(zip(game.step(policy.respond(game)), beliefs))
    return pairs


def replayed_turns(policy, secrets, cfg):
    """(record, C_t) of every turn of a respond(game)-policy (reference.py) played to the end, C_t
    replayed from the records."""
    pairs = []
    for ep in play(policy, secrets, cfg).episodes:
        replay = CSG([ep.secret], cfg)
        for r in ep.records:
            pairs.append((r, replay.episodes[0].candidates))
            replay.step([r.raw_response])
    return pairs


def sampled_batch(policy, secrets, cfg, samples: int, seed: int):
    """`samples` episodes per secret at T = 1, seeds seed, seed + 1, ... (a
    rollouts.RolloutBatch)."""
    return play_rollouts(
        policy,
        secrets,
        samples,
        cfg,
        SampleConfig(),
        seeds=[seed + i for i in range(len(secrets) * samples)],
    )


def again_probabilities(policy, batch) -> tuple[list[float], list[float]]:
    """For every turn t of the batch whose action was read and that its episode followed with
    another: pi(a_t | h_t), as sampled, and pi(a_t | h_{t+1}), the same tokens scored under the
    next turn's prompt, which holds a_t's answer (metrics.repeat_ratio)."""
    last, pairs = {}, []
    for i, record in enumerate(batch.records):  # play order: an episode's turns in turn order
        j = last.get(record.episode)
        if j is not None and not batch.records[j].invalid:
            pairs.append((j, i))
        last[record.episode] = i
    if not pairs:
        return [], []
    with torch.no_grad():
        logp, _ = policy.score(
            [batch.prompt_ids[i] for _, i in pairs], [batch.completion_ids[j] for j, _ in pairs]
        )
    return [math.exp(sum(batch.logprobs[j])) for j, _ in pairs], logp.double().sum(
        -1
    ).exp().tolist()


def halving_share(policy, secrets, cfg: GameConfig, universes=None) -> float:
    """Teacher-forced: in every state the Bayes policy reaches on these secrets, the share in which
    `policy`'s own action splits C_t into halves as bisection's does, i.e. eliminates floor or
    ceil of |C_t| / 2 (a valid, new question). It asks whether the model can imitate bisection
    where it stands, without the compounding of its own earlier mistakes."""
    game, bayes, halved, states = CSG(secrets, cfg, universes=universes), BayesPolicy(), 0, 0
    while game.active:
        trial = copy.deepcopy(game)  # the same state, played one turn by `policy`
        for r in trial.step(policy.respond(trial)):
            n = r.candidates_before
            halved += not (r.invalid or r.redundant) and r.eliminated in (n // 2, n - n // 2)
            states += 1
        game.step(bayes.respond(game))
    return halved / max(states, 1)


def summary(comparisons, eliminated) -> dict:
    """Pearson's r between threshold and median over the comparison turns, and the number of
    distinct (threshold, median) pairs it rests on: a greedy policy that asks the same few
    thresholds in the same few beliefs repeats one point many times, and with two distinct points
    r is +-1 whatever the policy does, so it is measured only from three on."""
    if not comparisons:
        return {
            "comparisons": 0,
            "threshold_points": 0,
            "mean_fraction_eliminated": statistics.mean(eliminated) if eliminated else math.nan,
            "zero_share": sum(e == 0 for e in eliminated) / max(len(eliminated), 1),
        }
    x = torch.tensor([c[0] for c in comparisons])
    m = torch.tensor([float(c[1]) for c in comparisons])
    points = len({(c[0], float(c[1])) for c in comparisons})
    corr = torch.corrcoef(torch.stack([x, m]))[0, 1].item() if points > 2 else math.nan
    return {
        "comparisons": len(comparisons),
        "threshold_points": points,
        "threshold_median_corr": corr,
        "mean_abs_offset_over_size": statistics.mean(abs(c[0] - c[1]) / c[2] for c in comparisons),
        "mean_fraction_eliminated": statistics.mean(eliminated),
        "comparison_share": len(comparisons) / max(len(eliminated), 1),
        "zero_share": sum(e == 0 for e in eliminated) / max(len(eliminated), 1),
    }


def opening(records) -> tuple[str, float]:
    """The families of the first two questions of each episode (its opening, "digit_sum,
    tens_digit"), the most common over the episodes, and the share of episodes that open with it
    (first met wins a tie). On the paper set two digit questions identify any number of 1..100,
    so every opening that does is equally good there; what is left of a secret of 1..200 after
    it differs ({x, 100 + x} after the tens and last digits), and so does what a policy must then
    read from its belief."""
    families = {}
    for r in records:  # play order: an episode's turns in turn order
        if r.turn < 2:
            families.setdefault(r.episode, []).append(r.question_type)
    if not families:
        return "", math.nan
    counts = Counter(", ".join(f) for f in families.values())
    name, n = counts.most_common(1)[0]
    return name, n / len(families)


def behaviour(records_with_beliefs) -> dict:
    """`summary` of these turns, the share of them that repeat a question already asked to the
    same arm (a policy replaying a memorised sequence repeats itself once it runs out), and the
    episodes' most common `opening` with its share."""
    pairs = list(records_with_beliefs)
    name, share = opening([r for r, _ in pairs])
    return summary(*turns_of(pairs)) | {
        "redundant_rate": sum(r.redundant for r, _ in pairs) / max(len(pairs), 1),
        "opening": name,
        "opening_share": share,
    }


def scored(policy, secrets, cfg: GameConfig, samples: int, seed: int) -> dict:
    """A policy on these secrets, greedy and sampled at T = 1: its resolve rate (evaluate.py) and
    its behaviour (`behaviour`)."""
    ev = evaluate_policy(policy, secrets, cfg, RuleOracle(), samples, seed)
    batch = sampled_batch(policy, secrets, cfg, samples, seed)
    return {
        "greedy": ev["eval/resolve_rate"],
        "sampled": ev.get("eval/sampled_resolve_rate"),
        "behaviour_greedy": behaviour(greedy_turns(policy, secrets, cfg)),
        "behaviour_sampled": behaviour(zip(batch.records, batch.beliefs)),
        "repeat_ratio_sampled": repeat_ratio(*again_probabilities(policy, batch)),
    }


def heldout_and_n200(
    policy,
    heldout,
    samples: int,
    seed: int,
    question_set: str = "binary",
    candidate_format: str = "list",
) -> dict:
    """`scored` on the held-out secrets of 1..100 and on all of 1..200 (evaluate.py's
    "generalization": secrets no training saw, a universe twice as wide as any trained on), in the
    prompts the policy trained on (train.py --candidate-format)."""
    game = GameConfig(question_set=question_set, candidate_format=candidate_format)
    return {
        "heldout": scored(policy, heldout, game, samples, seed),
        "n200": scored(policy, list(range(1, 201)), replace(game, n_max=200), samples, seed),
    }


def checkpoint_played(path: str) -> dict:
    """{path, played: kept | last | None, step | None} of a train.py run's checkpoint directory."""
    run_dir, name = os.path.split(os.path.abspath(path))
    played = {"best": "kept", "checkpoint": "last"}.get(name)
    step = None
    summary, state = (
        os.path.join(run_dir, "summary.json"),
        os.path.join(run_dir, "checkpoint", "trainer_state.pt"),
    )
    if played and os.path.exists(summary):
        s = json.load(open(summary))
        step = s["kept"]["step"] if played == "kept" else s["steps"]
    elif played and os.path.exists(state):
        saved = torch.load(state, weights_only=False, map_location="cpu")
        step = saved["kept"]["step"] if played == "kept" else saved["step"]
    return {"path": path, "played": played, "step": step}


def main(argv=None):
    cfg = parse_config(BisectionConfig, argv, description=__doc__.splitlines()[0])
    game_cfg = GameConfig(question_set="binary")
    secrets = secret_split(seed=cfg.split_seed)[1]
    policy = models.load_policy_for(
        "bisection_behaviour.py", cfg.checkpoint, "cpu", "fp32", trainable=False
    )
    results = {}
    comp, elim = turns_of(greedy_turns(policy, secrets, game_cfg))
    results["policy greedy"] = summary(comp, elim) | {"points": comp}
    batch = sampled_batch(policy, secrets, game_cfg, cfg.samples, 0)
    comp, elim = turns_of(zip(batch.records, batch.beliefs))
    results["policy sampled"] = summary(comp, elim) | {"points": comp}
    for name, reference in (("bisection (Bayes)", BayesPolicy()), ("random", RandomPolicy(0))):
        comp, elim = turns_of(replayed_turns(reference, secrets, game_cfg))
        results[name] = summary(comp, elim) | {"points": comp}
    name = cfg.name or os.path.basename(os.path.dirname(os.path.abspath(cfg.checkpoint)))
    for key, r in results.items():
        print(
            f"{key:20s} "
            + ", ".join(
                f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}"
                for k, v in r.items()
                if k != "points"
            )
        )
    os.makedirs(cfg.out, exist_ok=True)
    figure(results, os.path.join(cfg.out, f"bisection_behaviour_{name}.png"), name)
    played = checkpoint_played(cfg.checkpoint)
    print(
        f"checkpoint {played['path']}: {played['played'] or 'not a run directory'}, "
        f"step {played['step']}"
    )
    save_results(
        {
            **{k: {kk: vv for kk, vv in v.items() if kk != "points"} for k, v in results.items()},
            "checkpoint": played,
            "samples": cfg.samples,
        },
        os.path.join(cfg.out, f"bisection_behaviour_{name}.json"),
    )


def figure(results: dict, path: str, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.5))
    for key, marker in (
        ("policy greedy", "o"),
        ("policy sampled", "."),
        ("bisection (Bayes)", "x"),
    ):
        pts = results[key]["points"]
        if pts:
            ax1.scatter(
                [p[1] for p in pts], [p[0] for p in pts], s=14, marker=marker, label=key, alpha=0.7
            )
    ax1.plot([0, 100], [0, 100], "k--", lw=0.8, label="threshold = median of C_t")
    ax1.set(
        xlabel="median of the current candidates C_t",
        ylabel="threshold asked (cut point)",
        title="comparison questions: where the policy cuts",
    )
    ax1.legend(fontsize=7)
    names = list(results)
    ax2.bar(
        names,
        [results[k]["mean_fraction_eliminated"] for k in names],
        color=["C0", "C1", "C2", "C7"],
    )
    ax2.axhline(0.5, color="k", ls="--", lw=0.8)
    ax2.set(
        ylabel="mean fraction of C_t eliminated per turn (repeats count 0)",
        title="elimination per turn",
    )
    ax2.tick_params(axis="x", labelsize=7)
    fig.suptitle(f"Belief conditioning on the binary question set: {title}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main(sys.argv[1:])
