"""Exercise 8's answers to tell apart, planted as metrics.elim_quality, is_zero, zero and quality:
WRONG, likely mistakes that must turn the exercise to FAIL, and RIGHT, two correct answers
written differently from the reference that must PASS (exercises/instructor/answers/__init__.py
plants them). An answer may use only what the module it is planted in defines; the imports name
those."""

from metrics import NAN, all_turns, elim_quality, is_wasted, is_zero, mean_or_nan


def elim_quality__uncapped(row):
    """Wrong: no cap at 1."""
    return row["eliminated"] / max(row["candidates_before"] / 2, 1)


def elim_quality__fraction_of_all(row):
    """Wrong: relative to |C_t| instead of a halving."""
    return min(row["eliminated"] / row["candidates_before"], 1.0)


def is_zero__wasted_too(row):
    """Wrong: a wasted turn that eliminated nothing counts as a zero turn."""
    return row["eliminated"] == 0


def zero__over_every_turn(episodes):
    """Wrong: wasted turns in Zero's denominator."""
    return mean_or_nan(is_zero(r) for r in all_turns(episodes))


def zero__zero_when_empty(episodes):
    """Wrong: 0 instead of NaN when no turn was answered."""
    answered = [r for r in all_turns(episodes) if not is_wasted(r)]
    return sum(is_zero(r) for r in answered) / len(answered) if answered else 0.0


def quality__answered_only(episodes):
    """Wrong: wasted turns left out of Qual.'s mean."""
    return mean_or_nan(elim_quality(r) for r in all_turns(episodes) if not is_wasted(r))


def quality__nan_without_answered_turns(episodes):
    """Wrong: NaN when no turn was answered, where Qual. is 0 (a wasted turn counts 0)."""
    answered = [r for r in all_turns(episodes) if not is_wasted(r)]
    return mean_or_nan(elim_quality(r) for r in all_turns(episodes)) if answered else NAN


def elim_quality__by_cases(row):
    """Right: an exact halving or better scores 1; less scores its share of a halving."""
    halving = max(row["candidates_before"] / 2, 1)
    return 1.0 if row["eliminated"] >= halving else row["eliminated"] / halving


def is_zero__answered_and_nothing_removed(row):
    """Right."""
    return not (row["redundant"] or row["invalid"]) and not row["eliminated"]


def zero__counted(episodes):
    """Right: two counters."""
    answered = zeros = 0
    for episode in episodes:
        for row in episode:
            if not is_wasted(row):
                answered += 1
                zeros += is_zero(row)
    return zeros / answered if answered else float("nan")


def quality__numpy(episodes):
    """Right: numpy's mean (imported here: metrics.py does not import numpy)."""
    import numpy as np

    return float(np.mean([elim_quality(r) for ep in episodes for r in ep]))


def elim_quality__clipped(row):
    """Right: numpy's clip."""
    import numpy as np

    return float(np.clip(row["eliminated"] / max(row["candidates_before"] / 2, 1), 0, 1))


def is_zero__not_wasted(row):
    """Right: the definition, with is_wasted."""
    return row["eliminated"] == 0 and not is_wasted(row)


def zero__filtered_mean(episodes):
    """Right: the mean of a filtered list."""
    flags = [is_zero(row) for ep in episodes for row in ep if not is_wasted(row)]
    return sum(flags) / len(flags) if flags else NAN


def quality__summed(episodes):
    """Right: a sum over the turns divided by their number."""
    rows = all_turns(episodes)
    return sum(elim_quality(r) for r in rows) / len(rows) if rows else NAN


WRONG = [
    elim_quality__uncapped,
    elim_quality__fraction_of_all,
    is_zero__wasted_too,
    zero__over_every_turn,
    zero__zero_when_empty,
    quality__answered_only,
    quality__nan_without_answered_turns,
]
RIGHT = [
    (elim_quality__by_cases, is_zero__answered_and_nothing_removed, zero__counted, quality__numpy),
    (elim_quality__clipped, is_zero__not_wasted, zero__filtered_mean, quality__summed),
]
