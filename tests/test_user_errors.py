"""Mistakes a user can make: each entry point answers with one sentence on stderr that says what
to do, exit status 2, no traceback, and leaves nothing behind, so the corrected command is not
refused by a half-made run.

Most commands run in this process, through the entry point's `main(argv)` (a traceback would be an
exception that reaches the test); a few run as the user runs them, in a fresh process, to show the
two agree. A fresh process costs seconds of imports, and this file has dozens of commands.
"""

import importlib
import os
import shutil
import subprocess
import sys

import pytest
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def fresh_process(args, tmp_path, **env):
    """`python ARGS` from the repository root, as the user types it."""
    environment = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    environment.update(
        env,
        ECHO_CACHE_DIR=os.environ.get("ECHO_CACHE_DIR", str(tmp_path / "cache")),
        OMP_NUM_THREADS="1",
    )
    return subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture
def run(monkeypatch, capsys):
    """`python ARGS` in this process: the script's (or `-m` module's) main(argv), with the same
    environment as `fresh_process`; returns what subprocess.run would."""
    threads = torch.get_num_threads()

    def run_here(args, tmp_path):
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        monkeypatch.setenv(
            "ECHO_CACHE_DIR", os.environ.get("ECHO_CACHE_DIR", str(tmp_path / "cache"))
        )
        monkeypatch.chdir(ROOT)
        module = args[1] if args[0] == "-m" else args[0].removesuffix(".py").replace("/", ".")
        argv = args[2:] if args[0] == "-m" else args[1:]
        capsys.readouterr()
        try:
            importlib.import_module(module).main(argv)
            status = 0
        except SystemExit as e:
            status = e.code if isinstance(e.code, int) else 1
        return subprocess.CompletedProcess(args, status, *capsys.readouterr())

    yield run_here
    # train.py and evaluate.py set it, as a process of their own would
    torch.set_num_threads(threads)


def one_sentence(result, *must_say):
    """Exit status 2, no traceback, one line on stderr (argparse's bad-flag report: usage + one
    line)."""
    err = result.stderr.strip()
    assert result.returncode == 2, f"exit status {result.returncode}: {err}"
    assert "Traceback" not in err and err, err
    lines = [
        line for line in err.splitlines() if line.strip() and not line.startswith(("usage:", "  "))
    ]
    assert len(lines) == 1, err
    for words in must_say:
        assert words in lines[0], (words, lines[0])
    return lines[0]


@pytest.mark.parametrize(
    "flags,must_say,must_not_say",
    [
        (["--model", "/nonexistent"], ["/nonexistent", "directory"], "huggingface-cli"),
        (
            ["--model", "someorg/absent-model-0"],
            ["not on disk", "huggingface-cli download someorg/absent-model-0"],
            None,
        ),
        (["--oracle", "llm"], ["OPENAI_API_KEY", "--oracle rule"], None),
        (["--estimator", "reinforce"], ["unknown estimator", "echo"], None),
        (["--group-size", "1"], ["--group-size must be at least 2"], None),
        (["--lr", "nan"], ["--lr must be a finite number, not nan"], None),
        (["--steps", "-5"], ["--steps must be at least 1, not -5"], None),
        (["--question-set", "trivia"], ["--question-set must be paper or binary", "trivia"], None),
        (["--seeds", "0,one"], ["--seeds"], None),
        (["--steps", "many"], ["--steps"], None),
        (["--stepz", "3"], ["--stepz"], None),
    ],
)
def test_train_py(run, tmp_path, flags, must_say, must_not_say):
    out = tmp_path / "runs"
    line = one_sentence(run(["train.py", "--out", str(out), *flags], tmp_path), *must_say)
    assert line.startswith("train.py: "), line  # the script named, as `python train.py` would
    assert must_not_say is None or must_not_say not in line
    assert not out.exists() or not any(out.iterdir())  # nothing was started, nothing to clean up


def test_train_py_resume_of_a_run_that_never_started(run, tmp_path):
    """--resume of a run that was never started, and of one that stopped before its first
    checkpoint."""
    out = tmp_path / "runs"
    one_sentence(
        run(["train.py", "--out", str(out), "--resume"], tmp_path),
        "nothing to resume",
        "without --resume",
    )
    (out / "cut").mkdir(parents=True)
    (out / "cut" / "metrics.jsonl").write_text("")
    one_sentence(
        run(["train.py", "--out", str(out), "--run-name", "cut", "--resume"], tmp_path),
        "nothing to resume",
    )


