"""train.py's hyperparameters (App. C "Training Hyperparameters"): `TrainConfig`, every flag with
its meaning and default; the presets that change a few of them with the model or the question
set; and the builders of the small configs each part of the loop takes (`tools.cli.settings`
builds those whose fields carry the flags' names: env.GameConfig, update.UpdateConfig,
episodes.StartConfig, SplitConfig and OfflineConfig, experiment.RunConfig,
lm.models.ModelConfig; `warmup_config` the rest). `python train.py --help` lists them all.

The paper's settings, the one place every other mention follows. "TeX" is the paper's text (its
line in ../shared/paper/echo-paper.tex); "code" is its released code (csu-signal/echo-edp,
train_echo.py and advantages.py at commit 16d13b0), where the TeX says nothing:

    setting                    TeX                              code                  echo
    secrets, training          1..100 (sec. 5.1, l. 391)        1..100                1..100
    secrets, generalization    up to 200 (l. 391)               -                     1..200
    horizon T                  10 (App. C, l. 2038)             10                    10
    arms K                     5 (App. B, l. 1182)              5                     5
    redundant turn's r_t       -0.1 (App. C, l. 2038)           -0.1                  -0.1
    oracle                     gpt-4o-mini, T = 0 (l. 1177)     gpt-4o-mini           rule oracle
    KL weight beta             0 (App. C, l. 2040)              0                     0
    gradient-norm clip         0.5 (App. C, l. 2040)            0.5                   0.5
    clip eta                   "the TRL default" (l. 2040)      TRL's: 0.2            0.2
    G, rollouts per secret     -                                4                     4
    temperature, top-p         -                                1.0, 0.9              1.0, 0.9
    longest action             -                                128 new tokens        64
    optimizer steps per batch  -                                4, one pass           4 x 4
    learning rate              -                                5e-6 (LoRA)           5e-4, llm 5e-6
    LoRA (r, alpha, dropout)   -                                16, 32, 0.05; q/k/v/o llm: the same*
    runs per result            3 (Table 1, l. 646)              -                     seeds

* (LoRA) its dropout in the warm-up only: Eq. 2's passes run without it (update.py says why).

(The code's generation batch is 16 rows of its dataset; its config's max_completion_length, 64,
is not what its generate call uses, 128.) RESULTS.md's defaults table says what chose each of
echo's values that differs.
"""

from __future__ import annotations

from dataclasses import dataclass

from baselines import ESTIMATORS
from env import QUESTION_SETS
from episodes import UNIVERSES
from game.prompts import CANDIDATE_FORMATS, PROMPT_LAYOUTS
from lm.warmup import WarmupConfig
from tools.cli import Preset, arg, config_problem, cpu_computes_bf16, fail, parse_config

WARMUP_MODES = ("auto", "always", "never")


