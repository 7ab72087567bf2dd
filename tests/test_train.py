"""train.py end to end with a tiny budget: no NaN, checkpoints, exact resume, clear config
errors."""

import json
import math
import random
from dataclasses import replace

import pytest
import torch
from safetensors.torch import load_file

import config
import episodes
import experiment
import train
import update
from baselines import ESTIMATORS
from env import GameConfig, secret_split
from episodes import StartConfig
from lm import engine, models, tinylm
from policy import SampleConfig, process_logits
from rollouts import play_rollouts
from tools import cli
from tools.cli import settings
from tools.ranks import Ranks
from update import UpdateConfig

FAST = [
    "--secrets-per-step",
    "2",
    "--group-size",
    "2",
    "--max-new-tokens",
    "8",
    "--eval-every",
    "2",
    "--warmup",
    "never",
    "--lora-rank",
    "0",
    "--save-every",
    "1",
    "--n-heldout",
    "4",
    "--micro-batch",
    "16",
]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    """A small random Llama with the tiny tokenizer, saved like a checkpoint (no warm-up)."""
    path = tmp_path_factory.mktemp("model")
    tok = tinylm.build_tokenizer()
    model = tinylm.build_model(
        tok, tinylm.TinyConfig(hidden_size=32, num_layers=1, intermediate_size=64)
    )
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return str(path)


def run(tmp_path, model_dir, *extra):
    return train.main(["--model", model_dir, "--out", str(tmp_path), *FAST, *extra])


@pytest.mark.parametrize("estimator", sorted(ESTIMATORS))
def test_two_step_run_has_no_nan_and_writes_logs_and_a_checkpoint(tmp_path, model_dir, estimator):
    """Every estimator trains two steps: finite metrics, a loadable checkpoint, curves, summary."""
    extra = ["--offline-episodes", "8"] if estimator == "offline" else []
    (summary,) = run(tmp_path, model_dir, "--estimator", estimator, "--steps", "2", *extra)
    run_dir = tmp_path / summary["run_name"]
    rows = [json.loads(line) for line in open(run_dir / "metrics.jsonl")]
    assert [r["step"] for r in rows] == [1, 2]
    for key in ("train/loss", "train/grad_norm", "clue/reward", "train/entropy", "train/kl"):
        assert all(math.isfinite(r[key]) for r in rows), key
    assert "eval/resolve_rate" in rows[-1] and (run_dir / "training_curves.png").exists()
    weights = load_file(run_dir / "checkpoint" / "model.safetensors")
    assert all(torch.isfinite(w).all() for w in weights.values())
    assert (
        json.loads((run_dir / "checkpoint" / "train_config.json").read_text())["estimator"]
        == estimator
    )


@pytest.mark.parametrize("compile_update", [False, True])
def test_compile_update_wraps_every_update_and_nothing_else(
    tmp_path, model_dir, monkeypatch, compile_update
):
    """--compile-update: Eq. 2's passes, and not the rollouts, run inside update.CompiledLayers,
    built once a run over every decoder layer of the trained model; without it nothing is compiled.
    (torch.compile is recorded, not run: tests/test_engine.py checks the compiled layers'
    numbers.)"""
    compiled, built, inside, calls = [], [], [False], []
    init, enter, leave = (
        update.CompiledLayers.__init__,
        update.CompiledLayers.__enter__,
        update.CompiledLayers.__exit__,
    )
    step, play = train.ppo_update, train.play_rollouts

    def entered(self):
        inside[0] = bool(self.layers)
        return enter(self)

    def left(self, *exc):
        inside[0] = False
        return leave(self, *exc)

    monkeypatch.setattr(torch, "compile", lambda f, **kw: compiled.append(f) or f)
    monkeypatch.setattr(
        update.CompiledLayers,
        "__init__",
        lambda self, *a, **k: built.append(self) or init(self, *a, **k),
    )
    monkeypatch.setattr(update.CompiledLayers, "__enter__", entered)
    monkeypatch.setattr(update.CompiledLayers, "__exit__", left)
    monkeypatch.setattr(
        train, "ppo_update", lambda *a, **k: calls.append(("update", inside[0])) or step(*a, **k)
    )
    monkeypatch.setattr(
        train, "play_rollouts", lambda *a, **k: calls.append(("play", inside[0])) or play(*a, **k)
    )
    run(tmp_path, model_dir, "--steps", "3", *(["--compile-update"] if compile_update else []))
    # model_dir: 1 layer
    assert len(built) == 1 and len(built[0].layers) == len(compiled) == (1 if compile_update else 0)
    assert calls.count(("update", compile_update)) == 3 and calls.count(("play", False)) == 3


def test_first_ppo_epoch_ratio_is_exactly_one(tmp_path, model_dir):
    """--old-logprobs recompute: pi_old is scored with the same padded passes as the first epoch, so
    before any optimizer step log rho == 0 exactly; with one minibatch per epoch the whole first
    epoch has rho == 1."""
    (summary,) = run(
        tmp_path,
        model_dir,
        "--steps",
        "1",
        "--ppo-epochs",
        "1",
        "--num-minibatches",
        "1",
        "--old-logprobs",
        "recompute",
    )
    row = json.loads(open(tmp_path / summary["run_name"] / "metrics.jsonl").readline())
    assert row["train/first_step_log_ratio_max"] == 0.0
    assert row["train/ratio_mean"] == 1.0 and row["train/clip_fraction"] == 0.0
    (summary,) = run(
        tmp_path,
        model_dir,
        "--steps",
        "1",
        "--num-minibatches",
        "4",
        "--run-name",
        "mb",
        "--old-logprobs",
        "recompute",
    )
    row = json.loads(open(tmp_path / "mb" / "metrics.jsonl").readline())
    assert row["train/first_step_log_ratio_max"] == 0.0


