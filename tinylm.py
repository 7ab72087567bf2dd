"""The built-in tiny policy: a tokenizer of our own, a small Llama, and its format warm-up.

`python train.py` must run end to end on 2 CPU cores with no network, so the default policy is
built here rather than downloaded. It is a real causal LM with a real chat template, read and
trained by exactly the code that trains Qwen2.5-1.5B (policy.py, train.py); only its size and
vocabulary are small.

Tokenizer. A word-level vocabulary (WordPiece with single-character fallback, so any ASCII
text encodes and decodes exactly) in which every number 0..200 is one token (with or without a
leading space or a trailing comma, so a candidate list costs one token per candidate), every
word of the selector prompt, the questions and the hints is one token, and each fixed line of
the selector prompt is a single phrase token. A BPE tokenizer trained on the same prompts would
learn similar merges; doing it by construction keeps prompts short (~140 tokens at turn 0),
which is what makes RL on a CPU fast.

Format warm-up. A fresh model writes noise. Before RL it is trained (supervised, cross-entropy
on the action tokens) on the actions of a belief-agnostic random-question policy
(reference.RandomPolicy: random arm, random family, random parameters) in real game states,
until it writes valid JSON questions. It must not imitate bisection or the secret-aware greedy
policy: RL has to find good questions itself, or the comparison of estimators means nothing.
The warmed-up model is cached on disk, keyed by every setting that shapes it.
"""
from __future__ import annotations

import hashlib
import json
import math
import random
import shutil
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from env import SYSTEM_PROMPT, CSG, GameConfig, selector_prompt
from oracle import default_cache_dir
from reference import RandomPolicy

CACHE_VERSION = 4  # bump when the vocabulary or the warm-up data change: it invalidates caches
SPECIALS = ["<pad>", "<unk>", "<|system|>", "<|user|>", "<|assistant|>", "<|end|>"]
CHAT_TEMPLATE = ("{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}<|end|>{% endfor %}"
                 "{% if add_generation_prompt %}<|assistant|>{% endif %}")
# One piece per number (with optional leading space and trailing comma), word, newline, run of
# spaces, or other character. Every character of any text falls in exactly one piece.
PIECES = r" ?\d+,?| ?[A-Za-z]+|\n| +|[^\sA-Za-z\d]|\s"


@dataclass(frozen=True)
class TinyConfig:
    hidden_size: int = 128         # d_model
    num_layers: int = 4
    num_heads: int = 4
    intermediate_size: int = 512   # MLP width
    max_positions: int = 1024      # a turn-10 prompt at N=200 is ~500 tokens


@dataclass(frozen=True)
class WarmupConfig:
    episodes: int = 300            # random-policy episodes (x up to 10 turns) of training data
    epochs: int = 3
    batch_size: int = 32
    lr: float = 3e-3               # AdamW, linear decay to 0
    seed: int = 0
    n_max: int = 100               # the game the data is played in (training: 1..100)
    eval_episodes: int = 64        # sampled episodes to measure the valid-action rate after


def _template_phrases(cfg: GameConfig) -> list[str]:
    """The fixed lines of the selector prompt, each with its newline (the last one without)."""
    lines = selector_prompt([], [[] for _ in range(cfg.n_arms)], 0, cfg).split("\n")
    fixed = [line + "\n" for line in lines[:-1] if line and not line.startswith(("Turn ", "Remaining"))]
    arms = [f"  Arm {a} (queried " for a in range(cfg.n_arms)]
    return fixed + [lines[-1], "Remaining candidates (", "    Q: ", "    A: ", "x):\n"] + arms


def _corpus(seed: int = 0) -> tuple[list[str], list[dict], list[str]]:
    """(prompts, actions, hints) of random-policy games: both question sets, N = 100 and 200."""
    prompts, actions, hints = [], [], []
    for question_set in ("paper", "binary"):
        for n_max in (100, 200):
            cfg = GameConfig(n_max=n_max, question_set=question_set)
            rng = random.Random(seed)
            policy = RandomPolicy(seed)
            game = CSG([rng.randint(1, n_max) for _ in range(150)], cfg)
            while game.active:
                prompts += [m[1]["content"] for m in game.messages()[:3]]
                texts = policy.respond(game)
                actions += [json.loads(t) for t in texts]
                hints += [r.hint for r in game.step(texts)]
    return prompts, actions, hints


# Template delimiters are never merged with the text around them, so a question is the same
# tokens in the action ('{"arm": 3, "question": "' + Q + '"}') as in the history ('    Q: ' + Q):
# "do not ask again what the history shows" is then a matter of matching equal tokens.
DELIMITERS = ('{"arm": ', ', "question": "', '"}', "    Q: ", "    A: ", "\n")


