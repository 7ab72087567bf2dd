"""Every metric of metrics.py on small hand-built episodes, worked out by hand in the comments."""

import math

import pytest

import metrics as M
from env import TurnRecord
from tools import diagnostics as D

JSON = '{"arm": 0, "question": "Is the number even?"}'


def row(
    before,
    elim,
    *,
    arm=0,
    qtype="comparison",
    redundant=False,
    invalid=False,
    resolved=False,
    status="fact",
    raw=JSON,
    arm_match=False,
    **extra,
):
    """A turns-table row with the real TurnRecord fields; only what a test varies is given."""
    wasted = redundant or invalid
    fields = dict(
        episode=0,
        turn=0,
        arm=-1 if invalid else arm,
        question="",
        question_type="invalid" if invalid else qtype,
        raw_response=raw,
        completion="",
        hint="",
        answer="",
        hint_status="" if wasted else status,
        candidates_before=before,
        eliminated=elim,
        candidates_after=before - elim,
        redundant=redundant,
        invalid=invalid,
        invalid_reason="no_json" if invalid else "",
        inconsistent=False,
        arm_match=arm_match,
        novel=not wasted,
        turn_resolved=resolved,
        r_info=elim / before,
        r_arm_match=0.0,
        r_diversity=0.0,
        r_resolve=0.0,
        r_efficiency=0.0,
        r_redundancy=0.0,
        r_invalid=0.0,
        reward=0.0,
    )
    fields.update(extra)
    return TurnRecord(**fields).as_dict()


def numbered(episode):
    for t, r in enumerate(episode):
        r["turn"] = t
    return episode


# Three episodes (positions in the comments are 1-based, as the paper counts: turn = position - 1).
# Qual = min(elim / max(before / 2, 1), 1).
EP1 = numbered(
    [  # resolves at position 4
        row(
            100,
            50,
            arm=0,
            qtype="comparison",
            arm_match=True,  # Qual 1, grounded
            raw=(
                'Thought: halve the range.\nAction: {"arm": 0, "question": '
                '"Is it greater than 50?"}'
            ),
        ),
        row(50, 0, arm=0, qtype="parity", arm_match=True),  # zero, Qual 0
        row(50, 20, arm=2, qtype="divisibility", arm_match=True),  # Qual 20/25 = 0.8, grounded
        # Qual min(29/15, 1) = 1, grounded
        row(30, 29, arm=3, qtype="last_digit", arm_match=True, resolved=True),
    ]
)
EP2 = numbered(
    [  # six turns, unresolved
        row(100, 10, arm=1, qtype="square", arm_match=True),  # Qual 10/50 = 0.2, low quality
        row(90, 0, arm=1, qtype="square", redundant=True),  # wasted, Qual 0
        row(90, 0, arm=1, qtype="cube"),  # zero
        row(90, 0, arm=4, qtype="unsupported", status="deflection"),  # zero (deflected), Uninf.
        row(90, 80, arm=4, qtype="between", arm_match=True),  # Qual 1 (80 >= 45), grounded
        row(10, 0, arm=4, qtype="between", redundant=True),  # wasted; position 6, |C| = 10: late
    ]
)
EP3 = [
    row(
        100,
        0,
        invalid=True,  # one invalid turn; 69 characters, no JSON: reasoning present
        raw="I think the number is probably even, so I will ask about it later on.",
    )
]
RUN = [EP1, EP2, EP3]  # 4 + 6 + 1 = 11 turns; wasted: EP2 t2, EP2 t6, EP3 t1 -> 8 non-wasted


