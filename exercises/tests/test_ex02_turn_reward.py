"""Exercise 2: the turn reward of App. C "CSG Reward Composition", with the default weights
(redundancy -0.1, invalid -0.1, arm match +0.05, diversity +0.05, resolve +1, efficiency 0.1/turn)
and with others.

Wrong answers these tests tell apart: a penalised turn that also earns information or bonuses;
r_info relative to |C_{t+1}|; the efficiency bonus off by one turn; `info` ignored, or an `info` of
0 taken for none; a component left out of the sum; a weight written as a number instead of read
from `w`."""

from expect import check

from env import RewardWeights, turn_reward

PARTS = (
    "r_info",
    "r_arm_match",
    "r_diversity",
    "r_resolve",
    "r_efficiency",
    "r_redundancy",
    "r_invalid",
)


def check_reward(r, case, reward, **nonzero):
    """r has every component (the ones not named are 0) and their sum under 'reward'."""
    check(sorted(r), sorted(PARTS + ("reward",)), f"{case}: the keys of the dict")
    check(
        {part: round(float(r[part]), 9) for part in PARTS},
        {part: nonzero.get(part, 0.0) for part in PARTS},
        f"{case}: the components",
    )
    check(float(r["reward"]), reward, f"{case}: the reward")


def test_an_informative_new_question_to_the_right_arm():
    """100 -> 25 candidates: r_info = 0.75, plus 0.05 arm match and 0.05 diversity = 0.85."""
    check_reward(
        turn_reward(100, 25, 0, 10, arm_match=True, novel=True),
        "100 -> 25 candidates, right arm, new question",
        0.85,
        r_info=0.75,
        r_arm_match=0.05,
        r_diversity=0.05,
    )


def test_a_question_that_eliminates_nothing_earns_only_its_shaping():
    """8 -> 8 candidates, a new question: only the diversity bonus."""
    check_reward(
        turn_reward(8, 8, 3, 10, novel=True),
        "8 -> 8 candidates at turn 3, a new question",
        0.05,
        r_diversity=0.05,
    )


def test_resolution_adds_the_bonus_and_the_turns_saved():
    """4 -> 1 at turn 2 (0-based) of 10: 0.75 + 1 + 0.1 x (10 - 2) = 2.55; at turn 0, 0.1 x 10."""
    check_reward(
        turn_reward(4, 1, 2, 10, resolved=True),
        "4 -> 1 candidates, resolved at turn 2 (0-based) of 10",
        2.55,
        r_info=0.75,
        r_resolve=1.0,
        r_efficiency=0.8,
    )
    check_reward(
        turn_reward(2, 1, 0, 10, resolved=True),
        "2 -> 1 candidates, resolved at turn 0 of 10",
        2.5,
        r_info=0.5,
        r_resolve=1.0,
        r_efficiency=1.0,
    )


def test_penalties_replace_everything_else():
    """A repeated question or an unreadable action earns its penalty and nothing more."""
    check_reward(
        turn_reward(10, 5, 1, 10, redundant=True, arm_match=True, novel=True),
        "a redundant question (10 -> 5, right arm, new)",
        -0.1,
        r_redundancy=-0.1,
    )
    check_reward(
        turn_reward(10, 5, 1, 10, invalid=True, redundant=True),
        "an invalid action, also redundant",
        -0.1,
        r_invalid=-0.1,
    )


def test_the_expected_information_replaces_the_realised_one_when_given():
    """info = 0.5 on a turn that eliminated nothing: r_info is 0.5."""
    check_reward(
        turn_reward(10, 10, 0, 10, info=0.5), "10 -> 10 candidates with info = 0.5", 0.5, r_info=0.5
    )


def test_an_expected_information_of_zero_is_given_not_absent():
    """info = 0.0 on a turn that halved C_t: r_info is 0.0, not the realised 0.5 (only None means
    that no expectation was given)."""
    check_reward(
        turn_reward(10, 5, 0, 10, info=0.0), "10 -> 5 candidates with info = 0.0", 0.0, r_info=0.0
    )


def test_every_weight_is_read_from_w():
    """Other weights, other reward: a resolving turn to the right arm with w = (redundancy -1,
    invalid -2, arm match 0.3, diversity 0.2, resolve 5, efficiency 0.5 per turn): 10 -> 1 at
    turn 6 of 8 is 0.9 + 0.3 + 0.2 + 5 + 0.5 x 2 = 7.4."""
    w = RewardWeights(
        redundancy_penalty=-1.0,
        invalid_penalty=-2.0,
        arm_match_bonus=0.3,
        diversity_bonus=0.2,
        resolve_bonus=5.0,
        efficiency_weight=0.5,
    )
    check_reward(
        turn_reward(10, 1, 6, 8, arm_match=True, novel=True, resolved=True, w=w),
        "10 -> 1, resolved at turn 6 of 8, right arm, new question, other weights",
        7.4,
        r_info=0.9,
        r_arm_match=0.3,
        r_diversity=0.2,
        r_resolve=5.0,
        r_efficiency=1.0,
    )
    check_reward(
        turn_reward(10, 1, 6, 8, redundant=True, w=w),
        "a redundant question, other weights",
        -1.0,
        r_redundancy=-1.0,
    )
    check_reward(
        turn_reward(10, 1, 6, 8, invalid=True, w=w),
        "an invalid action, other weights",
        -2.0,
        r_invalid=-2.0,
    )
