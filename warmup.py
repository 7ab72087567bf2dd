"""The format warm-up: a policy that writes readable actions before RL starts, for any model.

RL needs variety among a group's rewards: a model whose every action is unreadable gets the
same invalid-turn penalty in every rollout, every advantage of Eq. 1 is 0, and nothing is
learned (SmolLM2-135M-Instruct, zero-shot, restates the prompt on every turn). So before RL the
model is trained (supervised, cross-entropy on the action tokens and the end-of-turn token) on
the actions of the belief-agnostic random-question policy (reference.RandomPolicy: random arm,
random family, random parameters) in the game states that policy reaches. It must not imitate
bisection or the secret-aware greedy policy: RL has to find good questions itself, or the
comparison of estimators means nothing. It trains what RL will train: the LoRA adapter of a
LoRA run, every weight otherwise. Its prompts write the candidates as the RL run will
(`candidate_format`): the model learns the action on the prompts it will read, and the "runs"
prompt train.py plays by default writes 1..100 as "1-100", not as 192 digit tokens.

`prepared(spec, ...)` decides: a probe set of game states (the random policy's, one sampled
action each at T = 1) measures the model's valid-action rate; below `threshold` (or always,
or never, by `mode`) the warm-up runs. Probe results and warmed-up weights are cached under
models.cache_dir() / "warmup", keyed by the model and every setting that shapes the result
(this config, LoRA, precision, the question set, the prompt format): a change to any of them
trains afresh, an unchanged setting never trains twice.

Not in the paper: its Qwen2.5-1.5B-Instruct already wrote the JSON action zero-shot.
"""

from __future__ import annotations

import hashlib
import json
import random
import shutil
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

import models
from env import CSG, GameConfig
from prompts import read_action
from policy import LMPolicy, SampleConfig
from reference import RandomPolicy
from tinylm import TinyConfig, vocabulary_fingerprint


@dataclass(frozen=True)
class WarmupConfig:
    episodes: int = 300  # random-policy episodes (x up to 10 turns) of training data
    epochs: int = 3
    batch_size: int = 32
    lr: float = 3e-3  # AdamW, linear decay to 0
    seed: int = 0
    n_max: int = 100  # the game the data is played in (training: 1..100)
    candidate_format: str = "list"  # how its prompts write C_t: the RL run's
    probe_states: int = 64  # game states whose sampled action measures the valid-action rate


def random_policy_states(
    n_episodes: int, question_set: str, n_max: int, seed: int, candidate_format: str = "list"
) -> list[tuple[list[dict], str]]:
    """(chat messages, action text) of every state the random policy reaches in n episodes."""
    rng = random.Random(seed)
    return reference_states(
        RandomPolicy(seed),
        [rng.randint(1, n_max) for _ in range(n_episodes)],
        GameConfig(n_max=n_max, question_set=question_set, candidate_format=candidate_format),
    )


def reference_states(
    policy, secrets, game_cfg: GameConfig, universes=None
) -> list[tuple[list[dict], str]]:
    """(chat messages, action text) of every state a reference policy (reference.py) reaches
    playing `secrets` (in the candidate universes `universes`, env.CSG)."""
    game = CSG(secrets, game_cfg, universes=universes)
    examples = []
    while game.active:
        messages, actions = game.messages(), policy.respond(game)
        examples += list(zip(messages, actions))
        game.step(actions)
    return examples


def supervised_finetune(policy: LMPolicy, examples, cfg: WarmupConfig) -> list[float]:
    """Cross-entropy on the action tokens (and the end-of-turn token) of the trainable weights.
    Returns per-epoch losses."""
    tok = policy.tokenizer
    prompts = policy.encode([m for m, _ in examples])
    actions = [tok(a, add_special_tokens=False)["input_ids"] + [policy.eos_id] for _, a in examples]
    order = sorted(range(len(examples)), key=lambda i: len(prompts[i]))  # similar lengths per batch
    batches = [order[i : i + cfg.batch_size] for i in range(0, len(order), cfg.batch_size)]
    params = [p for p in policy.model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=0.0)
    total = cfg.epochs * len(batches)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 1 - s / total)
    rng, losses = random.Random(cfg.seed), []
    policy.model.train()
    for _ in range(cfg.epochs):
        rng.shuffle(batches)
        epoch = []
        for batch in batches:
            logp, mask = policy.score([prompts[i] for i in batch], [actions[i] for i in batch])
            loss = -(logp.sum() / mask.sum())
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            sched.step()
            epoch.append(loss.item())
        losses.append(sum(epoch) / len(epoch))
    policy.model.eval()
    return losses


