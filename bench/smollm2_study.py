"""ECHO and episodic GRPO train a pretrained instruct LLM on 2 CPU cores: SmolLM2-135M-Instruct
(LoRA, train.py's llm and llm-cpu presets) from one format warm-up, the same seed and secrets, on
the sealed split (bench/results/sealed.json) of the paper question set.

The study takes longer than one sitting (a step is minutes here), so each call does what is due
and stops; call it again, in this session or a later one, and it goes on from the runs' last
checkpoints (every step is one):

1. screen: each estimator trains at each rate of --lrs for the first --screen-steps steps of a
   --steps run (train.py --pause-after: the learning rate anneals over --steps all the same), two
   runs at a time at --threads 1 each;
2. choice: per estimator, the rate whose run scored best on the validation secrets (carved from
   the training secrets, train.py --validation-secrets) at the screen's last step; a tie goes to
   the smaller rate. The held-out secrets play in those runs' evaluations but never choose;
3. the chosen runs go on to --steps (train.py --resume), the checkpoint each keeps chosen on the
   validation secrets too;
4. each chosen run's kept checkpoint, as soon as its run is done (on the core it frees, while
   the other run trains), then the start (step 0, the warm-up), play the held-out secrets and all
   of 1..200 (the paper's generalization set), greedy and sampled at T = 1. A play is kept in
   RUNS/plays as it goes (the sampled play chunk by chunk, with its generator's state), and a
   call that finds one cut short goes on from there with the draws it would have made.

Writes --out after every call, with what is done so far: per run its flags, steps, seconds and
curve (held-out resolve greedy and sampled every --eval-every steps, the batch's valid-action and
redundancy rates, the validation score), the choice and what it was made on, and the figures of
stage 4. A copy of the warm-up the runs started from is kept in RUNS/start and put back in the
cache if the cache lost it, so that runs started in a later session start from the same weights.
The runs compute in bf16 (`--precision bf16 --micro-tokens 3072`, as the llm-cpu-bf16 preset
set them where they started). On a CPU without bf16 arithmetic their bf16 products run in float32
kernels, rounded to bf16 (lm/bf16.py): the same precision, weights and autocast, not the same
bits, at a speed near float32's rather than torch's bf16 kernels' (bench/results/bf16_kernels.json
and cpu_precision.json). The file's
"calls" say, for each call that trained (recorded from the first call after that change on), the
date, the machine, where its bf16 products ran and each run's steps before and after it.
    python bench/smollm2_study.py            # again until it says the study is complete
"""

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import torch  # noqa: E402

from bench.bisection_behaviour import again_probabilities, sampled_batch  # noqa: E402
from bench.common import RESULTS, machine, save_results, today  # noqa: E402
from bench.smollm2_gpu import CURVE, curve, versions  # noqa: E402
from config import config_from_flags, warmup_config  # noqa: E402
from env import GameConfig, secret_split  # noqa: E402
from evaluate import greedy_figures, sampled_figures  # noqa: E402
from lm import models, warmup  # noqa: E402
from lm.models import ModelConfig  # noqa: E402
from metrics import repeat_ratio  # noqa: E402
from oracle import RuleOracle  # noqa: E402
from policy import SampleConfig  # noqa: E402
from rollouts import play_chunked  # noqa: E402
from tools.cli import arg, cpu_computes_bf16, parse_config, settings  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
# a run's figures at each evaluation: bench/smollm2_gpu.py's, and the held-out play's own shares
STUDY_CURVE = CURVE | {
    "heldout_invalid_rate": "eval/invalid_rate",
    "heldout_redundancy_rate": "eval/redundancy_rate",
    "validation_score": "eval/validation_score",
}


