"""Exercise 8: Table 1's Zero (answered turns that eliminated nothing) and Qual. (elimination
relative to an exact halving, capped at 1; wasted turns count 0 in the mean)."""
import math

import pytest

from metrics import elim_quality, is_zero, quality, zero


def turn(before, eliminated, redundant=False, invalid=False):
    return {"candidates_before": before, "eliminated": eliminated, "redundant": redundant, "invalid": invalid}


def test_qual_of_one_turn():
    assert elim_quality(turn(100, 50)) == 1.0           # an exact halving
    assert elim_quality(turn(100, 80)) == 1.0           # better than a halving: capped
    assert elim_quality(turn(100, 25)) == 0.5
    assert elim_quality(turn(1, 1)) == 1.0              # max(|C| / 2, 1) = 1
    assert elim_quality(turn(3, 1)) == pytest.approx(1 / 1.5)


def test_zero_of_one_turn():
    assert is_zero(turn(10, 0)) and not is_zero(turn(10, 3))
    assert not is_zero(turn(10, 0, redundant=True)) and not is_zero(turn(10, 0, invalid=True))


def test_rates_over_episodes():
    """Episode 1: halving, zero, redundant; episode 2: zero, a quarter. Zero: 2 of the 4 answered
    turns. Qual.: (1 + 0 + 0 + 0 + 0.5) / 5 over all turns."""
    episodes = [[turn(100, 50), turn(50, 0), turn(50, 0, redundant=True)], [turn(100, 0), turn(100, 25)]]
    assert zero(episodes) == pytest.approx(0.5)
    assert quality(episodes) == pytest.approx(1.5 / 5)


def test_zero_without_answered_turns_is_nan():
    assert math.isnan(zero([[turn(10, 0, invalid=True)]]))
