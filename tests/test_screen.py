"""bench/screen.py: a run's kept checkpoint screened on its split's held-out secrets and on the
probe 201..300 (train.py's own greedy held-out figure, played again), rows carried over and replaced
by what names a run; and its RESULTS.md section, read from the file, each group set against the
default one by seed."""

import json

import pytest
from test_train import model_dir, run  # noqa: F401  (model_dir: a fixture)

import bench.screen as screen
from bench import report_tables
from bench.report_screens import section_screens
from env import secret_split


def test_a_trained_run_is_screened_on_its_split_and_on_201_to_300(
    tmp_path,
    model_dir,  # noqa: F811
    monkeypatch,
):
    (summary,) = run(
        tmp_path / "runs",
        model_dir,
        "--steps",
        "1",
        "--split-seed",
        "3",
        "--run-name",
        "any-name",
        "--seed",
        "5",
        "--refusal-rate",
        "0.5",
    )
    played, evaluate, greedy = [], screen.evaluate_policy, screen.greedy_turns
    monkeypatch.setattr(
        screen,
        "evaluate_policy",
        lambda policy, secrets, game, *rest: (
            played.append((list(secrets), game.n_max)) or evaluate(policy, secrets, game, *rest)
        ),
    )
    probed = []
    monkeypatch.setattr(
        screen,
        "greedy_turns",
        lambda policy, secrets, game: (
            probed.append((list(secrets), game.n_max, greedy(policy, secrets, game)))
            or probed[-1][2]
        ),
    )
    out = tmp_path / "screens.json"
    screen.main(["--runs", str(tmp_path / "runs"), "--out", str(out)])
    assert played == [(secret_split(100, 4, seed=3)[1], 100)]  # FAST: --n-heldout 4
    ((secrets, n_max, turns),) = probed
    assert (secrets, n_max) == (list(range(201, 301)), 300) and all(
        b == set(range(1, 301)) for r, b in turns if r.turn == 0
    )
    written = json.loads(out.read_text())
    (row,) = written["runs"]
    assert (row["estimator"], row["seed"], row["split_seed"], row["steps"], row["kept_step"]) == (
        "echo",
        5,
        3,
        1,
        1,
    )
    assert row["changed"]["refusal_rate"] == 0.5 and "seed" not in row["changed"]
    # the run's own greedy figure
    assert row["heldout_greedy"] == summary["final_eval"]["eval/resolve_rate"]
    resolved = {r.episode for r, _ in turns if r.turn_resolved}
    assert (
        row["probe_greedy"] == len(resolved) / 100
        and 0.0 <= row["probe_redundant_rate_greedy"] <= 1.0
    )
    assert row["probe_invalid_rate_greedy"] == sum(r.invalid for r, _ in turns) / len(turns)
    assert written["probe"] == {"secrets": [201, 300], "n_max": 300} and "commit" in written
    # a row whose run is not scored now is kept; a run of the same split, estimator, seed and flags
    # replaces its row
    other = {**row, "seed": 6, "probe_greedy": 0.25}
    out.write_text(json.dumps({**written, "runs": [{**row, "probe_greedy": -1.0}, other]}))
    screen.main(["--runs", str(tmp_path / "runs"), "--out", str(out)])
    rows = json.loads(out.read_text())["runs"]
    assert [(r["seed"], r["probe_greedy"]) for r in rows] == [(5, row["probe_greedy"]), (6, 0.25)]
    # two runs that would be one row are refused, and so is a folder without runs
    (tmp_path / "runs" / "any-name").rename(tmp_path / "runs" / "twin")
    run(
        tmp_path / "runs",
        model_dir,
        "--steps",
        "1",
        "--split-seed",
        "3",
        "--run-name",
        "any-name",
        "--seed",
        "5",
        "--refusal-rate",
        "0.5",
    )
    with pytest.raises(SystemExit):
        screen.main(["--runs", str(tmp_path / "runs"), "--out", str(out)])
    with pytest.raises(SystemExit):
        screen.main(["--runs", str(tmp_path / "nothing"), "--out", str(out)])