def test_turn_level_definitions():
    """Qual halves-normalised and capped; grounded needs Qual >= 0.5 and a non-wasted turn."""
    assert M.elim_quality(row(100, 25)) == 0.5 and M.elim_quality(row(100, 80)) == 1.0
    # max(|C|/2, 1) = 1
    assert M.elim_quality(row(1, 0)) == 0.0 and M.elim_quality(row(2, 1)) == 1.0
    assert M.elim_quality(row(3, 1)) == 1 / 1.5  # 3/2 = 1.5
    assert M.is_grounded(row(100, 25)) and not M.is_grounded(row(100, 24))
    assert not M.is_grounded(row(100, 50, redundant=True))  # wasted is never grounded
    assert M.is_zero(row(50, 0))
    assert not M.is_zero(row(50, 0, redundant=True)) and not M.is_zero(row(50, 0, invalid=True))
    assert M.is_bad(row(50, 0, invalid=True)) and M.is_bad(row(50, 0)) and not M.is_bad(row(50, 1))
    assert M.is_low_quality(row(100, 24)) and not M.is_low_quality(row(100, 0, redundant=True))
    # late_narrow: turn >= 4 (the paper's 1-based position >= 5) and |C_t| <= 10
    assert M.is_late_narrow(row(10, 0, turn=4))
    assert not M.is_late_narrow(row(11, 0, turn=4)) and not M.is_late_narrow(row(5, 0, turn=3))


def test_table1_metrics_on_hand_built_run():
    """Resolve, Zero, Qual., Ground, LateCalib, Reason% and ResAfterZero of RUN, by hand."""
    assert M.resolve(RUN) == pytest.approx(1 / 3)  # only EP1 resolves
    # zeros EP1 t2, EP2 t3, EP2 t4 over 8 non-wasted turns
    assert M.zero(RUN) == pytest.approx(3 / 8)
    # Qual: EP1 1 + 0 + 0.8 + 1 = 2.8; EP2 0.2 + 0 + 0 + 0 + 1 + 0 = 1.2; EP3 0 -> 4.0 / 11
    assert M.quality(RUN) == pytest.approx(4.0 / 11)
    assert M.ground(RUN) == pytest.approx(4 / 11)  # EP1 t1, t3, t4 and EP2 t5, over all 11 turns
    assert M.late_calib(RUN) == 1.0  # one late narrow turn (EP2 t6), and it is redundant
    # EP1 t1 (Thought text) and EP3 t1 (long prose)
    assert M.reason_pct(RUN) == pytest.approx(100 * 2 / 11)
    assert M.res_after_zero(RUN) == 0.5  # EP1 (resolved) and EP2 (not) have ZeroEvents
    assert [M.zero_events(ep) for ep in RUN] == [[1], [2, 3], []]


def test_recovery_after_zero_events_by_hand():
    """Three ZeroEvents: EP1 t2 -> t3 (grounded, Qual 0.8), EP2 t3 -> t4 (zero), EP2 t4 -> t5 (Qual
    1)."""
    rec = M.recovery(RUN, "zero")
    assert rec["N"] == 3
    assert rec["Rec1"] == pytest.approx(2 / 3) and rec["GRec1"] == pytest.approx(2 / 3)
    assert rec["RecQ"] == pytest.approx((0.8 + 0 + 1) / 3)
    assert rec["Gain"] == pytest.approx((20 / 50 + 0 + 80 / 90) / 3)
    assert rec["NextZero"] == pytest.approx(1 / 3) and rec["NextBad"] == pytest.approx(1 / 3)
    assert rec["NextRed"] == 0
    # Sust2: EP1 t3 and t4 grounded (yes); EP2 t4 zero (no); EP2 t5 grounded but t6 redundant (no)
    assert rec["Sust2"] == pytest.approx(1 / 3)
    assert rec["TTR"] == pytest.approx((1 + 2 + 1) / 3)  # EP2 t3 waits two turns for t5
    assert rec["TTRsucc"] == 1.0
    # EpRes per episode: EP1 (resolved, one event) and EP2 (not, two events) -> 1/2, which is
    # ResAfterZero; per event the resolved episode counts once of three -> 1/3
    assert rec["EpRes"] == 0.5 == M.res_after_zero(RUN) and rec["EpResPerEvent"] == pytest.approx(
        1 / 3
    )
    assert M.recovery(RUN, "zero")["GRec1"] == pytest.approx(2 / 3)  # Table 1's GRecover


