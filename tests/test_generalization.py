"""bench/generalization.py: a run's kept checkpoint scored on its own held-out split and on 1..200
(train.py's own held-out figures, played again), the references bound what a run is scored
against, rows are reused and carried over, and ECHO is paired with each estimator by seed within
a question set."""

import json

import pytest
from test_results_claims import commit_all, scratch_repository
from test_train import model_dir, run  # noqa: F401  (model_dir: a fixture)

from bench.bisection_behaviour import behaviour, heldout_and_n200
from bench.generalization import carried_over, references
from bench.generalization import main as generalization
from bench.report_generalization import changed_text, flags_of
from config import TrainConfig
from env import CSG, GameConfig, secret_split
from experiment import eval_seed
from reference import FixedSequencePolicy
from tools.cli import code_version
from tools.stats import paired_by_seed, paired_t_test

# a candidate format the defaults do not play: a run given it names it among its flags
OTHER_FORMAT = next(f for f in ("list", "runs") if f != TrainConfig().candidate_format)


def test_references_bound_a_run_on_both_question_sets():
    """The Bayes policy resolves every secret of 1..100 and of 1..200 within 10 turns; random
    questions resolve fewer than the best fixed sequence; every rate is a share of its secrets.
    On the paper set a fixed sequence of value questions needs no belief at all (it resolves
    1..200 too); on the binary set it falls short."""
    for question_set in ("paper", "binary"):
        refs = {r["policy"]: r for r in references(question_set, 3594)}
        assert all(
            r["question_set"] == question_set and r["split_seed"] == 3594 for r in refs.values()
        )
        assert (refs["bayes"]["heldout"], refs["bayes"]["gen200"]) == (1.0, 1.0)
        for key, n in (("heldout", 20), ("gen200", 200)):
            assert refs["random"][key] < refs["fixed_sequence"][key] <= 1.0
            assert all(round(r[key] * n) == pytest.approx(r[key] * n) for r in refs.values())
        assert (refs["fixed_sequence"]["gen200"] == 1.0) == (question_set == "paper")


def test_a_repeated_question_counts_as_redundant():
    """behaviour's redundant_rate is the share of turns that ask an arm what it was already asked:
    the fixed sequence never does; asking it twice per turn is one in two."""
    cfg = GameConfig(question_set="paper")
    game = CSG([7, 88], cfg)
    pairs = []
    text = '{"arm": 3, "question": "What is the sum of the digits?"}'
    while game.active:
        beliefs = [game.episodes[i].candidates for i in game.active]
        pairs += list(zip(game.step([text] * len(game.active)), beliefs))
    # 2 episodes x 10 turns, 1 new each
    assert behaviour(pairs)["redundant_rate"] == pytest.approx(18 / 20)
    game = CSG([7, 88], cfg)
    policy = FixedSequencePolicy()
    fixed = []
    while game.active:
        beliefs = [game.episodes[i].candidates for i in game.active]
        fixed += list(zip(game.step(policy.respond(game)), beliefs))
    assert behaviour(fixed)["redundant_rate"] == 0.0


def test_the_opening_is_the_most_common_pair_of_first_question_families():
    """bisection_behaviour.opening: the families of each episode's first two questions, the most
    common over the episodes (the first met on a tie) and the share that open so; an episode
    resolved in one turn opens with one family, and later turns do not count."""
    from bench.bisection_behaviour import opening

    ask = {
        "sum": '{"arm": 3, "question": "What is the sum of the digits?"}',
        "tens": '{"arm": 4, "question": "What is the tens digit?"}',
        "last": '{"arm": 3, "question": "What is the last digit?"}',
        "even": '{"arm": 0, "question": "Is the number even?"}',
    }
    plays = {
        7: ["tens", "last"],
        23: ["tens", "last", "even", "sum"],
        88: ["sum", "tens", "last"],
        100: ["last", "tens"],
    }
    game = CSG(list(plays), GameConfig(question_set="paper"))
    records = []
    while game.active:
        records += game.step(
            [ask[plays[game.episodes[i].secret][game.episodes[i].turn]] for i in game.active]
        )
    assert opening(records) == ("tens_digit, last_digit", 0.5)
    # a tie: the first met
    assert opening([r for r in records if r.episode >= 2]) == ("digit_sum, tens_digit", 0.5)
    assert opening(
        [r for r in records if r.episode == 3] + [r for r in records if r.episode == 2]
    ) == ("last_digit, tens_digit", 0.5)
    game = CSG([5], GameConfig(question_set="paper", n_max=9))
    assert opening(game.step([ask["even"]]) + game.step([ask["last"]])) == (
        "parity, last_digit",
        1.0,
    )
    assert opening([]) == ("", pytest.approx(float("nan"), nan_ok=True))


