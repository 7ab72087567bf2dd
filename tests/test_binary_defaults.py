"""bench/binary_defaults.py: the checkpoint rules, their two-fold cross-validation on the halves
of the validation secrets, and the choice of the binary defaults, on hand-worked examples."""

import json
import os

import pytest

from bench import binary_defaults as bd
from experiment import kept_evaluation, smoothed


def test_smoothed_and_the_kept_evaluation_by_hand():
    scores = [0.1, 0.5, 0.2, 0.4, 0.4]
    assert smoothed(scores, 3) == pytest.approx([0.1, 0.3, 0.8 / 3, 1.1 / 3, 1.0 / 3])
    assert kept_evaluation(scores, 1) == 1
    assert kept_evaluation(scores, 3) == 3
    # a later tie wins, as Run.keep_best saves on >=
    assert kept_evaluation([0.2, 0.6, 0.6], 1) == 2
    assert bd.chosen_index(scores, 0) == 4  # window 0: the last evaluation


def test_kept_evaluation_is_the_incremental_rule_of_keep_best():
    """Run.keep_best keeps an evaluation when its smoothed score is >= the best so far."""
    scores = [0.3, 0.1, 0.7, 0.2, 0.7, 0.65, 0.75, 0.0]
    for window in (1, 2, 3, 5):
        best, kept = -1.0, None
        for i, s in enumerate(smoothed(scores, window)):
            if s >= best:
                best, kept = s, i
        assert kept_evaluation(scores, window) == kept


def test_cross_validation_chooses_on_one_half_and_scores_on_the_other():
    a, b = [0.2, 0.8, 0.4], [0.6, 0.2, 1.0]
    assert bd.cross_validated(a, b, 1) == pytest.approx((b[1] + a[2]) / 2)  # a picks 1, b picks 2
    assert bd.cross_validated(a, b, 0) == pytest.approx((b[2] + a[2]) / 2)
    # window 3: a smoothed is 0.2, 0.5, 0.467 (picks 1); b is 0.6, 0.4, 0.6 (a tie: the later, 2)
    assert bd.cross_validated(a, b, 3) == pytest.approx((b[1] + a[2]) / 2)


def fake_run(name, lr, halves):
    config = {
        "lr": lr,
        "seed": 0,
        "split_seed": 1,
        "validation_window": 3,
        "out": name,
        "threads": 1,
    }
    evals = [(5 * (i + 1), (a + b) / 2, a, b) for i, (a, b) in enumerate(halves)]
    return {
        "name": name,
        "config": config,
        "evals": evals,
        "seconds": 1.0,
        "summary": {"steps": 5 * len(halves), "train_seconds": 1.0, "kept": {"step": 5}},
    }


def test_compare_picks_the_rule_then_the_setting():
    """A noisy peak on one half is not confirmed by the other: 'best single' scores below 'last'."""
    runs = [
        fake_run("default", 5e-4, [(0.2, 0.2), (1.0, 0.3), (0.5, 0.5), (0.6, 0.6)]),
        fake_run("lr1e-3", 1e-3, [(0.3, 0.3), (0.4, 0.4), (0.8, 0.8), (0.7, 0.7)]),
    ]
    out = bd.compare(runs, "default")
    assert [r["settings"] for r in out["rows"]] == [{"lr": 5e-4}, {"lr": 1e-3}]  # only what differs
    cv = {r["name"]: r["cross_validated"] for r in out["rows"]}
    # a picks 1 (b: 0.3), b picks 3
    assert cv["default"]["best single"] == pytest.approx((0.3 + 0.6) / 2)
    assert out["rule_means"]["last"] == pytest.approx((0.6 + 0.7) / 2)
    assert out["rule_means"][out["chosen_rule"]] == pytest.approx(max(out["rule_means"].values()))
    assert (
        out["rule_means"]["best single"] < out["rule_means"]["last"]
        and out["chosen_rule"] != "best single"
    )
    assert out["chosen"] == "lr1e-3" and out["ranking"] == ["lr1e-3", "default"]


def test_a_tie_keeps_the_default(tmp_path):
    same = [(0.5, 0.5), (0.5, 0.5)]
    out = bd.compare([fake_run("a-other", 1e-3, same), fake_run("default", 5e-4, same)], "default")
    # the default run's window
    assert out["chosen"] == "default" and out["chosen_rule"] == "best 3 in a row"
    runs = [fake_run("a-other", 1e-3, same), fake_run("default", 5e-4, same)]
    runs[1]["config"]["validation_window"] = 5
    assert bd.compare(runs, "default")["chosen_rule"] == "best 5 in a row"


def test_the_binary_preset_is_what_the_comparison_chose():
    """train.py's binary preset carries the chosen run's settings and the chosen rule's window
    (bench/results/binary_defaults.json is committed: the decision the preset must follow)."""
    import config
    from bench.common import RESULTS

    d = json.loads(open(os.path.join(RESULTS, "binary_defaults.json")).read())
    preset = config.config_from_flags(["--question-set", "binary"])
    chosen = next(r for r in d["runs"] if r["name"] == d["chosen"])
    assert {k: getattr(preset, k) for k in chosen["settings"]} == chosen["settings"]
    assert preset.validation_window == bd.RULES[d["chosen_rule"]]


def test_a_run_without_validation_halves_is_one_sentence(tmp_path, capsys):
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "metrics.jsonl").write_text(
        json.dumps({"step": 1, "eval/validation_score": 0.5}) + "\n"
    )
    for name in ("train_config.json", "summary.json"):
        (tmp_path / "r" / name).write_text("{}")
    with pytest.raises(SystemExit):
        bd.main(["--runs", str(tmp_path), "--out", str(tmp_path / "out.json")])
    assert "logged no validation halves" in capsys.readouterr().err


def test_the_report_renders_the_comparison_from_the_file(tmp_path):
    """RESULTS.md's defaults table is read from binary_defaults.json, not typed."""
    from bench import report_binary, report_tables

    runs = [
        fake_run("default", 5e-4, [(0.2, 0.2), (0.6, 0.6)]),
        fake_run("lr1e-3", 1e-3, [(0.3, 0.3), (0.9, 0.7)]),
    ]
    out = bd.compare(runs, "default")
    (tmp_path / "binary_defaults.json").write_text(
        json.dumps(
            {
                "runs_dir": "x",
                "rules": out["rules"],
                "criterion": "C.",
                "runs": out["rows"],
                "rule_means": out["rule_means"],
                "chosen_rule": out["chosen_rule"],
                "ranking": out["ranking"],
                "chosen": out["chosen"],
                "command": "python bench/binary_defaults.py",
                "machine": "2 CPU cores",
                "date": "2026-01-01",
            }
        )
    )
    with report_tables.reading(str(tmp_path)):
        text = "\n".join(report_binary.section_binary())
    assert "Chosen: **lr1e-3**" in text and "`--lr 0.001`" in text
    assert "| 80.0 |" in text  # lr1e-3 last: (0.9 + 0.7) / 2 = 80%