@dataclass
class SmolStudyConfig:
    model: str = arg("smollm2", "the model (tiny: a rehearsal of this script)")
    estimators: str = arg("echo,grpo", "comma-separated estimators, each trained from one start")
    lrs: str = arg(
        "3e-4,1e-3",
        "comma-separated learning rates screened per estimator (set before any run: 3e-4 is the "
        "one rate that moved SmolLM2's batch reward, bench/results/smollm2_learning.json, and 1e-3 "
        "a larger one for a run of few steps annealed to 0)",
    )
    steps: int = arg(60, "each chosen run's steps", at_least=1)
    screen_steps: int = arg(10, "steps of the screen, at the end of which the rate is chosen")
    split_seed: int = arg(931762, "the sealed split (bench/results/sealed.json)")
    validation_secrets: int = arg(10, "training secrets set aside to choose on", at_least=2)
    eval_every: int = arg(10, "steps between the runs' evaluations", at_least=1)
    eval_samples: int = arg(2, "sampled episodes per secret in every evaluation", at_least=1)
    seed: int = arg(0, "the runs' seed", at_least=0)
    jobs: int = arg(2, "runs trained at once, each at --threads 1", at_least=1)
    status: bool = arg(False, "write the results file with what is done so far; train nothing")
    replay: str = arg(
        "",
        "comma-separated estimators whose kept checkpoint is played again here, beside its first "
        "play (made on another machine, or in other arithmetic); train nothing",
    )
    train_flags: str = arg("", "more train.py flags for every run (a rehearsal's smaller game)")
    runs: str = arg("runs/smollm2-study", "where the runs are written", writes="directory")
    out: str = arg(os.path.join(RESULTS, "smollm2_study.json"), "the results file", writes="file")


def run_flags(cfg: SmolStudyConfig, estimator: str, lr: str) -> list[str]:
    """train.py's flags of one run (without --pause-after and --resume, which each call adds)."""
    flags = f"--model {cfg.model} --estimator {estimator} --lr {lr} --seed {cfg.seed}"
    if cfg.model != "tiny":  # the runs' own (llm-cpu-bf16's, where they started), on any CPU
        flags += " --precision bf16 --micro-tokens 3072"
    flags += f" --steps {cfg.steps} --split-seed {cfg.split_seed} --save-every 1"
    flags += f" --validation-secrets {cfg.validation_secrets} --eval-every {cfg.eval_every}"
    flags += f" --eval-samples {cfg.eval_samples} --threads 1 {cfg.train_flags}"
    return [*flags.split(), "--out", cfg.runs, "--run-name", f"{estimator}-lr{lr}"]


def steps_now(cfg: SmolStudyConfig) -> dict:
    """Each run's steps so far, by its name."""
    runs = [(e, lr) for e in cfg.estimators.split(",") for lr in cfg.lrs.split(",")]
    return {f"{e}-lr{lr}": steps_done(run_path(cfg, e, lr)) for e, lr in runs}


def steps_done(run_dir: Path) -> int:
    """The step of a run's last checkpoint (0: none)."""
    state = run_dir / "checkpoint" / "trainer_state.pt"
    rows = run_dir / "metrics.jsonl"
    if not state.exists() or not rows.exists():
        return 0
    return json.loads(rows.read_text().splitlines()[-1])["step"]


def train_all(cfg: SmolStudyConfig, todo: list[tuple[str, str, int]], on_done=None) -> None:
    """Train each (estimator, lr) run to its step, --jobs at a time, resuming where it stopped;
    `on_done(busy)`, where given, is called once the first runs have started (what an earlier
    call left to play, e.g. a run already done, plays beside them) and each time a run ends,
    `busy` runs still training."""
    waiting, running = list(todo), []
    started = False
    while waiting or running:
        while waiting and len(running) < cfg.jobs:
            e, lr, until = waiting.pop(0)
            flags = run_flags(cfg, e, lr)
            if steps_done(run_path(cfg, e, lr)):
                flags.append("--resume")
            if until < cfg.steps:
                flags += ["--pause-after", str(until)]
            log = open(ROOT / cfg.runs / f"{e}-lr{lr}.log", "a")
            proc = subprocess.Popen(
                [sys.executable, "train.py", *flags], cwd=ROOT, stdout=log, stderr=log
            )
            running.append(((e, lr), proc))
        if not started and on_done is not None:
            on_done(len(running))
        started = True
        time.sleep(5)
        for item in [r for r in running if r[1].poll() is not None]:
            running.remove(item)
            if item[1].returncode != 0:
                raise SystemExit(
                    f"the run {item[0]} failed: see {cfg.runs}/{item[0][0]}-lr{item[0][1]}.log"
                )
            if on_done is not None:
                on_done(len(running))


def validation_at(run_dir: Path, step: int) -> float | None:
    """The run's validation score at `step` (its evaluation there), or None before it."""
    if not (run_dir / "metrics.jsonl").exists():
        return None
    rows = [json.loads(line) for line in open(run_dir / "metrics.jsonl")]
    row = next((r for r in rows if r["step"] == step), {})
    return row.get("eval/validation_score")