def test_sampled_logprobs_serve_as_pi_old_where_they_are_its_own(tmp_path, model_dir):
    """The default reads pi_old from the log-probs the eager fp32 rollout sampled with: its first
    ratio is 1 up to float rounding, and one step moves the weights as scoring pi_old again does.
    Were the sampled log-probs of another turn or token read, rho would be far from 1."""
    # a stop that never fires: every turn scored
    (summary,) = run(
        tmp_path,
        model_dir,
        "--steps",
        "1",
        "--ppo-epochs",
        "1",
        "--num-minibatches",
        "1",
        "--run-name",
        "sampled",
        "--target-kl",
        "1e9",
        "--precision",
        "fp32",  # on a CPU the llm-cpu preset's bf16 scores pi_old again
    )
    row = json.loads(open(tmp_path / "sampled" / "metrics.jsonl").readline())
    assert row["train/first_step_log_ratio_max"] < 1e-4
    assert abs(row["train/ratio_mean"] - 1.0) < 1e-5 and row["train/clip_fraction"] == 0.0
    assert row["train/behaviour_logprob_drift"] == 0.0  # no scoring pass: nothing to differ from
    run(
        tmp_path,
        model_dir,
        "--steps",
        "1",
        "--ppo-epochs",
        "1",
        "--num-minibatches",
        "1",
        "--run-name",
        "scored",
        "--old-logprobs",
        "recompute",
        "--precision",
        "fp32",
    )
    a = load_file(tmp_path / "sampled" / "checkpoint" / "model.safetensors")
    b = load_file(tmp_path / "scored" / "checkpoint" / "model.safetensors")
    assert max((a[k] - b[k]).abs().max().item() for k in a) < 1e-4


def test_pi_old_is_scored_again_wherever_the_sampler_is_not_the_trained_model_in_fp32(model_dir):
    """Offline data, lm/engine.py's bf16 rollout copy, bf16 autocast and --old-logprobs recompute
    all score pi_old before the update; only the online eager fp32 rollout reads its own
    log-probs."""
    cfg = config.config_from_flags(["--model", model_dir])
    policy = models.load_policy(model_dir, "cpu", precision="fp32")
    update_cfg = settings(UpdateConfig, cfg)
    assert update.sampled_logprobs_are_old(update_cfg, policy, policy, online=True)
    assert not update.sampled_logprobs_are_old(update_cfg, policy, policy, online=False)
    assert not update.sampled_logprobs_are_old(
        settings(UpdateConfig, cfg), engine.sampler(policy, "fast"), policy, online=True
    )
    assert not update.sampled_logprobs_are_old(
        settings(UpdateConfig, replace(cfg, old_logprobs="recompute")), policy, policy, online=True
    )
    bf16 = models.load_policy(model_dir, "cpu", precision="bf16")
    assert not update.sampled_logprobs_are_old(settings(UpdateConfig, cfg), bf16, bf16, online=True)


