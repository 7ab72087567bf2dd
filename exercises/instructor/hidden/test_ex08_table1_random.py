"""Hidden tests of exercise 8 (kept out of the student copy): Zero and Qual. on random episodes
against loops over the turns.

WRONG and RIGHT, at the end, are answers the graded tests must tell apart (see exercise 1's file).
A right answer gives all four functions; a wrong one replaces one of them in RIGHT[0]."""

import math
import random

from expect import check

from metrics import elim_quality, is_zero, quality, zero


def loop_quality_of(row):
    return min(row["eliminated"] / max(row["candidates_before"] / 2, 1), 1.0)


def loop_rates(episodes):
    answered = [row for ep in episodes for row in ep if not (row["redundant"] or row["invalid"])]
    every = [row for ep in episodes for row in ep]
    zero_rate = (
        sum(row["eliminated"] == 0 for row in answered) / len(answered) if answered else math.nan
    )
    qual = sum(
        0.0 if row["redundant"] or row["invalid"] else loop_quality_of(row) for row in every
    ) / len(every)
    return zero_rate, qual


def random_turn(rng):
    before = rng.randint(1, 100)
    wasted = rng.random() < 0.3
    return {
        "candidates_before": before,
        "eliminated": 0 if wasted or rng.random() < 0.3 else rng.randint(0, before - 1),
        "redundant": wasted and rng.random() < 0.5,
        "invalid": wasted and rng.random() < 0.5,
        "turn": 0,
    }


def test_random_turns_match_a_loop():
    """100 random turns (some wasted): is_zero, and Qual. of the answered ones, as the loop
    computes them."""
    rng = random.Random(11)
    for case in range(100):
        row = random_turn(rng)
        wasted = row["redundant"] or row["invalid"]
        check(
            bool(is_zero(row)),
            not wasted and row["eliminated"] == 0,
            f"is_zero of random turn {case}: {row}",
        )
        if not wasted:
            check(
                float(elim_quality(row)),
                loop_quality_of(row),
                f"elim_quality of random turn {case}: {row}",
                tol=1e-12,
            )


def test_random_episodes_match_a_loop():
    """40 random runs of 1-4 episodes: Zero (NaN without answered turns) and Qual. as the loop
    computes them."""
    rng = random.Random(12)
    for case in range(40):
        episodes = [
            [random_turn(rng) for _ in range(rng.randint(1, 6))] for _ in range(rng.randint(1, 4))
        ]
        zero_rate, qual = loop_rates(episodes)
        check(
            float(zero(episodes)),
            zero_rate,
            f"Zero of random episodes {case}: {episodes}",
            tol=1e-12,
        )
        check(
            float(quality(episodes)),
            qual,
            f"Qual. of random episodes {case}: {episodes}",
            tol=1e-12,
        )


# ---------------------------------------------------------------- answers to tell apart
# Each is planted in metrics.py, so it may use only what metrics.py defines.


def elim_quality__uncapped(row):
    """Wrong: no cap at 1."""
    return row["eliminated"] / max(row["candidates_before"] / 2, 1)


def elim_quality__fraction_of_all(row):
    """Wrong: relative to |C_t| instead of a halving."""
    return min(row["eliminated"] / row["candidates_before"], 1.0)


def is_zero__wasted_too(row):
    """Wrong: a wasted turn that eliminated nothing counts as a zero turn."""
    return row["eliminated"] == 0


def zero__over_every_turn(episodes):
    """Wrong: wasted turns in Zero's denominator."""
    return _mean(is_zero(r) for r in _turns(episodes))


def zero__zero_when_empty(episodes):
    """Wrong: 0 instead of NaN when no turn was answered."""
    answered = [r for r in _turns(episodes) if not is_wasted(r)]
    return sum(is_zero(r) for r in answered) / len(answered) if answered else 0.0


def quality__answered_only(episodes):
    """Wrong: wasted turns left out of Qual.'s mean."""
    return _mean(elim_quality(r) for r in _turns(episodes) if not is_wasted(r))


def elim_quality__by_cases(row):
    """Right: an exact halving or better scores 1; less scores its share of a halving."""
    halving = max(row["candidates_before"] / 2, 1)
    return 1.0 if row["eliminated"] >= halving else row["eliminated"] / halving


def is_zero__answered_and_nothing_removed(row):
    """Right."""
    return not (row["redundant"] or row["invalid"]) and not row["eliminated"]


def zero__counted(episodes):
    """Right: two counters."""
    answered = zeros = 0
    for episode in episodes:
        for row in episode:
            if not is_wasted(row):
                answered += 1
                zeros += is_zero(row)
    return zeros / answered if answered else float("nan")


def quality__numpy(episodes):
    """Right: numpy's mean."""
    return float(np.mean([elim_quality(r) for ep in episodes for r in ep]))


def elim_quality__clipped(row):
    """Right: numpy's clip."""
    return float(np.clip(row["eliminated"] / max(row["candidates_before"] / 2, 1), 0, 1))


def is_zero__not_wasted(row):
    """Right: the definition, with is_wasted."""
    return row["eliminated"] == 0 and not is_wasted(row)


def zero__filtered_mean(episodes):
    """Right: the mean of a filtered list."""
    flags = [is_zero(row) for ep in episodes for row in ep if not is_wasted(row)]
    return sum(flags) / len(flags) if flags else math.nan


def quality__summed(episodes):
    """Right: a sum over the turns divided by their number."""
    rows = _turns(episodes)
    return sum(elim_quality(r) for r in rows) / len(rows) if rows else NAN


WRONG = [
    elim_quality__uncapped,
    elim_quality__fraction_of_all,
    is_zero__wasted_too,
    zero__over_every_turn,
    zero__zero_when_empty,
    quality__answered_only,
]
RIGHT = [
    (elim_quality__by_cases, is_zero__answered_and_nothing_removed, zero__counted, quality__numpy),
    (elim_quality__clipped, is_zero__not_wasted, zero__filtered_mean, quality__summed),
]