def chosen_rates(cfg: SmolStudyConfig) -> dict:
    """Per estimator whose screens are done: the rate whose screen scored best on the validation
    secrets (ties: the smaller rate), with every rate's score."""
    choice = {}
    for e in cfg.estimators.split(","):
        scores = {
            lr: validation_at(run_path(cfg, e, lr), cfg.screen_steps) for lr in cfg.lrs.split(",")
        }
        if None in scores.values():  # a screen still to finish: no choice yet
            continue
        best = max(sorted(scores, key=float), key=lambda lr: (scores[lr], -float(lr)))
        choice[e] = {"lr": best, "validation_scores": scores}
    return choice


def study_train_config(cfg: SmolStudyConfig):
    """train.py's resolved config of the runs (the learning rate aside): the start's settings and
    the evaluations'."""
    return config_from_flags(run_flags(cfg, cfg.estimators.split(",")[0], "1e-4"))


def start_policy(cfg: SmolStudyConfig):
    """The runs' start, the warm-up, made once and cached; its copy in RUNS/start keeps it when
    the cache is emptied (and refills the cache from it)."""
    train_cfg = study_train_config(cfg)
    model_cfg, warmup_cfg = settings(ModelConfig, train_cfg), warmup_config(train_cfg)
    cached = warmup.cached_path(model_cfg, warmup_cfg)
    copy = ROOT / cfg.runs / "start"
    if copy.exists() and not cached.exists():
        shutil.copytree(copy, cached)
    policy = warmup.starting_policy(model_cfg, warmup_cfg)[0]
    if not copy.exists():
        shutil.copytree(cached, copy)
    return policy, train_cfg


def played(
    policy, game: GameConfig, secrets: list[int], cfg: SmolStudyConfig, rows: int, saved: dict, keep
) -> dict:
    """A policy's figures on some secrets: resolve greedy and sampled, valid-action and redundant
    shares of the greedy turns (evaluate.evaluate_policy's, the sampled play decoded `rows`
    episodes at a time). `saved` holds what an earlier call of this play kept, and keep() writes
    it: the greedy figures, then the sampled episodes chunk by chunk with the generator's state
    after them, so that a play cut short goes on with the draws it would have made."""
    if "greedy" not in saved:
        saved["greedy"] = greedy_figures(policy, secrets, game, RuleOracle())
        keep()
    generator = torch.Generator(policy.device).manual_seed(10_000 + cfg.seed)
    if "generator" in saved:
        generator.set_state(saved["generator"])

    def chunk_played(episodes: list[dict]) -> None:
        saved["episodes"] = [{k: e[k] for k in ("resolved", "turns_taken")} for e in episodes]
        saved["generator"] = generator.get_state()
        keep()

    episodes = play_chunked(
        policy,
        secrets,
        cfg.eval_samples,
        game,
        SampleConfig(),
        RuleOracle(),
        generator,
        rows,
        played=saved.get("episodes", []),
        on_chunk=chunk_played,
    )
    ev = saved["greedy"] | sampled_figures(episodes, cfg.eval_samples)
    return {
        "greedy": ev["eval/resolve_rate"],
        "sampled": ev["eval/sampled_resolve_rate"],
        "sampled_sem": ev["eval/sampled_resolve_sem"],
        "valid_rate": 1 - ev["eval/invalid_rate"],
        "redundancy_rate": ev["eval/redundancy_rate"],
    }


def both_sets(policy, train_cfg, cfg: SmolStudyConfig, name: str) -> dict:
    """`played` on the split's held-out secrets of 1..100 and on all of 1..200, and the repeat
    ratio of a sampled play of the held-out secrets (metrics.repeat_ratio; 1: the answer just
    given changes nothing about asking the same again), and where it was played (`here`). Each
    piece is kept in RUNS/plays/NAME.pt as it is played, and a later call goes on from there."""
    path = ROOT / cfg.runs / "plays" / f"{name}.pt"
    saved = torch.load(path) if path.exists() else {}
    keep = lambda: save_play(saved, path)  # noqa: E731
    played_on, place = saved.setdefault("played_on", []), here()
    if place not in played_on:  # each call that plays a part of it, once a day and machine
        played_on.append(place)
    game = settings(GameConfig, train_cfg)
    heldout = secret_split(train_cfg.n_max, train_cfg.n_heldout, train_cfg.split_seed)[1]
    sets = {"heldout": (game, heldout), "gen200": (replace(game, n_max=200), list(range(1, 201)))}
    rows = train_cfg.eval_rows
    out = {
        part: played(policy, g, secrets, cfg, rows, saved.setdefault(part, {}), keep)
        for part, (g, secrets) in sets.items()
    }
    if "heldout_repeat_ratio" not in saved:
        batch = sampled_batch(policy, heldout, game, cfg.eval_samples, 20_000 + cfg.seed)
        saved["heldout_repeat_ratio"] = repeat_ratio(*again_probabilities(policy, batch))
        keep()
    return out | {"heldout_repeat_ratio": saved["heldout_repeat_ratio"], "played_on": played_on}