@dataclass
class TrainConfig:
    estimator: str = arg("echo", f"credit assignment: one of {', '.join(ESTIMATORS)}")
    model: str = arg("tiny", "tiny | smollm2 | Hugging Face id on disk | local model directory")
    tiny_layers: int = arg(2, "layers of the built-in tiny model (tinylm.TinyConfig)", at_least=1)
    tiny_width: int = arg(128, "hidden size of the tiny model (32-dim heads, 4x MLP)", at_least=32)
    precision: str = arg(
        "auto",
        "fp32, or bf16 (autocast over float32 trainable weights; on a CPU without bf16 "
        "arithmetic its products run in float32 kernels, lm/bf16.py); auto: bf16 on a GPU, "
        "else fp32",
        choices=("auto", "bf16", "fp32"),
    )
    lora_rank: int = arg(0, "LoRA rank; 0: full fine-tuning", at_least=0)
    lora_alpha: int = arg(32, "LoRA alpha (the paper's code: 32)", at_least=1)
    lora_dropout: float = arg(
        0.05,
        "LoRA dropout of the warm-up; Eq. 2's passes run without it, update.py "
        "(the paper's code: 0.05)",
        at_least=0,
        below=1,
    )
    lora_targets: str = arg(
        "q_proj,k_proj,v_proj,o_proj", "modules LoRA adapts (the paper's code: attention's)"
    )
    gradient_checkpointing: bool = arg(False, "recompute activations in the backward pass")
    warmup: str = arg(
        "auto",
        "warm-up (lm/warmup.py) of a model but tiny: auto (below the threshold)",
        choices=WARMUP_MODES,
    )
    warmup_threshold: float = arg(
        0.9, "valid-action rate below which the warm-up runs", at_least=0, at_most=1
    )
    warmup_episodes: int = arg(300, "random-policy episodes of warm-up data", at_least=1)
    warmup_epochs: int = arg(3, "passes over the warm-up data", at_least=1)
    warmup_lr: float = arg(3e-3, "warm-up learning rate", above=0)
    question_set: str = arg(
        "paper", "paper (every family) or binary (yes/no questions)", choices=QUESTION_SETS
    )
    expected_info: bool = arg(
        False, "r_info: the elimination expected under b_t (not the paper's; env.py)"
    )
    redundancy_penalty: float = arg(
        -0.1, "r_t of a question asked again to the same arm (App. C: -0.1)", at_most=0
    )
    oracle: str = arg("rule", "rule (offline, exact) or llm (OpenAI-compatible, OPENAI_API_KEY)")
    oracle_model: str = arg(
        "gpt-4o-mini", "model of the LLM oracle (paper, l. 1177: gpt-4o-mini at T = 0)"
    )
    steps: int = arg(80, "RL steps (one batch of B x G episodes each)", at_least=1)
    secrets_per_step: int = arg(6, "B: training secrets per step", at_least=1)
    group_size: int = arg(
        4, "G: rollouts per secret, the group of Eq. 1 (the paper's code: 4)", at_least=2
    )
    lr: float = arg(5e-4, "AdamW learning rate", above=0)
    ppo_epochs: int = arg(4, "passes of Eq. 2 over each batch", at_least=1)
    num_minibatches: int = arg(
        4,
        "optimizer steps per pass, each on a random share of the turns (1: Eq. 2 whole)",
        at_least=1,
    )
    micro_batch: int = arg(64, "turns per forward pass (gradients accumulate)", at_least=1)
    micro_tokens: int = arg(
        0, "tokens per forward pass at most, padding included (0: no bound): its memory", at_least=0
    )
    clip_eta: float = arg(
        0.2, "eta of Eq. 2 (paper, l. 2040: the TRL default; TRL's is 0.2)", above=0
    )
    ratio_level: str = arg(
        "sequence", "sequence (the paper's rho per action) or token", choices=("sequence", "token")
    )
    kl_beta: float = arg(0.0, "weight of KL to the initial policy (paper, l. 2040: 0)", at_least=0)
    grad_clip: float = arg(0.5, "gradient-norm clip (paper, l. 2040: 0.5)", above=0)
    target_kl: float = arg(
        0.0, "stop a batch's update once KL(pi_old || pi) passes this (0: never)", at_least=0
    )
    adam_beta2: float = arg(
        0.99, "Adam's second-moment decay (PPO practice; torch's: 0.999)", at_least=0, below=1
    )
    adam_eps: float = arg(1e-5, "Adam's epsilon (PPO practice: 1e-5)", above=0)
    anneal_lr: bool = arg(True, "decay the learning rate linearly to 0 over the run")
    temperature: float = arg(
        1.0, "sampling temperature of the rollouts (the paper's code: 1.0)", above=0
    )
    top_p: float = arg(
        0.9,
        "top-p of the rollouts and of Eq. 2's log-probs (the paper's code: 0.9)",
        above=0,
        at_most=1,
    )
    max_new_tokens: int = arg(64, "longest action, in tokens (the paper's code: 128)", at_least=1)
    n_max: int = arg(100, "secrets are 1..n_max (paper, l. 391: 100 for training)", at_least=2)
    n_heldout: int = arg(20, "secrets of 1..n_max held out for evaluation", at_least=1)
    split_seed: int = arg(
        0, "seed of the held-out split and the validation secrets (episodes.py)", at_least=0
    )
    universe: str = arg(
        "full",
        "C_0 of a training secret: full (1..n_max, the paper's) or random (episodes.py)",
        choices=("full", *UNIVERSES),
    )
    universe_least: int = arg(2, "the fewest numbers a random universe holds", at_least=1)
    universe_share: float = arg(
        1.0, "share of a step's secrets whose universe is random", at_least=0, at_most=1
    )
    prefix_turns: int = arg(
        3, "K: rollouts start after 0..K random questions (0: the paper)", at_least=0
    )
    refusal_rate: float = arg(
        0.3, "chance an arm's family goes unanswered (0: the paper)", at_least=0, at_most=1
    )
    hidden_share: float = arg(
        0.0, "share of secrets whose prompts leave C_t out (0: the paper)", at_least=0, at_most=1
    )
    candidate_format: str = arg(
        "runs", "how prompts write C_t (prompts.candidate_text)", choices=CANDIDATE_FORMATS
    )
    prompt_layout: str = arg(
        "paper",
        "paper (App. B's prompt) or system (its instructions first: game/prompts.py)",
        choices=PROMPT_LAYOUTS,
    )
    eval_every: int = arg(5, "evaluate on the held-out secrets every this many steps", at_least=1)
    eval_samples: int = arg(
        4, "sampled episodes per held-out secret beside greedy (0: none)", at_least=0
    )
    eval_rows: int = arg(
        0,
        "most sampled evaluation episodes decoded at once, whole secrets, and most warm-up probe "
        "states (0: all at once)",
        at_least=0,
    )
    credit_probe: int = arg(
        32, "turns whose credit is set against A_B at each evaluation (0: off)", at_least=0
    )
    save_every: int = arg(5, "checkpoint every this many steps (and at the end)", at_least=1)
    offline_episodes: int = arg(512, "offline: episodes played once by pi_0", at_least=1)
    offline_sft_fraction: float = arg(
        0.3, "offline: share of steps spent on filtered SFT first", at_least=0, at_most=1
    )
    gigpo_step_weight: float = arg(
        1.0, "gigpo: weight of the step-level advantage (GiGPO's default)", at_least=0
    )
    gigpo_gamma: float = arg(
        0.95, "gigpo: discount of the step-level return (GiGPO's)", at_least=0, at_most=1
    )
    seed: int = arg(0, "seed of secrets, sampling and minibatch order", at_least=0)
    seeds: str = arg("", "comma-separated seeds: one run per seed (overrides --seed)")
    out: str = arg("runs", "runs go to OUT/RUN_NAME (-2, -3, ... if taken)", writes="directory")
    run_name: str = arg("", "default: ESTIMATOR-QUESTION_SET-seedSEED")
    resume: bool = arg(False, "continue the latest run of RUN_NAME from its last checkpoint")
    time_limit_min: float = arg(
        0.0, "stop after the step that passes this many minutes (0: none)", at_least=0
    )
    pause_after: int = arg(
        0,
        "stop after this step, checkpointed and without the kept checkpoint's evaluation, so that "
        "--resume goes on; the learning rate still anneals over --steps (0: never)",
        at_least=0,
    )
    validation_secrets: int = arg(
        0, "training secrets set aside to choose the kept checkpoint (0: the last)", at_least=0
    )
    validation_window: int = arg(
        3, "evaluations in a row whose mean validation score chooses it", at_least=1
    )
    tensorboard: bool = arg(False, "also write each step's row to RUN/tensorboard (TensorBoard)")
    rollout: str = arg(
        "auto",
        "what samples: eager (policy.py) or fast (lm/engine.py); auto: fast on CUDA",
        choices=("auto", "eager", "fast"),
    )
    old_logprobs: str = arg(
        "auto",
        "pi_old of Eq. 2: auto or recompute (update.old_logprobs)",
        choices=("auto", "recompute"),
    )
    compile_update: bool = arg(
        False, "torch.compile the layers for Eq. 2's passes (update.CompiledLayers)"
    )
    behaviour_is_cap: float = arg(
        0.0, "C: Eq. 2's terms times min(C, pi_old / pi_copy) (0: off)", at_least=0
    )
    device: str = arg("", "cpu | cuda; default: cuda if there is one")
    threads: int = arg(0, "torch threads on a CPU (0: every core; cli.use_threads)", at_least=0)


