"""What the selector reads and how its answer is read (App. B): the selector prompt of the
figure "Prompts used in the CSG" (A), with the belief C_t and each arm's history h_t, and the
JSON action {"arm": k, "question": "..."} read from the policy's text. env.CSG builds each
turn's prompt and reads each action here.

Departures from the paper's prompt, and why:
- `candidate_text`: beside the paper's list of every candidate ("list"), C_t can be written as
  runs FIRST-LAST ("runs", the tiny model's default), so that a prompt's length follows the
  belief's shape and not the width of the universe; "padded" writes those runs in three digits.
- `selector_prompt(hidden=True)` (a share of training episodes, off by default) leaves C_t out.
- On the binary question set (not in the paper) the prompt adds one line, "Only yes-or-no
  questions are answered.": App. B's prompt invites value questions the set never answers.
- `prompt_layout` "system" (off by default; train.py's llm-cpu preset) moves App. B's
  instructions to the system turn, before the turn's state: every prompt then opens with them,
  and they run once per forward pass instead of once per turn (`selector_messages`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

SYSTEM_PROMPT = "You are a helpful assistant. Follow instructions exactly."
CANDIDATE_FORMATS = ("list", "runs", "padded")
PROMPT_LAYOUTS = ("paper", "system")


def candidate_text(candidates, candidate_format: str = "list") -> str:
    """C_t as the prompt writes it. "list": every number, as App. B's prompt does. "runs": a run of
    three or more consecutive numbers as FIRST-LAST (1..200 is "1-200"), so the prompt's length
    follows the belief's shape, not the width of the universe: the paper's model reads a list of
    200 numbers, but a model trained from scratch on 1..100 has never attended over one that long.
    "padded": those runs, every number in three digits (007), so that 101..200 are written like the
    001..100 a model trained on 1..100 has read, not as a word longer than any it has seen."""
    numbers = sorted(candidates)
    if candidate_format == "list":
        return ", ".join(map(str, numbers))
    write = (lambda n: f"{n:03d}") if candidate_format == "padded" else str
    parts, start = [], 0
    for end in range(len(numbers)):  # a run closes where the next number is not end + 1
        if end + 1 == len(numbers) or numbers[end + 1] != numbers[end] + 1:
            run = numbers[start : end + 1]
            parts += (
                [f"{write(run[0])}-{write(run[-1])}"] if len(run) >= 3 else [write(n) for n in run]
            )
            start = end + 1
    return ", ".join(parts)


def selector_prompt(candidates, arm_histories, turn: int, game_cfg, hidden: bool = False) -> str:
    """The selector prompt of App. B (A): the belief (candidate list) and per-arm histories, for
    the game settings `game_cfg` (env.GameConfig). With `hidden` (not in the paper; a share of
    training episodes, episodes.episode_starts) the prompt does not show C_t: the belief is then
    only in the history, and the next question must be read from what was answered."""
    opening, closing = instructions(game_cfg)
    state = state_lines(candidates, arm_histories, turn, game_cfg, hidden)
    return "\n".join(opening + [""] + state + [""] + closing)


def instructions(game_cfg) -> tuple[list[str], list[str]]:
    """The lines of App. B's prompt that are the same in every turn of every episode: those
    before the turn's state and those after it."""
    opening = [
        "You are solving a number guessing game.",
        "A secret number has been chosen from the current candidate universe.",
        f"You have {game_cfg.n_arms} clue-holder arms. "
        "Choose one arm and ask one property question.",
    ]
    closing = [
        "Good questions ask about specific properties that split the candidates:",
        "  parity, primality, divisibility, digit sum, last digit, range, perfect square.",
        "",
        "Do NOT repeat a question already asked to any arm.",
    ]
    if game_cfg.question_set == "binary":
        closing.append("Only yes-or-no questions are answered.")
    closing += [
        "Select an arm-question pair that is most informative for the current candidates.",
        "",
        "Respond with JSON only:",
        f'  {{"arm": <0 to {game_cfg.n_arms - 1}>, "question": "<precise property question>"}}',
    ]
    return opening, closing


def state_lines(candidates, arm_histories, turn: int, game_cfg, hidden: bool) -> list[str]:
    """The lines of App. B's prompt that are the turn's own: the turn, the belief C_t (or "not
    shown", `hidden`) and each arm's questions and answers so far."""
    shown = (
        "not shown"
        if hidden
        else f"({len(candidates)}): [{candidate_text(candidates, game_cfg.candidate_format)}]"
    )
    lines = [
        f"Turn {turn + 1} of {game_cfg.max_turns}",
        f"Remaining candidates {shown}",
        "",
        "Arm histories:",
    ]
    for arm, history in enumerate(arm_histories):
        if not history:
            lines.append(f"  Arm {arm}: not yet queried")
            continue
        lines.append(f"  Arm {arm} (queried {len(history)}x):")
        for question, hint in history:
            lines += [f"    Q: {question}", f"    A: {hint}"]
    return lines


def selector_messages(candidates, arm_histories, turn: int, game_cfg, hidden=False) -> list[dict]:
    """The chat of one turn. prompt_layout "paper": App. B's system prompt, then its selector
    prompt as the user's turn. "system" (not in the paper): App. B's instructions, the same in
    every turn, in the system turn, and the turn's state alone in the user's, so that every
    prompt of a batch opens with the same tokens (policy.LMPolicy.prefill runs them once)."""
    if game_cfg.prompt_layout == "system":
        opening, closing = instructions(game_cfg)
        state = state_lines(candidates, arm_histories, turn, game_cfg, hidden)
        return [
            {"role": "system", "content": "\n".join([SYSTEM_PROMPT, "", *opening, "", *closing])},
            {"role": "user", "content": "\n".join(state)},
        ]
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {
            "role": "user",
            "content": selector_prompt(candidates, arm_histories, turn, game_cfg, hidden),
        },
    ]


@dataclass(frozen=True)
class Action:
    arm: int
    question: str
    completion: str  # the JSON text the action was read from


_DECODER = json.JSONDecoder()


def first_json_object(text: str, required=("arm", "question")) -> tuple[dict, int, int] | None:
    """(object, start, end) of the first decodable JSON object in text holding every key in
    `required`, wherever it is (code fences, prose around it); None if there is none."""
    start = text.find("{")
    while start != -1:
        try:
            obj, end = _DECODER.raw_decode(text, start)
            if isinstance(obj, dict) and all(k in obj for k in required):
                return obj, start, end
        except ValueError:
            pass
        start = text.find("{", start + 1)
    return None


def read_action(text: str, n_arms: int) -> tuple[Action | None, str]:
    """(Action, "") from the first JSON object with "arm" and "question"; (None, reason) when
    there is none or its arm or question is unusable."""
    found = first_json_object(text) if isinstance(text, str) else None
    if found is None:
        return None, "no_json" if isinstance(text, str) else "no_text"
    obj, start, end = found
    arm, question = obj["arm"], obj["question"]
    if isinstance(arm, str) and arm.strip().isdigit():
        arm = int(arm.strip())
    if isinstance(arm, float) and arm.is_integer():
        arm = int(arm)
    if isinstance(arm, bool) or not isinstance(arm, int):
        return None, "bad_arm"
    if not 0 <= arm < n_arms:
        return None, "arm_out_of_range"
    if not isinstance(question, str) or not question.strip():
        return None, "no_question"
    return Action(arm, question.strip(), text[start:end]), ""
