"""The speed table's row for bench/train_speed.py: read from its file, the two runs' times and
outcomes in words, the revision it was compared with left to the file (no commit in the text)."""
import json

from bench import report_tables
from bench.report_speed import section_speed


def test_a_cold_train_speed_file_is_one_row_naming_both_runs(tmp_path):
    side = lambda wall, greedy: {"rl_seconds": wall / 2, "process_wall": wall, "final_greedy_resolve": greedy,  # noqa: E731
                                 "final_sampled_resolve": 1.0}
    data = {"command": "python bench/train_speed.py --baseline 0123abc --cold", "machine": "2 CPU cores",
            "date": "2026-01-01", "estimator": "echo", "train_flags": "", "cold": True, "like_for_like": False,
            "config_differences": {"universe": [None, "full"]}, "baseline_revision": "0123abc",
            "baseline": side(130.0, 0.0), "current": side(162.0, 1.0)}
    (tmp_path / "train_speed_cold.json").write_text(json.dumps(data))
    with report_tables.reading(str(tmp_path)):
        text = "\n".join(section_speed())
    assert "`python bench/train_speed.py --baseline REVISION --cold`" in text and "0123abc" not in text
    assert "the whole run from an empty warm-up cache (settings that differ: universe)" in text
    assert "an older revision (the file names it) 130.0 s, held-out resolve greedy 0.00, sampled 1.00" in text
    assert "the code measured 162.0 s, held-out resolve greedy 1.00" in text
