"""Exercise 1: the exact belief update C_{t+1} = C_t & {n : fact holds} (Lemma A.5).

Wrong answers these tests tell apart: the union instead of the intersection; a fact false of
the secret applied anyway, or refused without flagging the turn; the fact's members without
C_t; a negated fact's complement taken over 1..n_max - 1 (n_max kept); a `set` or a list (the game
hashes candidate sets, so either crashes train.py)."""

from expect import check

from env import update_belief
from game.properties import Fact, Predicate

EVEN = Fact(Predicate("n", "even"))
OVER_6 = Fact(Predicate("n", "gt", (6,)))


def test_a_true_fact_keeps_the_candidates_it_holds_for():
    """The paper's example: C = 1..10, secret 4, "the number is even": {2, 4, 6, 8, 10},
    consistent."""
    check(
        update_belief(frozenset(range(1, 11)), EVEN, 4, 10),
        (frozenset({2, 4, 6, 8, 10}), False),
        'C = 1..10, secret 4, the hint "the number is even"',
    )


def test_the_result_is_a_frozenset_and_a_bool():
    """C_t is a frozenset everywhere in the game (it is hashed), and the flag is a bool: a set, a
    list or a 0 fails, and the message says the type differs."""
    check(
        update_belief(frozenset(range(1, 11)), EVEN, 4, 10),
        (frozenset({2, 4, 6, 8, 10}), False),
        'the types of (C_{t+1}, inconsistent) for C = 1..10, secret 4, "even"',
    )


def test_a_negated_fact_keeps_the_others():
    """C = {3, 5, 7, 9}, secret 5, "not greater than 6": {3, 5}; the numbers 1, 2, 4, 6 were
    eliminated before and stay out."""
    check(
        update_belief(frozenset({3, 5, 7, 9}), Fact(OVER_6.predicate, negated=True), 5, 10),
        (frozenset({3, 5}), False),
        'C = {3, 5, 7, 9}, secret 5, the hint "not greater than 6"',
    )


def test_a_negated_fact_removes_n_max_too():
    """C = 1..10, secret 3, "not even": {1, 3, 5, 7, 9}; 10 is even, so it goes, as every other
    number of 1..n_max the fact is false of."""
    check(
        update_belief(frozenset(range(1, 11)), Fact(EVEN.predicate, negated=True), 3, 10),
        (frozenset({1, 3, 5, 7, 9}), False),
        'C = 1..10 (n_max 10), secret 3, the hint "not even"',
    )


def test_the_update_never_adds_a_candidate_already_eliminated():
    """C = {7, 9}, secret 9, "greater than 6": still {7, 9}, never 8 or 10."""
    check(
        update_belief(frozenset({7, 9}), OVER_6, 9, 10),
        (frozenset({7, 9}), False),
        'C = {7, 9}, secret 9, the hint "greater than 6"',
    )


def test_a_fact_false_of_the_secret_is_refused_and_flagged():
    """Secret 3 is odd: "even" would eliminate it, so C stays as it was and the turn is
    inconsistent."""
    candidates = frozenset({1, 2, 3, 4})
    check(
        update_belief(candidates, EVEN, 3, 10),
        (candidates, True),
        'C = {1, 2, 3, 4}, secret 3, the false hint "even"',
    )


def test_no_fact_changes_nothing():
    """A turn without a hint (the oracle deflected) leaves C_t as it was, consistent."""
    candidates = frozenset({1, 2, 3})
    check(
        update_belief(candidates, None, 2, 10),
        (candidates, False),
        "C = {1, 2, 3}, secret 2, no hint",
    )
