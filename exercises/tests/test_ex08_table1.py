"""Exercise 8: Table 1's Zero (answered turns that eliminated nothing) and Qual. (elimination
relative to an exact halving, capped at 1; wasted turns count 0 in the mean).

Wrong answers these tests tell apart: Qual. without the cap, or relative to |C_t| instead of a
halving; a wasted (redundant or invalid) turn counted as a zero turn, or in Zero's denominator;
wasted turns left out of Qual.'s mean; 0 instead of NaN for Zero when no turn was answered, or NaN
instead of 0 for Qual. then (a wasted turn counts 0 in Qual.'s mean)."""

import math

from expect import check

from metrics import elim_quality, is_zero, quality, zero


def turn(before, eliminated, redundant=False, invalid=False):
    return {
        "candidates_before": before,
        "eliminated": eliminated,
        "redundant": redundant,
        "invalid": invalid,
    }


def test_qual_of_one_turn():
    """Against a halving of |C_t|: 50 of 100 is 1, 80 of 100 is capped at 1, 25 of 100 is 0.5,
    1 of 3 is 1 / 1.5; with |C_t| = 1, a halving is at least 1 number."""
    for before, eliminated, expected in (
        (100, 50, 1.0),
        (100, 80, 1.0),
        (100, 25, 0.5),
        (3, 1, 1 / 1.5),
        (1, 1, 1.0),
    ):
        check(
            float(elim_quality(turn(before, eliminated))),
            expected,
            f"Qual. of a turn that eliminated {eliminated} of {before}",
        )


def test_zero_of_one_turn():
    """An answered turn that eliminated nothing is a zero turn; one that eliminated something,
    however little, is not; a redundant or invalid turn is wasted, not zero."""
    for row, expected, what in (
        (turn(10, 0), True, "an answered turn that eliminated 0 of 10"),
        (turn(10, 3), False, "an answered turn that eliminated 3 of 10"),
        (turn(10, 1), False, "an answered turn that eliminated 1 of 10"),
        (turn(10, 0, redundant=True), False, "a redundant turn (0 eliminated)"),
        (turn(10, 0, invalid=True), False, "an invalid turn (0 eliminated)"),
    ):
        check(bool(is_zero(row)), expected, f"is_zero of {what}")


def test_rates_over_episodes():
    """Episode 1: halving, zero, redundant; episode 2: zero, a quarter. Zero: 2 of the 4 answered
    turns. Qual.: (1 + 0 + 0 + 0 + 0.5) / 5 over all turns."""
    episodes = [
        [turn(100, 50), turn(50, 0), turn(50, 0, redundant=True)],
        [turn(100, 0), turn(100, 25)],
    ]
    case = "episodes [halving, zero, redundant] and [zero, a quarter of 100]"
    check(float(zero(episodes)), 0.5, f"Zero of {case}")
    check(float(quality(episodes)), 1.5 / 5, f"Qual. of {case}")


def test_without_answered_turns_zero_is_nan_and_qual_is_zero():
    """Zero's denominator is the answered turns: with none, the rate is undefined (NaN), not 0.
    Qual.'s is every turn, and a wasted turn counts 0: so Qual. is 0, not NaN."""
    episodes = [[turn(10, 0, invalid=True), turn(10, 0, redundant=True)]]
    case = "one episode of an invalid and a redundant turn"
    check(float(zero(episodes)), math.nan, f"Zero of {case}")
    check(float(quality(episodes)), 0.0, f"Qual. of {case}")
