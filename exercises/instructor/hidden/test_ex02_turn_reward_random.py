"""Hidden tests of exercise 2 (kept out of the student copy): the turn reward on random turns and
weights against a plain reading of App. C "CSG Reward Composition".

WRONG and RIGHT, at the end, are answers the graded tests must tell apart (see exercise 1's file)."""

import random

from expect import check

from env import REWARD, RewardWeights, turn_reward

PARTS = (
    "r_info",
    "r_arm_match",
    "r_diversity",
    "r_resolve",
    "r_efficiency",
    "r_redundancy",
    "r_invalid",
)


def by_reading(
    n_before, n_after, turn, max_turns, redundant, invalid, arm_match, novel, resolved, info, w
):
    r = dict.fromkeys(PARTS, 0.0)
    if invalid:
        r["r_invalid"] = w.invalid_penalty
    elif redundant:
        r["r_redundancy"] = w.redundancy_penalty
    else:
        r["r_info"] = float(info) if info is not None else (n_before - n_after) / n_before
        if arm_match:
            r["r_arm_match"] = w.arm_match_bonus
        if novel:
            r["r_diversity"] = w.diversity_bonus
        if resolved:
            r["r_resolve"] = w.resolve_bonus
            r["r_efficiency"] = w.efficiency_weight * (max_turns - turn)
    r["reward"] = sum(r.values())
    return r


def test_random_turns_and_weights_match_a_reading_of_app_c():
    """80 random turns (counts, turn, flags, info) under the default and random weights: every
    component and the sum."""
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
            info=rng.choice([None, None, round(rng.random(), 3)]),
        )
        w = REWARD if case % 2 else RewardWeights(*(round(rng.uniform(-2, 2), 2) for _ in range(6)))
        turn = rng.randint(0, max_turns - 1)
        r = turn_reward(n_before, n_after, turn, max_turns, w=w, **flags)
        expected = by_reading(n_before, n_after, turn, max_turns, w=w, **flags)
        what = f"random turn {case}: {n_before} -> {n_after} candidates, turn {turn} of {max_turns}, {flags}, {w}"
        check(sorted(r), sorted(expected), f"{what}: the keys")
        check(
            {k: round(float(v), 9) for k, v in r.items()},
            {k: round(v, 9) for k, v in expected.items()},
            what,
        )


# ---------------------------------------------------------------- answers to tell apart
# Each is planted as env.turn_reward, so it may use only what env.py defines.


def turn_reward__penalty_added(
    n_before,
    n_after,
    turn,
    max_turns,
    *,
    redundant=False,
    invalid=False,
    arm_match=False,
    novel=False,
    resolved=False,
    info=None,
    w=REWARD,
):
    """Wrong: a penalised turn still earns its information and bonuses."""
    r = dict(
        r_info=(n_before - n_after) / n_before if info is None else float(info),
        r_arm_match=w.arm_match_bonus if arm_match else 0.0,
        r_diversity=w.diversity_bonus if novel else 0.0,
        r_resolve=w.resolve_bonus if resolved else 0.0,
        r_efficiency=w.efficiency_weight * (max_turns - turn) if resolved else 0.0,
        r_redundancy=w.redundancy_penalty if redundant and not invalid else 0.0,
        r_invalid=w.invalid_penalty if invalid else 0.0,
    )
    r["reward"] = sum(r.values())
    return r