# The tiny model's defaults on the paper's set, above; presets change a few, and a flag the user
# gives wins (cli.parse_config).
PRESETS = {
    "llm": Preset(
        "--model is not tiny (the paper's code: LoRA r 16 on q/k/v/o, lr 5e-6, top-p 0.9, one "
        "pass of 4 optimizer steps, 128 new tokens; the paper's episode starts and candidate list; "
        "B = 8, the micro-batch and the warm-up are echo's, compared on no figure)",
        lambda c: c.model != "tiny",
        dict(
            lora_rank=16,
            lr=5e-6,
            micro_batch=16,
            warmup_episodes=64,
            warmup_epochs=1,
            warmup_lr=5e-4,
            ppo_epochs=1,
            num_minibatches=4,
            max_new_tokens=128,
            prefix_turns=0,
            refusal_rate=0.0,
            candidate_format="list",
            secrets_per_step=8,
            top_p=0.9,
        ),
    ),
    "llm-full": Preset(
        "--model is not tiny and --lora-rank 0 (full fine-tuning)",
        lambda c: c.model != "tiny" and c.lora_rank == 0,
        dict(lr=1e-6, warmup_lr=1e-5),
    ),
    "binary": Preset(
        "--question-set binary (G, the checkpoint rule: split 1's validation secrets, "
        "bench/binary_defaults.py; Eq. 2's passes: split 0's held-out scores; all chosen with the "
        "paper's episode starts and list; 200 steps are a budget, and top-p 1 and B = 8 the "
        "defaults of the time, neither compared on this set)",
        lambda c: c.question_set == "binary",
        dict(
            steps=200,
            ppo_epochs=4,
            group_size=8,
            validation_secrets=10,
            validation_window=5,
            top_p=1.0,
            prefix_turns=0,
            refusal_rate=0.0,
            candidate_format="list",
            secrets_per_step=8,
        ),
    ),
    "llm-cpu": Preset(
        "--model is not tiny and no GPU runs it (chosen together, not one by one, for memory and "
        "time on 2 CPU cores: bench/smollm2_step.json's step before and after, bf16 autocast "
        "and passes of 3072 tokens among them, which llm-cpu-bf16 sets; candidates as runs and "
        "App. B's instructions as a system message computed once a pass (shorter prompts), B = "
        "4, 64 new tokens; evaluations every 10 steps and no credit probe, each costing more "
        "than a step there; the sampled evaluation decodes at most a step's 16 rows at once: its "
        "80 at once were the evaluation's peak, above 6 GB; the warm-up's probe as well "
        "(bench/smollm2_step.py's 'warm-up probe' phase); in float32 passes of at most 1536 "
        "tokens: at 3072 the README's command peaked above 6 GB in the warm-up, "
        "bench/results/first_run_smollm2.json's before)",
        lambda c: c.model != "tiny" and not on_gpu(c.device),
        dict(
            candidate_format="runs",
            prompt_layout="system",
            secrets_per_step=4,
            micro_tokens=1536,
            max_new_tokens=64,
            eval_every=10,
            eval_rows=16,
            credit_probe=0,
        ),
    ),
    "llm-cpu-bf16": Preset(
        "llm-cpu applies and the CPU multiplies bfloat16 in hardware (avx512_bf16 or amx_bf16, "
        "tools.cli.cpu_computes_bf16: bf16 autocast and passes of 3072 tokens were among "
        "llm-cpu's choices, measured on such a CPU; on an AVX2 CPU, which has neither, the same "
        "work took several times as long in torch's bf16 kernels as in fp32, "
        "bench/results/cpu_precision.json, and bf16 in float32 kernels, lm/bf16.py, took longer "
        "than fp32 too, bench/results/bf16_kernels.json, so there precision stays auto: fp32)",
        lambda c: c.model != "tiny" and not on_gpu(c.device) and cpu_computes_bf16(),
        dict(precision="bf16", micro_tokens=3072),
    ),
}


