"""A pretrained LLM learns the game on one GPU: SmolLM2-135M-Instruct (the pretrained model that
can reach the GPU machine, bench/carry_weights.py) trained by ECHO and by episodic GRPO from the
same start, with the paper's LoRA settings (train.py's llm preset: LoRA r = 16 on q/k/v/o, the
paper's episodes, B = 8 secrets x G = 4 rollouts) on the paper question set, secrets 1..100 less
the held-out split.

Each estimator trains at every learning rate of --lrs, side by side on the one GPU, for at most
--minutes of RL steps each (train.py --time-limit-min; every run is checkpointed, so `train.py
--resume` with the same flags carries it on in a later command). Every run keeps the checkpoint
that plays best on 10 validation secrets carved from its training secrets; the learning rate of
each estimator is the one whose kept checkpoint scored best there. Only then are the held-out
secrets (20 of 1..100) and the generalization set (all of 1..200, the paper's test) played, by
the chosen runs' kept checkpoints and by the common start (step 0), greedy and sampled at T = 1.
The batch is train.py's llm preset's and was not chosen.

Writes one file: per run its flags, steps, seconds and curve (held-out resolve, the batch's
valid-action and redundancy rates, the validation score, per evaluation), which learning rate
was chosen and on what, and for step 0 and each chosen run the held-out and 1..200 figures
(resolve greedy and sampled, valid-action rate, redundant turns), with the device, versions,
date and commit. On the GPU machine, after carry_weights.py's join:
    python bench/smollm2_gpu.py --minutes 4.5 --out $OUT/smollm2_gpu.json
A rehearsal of the same code on a CPU, with the tiny model:
    python bench/smollm2_gpu.py --model tiny --lrs 5e-4 --minutes 0.2 --samples 1 --out /tmp/x.json
"""

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench.common import RESULTS, save_results  # noqa: E402
from config import (
    config_from_flags,  # noqa: E402
    warmup_config,  # noqa: E402
)
from env import GameConfig, secret_split  # noqa: E402
from evaluate import evaluate_policy  # noqa: E402
from lm import models  # noqa: E402
from lm.models import ModelConfig  # noqa: E402
from lm.warmup import starting_policy  # noqa: E402
from oracle import RuleOracle  # noqa: E402
from tools.cli import (  # noqa: E402
    arg,
    parse_config,
    settings,  # noqa: E402
)

ROOT = Path(__file__).resolve().parent.parent
CURVE = {
    "heldout_greedy": "eval/resolve_rate",
    "heldout_sampled": "eval/sampled_resolve_rate",
    "validation": "eval/validation_smoothed",
    "invalid_rate": "clue/invalid_rate",
    "redundancy_rate": "clue/redundancy_rate",
    "reward": "clue/reward",
}


@dataclass
class SmolGpuConfig:
    model: str = arg("smollm2", "the model (tiny: a rehearsal of this script on a CPU)")
    estimators: str = arg("echo,grpo", "comma-separated estimators, each trained from one start")
    lrs: str = arg("1e-4,3e-4", "comma-separated learning rates, each estimator trained at each")
    minutes: float = arg(4.5, "each run's RL time limit (train.py --time-limit-min)", above=0)
    steps: int = arg(400, "each run's steps at most (the time limit ends it first)", at_least=1)
    seed: int = arg(0, "the runs' seed; the held-out split is split 0's", at_least=0)
    rollout: str = arg(
        "eager",
        "train.py --rollout of the runs: eager, as the fast engine compiles each new decode shape, "
        "which a run of minutes cannot repay",
        choices=("eager", "fast"),
    )
    threads: int = arg(2, "CPU threads of each run (runs share the machine's cores)", at_least=1)
    samples: int = arg(2, "sampled episodes per secret in the final evaluations", at_least=1)
    runs: str = arg("runs/gpu", "where the runs are written", writes="directory")
    out: str = arg(os.path.join(RESULTS, "smollm2_gpu.json"), "the results file", writes="file")


def run_flags(cfg: SmolGpuConfig, estimator: str, lr: str) -> list[str]:
    """The train.py flags of one run: the llm preset's settings, with validation secrets."""
    flags = f"--model {cfg.model} --estimator {estimator} --lr {lr} --seed {cfg.seed}"
    flags += f" --steps {cfg.steps} --time-limit-min {cfg.minutes} --validation-secrets 10"
    flags += f" --rollout {cfg.rollout} --threads {cfg.threads}"
    return [*flags.split(), "--out", cfg.runs, "--run-name", f"{estimator}-lr{lr}"]