def test_recovery_after_bad_low_and_late_bad_events():
    """bad = zero or wasted; low = answered with Qual < 0.5; late-bad = bad at position >= 5."""
    # EP1 t2; EP2 t2 (redundant), t3, t4; EP2 t6 and EP3 t1 are last turns
    bad = M.recovery(RUN, "bad")
    assert bad["N"] == 4
    assert bad["Rec1"] == 0.5  # EP1 t3 and EP2 t5 eliminate; EP2 t3, t4 do not
    assert bad["NextZero"] == 0.5 and bad["NextRed"] == 0  # EP2 t3 and t4 follow bad turns
    assert bad["EpRes"] == 0.5 and bad["EpResPerEvent"] == 0.25  # EP1 one event, EP2 three
    low = M.recovery(RUN, "low")  # EP1 t2 (Qual 0), EP2 t1 (Qual 0.2), EP2 t3, EP2 t4
    assert low["N"] == 4 and low["NextRed"] == 0.25  # EP2 t1 is followed by the redundant t2
    late = M.recovery(RUN, "late_bad")  # EP2 t6 is bad and late but has no next turn
    assert late["N"] == 0 and all(math.isnan(late[k]) for k in late if k != "N")


def test_episodes_of_length_one_and_no_zero_events():
    """No ZeroEvents (a zero on the last turn does not count): recovery metrics and ResAfterZero are
    NaN."""
    single = [[row(100, 0)], [row(100, 50)]]
    assert M.zero_events(single[0]) == []
    assert (
        M.zero(single) == 0.5
        and math.isnan(M.res_after_zero(single))
        and math.isnan(M.recovery(single)["GRec1"])
    )
    assert M.recovery(single)["N"] == 0 and math.isnan(M.recovery(single)["TTR"])
    assert math.isnan(M.late_calib(single))  # no late turn at all
    assert math.isnan(M.zero([[row(100, 0, invalid=True)]]))  # no non-wasted turn


def test_ttr_is_nan_when_no_event_recovers():
    """TTR averages only over recovered events; TTRsucc counts the others as failures."""
    # two ZeroEvents, the only later elimination is Qual 0.02
    ep = [row(100, 0), row(100, 0), row(100, 1)]
    rec = M.recovery([ep])
    assert rec["N"] == 2 and math.isnan(rec["TTR"]) and rec["TTRsucc"] == 0 and rec["Rec1"] == 0.5


def test_sust2_counts_a_resolving_grounded_next_turn():
    """Sust2: the next turn grounded and resolving counts as sustained (nothing left to sustain)."""
    ep = [row(100, 0), row(2, 1, resolved=True)]
    assert M.recovery([ep])["Sust2"] == 1.0


def test_has_reasoning():
    """Reason%: text outside the first JSON with "arm" (> 10 chars), or > 50 chars without JSON."""
    assert not M.has_reasoning(JSON)
    assert not M.has_reasoning("```json\n" + JSON + "\n```")  # fences are not reasoning
    assert not M.has_reasoning("Sure! " + JSON)  # 5 characters outside
    assert M.has_reasoning("Let me think about it. " + JSON)
    assert not M.has_reasoning("I would ask about parity.")  # no JSON, 25 characters
    assert M.has_reasoning("x" * 51) and not M.has_reasoning("x" * 50)
    # JSON without "arm": length rule (58)
    assert M.has_reasoning('{"question": "no arm here"} ' + "y" * 30)
    # text on both sides: each side stripped, joined by one space, as the paper's script does:
    # "abcd" + " " + "efghij" is 11 characters (reasoning); the raw concatenation with all its
    # spaces would also be over 10, but "abcd" + "efghi" joined is exactly 10 (not reasoning)
    assert M.has_reasoning("abcd  " + JSON + "   efghij")
    assert not M.has_reasoning("abcd   " + JSON + "     efghi")
    assert not M.has_reasoning("   \n" + JSON + "\n\n   ")  # whitespace only


