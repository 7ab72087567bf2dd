"""Exercise 1: the exact belief update C_{t+1} = C_t & {n : fact holds} (Lemma A.5)."""
from env import update_belief
from properties import Fact, Predicate

EVEN = Fact(Predicate("n", "even"))
OVER_6 = Fact(Predicate("n", "gt", (6,)))


def test_a_true_fact_keeps_the_candidates_it_holds_for():
    """C = 1..10, secret 4, "the number is even": {2, 4, 6, 8, 10}, consistent."""
    assert update_belief(frozenset(range(1, 11)), EVEN, 4, 10) == (frozenset({2, 4, 6, 8, 10}), False)


def test_a_negated_fact_keeps_the_others():
    """C = {3, 5, 7, 9}, secret 5, "not greater than 6": {3, 5}."""
    assert update_belief(frozenset({3, 5, 7, 9}), Fact(OVER_6.predicate, negated=True), 5, 10) == (frozenset({3, 5}), False)


def test_the_update_never_adds_a_candidate_already_eliminated():
    """C = {7, 9}, secret 9, "greater than 6": still {7, 9}, never 8 or 10."""
    assert update_belief(frozenset({7, 9}), OVER_6, 9, 10) == (frozenset({7, 9}), False)


def test_a_fact_false_of_the_secret_is_refused_and_flagged():
    """Secret 3 is odd: "even" would eliminate it, so C stays as it was and the turn is inconsistent."""
    candidates = frozenset({1, 2, 3, 4})
    assert update_belief(candidates, EVEN, 3, 10) == (candidates, True)


def test_no_fact_changes_nothing():
    candidates = frozenset({1, 2, 3})
    assert update_belief(candidates, None, 2, 10) == (candidates, False)