def test_pairing_is_by_seed_within_the_rows_given():
    rows = [
        {"estimator": e, "seed": s, "gen200_greedy": v}
        for e, s, v in [
            ("echo", 0, 0.5),
            ("echo", 1, 0.7),
            ("echo", 2, 0.9),
            ("grpo", 0, 0.4),
            ("grpo", 1, 0.5),
            ("grpo", 2, 0.6),
            ("grpo", 3, 0.0),
        ]
    ]
    g = paired_by_seed(rows, "echo", ("gen200_greedy",))["grpo"]["gen200_greedy"]
    assert g["seeds"] == [0, 1, 2] and g["mean_difference"] == pytest.approx(0.2)
    assert (g["t"], g["p"]) == pytest.approx(paired_t_test([0.5, 0.7, 0.9], [0.4, 0.5, 0.6]))


def test_rows_of_runs_not_scored_now_carry_over_and_a_run_scored_now_does_not_whatever_its_flags():
    """An earlier row is carried over only where no run scored now is that run (same set, estimator,
    seed, split, steps, kept step, train seconds): its "changed" was taken against the defaults of
    its day, so a run scored again after the defaults moved replaces its row, not adds a second;
    nor where a run scored now is the same command trained again (a seed is one row, the newest)."""
    run = lambda q, secs, **changed: {
        "question_set": q,
        "estimator": "echo",
        "seed": 0,
        "split_seed": 3,
        "steps": 80,
        "kept_step": 80,
        "train_seconds": secs,
        "changed": changed,
    }
    before = [
        {**run("paper", 10.0), "v": 1},
        {**run("binary", 20.0), "v": 2},
        {**run("paper", 30.0, refusal_rate=0.3), "v": 3},
    ]
    # flags now named against new defaults
    assert carried_over(before, [run("paper", 10.0, steps=80)]) == before[1:]
    # the same command trained again
    assert carried_over(before, [run("paper", 11.0)]) == before[1:]
    assert (
        carried_over(before, [{**run("paper", 11.0), "seed": 1}, run("paper", 11.0, steps=120)])
        == before
    )
    assert (
        carried_over(before, [run("paper", 30.0, refusal_rate=0.3), run("binary", 20.0)])
        == before[:1]
    )
    assert carried_over(before, []) == before


def test_a_carried_row_names_the_defaults_it_ran_at_after_they_move():
    """A row whose run directory is gone keeps its flags true when train.py's defaults move: its
    "changed" is taken again from the defaults the file recorded with it. A setting it ran at the
    old default is named now, one it gave that is today's default is no longer named, and a file
    that recorded no defaults leaves its rows as they were."""
    from bench.generalization import retaken, set_defaults

    today = set_defaults("paper")
    assert "seed" not in today and "threads" not in today and today["steps"] == TrainConfig().steps
    # the defaults of an earlier day
    then = {**today, "ppo_epochs": today["ppo_epochs"] + 1, "top_p": 0.5}
    row = {
        "question_set": "paper",
        "estimator": "echo",
        "seed": 0,
        "changed": {"split_seed": 3, "steps": today["steps"] + 5, "top_p": today["top_p"]},
    }
    again = retaken(row, then)
    assert again["changed"] == {
        "split_seed": 3,
        "steps": today["steps"] + 5,
        "ppo_epochs": today["ppo_epochs"] + 1,
    }
    assert retaken(again, today) == again and retaken(row, None) is row
    assert {k: v for k, v in again.items() if k != "changed"} == {
        k: v for k, v in row.items() if k != "changed"
    }