@pytest.mark.parametrize(
    "flags,must_say",
    [
        (["--policies", "owner/absent-model-0"], ["not on disk"]),
        (["--policies", "checkpoint:/no/such/dir"], ["not a directory"]),
        (["--policies", "bayes,nonsense"], ["unknown policy 'nonsense'"]),
        (["--policies", "bayes", "--oracle", "llm"], ["OPENAI_API_KEY"]),
        (["--from-logs", "/no/such/logs"], ["cannot read the evaluation logs"]),
        (["--runs", "0"], ["--runs"]),
    ],
)
def test_evaluate_py(run, tmp_path, flags, must_say):
    out = tmp_path / "eval"
    assert one_sentence(
        run(["evaluate.py", "--out", str(out), *flags], tmp_path), *must_say
    ).startswith("evaluate.py: ")
    assert not out.exists()


@pytest.mark.parametrize(
    "flags,must_say",
    [
        (["--estimators", "echo,nonsense"], ["unknown estimator 'nonsense'"]),
        (["--train-flags", "--stepz 3"], ["--stepz"]),
        (["--seeds", "0,x"], ["--seeds"]),
    ],
)
def test_reproduce_py(run, tmp_path, flags, must_say):
    out = tmp_path / "reproduce"
    one_sentence(
        run(
            ["bench/reproduce.py", "--out", str(out), "--report", str(tmp_path / "report"), *flags],
            tmp_path,
        ),
        *must_say,
    )
    assert not out.exists() and not (tmp_path / "report").exists()


@pytest.mark.parametrize(
    "command,program",
    [
        (["-m", "theory.bit_reveal"], "bit_reveal.py"),
        (["bench/env_speed.py"], "env_speed.py"),
        (["bench/rollouts.py"], "rollouts.py"),
    ],
)
def test_other_entry_points_reject_unknown_flags(run, tmp_path, command, program):
    line = one_sentence(run([*command, "--no-such-flag", "1"], tmp_path), "--no-such-flag")
    assert line.startswith(f"{program}: "), line


@pytest.mark.parametrize(
    "command,must_say",
    [
        (
            ["train.py", "--model", "someorg/absent-model-0"],
            ["not on disk", "huggingface-cli download"],
        ),
        (["evaluate.py", "--policies", "owner/absent-model-0"], ["not on disk"]),
        (["bench/reproduce.py", "--estimators", "echo,nonsense"], ["unknown estimator 'nonsense'"]),
    ],
)
def test_a_fresh_process_answers_as_main_does(run, tmp_path, command, must_say):
    """The same sentence and exit status from `python COMMAND` as from main(argv) in this
    process."""
    out = ["--out", str(tmp_path / "out")]
    assert one_sentence(fresh_process([*command, *out], tmp_path), *must_say) == one_sentence(
        run([*command, *out], tmp_path), *must_say
    )


# ---------------------------------------------------------------------------------------------
# Damaged files, impossible requests, paths that cannot be written
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def saved_model(tmp_path_factory):
    """A small random Llama with the tiny tokenizer, saved as a model directory."""
    from lm import tinylm

    path = tmp_path_factory.mktemp("model")
    tok = tinylm.build_tokenizer()
    tinylm.build_model(
        tok, tinylm.TinyConfig(hidden_size=32, num_layers=1, intermediate_size=64)
    ).save_pretrained(path)
    tok.save_pretrained(path)
    return str(path)


def cut_short(path):
    """What a full disk or an interrupted copy leaves: the first half of the file."""
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def snapshot(path):
    return {p: (p.stat().st_size, p.stat().st_mtime_ns) for p in path.rglob("*")}


