"""The binary set's final figures (bench/binary_final.py, bench/bisection_behaviour.py): bisection
scores as bisection, pairing is by seed, and a trained run's kept checkpoint is scored on its own
held-out split (train.py's own figures, played again) and on 1..200."""
import json
import math

import pytest

from bench.binary_final import carried_over, main as binary_final, paired, references
from bench.bisection_behaviour import final_fields, halving_share, heldout_and_n200, replayed_turns, summary, turns_of
from env import GameConfig, secret_split
from experiment import eval_seed
from reference import BayesPolicy, RandomPolicy
from stats import paired_t_test
from test_train import model_dir, run  # noqa: F401  (model_dir: a fixture)


def test_bisection_cuts_at_the_median_and_halves_the_candidates():
    """The Bayes policy on the binary set asks for the median: its cut points follow the median of
    C_t (correlation near 1, each cut leaving halves of C_t) and it removes about half of C_t
    each turn; a policy that always cut at 50.5 would not correlate."""
    cfg = GameConfig(question_set="binary")
    comparisons, eliminated = turns_of(replayed_turns(BayesPolicy(), secret_split()[1], cfg))
    s = summary(comparisons, eliminated)
    assert s["comparisons"] == len(comparisons) > 20 and s["threshold_median_corr"] > 0.99
    assert all(round(e * n) in (n // 2, n - n // 2) for _, _, n, e in comparisons)   # each cut halves C_t
    assert 0.45 < s["mean_fraction_eliminated"] <= 0.5 + 1e-9
    fixed = summary([(50.5, m, n, e) for _, m, n, e in comparisons], eliminated)
    assert math.isnan(fixed["threshold_median_corr"]) or abs(fixed["threshold_median_corr"]) < 1e-6


def test_halving_share_is_one_for_bisection_and_lower_for_random_questions():
    """Teacher-forced on the Bayes policy's states: bisection halves C_t in every one of them (in
    a drawn universe too); random questions do not."""
    cfg = GameConfig(question_set="binary")
    assert halving_share(BayesPolicy(), [3, 50, 97], cfg) == 1.0
    assert halving_share(BayesPolicy(), [12, 40], cfg, universes=[range(5, 31), range(33, 91)]) == 1.0
    assert halving_share(RandomPolicy(0), secret_split()[1], cfg) < 0.3


def test_final_fields_name_the_held_out_figures():
    scores = {"heldout": {"greedy": 0.5, "sampled": 0.25, "behaviour_greedy": {"threshold_median_corr": 0.9,
                                                                               "mean_fraction_eliminated": 0.4},
                          "behaviour_sampled": {"comparisons": 0, "mean_fraction_eliminated": 0.3}},
              "n200": {"greedy": 0.1, "sampled": 0.2, "behaviour_greedy": {}, "behaviour_sampled": {}}}
    f = final_fields(scores)
    assert (f["heldout_greedy"], f["heldout_sampled"], f["n200_greedy"], f["n200_sampled"]) == (0.5, 0.25, 0.1, 0.2)
    assert f["threshold_median_corr_greedy"] == 0.9 and math.isnan(f["threshold_median_corr_sampled"])
    assert f["eliminated_fraction_per_turn"] == 0.4


def test_references_bound_what_a_run_is_scored_against():
    """Bisection resolves every secret of 1..100 and of 1..200 within 10 turns (2^7 >= 100, 2^8 >=
    200); the best fixed sequence needs no belief and does worse on the wider universe than on its
    held-out secrets' but better than random questions; every rate is a share of its secrets."""
    heldout = secret_split()[1]
    ref = references(heldout)
    assert ref["bisection"] == {"heldout": 1.0, "n200": 1.0}
    for key, n in (("heldout", len(heldout)), ("n200", 200)):
        assert ref["random"][key] < ref["fixed_sequence"][key] < 1.0
        assert all(round(ref[p][key] * n) == pytest.approx(ref[p][key] * n) for p in ref)


def test_paired_differences_are_by_seed_and_skip_unpaired_seeds():
    rows = [{"estimator": e, "seed": s, "heldout_greedy": v, "heldout_sampled": v, "n200_greedy": 0.0, "n200_sampled": 0.0}
            for e, s, v in [("echo", 0, 0.5), ("echo", 1, 0.7), ("echo", 2, 0.9), ("grpo", 0, 0.4), ("grpo", 1, 0.5),
                            ("grpo", 2, 0.6), ("grpo", 3, 0.0)]]
    g = paired(rows)["grpo"]["heldout_greedy"]
    assert g["seeds"] == [0, 1, 2] and g["mean_difference"] == pytest.approx(0.2)
    assert (g["t"], g["p"]) == pytest.approx(paired_t_test([0.5, 0.7, 0.9], [0.4, 0.5, 0.6]))
    assert list(paired(rows)) == ["grpo"]


def test_rows_of_runs_not_scored_now_are_carried_over():
    before = [{"estimator": "echo", "seed": 0, "v": 1}, {"estimator": "grpo", "seed": 0, "v": 2},
              {"estimator": "echo", "seed": 1, "v": 3}]
    assert carried_over(before, [{"estimator": "echo", "seed": 0, "v": 9}]) == before[1:]
    assert carried_over(before, []) == before and carried_over([], before) == []


def test_a_trained_run_is_scored_on_its_own_split_and_on_1_to_200(tmp_path, model_dir, monkeypatch):  # noqa: F811
    (summary,) = run(tmp_path / "runs", model_dir, "--steps", "1", "--question-set", "binary", "--split-seed", "3",
                     "--validation-secrets", "2", "--eval-samples", "1", "--run-name", "echo-seed5", "--seed", "5")
    import bench.binary_final as final
    played = []

    def recording(policy, heldout, samples, seed):
        played.append((list(heldout), samples, seed))
        return heldout_and_n200(policy, heldout, samples, seed)
    monkeypatch.setattr(final, "heldout_and_n200", recording)
    referenced = []                                                    # references is tested above
    monkeypatch.setattr(final, "references", lambda h: referenced.append(h) or {"bisection": {"heldout": 1.0, "n200": 1.0}})
    out = tmp_path / "final.json"
    binary_final(["--runs", str(tmp_path / "runs"), "--out", str(out)])
    # FAST: --n-heldout 4; the run's --eval-samples and the seed of its final evaluation (step 1)
    assert played == [(secret_split(100, 4, seed=3)[1], 1, eval_seed(5, 1))] and played[0][0] != secret_split(100, 4)[1]
    written = json.loads(out.read_text())
    assert referenced == [secret_split(100, 4, seed=3)[1]] and list(written["references"]) == ["3"]   # its own split
    (row,) = written["runs"]
    assert (row["estimator"], row["seed"], row["steps"], row["kept_step"], row["split_seed"]) == ("echo", 5, 1, 1, 3)
    assert row["changed"]["split_seed"] == 3 and row["changed"]["steps"] == 1 and "seed" not in row["changed"]
    # played again with the run's own evaluation seed: train.py's held-out figures, exactly
    assert (row["heldout_greedy"], row["heldout_sampled"]) == (summary["final_eval"]["eval/resolve_rate"],
                                                               summary["final_eval"]["eval/sampled_resolve_rate"])
    for key in ("heldout_greedy", "heldout_sampled", "n200_greedy", "n200_sampled", "eliminated_fraction_per_turn"):
        assert 0.0 <= row[key] <= 1.0
    # scored again into the same file: the row is reused, not played; --rescore plays it again
    binary_final(["--runs", str(tmp_path / "runs"), "--out", str(out)])
    assert len(played) == 1 and json.loads(out.read_text())["runs"] == [row]
    binary_final(["--runs", str(tmp_path / "runs"), "--out", str(out), "--samples", "2"])   # scored another way
    assert len(played) == 2 and played[1][1] == 2
    binary_final(["--runs", str(tmp_path / "runs"), "--out", str(out), "--samples", "2", "--rescore"])
    assert len(played) == 3 and json.loads(out.read_text())["runs"][0]["samples"] == 2
    # a run scored before whose directory is gone keeps its row, and its split's references
    gone, kept = {**row, "estimator": "rloo", "split_seed": 7}, {"bisection": {"heldout": 0.5, "n200": 0.25}}
    written = json.loads(out.read_text())
    out.write_text(json.dumps({**written, "runs": [row, gone], "references": {**written["references"], "7": kept}}))
    binary_final(["--runs", str(tmp_path / "runs"), "--out", str(out)])
    rewritten = json.loads(out.read_text())
    assert len(played) == 3 and rewritten["runs"] == [row, gone] and rewritten["references"]["7"] == kept
    assert rewritten["paired"]["rloo"]["heldout_greedy"]["seeds"] == [5]
    with pytest.raises(SystemExit):
        binary_final(["--runs", str(tmp_path / "nothing"), "--out", str(out)])


def test_the_readme_line_averages_each_estimator_over_its_seeds():
    """Two ECHO seeds at 50% and 70% greedy held-out: mean 60, SEM 10; one GRPO seed: no SEM.
    The references are the file's, not typed."""
    from bench.report_results import binary_final_summary
    row = lambda e, s, g: {"estimator": e, "seed": s, "steps": 200, "heldout_greedy": g, "heldout_sampled": 0.5,  # noqa: E731
                           "n200_greedy": 0.1, "n200_sampled": 0.2, "threshold_median_corr_sampled": 0.3}
    ref = {"bisection": {"heldout": 1.0}, "fixed_sequence": {"heldout": 0.9}}
    line = binary_final_summary({"runs": [row("echo", 1, 0.7), row("echo", 0, 0.5), row("grpo", 0, 0.2)],
                                 "references": {"1": ref}})
    assert "ECHO 60 ± 10 greedy / 50 ± 0 sampled" in line and "(seeds 0, 1)" in line
    assert "GRPO 20 greedy" in line and "bisection resolves 100 and the best fixed sequence 90" in line
    assert "correlation 0.30 ± 0.00 sampled" in line and "not measurable" not in line
    unmeasured = {**row("echo", 2, 0.6), "threshold_median_corr_sampled": math.nan}
    line = binary_final_summary({"runs": [row("echo", 1, 0.7), unmeasured], "references": {}})
    assert "correlation 0.30 (not measurable on seed 2) sampled (seeds 1, 2)" in line


def test_the_older_runs_come_last_and_leave_the_readme_once_the_finals_exist(tmp_path):
    """The 60-minute runs (settings chosen on held-out scores) are RESULTS.md's last binary section,
    and the README shows their figure only while binary_final.json does not exist; a missing older
    file drops only its own section."""
    import shutil
    from bench import report_binary, report_tables
    from bench.report_results import readme_summary
    shutil.copy(report_tables.RESULTS + "/binary_final.json", tmp_path)
    with report_tables.reading(str(tmp_path)):
        text, readme = "\n".join(report_binary.section_binary()), "\n".join(readme_summary())
    assert "### The binary set's defaults" in text and "Older runs" not in text
    assert "the default (200 steps)" in readme and "older runs" not in readme
    shutil.copy(report_tables.RESULTS + "/reproduce_binary_60min_g8.json", tmp_path)
    with report_tables.reading(str(tmp_path)):
        text, readme = "\n".join(report_binary.section_binary()), "\n".join(readme_summary())
    assert text.index("### Can the built-in model represent bisection?") < text.index("### Older runs") < text.index("#### ECHO at G = 8")
    assert "older runs" not in readme
    (tmp_path / "binary_final.json").unlink()
    with report_tables.reading(str(tmp_path)):
        readme = "\n".join(readme_summary())
    assert "older runs of up to 60 minutes" in readme and "not a clean estimate" in readme
