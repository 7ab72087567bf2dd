"""Hidden tests of exercise 1 (kept out of the student copy): the belief update on random candidate
sets and facts. Each check is held to the value the reference computed: the grader holds those
values (exercises/instructor/bundle.py records them), and this file has none."""

import random

from expect import HELD, check

from env import update_belief
from game.properties import Fact, Predicate

PREDICATES = [
    Predicate("n", "even"),
    Predicate("n", "odd"),
    Predicate("n", "prime"),
    Predicate("n", "square"),
    *(Predicate("n", "gt", (k,)) for k in (5, 17, 50)),
    *(Predicate("n", "div", (k,)) for k in (3, 4, 7)),
    Predicate("n", "between", (10, 40)),
    Predicate("digit_sum", "gt", (9,)),
    Predicate("last_digit", "eq", (3,)),
]


def test_random_candidate_sets_and_facts():
    """60 random C_t (each holding the secret, n_max in them half the time), facts negated or
    not, true or false of the secret, or none: (C_{t+1} as a frozenset, the flag as a bool)."""
    rng = random.Random(1)
    for case in range(60):
        n_max = rng.choice([10, 30, 100])
        secret = rng.randint(1, n_max)
        candidates = frozenset(n for n in range(1, n_max + 1) if rng.random() < 0.5) | {secret}
        if case % 2:
            candidates |= {n_max}
        fact = None if case % 10 == 0 else Fact(rng.choice(PREDICATES), negated=rng.random() < 0.5)
        what = f"random case {case}: C = {sorted(candidates)}, secret {secret}, n_max {n_max}, "
        check(update_belief(candidates, fact, secret, n_max), HELD, what + f"fact {fact}")