def test_a_run_that_predates_a_setting_is_scored_as_it_played(tmp_path):
    """A run made before train.py had --refusal-rate and --candidate-format played without refusals
    and with every candidate listed: it is scored so, and its flags (what it changed from today's
    defaults) are taken again at each scoring, so a run that gave a default explicitly shows
    none."""
    import config
    from bench.generalization import BEFORE_THE_FIELD, run_config, run_facts

    summary = {
        "estimator": "echo",
        "seed": 0,
        "steps": 40,
        "kept": {"step": 40},
        "train_seconds": 1.0,
    }
    for name, saved in (
        ("old", {"question_set": "paper", "split_seed": 3, "threads": 1, "eval_samples": 4}),
        ("runs", {**vars(config.TrainConfig()), "split_seed": 3, "candidate_format": OTHER_FORMAT}),
    ):
        (tmp_path / name).mkdir()
        (tmp_path / name / "summary.json").write_text(json.dumps(summary))
        (tmp_path / name / "train_config.json").write_text(json.dumps(saved))
    old = run_config(tmp_path / "old")
    assert {k: old[k] for k in BEFORE_THE_FIELD} == {
        "refusal_rate": 0.0,
        "candidate_format": "list",
        "prefix_turns": 0,
    }
    assert run_config(tmp_path / "runs")["candidate_format"] == OTHER_FORMAT
    assert run_facts(tmp_path / "runs", 0)["changed"] == {
        "split_seed": 3,
        "candidate_format": OTHER_FORMAT,
    }
    changed = run_facts(tmp_path / "old", 0)["changed"]
    assert changed == {
        k: v
        for k, v in {"split_seed": 3, **BEFORE_THE_FIELD}.items()
        if v != getattr(config.TrainConfig(), k, None)
    }


