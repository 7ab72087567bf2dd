"""bench/unseen_numbers.py: whether the numbers no binary-set training prompt holds (101..200) are
numbers the model can tell apart. The measures on hand-worked examples, then on a model whose
rows for " 101" .. " 200" were set to one vector."""
import json
import math

import pytest
import torch

import models
import tinylm
from bench.unseen_numbers import (main as unseen_numbers, mean_pairwise_cosine, number_rows, numbers_named, played,
                                  resolved_by_range)
from reference import BayesPolicy, RandomPolicy
from test_train import model_dir  # noqa: F401  (a fixture)


def test_mean_pairwise_cosine_counts_each_pair_of_distinct_rows_once():
    # pairs: (1,0)-(0,1) 0, (1,0)-(1,1) and (0,1)-(1,1) 1/sqrt(2): mean sqrt(2)/3
    assert mean_pairwise_cosine(torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])) == pytest.approx(math.sqrt(2) / 3)
    assert mean_pairwise_cosine(torch.tensor([[2.0, 1.0], [4.0, 2.0], [0.2, 0.1]])) == pytest.approx(1.0)
    assert mean_pairwise_cosine(torch.tensor([[1.0, 0.0], [-3.0, 0.0]])) == pytest.approx(-1.0)


def test_resolve_rates_and_named_numbers_split_at_the_trained_range():
    assert resolved_by_range([True, False, True, True, False], [3, 50, 100, 101, 200], 100) == (pytest.approx(2 / 3), 0.5)
    assert numbers_named(["Is the number greater than 64?", "Is it divisible by 3?", "Is it even?"]) == [64, 3]


def test_rows_set_to_one_vector_read_as_one_vector(model_dir):  # noqa: F811
    policy = models.load_policy(model_dir, "cpu", "fp32", trainable=False)
    weight = policy.model.get_input_embeddings().weight
    unseen = [policy.tokenizer.convert_tokens_to_ids(f" {n}") for n in range(101, 201)]
    with torch.no_grad():
        weight[unseen] = weight[unseen[0]] * torch.linspace(1, 2, 100)[:, None]   # one direction, lengths vary
    assert mean_pairwise_cosine(number_rows(policy, range(101, 201))) == pytest.approx(1.0)
    assert abs(mean_pairwise_cosine(number_rows(policy, range(1, 101)))) < 0.2     # random rows: about 0
    assert torch.equal(number_rows(policy, [7, 150]), weight[[policy.tokenizer.convert_tokens_to_ids(" 7"), unseen[49]]])


def test_bisection_names_numbers_above_100_and_resolves_both_ranges():
    """The Bayes policy on 1..130 (FAST: not 1..200) bisects: every secret resolved, thresholds
    named on both sides of 100 (the upper half's cuts are above 100), every Bayes state halved."""
    row = played(BayesPolicy(), 130)
    assert (row["resolve_trained_range"], row["resolve_unseen_range"]) == (1.0, 1.0)
    assert 0.05 < row["named_share_unseen"] < 0.5 and 100 < row["largest_named"] < 130
    assert row["halving_share_trained_range"] == row["halving_share_unseen_range"] == 1.0
    random_row = played(RandomPolicy(0), 102)
    assert random_row["halving_share_trained_range"] < 0.5


def test_the_script_writes_each_checkpoints_figures_and_refuses_a_tokenizer_without_number_tokens(tmp_path, model_dir, monkeypatch):  # noqa: F811
    import bench.unseen_numbers as unseen
    games = []                                                          # played: tested above, with BayesPolicy
    monkeypatch.setattr(unseen, "played", lambda policy, n_max: games.append((type(policy).__name__, n_max)) or {"resolve_unseen_range": 0.5})
    out = tmp_path / "unseen.json"
    unseen_numbers(["--checkpoints", f"{model_dir},{model_dir}", "--n-max", "150", "--out", str(out)])
    written = json.loads(out.read_text())
    assert (written["trained_max"], written["n_max"]) == (100, 150)
    assert games == [("LMPolicy", 150), ("LMPolicy", 150), ("BayesPolicy", 150)]   # each checkpoint, then bisection
    assert written["bisection"] == {"resolve_unseen_range": 0.5}
    first, second = written["rows"]
    assert first == second and first["checkpoint"]["path"] == model_dir and first["resolve_unseen_range"] == 0.5
    assert abs(first["embedding_cosine_trained"]) < 0.2 and abs(first["embedding_cosine_unseen"]) < 0.2   # random rows
    bpe = tmp_path / "bpe"
    tok = tinylm.bpe_tokenizer()
    tinylm.build_model(tok, tinylm.TinyConfig(hidden_size=32, num_layers=1, intermediate_size=64)).save_pretrained(bpe)
    tok.save_pretrained(bpe)
    with pytest.raises(SystemExit):
        unseen_numbers(["--checkpoints", str(bpe), "--out", str(tmp_path / "no.json")])
    assert not (tmp_path / "no.json").exists()


def test_the_report_renders_the_file(tmp_path):
    """RESULTS.md's table is read from unseen_numbers.json, not typed: a kept checkpoint's row and
    the bisection row, as percentages."""
    from bench import report_binary, report_tables
    figures = {"resolve_trained_range": 0.5, "resolve_unseen_range": 0.0, "named_share_unseen": 0.0, "largest_named": 81,
               "halving_share_trained_range": 0.66, "halving_share_unseen_range": 0.25}
    (tmp_path / "unseen_numbers.json").write_text(json.dumps(
        {"trained_max": 100, "n_max": 200, "command": "python bench/unseen_numbers.py", "machine": "2 CPU cores",
         "date": "2026-01-01", "rows": [{"checkpoint": {"path": "runs/x/best", "played": "kept", "step": 185},
                                         "embedding_cosine_trained": 0.327, "embedding_cosine_unseen": 0.934, **figures}],
         "bisection": {**figures, "resolve_trained_range": 1.0, "resolve_unseen_range": 1.0, "named_share_unseen": 0.5,
                       "largest_named": 199}}))
    with report_tables.reading(str(tmp_path)):
        text = "\n".join(report_binary.section_unseen())
    assert "| `runs/x/best` (kept, step 185) | 0.33 / 0.93 | 50 / 0 | 0 (81) | 66 / 25 |" in text and "halved %, secrets 1..100 / 101..200" in text
    assert "| bisection (Bayes) | - | 100 / 100 | 50 (199) | 66 / 25 |" in text


def test_the_readme_line_gives_ranges_over_the_checkpoints():
    from bench.report_results import unseen_summary
    row = lambda cu, ct, n, r: {"embedding_cosine_unseen": cu, "embedding_cosine_trained": ct,  # noqa: E731
                                "named_share_unseen": n, "resolve_unseen_range": r}
    line = unseen_summary({"trained_max": 100, "n_max": 200, "rows": [row(0.93, 0.33, 0.0, 0.0), row(0.98, 0.11, 0.0, 0.03)],
                           "bisection": {"resolve_unseen_range": 1.0}})
    assert "(2 trained checkpoints)" in line and "cosine 0.93-0.98, against 0.11-0.33 for 1..100" in line
    assert ", 0% are above 100" in line and "resolve 0-3% of the secrets above 100 (bisection: 100)" in line