def learn_phrases(lines: list[list[str]], n_merges: int, min_count: int = 20) -> list[str]:
    """BPE over pieces: repeatedly merge the most frequent adjacent pair of pieces ("Is" + " the"
    -> "Is the", ..., "No, the number is not"). Numbers and template delimiters are never
    merged: the policy must see numbers as themselves, and a question as the same tokens
    wherever it appears."""
    from collections import Counter
    weight = Counter(tuple(s) for s in lines)             # each distinct line once, with its count
    seqs = [(list(s), w) for s, w in weight.items()]
    mergeable = lambda p: not any(c.isdigit() for c in p) and p not in DELIMITERS  # noqa: E731
    phrases = []
    for _ in range(n_merges):
        counts = Counter()
        for s, w in seqs:
            for a, b in zip(s, s[1:]):
                if mergeable(a) and mergeable(b):
                    counts[a, b] += w
        if not counts:
            break
        (a, b), count = counts.most_common(1)[0]
        if count < min_count:
            break
        phrases.append(a + b)
        for s, _ in seqs:
            i = 0
            while i < len(s) - 1:
                if s[i] == a and s[i + 1] == b:
                    s[i:i + 2] = [a + b]
                i += 1
    return phrases


def build_tokenizer(seed: int = 0, n_merges: int = 250):
    """The tiny model's tokenizer, as a transformers fast tokenizer with a chat template."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast
    split = pre_tokenizers.Split(Regex(PIECES), behavior="isolated")
    pieces = lambda text: [piece for piece, _ in split.pre_tokenize_str(text)]  # noqa: E731
    prompts, actions, hints = _corpus(seed)
    words = {p for text in prompts + hints for p in pieces(text)}
    # Phrase merges are learned on the lines as the tokenizer segments them: the template's
    # phrase tokens are atoms, questions appear in actions and in "Q:" lines, hints in "A:" lines.
    lines = [['{"arm": ', str(a["arm"]), ', "question": "', *pieces(a["question"]), '"}'] for a in actions]
    lines += [["    Q: ", *pieces(a["question"]), "\n"] for a in actions]
    lines += [["    A: ", *pieces(h), "\n"] for h in hints]
    numbers = {f"{sp}{n}{c}" for n in range(201) for sp in ("", " ") for c in ("", ",")}
    chars = {chr(c) for c in range(32, 127)} | {"\n", "\t"}
    vocab = SPECIALS + sorted(numbers) + sorted(chars) + sorted("##" + c for c in chars) + \
        sorted(" " + c for c in chars if c.isalnum())
    vocab = list(dict.fromkeys(vocab + sorted(words)))  # in order, each once: ids are dense
    tok = Tokenizer(models.WordPiece({t: i for i, t in enumerate(vocab)}, unk_token="<unk>",
                                     continuing_subword_prefix="##", max_input_chars_per_word=100))
    tok.pre_tokenizer = split
    tok.decoder = decoders.Sequence([decoders.Replace("##", ""), decoders.Fuse()])
    phrases = sorted({p for qs in ("paper", "binary") for p in _template_phrases(GameConfig(question_set=qs))}
                     | {SYSTEM_PROMPT, '{"arm": ', ', "question": "', '"}'} | set(learn_phrases(lines, n_merges)))
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", unk_token="<unk>",
                                        eos_token="<|end|>", additional_special_tokens=SPECIALS[2:5])
    tokenizer.add_tokens(phrases)
    tokenizer.chat_template = CHAT_TEMPLATE
    return tokenizer


def build_model(tokenizer, cfg: TinyConfig = TinyConfig(), seed: int = 0):
    """A fresh Llama-architecture causal LM sized by TinyConfig (about 1M parameters)."""
    from transformers import LlamaConfig, LlamaForCausalLM
    torch.manual_seed(seed)
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=cfg.hidden_size,
                         intermediate_size=cfg.intermediate_size, num_hidden_layers=cfg.num_layers,
                         num_attention_heads=cfg.num_heads, num_key_value_heads=cfg.num_heads,
                         max_position_embeddings=cfg.max_positions, tie_word_embeddings=True,
                         pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id,
                         bos_token_id=None)
    return LlamaForCausalLM(config)


def warmup_examples(cfg: WarmupConfig, question_set: str) -> list[tuple[list[dict], str]]:
    """(chat messages, action text) pairs: the random policy's actions in the states it reaches."""
    game_cfg = GameConfig(n_max=cfg.n_max, question_set=question_set)
    rng, policy = random.Random(cfg.seed), RandomPolicy(cfg.seed)
    game = CSG([rng.randint(1, cfg.n_max) for _ in range(cfg.episodes)], game_cfg)
    examples = []
    while game.active:
        messages, actions = game.messages(), policy.respond(game)
        examples += list(zip(messages, actions))
        game.step(actions)
    return examples


