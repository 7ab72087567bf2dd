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
        # evaluate.py's run ids (tools.report.turns_by_model), one play each
        results[key] = {"runs": {"run1": metrics(greedy, 0.1)}}
        results[key + report.SAMPLED] = {"runs": {"run1": metrics(sampled, 0.3)}}
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


def test_results_md_table1_reads_the_file_over_training_seeds(tmp_path):
    """RESULTS.md's Table 1 has a row per estimator (its seeds, greedy / sampled, mean ± SEM) and
    per reference (greedy only), every column of the paper's table; without the file it says the
    table is not yet run and shows no figure. The README's summary gives each estimator's line."""
    from bench import report_results, report_tables
    from bench.common import RESULTS
    from bench.report_claims import section_table1

    def figures(resolve):
        return {m: [0.5, 0.1] for m in table1.TABLE1} | {"resolve_rate": [resolve, 0.05]}

    data = {
        "split_seed": 7,
        "rows": [
            {"policy": "echo", "kind": "estimator", "seeds": [0, 1, 2]}
            | {"greedy": figures(0.9), "sampled": figures(0.8)},
            {"policy": "bayes", "kind": "reference", "seeds": [1, 2, 3], "greedy": figures(1.0)},
        ],
        "command": "python bench/table1.py",
    }
    try:
        with report_tables.reading(str(tmp_path)):
            empty = "\n".join(section_table1())
        (tmp_path / "table1.json").write_text(json.dumps(data))
        with report_tables.reading(str(tmp_path)):
            lines = section_table1()
            summary = "\n".join(report_results.readme_summary())
    finally:
        report_tables.use(RESULTS)
    assert "Not yet run" in empty and "±" not in empty
    header = next(line for line in lines if line.startswith("| Policy"))
    assert header.count("|") == 2 + len(table1.TABLE1) + 1
    (echo,) = [line for line in lines if line.startswith("| `echo`")]
    assert "| 0-2 | 90.0 ± 5.0 / 80.0 ± 5.0 |" in echo
    (bayes,) = [line for line in lines if "the Bayes policy (reference)" in line]
    assert "| 100.0 ± 5.0 |" in bayes and " / " not in bayes
    # the README's line: each estimator's greedy mean over seeds; no reference
    (line,) = [x for x in summary.splitlines() if "Table 1 of the paper" in x]
    assert "(split 7's held-out secrets, greedy" in line and line.endswith(": echo 90.0.")


def test_the_answer_gives_the_released_rloo_beside_the_estimator_it_is_a_multiple_of(tmp_path):
    """RESULTS.md's RLOO answer reads Table 1's `rloo-std` and `echo-zeropad` rows of the sealed
    split, each its own figure; a table of another split, or without either row, gives none."""
    from bench import report_tables
    from bench.common import RESULTS
    from bench.report_claims import released_rloo

    def row(policy, resolve):
        greedy = {"resolve_rate": [resolve, 0.1]}
        return {"policy": policy, "kind": "estimator", "seeds": [0, 1, 2], "greedy": greedy}

    data = {"split_seed": 7, "rows": [row("rloo-std", 0.6), row("echo-zeropad", 0.3)]}
    (tmp_path / "table1.json").write_text(json.dumps(data))
    try:
        with report_tables.reading(str(tmp_path)):
            released, other_split = released_rloo(7), released_rloo(8)
        data["rows"] = data["rows"][:1]
        (tmp_path / "table1.json").write_text(json.dumps(data))
        with report_tables.reading(str(tmp_path)):
            one_row = released_rloo(7)
    finally:
        report_tables.use(RESULTS)
    assert released["rloo-std"] == "60.0 ± 10.0" and released["echo-zeropad"] == "30.0 ± 10.0"
    assert released["seeds"] == "0-2"
    assert other_split is None and one_row is None