def test_the_section_sets_each_group_against_the_default_by_seed(tmp_path):
    """Pass counts the runs at or above 80% on the probe; a group's difference from ECHO at the
    defaults of its split is paired over the seeds both have; the split's held-out secrets shared
    with a reported split are named (split 0 and split 1 share 13, 18, 33, 50, 63, 98; split 3594
    none)."""

    def row(estimator, seed, probe, changed=None, split=0):
        return {
            "question_set": "paper",
            "estimator": estimator,
            "seed": seed,
            "split_seed": split,
            "steps": 80,
            "kept_step": 80,
            "changed": changed or {},
            "train_seconds": 300.0,
            "threads": 1,
            "heldout_greedy": 1.0,
            "probe_greedy": probe,
            "probe_redundant_rate_greedy": 0.5,
            "probe_invalid_rate_greedy": 0.1 * seed,
            "probe_opening_greedy": "digit_sum, last_digit",
        }

    refused = {"refusal_rate": 0.6}
    runs = [
        row("echo", 0, 1.0),
        row("echo", 1, 0.5),
        row("echo", 2, 0.8),
        row("echo", 0, 0.5, refused),
        row("echo", 1, 0.3, refused),
        row("echo", 5, 0.9, refused),
        row("echo-belief", 0, 0.8),
        row("echo", 0, 0.2, {"split_seed": 1}, split=1),
    ]
    (tmp_path / "screens.json").write_text(
        json.dumps(
            {
                "command": "python bench/screen.py",
                "runs": runs,
                "probe": {"secrets": [201, 300], "n_max": 300},
            }
        )
    )
    (tmp_path / "generalization.json").write_text(
        json.dumps({"runs": [{"split_seed": 3594}, {"split_seed": 1}]})
    )
    with report_tables.reading(str(tmp_path)):
        text = "\n".join(section_screens())
    assert (
        "| 0 | ECHO | - | 0, 1, 2 | 2 of 3 | 100.0 ± 0.0 | 76.7 ± 14.5 | 50.0 ± 0.0 | "
        "10.0 ± 5.8 | - | - |" in text
    )
    # refusal 0.6 minus the default on seeds 0 and 1: (0.5 - 1.0 + 0.3 - 0.5) / 2
    assert (
        "| 0 | ECHO | `--refusal-rate 0.6` | 0, 1, 5 | 1 of 3 |" in text
        and "| -35.0 (t = -2.33, p = 0.26; seeds 0, 1) |" in text
    )
    assert "| 0 | ECHO-BELIEF | - | 0 | 1 of 1 |" in text  # one seed in common: no paired figure
    # another split: its own default
    assert "| 1 | ECHO | - | 0 | 0 of 1 | 100.0 | 20.0 | 50.0 | 0.0 | - | - |" in text
    assert (
        "split 0's held-out secrets that split 1's reported runs also hold out: "
        "13, 18, 33, 50, 63, 98" in text
    )
    assert "split 0's held-out secrets that split 3594's reported runs also hold out: none" in text
    assert text.index("| 0 | ECHO | - |") < text.index("| 0 | ECHO | `--refusal-rate 0.6` |")
    assert (
        "| echo | 5 | 0 | `--refusal-rate 0.6` | 80 (80) | 100.0 | 90.0 | 50.0 | 50.0 | "
        "digit sum, last digit | not recorded |" in text
    )


def test_the_defaults_table_reads_each_departures_validation_group_from_the_file(tmp_path):
    """RESULTS.md's table of the paper set's departures from the paper: a setting whose value was
    screened (here `--ppo-epochs 2`, 3 seeds, and `--refusal-rate 0`, written as 0.0) cites its
    validation group against ECHO at the defaults paired by seed; the others say they were
    compared on the test split; the steps are a budget. A group added to the file is picked up."""
    from bench.report_screens import section_defaults_chosen

    def row(seed, probe, changed=None):
        return {
            "question_set": "paper",
            "estimator": "echo",
            "seed": seed,
            "split_seed": 0,
            "steps": 80,
            "kept_step": 80,
            "changed": changed or {},
            "heldout_greedy": 1.0,
            "probe_greedy": probe,
            "probe_redundant_rate_greedy": 0.5,
            "probe_opening_greedy": "digit_sum, last_digit",
        }

    runs = [row(s, p) for s, p in ((0, 1.0), (1, 0.5), (2, 0.9), (3, 0.2))]
    runs += [row(s, p, {"ppo_epochs": 2}) for s, p in ((0, 0.8), (1, 0.3), (2, 0.4))]
    screens = {"command": "python bench/screen.py", "runs": runs}
    screens["probe"] = {"secrets": [201, 300], "n_max": 300}
    (tmp_path / "screens.json").write_text(json.dumps(screens))
    with report_tables.reading(str(tmp_path)):
        lines = section_defaults_chosen([3594])
        cited = set(report_tables.CITED)
    text = "\n".join(lines)
    (ppo,) = [line for line in lines if line.startswith("| `ppo_epochs`")]
    # differences -0.2, -0.2, -0.5: mean -0.3, standard error 0.1, t = -3 on 2 degrees of freedom
    assert (
        "screened on validation after it was set (`screens.json`, split 0): pass 1 of 3, the "
        "default 2 of 4; probe 50.0 ± 15.3, "
        "the default 65.0 ± 18.5; the paired difference -30.0 points (t = -3.00, p = 0.095, "
        "seeds 0-2)" in ppo
    )
    compared = "compared on split 3594's test figures (`generalization.json`), not on validation"
    (prefix,) = [line for line in lines if line.startswith("| `prefix_turns`")]
    assert compared in prefix and "| `--prefix-turns 0` |" in prefix
    assert "a budget for time" in text and cited == {"screens.json"}
    runs += [row(s, 0.9, {"refusal_rate": 0.0}) for s in (0, 1)]
    (tmp_path / "screens.json").write_text(json.dumps({**screens, "runs": runs}))
    with report_tables.reading(str(tmp_path)):
        lines = section_defaults_chosen([3594])
    (refusal,) = [line for line in lines if line.startswith("| `refusal_rate`")]
    assert (
        "screened on validation after it was set (`screens.json`, split 0): pass 2 of 2" in refusal
    )
    assert "two days before the screens ran" in refusal  # what happened, not a rule after the fact