def turn_reward__info_over_after(
    n_before,
    n_after,
    turn,
    max_turns,
    *,
    redundant=False,
    invalid=False,
    arm_match=False,
    novel=False,
    resolved=False,
    info=None,
    w=REWARD,
):
    """Wrong: r_info relative to |C_{t+1}|."""
    r = dict(
        r_info=0.0,
        r_arm_match=0.0,
        r_diversity=0.0,
        r_resolve=0.0,
        r_efficiency=0.0,
        r_redundancy=0.0,
        r_invalid=0.0,
    )
    if invalid:
        r["r_invalid"] = w.invalid_penalty
    elif redundant:
        r["r_redundancy"] = w.redundancy_penalty
    else:
        r["r_info"] = (n_before - n_after) / n_after if info is None else float(info)
        r["r_arm_match"] = w.arm_match_bonus if arm_match else 0.0
        r["r_diversity"] = w.diversity_bonus if novel else 0.0
        if resolved:
            r["r_resolve"] = w.resolve_bonus
            r["r_efficiency"] = w.efficiency_weight * (max_turns - turn)
    r["reward"] = sum(r.values())
    return r


def turn_reward__efficiency_off_by_one(
    n_before,
    n_after,
    turn,
    max_turns,
    *,
    redundant=False,
    invalid=False,
    arm_match=False,
    novel=False,
    resolved=False,
    info=None,
    w=REWARD,
):
    """Wrong: the turns saved counted from a 1-based turn."""
    r = dict(
        r_info=0.0,
        r_arm_match=0.0,
        r_diversity=0.0,
        r_resolve=0.0,
        r_efficiency=0.0,
        r_redundancy=0.0,
        r_invalid=0.0,
    )
    if invalid:
        r["r_invalid"] = w.invalid_penalty
    elif redundant:
        r["r_redundancy"] = w.redundancy_penalty
    else:
        r["r_info"] = (n_before - n_after) / n_before if info is None else float(info)
        r["r_arm_match"] = w.arm_match_bonus if arm_match else 0.0
        r["r_diversity"] = w.diversity_bonus if novel else 0.0
        if resolved:
            r["r_resolve"] = w.resolve_bonus
            r["r_efficiency"] = w.efficiency_weight * (max_turns - turn - 1)
    r["reward"] = sum(r.values())
    return r


def turn_reward__info_ignored(
    n_before,
    n_after,
    turn,
    max_turns,
    *,
    redundant=False,
    invalid=False,
    arm_match=False,
    novel=False,
    resolved=False,
    info=None,
    w=REWARD,
):
    """Wrong: `info` ignored; always the realised elimination."""
    r = dict(
        r_info=0.0,
        r_arm_match=0.0,
        r_diversity=0.0,
        r_resolve=0.0,
        r_efficiency=0.0,
        r_redundancy=0.0,
        r_invalid=0.0,
    )
    if invalid:
        r["r_invalid"] = w.invalid_penalty
    elif redundant:
        r["r_redundancy"] = w.redundancy_penalty
    else:
        r["r_info"] = (n_before - n_after) / n_before
        r["r_arm_match"] = w.arm_match_bonus if arm_match else 0.0
        r["r_diversity"] = w.diversity_bonus if novel else 0.0
        if resolved:
            r["r_resolve"] = w.resolve_bonus
            r["r_efficiency"] = w.efficiency_weight * (max_turns - turn)
    r["reward"] = sum(r.values())
    return r


def turn_reward__constant_weights(
    n_before,
    n_after,
    turn,
    max_turns,
    *,
    redundant=False,
    invalid=False,
    arm_match=False,
    novel=False,
    resolved=False,
    info=None,
    w=REWARD,
):
    """Wrong: the paper's numbers written in, whatever `w` says."""
    r = dict(
        r_info=0.0,
        r_arm_match=0.0,
        r_diversity=0.0,
        r_resolve=0.0,
        r_efficiency=0.0,
        r_redundancy=0.0,
        r_invalid=0.0,
    )
    if invalid:
        r["r_invalid"] = -0.1
    elif redundant:
        r["r_redundancy"] = -0.1
    else:
        r["r_info"] = (n_before - n_after) / n_before if info is None else float(info)
        r["r_arm_match"] = 0.05 if arm_match else 0.0
        r["r_diversity"] = 0.05 if novel else 0.0
        if resolved:
            r["r_resolve"] = 1.0
            r["r_efficiency"] = 0.1 * (max_turns - turn)
    r["reward"] = sum(r.values())
    return r


