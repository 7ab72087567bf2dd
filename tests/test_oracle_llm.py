"""The LLM oracle end to end: the real `openai` client against an OpenAI-compatible HTTP server
that the test runs on 127.0.0.1, with rate limits, server errors, timeouts, a cache and a liar."""

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from env import CSG, GameConfig
from game.grammar import answer_sentence, state
from game.properties import Fact, Predicate
from game.questions import parse_question
from oracle import DEFLECTION, LLMOracle, OracleConfigError


class FakeServer:
    """A chat-completions endpoint. `faults` is consumed one per request: "429", "500", "401",
    "timeout"; when empty it answers, truthfully or (liar=True) with the opposite fact."""

    def __init__(self):
        self.faults, self.liar, self.requests = [], False, 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests += 1
                fault = server.faults.pop(0) if server.faults else None
                if fault == "timeout":
                    time.sleep(1.0)
                    return self._send(200, server.reply(body))
                if fault:
                    return self._send(
                        int(fault), {"error": {"message": f"fault {fault}", "type": "x"}}
                    )
                self._send(200, server.reply(body))

            def _send(self, code, payload):
                data = json.dumps(payload).encode()
                try:
                    self.send_response(code)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_port}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def reply(self, body):
        prompt = body["messages"][1]["content"]
        secret = int(re.search(r"secret number is (\d+)", prompt).group(1))
        question = re.search(r'asked you: "(.*)"', prompt).group(1)
        query = parse_question(question)
        if query is None:
            text = DEFLECTION
        elif not self.liar:
            text = answer_sentence(query, secret)
        else:
            p = query.true_fact(secret).predicate
            lie = (
                Fact(p, not query.true_fact(secret).negated)
                if query.kind == "yesno" or p.test in ("even", "odd")
                else Fact(Predicate(p.quantity, "eq", (p.args[0] + 1,)))
            )
            text = state(lie).capitalize() + "."
        return {
            "id": "c1",
            "object": "chat.completion",
            "created": 0,
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": text},
                }
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }


@pytest.fixture
def server():
    s = FakeServer()
    yield s
    s.httpd.shutdown()


def oracle(server, tmp_path, **kw):
    kw = {"timeout": 0.3, "max_retries": 2, "backoff": 0.01, **kw}
    return LLMOracle(
        base_url=server.url, api_key="test-key", cache_path=tmp_path / "cache.jsonl", **kw
    )


def act(arm, question):
    return json.dumps({"arm": arm, "question": question})


def test_truthful_llm_oracle_plays_a_game_and_the_cache_replays_it(server, tmp_path):
    """Two value questions resolve 42 through the HTTP oracle; a second run is served from disk."""
    o = oracle(server, tmp_path)
    game = CSG([42], GameConfig(), oracle=o)
    game.step([act(3, "What is the last digit?")])
    (r,) = game.step([act(3, "What is the sum of the digits?")])
    assert r.turn_resolved and r.hint == "The sum of the digits is 6." and server.requests == 2
    replay = oracle(server, tmp_path)
    assert replay.answer("What is the last digit?", 42) == "The last digit is 2."
    assert replay.api_calls == 0 and server.requests == 2


def test_rate_limit_and_server_errors_are_retried(server, tmp_path):
    """429 and 500 are transient: retried with backoff until an answer comes."""
    server.faults = ["429", "500"]
    o = oracle(server, tmp_path)
    assert o.answer("Is the number even?", 42) == "Yes, the number is even."
    assert o.api_calls == 3 and o.failures == 0


def test_persistent_failure_deflects_counts_and_is_not_cached(server, tmp_path):
    """After max_retries the oracle deflects (no information) and counts the failure; the next
    call asks the server again instead of replaying the failure."""
    server.faults = ["500"] * 3
    o = oracle(server, tmp_path)
    assert o.answer("Is the number even?", 42) == DEFLECTION
    assert o.failures == 1 and o.api_calls == 3
    assert o.answer("Is the number even?", 42) == "Yes, the number is even." and o.api_calls == 4


def test_timeouts_are_retried_then_deflected(server, tmp_path):
    """A server slower than the client timeout counts as a transient failure."""
    server.faults = ["timeout", "timeout"]
    o = oracle(server, tmp_path, max_retries=1)
    assert (
        o.answer("Is the number prime?", 42) == DEFLECTION and o.failures == 1 and o.api_calls == 2
    )


def test_lying_server_is_caught_as_inconsistent(server, tmp_path):
    """Every wrong hint is refused by the belief update: the secret is never eliminated."""
    server.liar = True
    game = CSG([42, 17, 100], GameConfig(), oracle=oracle(server, tmp_path))
    questions = [
        act(0, "Is the number even?"),
        act(3, "What is the last digit?"),
        act(1, "Is it prime?"),
    ]
    records = game.step(questions)
    assert all(r.inconsistent and r.eliminated == 0 for r in records)
    assert all(e.secret in e.candidates for e in game.episodes)


def test_batched_turn_answers_concurrently_in_order(server, tmp_path):
    """answer_many keeps the order of its questions when it sends them concurrently."""
    o = oracle(server, tmp_path)
    pairs = [("Is the number greater than %d?" % k, 50) for k in range(40, 60)]
    hints = o.answer_many(pairs)
    assert [h.startswith("Yes") for h in hints] == [k < 50 for k in range(40, 60)]


def test_missing_key_is_a_clear_error_before_any_episode(monkeypatch, tmp_path):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(OracleConfigError, match="OPENAI_API_KEY"):
        LLMOracle(cache_path=tmp_path / "c.jsonl")


def test_rejected_key_stops_the_run(server, tmp_path):
    """401 is the user's to fix: it raises instead of deflecting every turn."""
    server.faults = ["401"]
    with pytest.raises(OracleConfigError, match="OPENAI_API_KEY"):
        oracle(server, tmp_path).answer("Is the number even?", 42)