def test_arm_diagnostics_by_hand():
    """ArmEnt, DomArm, StaticComp, ArmMatch, SameArm and the same/switch splits of RUN."""
    # valid turns: arms 0,0,2,3 (EP1) and 1,1,1,4,4,4 (EP2): counts 2,3,1,1,3 of 10
    p = [0.2, 0.3, 0.1, 0.1, 0.3]
    assert D.arm_entropy(RUN) == pytest.approx(-sum(x * math.log(x) for x in p) / math.log(5))
    assert D.dominant_arm(RUN) == 0.3
    assert D.static_comp(RUN) == 0.9  # all but EP2 t4 (an unsupported question to arm 4)
    assert D.arm_match(RUN) == 0.6  # EP1 x4, EP2 t1 and t5
    # pairs: EP1 same, switch, switch; EP2 same, same, switch, same, same -> 5 of 8 same
    assert D.same_arm(RUN) == 5 / 8
    # EP1 t2, EP2 t3 zero; EP2 t5 not (EP2 t2, t6 wasted)
    assert D.zero_same(RUN) == pytest.approx(2 / 3)
    assert D.zero_switch(RUN) == pytest.approx(1 / 3)  # EP1 t3, t4 not; EP2 t4 zero
    assert D.qual_same(RUN) == pytest.approx(1 / 5)  # Qual 0, 0, 0, 1, 0
    assert D.qual_switch(RUN) == pytest.approx(1.8 / 3)  # Qual 0.8, 1, 0
    diag = D.arm_diagnostics(RUN)
    assert diag["SameArm"] == 5 / 8 and diag["Res."] == pytest.approx(1 / 3)
    assert D.arm_entropy([[row(100, 1, arm=2)] * 3]) == 0.0 and math.isnan(D.arm_entropy([EP3]))


def test_hint_distribution_by_hand():
    """One category per turn from structured fields; ZeroElim counts zero turns separately."""
    d = D.hint_distribution(RUN)
    assert d == {
        "Turns": 11,
        "ZeroElim": 3,
        "Range": 1,
        "Divis.": 1,
        "Parity": 1,
        "Other": 1,
        "Redund.": 3,
        "Uninf.": 1,
        "Prime": 0,
        "Square": 1,
        "Between": 1,
        "LastDigit": 1,
        "DigitSum": 0,
    }
    assert sum(d[c] for c in D.HINT_COLUMNS) == d["Turns"]
    assert D.hint_category(row(100, 0, qtype="parity", inconsistent=True)) == "Uninf."


def test_turn_and_episode_columns():
    """The turns / episodes tables' metric columns of App. D on EP2 and EP3."""
    cols = M.turn_columns(EP2)
    assert [c["zero_nonred"] for c in cols] == [False, False, True, True, False, False]
    assert [c["prev_zero_nonred"] for c in cols] == [False, False, False, True, True, False]
    assert [c["grounded_recover"] for c in cols] == [False, False, False, False, True, False]
    assert [c["recovery_quality"] for c in cols] == [None, None, None, 0.0, 1.0, None]
    assert [c["next_bad_after_this_zero"] for c in cols] == [
        False,
        False,
        True,
        False,
        False,
        False,
    ]
    assert [c["late_narrow"] for c in cols] == [False] * 5 + [True]
    # EP2: Qual 0.2, 0, 0, 0, 1, 0 -> 0.2; ZeroEvents t3 (next zero) and t4 (next grounded) -> 1/2
    assert M.episode_columns(EP2) == pytest.approx(
        {
            "zero_rate": 0.5,
            "grounded_rate": 1 / 6,
            "quality_mean": 0.2,
            "grounded_recover_rate": 0.5,
            "reason_pct": 0.0,
            "resolved_after_zero": False,
        }
    )
    assert M.episode_columns(EP1)["resolved_after_zero"] is True
    e3 = M.episode_columns(EP3)
    assert math.isnan(e3["zero_rate"]) and e3["resolved_after_zero"] is None
    assert (
        math.isnan(e3["grounded_recover_rate"])
        and e3["reason_pct"] == 100.0
        and e3["quality_mean"] == 0
    )