def turn_reward__diversity_not_summed(
    n_before,
    n_after,
    turn,
    max_turns,
    *,
    redundant=False,
    invalid=False,
    arm_match=False,
    novel=False,
    resolved=False,
    info=None,
    w=REWARD,
):
    """Wrong: the diversity bonus is reported but left out of the sum."""
    r = dict(
        r_info=0.0,
        r_arm_match=0.0,
        r_diversity=0.0,
        r_resolve=0.0,
        r_efficiency=0.0,
        r_redundancy=0.0,
        r_invalid=0.0,
    )
    if invalid:
        r["r_invalid"] = w.invalid_penalty
    elif redundant:
        r["r_redundancy"] = w.redundancy_penalty
    else:
        r["r_info"] = (n_before - n_after) / n_before if info is None else float(info)
        r["r_arm_match"] = w.arm_match_bonus if arm_match else 0.0
        r["r_diversity"] = w.diversity_bonus if novel else 0.0
        if resolved:
            r["r_resolve"] = w.resolve_bonus
            r["r_efficiency"] = w.efficiency_weight * (max_turns - turn)
    r["reward"] = sum(v for k, v in r.items() if k != "r_diversity")
    return r


def turn_reward__early_returns(
    n_before,
    n_after,
    turn,
    max_turns,
    *,
    redundant=False,
    invalid=False,
    arm_match=False,
    novel=False,
    resolved=False,
    info=None,
    w=REWARD,
):
    """Right: return early from the penalised turns, then add the components up one by one."""
    zero = dict(
        r_info=0.0,
        r_arm_match=0.0,
        r_diversity=0.0,
        r_resolve=0.0,
        r_efficiency=0.0,
        r_redundancy=0.0,
        r_invalid=0.0,
    )
    if invalid:
        return {**zero, "r_invalid": w.invalid_penalty, "reward": w.invalid_penalty}
    if redundant:
        return {**zero, "r_redundancy": w.redundancy_penalty, "reward": w.redundancy_penalty}
    r_info = float(info) if info is not None else 1 - n_after / n_before
    parts = {
        **zero,
        "r_info": r_info,
        "r_arm_match": w.arm_match_bonus if arm_match else 0.0,
        "r_diversity": w.diversity_bonus if novel else 0.0,
        "r_resolve": w.resolve_bonus if resolved else 0.0,
        "r_efficiency": w.efficiency_weight * (max_turns - turn) if resolved else 0.0,
    }
    return {**parts, "reward": sum(parts.values())}


def turn_reward__by_table(
    n_before,
    n_after,
    turn,
    max_turns,
    *,
    redundant=False,
    invalid=False,
    arm_match=False,
    novel=False,
    resolved=False,
    info=None,
    w=REWARD,
):
    """Right: each component earned when its condition holds, in one table."""
    answered = not (invalid or redundant)
    earned = {
        "r_info": (answered, (n_before - n_after) / n_before if info is None else float(info)),
        "r_arm_match": (answered and arm_match, w.arm_match_bonus),
        "r_diversity": (answered and novel, w.diversity_bonus),
        "r_resolve": (answered and resolved, w.resolve_bonus),
        "r_efficiency": (answered and resolved, w.efficiency_weight * (max_turns - turn)),
        "r_redundancy": (redundant and not invalid, w.redundancy_penalty),
        "r_invalid": (invalid, w.invalid_penalty),
    }
    r = {name: float(value) if condition else 0.0 for name, (condition, value) in earned.items()}
    r["reward"] = sum(r.values())
    return r


WRONG = [
    turn_reward__penalty_added,
    turn_reward__info_over_after,
    turn_reward__efficiency_off_by_one,
    turn_reward__info_ignored,
    turn_reward__constant_weights,
    turn_reward__diversity_not_summed,
]
RIGHT = [turn_reward__early_returns, turn_reward__by_table]