def test_a_trained_run_is_scored_on_its_own_split_and_on_1_to_200(
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
        "--eval-samples",
        "3",
        "--run-name",
        "echo-seed5",
        "--seed",
        "5",
        "--candidate-format",
        OTHER_FORMAT,
    )
    import bench.bisection_behaviour as behaviour_bench
    import bench.generalization as gen

    played = []
    # 1..200 thinned to 20 secrets, where a row is scored and where it is filled in: the row's
    # plumbing is tested, not the policy
    thin = lambda secrets, game: secrets[::10] if game.n_max == 200 else secrets
    scored, greedy_turns, sampled_batch = (
        behaviour_bench.scored,
        gen.greedy_turns,
        gen.sampled_batch,
    )
    monkeypatch.setattr(
        behaviour_bench,
        "scored",
        lambda policy, secrets, game, *rest: scored(policy, thin(secrets, game), game, *rest),
    )
    monkeypatch.setattr(
        gen,
        "greedy_turns",
        lambda policy, secrets, game: greedy_turns(policy, thin(secrets, game), game),
    )
    monkeypatch.setattr(
        gen,
        "sampled_batch",
        lambda policy, secrets, game, *rest: sampled_batch(
            policy, thin(secrets, game), game, *rest
        ),
    )

    def recording(policy, heldout, samples, seed, question_set, candidate_format):
        played.append((list(heldout), samples, seed, question_set, candidate_format))
        return heldout_and_n200(policy, heldout, samples, seed, question_set, candidate_format)

    monkeypatch.setattr(gen, "heldout_and_n200", recording)
    referenced = []  # references: tested above
    monkeypatch.setattr(
        gen,
        "references",
        lambda qs, split: (
            referenced.append((qs, split))
            or [
                {
                    "question_set": qs,
                    "policy": "bayes",
                    "split_seed": split,
                    "heldout": 1.0,
                    "gen200": 1.0,
                }
            ]
        ),
    )
    out = tmp_path / "generalization.json"
    generalization(["--runs", str(tmp_path / "runs"), "--out", str(out)])
    # FAST: --n-heldout 4; the run's --eval-samples, the seed of its final evaluation (step 1),
    # its prompts
    assert played == [(secret_split(100, 4, seed=3)[1], 3, eval_seed(5, 1), "paper", OTHER_FORMAT)]
    written = json.loads(out.read_text())
    assert referenced == [("paper", 3)] and written["references"][0]["split_seed"] == 3
    (row,) = written["runs"]
    assert (
        row["question_set"],
        row["estimator"],
        row["seed"],
        row["split_seed"],
        row["steps"],
    ) == ("paper", "echo", 5, 3, 1)
    assert (
        row["kept_step"] == 1 and row["changed"]["split_seed"] == 3 and "seed" not in row["changed"]
    )
    assert (row["heldout_greedy"], row["heldout_sampled"]) == (
        summary["final_eval"]["eval/resolve_rate"],
        summary["final_eval"]["eval/sampled_resolve_rate"],
    )
    for key in (
        "gen200_greedy",
        "gen200_sampled",
        "gen200_redundant_rate_greedy",
        "gen200_redundant_rate_sampled",
    ):
        assert 0.0 <= row[key] <= 1.0
    assert "commit" in written and "command" in written
    assert (
        row["gen200_threshold_points_greedy"] >= 0 and row["gen200_threshold_points_sampled"] >= 0
    )
    # NaN here: a random model reads no action
    assert {"heldout_repeat_ratio", "gen200_repeat_ratio"} <= set(row)
    # the row names the code that trained the run (its summary's) and the code that scored it, today
    assert (
        summary["code"] == code_version() == row["measured"]["scored"]
        and row["measured"]["trained"] == summary["code"]
    )
    assert row["measured"]["date"] == written["date"]
    # a row written before the points and the repeat ratios were counted gets them,
    # the same as a full scoring
    assert (
        row["gen200_opening_greedy"].count(", ") <= 1
        and 0.0 < row["gen200_opening_share_greedy"] <= 1.0
    )
    out.write_text(
        json.dumps(
            {
                **written,
                "runs": [
                    {
                        k: v
                        for k, v in row.items()
                        if not any(w in k for w in ("threshold", "repeat", "opening"))
                    }
                    | {
                        "gen200_threshold_median_corr_greedy": 0.5,
                        "gen200_threshold_median_corr_sampled": 0.25,
                    }
                ],
            }
        )
    )
    generalization(["--runs", str(tmp_path / "runs"), "--out", str(out)])
    (filled,) = json.loads(out.read_text())["runs"]
    assert (
        len(played) == 1
        and filled["gen200_threshold_points_greedy"] == row["gen200_threshold_points_greedy"]
    )
    assert json.dumps(filled["gen200_threshold_median_corr_greedy"]) == json.dumps(
        row["gen200_threshold_median_corr_greedy"]
    )
    assert (
        filled["gen200_threshold_median_corr_sampled"] == 0.25
        and "gen200_threshold_points_sampled" not in filled
    )
    assert (filled["gen200_opening_greedy"], filled["gen200_opening_share_greedy"]) == (
        row["gen200_opening_greedy"],
        row["gen200_opening_share_greedy"],
    )
    assert [json.dumps(filled[k]) for k in ("heldout_repeat_ratio", "gen200_repeat_ratio")] == [
        json.dumps(row[k]) for k in ("heldout_repeat_ratio", "gen200_repeat_ratio")
    ]
    out.write_text(json.dumps(written))
    # scored again: the row is reused, not played; --rescore plays it again
    generalization(["--runs", str(tmp_path / "runs"), "--out", str(out)])
    assert len(played) == 1 and json.loads(out.read_text())["runs"] == [row]
    generalization(["--runs", str(tmp_path / "runs"), "--out", str(out), "--rescore"])
    assert len(played) == 2
    # a run scored before whose directory is gone keeps its row; pairing stays within a question set
    written = json.loads(out.read_text())
    others = [
        {**row, "estimator": "grpo"},
        {**row, "question_set": "binary", "estimator": "rloo", "split_seed": 7},
    ]
    out.write_text(
        json.dumps(
            {
                **written,
                "runs": [row, *others],
                "references": written["references"]
                + [{**written["references"][0], "question_set": "binary", "split_seed": 7}],
            }
        )
    )
    generalization(["--runs", str(tmp_path / "runs"), "--out", str(out)])
    rewritten = json.loads(out.read_text())
    assert len(played) == 2 and len(rewritten["runs"]) == 3 and referenced == [("paper", 3)]
    flags = flags_of(row)  # FAST's settings, beyond the split
    assert (
        "--split-seed" not in flags
        and "`--steps 1`" in flags
        and f"`--candidate-format {OTHER_FORMAT}`" in flags
    )
    assert list(rewritten["paired"]["paper"][flags]) == ["grpo"] and rewritten["paired"][
        "binary"
    ] == {flags: {}}
    assert rewritten["paired"]["paper"][flags]["grpo"]["gen200_greedy"]["mean_difference"] == 0.0
    # a run with more flags is its own group: paired with no run without them
    refused = {**row, "estimator": "rloo", "changed": {**row["changed"], "refusal_rate": 0.5}}
    out.write_text(json.dumps({**rewritten, "runs": rewritten["runs"] + [refused]}))
    generalization(["--runs", str(tmp_path / "runs"), "--out", str(out)])
    grouped = json.loads(out.read_text())
    assert len(grouped["runs"]) == 4 and grouped["paired"]["paper"] == {
        flags: rewritten["paired"]["paper"][flags],
        flags_of(refused): {},
    }
    with pytest.raises(SystemExit):
        generalization(["--runs", str(tmp_path / "nothing"), "--out", str(tmp_path / "none.json")])


