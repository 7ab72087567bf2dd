"""The arm and hint diagnostics of App. C, as pure functions over turn rows (metrics.py says
what a turn row, an episode and a run are, and how a rate with an empty denominator reads).

Paper: the arm tables (tab:arm_metric_definitions, tab:arm_routing_belief_diagnostics): does a
policy route its questions to the arms that own them, and do its same-arm and switched-arm turns
eliminate alike; and the hint-type table (tab:csg_hint_distribution_all): which kinds of hint a
policy's questions drew.

Departure from the paper: hint types are read from the structured turn fields (question_type,
redundant, invalid, hint_status), not by keyword matching on the hint text as the paper did, so
every turn lands in exactly one category (the paper's columns overlap and sum to over 100%).
"""

from __future__ import annotations

import math

import numpy as np

from metrics import (
    NAN,
    all_turns,
    elim_quality,
    ground,
    is_wasted,
    is_zero,
    mean_or_nan,
    quality,
    resolve,
    zero,
)

# Broad semantic domain of each arm for StaticComp: deliberately wider than env.ARM_FAMILIES,
# which decides the logged arm_match (ArmMatch) and the arm-match bonus.
ARM_DOMAINS = {
    0: ("parity", "comparison"),
    1: ("prime", "square", "cube", "power_of_two", "fibonacci", "triangular", "palindrome"),
    2: ("divisibility",),
    3: ("digit_sum", "last_digit", "tens_digit", "first_digit", "num_digits"),
    4: ("between",),
}


# ---------------------------------------------------------------------------------------------
# Arm routing diagnostics (tab:arm_metric_definitions). Over turns with a valid action (arm >= 0).
# ---------------------------------------------------------------------------------------------


def _arm_counts(episodes, n_arms: int) -> np.ndarray:
    return np.bincount([r["arm"] for r in all_turns(episodes) if r["arm"] >= 0], minlength=n_arms)


def arm_entropy(episodes, n_arms: int = 5) -> float:
    """ArmEnt: entropy of the arm choices divided by log K (1 = uniform over the K arms)."""
    counts = _arm_counts(episodes, n_arms)
    if counts.sum() == 0 or n_arms < 2:
        return NAN
    p = counts[counts > 0] / counts.sum()
    return max(0.0, float(-(p * np.log(p)).sum() / math.log(n_arms)))  # max: no -0.0


def dominant_arm(episodes, n_arms: int = 5) -> float:
    """DomArm: share of valid turns that went to the most chosen arm."""
    counts = _arm_counts(episodes, n_arms)
    return float(counts.max() / counts.sum()) if counts.sum() else NAN


def static_comp(episodes) -> float:
    """StaticComp: fraction of valid turns whose question family is in ARM_DOMAINS[arm]."""
    return mean_or_nan(
        r["question_type"] in ARM_DOMAINS.get(r["arm"], ())
        for r in all_turns(episodes)
        if r["arm"] >= 0
    )


def arm_match(episodes) -> float:
    """ArmMatch: the logged arm_match (env.ARM_FAMILIES; False on redundant turns) over valid
    turns."""
    return mean_or_nan(bool(r["arm_match"]) for r in all_turns(episodes) if r["arm"] >= 0)


def _arm_pairs(episodes):
    """(same arm as the previous turn?, this turn) for consecutive turns that both have an arm."""
    for ep in episodes:
        for prev, cur in zip(ep, ep[1:]):
            if prev["arm"] >= 0 and cur["arm"] >= 0:
                yield prev["arm"] == cur["arm"], cur


def same_arm(episodes) -> float:
    """SameArm: fraction of turns (with a valid previous turn) that reuse the previous turn's
    arm."""
    return mean_or_nan(same for same, _ in _arm_pairs(episodes))


def zero_same(episodes) -> float:
    """ZeroSame: Zero over the non-wasted turns that reuse the previous turn's arm."""
    return mean_or_nan(is_zero(r) for same, r in _arm_pairs(episodes) if same and not is_wasted(r))


def zero_switch(episodes) -> float:
    """ZeroSwitch: Zero over the non-wasted turns that switch to another arm."""
    return mean_or_nan(
        is_zero(r) for same, r in _arm_pairs(episodes) if not same and not is_wasted(r)
    )


def qual_same(episodes) -> float:
    """QualSame: mean Qual of the turns that reuse the previous turn's arm."""
    return mean_or_nan(elim_quality(r) for same, r in _arm_pairs(episodes) if same)


def qual_switch(episodes) -> float:
    """QualSwitch: mean Qual of the turns that switch to another arm."""
    return mean_or_nan(elim_quality(r) for same, r in _arm_pairs(episodes) if not same)


def arm_diagnostics(episodes, n_arms: int = 5) -> dict:
    """The columns of tab:arm_routing_belief_diagnostics."""
    return {
        "Res.": resolve(episodes),
        "Zero": zero(episodes),
        "Qual.": quality(episodes),
        "Ground": ground(episodes),
        "ArmEnt": arm_entropy(episodes, n_arms),
        "DomArm": dominant_arm(episodes, n_arms),
        "StaticComp": static_comp(episodes),
        "ArmMatch": arm_match(episodes),
        "SameArm": same_arm(episodes),
        "ZeroSame": zero_same(episodes),
        "ZeroSwitch": zero_switch(episodes),
        "QualSame": qual_same(episodes),
        "QualSwitch": qual_switch(episodes),
    }


# ---------------------------------------------------------------------------------------------
# Hint-type distribution (tab:csg_hint_distribution_all)
# ---------------------------------------------------------------------------------------------

HINT_FAMILIES = {
    "comparison": "Range",
    "divisibility": "Divis.",
    "parity": "Parity",
    "prime": "Prime",
    "square": "Square",
    "between": "Between",
    "last_digit": "LastDigit",
    "digit_sum": "DigitSum",
}
HINT_COLUMNS = (
    "Range",
    "Divis.",
    "Parity",
    "Other",
    "Redund.",
    "Uninf.",
    "Prime",
    "Square",
    "Between",
    "LastDigit",
    "DigitSum",
)


def hint_category(row: dict) -> str:
    """One category per turn, from structured fields: wasted -> Redund. (invalid turns too);
    no usable fact (deflection, unreadable, identity, refused as inconsistent) -> Uninf.;
    otherwise the question family (HINT_FAMILIES), every other family -> Other."""
    if is_wasted(row):
        return "Redund."
    if row["hint_status"] != "fact" or row["inconsistent"]:
        return "Uninf."
    return HINT_FAMILIES.get(row["question_type"], "Other")


def hint_distribution(episodes) -> dict:
    """Turns, ZeroElim (zero turns) and the count of each HINT_COLUMNS category (counts, not
    rates)."""
    rows = all_turns(episodes)
    out = {"Turns": len(rows), "ZeroElim": sum(is_zero(r) for r in rows)}
    out.update({c: 0 for c in HINT_COLUMNS})
    for r in rows:
        out[hint_category(r)] += 1
    return out
