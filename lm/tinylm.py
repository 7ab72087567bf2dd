"""The built-in tiny policy: a tokenizer of our own and a small Llama.

`python train.py` must run end to end on 2 CPU cores with no network, so the default policy is
built here rather than downloaded. It is a real causal LM with a real chat template, read and
trained by exactly the code that is written to train Qwen2.5-1.5B (policy.py, train.py); only its
size and vocabulary are small.

Tokenizer. A word-level vocabulary (WordPiece with single-character fallback, so any ASCII
text encodes and decodes exactly) in which every word of the selector prompt, the questions and
the hints is one token, and each fixed line of the selector prompt is a single phrase token. A
BPE tokenizer trained on the same prompts would learn similar merges; doing it by construction
keeps prompts short, which is what makes RL on a CPU fast.

Numbers are written digit by digit, as Qwen2.5's and SmolLM2's tokenizers write them: 150 is the
tokens "1", "5", "0", each a digit the model has read and written in training, so a number it
never trained on (the paper's generalization secrets 101..200) is made of pieces it knows, and
can be read from the candidate list and copied into a question. The one merge: a number's first
digit carries the separator before it (", 5", " 5"), as a BPE trained on candidate lists learns,
so a candidate costs as many tokens as it has digits. (One token per number would be shorter,
but the tokens of numbers no training prompt holds would stay untrained vectors: the model could
neither tell 101..200 apart nor name them.)

A fresh tiny model writes noise: lm/warmup.py teaches it the action format before RL.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter, defaultdict
from dataclasses import dataclass
from functools import lru_cache

import torch

from env import CSG, GameConfig
from game.prompts import SYSTEM_PROMPT, selector_prompt
from reference import RandomPolicy

SPECIALS = ["<pad>", "<unk>", "<|system|>", "<|user|>", "<|assistant|>", "<|end|>"]
CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}<|end|>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)
# One piece per digit (a number's first digit with the separator before it: ", " "," or " "),
# word, newline, run of spaces, or other character. Every character of any text falls in exactly
# one piece.
PIECES = r"(?:, ?| )?\d| ?[A-Za-z]+|\n| +|[^\sA-Za-z\d]|\s"
DIGITS = [f"{sep}{d}" for sep in ("", " ", ",", ", ") for d in range(10)]


@dataclass(frozen=True)
class TinyConfig:
    hidden_size: int = 128  # d_model
    num_layers: int = 2  # train.py --tiny-layers
    num_heads: int = 4
    intermediate_size: int = 512  # MLP width
    max_positions: int = 2048  # a turn-10 prompt at N = 200 is ~1000 tokens (numbers in digits)


def _template_phrases(game_cfg: GameConfig) -> list[str]:
    """The fixed lines of the selector prompt, each with its newline (the last one without)."""
    lines = selector_prompt([], [[] for _ in range(game_cfg.n_arms)], 0, game_cfg).split("\n")
    fixed = [
        line + "\n" for line in lines[:-1] if line and not line.startswith(("Turn ", "Remaining"))
    ]
    arms = [f"  Arm {a} (queried " for a in range(game_cfg.n_arms)]
    return fixed + [lines[-1], "Remaining candidates (", "    Q: ", "    A: ", "x):\n"] + arms


def _corpus(seed: int = 0) -> tuple[list[str], list[dict], list[str]]:
    """(prompts, actions, hints) of random-policy games: both question sets, N = 100 and 200."""
    prompts, actions, hints = [], [], []
    for question_set in ("paper", "binary"):
        for n_max in (100, 200):
            game_cfg = GameConfig(n_max=n_max, question_set=question_set)
            rng = random.Random(seed)
            policy = RandomPolicy(seed)
            game = CSG([rng.randint(1, n_max) for _ in range(150)], game_cfg)
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
    -> "Is the", ..., "No, the number is not"). Digits and template delimiters are never
    merged: the policy must see numbers as their digits, and a question as the same tokens
    wherever it appears. Of pairs equally frequent, the one that occurs first (line, then
    position) is merged. The pair counts are kept up to date, so each merge only rescans the
    lines that hold the merged pair (the vocabulary is built in every process that uses it)."""
    weight = Counter(tuple(s) for s in lines)  # each distinct line once, with its count
    seqs = [list(s) for s in weight]
    weights = list(weight.values())
    digits = {p for s in seqs for p in s if any(c.isdigit() for c in p)}  # a phrase holds none

    def mergeable(p):
        return p not in digits and p not in DELIMITERS

    def pairs_of(s):
        return [(a, b) for a, b in zip(s, s[1:]) if mergeable(a) and mergeable(b)]

    counts, holders = Counter(), defaultdict(set)  # pair -> weighted count, lines holding it
    for i, s in enumerate(seqs):
        for pair in pairs_of(s):
            counts[pair] += weights[i]
            holders[pair].add(i)
    phrases = []
    for _ in range(n_merges):
        if not counts:
            break
        top = max(counts.values())
        if top < min_count:
            break
        tied = {pair for pair, count in counts.items() if count == top}
        first = min(i for pair in tied for i in holders[pair])
        a, b = next(pair for pair in pairs_of(seqs[first]) if pair in tied)
        phrases.append(a + b)
        for i in sorted(holders[a, b]):
            s = seqs[i]
            for pair in pairs_of(s):
                counts[pair] -= weights[i]
                holders[pair].discard(i)
            j = 0
            while j < len(s) - 1:
                if s[j] == a and s[j + 1] == b:
                    s[j : j + 2] = [a + b]
                j += 1
            for pair in pairs_of(s):
                counts[pair] += weights[i]
                holders[pair].add(i)
        counts = +counts  # pairs no line holds any more are dropped
    return phrases