def valid_action_rate(
    policy: LMPolicy,
    question_set: str,
    n_states: int = 64,
    n_max: int = 100,
    seed: int = 1,
    candidate_format: str = "list",
) -> float:
    """Fraction of readable actions the policy writes, sampling at T = 1, in n game states of
    the random policy's episodes (every turn from the first to the tenth)."""
    states = random_policy_states(
        max(8, n_states // 4), question_set, n_max, seed, candidate_format
    )
    states = random.Random(seed).sample(states, n_states)
    gen = torch.Generator(policy.device).manual_seed(seed)
    texts = [
        g.text for g in policy.generate(policy.encode([m for m, _ in states]), SampleConfig(), gen)
    ]
    n_arms = GameConfig().n_arms
    return sum(read_action(t, n_arms)[0] is not None for t in texts) / len(texts)


def prompt_fingerprint(question_set: str, candidate_format: str = "list") -> str:
    """A prompt with every kind of history line: any change to the prompt format changes it."""
    game = CSG([42], GameConfig(question_set=question_set, candidate_format=candidate_format))
    for arm, question in [
        (3, "What is the last digit?"),
        (3, "What is the last digit?"),
        (0, "Is it big?"),
    ]:
        game.step([json.dumps({"arm": arm, "question": question})])
    return game.messages()[0][1]["content"]


def model_identity(spec: str, tiny: TinyConfig = TinyConfig()) -> dict:
    """What makes a model spec's weights what they are, cheaply, without loading them."""
    if spec == "tiny":
        return {"tiny": asdict(tiny), "vocabulary": vocabulary_fingerprint()}
    path = Path(spec)
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.is_file())
        return {
            "dir": str(path.resolve()),
            "files": [[p.name, p.stat().st_size, int(p.stat().st_mtime)] for p in files],
        }
    return {"spec": spec}


