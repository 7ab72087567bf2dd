"""Reference policies for the paper's tables, and the question bank they choose from.

Paper: section 5.1 "Baselines" (the greedy oracle: knows the secret, picks the question with
the most elimination), App. C "Bisection as a special case of the EDP objective" (under a
uniform belief the expected fractional elimination of a yes/no question is 2p(1-p), so
bisection is optimal).

Every policy here answers `respond(game) -> [action JSON text per active episode]`, the same
interface as the LLM policy, so evaluate.py treats them all alike:

- RandomPolicy        belief-agnostic: random arm, random family, random parameters. Also the
                      source of the LLM's format warm-up data (lm/warmup.py).
- FixedSequencePolicy belief-agnostic: the same T questions for every secret, chosen by a greedy
                      search over the bank. Shows how much of the game needs the belief at all.
- GreedyOraclePolicy  the paper's reference: knows the secret; most elimination among the
                      paper code's 10 PROPERTY_QUESTIONS (so it is not the best possible cheat).
- BayesPolicy         belief-only: the question of largest expected information gain under
                      b_t = Unif(C_t) over the whole bank; for the binary set this is bisection.
                      The limit the paper does not report.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from env import ARM_FAMILIES, CSG, GameConfig, question_key
from game.grammar import render_question
from game.properties import QUANTITIES, TESTS, Predicate, Query
from game.questions import parse_question

FAMILY_ARM = {family: arm for arm, families in ARM_FAMILIES.items() for family in families}

# The paper code's PROPERTY_QUESTIONS, the greedy oracle's bank.
PAPER_QUESTIONS = [
    "Is the number odd or even?",
    "Is the number prime?",
    "Is the number divisible by 3?",
    "Is the number divisible by 7?",
    "Is the number divisible by 5?",
    "Is the number greater than 50?",
    "Is the number a perfect square?",
    "What is the sum of the digits?",
    "What is the last digit?",
    "Is the number between 25 and 75?",
]

_SHAPES = ("prime", "composite", "square", "cube", "pow2", "palindrome", "fibonacci", "triangular")
_DIGIT_RANGE = {
    "digit_sum": (0, 27),
    "last_digit": (0, 9),
    "tens_digit": (0, 9),
    "first_digit": (1, 9),
    "num_digits": (1, 3),
}


def action_text(query: Query, arm: int | None = None) -> str:
    """The JSON action a scripted policy writes; by default to the arm that owns the family."""
    arm = FAMILY_ARM.get(query.family, 0) if arm is None else arm
    return json.dumps({"arm": arm, "question": render_question(query)})


def random_query(rng: random.Random, game_cfg: GameConfig) -> Query:
    """A belief-agnostic random question: random family, then random parameters over the range."""
    n = game_cfg.n_max
    family = rng.choice(["parity", "shape", "divisibility", "comparison", "between", "digit"])
    if family == "parity":
        options = [
            Query("yesno", Predicate("n", "even")),
            Query("yesno", Predicate("n", "odd")),
            Query("value", quantity="parity"),
        ]
        return rng.choice(options)
    if family == "shape":
        return Query("yesno", Predicate("n", rng.choice(_SHAPES)))
    if family == "divisibility":
        return Query("yesno", Predicate("n", "div", (rng.randint(2, n // 2),)))
    if family == "comparison":
        return Query(
            "yesno", Predicate("n", rng.choice(["gt", "lt", "ge", "le"]), (rng.randint(1, n),))
        )
    if family == "between":
        a, b = sorted(rng.sample(range(1, n + 1), 2))
        return Query("yesno", Predicate("n", "between", (a, b)))
    quantity = rng.choice(list(_DIGIT_RANGE))
    if game_cfg.question_set == "paper" and rng.random() < 0.5:
        return Query("value", quantity=quantity)
    lo, hi = _DIGIT_RANGE[quantity]
    test = rng.choice(["gt", "lt", "eq", "even"])
    return Query(
        "yesno", Predicate(quantity, test, () if test == "even" else (rng.randint(lo, hi),))
    )


class RandomPolicy:
    """Random arm, random question (random_query): the belief-agnostic floor. It follows the
    prompt's one rule, "Do NOT repeat a question already asked", by drawing again when a question
    was already asked in the episode; that uses its own past questions, never the candidates."""

    name = "random"

    def __init__(self, seed: int = 0):
        self.rng = random.Random(seed)

    def _fresh_query(self, game_cfg: GameConfig, asked: set) -> Query:
        for _ in range(100):
            query = random_query(self.rng, game_cfg)
            if question_key(render_question(query)) not in asked:
                return query
        return query

    def respond(self, game: CSG) -> list[str]:
        return [
            action_text(
                self._fresh_query(game.game_cfg, game.episodes[i].asked_any),
                self.rng.randrange(game.game_cfg.n_arms),
            )
            for i in game.active
        ]


@dataclass(frozen=True)
class Bank:
    """Every distinct question the scripted policies may ask, with each number's answer.

    outcomes[q, n - 1] is the answer of number n to question q (0/1 for yes/no questions, the
    value for value questions). Questions that split 1..n_max the same way are kept once.
    """

    queries: tuple
    texts: tuple
    outcomes: np.ndarray  # (Q, n_max) int8 (every answer is below 28)
    binary: np.ndarray  # (Q,) bool: two outcomes


def _bank_queries(game_cfg: GameConfig) -> list[Query]:
    n, qs = game_cfg.n_max, []
    qs += [Query("yesno", Predicate("n", t)) for t in ("even",) + _SHAPES]
    qs += [Query("yesno", Predicate("n", "gt", (k,))) for k in range(1, n)]
    qs += [Query("yesno", Predicate("n", "div", (k,))) for k in range(3, n // 2 + 1)]
    qs += [
        Query("yesno", Predicate("n", "between", (a, b)))
        for a in range(2, n)
        for b in range(a + 1, n)
    ]
    for quantity, (lo, hi) in _DIGIT_RANGE.items():
        qs.append(Query("yesno", Predicate(quantity, "even")))
        qs += [
            Query("yesno", Predicate(quantity, t, (k,)))
            for k in range(lo, hi + 1)
            for t in ("gt", "eq")
        ]
        if game_cfg.question_set == "paper":
            qs.append(Query("value", quantity=quantity))
    return qs


@lru_cache(maxsize=64)
def quantity_values(quantity: str, n_max: int) -> tuple:
    """The quantity of each number 1..n_max."""
    return tuple(QUANTITIES[quantity](n) for n in range(1, n_max + 1))


def truth(predicate: Predicate, n_max: int) -> list[bool]:
    """[predicate.holds(n) for n in 1..n_max], each number's quantity computed once for every
    predicate on it: the bank asks thousands of questions of a few quantities."""
    test = TESTS[predicate.test]
    return [test(v, *predicate.args) for v in quantity_values(predicate.quantity, n_max)]


@lru_cache(maxsize=8)
def question_bank(game_cfg: GameConfig) -> Bank:
    rows, kept, seen = [], [], set()
    for q in _bank_queries(game_cfg):
        if q.kind == "yesno":
            row = np.array(truth(q.predicate, game_cfg.n_max), dtype=np.int64)
            # a question and its negation split alike
            key = (row if row[0] == 0 else 1 - row).tobytes()
        else:
            row = np.array(quantity_values(q.quantity, game_cfg.n_max), dtype=np.int64)
            key = np.unique(row, return_inverse=True)[1].astype(np.int64).tobytes()
        if key in seen or row.min() == row.max():
            continue  # same partition as an earlier question, or no split at all
        seen.add(key)
        rows.append(row)
        kept.append(q)
    return Bank(
        tuple(kept),
        tuple(render_question(q) for q in kept),
        np.stack(rows).astype(np.int8),
        np.array([q.binary for q in kept]),
    )


def expected_information_gain(bank: Bank, candidates) -> np.ndarray:
    """H(answer) under b_t = Unif(C_t), for every bank question (nats). (Q,)"""
    idx = np.fromiter(candidates, dtype=np.int64) - 1
    sub = bank.outcomes[:, idx]  # (Q, |C|)
    gain = np.zeros(len(bank.queries))
    p = sub[bank.binary].sum(axis=1, dtype=np.int64) / len(idx)  # P(yes) for yes/no questions
    with np.errstate(divide="ignore", invalid="ignore"):
        gain[bank.binary] = -np.nan_to_num(p * np.log(p) + (1 - p) * np.log(1 - p))
    for q in np.flatnonzero(~bank.binary):  # value questions: few
        counts = np.unique(sub[q], return_counts=True)[1] / len(idx)
        gain[q] = -(counts * np.log(counts)).sum()
    return gain


class BayesPolicy:
    """argmax_q EIG(q | C_t): adaptive, uses only the belief (never the secret)."""

    name = "bayes"

    def respond(self, game: CSG) -> list[str]:
        bank = question_bank(game.game_cfg)
        return [
            action_text(
                bank.queries[
                    int(np.argmax(expected_information_gain(bank, game.episodes[i].candidates)))
                ]
            )
            for i in game.active
        ]


class GreedyOraclePolicy:
    """The paper's greedy oracle: knows the secret; among the unasked PAPER_QUESTIONS, the one
    that eliminates the most candidates (ties: first in the list)."""

    name = "greedy_oracle"

    def __init__(self, questions=PAPER_QUESTIONS):
        self.questions = list(questions)

    def respond(self, game: CSG) -> list[str]:
        texts = []
        for i in game.active:
            ep = game.episodes[i]
            asked = {q for history in ep.arm_histories for q, _ in history}
            best, best_elim = None, -1
            for text in self.questions:
                query = parse_question(text)
                if text in asked:
                    continue
                if game.game_cfg.question_set == "binary" and not query.binary:
                    elim = 0  # deflected there: it teaches nothing, but it is not a repeat
                else:
                    fact = query.true_fact(ep.secret)
                    elim = len(ep.candidates) - len(
                        ep.candidates & fact.members(game.game_cfg.n_max)
                    )
                if elim > best_elim:
                    best, best_elim = query, elim
            texts.append(action_text(best or parse_question(self.questions[0])))
        return texts


def _refine(labels: np.ndarray, outcomes: np.ndarray) -> np.ndarray:
    """Class ids after also asking each question: (Q, n_max), rows sorted."""
    return np.sort(labels[None, :] * (int(outcomes.max()) + 1) + outcomes, axis=1)


def _scores(refined: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(secrets identified, partition entropy) of each row of _refine's output."""
    n_rows, n_max = refined.shape
    new = np.ones_like(refined, dtype=bool)
    new[:, 1:] = refined[:, 1:] != refined[:, :-1]
    alone = new.copy()
    alone[:, :-1] &= new[:, 1:]  # differs from both neighbours
    # Each row's classes are its runs; each row starts a run, so no run crosses a row's end.
    starts = np.flatnonzero(new)
    p = np.diff(np.append(starts, new.size)) / n_max
    terms = p * np.log(p)
    runs = new.sum(1)
    first = np.cumsum(runs) - runs  # where each row's runs begin in `terms`
    entropy = np.empty(n_rows)
    # Rows with as many classes are summed as one block: a row of a block sums to the bits it sums
    # to alone, so ties between questions break as a sum per row would break them.
    for m in np.unique(runs):
        rows = np.flatnonzero(runs == m)
        entropy[rows] = -terms[first[rows][:, None] + np.arange(m)].sum(axis=1)
    return alone.sum(1), entropy


