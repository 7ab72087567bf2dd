"""The binary set's measures and report (bench/bisection_behaviour.py, bench/report_binary.py):
bisection scores as bisection, the lab renders the finals' file (the older runs come last), and
RESULTS.md's sentence on what changed since split 1 says only what the files and git show."""

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


def test_the_older_runs_come_last_in_the_lab(tmp_path):
    """The 60-minute runs (settings chosen on held-out scores) are bench/LAB.md's last binary
    section; a missing older file drops only its own section; the README's summary shows neither
    them nor split 1's finals (both are the lab's)."""
    import shutil

    from bench import report_binary, report_tables
    from bench.report_results import readme_summary

    shutil.copy(report_tables.RESULTS + "/binary_final.json", tmp_path)
    with report_tables.reading(str(tmp_path)):
        text = "\n".join(report_binary.section_binary())
    assert "### The binary set's defaults" in text and "Older runs" not in text
    shutil.copy(report_tables.RESULTS + "/reproduce_binary_60min_g8.json", tmp_path)
    with report_tables.reading(str(tmp_path)):
        text, readme = "\n".join(report_binary.section_binary()), "\n".join(readme_summary())
    assert (
        text.index("### Can the built-in model represent bisection?")
        < text.index("### Older runs")
        < text.index("#### ECHO at G = 8")
    )
    assert "older runs" not in readme and "split 1" not in readme


def test_what_changed_since_split_one_is_what_git_shows():
    """The figures of the sentence beside the binary set's split 3594 rows (templates/versus.md):
    split 1's read from binary_final.json, and, from git, that its runs were all committed before
    the built-in model's tokenizer wrote numbers digit by digit while split 3594's were scored
    after; with a scoring commit git does not know, it claims no tokenizer."""
    import json
    from pathlib import Path

    from bench import report_tables
    from bench.report_binary import since_split_one

    general = json.loads((Path(report_tables.RESULTS) / "generalization.json").read_text())
    report_tables.use(report_tables.RESULTS)
    since = since_split_one(general)
    assert since["then"] == "1" and since["date"]  # split 1's runs, as binary_final.json says
    if report_tables.git("rev-parse", "HEAD") is not None:
        assert since["before_digits"]
    unknown = {
        **general,
        "runs": [
            {**r, "measured": {"scored": {"commit": "f" * 40}, "trained": None}}
            for r in general["runs"]
            if r["question_set"] == "binary"
        ],
    }
    assert not since_split_one(unknown)["before_digits"]
