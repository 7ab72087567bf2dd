"""Hidden tests of exercise 2 (kept out of the student copy): the turn reward on random turns and
weights, each held to the value the reference computed (the grader holds them; see exercise 1's
file)."""

import random

from expect import HELD, check

from env import REWARD, RewardWeights, turn_reward


def test_random_turns_and_weights():
    """80 random turns (counts, turn, flags, info of None, 0 or a fraction) under the default and
    random weights: every component and the sum."""
    rng = random.Random(2)
    for case in range(80):
        max_turns = rng.randint(2, 12)
        n_before = rng.randint(1, 100)
        resolved = rng.random() < 0.3
        n_after = 1 if resolved else rng.randint(1, n_before)
        flags = dict(
            redundant=rng.random() < 0.2,
            invalid=rng.random() < 0.15,
            arm_match=rng.random() < 0.5,
            novel=rng.random() < 0.5,
            resolved=resolved,
            info=rng.choice([None, None, 0.0, round(rng.random(), 3)]),
        )
        w = REWARD if case % 2 else RewardWeights(*(round(rng.uniform(-2, 2), 2) for _ in range(6)))
        turn = rng.randint(0, max_turns - 1)
        r = turn_reward(n_before, n_after, turn, max_turns, w=w, **flags)
        what = f"random turn {case}: {n_before} -> {n_after} candidates, turn {turn} of "
        what += f"{max_turns}, {flags}, {w}"
        check({k: float(v) for k, v in r.items()}, HELD, what)