def _labels(outcomes: np.ndarray, rows) -> np.ndarray:
    labels = np.zeros(outcomes.shape[1], dtype=np.int64)
    for q in rows:
        labels = np.unique(labels * (int(outcomes.max()) + 1) + outcomes[q], return_inverse=True)[1]
    return labels


@lru_cache(maxsize=8)
def best_fixed_sequence(game_cfg: GameConfig) -> tuple:
    """T questions asked in the same order whatever the answers, chosen to identify as many
    secrets as possible: greedy by partition entropy, then coordinate-wise improvement (swap one
    question for the bank question that identifies the most secrets, until nothing improves)."""
    bank = question_bank(game_cfg)
    outcomes = bank.outcomes.astype(np.int64)
    chosen = []
    for _ in range(game_cfg.max_turns):
        identified, entropy = _scores(_refine(_labels(outcomes, chosen), outcomes))
        chosen.append(int(np.argmax(entropy + 1e-9 * identified)))
        if identified.max() == game_cfg.n_max:
            break  # every secret already has its own answer sequence
    best = _scores(_refine(_labels(outcomes, chosen[:-1]), outcomes[chosen[-1:]]))[0][0]
    improved = True
    while improved:
        improved = False
        for t in range(len(chosen)):
            others = chosen[:t] + chosen[t + 1 :]
            identified, _ = _scores(_refine(_labels(outcomes, others), outcomes))
            if identified.max() > best:
                best, chosen[t], improved = int(identified.max()), int(np.argmax(identified)), True
    # Ask the questions that identify secrets on their own first, so episodes resolve early.
    order = sorted(range(len(chosen)), key=lambda t: -len(np.unique(outcomes[chosen[t]])))
    return tuple(bank.queries[chosen[t]] for t in order)


class FixedSequencePolicy:
    """Turn t asks question t of best_fixed_sequence, for every secret: belief-agnostic."""

    name = "fixed_sequence"

    def respond(self, game: CSG) -> list[str]:
        sequence = best_fixed_sequence(game.game_cfg)
        return [
            action_text(sequence[min(game.episodes[i].turn, len(sequence) - 1)])
            for i in game.active
        ]


REFERENCE_POLICIES = {
    "random": RandomPolicy,
    "fixed_sequence": FixedSequencePolicy,
    "greedy_oracle": GreedyOraclePolicy,
    "bayes": BayesPolicy,
}
