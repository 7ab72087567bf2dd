"""lm/tinylm.py's tokenizer: numbers are written digit by digit, any text round-trips, and the
warm-up cache (lm/warmup.py) is keyed by the vocabulary, so another tokenizer never reuses it."""

import random
import re
import string

import pytest

from env import GameConfig
from game.prompts import selector_prompt
from lm import tinylm, warmup
from lm.models import ModelConfig


@pytest.fixture(scope="module")
def tokenizer():
    return tinylm.build_tokenizer()


def pieces(tok, text: str) -> list[str]:
    return tok.convert_ids_to_tokens(tok(text, add_special_tokens=False)["input_ids"])


@pytest.mark.parametrize(
    "context",
    [
        "{}",
        " {}",
        "[{}]",
        "[7, {}, 9]",
        "Is the number greater than {}?",
        '{{"arm": 0, "question": "Is it between {} and 5?"}}',
    ],
)
def test_every_number_up_to_300_is_its_digits(tokenizer, context):
    """In a candidate list, a question or an action, every number 0..300 is one token per digit
    (a digit with at most the separator before it), never a token holding two digits: 150 is
    made of the pieces 1, 5, 0 that training on 1..100 has read."""
    for n in range(301):
        toks = pieces(tokenizer, context.format(n))
        numeric = [t for t in toks if any(c.isdigit() for c in t)]
        assert all(re.fullmatch(r"(?:, ?|,| )?\d", t) for t in numeric), (n, toks)
        assert "".join(t[-1] for t in numeric) == "".join(re.findall(r"\d", context.format(n))), (
            n,
            toks,
        )


def test_the_first_digit_carries_the_separator_and_the_rest_stand_alone(tokenizer):
    assert pieces(tokenizer, "[3, 150]") == ["[", "3", ", 1", "5", "0", "]"]
    assert pieces(tokenizer, "than 150?")[-4:] == [" 1", "5", "0", "?"]


def test_any_text_round_trips(tokenizer):
    """decode(encode(text)) == text for random printable ASCII, for every prompt of a game at
    N = 200, and for actions with odd spacing."""
    rng = random.Random(0)
    alphabet = string.printable.replace("\x0b", "").replace("\x0c", "").replace("\r", "")
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 80))) for _ in range(300)]
    texts += [
        selector_prompt(
            sorted(rng.sample(range(1, 201), k)),
            [[("What is the last digit?", "The last digit is 7.")]] * 5,
            3,
            GameConfig(n_max=200, question_set=qs),
        )
        for k in (1, 17, 200)
        for qs in ("paper", "binary")
    ]
    texts += ['{"arm":4,"question":"is  it >= 120 ?"}', "  12,,3 ,4\n\t 0007"]
    for text in texts:
        ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        assert tokenizer.unk_token_id not in ids and tokenizer.decode(ids) == text, text


def test_a_turn_zero_prompt_costs_a_token_per_digit(tokenizer):
    """The candidate list 1..100 is 192 digits; the rest of the prompt is a few dozen phrase
    tokens. (It is what an RL step on the CPU pays for, so a change that makes it longer shows.)"""
    list_only = pieces(tokenizer, "[" + ", ".join(map(str, range(1, 101))) + "]")
    assert len(list_only) == 192 + 2
    prompt = selector_prompt(list(range(1, 101)), [[] for _ in range(5)], 0, GameConfig())
    assert len(pieces(tokenizer, prompt)) < 192 + 60


def test_the_warm_up_cache_key_follows_the_vocabulary(monkeypatch):
    """Two tokenizers, two cache keys: weights warmed up with one are never loaded for the other."""
    key = warmup.cache_key(ModelConfig(), warmup.WarmupConfig(), "fp32")
    assert key == warmup.cache_key(ModelConfig(), warmup.WarmupConfig(), "fp32")
    other = tinylm.build_tokenizer(n_merges=10)
    monkeypatch.setattr(tinylm, "build_tokenizer", lambda: other)
    tinylm.vocabulary_fingerprint.cache_clear()
    try:
        assert warmup.cache_key(ModelConfig(), warmup.WarmupConfig(), "fp32") != key
    finally:
        tinylm.vocabulary_fingerprint.cache_clear()


def plain_bpe(lines, n_merges, min_count):
    """The definition learn_phrases keeps up incrementally: recount every pair before each merge;
    of equal counts, the pair met first (line, then position) wins."""
    weight = {}
    for s in lines:
        weight[tuple(s)] = weight.get(tuple(s), 0) + 1
    seqs = [(list(s), w) for s, w in weight.items()]
    digits = {p for s, _ in seqs for p in s if any(c.isdigit() for c in p)}
    ok = lambda p: p not in digits and p not in tinylm.DELIMITERS
    phrases = []
    for _ in range(n_merges):
        counts = {}
        for s, w in seqs:
            for pair in zip(s, s[1:]):
                if ok(pair[0]) and ok(pair[1]):
                    counts[pair] = counts.get(pair, 0) + w
        if not counts or max(counts.values()) < min_count:
            break
        a, b = next(p for p, c in counts.items() if c == max(counts.values()))
        phrases.append(a + b)
        for s, _ in seqs:
            i = 0
            while i < len(s) - 1:
                if s[i] == a and s[i + 1] == b:
                    s[i : i + 2] = [a + b]
                i += 1
    return phrases


def test_phrase_merges_by_hand():
    """ab is the most frequent pair, then ab + c; of two pairs met once each, the first met wins;
    digits and delimiters are never merged."""
    assert tinylm.learn_phrases([["a", "b", "c"], ["a", "b"]], 5, min_count=1) == ["ab", "abc"]
    assert tinylm.learn_phrases([["x", "y"], ["y", "x"]], 1, min_count=1) == ["xy"]
    assert tinylm.learn_phrases([["a", "1", "b", "\n"]] * 30, 5, min_count=1) == []
    assert tinylm.learn_phrases([["a", "b"]] * 19, 5) == []  # fewer than min_count = 20


def test_phrase_merges_match_the_plain_definition():
    """The incremental counts give the merges of recounting every pair before each merge, on
    random lines with repeats, ties, digits and delimiters."""
    rng = random.Random(0)
    for _ in range(300):
        alphabet = ["x", "y", "z", "w", "7", "\n", "    Q: "][: rng.randint(2, 7)]
        lines = [
            [rng.choice(alphabet) for _ in range(rng.randint(0, 12))]
            for _ in range(rng.randint(1, 30))
        ]
        n, least = rng.randint(1, 15), rng.randint(1, 4)
        assert tinylm.learn_phrases([list(s) for s in lines], n, least) == plain_bpe(
            lines, n, least
        ), (lines, n, least)


def test_a_tokenizer_built_twice_is_the_same_and_its_own_object(tokenizer):
    """The vocabulary is learned once per process; every build still returns a fresh tokenizer."""
    again = tinylm.build_tokenizer()
    assert again is not tokenizer and again.get_vocab() == tokenizer.get_vocab()
    again.add_tokens(["<a token only this copy has>"])
    assert "<a token only this copy has>" not in tinylm.build_tokenizer().get_vocab()
