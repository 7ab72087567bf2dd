"""The binary set's measures and report (bench/bisection_behaviour.py, bench/report_binary.py):
bisection scores as bisection, and the report renders the finals' file (its README line averages
each estimator over its seeds; the older runs come last)."""

import math

from bench.bisection_behaviour import halving_share, replayed_turns, summary, turns_of
from env import GameConfig, secret_split
from reference import BayesPolicy, RandomPolicy


def test_bisection_cuts_at_the_median_and_halves_the_candidates():
    """The Bayes policy on the binary set asks for the median: its cut points follow the median of
    C_t (correlation near 1, each cut leaving halves of C_t) and it removes about half of C_t
    each turn; a policy that always cut at 50.5 would not correlate."""
    cfg = GameConfig(question_set="binary")
    comparisons, eliminated = turns_of(replayed_turns(BayesPolicy(), secret_split()[1], cfg))
    s = summary(comparisons, eliminated)
    assert s["comparisons"] == len(comparisons) > 20 and s["threshold_median_corr"] > 0.99
    # each cut halves C_t
    assert all(round(e * n) in (n // 2, n - n // 2) for _, _, n, e in comparisons)
    assert 0.45 < s["mean_fraction_eliminated"] <= 0.5 + 1e-9
    fixed = summary([(50.5, m, n, e) for _, m, n, e in comparisons], eliminated)
    assert math.isnan(fixed["threshold_median_corr"]) or abs(fixed["threshold_median_corr"]) < 1e-6


def test_the_correlation_counts_its_distinct_points_and_needs_three():
    """A greedy policy that cuts at 19.5 in the two beliefs it keeps meeting and at 59.5 once
    rests its r on two or three points however many turns it plays: two give no r at all (it
    would be +-1 by construction), three give one, and the count says how little it rests on."""
    two = [(19.5, 100, 200, 0.1)] * 100 + [(59.5, 6, 12, 0.5)] * 4
    s = summary(two, [0.1] * 104)
    assert (s["comparisons"], s["threshold_points"]) == (104, 2) and math.isnan(
        s["threshold_median_corr"]
    )
    three = two + [(19.5, 101, 199, 0.1)] * 100
    s = summary(three, [0.1] * 204)
    assert s["threshold_points"] == 3 and -1.0 <= s["threshold_median_corr"] < -0.9
    assert summary([], [0.0])["threshold_points"] == 0


def test_halving_share_is_one_for_bisection_and_lower_for_random_questions():
    """Teacher-forced on the Bayes policy's states: bisection halves C_t in every one of them (in
    a drawn universe too); random questions do not."""
    cfg = GameConfig(question_set="binary")
    assert halving_share(BayesPolicy(), [3, 50, 97], cfg) == 1.0
    assert (
        halving_share(BayesPolicy(), [12, 40], cfg, universes=[range(5, 31), range(33, 91)]) == 1.0
    )
    assert halving_share(RandomPolicy(0), secret_split()[1], cfg) < 0.3


def test_the_readme_line_averages_each_estimator_over_its_seeds():
    """Two ECHO seeds at 50% and 70% greedy held-out: mean 60, SEM 10; one GRPO seed: no SEM.
    The references are the file's, not typed."""
    from bench.report_results import binary_final_summary

    row = lambda e, s, g: {
        "estimator": e,
        "seed": s,
        "steps": 200,
        "heldout_greedy": g,
        "heldout_sampled": 0.5,
        "n200_greedy": 0.1,
        "n200_sampled": 0.2,
        "threshold_median_corr_sampled": 0.3,
    }
    ref = {"bisection": {"heldout": 1.0}, "fixed_sequence": {"heldout": 0.9}}
    line = binary_final_summary(
        {
            "runs": [row("echo", 1, 0.7), row("echo", 0, 0.5), row("grpo", 0, 0.2)],
            "references": {"1": ref},
        }
    )
    assert "ECHO 60 ± 10 greedy / 50 ± 0 sampled" in line and "(seeds 0, 1)" in line
    assert (
        "GRPO 20 greedy" in line and "bisection resolves 100 and the best fixed sequence 90" in line
    )
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
    assert (
        text.index("### Can the built-in model represent bisection?")
        < text.index("### Older runs")
        < text.index("#### ECHO at G = 8")
    )
    assert "older runs" not in readme
    (tmp_path / "binary_final.json").unlink()
    with report_tables.reading(str(tmp_path)):
        readme = "\n".join(readme_summary())
    assert "older runs of up to 60 minutes" in readme and "not a clean estimate" in readme
