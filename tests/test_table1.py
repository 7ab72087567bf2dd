"""bench/table1.py: Table 1 over training seeds, each seed's kept checkpoint played once."""

import json
import math

from bench import table1
from tools import report


def metrics(resolve: float, zero: float) -> dict:
    row = {m: 0.5 for m in table1.TABLE1}
    return {**row, "resolve_rate": resolve, "zero_rate": zero, "res_after_zero": math.nan}


def test_an_estimators_row_is_its_seeds_spread_greedy_and_sampled(tmp_path):
    """Two seeds of one estimator and one of another: each row's mean and SEM are over its own
    training seeds' single plays, greedy apart from sampled; a metric no seed defines is NaN."""
    runs, configs, results = [], {}, {}
    for estimator, seed, greedy, sampled in [
        ("echo", 0, 1.0, 0.9),
        ("echo", 1, 0.6, 0.7),
        ("grpo", 0, 0.2, 0.4),
    ]:
        run = tmp_path / f"{estimator}-seed{seed}"
        (run / "checkpoint").mkdir(parents=True)
        runs.append(run)
        configs[str(run)] = {"estimator": estimator, "seed": seed}
        key = f"checkpoint:{run / 'checkpoint'}"
        results[key] = {"runs": {1: metrics(greedy, 0.1)}}
        results[key + report.SAMPLED] = {"runs": {1: metrics(sampled, 0.3)}}
    rows = {r["policy"]: r for r in table1.estimator_rows(results, runs, configs)}
    assert rows["echo"]["seeds"] == [0, 1] and rows["grpo"]["seeds"] == [0]
    mean, sem = rows["echo"]["greedy"]["resolve_rate"]
    assert math.isclose(mean, 0.8) and math.isclose(sem, 0.2)  # std(1.0, 0.6) / sqrt(2)
    assert math.isclose(rows["echo"]["sampled"]["resolve_rate"][0], 0.8)
    assert math.isclose(rows["echo"]["sampled"]["zero_rate"][0], 0.3)
    assert rows["grpo"]["greedy"]["resolve_rate"][0] == 0.2
    assert math.isnan(rows["grpo"]["greedy"]["resolve_rate"][1])  # one seed: no spread
    assert math.isnan(rows["echo"]["greedy"]["res_after_zero"][0])
    assert rows["echo"]["per_seed"]["1"]["greedy"]["resolve_rate"] == 0.6
    json.dumps(rows)  # the file's rows are JSON


def test_runs_of_mixed_splits_stop_with_one_sentence(capsys):
    configs = {
        "a": {"split_seed": 1, "question_set": "paper", "eval_samples": 4},
        "b": {"split_seed": 2, "question_set": "paper", "eval_samples": 4},
    }
    try:
        table1.one_split(configs)
    except SystemExit as stop:
        assert stop.code == 2 and "mix splits" in capsys.readouterr().err
    else:
        raise AssertionError("mixed splits were accepted")
    assert table1.one_split({"a": configs["a"]}) == (1, "paper", 4)
