"""The Clue Selector Game (CSG) as an Epistemic Decision Process.

Paper: section 3 (EDPs), section 5.1 "Clue Selector Game Environment as an EDP" (game dynamics,
the CSG as an EDP), Lemma A.5 "Exact posterior in CSG" (App. A), App. B (the selector prompt,
figure "Prompts used in the CSG" (A)), App. C "CSG Reward Composition", App. D (the fields of
the `turns` and `episodes` tables, figure "CSG dataset structure").

One turn, for each active episode of a batch (training plays B secrets x G rollouts at once):

    action  a_t = read_action(policy text)            {"arm": k, "question": "..."}
    hint    o_t = oracle(question, secret)            one sentence (oracle.py)
    belief  C_{t+1} = C_t & {n : read_hint(o_t)}      exact posterior b_t = Unif(C_t)
    reward  r_t = turn_reward(...)                    App. C, every component logged

`play(policy, secrets)` is the whole game loop for any policy with respond(game) -> texts.

Departures from the paper's code, and why:
- The belief update is exact and checked: a reading that would eliminate the secret (a wrong
  LLM answer, or a misread) is refused and the turn is marked `inconsistent`. The paper's code
  silently restored all candidates when a filter emptied the set.
- An unreadable action (no JSON, arm out of range, no question) is an explicit `invalid` turn
  with a penalty and no oracle call. The paper's code replaced it with a random arm and the
  question "Is the number odd or even?", crediting the policy with a question it never asked.
- Arm match is judged on the question's parsed family (ARM_FAMILIES), not by keywords: the
  paper's keyword lists paid the bonus only for its canonical questions ("greater than 50",
  "between 25"), i.e. for one fixed belief-agnostic threshold per arm. It is paid only on a
  turn the oracle answered (App. C adds it to the hint's reward); a deflected question (a
  refused family, a value question on the binary set, one the oracle cannot answer) earns none.
  The paper's code pays it on the keywords before the oracle is called, so a question no arm
  answers still earned it; with refusals on (the default) that would pay for unanswered turns.
- A redundant turn is shown in its arm's history with REDUNDANT_HINT (the history h_t of an EDP
  holds every action and observation; without it a greedy policy that repeats once sees the
  same prompt again and repeats forever). An invalid turn has no arm, so it is not shown; the
  turn counter still advances.
- `binary` question set (App. C "Bisection as a special case"): only two-outcome questions are
  answered; value questions ("what is the last digit?") get BINARY_DEFLECTION, no oracle call.
- `expected_info` (off by default, not in the paper): r_info is the fractional elimination the
  question is expected to give under b_t = Unif(C_t), 1 - sum_k p_k^2 over the parts of C_t its
  answers tell apart, instead of the elimination the drawn secret happened to give. It removes
  the luck of the secret from the turn's credit without using the secret. The parts are those
  of the rule oracle's truthful answers, whichever oracle played the turn.
- Refused families (off by default, not in the paper; episodes.episode_starts): an episode may
  carry a set of question families its clue holders do not answer, unseen until asked; such a
  question gets the oracle's DEFLECTION and no oracle call. On 1..100 the digit sum and the last
  digit identify every secret, so a fixed pair of questions wins every game; when either may be
  refused, the next question depends on what the history shows was answered.
- Hidden beliefs (off by default, not in the paper; episodes.episode_starts): a training
  episode's prompts may leave C_t out. A policy that chooses by the look of the candidate list
  falls back on its opening where the list is one it never saw (secrets above 100); without the
  list, the question must follow from what the history shows was answered.
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass, field, replace
from fractions import Fraction
from functools import lru_cache

from game.grammar import read_hint
from game.prompts import (
    CANDIDATE_FORMATS,
    PROMPT_LAYOUTS,
    Action,
    read_action,
    selector_messages,
)
from game.properties import Fact
from game.questions import parse_question, question_type
from oracle import DEFLECTION, RuleOracle

BINARY_DEFLECTION = "Please ask a yes-or-no question about a specific property."
REDUNDANT_HINT = "You already asked this. No new information."
QUESTION_SETS = ("paper", "binary")


@dataclass(frozen=True)
class RewardWeights:
    """App. C "CSG Reward Composition": every constant of the turn reward, in one place."""

    redundancy_penalty: float = -0.1  # same question to the same arm: early return, no oracle
    invalid_penalty: float = -0.1  # unreadable action (not in the paper, which had none)
    arm_match_bonus: float = 0.05  # question family is one the chosen arm covers
    diversity_bonus: float = 0.05  # question not asked to any arm earlier in the episode
    resolve_bonus: float = 1.0  # C_{t+1} == {secret}
    efficiency_weight: float = 0.1  # times (T - t) on resolution, t the 0-based turn


REWARD = RewardWeights()
# The parts of r_t that turn_reward returns, in the order App. C adds them (with the penalties).
REWARD_PARTS = (
    "r_info",
    "r_arm_match",
    "r_diversity",
    "r_resolve",
    "r_efficiency",
    "r_redundancy",
    "r_invalid",
)


@dataclass(frozen=True)
class GameConfig:
    n_max: int = 100  # secrets uniform on 1..n_max (paper, l. 391: 100 training, up to 200 eval)
    n_arms: int = 5  # K clue-holder arms (paper, l. 1182: 5)
    max_turns: int = 10  # horizon T (paper, l. 750: 10)
    question_set: str = "paper"  # "paper": every family; "binary": yes/no questions only
    expected_info: bool = False  # r_info = the elimination expected under b_t, not the realised one
    candidate_format: str = "list"  # how the prompt writes C_t (candidate_text); "list": App. B
    prompt_layout: str = "paper"  # "paper": App. B's; "system": its instructions first (prompts)
    redundancy_penalty: float = REWARD.redundancy_penalty  # r_t of a repeat to its arm (App. C)

    def __post_init__(self):
        if self.question_set not in QUESTION_SETS:
            raise ValueError(
                f"question_set must be one of {QUESTION_SETS}, not {self.question_set!r}"
            )
        if self.candidate_format not in CANDIDATE_FORMATS:
            raise ValueError(
                f"candidate_format must be one of {CANDIDATE_FORMATS}, not "
                f"{self.candidate_format!r}"
            )
        if self.prompt_layout not in PROMPT_LAYOUTS:
            raise ValueError(f"prompt_layout must be one of {PROMPT_LAYOUTS}")
        if self.n_max < 2 or self.n_arms < 1 or self.max_turns < 1:
            raise ValueError(f"impossible game: {self}")


# Families each arm "owns" (the paper's ARM_PROPERTIES: parity/greater-than-50, prime/square,
# divisibility by 3/5/7, digit sum/last digit, between-25-and-75), generalised to whole families.
ARM_FAMILIES = {
    0: ("parity", "comparison"),
    1: ("prime", "square"),
    2: ("divisibility",),
    3: ("digit_sum", "last_digit"),
    4: ("between",),
}


def secret_split(
    n_max: int = 100, n_heldout: int = 20, seed: int = 0
) -> tuple[list[int], list[int]]:
    """(training secrets, held-out evaluation secrets): 1..n_max minus a fixed random subset.

    The same seed gives the same split in train.py and evaluate.py, so evaluation never sees a
    secret the policy was trained on (the paper's code held out 5 of 1..100 the same way).
    """
    heldout = sorted(random.Random(seed).sample(range(1, n_max + 1), n_heldout))
    return [s for s in range(1, n_max + 1) if s not in set(heldout)], heldout


def update_belief(candidates: frozenset, fact: Fact | None, secret: int, n_max: int):
    """C_{t+1} = C_t & {n : fact holds}: the exact posterior (Lemma A.5 "Exact posterior in CSG").

    Returns (C_{t+1}, inconsistent). A fact false of the secret would eliminate it: the update is
    refused (C_{t+1} = C_t) and the turn is marked inconsistent. Never restores candidates.
    """
    # BEGIN SOLUTION
    if fact is None:
        return candidates, False
    if not fact.holds(secret):
        return candidates, True
    return candidates & fact.members(n_max), False
    # END SOLUTION


def expected_elimination(part_sizes) -> Fraction:
    """E_{z ~ Unif(C_t)}[(|C_t| - |C_{t+1}|) / |C_t|] for a question whose truthful answers split
    C_t into parts of these sizes: a secret in a part of p = size / |C_t| keeps that part, so
    the expectation is sum_k p_k (1 - p_k) = 1 - sum_k p_k^2; 2p(1-p) for a yes/no question
    (App. C "Bisection as a special case of the EDP objective"). Exact (a Fraction)."""
    n = sum(part_sizes)
    return 1 - Fraction(sum(s * s for s in part_sizes), n * n)


def answer_partition(question: str, candidates: frozenset, game_cfg: GameConfig) -> list[frozenset]:
    """The parts of C_t that the rule oracle's truthful answers to `question` tell apart: the
    secrets of a part get the same hint (one part, nothing told apart, when it deflects)."""
    query = parse_question(question)
    if query is None or (game_cfg.question_set == "binary" and not query.binary):
        return [frozenset(candidates)]
    parts = {}
    for n in candidates:
        parts.setdefault(query.true_fact(n), set()).add(n)
    return [frozenset(p) for p in parts.values()]


def answer_parts(question: str, candidates: frozenset, game_cfg: GameConfig) -> list[int]:
    """Sizes of answer_partition's parts."""
    return [len(p) for p in answer_partition(question, candidates, game_cfg)]


def turn_reward(
    n_before: int,
    n_after: int,
    turn: int,
    max_turns: int,
    *,
    redundant=False,
    invalid=False,
    arm_match=False,
    novel=False,
    resolved=False,
    info=None,
    w=REWARD,
) -> dict:
    """App. C "CSG Reward Composition": r_t = r_info + arm match + diversity + resolution +
    efficiency, or a penalty.

    r_info = (|C_t| - |C_{t+1}|) / |C_t| is the posterior-sensitive part the paper's analysis is
    about (or `info`, when given: its expectation under b_t); the rest is shaping. Redundant and
    invalid turns return early with their penalty.
    """
    # BEGIN SOLUTION
    r = dict.fromkeys(REWARD_PARTS, 0.0)
    if invalid:
        r["r_invalid"] = w.invalid_penalty
    elif redundant:
        r["r_redundancy"] = w.redundancy_penalty
    else:
        r["r_info"] = (n_before - n_after) / n_before if info is None else float(info)
        r["r_arm_match"] = w.arm_match_bonus if arm_match else 0.0
        r["r_diversity"] = w.diversity_bonus if novel else 0.0
        if resolved:
            r["r_resolve"] = w.resolve_bonus
            r["r_efficiency"] = w.efficiency_weight * (max_turns - turn)
    r["reward"] = sum(r.values())
    return r
    # END SOLUTION


@dataclass(slots=True)
class TurnRecord:
    """One row of the paper's `turns` table (App. D), plus the reward components."""

    episode: int
    turn: int
    arm: int  # -1 for an invalid turn
    question: str
    question_type: str  # a properties.FAMILIES name, "identity" or "unsupported"
    raw_response: str  # everything the policy wrote
    completion: str  # the action JSON read from it
    hint: str
    answer: str  # "yes" / "no" / the value, "" when the hint carries no information
    hint_status: str  # "fact" / "deflection" / "unreadable" / "identity" / "" (no oracle)
    candidates_before: int
    eliminated: int
    candidates_after: int
    redundant: bool
    invalid: bool
    invalid_reason: str
    inconsistent: bool
    arm_match: bool
    novel: bool
    turn_resolved: bool  # this turn left C_{t+1} = {secret}: the episode ends with it
    r_info: float
    r_arm_match: float
    r_diversity: float
    r_resolve: float
    r_efficiency: float
    r_redundancy: float
    r_invalid: float
    reward: float

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class Episode:
    """The state of one game: the secret, the belief C_t, and what each arm has answered."""

    secret: int
    candidates: frozenset
    arm_histories: list
    turn: int = 0
    resolved: bool = False
    asked: set = field(default_factory=set)  # (arm, normalised question) pairs
    asked_any: set = field(default_factory=set)  # normalised questions, any arm
    records: list = field(default_factory=list)
    refused: frozenset = frozenset()  # question families no clue holder answers here
    hidden: bool = False  # its prompts do not show C_t (selector_prompt)

    def carried_on(self, secret: int) -> "Episode":
        """A new episode that starts where this one stands (belief, arm histories, questions
        asked, turn, refused families, hidden belief), for `secret`, with no turns of its own
        yet."""
        return Episode(
            int(secret),
            self.candidates,
            [list(h) for h in self.arm_histories],
            self.turn,
            self.resolved,
            set(self.asked),
            set(self.asked_any),
            refused=self.refused,
            hidden=self.hidden,
        )


def question_key(question: str) -> str:
    """Questions are the same question if they differ only in case, spacing or end punctuation."""
    return " ".join(question.lower().split()).rstrip("?.! ")


@lru_cache(maxsize=100_000)
def _answer_label(question: str, fact: Fact | None, n_max: int) -> str:
    """The turns table's `answer`: what the hint says about the question that was asked."""
    query = parse_question(question)
    if fact is None or query is None:
        return ""
    if query.kind == "value":
        p = fact.predicate
        return (
            (p.test if p.test in ("even", "odd") else str(p.args[0]))
            if not fact.negated and (p.test in ("even", "odd", "eq"))
            else ""
        )
    said, asked = fact.members(n_max), Fact(query.predicate, query.negated).members(n_max)
    return "yes" if said <= asked else "no" if not said & asked else ""


class CSG:
    """A batch of Clue Selector Games stepped together; episodes that resolve drop out.

    game = CSG(secrets, game_cfg)
    while game.active:
        game.step(policy(game.messages()))
    """

    def __init__(
        self,
        secrets,
        game_cfg: GameConfig = GameConfig(),
        oracle=None,
        universes=None,
        refused=None,
    ):
        """`universes`: one set of numbers per secret, the episode's candidate universe C_0, which
        holds its secret (None: every episode starts from 1..n_max, the paper's game). The prompt
        lists the candidates, so a policy sees its universe; a fixed question sequence cannot
        bisect them all. `refused`: one set of question families per secret that its clue holders
        do not answer (None: none, the paper's game); the prompt does not list them."""
        bad = [s for s in secrets if not 1 <= s <= game_cfg.n_max]
        if bad:
            raise ValueError(f"secrets {bad[:5]} are outside 1..{game_cfg.n_max}")
        full = frozenset(range(1, game_cfg.n_max + 1))
        universes = (
            [full] * len(secrets) if universes is None else [frozenset(u) for u in universes]
        )
        if len(universes) != len(secrets) or any(
            s not in u or not u <= full for s, u in zip(secrets, universes)
        ):
            raise ValueError(
                f"each secret needs a universe within 1..{game_cfg.n_max} that holds it"
            )
        self.game_cfg, self.oracle = game_cfg, oracle or RuleOracle()
        self.weights = replace(REWARD, redundancy_penalty=game_cfg.redundancy_penalty)
        refused = (
            [frozenset()] * len(secrets) if refused is None else [frozenset(r) for r in refused]
        )
        self.episodes = [
            Episode(int(s), u, [[] for _ in range(game_cfg.n_arms)], refused=r)
            for s, u, r in zip(secrets, universes, refused)
        ]

    @property
    def active(self) -> list[int]:
        """Indices of the episodes still playing (not resolved, turns left)."""
        return [
            i
            for i, e in enumerate(self.episodes)
            if not e.resolved and e.turn < self.game_cfg.max_turns
        ]

    def messages(self, indices=None) -> list[list[dict]]:
        """Chat messages (system + selector prompt) for each active episode, in `active` order."""
        indices = self.active if indices is None else indices
        return [
            selector_messages(
                self.episodes[i].candidates,
                self.episodes[i].arm_histories,
                self.episodes[i].turn,
                self.game_cfg,
                self.episodes[i].hidden,
            )
            for i in indices
        ]

    def step(self, responses: list[str]) -> list[TurnRecord]:
        """Play one turn of every active episode; responses[j] is the text of active[j]."""
        indices = self.active
        if len(responses) != len(indices):
            raise ValueError(f"{len(responses)} responses for {len(indices)} active episodes")
        actions = [read_action(text, self.game_cfg.n_arms) for text in responses]
        # The oracle is asked once per turn for every episode that needs it (LLM: concurrently).
        ask, hints = [], {}
        for i, (action, _) in zip(indices, actions):
            ep = self.episodes[i]
            if action is None or (action.arm, question_key(action.question)) in ep.asked:
                continue
            query = parse_question(action.question)
            if query is not None and query.family in ep.refused:
                hints[i] = DEFLECTION  # as the oracle declines a question it cannot answer
                continue
            if self.game_cfg.question_set == "binary" and query is not None and not query.binary:
                continue
            ask.append((i, action.question, ep.secret))
        hints.update(
            zip([i for i, _, _ in ask], self.oracle.answer_many([(q, s) for _, q, s in ask]))
        )
        return [
            self._apply(i, text, action, reason, hints.get(i))
            for i, text, (action, reason) in zip(indices, responses, actions)
        ]

    def _apply(
        self, i: int, raw: str, action: Action | None, reason: str, hint: str | None
    ) -> TurnRecord:
        """Turn t of episode i: the hint's effect on the belief and the histories, the reward
        (App. C) and the turn's row of the `turns` table (App. D)."""
        ep, game_cfg = self.episodes[i], self.game_cfg
        t, belief, question = ep.turn, ep.candidates, action.question if action else ""
        redundant = action is not None and (action.arm, question_key(question)) in ep.asked
        qtype = question_type(question) if action else "invalid"
        seen = self._observe(ep, action, hint, redundant, qtype)  # updates C_t and the histories
        info = None
        if game_cfg.expected_info and action is not None and not redundant:  # expected under b_t
            parts = (
                [len(belief)] if qtype in ep.refused else answer_parts(question, belief, game_cfg)
            )
            info = expected_elimination(parts)
        before, after = len(belief), len(ep.candidates)
        r = turn_reward(
            before,
            after,
            t,
            game_cfg.max_turns,
            redundant=redundant,
            invalid=action is None,
            arm_match=seen["arm_match"],
            novel=seen["novel"],
            resolved=ep.resolved,
            info=info,
            w=self.weights,
        )
        record = TurnRecord(
            episode=i,
            turn=t,
            arm=action.arm if action else -1,
            question=question,
            question_type=qtype,
            raw_response=raw,
            completion=action.completion if action else "",
            candidates_before=before,
            eliminated=before - after,
            candidates_after=after,
            redundant=redundant,
            invalid=action is None,
            invalid_reason=reason,
            turn_resolved=ep.resolved,
            **seen,
            **r,
        )
        ep.records.append(record)
        ep.turn += 1
        return record

    def _observe(self, ep: Episode, action, hint: str | None, redundant: bool, qtype: str) -> dict:
        """What the turn's hint tells (the belief update, Lemma A.5), recorded in the episode's
        state: its row fields hint, answer, hint_status, inconsistent, novel and arm_match."""
        seen = dict(hint="", answer="", hint_status="", inconsistent=False)
        seen |= dict(novel=False, arm_match=False)
        if action is None:  # unreadable: no arm to ask, nothing shown in any history
            return seen
        question, key = action.question, question_key(action.question)
        if redundant:
            ep.arm_histories[action.arm].append((question, REDUNDANT_HINT))
            return seen | {"hint": REDUNDANT_HINT}
        hint = BINARY_DEFLECTION if hint is None else hint  # binary set: a value question
        reading = read_hint(hint, parse_question(question))
        after, inconsistent = update_belief(
            ep.candidates, reading.fact, ep.secret, self.game_cfg.n_max
        )
        answer = "" if inconsistent else _answer_label(question, reading.fact, self.game_cfg.n_max)
        answered = hint not in (DEFLECTION, BINARY_DEFLECTION)
        seen.update(hint=hint, answer=answer, hint_status=reading.status, inconsistent=inconsistent)
        seen.update(novel=key not in ep.asked_any)
        seen.update(arm_match=answered and qtype in ARM_FAMILIES.get(action.arm, ()))
        ep.asked.add((action.arm, key))
        ep.asked_any.add(key)
        ep.arm_histories[action.arm].append((question, hint))
        ep.candidates, ep.resolved = after, after == {ep.secret}
        return seen

    def branch(self, i: int, secrets) -> "CSG":
        """A new game whose episodes carry on episode i from where it stands (belief, arm
        histories, questions asked, turn), one per secret in `secrets`, each in C_t: every secret
        of C_t is consistent with every hint so far, so this is h_t replayed for z ~ b_t."""
        ep = self.episodes[i]
        if not set(secrets) <= ep.candidates:
            raise ValueError("a branch's secret must be consistent with the history: in C_t")
        game = CSG([], self.game_cfg, self.oracle)
        game.episodes = [ep.carried_on(z) for z in secrets]
        return game

    def episode_summary(self, i: int) -> dict:
        """One row of the paper's `episodes` table (App. D)."""
        ep = self.episodes[i]
        return dict(
            episode=i,
            secret=ep.secret,
            resolved=ep.resolved,
            turns_taken=ep.turn,
            final_candidates=len(ep.candidates),
            total_reward=sum(r.reward for r in ep.records),
        )


def play(policy, secrets, game_cfg: GameConfig = GameConfig(), oracle=None, universes=None) -> CSG:
    """Play every secret to the end with a respond(game)-policy; returns the finished game."""
    game = CSG(secrets, game_cfg, oracle, universes)
    while game.active:
        game.step(policy.respond(game))
    return game