def cache_key(
    spec: str,
    warm: WarmupConfig,
    question_set: str,
    tiny: TinyConfig = TinyConfig(),
    lora: models.LoraConfig | None = None,
    precision: str = "fp32",
) -> str:
    blob = json.dumps(
        [
            model_identity(spec, tiny),
            asdict(warm),
            question_set,
            prompt_fingerprint(question_set, warm.candidate_format),
            asdict(lora) if lora else None,
            precision,
        ],
        sort_keys=True,
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


def cached_info(path: Path) -> dict | None:
    """The record of a cached warm-up (PATH/warmup.json), or None if there is none or it is
    damaged."""
    try:
        info = json.loads((path / "warmup.json").read_text())
        return info if isinstance(info, dict) and {"warmed", "valid_before"} <= set(info) else None
    except (OSError, ValueError):
        return None


def prepared(
    spec: str = "tiny",
    question_set: str = "paper",
    warm: WarmupConfig = WarmupConfig(),
    device=None,
    quiet: bool = False,
    tiny: TinyConfig = TinyConfig(),
    lora: models.LoraConfig | None = None,
    precision: str = "auto",
    mode: str = "auto",
    threshold: float = 0.9,
) -> tuple[LMPolicy, dict]:
    """The policy to train or evaluate, after the format warm-up where it needs one, and what
    happened: (policy, {"valid_before", "valid_after", "warmed", ...}). mode: "auto" (warm up
    below `threshold` valid actions), "always", or "never" (the model as it is, not probed)."""
    say = (lambda *a: None) if quiet else (lambda *a: print(*a, flush=True))
    device = torch.device(device) if device else models.default_device()
    compute = "bf16" if models.resolve_precision(precision, device) == torch.bfloat16 else "fp32"
    if mode == "never":
        return models.load_policy(spec, device, compute, tiny, lora), {"warmed": False}
    name = "tiny" if spec == "tiny" else Path(spec).name or "model"
    path = (
        models.cache_dir()
        / "warmup"
        / f"{name}-{question_set}-{cache_key(spec, warm, question_set, tiny, lora, compute)}"
    )
    info = cached_info(path)
    if info is not None and (
        info["warmed"] or (mode == "auto" and info["valid_before"] >= threshold)
    ):
        source = str(path) if info["warmed"] else spec
        try:
            policy = models.load_policy(
                source, device, compute, tiny, None if info["warmed"] else lora
            )
            policy.name = name + ("+lora" if lora else "")
            return policy, info
        except models.DamagedFileError as e:  # a cache is rebuilt, never fatal
            say(f"[warm-up] the cached warm-up cannot be used, so it is made again: {e}")
    start = time.time()
    policy = models.load_policy(spec, device, compute, tiny, lora)
    before = valid_action_rate(
        policy, question_set, warm.probe_states, warm.n_max, candidate_format=warm.candidate_format
    )
    info = {
        "warmed": False,
        "valid_before": round(before, 4),
        "model": model_identity(spec, tiny),
        "warmup": asdict(warm),
        "lora": asdict(lora) if lora else None,
        "precision": compute,
        "question_set": question_set,
    }
    if mode == "always" or before < threshold:
        trainable = sum(p.numel() for p in policy.model.parameters() if p.requires_grad)
        examples = random_policy_states(
            warm.episodes, question_set, warm.n_max, warm.seed, warm.candidate_format
        )
        say(
            f"[warm-up] {policy.name}: {100 * before:.1f}% valid actions; training "
            f"{trainable / 1e6:.2f}M "
            f"parameters on {len(examples)} random-question actions ({question_set} set), "
            f"{warm.epochs} epoch(s)"
        )
        losses = supervised_finetune(policy, examples, warm)
        after = valid_action_rate(
            policy,
            question_set,
            warm.probe_states,
            warm.n_max,
            candidate_format=warm.candidate_format,
        )
        info.update(
            warmed=True,
            valid_after=round(after, 4),
            examples=len(examples),
            epoch_losses=[round(x, 4) for x in losses],
            seconds=round(time.time() - start, 1),
        )
        say(
            f"[warm-up] loss per epoch {', '.join(f'{x:.3f}' for x in losses)}; valid actions "
            f"{100 * before:.1f}% -> "
            f"{100 * after:.1f}% (sampled, T=1); {info['seconds']:.0f} s; cached in {path}"
        )
    tmp = path.with_name(path.name + f".tmp{random.randrange(10**9)}")
    tmp.mkdir(parents=True)
    if info["warmed"]:
        policy.save(tmp)
    (tmp / "warmup.json").write_text(json.dumps(info, indent=2))
    shutil.rmtree(path, ignore_errors=True)
    try:
        tmp.rename(path)  # atomic: a half-written cache is never read
    except OSError:  # a run beside this one cached the same warm-up meanwhile: keep that one
        shutil.rmtree(tmp, ignore_errors=True)
    return policy, info


def warmed_up(
    spec: str = "tiny",
    question_set: str = "paper",
    warm: WarmupConfig = WarmupConfig(),
    device=None,
    quiet: bool = False,
    tiny: TinyConfig = TinyConfig(),
) -> LMPolicy:
    """The built-in tiny model (or `spec`) after its format warm-up, cached: a fresh tiny model
    writes noise, so it always needs one."""
    return prepared(
        spec, question_set, warm, device, quiet, tiny, mode="always" if spec == "tiny" else "auto"
    )[0]


def starting_policy(cfg, quiet: bool = False):
    """(policy, warm-up info): the model in the run's precision, LoRA adapters if asked, after the
    format warm-up where it needs one (warmup.prepared, cached; the tiny model always needs it)."""
    lora = (
        models.LoraConfig(cfg.lora_rank, cfg.lora_alpha, cfg.lora_dropout, cfg.lora_targets)
        if cfg.lora_rank
        else None
    )
    warm = WarmupConfig(
        episodes=cfg.warmup_episodes,
        epochs=cfg.warmup_epochs,
        lr=cfg.warmup_lr,
        n_max=cfg.n_max,
        candidate_format=cfg.candidate_format,
        batch_size=32 if cfg.model == "tiny" else cfg.micro_batch,
    )
    tiny = TinyConfig(
        hidden_size=cfg.tiny_width,
        num_layers=cfg.tiny_layers,
        num_heads=max(1, cfg.tiny_width // 32),
        intermediate_size=4 * cfg.tiny_width,
    )
    policy, info = prepared(
        cfg.model,
        cfg.question_set,
        warm,
        cfg.device or None,
        quiet,
        tiny,
        lora,
        cfg.precision,
        "always" if cfg.model == "tiny" else cfg.warmup,
        cfg.warmup_threshold,
    )
    if cfg.gradient_checkpointing:
        policy.model.gradient_checkpointing_enable(
            gradient_checkpointing_kwargs={"use_reentrant": False}
        )
    low_precision = {p.dtype for p in policy.model.parameters() if p.requires_grad} - {
        torch.float32
    }
    if low_precision:  # no optimizer steps low-precision weights: small updates round away
        raise RuntimeError(f"trainable parameters in {low_precision}: they must be float32")
    return policy, info
