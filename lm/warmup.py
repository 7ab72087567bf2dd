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
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import torch

from env import CSG, GameConfig
from game.prompts import SYSTEM_PROMPT, read_action
from lm import models
from lm.models import ModelConfig
from lm.tinylm import TinyConfig, vocabulary_fingerprint
from policy import LMPolicy, SampleConfig, padded_batches
from reference import RandomPolicy


@dataclass(frozen=True)
class WarmupConfig:
    """The warm-up's data, training and probe (train.py's --warmup-* flags, train.warmup_config)."""

    episodes: int = 300  # random-policy episodes (x up to 10 turns) of training data
    epochs: int = 3
    batch_size: int = 32
    batch_tokens: int = 0  # tokens a batch holds at most, padding included (0: no bound)
    lr: float = 3e-3  # AdamW, linear decay to 0
    seed: int = 0
    n_max: int = 100  # the game the data is played in (training: 1..100)
    candidate_format: str = "list"  # how its prompts write C_t: the RL run's
    probe_states: int = 64  # game states whose sampled action measures the valid-action rate
    # states the probe decodes at once (0: all): the KV cache of 64 of SmolLM2's prompts in float32
    # took the README's command above 6 GB once the warm-up had trained
    probe_rows: int = 0
    question_set: str = "paper"  # the questions its data asks: the RL run's
    prompt_layout: str = "paper"  # how its prompts are laid out (game.prompts): the RL run's
    mode: str = "auto"  # auto: warm up below `threshold` valid actions; always; never (no probe)
    threshold: float = 0.9

    def game(self) -> GameConfig:
        """The game the warm-up's data is played in and its probe states come from."""
        return GameConfig(
            n_max=self.n_max,
            question_set=self.question_set,
            candidate_format=self.candidate_format,
            prompt_layout=self.prompt_layout,
        )


# Whether the warm-up runs, not what it trains: left out of the cache's key (`cache_key`); the
# question set and the layout are keyed through the prompt's fingerprint and by name.
WHETHER = ("mode", "threshold")
NOT_HASHED = WHETHER + ("question_set", "prompt_layout", "probe_rows")