def test_the_report_renders_each_question_set_from_the_file(tmp_path):
    """bench/LAB.md's section of every run is read from generalization.json, not typed: each run a
    row, each estimator its mean ± SEM over the seeds of one split and flags, the binary set its
    belief columns, the paired test and the references of each set."""
    from bench import report_tables
    from bench.report_generalization import row_changes, section_generalization

    def row(qs, e, s, g):
        return {
            "question_set": qs,
            "estimator": e,
            "seed": s,
            "split_seed": 9,
            "steps": 40,
            "kept_step": 35,
            "changed": {"split_seed": 9},
            "train_seconds": 120.0,
            "threads": 1,
            "samples": 4,
            "heldout_greedy": 1.0,
            "heldout_sampled": 0.9,
            "gen200_greedy": g,
            "gen200_sampled": 0.5,
            "gen200_redundant_rate_greedy": 0.25,
            "gen200_redundant_rate_sampled": 0.0,
            "gen200_eliminated_fraction_greedy": 0.4,
            "gen200_threshold_median_corr_greedy": 0.8,
            "gen200_threshold_median_corr_sampled": float("nan"),
        }

    runs = [
        {**row("paper", "echo", s, g), "heldout_repeat_ratio": 0.5, "gen200_repeat_ratio": g + 0.2}
        for s, g in ((0, 0.5), (1, 0.7))
    ] + [row("paper", "grpo", 0, 0.1), row("binary", "echo", 0, 0.3)]
    refs = [
        {"question_set": qs, "policy": p, "split_seed": 9, "heldout": 1.0, "gen200": v}
        for qs in ("paper", "binary")
        for p, v in (("bayes", 1.0), ("fixed_sequence", 0.85))
    ]
    data = {
        "command": "python bench/generalization.py",
        "machine": "2 CPU cores",
        "date": "2026-01-01",
        "runs": runs,
        "references": refs,
        "paired": {},
    }
    (tmp_path / "generalization.json").write_text(json.dumps(data))
    with report_tables.reading(str(tmp_path)):
        text = "\n".join(section_generalization())
    assert (
        "| echo | 1 | 9 | `--split-seed 9` | 40 (35) | 2 (1) | 100.0 / 90.0 | 70.0 / 50.0 | "
        "25.0 / 0.0 | 0.50 / 0.90 |" in text
    )
    assert (
        "| ECHO | 9 | - | 0, 1 | 100.0 ± 0.0 | 90.0 ± 0.0 | 60.0 ± 10.0 | 50.0 ± 0.0 | "
        "25.0 ± 0.0 | 0.80 ± 0.10 |" in text
    )
    # scored before the ratio was
    assert "| GRPO | 9 | - | 0 | 100.0 | 90.0 | 10.0 | 50.0 | 25.0 | n/a |" in text
    assert "| 30.0 / 50.0 | 25.0 / 0.0 | n/a / n/a | 0.80 / n/a | 0.40 |" in text
    counted = {
        **row("binary", "rloo", 0, 0.3),
        "gen200_threshold_points_greedy": 4,
        "gen200_threshold_points_sampled": 0,
    }
    (tmp_path / "generalization.json").write_text(json.dumps({**data, "runs": runs + [counted]}))
    with report_tables.reading(str(tmp_path)):
        text = "\n".join(section_generalization())
    assert (
        "| n/a / n/a | 0.80 (4) / n/a (0) | 0.40 | n/a |" in text
        and "fewer than 3 distinct pairs" in text
    )
    # each run's opening, and 1..200 by opening over the runs that measured one
    opened = [
        {**r, "gen200_opening_greedy": o, "gen200_opening_share_greedy": 0.75}
        for r, o in zip(
            runs[:3], ("digit_sum, tens_digit", "tens_digit, last_digit", "digit_sum, tens_digit")
        )
    ]
    (tmp_path / "generalization.json").write_text(json.dumps({**data, "runs": opened + runs[3:]}))
    with report_tables.reading(str(tmp_path)):
        text = "\n".join(section_generalization())
    assert "| 0.50 / 0.90 | tens digit, last digit (75.0) |" in text
    assert "| digit sum, tens digit | 2 | echo 0, grpo 0 | 30.0 ± 20.0 | 25.0 ± 0.0 |" in text
    assert "| tens digit, last digit | 1 | echo 1 | 70.0 | 25.0 |" in text
    assert text.count("| Opening | Runs |") == 1  # the binary set's run measured none
    # each row says when and with which code it was measured (the training's where known) and how
    # many of the files its figures depend on have changed since, in a scratch repository
    repo = scratch_repository(tmp_path, "generalization.json")
    first = code_version(str(repo))["commit"]
    measured = [
        {
            **row("paper", "rloo", s, 0.2),
            "measured": {"date": f"2026-01-0{s + 2}", "scored": scored, "trained": trained},
        }
        for s, scored, trained in (
            (0, {"commit": "f" * 40}, {"commit": first}),
            (1, {"commit": "e" * 40}, None),
        )
    ]
    (tmp_path / "generalization.json").write_text(json.dumps({**data, "runs": runs + measured}))
    with report_tables.reading(str(tmp_path), str(repo)):
        text = "\n".join(section_generalization())
    assert "| 2026-01-02 (0 files changed since) |" in text  # trained at HEAD
    assert "| 2026-01-03 (changes not known) |" in text  # scored at a commit not in the history
    (repo / "env.py").write_text("N_MAX = 200\n")
    commit_all(repo, "change the game")
    with report_tables.reading(str(tmp_path), str(repo)):
        text = "\n".join(section_generalization())
    assert "| 2026-01-02 (1 file changed since) |" in text
    # what the README's line says "older code" by
    with report_tables.reading(str(tmp_path), str(repo)):
        assert (
            row_changes(measured[0]) == ["env.py"]
            and row_changes(measured[1]) is None
            and row_changes(runs[0]) is None
        )
    assert text.count("| not recorded |") == 4  # the rows without the record
    assert "ECHO minus GRPO on split 9, paired over seeds 0: " in text
    assert "1..200 greedy 40.0 points" in text
    assert text.index("### Paper question set") < text.index("### Binary question set")
    assert text.count("| fixed_sequence | 9 | 100.0 | 85.0 |") == 2
    # runs with more flags, or of another split, are averaged and paired apart
    refused = [
        {**row("paper", e, s, g), "changed": {"split_seed": 9, "refusal_rate": 0.3}, "steps": 80}
        for e, s, g in (("echo", 0, 0.9), ("grpo", 0, 0.2))
    ]
    other = {**row("paper", "echo", 0, 0.1), "split_seed": 8, "changed": {"split_seed": 8}}
    data = {**data, "runs": runs + refused + [other]}
    (tmp_path / "generalization.json").write_text(json.dumps(data))
    with report_tables.reading(str(tmp_path)):
        text = "\n".join(section_generalization())
    assert "| ECHO | 9 | - | 0, 1 | 100.0 ± 0.0 | 90.0 ± 0.0 | 60.0 ± 10.0 |" in text
    assert "| ECHO | 9 | `--refusal-rate 0.3` | 0 | 100.0 | 90.0 | 90.0 |" in text
    assert "| ECHO | 8 | - | 0 | 100.0 | 90.0 | 10.0 |" in text  # not paired with split 9's GRPO
    assert "ECHO minus GRPO on split 9, paired over seeds 0: " in text
    assert (
        "ECHO minus GRPO on split 9, both with `--refusal-rate 0.3`, paired over seeds 0: " in text
    )
    assert "1..200 greedy 70.0 points" in text and "on split 8" not in text