def test_episode_aggregates_of_the_papers_evaluation_script():
    """Each quantity per episode first, then the mean over episodes (eval.py's aggregate)."""
    e1 = [
        row(100, 50, arm_match=True, reward=0.6),
        row(50, 49, arm_match=True, resolved=True, reward=2.28),
    ]
    e2 = [
        row(100, 0, reward=0.05),
        row(100, 0, redundant=True, reward=-0.1),
        row(100, 0, invalid=True, reward=-0.1),
    ]
    a = M.episode_aggregates([e1, e2])
    # reward per turn, per episode
    assert a["efficiency"] == pytest.approx((2.88 / 2 - 0.15 / 3) / 2)
    assert a["mean_total_reward"] == pytest.approx((2.88 - 0.15) / 2)
    assert a["mean_eliminated"] == pytest.approx((99 / 2 + 0) / 2)
    assert a["mean_final_candidates"] == pytest.approx((1 + 100) / 2)
    assert a["arm_match_rate"] == 0.5 and a["redundancy_rate"] == pytest.approx(1 / 6)
    assert a["diversity_rate"] == pytest.approx((1 + 1 / 3) / 2) and a["mean_turns_taken"] == 2.5


def test_run_metrics_names_the_runs_table_columns():
    """run_metrics gathers the per-run numbers under the runs-table names of App. D."""
    m = M.run_metrics(RUN)
    assert tuple(m) == M.RUN_KEYS
    assert m["resolve_rate"] == pytest.approx(1 / 3) and m["zero_events"] == 3
    assert m["grounded_recover_rate"] == pytest.approx(2 / 3) and m["ttr"] == pytest.approx(4 / 3)


def test_training_metrics_by_hand():
    """Two episodes, T = 3: one resolved at turn 2, one of 3 wasted-ish turns; every key by hand."""
    e1 = [
        row(100, 50, arm_match=True, reward=0.6, r_info=0.5),
        row(50, 49, arm_match=True, resolved=True, reward=2.28, r_info=0.98, r_efficiency=0.2),
    ]
    e2 = [
        row(100, 0, reward=0.05),
        row(100, 0, redundant=True, reward=-0.1),
        row(100, 0, invalid=True, reward=-0.1),
    ]
    episodes = [{"resolved": True, "turns_taken": 2}, {"resolved": False, "turns_taken": 3}]
    m = M.training_metrics(e1 + e2, episodes, max_turns=3)
    assert m["reward"] == pytest.approx((0.6 + 2.28 + 0.05 - 0.1 - 0.1) / 5)  # 0.546
    assert m["normalized_reward"] == pytest.approx((0.5 + 0.98) / 5)
    assert m["episode_resolve_rate"] == 0.5 and m["turn_resolve_rate"] == pytest.approx(1 / 5)
    assert m["eliminated_mean"] == pytest.approx(99 / 5)
    assert m["candidates_before"] == pytest.approx(450 / 5) and m[
        "candidates_after"
    ] == pytest.approx(351 / 5)
    assert m["arm_match_rate"] == pytest.approx(2 / 5)
    assert m["mean_turn"] == 2 and m["episode_length"] == 2.5
    assert m["turns_saved"] == pytest.approx(((3 - 2) + 0) / 2)
    assert m["efficiency_bonus"] == pytest.approx(0.2 / 5)
    assert m["redundancy_rate"] == pytest.approx(1 / 5) and m["invalid_rate"] == pytest.approx(
        1 / 5
    )
    assert m["diversity_rate"] == pytest.approx(3 / 5)  # e1 t1, t2 and e2 t1 asked new questions
    # e2 t1 of 3 answered
    assert m["inconsistent_rate"] == 0 and m["zero_rate"] == pytest.approx(1 / 3)
    empty = M.training_metrics([], [], max_turns=10)
    assert all(math.isnan(v) for v in empty.values())
    assert math.isnan(M.training_metrics(e2, episodes[1:], 3)["mean_turn"])  # nothing resolved


def test_repeat_ratio_by_hand():
    """sum of pi(a_t | h_{t+1}) over sum of pi(a_t | h_t): 1 for a policy its history does not
    move, 0 for one that never asks again, NaN with nothing to compare."""
    assert M.repeat_ratio([0.2, 0.1], [0.2, 0.1]) == pytest.approx(1.0)
    assert M.repeat_ratio([0.2, 0.1], [0.0, 0.0]) == 0.0
    assert M.repeat_ratio([0.5, 0.1], [0.1, 0.05]) == pytest.approx(0.25)
    assert math.isnan(M.repeat_ratio([], []))
