"""Hidden tests of exercise 8 (kept out of the student copy): Zero and Qual. of random turns and
episodes. Each check is held to the value the reference computed (the grader holds them; see
exercise 1's file)."""

import random

from expect import HELD, check

from metrics import elim_quality, is_zero, quality, zero


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


def test_random_turns():
    """100 random turns (some wasted): is_zero, and Qual. of the answered ones."""
    rng = random.Random(11)
    for case in range(100):
        row = random_turn(rng)
        check(bool(is_zero(row)), HELD, f"is_zero of random turn {case}: {row}")
        if not (row["redundant"] or row["invalid"]):
            what = f"elim_quality of random turn {case}: {row}"
            check(float(elim_quality(row)), HELD, what, tol=1e-12)


def test_random_episodes():
    """40 random runs of 1-4 episodes: Zero (NaN without answered turns) and Qual."""
    rng = random.Random(12)
    for case in range(40):
        episodes = [
            [random_turn(rng) for _ in range(rng.randint(1, 6))] for _ in range(rng.randint(1, 4))
        ]
        what = f"random episodes {case}: {episodes}"
        check(float(zero(episodes)), HELD, f"Zero of {what}", tol=1e-12)
        check(float(quality(episodes)), HELD, f"Qual. of {what}", tol=1e-12)