@pytest.mark.parametrize(
    "damaged,must_say",
    [
        ("trainer_state.pt", ["trainer_state.pt is damaged"]),
        ("model.safetensors", ["model.safetensors is damaged", "where its header says"]),
        ("config.json", ["config.json is damaged (not valid JSON)"]),
        ("../metrics.jsonl", ["metrics.jsonl is damaged"]),
    ],
)
def test_resume_of_a_damaged_checkpoint(run, tmp_path, saved_model, damaged, must_say):
    """RUN/checkpoint as train.py leaves it after a step, one file cut short: --resume names the
    file, and neither writes nor removes anything."""
    runs = tmp_path / "runs"
    shutil.copytree(saved_model, runs / "r" / "checkpoint")
    torch.save(
        {"step": 1, "optimizer": {}, "rngs": {}, "estimator": {}, "kept": {}},
        runs / "r" / "checkpoint" / "trainer_state.pt",
    )
    (runs / "r" / "metrics.jsonl").write_text('{"step": 1, "clue/reward": 0.5}\n')
    cut_short(runs / "r" / "checkpoint" / damaged)
    before = snapshot(runs)
    one_sentence(
        run(
            ["train.py", "--out", str(runs), "--run-name", "r", "--resume", "--model", saved_model],
            tmp_path,
        ),
        *must_say,
    )
    assert snapshot(runs) == before


def test_resume_where_a_preset_resolves_otherwise(run, tmp_path, saved_model, monkeypatch):
    """A run that trained in bf16 (llm-cpu-bf16, on a CPU that multiplies it), resumed with the
    same flags on a CPU that does not, would go on in float32: --resume says which flag keeps it
    as it trained, and neither writes nor removes anything."""
    import config

    monkeypatch.setattr(config, "cpu_computes_bf16", lambda: False)
    runs = tmp_path / "runs"
    shutil.copytree(saved_model, runs / "r" / "checkpoint")
    torch.save(
        {"step": 1, "optimizer": {}, "rngs": {}, "estimator": {}, "kept": {}},
        runs / "r" / "checkpoint" / "trainer_state.pt",
    )
    (runs / "r" / "metrics.jsonl").write_text('{"step": 1, "clue/reward": 0.5}\n')
    (runs / "r" / "train_config.json").write_text('{"precision": "bf16", "micro_tokens": 3072}')
    before = snapshot(runs)
    flags = ["train.py", "--out", str(runs), "--run-name", "r", "--resume", "--model", saved_model]
    # llm-cpu sets 1536-token passes on this CPU, llm-cpu-bf16 3072 where the run trained
    one_sentence(
        run(flags, tmp_path),
        "trained with micro_tokens 3072, precision bf16",
        "give --micro-tokens 3072 --precision bf16",
    )
    assert snapshot(runs) == before


def test_evaluate_of_a_damaged_checkpoint(run, tmp_path, saved_model):
    shutil.copytree(saved_model, tmp_path / "ckpt")
    cut_short(tmp_path / "ckpt" / "model.safetensors")
    out = tmp_path / "eval"
    one_sentence(
        run(
            ["evaluate.py", "--policies", f"checkpoint:{tmp_path / 'ckpt'}", "--out", str(out)],
            tmp_path,
        ),
        "model.safetensors is damaged",
    )
    assert not out.exists()


@pytest.mark.parametrize(
    "command",
    [
        ["train.py"],
        ["evaluate.py", "--policies", "bayes"],
        ["fidelity.py", "--quick"],
        ["bench/reproduce.py"],
        ["-m", "lm.models", "--checkpoint", "x"],
    ],
)
@pytest.mark.parametrize("below", ["", "sub"])
def test_an_out_directory_that_is_a_file(run, tmp_path, command, below):
    """--out naming a file, or a path under a file: one sentence before anything is read or
    written."""
    (tmp_path / "a-file").write_text("mine")
    out = tmp_path / "a-file" / below if below else tmp_path / "a-file"
    one_sentence(
        run([*command, "--out", str(out)], tmp_path), "a-file", "is a file, not a directory"
    )
    assert (
        sorted(tmp_path.iterdir()) == [tmp_path / "a-file"]
        and (tmp_path / "a-file").read_text() == "mine"
    )


def test_a_request_that_cannot_fit_in_memory(run, tmp_path, saved_model, monkeypatch):
    """G = 100,000 on a machine with 1 GiB free: refused with the estimate, nothing written."""
    from lm import models

    monkeypatch.setattr(models, "available_memory", lambda device: 2**30)
    out = tmp_path / "runs"
    line = one_sentence(
        run(
            [
                "train.py",
                "--out",
                str(out),
                "--model",
                saved_model,
                "--warmup",
                "never",
                "--group-size",
                "100000",
                "--secrets-per-step",
                "8",
            ],
            tmp_path,
        ),
        "800000 rollouts",
        "GiB",
        "--group-size",
    )
    assert "has 1.0 GiB free" in line
    assert not out.exists() or not any(out.iterdir())