def kept_on_resume() -> set[str]:
    """The settings a resumed run must keep (experiment.Run refuses --resume otherwise): those a
    preset sets, since a preset that depends on the machine (a GPU, the CPU's bf16) can resolve
    them otherwise where the run goes on; but --steps, which a run may be given more of."""
    return {field for preset in PRESETS.values() for field in preset.values} - {"steps"}


def on_gpu(device: str) -> bool:
    """Whether a run on `device` (train.py --device; "": a GPU if there is one) runs on a GPU."""
    import torch

    return device.startswith("cuda") or (device == "" and torch.cuda.is_available())


def config_from_flags(argv=None, prog: str = "train.py") -> TrainConfig:
    """train.py's config: the flags given, the presets that apply for the rest, the defaults."""
    doc = "Train a Clue Selector Game policy with ECHO or a baseline (section 4 of the paper)."
    return parse_config(TrainConfig, argv, description=doc, prog=prog, presets=PRESETS)


def warmup_config(cfg: TrainConfig) -> WarmupConfig:
    """The format warm-up of the run's model, on the prompts and questions the run plays."""
    return WarmupConfig(
        episodes=cfg.warmup_episodes,
        epochs=cfg.warmup_epochs,
        batch_size=32 if cfg.model == "tiny" else cfg.micro_batch,
        batch_tokens=cfg.micro_tokens,
        lr=cfg.warmup_lr,
        n_max=cfg.n_max,
        candidate_format=cfg.candidate_format,
        prompt_layout=cfg.prompt_layout,
        question_set=cfg.question_set,
        probe_rows=cfg.eval_rows,
        mode=cfg.warmup,
        threshold=cfg.warmup_threshold,
    )


def check_config(cfg: TrainConfig) -> None:
    """Fail at once, with one sentence, on settings that cannot work: a value out of its field's
    range (tools.cli.config_problem, as parse_config; here for a config built in Python), or
    settings at odds."""
    n_train = cfg.n_max - cfg.n_heldout - cfg.validation_secrets
    problems = {
        f"unknown estimator {cfg.estimator!r}; choose one of {', '.join(ESTIMATORS)}": (
            cfg.estimator not in ESTIMATORS
        ),
        f"n_heldout must be between 1 and n_max - 1 = {cfg.n_max - 1}": cfg.n_heldout >= cfg.n_max,
        f"secrets_per_step {cfg.secrets_per_step} exceeds the {n_train} training secrets": (
            cfg.secrets_per_step > n_train
        ),
    }
    problem = config_problem(cfg) or next((f"{m}." for m, bad in problems.items() if bad), None)
    if problem:
        fail("train.py", problem)