def save_play(saved: dict, path: Path) -> None:
    """A play as far as it has come, written whole or not at all (a call may be stopped)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(saved, path.with_suffix(".part"))
    os.replace(path.with_suffix(".part"), path)


def run_record(cfg: SmolStudyConfig, estimator: str, lr: str) -> dict:
    """One run's flags, steps, seconds, curve and kept checkpoint, as far as it has come."""
    run_dir = run_path(cfg, estimator, lr)
    summary_file = run_dir / "summary.json"
    summary = json.loads(summary_file.read_text()) if summary_file.exists() else {}
    return {
        "estimator": estimator,
        "lr": float(lr),
        "flags": run_flags(cfg, estimator, lr),
        "steps": steps_done(run_dir),
        "paused": summary.get("paused"),
        "step_seconds": summary.get("step_seconds"),
        "kept_step": None if summary.get("paused", True) else summary["kept"]["step"],
        "curve": curve(run_dir, STUDY_CURVE) if (run_dir / "metrics.jsonl").exists() else [],
    }


def figure(result: dict, path: Path) -> None:
    """The runs' held-out resolve (greedy and sampled) and validation score at each evaluation,
    step 0's held-out resolve beside them where it is played."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8), sharey=True)
    names = (("heldout_greedy", "held-out, greedy"), ("heldout_sampled", "held-out, sampled T = 1"))
    names += (("validation_score", "validation (greedy + sampled) / 2"),)
    for ax, (key, title) in zip(axes, names):
        for run in result["runs"]:
            points = [(p["step"], p[key]) for p in run["curve"] if p.get(key) is not None]
            start = result.get("step0", {}).get("heldout", {}).get(key.split("_")[-1])
            if start is not None and key != "validation_score":
                points = [(0, start), *points]
            if points:
                label = f"{run['estimator'].upper()} lr {run['lr']:g}"
                ax.plot(*zip(*points), marker="o", ms=3, label=label)
        ax.set(title=title, xlabel="RL step", ylim=(-0.05, 1.05))
    axes[0].set_ylabel("resolve rate")
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def save(result: dict, cfg: SmolStudyConfig) -> None:
    """The results file and its figure (the file's name, .png)."""
    save_results(result, cfg.out)
    figure(result, Path(cfg.out).with_suffix(".png"))


def main(argv=None) -> dict:
    cfg = parse_config(SmolStudyConfig, argv, description=__doc__.splitlines()[0])
    estimators, lrs = cfg.estimators.split(","), cfg.lrs.split(",")
    (ROOT / cfg.runs).mkdir(parents=True, exist_ok=True)
    previous = json.loads(Path(cfg.out).read_text()) if Path(cfg.out).exists() else {}
    result = {"split_seed": cfg.split_seed, "study": vars(cfg), "versions": versions()}
    first = config_from_flags(run_flags(cfg, estimators[0], lrs[0]))
    # the first run's config, resolved; the others differ from it in --estimator and --lr alone
    result["config"] = asdict(first)
    # what earlier calls did: the start's and the kept checkpoints' plays (made once), the calls
    result |= {k: previous[k] for k in ("step0", "kept", "replayed", "calls") if k in previous}
    if not (cfg.status or cfg.replay):  # where this call trains, and from which steps
        calls = [*previous.get("calls", []), here() | {"steps_from": steps_now(cfg)}]
        for call, after in zip(calls, calls[1:]):  # a call stopped before it wrote where it got:
            call["steps_to"] = after["steps_from"]  # the next takes its runs on from there
        result["calls"] = calls
    progress(result, cfg)
    if cfg.status:
        return result
    if cfg.replay:
        return replay(result, cfg)
    start_policy(cfg)  # the warm-up, made (and kept in RUNS/start) before the runs share it
    # 1-2: the screen, then the choice on the validation secrets
    train_all(cfg, due(cfg, [(e, lr, cfg.screen_steps) for e in estimators for lr in lrs]))
    progress(result, cfg)
    # 3-4: the chosen runs to the end, each kept checkpoint played as soon as its run is done
    chosen = {e: result["choice"][e]["lr"] for e in estimators}
    play = lambda busy: play_due(result, cfg, chosen, busy)  # noqa: E731
    train_all(cfg, due(cfg, [(e, lr, cfg.steps) for e, lr in chosen.items()]), on_done=play)
    progress(result, cfg)
    play(0)
    print("the study is complete:", json.dumps({"step0": result["step0"], **result["kept"]}))
    return result


def here() -> dict:
    """Where a call trains or plays: the date, the machine, and where the runs' bf16 products
    run on it (a CPU without bf16 arithmetic computes them in float32 kernels, lm/bf16.py)."""
    products = "hardware bf16" if cpu_computes_bf16() else "float32 kernels (lm/bf16.py)"
    return {"date": today(), "machine": machine(), "bf16_products": products}


def play_due(result: dict, cfg: SmolStudyConfig, chosen: dict, busy: int) -> None:
    """Stage 4 as far as the runs allow: each chosen run that has reached --steps plays its kept
    checkpoint, then the start plays once one has; at one thread per core that `busy` runs leave
    free. The results file is written after each."""
    torch.set_num_threads(max(1, (os.cpu_count() or 1) - busy))
    train_cfg = study_train_config(cfg)
    kept = result.setdefault("kept", {})
    progress(result, cfg)
    for e, lr in chosen.items():
        if e not in kept and steps_done(run_path(cfg, e, lr)) >= cfg.steps:
            best = run_path(cfg, e, lr) / "best"
            policy = models.load_policy(str(best), None, train_cfg.precision, trainable=False)
            kept[e] = both_sets(policy, train_cfg, cfg, f"kept-{e}")
            save(result, cfg)
    if kept and "step0" not in result:
        result["step0"] = both_sets(start_policy(cfg)[0], train_cfg, cfg, "step0")
        save(result, cfg)


def replay(result: dict, cfg: SmolStudyConfig) -> dict:
    """Each --replay estimator's kept checkpoint played again on this machine, as its first play
    was (`both_sets`), into the file's "replayed": the two plays of one checkpoint differ only in
    where they ran, and a comparison of two estimators' plays can be made on one machine."""
    torch.set_num_threads(os.cpu_count() or 1)  # nothing trains beside it
    train_cfg = study_train_config(cfg)
    for e in cfg.replay.split(","):
        if e not in result.get("kept", {}):
            raise SystemExit(f"smollm2_study.py: {e}'s kept checkpoint has not been played yet")
        best = run_path(cfg, e, result["choice"][e]["lr"]) / "best"
        policy = models.load_policy(str(best), None, train_cfg.precision, trainable=False)
        result.setdefault("replayed", {})[e] = both_sets(policy, train_cfg, cfg, f"replay-{e}")
        save(result, cfg)
    return result


def progress(result: dict, cfg: SmolStudyConfig) -> None:
    """Each run as far as it has come and the choices made so far, into the results file."""
    estimators, lrs = cfg.estimators.split(","), cfg.lrs.split(",")
    result["choice"] = chosen_rates(cfg)
    result["runs"] = [run_record(cfg, e, lr) for e in estimators for lr in lrs]
    if result.get("calls"):  # only calls train: what moved since, the last one trained
        result["calls"][-1]["steps_to"] = steps_now(cfg)
    save(result, cfg)


def due(cfg: SmolStudyConfig, runs: list[tuple[str, str, int]]) -> list[tuple[str, str, int]]:
    """The runs that have not yet reached their step."""
    return [(e, lr, until) for e, lr, until in runs if steps_done(run_path(cfg, e, lr)) < until]


def run_path(cfg: SmolStudyConfig, estimator: str, lr: str) -> Path:
    return ROOT / cfg.runs / f"{estimator}-lr{lr}"


if __name__ == "__main__":
    main(sys.argv[1:])
