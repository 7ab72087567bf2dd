"""A chat model behind an OpenAI-compatible API, played as a policy by evaluate.py (api:MODEL).

Paper: section 5.1 "Baselines" (echo-paper.tex line 425): frontier models (GPT-4o, o3-mini, ...)
evaluated zero-shot with the task prompt, and GPT-4o with full ReAct. This client lets evaluate.py
put any served chat model in those rows. It shares the generate_text interface of
policy.py, so evaluate.py's LMPlayer prompts it as it prompts a local model.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor


class SkipPolicy(Exception):
    """A policy that cannot be evaluated (no API key, key refused): its row is skipped."""


class APIModel:
    """An OpenAI-compatible chat model with the generate_text interface of policy.py."""

    def __init__(self, model: str, workers: int = 8):
        key = os.environ.get("OPENAI_API_KEY")
        if not key:
            raise SkipPolicy(
                f"api:{model} skipped: set OPENAI_API_KEY (and OPENAI_BASE_URL for a server "
                "other than api.openai.com) to evaluate API models."
            )
        import openai

        self._openai, self.name, self.workers = openai, model, workers
        # the client backs off on rate limits and 5xx
        self.client = openai.OpenAI(
            api_key=key, base_url=os.environ.get("OPENAI_BASE_URL"), timeout=60, max_retries=4
        )
        self.failures = []  # requests that failed after the client's retries: invalid turns

    def generate_text(
        self, messages_list, greedy=True, temperature=1.0, top_p=1.0, max_new_tokens=64, seed=None
    ):
        o = self._openai

        def one(messages):
            try:
                r = self.client.chat.completions.create(
                    model=self.name,
                    messages=messages,
                    temperature=0.0 if greedy else temperature,
                    top_p=1.0 if greedy else top_p,
                    max_tokens=max_new_tokens,
                    seed=seed,
                )
                return r.choices[0].message.content or ""
            except (o.AuthenticationError, o.PermissionDeniedError, o.NotFoundError) as e:
                raise SkipPolicy(
                    f"api:{self.name} skipped: the endpoint refused it ({e}); check "
                    "OPENAI_API_KEY, OPENAI_BASE_URL and the model name."
                ) from e
            except o.OpenAIError as e:
                self.failures.append(str(e))  # list.append is thread-safe
                return ""

        with ThreadPoolExecutor(self.workers) as pool:
            return list(pool.map(one, messages_list))
