"""The clue-holder oracles of the Clue Selector Game.

Paper: section 5.1, App. B figure "Prompts used in the CSG" (B): a clue holder that knows the
secret answers one property question in one sentence and deflects vague questions with
"Please ask about a specific property like parity, divisibility, or range."

Two oracles with one interface, `answer_many([(question, secret), ...]) -> [sentence, ...]`:
- `RuleOracle` (the default): deterministic, offline, understands the free-form questions of
  `grammar.parse_question` and answers with `grammar.answer_sentence`.
- `LLMOracle`: any OpenAI-compatible chat endpoint (gpt-4o-mini at temperature 0 in the paper),
  with the paper's oracle prompt, timeouts, retries with backoff, and an on-disk cache.

Neither oracle touches the belief: the game reads every sentence with `grammar.read_hint`
and checks it against the secret (env.py), so a wrong LLM answer is caught, not believed.

Departures from the paper's code: on persistent API failure the paper returned None and then
"I cannot help with that."; here the oracle deflects and counts the failure in `failures`, and
authentication / unknown-model errors stop the run with a clear message instead of deflecting
every turn. The paper's code also rewrote any mention of the secret in a hint to "the number",
which corrupts true hints ("The last digit is 7" for secret 7); here identity statements are
instead refused by the reader (`read_hint` -> status "identity"), so they carry no information.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path

from game.grammar import answer_sentence
from game.questions import parse_question

DEFLECTION = "Please ask about a specific property like parity, divisibility, or range."

ORACLE_SYSTEM_PROMPT = "You are a clue holder in a number guessing game. Return one sentence only."
ORACLE_PROMPT = """You know the secret number is {secret}.

A player has asked you: "{question}"

Rules:
  - Answer ONLY the specific property asked about.
  - Do NOT volunteer extra information.
  - If the question is vague, say:
    "Please ask about a specific property like parity, divisibility, or range."
  - Do not reveal the number directly.

One sentence only."""


class RuleOracle:
    """Deterministic oracle: a truthful one-sentence answer, or the paper's deflection."""

    name = "rule"

    def __init__(self):
        self.failures = 0  # same interface as LLMOracle; a rule oracle never fails

    def answer(self, question: str, secret: int) -> str:
        return _rule_answer(question, secret)

    def answer_many(self, pairs: list[tuple[str, int]]) -> list[str]:
        return [self.answer(q, s) for q, s in pairs]


@lru_cache(maxsize=200_000)
def _rule_answer(question: str, secret: int) -> str:
    query = parse_question(question)
    return DEFLECTION if query is None else answer_sentence(query, secret)


class OracleConfigError(RuntimeError):
    """A problem the user must fix (no key, wrong key, unknown model); raised, never deflected."""