def curve(run_dir: Path, names: dict = CURVE) -> list[dict]:
    """Per evaluated step: the run's logged figures of `names` ({name: logged name})."""
    rows = [json.loads(line) for line in open(run_dir / "metrics.jsonl")]
    return [
        {"step": r["step"], **{k: r.get(v) for k, v in names.items()}}
        for r in rows
        if "eval/resolve_rate" in r
    ]


def played(policy, game: GameConfig, secrets: list[int], samples: int, seed: int) -> dict:
    """A policy's figures on some secrets: resolve greedy and sampled, and its greedy turns'
    valid-action and redundant shares."""
    ev = evaluate_policy(policy, secrets, game, RuleOracle(), samples, seed)
    return {
        "greedy": ev["eval/resolve_rate"],
        "sampled": ev["eval/sampled_resolve_rate"],
        "valid_rate": 1 - ev["eval/invalid_rate"],
        "redundancy_rate": ev["eval/redundancy_rate"],
    }


def both_sets(policy, train_cfg, samples: int, seed: int) -> dict:
    """`played` on the run's held-out secrets of 1..100 and on all of 1..200."""
    game = settings(GameConfig, train_cfg)
    heldout = secret_split(train_cfg.n_max, train_cfg.n_heldout, train_cfg.split_seed)[1]
    return {
        "heldout": played(policy, game, heldout, samples, seed),
        "gen200": played(policy, replace(game, n_max=200), list(range(1, 201)), samples, seed),
    }


def main(argv=None) -> dict:
    cfg = parse_config(SmolGpuConfig, argv, description=__doc__.splitlines()[0])
    estimators, lrs = cfg.estimators.split(","), cfg.lrs.split(",")
    start = config_from_flags(run_flags(cfg, estimators[0], lrs[0]))
    began = time.time()
    # caches the weights and the warm-up before the runs share them
    policy = starting_policy(settings(ModelConfig, start), warmup_config(start))[0]
    prepared = time.time() - began
    procs = {
        (e, lr): subprocess.Popen([sys.executable, "train.py", *run_flags(cfg, e, lr)], cwd=ROOT)
        for e in estimators
        for lr in lrs
    }
    step0 = both_sets(policy, start, cfg.samples, cfg.seed)  # while the runs train
    del policy
    walls = {}
    for key, proc in procs.items():
        proc.wait()
        walls[key] = time.time() - began - prepared
    runs = {key: run_record(cfg, *key, proc.returncode, walls[key]) for key, proc in procs.items()}
    chosen = {}
    for e in estimators:
        done = [lr for lr in lrs if runs[(e, lr)]["kept_validation"] is not None]
        if done:  # the learning rate whose kept checkpoint scored best on the validation secrets
            lr = max(done, key=lambda lr: runs[(e, lr)]["kept_validation"])
            best = ROOT / cfg.runs / f"{e}-lr{lr}" / "best"
            kept = models.load_policy(str(best), start.device or None, trainable=False)
            chosen[e] = {"lr": float(lr), **both_sets(kept, start, cfg.samples, cfg.seed)}
    result = {
        "model": cfg.model,
        "preset": "llm",
        "batch": {"secrets_per_step": start.secrets_per_step, "group_size": start.group_size},
        "split_seed": start.split_seed,
        "prepare_seconds": round(prepared, 1),
        "samples": cfg.samples,
        "chosen_on": "the kept checkpoint's smoothed score on 10 validation secrets",
        "step0": step0,
        "runs": list(runs.values()),
        "chosen": chosen,
        "versions": versions(),
    }
    save_results(result, cfg.out)
    print(json.dumps({"step0": step0, "chosen": chosen}, indent=1))
    return result


def run_record(cfg: SmolGpuConfig, estimator: str, lr: str, returncode: int, wall: float) -> dict:
    """One run's flags, steps, seconds, curve and the validation score of its kept checkpoint."""
    run_dir = ROOT / cfg.runs / f"{estimator}-lr{lr}"
    done = returncode == 0 and (run_dir / "summary.json").exists()
    summary = json.loads((run_dir / "summary.json").read_text()) if done else {}
    points = curve(run_dir) if done else []
    kept = next((p for p in points if p["step"] == summary["kept"]["step"]), {}) if done else {}
    return {
        "estimator": estimator,
        "lr": float(lr),
        "returncode": returncode,
        "flags": run_flags(cfg, estimator, lr),
        "wall_seconds": round(wall, 1),
        "steps": summary.get("steps"),
        "train_seconds": summary.get("train_seconds"),
        "kept_step": summary.get("kept", {}).get("step"),
        "kept_validation": kept.get("validation"),
        "curve": points,
    }


def versions() -> dict:
    import accelerate
    import peft
    import torch
    import transformers

    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
    return {
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "peft": peft.__version__,
        "accelerate": accelerate.__version__,
        "gpu": gpu,
    }


if __name__ == "__main__":
    main(sys.argv[1:])
