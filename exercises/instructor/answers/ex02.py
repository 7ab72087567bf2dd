"""Exercise 2's answers to tell apart, planted as env.turn_reward: WRONG, likely mistakes that must
turn the exercise to FAIL, and RIGHT, two correct answers written differently from the reference
that must PASS (exercises/instructor/answers/__init__.py plants them). An answer may use only
what the module it is planted in defines; the imports name those."""

from env import REWARD


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


def turn_reward__zero_info_as_absent(
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
    """Wrong: `if info` takes an expected information of 0 for none given."""
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
        r["r_info"] = float(info) if info else (n_before - n_after) / n_before
        r["r_arm_match"] = w.arm_match_bonus if arm_match else 0.0
        r["r_diversity"] = w.diversity_bonus if novel else 0.0
        if resolved:
            r["r_resolve"] = w.resolve_bonus
            r["r_efficiency"] = w.efficiency_weight * (max_turns - turn)
    r["reward"] = sum(r.values())
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
    turn_reward__zero_info_as_absent,
]
RIGHT = [turn_reward__early_returns, turn_reward__by_table]
