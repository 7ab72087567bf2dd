"""Exercise 1's answers to tell apart, planted as env.update_belief: WRONG, likely mistakes that
must turn the exercise to FAIL, and RIGHT, two correct answers written differently from the
reference that must PASS (exercises/instructor/answers/__init__.py plants them). An answer may
use only what the module it is planted in defines; the imports name those."""


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


def update_belief__complement_keeps_n_max(candidates, fact, secret, n_max):
    """Wrong: a negated fact removes the numbers its predicate holds for, counted in 1..n_max - 1,
    so n_max stays whatever the fact says."""
    if fact is None:
        return candidates, False
    if not fact.holds(secret):
        return candidates, True
    if fact.negated:
        return candidates - {n for n in range(1, n_max) if fact.predicate.holds(n)}, False
    return candidates & fact.members(n_max), False


def update_belief__a_list(candidates, fact, secret, n_max):
    """Wrong: a sorted list, not a frozenset."""
    if fact is None:
        return candidates, False
    if not fact.holds(secret):
        return candidates, True
    return sorted(candidates & fact.members(n_max)), False


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
    update_belief__complement_keeps_n_max,
    update_belief__a_list,
]
RIGHT = [update_belief__by_holds, update_belief__by_members]