def test_tensorboard_holds_every_logged_name_and_resume_drops_what_metrics_drop(
    tmp_path, model_dir, monkeypatch
):
    """--tensorboard: RUN/tensorboard's event files hold every name of metrics.jsonl at each step
    it was logged, and the resolved config as text. A run stopped after step 3 was logged but
    before its checkpoint (kept at step 2) is resumed: metrics.jsonl drops and redoes step 3, and
    TensorBoard (purge_step) shows step 3 once, with the redone values."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    save = experiment.Run.save_checkpoint
    monkeypatch.setattr(
        experiment.Run,
        "save_checkpoint",
        lambda run, step, *a: None if step == 3 else save(run, step, *a),
    )
    flags = ["--steps", "3", "--save-every", "2", "--tensorboard", "--run-name", "board"]
    run(tmp_path, model_dir, *flags)
    monkeypatch.setattr(experiment.Run, "save_checkpoint", save)
    run(tmp_path, model_dir, *flags, "--resume")
    rows = [json.loads(line) for line in open(tmp_path / "board" / "metrics.jsonl")]
    events = EventAccumulator(str(tmp_path / "board" / "tensorboard"), {"scalars": 0})
    events.Reload()
    names = {name for row in rows for name in row} - {"step"}
    assert (
        names == set(events.Tags()["scalars"]) and "config/text_summary" in events.Tags()["tensors"]
    )
    for name in names:
        logged = {r["step"]: r[name] for r in rows if name in r}
        seen = [(e.step, e.value) for e in events.Scalars(name)]
        assert [step for step, _ in seen] == sorted(logged), name  # each step once
        assert all(value == pytest.approx(float(logged[s]), nan_ok=True) for s, value in seen)


def test_resume_reaches_the_same_state_as_an_uninterrupted_run(tmp_path, model_dir):
    """Two steps in one go == one step, stop, --resume for the second: same weights, same logs."""
    run(tmp_path, model_dir, "--steps", "2", "--run-name", "straight")
    run(tmp_path, model_dir, "--steps", "1", "--run-name", "cut")
    (summary,) = run(tmp_path, model_dir, "--steps", "2", "--run-name", "cut", "--resume")
    a = load_file(tmp_path / "straight" / "checkpoint" / "model.safetensors")
    b = load_file(tmp_path / "cut" / "checkpoint" / "model.safetensors")
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    rows = lambda name: [json.loads(line) for line in open(tmp_path / name / "metrics.jsonl")]
    # the batch and update metrics of both steps are the same (NaN == NaN here); the cut run also
    # evaluated at its last step, which the straight run did not do
    same = lambda x, y: x == y or (x != x and y != y)
    straight, cut = rows("straight"), rows("cut")
    assert [r["step"] for r in cut] == [1, 2]
    for a_row, b_row in zip(straight, cut):
        keys = [
            k
            for k in a_row
            if k.startswith(("clue/", "train/")) and not k.startswith("train/seconds")
        ]
        assert all(same(a_row[k], b_row[k]) for k in keys), [
            k for k in keys if not same(a_row[k], b_row[k])
        ]
    # the clock goes on from the stop: the summary counts the first step's seconds too
    step_seconds = sum(r["train/seconds_per_step"] for r in cut)
    assert (
        summary["step_seconds"] == pytest.approx(step_seconds, abs=0.1)
        and summary["train_seconds"] >= step_seconds - 0.1
    )


def test_a_paused_run_resumed_reaches_the_state_of_an_uninterrupted_one(tmp_path, model_dir):
    """--pause-after 2 of 3 steps stops with a checkpoint at step 2 and a summary saying so; the
    resumed run's third step is the straight run's, at the learning rate annealed over 3 steps
    (a run of --steps 2 would have annealed step 2's to another value)."""
    flags = ["--steps", "3", "--validation-secrets", "2"]
    run(tmp_path, model_dir, *flags, "--run-name", "straight")
    (paused,) = run(tmp_path, model_dir, *flags, "--run-name", "cut", "--pause-after", "2")
    assert paused["paused"] and paused["steps"] == 2
    assert experiment.read_trainer_state(tmp_path / "cut")["step"] == 2
    (summary,) = run(tmp_path, model_dir, *flags, "--run-name", "cut", "--resume")
    assert not summary["paused"] and summary["steps"] == 3
    a = load_file(tmp_path / "straight" / "checkpoint" / "model.safetensors")
    b = load_file(tmp_path / "cut" / "checkpoint" / "model.safetensors")
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    rows = lambda name: [json.loads(line) for line in open(tmp_path / name / "metrics.jsonl")]
    assert [r["train/lr"] for r in rows("cut")] == [r["train/lr"] for r in rows("straight")]
    assert len({r["train/lr"] for r in rows("cut")}) == 3


@pytest.mark.parametrize(
    "flags,message",
    [
        (["--group-size", "1"], "--group-size must be at least 2, not 1"),
        (["--estimator", "reinforce"], "unknown estimator"),
        (["--secrets-per-step", "500"], "exceeds"),
        (["--ratio-level", "word"], "--ratio-level must be sequence or token, not 'word'"),
        (["--universe", "disc"], "--universe must be full, interval, subset or class, not 'disc'"),
        (["--validation-window", "0"], "--validation-window must be at least 1"),
        (["--lr", "nan"], "--lr must be a finite number, not nan"),
        (["--steps", "-5"], "--steps must be at least 1, not -5"),
        (["--top-p", "1.5"], "--top-p must be at most 1, not 1.5"),
        (["--adam-beta2", "1"], "--adam-beta2 must be less than 1, not 1.0"),
    ],
)
def test_bad_configuration_fails_at_once(tmp_path, capsys, flags, message):
    with pytest.raises(SystemExit) as e:
        train.main(["--out", str(tmp_path), *flags])
    assert e.value.code == 2 and message in capsys.readouterr().err
    assert not any(tmp_path.iterdir())  # nothing was started


def test_a_config_built_in_python_is_checked_as_flags_are(tmp_path, capsys):
    """train(cfg) with a TrainConfig made in Python refuses what the flags refuse."""
    with pytest.raises(SystemExit) as e:
        train.train(config.TrainConfig(out=str(tmp_path), lr=float("inf")))
    assert e.value.code == 2 and "--lr must be a finite number, not inf" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


def test_unknown_flags_and_types_are_errors(tmp_path):
    with pytest.raises(SystemExit):
        train.main(["--stepz", "3"])
    with pytest.raises(SystemExit):
        train.main(["--steps", "many"])


def test_the_same_command_twice_starts_a_second_run_and_resume_continues_the_latest(
    tmp_path, capsys, model_dir
):
    """A run never overwrites another: the second run of a name goes to NAME-2, with its own
    logs; --resume continues the latest run of the name; a name never run cannot be resumed."""
    first, second = (
        run(tmp_path, model_dir, "--steps", "1", "--run-name", "once")[0] for _ in range(2)
    )
    assert (first["run_name"], second["run_name"]) == ("once", "once-2")
    assert (tmp_path / "once" / "summary.json").exists() and (
        tmp_path / "once-2" / "summary.json"
    ).exists()
    (resumed,) = run(tmp_path, model_dir, "--steps", "2", "--run-name", "once", "--resume")
    assert (
        resumed["run_name"] == "once-2"
        and resumed["steps"] == 2
        and not (tmp_path / "once-3").exists()
    )
    # untouched
    assert [json.loads(line)["step"] for line in open(tmp_path / "once" / "metrics.jsonl")] == [1]
    capsys.readouterr()
    with pytest.raises(SystemExit) as e:
        run(tmp_path, model_dir, "--steps", "1", "--run-name", "never", "--resume")
    assert e.value.code == 2 and "nothing to resume" in capsys.readouterr().err
    assert not (tmp_path / "never").exists()


def test_run_directory_numbers_runs_of_a_name(tmp_path):
    """OUT/NAME, then NAME-2, NAME-3; an empty directory is free; resume takes the highest."""
    assert experiment.run_directory(tmp_path, "x") == tmp_path / "x"
    (tmp_path / "x").mkdir()
    assert experiment.run_directory(tmp_path, "x") == tmp_path / "x"  # empty: nothing to overwrite
    for name in ("x", "x-2", "x-10", "x-y", "x-2-3"):
        (tmp_path / name).mkdir(exist_ok=True)
        (tmp_path / name / "metrics.jsonl").write_text("")
    assert experiment.run_directory(tmp_path, "x") == tmp_path / "x-11"
    assert experiment.run_directory(tmp_path, "x", resume=True) == tmp_path / "x-10"
    assert experiment.run_directory(tmp_path, "x-2") == tmp_path / "x-2-4"


def test_validation_secrets_choose_the_kept_checkpoint(tmp_path, model_dir):
    """--validation-secrets sets training secrets aside (never trained on, never the held-out
    ones); the checkpoint with the best mean score over the last --validation-window evaluations
    on them is kept as RUN/best, and the summary's final_eval is the held-out evaluation of that
    kept policy."""
    (summary,) = run(
        tmp_path,
        model_dir,
        "--steps",
        "4",
        "--eval-every",
        "1",
        "--validation-secrets",
        "4",
        "--validation-window",
        "2",
        "--eval-samples",
        "1",
        "--run-name",
        "kept",
    )
    rows = [json.loads(line) for line in open(tmp_path / "kept" / "metrics.jsonl")]
    scores = [r["eval/validation_score"] for r in rows]
    smoothed = [scores[0]] + [(a + b) / 2 for a, b in zip(scores, scores[1:])]  # by hand, window 2
    assert [r["eval/validation_smoothed"] for r in rows] == pytest.approx(smoothed)
    assert summary["kept"]["step"] == max(range(1, 5), key=lambda s: (smoothed[s - 1], s))
    assert (tmp_path / "kept" / "best" / "model.safetensors").exists()
    assert (
        "eval/resolve_rate" in summary["final_eval"] and "eval/resolve_rate" in summary["last_eval"]
    )
    # the halves (2 + 2 of the 4 secrets) are the same score on each half: their mean is the whole's
    halves = [(r["eval/validation_score_a"] + r["eval/validation_score_b"]) / 2 for r in rows]
    assert halves == pytest.approx(scores)


def test_validation_halves_are_alternate_secrets():
    """Secrets 0 and 2 make half a, 1 and 3 half b; each half averages greedy and sampled
    resolve."""
    a, b = experiment.validation_halves([1.0, 0.0, 1.0, 0.0], [0.5, 0.5, 1.0, 0.0])
    assert (a, b) == ((1 + 1 + 0.5 + 1) / 4, (0 + 0 + 0.5 + 0) / 4)


def test_a_run_that_fails_before_its_first_step_leaves_nothing(tmp_path, model_dir, monkeypatch):
    """Stopped (Ctrl-C, out of memory) in its first step, a run leaves no directory; stopped in its
    second, it keeps the first step's record and checkpoint directory for --resume."""
    plays, real = [], train.play_rollouts

    def play_then_stop(*args, **kwargs):
        plays.append(1)
        if len(plays) == stop_at:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(train, "play_rollouts", play_then_stop)
    stop_at = 1
    with pytest.raises(KeyboardInterrupt):
        run(tmp_path, model_dir, "--steps", "3", "--run-name", "stopped")
    assert not any(tmp_path.iterdir())
    plays.clear()
    stop_at = 2
    with pytest.raises(KeyboardInterrupt):
        run(tmp_path, model_dir, "--steps", "3", "--run-name", "stopped", "--save-every", "1")
    assert [json.loads(line)["step"] for line in open(tmp_path / "stopped" / "metrics.jsonl")] == [
        1
    ]
    assert (tmp_path / "stopped" / "checkpoint" / "trainer_state.pt").exists()


def test_a_non_finite_gradient_skips_the_step_and_leaves_the_weights(
    tmp_path, model_dir, monkeypatch
):
    """A NaN loss (here forced) must not reach the optimizer: one such step would make every
    weight NaN and the rest of the run sample from NaN probabilities."""
    objective = update.clipped_objective
    monkeypatch.setattr(
        update,
        "clipped_objective",
        lambda *a, **k: (lambda o, st: (o * float("nan"), st))(*objective(*a, **k)),
    )
    # a KL stop that never fires: every turn is scored, none skipped for A = 0
    (summary,) = run(
        tmp_path,
        model_dir,
        "--steps",
        "1",
        "--ppo-epochs",
        "2",
        "--num-minibatches",
        "2",
        "--target-kl",
        "1e9",
    )
    row = json.loads(open(tmp_path / summary["run_name"] / "metrics.jsonl").readline())
    assert row["train/nonfinite_steps_skipped"] == 4 and row["train/optimizer_steps"] == 0
    before = load_file(f"{model_dir}/model.safetensors")
    after = load_file(tmp_path / summary["run_name"] / "checkpoint" / "model.safetensors")
    assert all(torch.equal(before[k], after[k]) for k in before)


def test_presets_set_what_the_flags_do_not_give_and_are_recorded(tmp_path, model_dir, monkeypatch):
    """The defaults are the tiny model's on the paper set, with no sentinel value; the binary set
    and other models are named presets; a flag the user gives always wins, 0 included; the
    saved config records the presets that applied."""
    monkeypatch.setattr(config, "cpu_computes_bf16", lambda: False)  # any CPU: no llm-cpu-bf16
    defaults, binary = (
        config.config_from_flags([]),
        config.config_from_flags(["--question-set", "binary"]),
    )
    assert defaults == config.TrainConfig()
    assert all(v != -1 for v in vars(defaults).values())
    assert (
        defaults.steps,
        defaults.ppo_epochs,
        defaults.group_size,
        defaults.validation_secrets,
    ) == (80, 4, 4, 0)
    llm = config.config_from_flags(["--model", "org/m", "--device", "cuda"])
    assert (defaults.top_p, binary.top_p, llm.top_p, llm.ppo_epochs) == (0.9, 1.0, 0.9, 1)
    assert (llm.num_minibatches, llm.max_new_tokens, llm.precision) == (4, 128, "auto")
    cpu = config.config_from_flags(["--model", "org/m", "--device", "cpu"])
    cpu_values = config.PRESETS["llm-cpu"].values
    assert {k: getattr(cpu, k) for k in cpu_values} == cpu_values and cpu.lora_rank == 16
    assert train.applied_presets(cpu, config.PRESETS) == ["llm", "llm-cpu"]
    assert train.applied_presets(llm, config.PRESETS) == ["llm"]
    # the paper's episodes: (0, 0, list)
    starts = ("prefix_turns", "refusal_rate", "candidate_format")
    assert [getattr(defaults, k) for k in starts] == [3, 0.3, "runs"]
    assert [getattr(binary, k) for k in starts] == [0, 0.0, "list"]
    assert {k: getattr(binary, k) for k in config.PRESETS["binary"].values} == config.PRESETS[
        "binary"
    ].values
    mine = config.config_from_flags(
        [
            "--question-set",
            "binary",
            "--steps",
            "3",
            "--ppo-epochs",
            "2",
            "--time-limit-min",
            "0",
            "--validation-secrets",
            "0",
        ]
    )
    assert (
        mine.steps,
        mine.ppo_epochs,
        mine.time_limit_min,
        mine.validation_secrets,
        mine.group_size,
    ) == (3, 2, 0, 0, 8)
    lora, full = (
        config.config_from_flags(["--model", "org/m", *extra])
        for extra in ([], ["--lora-rank", "0"])
    )
    assert (lora.lora_rank, lora.lr, full.lora_rank, full.lr) == (16, 5e-6, 0, 1e-6)
    assert config.config_from_flags(["--model", "org/m", "--lr", "3e-4"]).lr == 3e-4
    (summary,) = run(
        tmp_path,
        model_dir,
        "--steps",
        "1",
        "--question-set",
        "binary",
        "--time-limit-min",
        "0",
        "--validation-secrets",
        "0",
        "--run-name",
        "b",
    )
    saved = json.loads((tmp_path / "b" / "train_config.json").read_text())
    assert (
        saved["presets"] == ["llm", "llm-full", "binary", "llm-cpu"]
        and saved["group_size"] == 2
        and saved["steps"] == 1
    )
    assert saved["ppo_epochs"] == 4 and summary["presets"] == saved["presets"]


@pytest.mark.parametrize("hardware", [True, False])
def test_a_cpu_run_computes_in_bf16_only_where_the_cpu_multiplies_it(monkeypatch, hardware):
    """llm-cpu-bf16: a model but tiny on a CPU computes in bf16 where the CPU has a bf16 dot
    product, else in float32 (precision auto); on a GPU, and for the tiny model, the CPU's flags
    change nothing; --precision given wins."""
    monkeypatch.setattr(config, "cpu_computes_bf16", lambda: hardware)
    on_cpu = config.config_from_flags(["--model", "org/m", "--device", "cpu"])
    assert on_cpu.precision == ("bf16" if hardware else "auto")
    assert ("llm-cpu-bf16" in train.applied_presets(on_cpu, config.PRESETS)) == hardware
    assert config.config_from_flags(["--model", "org/m", "--device", "cuda"]).precision == "auto"
    assert config.config_from_flags(["--device", "cpu"]).precision == "auto"
    given = ["--model", "org/m", "--device", "cpu", "--precision", "fp32"]
    assert config.config_from_flags(given).precision == "fp32"


def test_a_cpu_computes_bf16_where_its_flags_name_a_bf16_dot_product():
    """x86's AVX512-BF16 or AMX-BF16 flag, either: AVX2 or AVX-512 alone do not multiply bf16."""
    assert cli.cpu_computes_bf16({"avx2", "avx512f", "avx512_bf16"})
    assert cli.cpu_computes_bf16({"avx2", "amx_bf16", "amx_tile"})
    assert not cli.cpu_computes_bf16({"avx", "avx2", "fma"})
    assert not cli.cpu_computes_bf16({"avx2", "avx512f", "avx512bw", "avx512_vnni"})
    assert not cli.cpu_computes_bf16(set())


def test_help_shows_each_default_and_the_presets(capsys):
    with pytest.raises(SystemExit):
        train.main(["--help"])
    text = capsys.readouterr().out
    assert "-1" not in text and f"(default: {config.TrainConfig().steps}; binary: 200)" in " ".join(
        text.split()
    )
    assert all(f"  {name} " in text for name in config.PRESETS)


def test_split_seed_chooses_another_held_out_split():
    """--split-seed: another held-out split (and validation secrets carved from the rest), the
    three sets disjoint and covering 1..n_max; the default split is the seed-0 one."""
    splits = [
        episodes.split_secrets(
            settings(episodes.SplitConfig, config.TrainConfig(split_seed=s, validation_secrets=10))
        )
        for s in (0, 1)
    ]
    for training, validation, heldout in splits:
        assert sorted(training + validation + heldout) == list(range(1, 101))
        assert len(heldout) == 20 and len(validation) == 10
    assert splits[0][2] != splits[1][2] and splits[0][1] != splits[1][1]
    assert splits[0][2] == secret_split(100, 20)[1]


@pytest.mark.parametrize("universe,share", [("interval", 1.0), ("subset", 0.5)])
def test_training_universes_vary_and_hold_their_secrets(tmp_path, model_dir, universe, share):
    """--universe KIND --universe-least K --universe-share p: about a share p of a step's secrets
    start their G rollouts from one drawn universe of at least K numbers that holds the secret
    (intervals lo..hi, or subsets), the rest from 1..n_max; evaluation stays on 1..n_max."""
    import rollouts

    seen = []
    original = rollouts.CSG

    def recording(secrets, cfg, oracle=None, universes=None):
        seen.append((list(secrets), universes))
        return original(secrets, cfg, oracle, universes)

    rollouts.CSG = recording
    try:
        run(
            tmp_path,
            model_dir,
            "--steps",
            "3",
            "--universe",
            universe,
            "--universe-least",
            "10",
            "--universe-share",
            str(share),
            "--question-set",
            "binary",
            "--time-limit-min",
            "0",
            "--validation-secrets",
            "0",
            "--eval-samples",
            "0",
            "--group-size",
            "3",
            "--secrets-per-step",
            "8",
        )
    finally:
        rollouts.CSG = original
    full = frozenset(range(1, 101))
    played = [(s, [frozenset(u) for u in us]) for s, us in seen if us is not None]
    assert len(played) == 3, "every training batch says its universes"
    drawn = [u for _, us in played for u in us[::3] if u != full]
    assert (len(drawn) == 24) if share == 1.0 else (4 <= len(drawn) <= 20)
    contiguous = [u == frozenset(range(min(u), max(u) + 1)) for u in drawn]
    assert all(contiguous) if universe == "interval" else not any(contiguous)
    for secrets, universes in played:
        assert all(s in u and len(u) >= 10 for s, u in zip(secrets, universes))
        assert all(
            universes[3 * b : 3 * b + 3] == [universes[3 * b]] * 3 for b in range(len(secrets) // 3)
        )


def run_watching_replays(tmp_path, model_dir, check, *flags):
    """A run with these flags, returning its training batches and, for each turn the credit probe
    replayed (fidelity.replay), check(replayed game, its start, turn)."""
    import fidelity

    batches, replayed = [], []
    play, replay = train.play_rollouts, fidelity.replay

    def recording(*a, **k):
        batches.append(play(*a, **k))
        return batches[-1]

    def checked(records, start, turn, cfg):
        game = replay(records, start, turn, cfg)
        replayed.append(check(game, start, turn))
        return game

    train.play_rollouts, fidelity.replay = recording, checked
    try:
        run(tmp_path, model_dir, *flags)
    finally:
        train.play_rollouts, fidelity.replay = play, replay
    return batches, replayed


def test_refused_families_are_drawn_per_secret_and_the_credit_probe_replays_them(
    tmp_path, model_dir
):
    """--refusal-rate p: each family an arm owns is refused in a training secret's episodes with
    chance p, one draw shared by its G rollouts, at turn 0; a refused question in a rollout was
    deflected; the credit probe replays turns under the same refusals; with p = 0 the draws of a
    step's starts are those of a run without the flag (episodes.episode_starts)."""
    from env import ARM_FAMILIES
    from episodes import episode_starts
    from oracle import DEFLECTION

    families = {f for owned in ARM_FAMILIES.values() for f in owned}
    batches, replayed = run_watching_replays(
        tmp_path,
        model_dir,
        lambda game, start, turn: game.episodes[0].refused == start.refused,
        "--steps",
        "2",
        "--refusal-rate",
        "0.5",
        "--credit-probe",
        "4",
        "--group-size",
        "3",
        "--secrets-per-step",
        "8",
        "--prefix-turns",
        "0",
    )
    assert replayed and all(replayed)
    refused = [b.starts[3 * k].refused for b in batches for k in range(8)]
    assert all(
        b.starts[3 * k + g].refused == b.starts[3 * k].refused
        for b in batches
        for k in range(8)
        for g in range(3)
    )
    assert all(r <= families for r in refused) and all(
        s.turn == 0 for b in batches for s in b.starts
    )
    assert (
        0.25 < sum(map(len, refused)) / (len(refused) * len(families)) < 0.75
        and len(set(refused)) > 4
    )
    for b in batches:
        assert all(
            r.hint == DEFLECTION
            for r in b.records
            if r.question_type in b.starts[r.episode].refused
        )
    # the paper's episode starts
    cfg = replace(config.TrainConfig(), prefix_turns=0, refusal_rate=0.0)
    game_cfg, rngs = settings(GameConfig, cfg), [random.Random(5), random.Random(5)]
    assert (
        episode_starts(
            settings(StartConfig, cfg),
            rng=rngs[0],
            secrets=[3, 9],
            step=0,
            seed=0,
            game_cfg=game_cfg,
            oracle=None,
        )[1]
        is None
    )
    assert rngs[0].random() == rngs[1].random()  # p = 0 draws nothing of its own
    _, starts = episode_starts(
        settings(StartConfig, replace(cfg, refusal_rate=1.0)),
        rng=rngs[0],
        secrets=[3, 9],
        step=0,
        seed=0,
        game_cfg=game_cfg,
        oracle=None,
    )
    assert [s.refused for s in starts] == [families] * 2 and [s.secret for s in starts] == [3, 9]


def test_hidden_beliefs_are_drawn_per_secret_and_the_credit_probe_replays_them(tmp_path, model_dir):
    """--hidden-share p: a training secret's G rollouts all leave C_t out of their prompts or none
    do (one draw per secret); the credit probe replays a turn with the same prompt; p = 0 draws
    nothing (episodes.episode_starts), p = 1 hides every secret's."""
    from episodes import episode_starts

    hidden_prompt = lambda game: (
        "Remaining candidates not shown" in game.messages()[0][1]["content"]
    )
    batches, replayed = run_watching_replays(
        tmp_path,
        model_dir,
        lambda game, start, turn: game.episodes[0].hidden == start.hidden == hidden_prompt(game),
        "--steps",
        "2",
        "--hidden-share",
        "0.5",
        "--credit-probe",
        "4",
        "--group-size",
        "3",
        "--secrets-per-step",
        "8",
    )
    assert replayed and all(replayed)
    assert all(
        b.starts[3 * k + g].hidden == b.starts[3 * k].hidden
        for b in batches
        for k in range(8)
        for g in range(3)
    )
    assert 0 < sum(b.starts[3 * k].hidden for b in batches for k in range(8)) < 16
    # the paper's episode starts
    cfg = replace(config.TrainConfig(), prefix_turns=0, refusal_rate=0.0)
    game_cfg, rngs = settings(GameConfig, cfg), [random.Random(5), random.Random(5)]
    assert (
        episode_starts(
            settings(StartConfig, cfg),
            rng=rngs[0],
            secrets=[3, 9],
            step=0,
            seed=0,
            game_cfg=game_cfg,
            oracle=None,
        )[1]
        is None
        and rngs[0].random() == rngs[1].random()
    )
    _, starts = episode_starts(
        settings(StartConfig, replace(cfg, hidden_share=1.0)),
        rng=rngs[0],
        secrets=[3, 9],
        step=0,
        seed=0,
        game_cfg=game_cfg,
        oracle=None,
    )
    assert [s.hidden for s in starts] == [True, True] and [s.secret for s in starts] == [3, 9]


def test_the_run_plays_the_game_its_settings_describe():
    """game_config carries every game setting of the run (the prompt's candidate format too, which
    evaluation then reads from the run's train_config.json)."""
    cfg = config.config_from_flags(
        [
            "--candidate-format",
            "runs",
            "--question-set",
            "binary",
            "--n-max",
            "60",
            "--redundancy-penalty",
            "-0.5",
        ]
    )
    game = settings(GameConfig, replace(cfg, expected_info=True))
    assert (game.candidate_format, game.question_set, game.n_max, game.expected_info) == (
        "runs",
        "binary",
        60,
        True,
    )
    assert game.redundancy_penalty == -0.5
    assert (
        settings(GameConfig, replace(config.TrainConfig(), candidate_format="list")) == GameConfig()
    )


def test_rollouts_can_start_after_random_turns_and_the_credit_probe_replays_them(
    tmp_path, model_dir
):
    """--prefix-turns K: a secret's rollouts carry on after up to K random-question turns, which
    are not the learner's (no turn of the batch is earlier than its start), and the credit probe
    (at each evaluation) replays each picked turn from that start, in its own universe."""
    batches, replayed = run_watching_replays(
        tmp_path,
        model_dir,
        lambda game, start, turn: (
            game.episodes[0].turn == turn and game.episodes[0].candidates <= start.candidates
        ),
        "--steps",
        "2",
        "--prefix-turns",
        "4",
        "--universe",
        "subset",
        "--credit-probe",
        "4",
    )
    assert replayed and all(replayed)
    starts = [s.turn for b in batches for s in b.starts]
    assert max(starts) > 0 and all(s.turn <= 4 for b in batches for s in b.starts)
    for b in batches:
        assert all(r.turn >= b.starts[r.episode].turn for r in b.records)


def test_an_action_outside_the_scoring_nucleus_still_has_a_ratio(model_dir):  # noqa: F811
    """Actions sampled from a wider distribution than the update scores under (here top-p 1 against
    0.5; on a GPU, the bf16 copy at a nucleus edge): pi_old is scored again on the trained model,
    and every action keeps a finite log-ratio, so Eq. 2's first ratio is 1 and no optimizer step is
    skipped as not finite."""
    policy = models.load_policy(model_dir, "cpu", "fp32")
    batch = play_rollouts(
        policy, [3, 4], 2, GameConfig(), SampleConfig(max_new_tokens=8), seeds=[0, 1, 2, 3]
    )
    cfg = replace(config.TrainConfig(), top_p=0.5, micro_batch=4)
    # each action token's log-prob under the 0.5 nucleus alone: some fall outside it
    with torch.no_grad():
        cut = []
        for p, c in zip(batch.prompt_ids, batch.completion_ids):
            logits = policy.model(input_ids=torch.tensor([p + c])).logits[0, len(p) - 1 : -1]
            cut.append(process_logits(logits, 1.0, 0.5).gather(-1, torch.tensor(c)[:, None]))
        scored = [
            policy.score([p], [c], 1.0, 0.5)[0][0]
            for p, c in zip(batch.prompt_ids, batch.completion_ids)
        ]
    assert any(torch.isinf(x).any() for x in cut) and all(torch.isfinite(x).all() for x in scored)
    optimizer = torch.optim.AdamW(policy.model.parameters(), lr=1e-3)
    advantages = torch.randn(len(scored), generator=torch.Generator().manual_seed(1))
    shuffle = torch.Generator().manual_seed(0)
    row = update.ppo_update(
        policy,
        optimizer,
        batch,
        advantages,
        settings(UpdateConfig, cfg),
        shuffle=shuffle,
        ref_policy=None,
        ranks=Ranks(),
        sampled_are_old=False,
    )
    assert (
        row["train/nonfinite_steps_skipped"] == 0
        and row["train/optimizer_steps"] == cfg.ppo_epochs * cfg.num_minibatches
    )
    assert math.isfinite(row["train/loss"]) and row["train/first_step_log_ratio_max"] < 1e-5


def test_turns_of_advantage_zero_are_not_scored_and_the_update_is_the_same(model_dir):
    """Eq. 2's term of a turn whose advantage is 0 is 0, and so is its gradient: where pi_old is the
    sampled log-probs, the update skips scoring those turns yet ends on the weights of one that
    scores every turn (a KL stop that never fires, --target-kl 1e9, makes it score them all), also
    when a whole update's advantages are 0 and only Adam's momentum moves the weights."""
    start = models.load_policy(model_dir, "cpu", "fp32")
    batch = play_rollouts(
        start, [3, 4, 5], 2, GameConfig(), SampleConfig(max_new_tokens=8), seeds=list(range(6))
    )
    n = len(batch.prompt_ids)
    advantages = torch.randn(n, generator=torch.Generator().manual_seed(1)) * (torch.arange(n) % 2)

    def updates(target_kl):
        policy = models.load_policy(model_dir, "cpu", "fp32")
        # as the batch was sampled
        cfg = replace(config.TrainConfig(), target_kl=target_kl, micro_batch=4, top_p=1.0)
        optimizer = torch.optim.AdamW(policy.model.parameters(), lr=1e-3, weight_decay=0.0)
        scored, score = [], policy.score
        policy.score = lambda p, c, *a: (
            scored.append(len(p) * torch.is_grad_enabled()) or score(p, c, *a)
        )
        shuffle = torch.Generator().manual_seed(0)
        update.ppo_update(
            policy,
            optimizer,
            batch,
            advantages,
            settings(UpdateConfig, cfg),
            shuffle=shuffle,
            ref_policy=None,
            ranks=Ranks(),
            sampled_are_old=True,
        )
        after_one = torch.cat([p.detach().flatten() for p in policy.model.parameters()])
        shuffle = torch.Generator().manual_seed(0)
        update.ppo_update(
            policy,
            optimizer,
            batch,
            torch.zeros(n),
            settings(UpdateConfig, cfg),
            shuffle=shuffle,
            ref_policy=None,
            ranks=Ranks(),
            sampled_are_old=True,
        )
        return (
            sum(scored),
            after_one,
            torch.cat([p.detach().flatten() for p in policy.model.parameters()]),
        )

    scored, one, two = updates(0.0)
    all_scored, want_one, want_two = updates(1e9)
    passes = config.TrainConfig().ppo_epochs
    # Eq. 2's passes with gradient
    assert all_scored == 2 * passes * n and scored == passes * (n - n // 2)
    # to the rounding of passes padded to other widths (a skipped turn shortens its micro-batch);
    # a wrong skip would move weights by steps of the learning rate, 1e-3
    assert torch.allclose(one, want_one, atol=1e-5) and torch.allclose(two, want_two, atol=1e-5)
    # the all-zero update still stepped, on momentum alone
    assert not torch.allclose(one, two, atol=1e-5)
