"""Exercise 2: the turn reward of App. C "CSG Reward Composition", with the default weights
(redundancy -0.1, invalid -0.1, arm match +0.05, diversity +0.05, resolve +1, efficiency 0.1/turn)."""
import pytest

from env import turn_reward

PARTS = ("r_info", "r_arm_match", "r_diversity", "r_resolve", "r_efficiency", "r_redundancy", "r_invalid")


def check(r, reward, **nonzero):
    assert set(r) == set(PARTS) | {"reward"}
    for part in PARTS:
        assert r[part] == pytest.approx(nonzero.get(part, 0.0)), part
    assert r["reward"] == pytest.approx(reward)


def test_an_informative_new_question_to_the_right_arm():
    """100 -> 25 candidates: r_info = 0.75, plus 0.05 arm match and 0.05 diversity = 0.85."""
    check(turn_reward(100, 25, 0, 10, arm_match=True, novel=True), 0.85, r_info=0.75, r_arm_match=0.05, r_diversity=0.05)


def test_a_question_that_eliminates_nothing_earns_only_its_shaping():
    check(turn_reward(8, 8, 3, 10, novel=True), 0.05, r_diversity=0.05)


def test_resolution_adds_the_bonus_and_the_turns_saved():
    """4 -> 1 at turn 2 (0-based) of 10: 0.75 + 1 + 0.1 x 8 = 2.55."""
    check(turn_reward(4, 1, 2, 10, resolved=True), 2.55, r_info=0.75, r_resolve=1.0, r_efficiency=0.8)


def test_penalties_replace_everything_else():
    """A repeated question or an unreadable action earns its penalty and nothing more."""
    check(turn_reward(10, 5, 1, 10, redundant=True, arm_match=True, novel=True), -0.1, r_redundancy=-0.1)
    check(turn_reward(10, 5, 1, 10, invalid=True, redundant=True), -0.1, r_invalid=-0.1)


def test_the_expected_information_replaces_the_realised_one_when_given():
    check(turn_reward(10, 10, 0, 10, info=0.5), 0.5, r_info=0.5)
