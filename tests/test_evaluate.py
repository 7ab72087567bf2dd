"""evaluate.py end to end on a tiny budget: tables, the four App. D tables on disk, figures,
--from-logs, the language-model path with a fake model, prompting variants, user errors."""

import csv
import dataclasses
import json
import re

import pytest

import evaluate
import metrics
from env import GameConfig, play, secret_split
from reference import BayesPolicy


class FakeLM:
    """The policy.py interface (generate_text) with a bisecting 'model': it reads the candidate
    list in the last user message and asks 'greater than the lower median?'. With the ReAct
    system prompt it writes a Thought before the Action, as a ReAct-prompted model would."""

    name = "fake"

    def __init__(self):
        self.calls = []

    def generate_text(
        self, messages_list, greedy=True, temperature=1.0, top_p=1.0, max_new_tokens=64, seed=None
    ):
        self.calls.append(
            dict(
                messages=messages_list,
                greedy=greedy,
                temperature=temperature,
                top_p=top_p,
                max_new_tokens=max_new_tokens,
                seed=seed,
            )
        )
        texts = []
        for messages in messages_list:
            found = re.search(
                r"Remaining candidates \(\d+\): \[([\d, ]+)\]", messages[-1]["content"]
            )
            candidates = [int(x) for x in found.group(1).split(", ")]
            median = candidates[len(candidates) // 2 - 1]
            action = json.dumps({"arm": 0, "question": f"Is the number greater than {median}?"})
            react = messages[0]["content"] == evaluate.REACT_SYSTEM
            thought = f"Thought: split the {len(candidates)} candidates at {median}.\nAction: "
            texts.append(thought + action if react else action)
        return texts


def run_main(args, capsys):
    results = evaluate.main(args)
    return results, capsys.readouterr().out


def test_reference_policies_end_to_end_and_from_logs(tmp_path, capsys):
    """Tables printed; model_summary / runs / episodes / turns as CSV and JSONL, config and figures
    written; --from-logs recomputes exactly the same numbers and tables from disk alone."""
    out = tmp_path / "eval"
    results, printed = run_main(
        ["--policies", "random,bayes", "--runs", "2", "--max-secrets", "4", "--out", str(out)],
        capsys,
    )
    for title in (
        "Table 1",
        "LateCalib",
        "Arm routing",
        "Hint-type",
        "tab:csg_recovery_zero",
        "tab:csg_recovery_bad",
        "tab:csg_recovery_low",
        "tab:csg_recovery_late_bad",
    ):
        assert title in printed
    assert re.search(r"bayes\s+100\.0 ± 0\.0", printed)
    for name in ("model_summary", "runs", "episodes", "turns"):
        assert (out / f"{name}.csv").exists() and (out / f"{name}.jsonl").exists()
    with open(out / "runs.csv") as f:
        runs = list(csv.DictReader(f))
    assert [(r["model_key"], r["run_id"]) for r in runs] == [
        ("random", "run1"),
        ("random", "run2"),
        ("bayes", "run1"),
        ("bayes", "run2"),
    ]
    episodes = [json.loads(line) for line in open(out / "episodes.jsonl")]
    assert len(episodes) == 2 * 2 * 4 and {"secret", "turns_taken", "resolved_after_zero"} <= set(
        episodes[0]
    )
    turns = [json.loads(line) for line in open(out / "turns.jsonl")]
    assert {
        "elim_quality",
        "grounded",
        "prev_zero_nonred",
        "raw_response",
        "candidates_before",
    } <= set(turns[0])
    summary = [json.loads(line) for line in open(out / "model_summary.jsonl")]
    assert (
        summary[1]["model_key"] == "bayes"
        and summary[1]["resolve_rate"] == 1.0
        and summary[1]["n_runs"] == 2
    )
    assert {"quality", "grounded", "grounded_recover", "res_after_zero", "zero_rate_sem"} <= set(
        summary[0]
    )
    figures = sorted(p.name for p in (out / "figures").iterdir())
    assert figures == [
        "candidates_per_turn.png",
        "hint_types.png",
        "recovery_after_zero.png",
        "resolve_vs_zero.png",
    ]
    assert all((out / "figures" / f).read_bytes()[:4] == b"\x89PNG" for f in figures)
    assert json.loads((out / "config.json").read_text())["eval"]["runs"] == 2

    again, reprinted = run_main(["--from-logs", str(out)], capsys)
    assert json.dumps(again, sort_keys=True) == json.dumps(results, sort_keys=True)
    assert reprinted.strip() == (out / "tables.txt").read_text().strip()
    assert reprinted.strip() in printed


def test_bayes_resolves_every_secret_on_both_question_sets():
    """The belief-only Bayes policy resolves all 100 secrets in T = 10 (paper and binary sets)."""
    for question_set in ("paper", "binary"):
        game = play(
            BayesPolicy(),
            range(1, 101),
            GameConfig(n_max=100, max_turns=10, question_set=question_set),
        )
        assert metrics.resolve([[r.as_dict() for r in ep.records] for ep in game.episodes]) == 1.0


def test_evaluation_sets():
    """heldout = env.secret_split()'s 20 secrets at N = 100; generalization = 1..200 at N = 200,
    optionally a seeded subset."""
    gcfg, secrets = evaluate.evaluation_set(evaluate.EvalConfig())
    assert gcfg.n_max == 100 and secrets == secret_split()[1] and len(secrets) == 20
    gcfg, secrets = evaluate.evaluation_set(evaluate.EvalConfig(eval_set="generalization"))
    assert gcfg.n_max == 200 and secrets == list(range(1, 201))
    cfg = evaluate.EvalConfig(eval_set="generalization", max_secrets=7, question_set="binary")
    gcfg, secrets = evaluate.evaluation_set(cfg)
    assert len(secrets) == 7 and secrets == sorted(secrets) and gcfg.question_set == "binary"
    assert evaluate.evaluation_set(cfg)[1] == secrets and gcfg.candidate_format == "list"
    assert (
        evaluate.evaluation_set(evaluate.EvalConfig(candidate_format="runs"))[0].candidate_format
        == "runs"
    )


def test_a_checkpoint_reads_the_candidates_as_its_run_wrote_them(tmp_path):
    """--candidate-format auto: a checkpoint plays in its run's format (train_config.json beside
    it), a checkpoint with no run around it and every other policy in App. B's list; a format
    given on the command line applies to every policy."""
    (tmp_path / "run" / "best").mkdir(parents=True)
    (tmp_path / "run" / "train_config.json").write_text('{"candidate_format": "runs"}')
    (tmp_path / "alone").mkdir()
    auto, given = evaluate.EvalConfig(), evaluate.EvalConfig(candidate_format="list")
    gcfg = evaluate.evaluation_set(auto)[0]
    assert (
        evaluate.game_of(f"checkpoint:{tmp_path / 'run' / 'best'}", auto, gcfg).candidate_format
        == "runs"
    )
    assert (
        evaluate.game_of(f"checkpoint:{tmp_path / 'alone'}", auto, gcfg).candidate_format == "list"
    )
    assert evaluate.game_of("tiny", auto, gcfg).candidate_format == "list"
    assert (
        evaluate.game_of(f"checkpoint:{tmp_path / 'run' / 'best'}", given, gcfg).candidate_format
        == "list"
    )


def test_language_model_path_and_prompting_variants(tmp_path, capsys, monkeypatch):
    """A fake LM through every prompting variant: the messages each variant builds (CoT prefix,
    ReAct system prompt, Full ReAct's growing Thought/Action/Observation chat), greedy decoding,
    token limits, and the resulting tables (bisection resolves; ReAct shows reasoning)."""
    lm = FakeLM()
    monkeypatch.setattr(
        evaluate, "load_lm", lambda base, question_set="paper", candidate_format="list": lm
    )
    policies = "fake/lm,fake/lm+cot,fake/lm+react,fake/lm+fullreact"
    results, printed = run_main(
        [
            "--policies",
            policies,
            "--runs",
            "1",
            "--max-secrets",
            "3",
            "--samples",
            "0",
            "--out",
            str(tmp_path),
            "--no-figures",
        ],
        capsys,
    )
    assert list(results) == ["fake/lm", "fake/lm+cot", "fake/lm+react", "fake/lm+fullreact"]
    for key, r in results.items():
        assert r["summary"]["resolve_rate"][0] == 1.0
        assert r["summary"]["reason_pct"][0] == (100.0 if "react" in key else 0.0)
    assert all(c["greedy"] for c in lm.calls)
    plain = lm.calls[0]
    cot = next(
        c for c in lm.calls if c["messages"][0][1]["content"].startswith(evaluate.COT_PREFIX)
    )
    assert plain["max_new_tokens"] == 64 and cot["max_new_tokens"] == 256
    assert [m["role"] for m in plain["messages"][0]] == ["system", "user"]
    assert plain["messages"][0][1]["content"].startswith("You are solving a number guessing game.")
    react = [c for c in lm.calls if c["messages"][0][0]["content"] == evaluate.REACT_SYSTEM]
    simple = [c for c in react if len(c["messages"][0]) == 2]
    # ReAct: a fresh two-message prompt every turn (plus Full ReAct's first turn)
    assert len(simple) >= 3
    full = max(react, key=lambda c: len(c["messages"][0]))["messages"][0]
    assert [m["role"] for m in full] == ["system", "user"] + ["assistant", "user"] * (
        (len(full) - 2) // 2
    )
    assert len(full) >= 6 and full[2]["content"].startswith(
        "Thought: split the 100 candidates at 50."
    )
    assert (
        full[3]["content"].startswith("Observation: ") and "greater than 50" in full[3]["content"]
    )
    assert "Remaining candidates (50)" in full[3]["content"]


def test_language_models_are_also_played_sampled_beside_greedy(tmp_path, capsys, monkeypatch):
    """With greedy decoding, a language model also plays every secret --samples times per run at
    T = 1, as its own row '<policy> [T=1]'; the greedy-and-sampled table gives both resolve
    rates with their standard errors over runs and over secrets."""
    lm = FakeLM()
    monkeypatch.setattr(
        evaluate, "load_lm", lambda base, question_set="paper", candidate_format="list": lm
    )
    results, printed = run_main(
        [
            "--policies",
            "bayes,fake/lm",
            "--runs",
            "2",
            "--max-secrets",
            "3",
            "--samples",
            "2",
            "--out",
            str(tmp_path),
            "--no-figures",
        ],
        capsys,
    )
    # no sampled row for a reference policy
    assert list(results) == ["bayes", "fake/lm", "fake/lm [T=1]"]
    sampled_calls = [c for c in lm.calls if not c["greedy"]]
    assert sampled_calls and all(c["temperature"] == 1.0 for c in sampled_calls)
    assert (
        sum(
            len(c["messages"])
            for c in sampled_calls
            if c["messages"][0][1]["content"].count("Turn 1 of")
        )
        == 2 * 2 * 3
    )
    assert "Resolve, greedy and sampled at T = 1" in printed
    assert re.search(
        r"fake/lm\s+100\.0 ± 0\.0\s+100\.0 ± 0\.0\s+100\.0 ± 0\.0\s+100\.0 ± 0\.0", printed
    )
    episodes = [json.loads(line) for line in open(tmp_path / "episodes.jsonl")]
    assert sum(e["model_key"] == "fake/lm [T=1]" for e in episodes) == 2 * 2 * 3


def test_sampled_decoding_passes_temperature_and_per_run_seeds(tmp_path, capsys, monkeypatch):
    """--temperature > 0 samples with the given temperature / top-p, and run r's seeds differ from
    run r+1's."""
    lm = FakeLM()
    monkeypatch.setattr(
        evaluate, "load_lm", lambda base, question_set="paper", candidate_format="list": lm
    )
    run_main(
        [
            "--policies",
            "fake/lm",
            "--runs",
            "2",
            "--max-secrets",
            "2",
            "--temperature",
            "0.7",
            "--top-p",
            "0.9",
            "--out",
            str(tmp_path),
            "--no-figures",
        ],
        capsys,
    )
    assert all(not c["greedy"] and c["temperature"] == 0.7 and c["top_p"] == 0.9 for c in lm.calls)
    seeds = [c["seed"] for c in lm.calls]
    assert len(set(seeds)) == len(seeds) and seeds[0] // 10**6 == 1 and seeds[-1] // 10**6 == 2


def test_api_model_without_key_skips_only_its_row(tmp_path, capsys, monkeypatch):
    """api:MODEL without OPENAI_API_KEY: one sentence saying how to set it; the other rows run."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    results, printed = run_main(
        [
            "--policies",
            "bayes,api:gpt-4o-mini,api:gpt-4o-mini+react",
            "--runs",
            "1",
            "--max-secrets",
            "2",
            "--out",
            str(tmp_path),
            "--no-figures",
        ],
        capsys,
    )
    assert list(results) == ["bayes"]
    assert printed.count("api:gpt-4o-mini skipped: set OPENAI_API_KEY") >= 2
    summary = [json.loads(line) for line in open(tmp_path / "model_summary.jsonl")]
    assert [s["model_key"] for s in summary] == ["bayes"]


@pytest.mark.parametrize(
    "args,message",
    [
        (["--policies", "bayse"], "unknown policy 'bayse'"),
        (["--policies", "bayes+cot"], "prompting variants apply to language models"),
        (["--policies", "fake/lm+tot"], "unknown prompting variant"),
        (["--policies", "checkpoint:/no/such/dir"], "is not a directory"),
        (["--eval-set", "test"], "--eval-set must be heldout or generalization"),
        (["--from-logs", "/no/such/dir"], "cannot read the evaluation logs"),
    ],
)
def test_user_errors_stop_with_one_sentence(args, message, tmp_path, capsys):
    """Mistakes a user can make stop before anything is played, with a message saying what to do."""
    with pytest.raises(SystemExit) as e:
        evaluate.main(args + ["--out", str(tmp_path)])
    assert e.value.code == 2 and message in capsys.readouterr().err


def test_unknown_flags_and_wrong_types_are_errors(capsys):
    """argparse rejects a flag EvalConfig does not have and a value of the wrong type (exit 2);
    every field has its one-line meaning as --help text."""
    for args in (["--bogus", "1"], ["--runs", "two"], ["--temperature", "hot"]):
        with pytest.raises(SystemExit) as e:
            evaluate.parse_args(args)
        assert e.value.code == 2
    # every flag explained
    assert all(f.metadata.get("help") for f in dataclasses.fields(evaluate.EvalConfig))


def test_missing_weights_and_missing_oracle_key_stop_early(tmp_path, monkeypatch, capsys):
    """models.load_policy's ModelNotFoundError and the LLM oracle's missing key become one
    sentence."""
    with pytest.raises(SystemExit) as e:
        evaluate.main(["--policies", "bayes,owner/absent", "--out", str(tmp_path)])
    assert e.value.code == 2 and "'owner/absent' is not on disk" in capsys.readouterr().err
    assert not (tmp_path / "turns.jsonl").exists()  # nothing was played
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(SystemExit) as e:
        evaluate.main(["--policies", "bayes", "--oracle", "llm", "--out", str(tmp_path)])
    assert e.value.code == 2 and "OPENAI_API_KEY" in capsys.readouterr().err


def test_a_checkpoint_directory_named_with_a_plus_is_not_a_prompting_variant(tmp_path):
    """train.py names pbrs+rloo runs RUN = pbrs+rloo-paper-seedS: checkpoint:RUN/checkpoint is that
    directory, not RUN/checkpoint with a variant; a real variant after it still parses."""
    run = tmp_path / "pbrs+rloo-paper-seed0" / "checkpoint"
    run.mkdir(parents=True)
    assert evaluate.split_spec(f"checkpoint:{run}") == (f"checkpoint:{run}", "", "lm")
    assert evaluate.split_spec(f"checkpoint:{run}+cot") == (f"checkpoint:{run}", "cot", "lm")


def test_a_row_cap_plays_the_sampled_evaluation_in_chunks_of_whole_secrets(monkeypatch):
    """rows > 0: the sampled play decodes at most that many episodes at once, whole secrets (at
    least one), and every secret is still played and scored; rows 0 plays all at once."""
    import rollouts
    from lm import models
    from oracle import RuleOracle

    policy, calls, real = models.load_policy("tiny", "cpu", "fp32"), [], rollouts.play_rollouts

    def recording(policy, secrets, samples, *args, **kwargs):
        calls.append((list(secrets), samples))
        return real(policy, secrets, samples, *args, **kwargs)

    monkeypatch.setattr(rollouts, "play_rollouts", recording)
    secrets, game = [3, 17, 42, 64, 99], GameConfig(max_turns=2)

    def evaluated(rows):
        calls.clear()
        out = evaluate.evaluate_policy(policy, secrets, game, RuleOracle(), 4, 0, True, rows)
        return [c for c, _ in calls], out

    chunks, out = evaluated(8)  # 8 rows: 2 secrets x 4 samples at once
    assert chunks == [[3, 17], [42, 64], [99]] and all(n == 4 for _, n in calls)
    assert len(out["per_secret_sampled"]) == len(secrets)
    assert evaluated(2)[0] == [[s] for s in secrets]  # fewer rows than samples: one secret
    assert evaluated(0)[0] == [secrets]