def _splitter():
    """The pre-tokenizer: text cut into PIECES, each kept whole."""
    from tokenizers import Regex, pre_tokenizers

    return pre_tokenizers.Split(Regex(PIECES), behavior="isolated")


@lru_cache(maxsize=4)
def _vocabulary(seed: int, n_merges: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(the word-level vocabulary in id order, the phrase tokens added after it). Cached: a
    process that builds the tokenizer twice (the warm-up's cache key, the model) plays the
    corpus and learns the merges once."""
    split = _splitter()
    pieces = lambda text: [piece for piece, _ in split.pre_tokenize_str(text)]
    prompts, actions, hints = _corpus(seed)
    words = {p for text in prompts + hints for p in pieces(text)}
    # Phrase merges are learned on the lines as the tokenizer segments them: the template's
    # phrase tokens are atoms, questions appear in actions and in "Q:" lines, hints in "A:" lines.
    lines = [
        ['{"arm": ', str(a["arm"]), ', "question": "', *pieces(a["question"]), '"}']
        for a in actions
    ]
    lines += [["    Q: ", *pieces(a["question"]), "\n"] for a in actions]
    lines += [["    A: ", *pieces(h), "\n"] for h in hints]
    chars = {chr(c) for c in range(32, 127)} | {"\n", "\t"}
    vocab = (
        SPECIALS
        + DIGITS
        + sorted(chars)
        + sorted("##" + c for c in chars)
        + sorted(" " + c for c in chars if c.isalnum())
    )
    vocab = list(dict.fromkeys(vocab + sorted(words)))  # in order, each once: ids are dense
    phrases = sorted(
        {p for qs in ("paper", "binary") for p in _template_phrases(GameConfig(question_set=qs))}
        | {SYSTEM_PROMPT, '{"arm": ', ', "question": "', '"}'}
        | set(learn_phrases(lines, n_merges))
    )
    return tuple(vocab), tuple(phrases)


def build_tokenizer(seed: int = 0, n_merges: int = 250):
    """The tiny model's tokenizer, as a transformers fast tokenizer with a chat template."""
    from tokenizers import Tokenizer, decoders, models
    from transformers import PreTrainedTokenizerFast

    vocab, phrases = _vocabulary(seed, n_merges)
    tok = Tokenizer(
        models.WordPiece(
            {t: i for i, t in enumerate(vocab)},
            unk_token="<unk>",
            continuing_subword_prefix="##",
            max_input_chars_per_word=100,
        )
    )
    tok.pre_tokenizer = _splitter()
    tok.decoder = decoders.Sequence([decoders.Replace("##", ""), decoders.Fuse()])
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        pad_token="<pad>",
        unk_token="<unk>",
        eos_token="<|end|>",
        additional_special_tokens=SPECIALS[2:5],
    )
    tokenizer.add_tokens(list(phrases))
    tokenizer.chat_template = CHAT_TEMPLATE
    return tokenizer


CHATML = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def bpe_tokenizer(vocab_size: int = 800, seed: int = 0):
    """A real byte-level BPE tokenizer (the kind Qwen2.5 and SmolLM2 use), trained here, offline,
    on the game's own prompts, questions and hints, with the ChatML template those models use.
    For tests and benches that need a BPE model without downloading one: numbers split into
    several tokens and every prompt is longer than with build_tokenizer, as with a real LLM."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    prompts, actions, hints = _corpus(seed)
    texts = prompts + hints + [json.dumps(a) for a in actions]
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    tok.train_from_iterator(
        texts,
        trainers.BpeTrainer(
            vocab_size=vocab_size,
            special_tokens=specials,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        ),
    )
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        bos_token=None,
        additional_special_tokens=specials[1:2],
    )
    tokenizer.chat_template = CHATML
    return tokenizer


@lru_cache(maxsize=1)
def vocabulary_fingerprint() -> str:
    """A hash of build_tokenizer()'s tokens, ids and chat template: part of every cache key of a
    tiny model (lm/warmup.py), so that a change to the tokenizer never reuses weights trained on
    another one."""
    tok = build_tokenizer()
    blob = json.dumps([sorted(tok.get_vocab().items()), tok.chat_template])
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def build_model(tokenizer, tiny: TinyConfig = TinyConfig(), seed: int = 0):
    """A fresh Llama-architecture causal LM sized by TinyConfig (0.7M parameters by default)."""
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=tiny.hidden_size,
        intermediate_size=tiny.intermediate_size,
        num_hidden_layers=tiny.num_layers,
        num_attention_heads=tiny.num_heads,
        num_key_value_heads=tiny.num_heads,
        max_position_embeddings=tiny.max_positions,
        tie_word_embeddings=True,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=None,
    )
    return LlamaForCausalLM(config)
