"""Mistakes a user can make, run as the user runs them (a fresh process per command): each entry
point answers with one sentence on stderr that says what to do, exit status 2, no traceback, and
leaves nothing behind, so the corrected command is not refused by a half-made run."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(args, tmp_path, **env):
    environment = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    environment.update(env, ECHO_CACHE_DIR=os.environ.get("ECHO_CACHE_DIR", str(tmp_path / "cache")),
                       OMP_NUM_THREADS="1")
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=environment, capture_output=True, text=True,
                          timeout=300)


def one_sentence(result, *must_say):
    """Exit status 2, no traceback, one line on stderr (argparse's bad-flag report: usage + one line)."""
    err = result.stderr.strip()
    assert result.returncode == 2, (result.returncode, err)
    assert "Traceback" not in err and err, err
    lines = [line for line in err.splitlines() if line.strip() and not line.startswith(("usage:", "  "))]
    assert len(lines) == 1, err
    for words in must_say:
        assert words in lines[0], (words, lines[0])
    return lines[0]


@pytest.mark.parametrize("flags,must_say,must_not_say", [
    (["--model", "/nonexistent"], ["/nonexistent", "directory"], "huggingface-cli"),
    (["--model", "someorg/absent-model-0"], ["not on disk", "huggingface-cli download someorg/absent-model-0"], None),
    (["--oracle", "llm"], ["OPENAI_API_KEY", "--oracle rule"], None),
    (["--estimator", "reinforce"], ["unknown estimator", "echo"], None),
    (["--group-size", "1"], ["G >= 2"], None),
    (["--question-set", "trivia"], ["question_set"], None),
    (["--seeds", "0,one"], ["--seeds"], None),
    (["--steps", "many"], ["--steps"], None),
    (["--stepz", "3"], ["--stepz"], None),
])
def test_train_py(tmp_path, flags, must_say, must_not_say):
    out = tmp_path / "runs"
    line = one_sentence(run(["train.py", "--out", str(out), *flags], tmp_path), *must_say)
    assert must_not_say is None or must_not_say not in line
    assert not out.exists() or not any(out.iterdir())        # nothing was started, nothing to clean up


def test_train_py_resume_of_a_run_that_never_started(tmp_path):
    """--resume of a run that was never started, and of one that stopped before its first checkpoint."""
    out = tmp_path / "runs"
    one_sentence(run(["train.py", "--out", str(out), "--resume"], tmp_path), "nothing to resume", "without --resume")
    (out / "cut").mkdir(parents=True)
    (out / "cut" / "metrics.jsonl").write_text("")
    one_sentence(run(["train.py", "--out", str(out), "--run-name", "cut", "--resume"], tmp_path), "nothing to resume")


@pytest.mark.parametrize("flags,must_say", [
    (["--policies", "owner/absent-model-0"], ["not on disk"]),
    (["--policies", "checkpoint:/no/such/dir"], ["not a directory"]),
    (["--policies", "bayes,nonsense"], ["unknown policy 'nonsense'"]),
    (["--policies", "bayes", "--oracle", "llm"], ["OPENAI_API_KEY"]),
    (["--from-logs", "/no/such/logs"], ["cannot read the evaluation logs"]),
    (["--runs", "0"], ["--runs"]),
])
def test_evaluate_py(tmp_path, flags, must_say):
    out = tmp_path / "eval"
    one_sentence(run(["evaluate.py", "--out", str(out), *flags], tmp_path), *must_say)
    assert not out.exists()


@pytest.mark.parametrize("flags,must_say", [
    (["--estimators", "echo,nonsense"], ["unknown estimator 'nonsense'"]),
    (["--train-flags", "--stepz 3"], ["--stepz"]),
    (["--seeds", "0,x"], ["--seeds"]),
])
def test_reproduce_py(tmp_path, flags, must_say):
    out = tmp_path / "reproduce"
    one_sentence(run(["bench/reproduce.py", "--out", str(out), "--report", str(tmp_path / "report"), *flags],
                     tmp_path), *must_say)
    assert not out.exists() and not (tmp_path / "report").exists()


@pytest.mark.parametrize("command", [["-m", "theory.bit_reveal"], ["bench/env_speed.py"], ["bench/rollouts.py"]])
def test_other_entry_points_reject_unknown_flags(tmp_path, command):
    one_sentence(run([*command, "--no-such-flag", "1"], tmp_path), "--no-such-flag")