class LLMOracle:
    """An OpenAI-compatible chat model as the clue holder (paper, l. 1177: gpt-4o-mini, temperature
    0).

    Endpoint and key come from OPENAI_BASE_URL / OPENAI_API_KEY, so any compatible server works.
    Each (model, prompt, question, secret) is answered once and cached in `cache_path` (JSON
    lines), so a re-run costs nothing. Rate limits, 5xx, timeouts and dropped connections are
    retried with exponential backoff; after `max_retries` the oracle deflects and counts a failure.
    """

    name = "llm"

    def __init__(
        self,
        cache_path: str | Path,
        model: str = "gpt-4o-mini",
        timeout: float = 30.0,
        max_retries: int = 5,
        backoff: float = 1.0,
        max_workers: int = 8,
        base_url: str | None = None,
        api_key: str | None = None,
    ):
        api_key = api_key or os.environ.get("OPENAI_API_KEY")
        if not api_key:
            raise OracleConfigError(
                "The LLM oracle needs an API key: set OPENAI_API_KEY (and OPENAI_BASE_URL for a "
                "server other than api.openai.com), or use the default rule oracle (--oracle rule)."
            )
        import openai  # only the LLM oracle needs the client

        self._openai = openai
        base_url = base_url or os.environ.get("OPENAI_BASE_URL")
        # max_retries=0: the retries are ours, counted
        self.client = openai.OpenAI(
            api_key=api_key, base_url=base_url, timeout=timeout, max_retries=0
        )
        self.model, self.max_retries = model, max_retries
        self.backoff, self.max_workers = backoff, max_workers
        self.failures = 0  # questions deflected because the API kept failing
        self.api_calls = 0  # requests sent (retries included)
        self._prompt_id = hashlib.sha256(
            (ORACLE_SYSTEM_PROMPT + ORACLE_PROMPT).encode()
        ).hexdigest()[:8]
        self.cache_path = Path(cache_path)
        self._cache = self._load_cache()
        self._lock = threading.Lock()

    def _key(self, question: str, secret: int) -> str:
        return json.dumps([self.model, self._prompt_id, int(secret), question])

    def _load_cache(self) -> dict:
        cache = {}
        if self.cache_path.exists():
            for line in self.cache_path.read_text(encoding="utf-8").splitlines():
                try:
                    row = json.loads(line)
                    cache[row["key"]] = row["hint"]
                except (ValueError, KeyError, TypeError):
                    continue  # a line cut short by a crash: that one answer is asked again
        return cache

    def _store(self, key: str, hint: str) -> None:
        with self._lock:
            self._cache[key] = hint
            self.cache_path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.cache_path, "a", encoding="utf-8") as f:
                f.write(json.dumps({"key": key, "hint": hint}) + "\n")

    def _request(self, question: str, secret: int) -> str | None:
        """One answer from the API, retried on transient errors; None if it never came."""
        o = self._openai
        safe_q = "".join(c for c in question if c.isprintable())[:500]
        messages = [
            {"role": "system", "content": ORACLE_SYSTEM_PROMPT},
            {"role": "user", "content": ORACLE_PROMPT.format(secret=secret, question=safe_q)},
        ]
        for attempt in range(self.max_retries + 1):
            try:
                with self._lock:
                    self.api_calls += 1
                r = self.client.chat.completions.create(
                    model=self.model, messages=messages, temperature=0.0, max_tokens=60
                )
                return (r.choices[0].message.content or "").strip()
            except (o.AuthenticationError, o.PermissionDeniedError, o.NotFoundError) as e:
                raise OracleConfigError(
                    f"The oracle endpoint refused model {self.model!r}: {e}. "
                    "Check OPENAI_API_KEY, OPENAI_BASE_URL and --oracle-model."
                ) from e
            except (o.RateLimitError, o.InternalServerError, o.APIConnectionError):
                pass  # transient (APITimeoutError is an APIConnectionError): back off, retry
            except o.APIStatusError as e:
                if e.status_code < 500:
                    return None  # a request the server will never accept (e.g. 400): no retry
            if attempt < self.max_retries:
                time.sleep(self.backoff * 2**attempt * (1 + 0.25 * random.random()))
        return None

    def answer(self, question: str, secret: int) -> str:
        key = self._key(question, secret)
        if key in self._cache:
            return self._cache[key]
        hint = self._request(question, secret)
        if hint is None:
            with self._lock:
                self.failures += 1
            return DEFLECTION  # not cached: a later run asks again
        self._store(key, hint)
        return hint

    def answer_many(self, pairs: list[tuple[str, int]]) -> list[str]:
        """All questions of one batched turn, concurrently (the API is the bottleneck)."""
        if len(pairs) <= 1:
            return [self.answer(q, s) for q, s in pairs]
        with ThreadPoolExecutor(self.max_workers) as pool:
            return list(pool.map(lambda p: self.answer(*p), pairs))


def make_oracle(name: str, model: str, cache_dir: str | Path, **kwargs):
    """'rule' -> RuleOracle(); 'llm' -> LLMOracle(model), its answers cached in
    cache_dir/oracle_cache.jsonl (fails at once without an API key)."""
    if name == "rule":
        return RuleOracle()
    if name == "llm":
        return LLMOracle(Path(cache_dir) / "oracle_cache.jsonl", model=model, **kwargs)
    raise ValueError(f"unknown oracle {name!r}: choose 'rule' or 'llm'")