def random_policy_states(n_episodes: int, game_cfg: GameConfig, seed: int) -> list:
    """(chat messages, action text) of every state the random policy reaches in n episodes."""
    rng = random.Random(seed)
    return reference_states(
        RandomPolicy(seed), [rng.randint(1, game_cfg.n_max) for _ in range(n_episodes)], game_cfg
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


def action_ids(policy: LMPolicy, actions: list[str]) -> list[list[int]]:
    """Each action's tokens and the end-of-turn token: what the policy must write."""
    tok = policy.tokenizer
    return [tok(a, add_special_tokens=False)["input_ids"] + [policy.eos_id] for a in actions]


def supervised_finetune(policy: LMPolicy, examples, warmup_cfg: WarmupConfig) -> list[float]:
    """Cross-entropy on the action tokens (and the end-of-turn token) of the trainable weights.
    Returns per-epoch losses."""
    prompts = policy.encode([m for m, _ in examples])
    actions = action_ids(policy, [a for _, a in examples])
    order = sorted(range(len(examples)), key=lambda i: len(prompts[i]))  # similar lengths per batch
    lengths = [len(prompts[i]) + len(actions[i]) for i in order]
    cut = padded_batches(lengths, warmup_cfg.batch_size, warmup_cfg.batch_tokens)
    batches = [[order[j] for j in batch] for batch in cut]
    params = [p for p in policy.model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=warmup_cfg.lr, weight_decay=0.0)
    total = warmup_cfg.epochs * len(batches)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 1 - s / total)
    rng, losses = random.Random(warmup_cfg.seed), []
    policy.model.train()
    for _ in range(warmup_cfg.epochs):
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
    policy: LMPolicy, game_cfg: GameConfig, n_states: int = 64, seed: int = 1, rows: int = 0
):
    """Fraction of readable actions the policy writes, sampling at T = 1, in n game states of
    the random policy's episodes (every turn from the first to the tenth), decoding at most
    `rows` of them at once (0: all). One generator draws for every batch in turn, so the figure
    is the same under one seed and one `rows`."""
    states = random_policy_states(max(8, n_states // 4), game_cfg, seed)
    states = random.Random(seed).sample(states, n_states)
    gen = torch.Generator(policy.device).manual_seed(seed)
    prompts = policy.encode([m for m, _ in states])
    batch = rows or len(prompts)
    texts = [
        g.text
        for start in range(0, len(prompts), batch)
        for g in policy.generate(prompts[start : start + batch], SampleConfig(), gen)
    ]
    return sum(read_action(t, game_cfg.n_arms)[0] is not None for t in texts) / len(texts)


def prompt_fingerprint(game_cfg: GameConfig) -> str:
    """A prompt with every kind of history line: any change to the prompt format changes it (the
    user's turn; and the system turn where it is not the standard system prompt)."""
    # secret 42 where the set holds it (the keys of caches made before stay the same)
    game = CSG([min(42, game_cfg.n_max)], game_cfg)
    for arm, question in [
        (3, "What is the last digit?"),
        (3, "What is the last digit?"),
        (0, "Is it big?"),
    ]:
        game.step([json.dumps({"arm": arm, "question": question})])
    system, user = game.messages()[0]
    return (
        user["content"]
        if system["content"] == SYSTEM_PROMPT
        else system["content"] + user["content"]
    )


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


def cache_key(model_cfg: ModelConfig, warmup_cfg: WarmupConfig, precision: str) -> str:
    """The cache's name for a warm-up: a hash of the model's identity and of every setting that
    shapes the warmed-up weights (the warm-up's, the prompt's format, LoRA, the precision)."""
    trained = {k: v for k, v in asdict(warmup_cfg).items() if k not in NOT_HASHED}
    blob = json.dumps(
        [
            model_identity(model_cfg.model, model_cfg.tiny),
            trained,
            warmup_cfg.question_set,
            prompt_fingerprint(warmup_cfg.game()),
            asdict(model_cfg.lora) if model_cfg.lora else None,
            precision,
        ],
        sort_keys=True,
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


def cache_path(model_cfg: ModelConfig, warmup_cfg: WarmupConfig, precision: str) -> Path:
    """Where a warm-up is cached: models.cache_dir() / warmup / MODEL-QUESTION_SET-KEY."""
    name = "tiny" if model_cfg.model == "tiny" else Path(model_cfg.model).name or "model"
    key = cache_key(model_cfg, warmup_cfg, precision)
    return models.cache_dir() / "warmup" / f"{name}-{warmup_cfg.question_set}-{key}"


def cached_info(path: Path) -> dict | None:
    """The record of a cached warm-up (PATH/warmup.json), or None if there is none or it is
    damaged."""
    try:
        info = json.loads((path / "warmup.json").read_text())
        return info if isinstance(info, dict) and {"warmed", "valid_before"} <= set(info) else None
    except (OSError, ValueError):
        return None


def prepared(
    model_cfg: ModelConfig = ModelConfig(),
    warmup_cfg: WarmupConfig = WarmupConfig(),
    quiet: bool = False,
) -> tuple[LMPolicy, dict]:
    """The policy to train or evaluate, after the format warm-up where it needs one, and what
    happened: (policy, {"valid_before", "valid_after", "warmed", ...}). warmup_cfg.mode: "auto"
    (warm up below `threshold` valid actions), "always", or "never" (the model as it is, not
    probed). A warm-up is made once and cached (`cache_path`); a damaged cache is made again."""
    say = (lambda *a: None) if quiet else (lambda *a: print(*a, flush=True))
    device, compute = device_and_compute(model_cfg)
    if warmup_cfg.mode == "never":
        return load(model_cfg, device, compute), {"warmed": False}
    path = cache_path(model_cfg, warmup_cfg, compute)
    info = cached_info(path)
    if info is not None and (
        info["warmed"]
        or (warmup_cfg.mode == "auto" and info["valid_before"] >= warmup_cfg.threshold)
    ):
        try:
            return from_cache(path, info, model_cfg, device, compute), info
        except models.DamagedFileError as e:  # a cache is rebuilt, never fatal
            say(f"[warm-up] the cached warm-up cannot be used, so it is made again: {e}")
    policy = load(model_cfg, device, compute)
    info = warm_up(policy, model_cfg, warmup_cfg, compute, say)
    write_cache(path, policy, info)
    if info["warmed"]:
        say(f"[warm-up] cached in {path}")
    return policy, info


def device_and_compute(model_cfg: ModelConfig) -> tuple[torch.device, str]:
    """The device a model runs on and the precision it computes in there ("bf16" or "fp32")."""
    device = torch.device(model_cfg.device) if model_cfg.device else models.default_device()
    dtype = models.resolve_precision(model_cfg.precision, device)
    return device, "bf16" if dtype == torch.bfloat16 else "fp32"


def cached_path(model_cfg: ModelConfig, warmup_cfg: WarmupConfig) -> Path:
    """Where `prepared` caches this model's warm-up (`cache_path` at its compute precision)."""
    return cache_path(model_cfg, warmup_cfg, device_and_compute(model_cfg)[1])


def load(model_cfg: ModelConfig, device, compute: str) -> LMPolicy:
    """The model as it is on disk, LoRA adapters put on where asked."""
    return models.load_policy(model_cfg.model, device, compute, model_cfg.tiny, model_cfg.lora)


def from_cache(path: Path, info: dict, model_cfg: ModelConfig, device, compute: str) -> LMPolicy:
    """The cached warm-up's policy: its weights where it trained, else the model as it is (the
    probe found it valid enough)."""
    if info["warmed"]:
        policy = models.load_policy(str(path), device, compute, model_cfg.tiny, None)
    else:
        policy = load(model_cfg, device, compute)
    name = "tiny" if model_cfg.model == "tiny" else Path(model_cfg.model).name or "model"
    policy.name = name + ("+lora" if model_cfg.lora else "")
    return policy


def warm_up(policy: LMPolicy, model_cfg: ModelConfig, warmup_cfg: WarmupConfig, compute, say):
    """Probe the policy's valid-action rate and, below the threshold (or always), train it on the
    random policy's actions and probe again. Returns what happened (the cache's warmup.json)."""
    start = time.time()
    before = probe(policy, warmup_cfg)
    info = {
        "warmed": False,
        "valid_before": round(before, 4),
        "model": model_identity(model_cfg.model, model_cfg.tiny),
        "warmup": {k: v for k, v in asdict(warmup_cfg).items() if k not in WHETHER},
        "lora": asdict(model_cfg.lora) if model_cfg.lora else None,
        "precision": compute,
        "question_set": warmup_cfg.question_set,
    }
    if warmup_cfg.mode != "always" and before >= warmup_cfg.threshold:
        return info
    trainable = sum(p.numel() for p in policy.model.parameters() if p.requires_grad)
    examples = random_policy_states(warmup_cfg.episodes, warmup_cfg.game(), warmup_cfg.seed)
    say(
        f"[warm-up] {policy.name}: {100 * before:.1f}% valid actions; training "
        f"{trainable / 1e6:.2f}M parameters on {len(examples)} random-question actions "
        f"({warmup_cfg.question_set} set), {warmup_cfg.epochs} epoch(s)"
    )
    losses = supervised_finetune(policy, examples, warmup_cfg)
    after = probe(policy, warmup_cfg)
    info.update(
        warmed=True,
        valid_after=round(after, 4),
        examples=len(examples),
        epoch_losses=[round(x, 4) for x in losses],
        seconds=round(time.time() - start, 1),
    )
    say(
        f"[warm-up] loss per epoch {', '.join(f'{x:.3f}' for x in losses)}; valid actions "
        f"{100 * before:.1f}% -> {100 * after:.1f}% (sampled, T=1); {info['seconds']:.0f} s"
    )
    return info


def probe(policy: LMPolicy, warmup_cfg: WarmupConfig) -> float:
    """The policy's valid-action rate on the warm-up's probe states."""
    return valid_action_rate(
        policy, warmup_cfg.game(), warmup_cfg.probe_states, rows=warmup_cfg.probe_rows
    )


def write_cache(path: Path, policy: LMPolicy, info: dict) -> None:
    """Cache a warm-up (its weights where it trained, and its warmup.json), atomically: a
    half-written cache is never read, and of two runs that cache the same warm-up at once, one
    keeps its copy and neither fails."""
    tmp = path.with_name(path.name + f".tmp{random.randrange(10**9)}")
    tmp.mkdir(parents=True)
    if info["warmed"]:
        policy.save(tmp)
    (tmp / "warmup.json").write_text(json.dumps(info, indent=2))
    shutil.rmtree(path, ignore_errors=True)
    try:
        tmp.rename(path)
    except OSError:  # a run beside this one cached the same warm-up meanwhile: keep that one
        shutil.rmtree(tmp, ignore_errors=True)


def starting_policy(model_cfg: ModelConfig, warmup_cfg: WarmupConfig, quiet: bool = False):
    """(policy, warm-up info): the model in the run's precision, LoRA adapters if asked, after the
    format warm-up where it needs one (`prepared`, cached; the tiny model always needs it)."""
    if model_cfg.model == "tiny":
        warmup_cfg = replace(warmup_cfg, mode="always")
    policy, info = prepared(model_cfg, warmup_cfg, quiet)
    if model_cfg.gradient_checkpointing:
        policy.model.gradient_checkpointing_enable(
            gradient_checkpointing_kwargs={"use_reentrant": False}
        )
    low_precision = {p.dtype for p in policy.model.parameters() if p.requires_grad}
    if low_precision - {torch.float32}:  # no optimizer steps low-precision weights: updates round
        raise RuntimeError(f"trainable parameters in {low_precision}: they must be float32")
    return policy, info