def test_the_repeat_ratio_scores_each_action_under_its_own_episodes_next_prompt():
    """again_probabilities pairs turn t of an episode with turn t + 1 of the same episode (rollouts
    interleave in play order), skips an unreadable action and an episode's last turn, and scores
    a_t's tokens under h_{t+1}: a policy that never asks what its prompt shows was asked scores 0
    there; one its history does not move scores what it sampled."""
    import math

    import torch

    from bench.bisection_behaviour import again_probabilities
    from metrics import repeat_ratio
    from rollouts import RolloutBatch

    class Turn:
        def __init__(self, episode, invalid=False):
            self.episode, self.invalid = episode, invalid

    class Stub:
        """log pi of a completion: log 0.5 per token, or -inf where the prompt already holds it."""

        def __init__(self, reads):
            self.reads = reads

        def score(self, prompts, completions):
            asked = [
                self.reads and any(p[k : k + len(c)] == c for k in range(len(p)))
                for p, c in zip(prompts, completions)
            ]
            return torch.tensor([[-math.inf if a else math.log(0.5)] * 2 for a in asked]), None

    # two episodes interleaved; each prompt holds the actions its episode took before it
    b = RolloutBatch(secrets=[1], group_size=2, max_turns=10)
    b.records = [Turn(0), Turn(1), Turn(0, invalid=True), Turn(1), Turn(0), Turn(1)]
    b.completion_ids = [[10, 11], [20, 21], [12, 13], [22, 23], [14, 15], [24, 25]]
    b.prompt_ids = [[0], [0], [0, 10, 11], [0, 20, 21], [0, 10, 11, 12, 13], [0, 20, 21, 22, 23]]
    b.logprobs = [[math.log(0.5)] * 2] * 3 + [[math.log(0.25)] * 2] * 3
    before, after = again_probabilities(Stub(reads=True), b)
    # (0,2) (1,3) (3,5); not (2,4)
    assert before == pytest.approx([0.25, 0.25, 0.25**2]) and after == [0.0, 0.0, 0.0]
    before, after = again_probabilities(Stub(reads=False), b)
    assert after == pytest.approx([0.25] * 3) and repeat_ratio(before, after) == pytest.approx(
        0.75 / (2 * 0.25 + 0.0625)
    )


def test_changed_settings_are_written_as_train_py_takes_them():
    """A run's changed settings read as flags train.py parses back to the same values: a switch
    alone, a value after its name."""
    changed = {"expected_info": True, "anneal_lr": False, "lr": 0.001}
    text = changed_text(changed)
    assert text == "`--no-anneal-lr` `--expected-info` `--lr 0.001`"
    import config

    cfg = config.config_from_flags(text.replace("`", "").split())
    assert {k: getattr(cfg, k) for k in changed} == changed
