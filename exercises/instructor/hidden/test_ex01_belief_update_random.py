"""Hidden tests of exercise 1 (kept out of the student copy): the belief update on random candidate
sets and facts against a loop over the candidates.

WRONG and RIGHT, at the end, are answers the graded tests must tell apart: each wrong one must
turn exercise 1 to FAIL, each right one (written differently from the reference) must PASS;
tests/test_exercise_answers.py plants them in a built copy."""

import random

from expect import check, check_type

from env import update_belief
from properties import Fact, Predicate

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


def by_loop(candidates, fact, secret):
    if fact is None:
        return candidates, False
    if not fact.holds(secret):
        return candidates, True
    return frozenset(n for n in candidates if fact.holds(n)), False


def test_random_candidate_sets_and_facts_match_a_loop():
    """60 random C_t (each holding the secret), facts (negated or not, true or false of the
    secret, or none): the loop's (C_{t+1}, flag), C_{t+1} a frozenset."""
    rng = random.Random(1)
    for case in range(60):
        n_max = rng.choice([10, 30, 100])
        secret = rng.randint(1, n_max)
        candidates = frozenset(n for n in range(1, n_max + 1) if rng.random() < 0.5) | {secret}
        fact = None if case % 10 == 0 else Fact(rng.choice(PREDICATES), negated=rng.random() < 0.5)
        result = update_belief(candidates, fact, secret, n_max)
        what = f"random case {case}: C = {sorted(candidates)}, secret {secret}, n_max {n_max}, fact {fact}"
        check(result, by_loop(candidates, fact, secret), what)
        check_type(result[0], frozenset, what)


# ---------------------------------------------------------------- answers to tell apart


def update_belief__union(candidates, fact, secret, n_max):
    """Wrong: the union adds back candidates already eliminated."""
    if fact is None:
        return candidates, False
    if not fact.holds(secret):
        return candidates, True
    return candidates | fact.members(n_max), False


def update_belief__applies_a_false_fact(candidates, fact, secret, n_max):
    """Wrong: a fact false of the secret is applied, eliminating the secret."""
    if fact is None:
        return candidates, False
    return candidates & fact.members(n_max), not fact.holds(secret)


def update_belief__unflagged(candidates, fact, secret, n_max):
    """Wrong: a fact false of the secret is refused, but the turn is not flagged."""
    if fact is None or not fact.holds(secret):
        return candidates, False
    return candidates & fact.members(n_max), False


def update_belief__members_only(candidates, fact, secret, n_max):
    """Wrong: the fact's members in 1..n_max, forgetting what C_t had already eliminated."""
    if fact is None:
        return candidates, False
    if not fact.holds(secret):
        return candidates, True
    return fact.members(n_max), False


def update_belief__a_set(candidates, fact, secret, n_max):
    """Wrong: a set, not a frozenset (the game hashes candidate sets)."""
    if fact is None:
        return candidates, False
    if not fact.holds(secret):
        return candidates, True
    return {n for n in candidates if fact.holds(n)}, False


def update_belief__by_holds(candidates, fact, secret, n_max):
    """Right: test each candidate."""
    if fact is None:
        return candidates, False
    if not fact.holds(secret):
        return candidates, True
    return frozenset(n for n in candidates if fact.holds(n)), False


def update_belief__by_members(candidates, fact, secret, n_max):
    """Right: one membership test decides, one intersection updates."""
    members = fact.members(n_max) if fact is not None else None
    consistent = members is None or secret in members
    return (
        candidates.intersection(members) if members is not None and consistent else candidates
    ), not consistent


WRONG = [
    update_belief__union,
    update_belief__applies_a_false_fact,
    update_belief__unflagged,
    update_belief__members_only,
    update_belief__a_set,
]
RIGHT = [update_belief__by_holds, update_belief__by_members]