def supervised_finetune(policy, examples, cfg: WarmupConfig) -> list[float]:
    """Cross-entropy on the action tokens (and the end-of-turn token). Returns per-epoch losses."""
    tok = policy.tokenizer
    prompts = policy.encode([m for m, _ in examples])
    actions = [tok(a, add_special_tokens=False)["input_ids"] + [policy.eos_id] for _, a in examples]
    order = sorted(range(len(examples)), key=lambda i: len(prompts[i]))  # similar lengths per batch
    batches = [order[i:i + cfg.batch_size] for i in range(0, len(order), cfg.batch_size)]
    opt = torch.optim.AdamW(policy.model.parameters(), lr=cfg.lr, weight_decay=0.0)
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
            torch.nn.utils.clip_grad_norm_(policy.model.parameters(), 1.0)
            opt.step()
            sched.step()
            epoch.append(loss.item())
        losses.append(sum(epoch) / len(epoch))
    policy.model.eval()
    return losses


def valid_action_rate(policy, cfg: WarmupConfig, question_set: str, seed: int = 1) -> float:
    """Fraction of turns with a readable action when the policy plays, sampling at T = 1."""
    from policy import SampleConfig, rollout
    rng = random.Random(seed)
    secrets = [rng.randint(1, cfg.n_max) for _ in range(cfg.eval_episodes)]
    gen = torch.Generator(policy.device).manual_seed(seed)
    out = rollout(policy, secrets, 1, GameConfig(n_max=cfg.n_max, question_set=question_set),
                  SampleConfig(), generator=gen)
    return sum(not r.invalid for r in out.records) / len(out.records)


def prompt_fingerprint(question_set: str) -> str:
    """A prompt with every kind of history line: any change to the prompt format changes it."""
    game = CSG([42], GameConfig(question_set=question_set))
    for arm, question in [(3, "What is the last digit?"), (3, "What is the last digit?"), (0, "Is it big?")]:
        game.step([json.dumps({"arm": arm, "question": question})])
    return game.messages()[0][1]["content"]


def cache_key(tiny: TinyConfig, warm: WarmupConfig, question_set: str) -> str:
    blob = json.dumps([CACHE_VERSION, asdict(tiny), asdict(warm), question_set,
                       prompt_fingerprint(question_set)], sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


def warmed_up(question_set: str = "paper", tiny: TinyConfig = TinyConfig(),
              warm: WarmupConfig = WarmupConfig(), quiet: bool = False, cache_dir=None):
    """(model, tokenizer) of the warmed-up tiny policy: from the cache, or built and trained now."""
    from transformers import AutoTokenizer, LlamaForCausalLM
    from policy import LMPolicy
    root = Path(cache_dir) if cache_dir else default_cache_dir() / "tiny"
    path = root / f"{question_set}-{cache_key(tiny, warm, question_set)}"
    say = (lambda *a: None) if quiet else (lambda *a: print(*a, flush=True))
    if (path / "warmup.json").exists():
        return LlamaForCausalLM.from_pretrained(path), AutoTokenizer.from_pretrained(path)
    start = time.time()
    tokenizer = build_tokenizer(warm.seed)
    policy = LMPolicy(build_model(tokenizer, tiny, warm.seed), tokenizer, "tiny")
    n_params = sum(p.numel() for p in policy.model.parameters())
    examples = warmup_examples(warm, question_set)
    say(f"[warm-up] tiny Llama, {n_params / 1e6:.2f}M parameters, vocabulary {len(tokenizer)}; "
        f"{len(examples)} random-question actions ({question_set} set), {warm.epochs} epochs")
    losses = supervised_finetune(policy, examples, warm)
    valid = valid_action_rate(policy, warm, question_set)
    stats = dict(parameters=n_params, vocabulary=len(tokenizer), examples=len(examples),
                 epoch_losses=[round(x, 4) for x in losses], valid_action_rate=round(valid, 4),
                 seconds=round(time.time() - start, 1), tiny=asdict(tiny), warmup=asdict(warm),
                 question_set=question_set)
    say(f"[warm-up] loss per epoch {', '.join(f'{x:.3f}' for x in losses)}; valid actions "
        f"{100 * valid:.1f}% (sampled, T=1); {stats['seconds']:.0f} s; cached in {path}")
    tmp = path.with_name(path.name + f".tmp{random.randrange(10**9)}")
    policy.save(tmp)
    (tmp / "warmup.json").write_text(json.dumps(stats, indent=2))
    shutil.rmtree(path, ignore_errors=True)
    tmp.rename(path)  # atomic: a half-written cache is never read
    return policy.model, tokenizer


def parameter_count(cfg: TinyConfig, vocabulary: int) -> int:
    """Closed form of the tiny Llama's size (tied embeddings): for the README's arithmetic."""
    d, f = cfg.hidden_size, cfg.intermediate_size
    per_layer = 4 * d * d + 3 * d * f + 2 * d
    return vocabulary * d + cfg.num_layers * per_layer + d + 0 * math.prod(())
