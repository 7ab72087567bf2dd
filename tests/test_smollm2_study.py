"""bench/smollm2_study.py's bookkeeping, without training: the flags of its runs, which runs are
due, and the choice of each estimator's rate on the validation secrets alone."""

import json

import pytest

import config
import train
from bench import smollm2_study
from bench.smollm2_study import SmolStudyConfig, chosen_rates, due, run_flags
from env import GameConfig


def test_the_runs_train_smollm2_under_the_cpu_preset_on_the_sealed_split():
    """A run's flags: SmolLM2 under the llm and llm-cpu presets, the sealed split, 10 validation
    secrets to choose on, a checkpoint every step and one thread."""
    cfg = config.config_from_flags(run_flags(SmolStudyConfig(), "grpo", "3e-4"))
    assert train.applied_presets(cfg, config.PRESETS)[0] == "llm"
    assert (cfg.model, cfg.estimator, cfg.lr, cfg.steps) == ("smollm2", "grpo", 3e-4, 60)
    sealed = json.load(open("bench/results/sealed.json"))["split_seed"]
    assert cfg.split_seed == sealed and cfg.validation_secrets == 10
    assert (cfg.save_every, cfg.threads, cfg.pause_after) == (1, 1, 0)
    assert cfg.run_name == "grpo-lr3e-4"


def fake_run(root, name, scores: dict[int, float]):
    """A run directory whose metrics hold these validation scores by step, checkpointed at the
    last of them."""
    run = root / name
    (run / "checkpoint").mkdir(parents=True)
    (run / "checkpoint" / "trainer_state.pt").write_bytes(b"")
    rows = [{"step": s, "eval/validation_score": v} for s, v in sorted(scores.items())]
    (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_each_rate_is_chosen_on_the_screens_last_validation_score_a_tie_to_the_smaller(
    tmp_path, monkeypatch
):
    """echo: 1e-3 scores higher at step 10 (though lower at step 5); grpo: a tie at step 10 goes
    to 3e-4. Only the screen's step counts."""
    monkeypatch.setattr(smollm2_study, "ROOT", tmp_path)
    cfg = SmolStudyConfig(runs="r", screen_steps=10)
    fake_run(tmp_path / "r", "echo-lr3e-4", {5: 0.9, 10: 0.4})
    fake_run(tmp_path / "r", "echo-lr1e-3", {5: 0.1, 10: 0.6})
    fake_run(tmp_path / "r", "grpo-lr3e-4", {10: 0.5})
    fake_run(tmp_path / "r", "grpo-lr1e-3", {10: 0.5, 20: 0.9})
    choice = chosen_rates(cfg)
    assert choice["echo"]["lr"] == "1e-3" and choice["grpo"]["lr"] == "3e-4"
    assert choice["echo"]["validation_scores"] == {"3e-4": 0.4, "1e-3": 0.6}


def test_a_run_is_due_until_its_checkpoint_reaches_its_step(tmp_path, monkeypatch):
    monkeypatch.setattr(smollm2_study, "ROOT", tmp_path)
    cfg = SmolStudyConfig(runs="r")
    fake_run(tmp_path / "r", "echo-lr3e-4", {10: 0.4})
    runs = [("echo", "3e-4", 10), ("echo", "3e-4", 60), ("grpo", "3e-4", 10)]
    assert due(cfg, runs) == runs[1:]


def test_a_done_run_plays_its_kept_checkpoint_then_the_start_while_the_other_trains(
    tmp_path, monkeypatch
):
    """Stage 4 as the runs allow: echo at its last step plays its kept checkpoint (`best`) and
    then the start, at the one thread the grpo run still training leaves; grpo, short of its last
    step, plays nothing until it gets there; nothing is played twice."""
    monkeypatch.setattr(smollm2_study, "ROOT", tmp_path)
    cfg = SmolStudyConfig(runs="r", steps=60, out=str(tmp_path / "study.json"))
    fake_run(tmp_path / "r", "echo-lr3e-4", {10: 0.4, 60: 0.8})
    fake_run(tmp_path / "r", "grpo-lr3e-4", {10: 0.5, 30: 0.6})
    played, threads = [], []
    monkeypatch.setattr(smollm2_study, "start_policy", lambda c: ("start", None))
    load = lambda path, *args, **kwargs: path.split("/")[-2]  # noqa: E731
    monkeypatch.setattr(smollm2_study.models, "load_policy", load)
    monkeypatch.setattr(smollm2_study, "both_sets", lambda p, t, c, name: played.append(p) or p)
    monkeypatch.setattr(smollm2_study.torch, "set_num_threads", threads.append)
    monkeypatch.setattr(smollm2_study.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(smollm2_study, "save", lambda result, c: None)
    result, chosen = {}, {"echo": "3e-4", "grpo": "3e-4"}
    smollm2_study.play_due(result, cfg, chosen, busy=1)
    assert played == ["echo-lr3e-4", "start"] and threads == [1]
    assert result["kept"] == {"echo": "echo-lr3e-4"} and result["step0"] == "start"
    (tmp_path / "r" / "grpo-lr3e-4" / "metrics.jsonl").write_text(json.dumps({"step": 60}) + "\n")
    smollm2_study.play_due(result, cfg, chosen, busy=0)
    assert played == ["echo-lr3e-4", "start", "grpo-lr3e-4"] and threads == [1, 2]


def test_a_run_done_in_an_earlier_call_plays_while_the_run_left_trains(tmp_path, monkeypatch):
    """A call that finds echo done and grpo short of its step starts grpo and plays at once, at
    the one core grpo leaves, not only once grpo ends; then again when grpo ends, at both."""
    monkeypatch.setattr(smollm2_study, "ROOT", tmp_path)
    monkeypatch.setattr(smollm2_study.time, "sleep", lambda s: None)
    cfg = SmolStudyConfig(runs="r", steps=60)
    (tmp_path / "r").mkdir()
    polls = iter([None, None, 0])  # grpo trains for two polls, then ends

    class Training:
        returncode = 0

        def __init__(self, argv, **kwargs):
            self.argv = argv

        def poll(self):
            return next(polls)

    started, calls = [], []
    monkeypatch.setattr(
        smollm2_study.subprocess, "Popen", lambda a, **k: started.append(a) or Training(a)
    )
    on_done = lambda busy: calls.append((busy, len(started)))  # noqa: E731
    smollm2_study.train_all(cfg, [("grpo", "3e-4", 60)], on_done=on_done)
    assert len(started) == 1 and "grpo-lr3e-4" in started[0]
    assert calls == [(1, 1), (0, 1)]


def test_a_call_records_where_its_bf16_products_run_and_which_steps_it_trained(
    tmp_path, monkeypatch
):
    """The runs compute in bf16 wherever they go on: on a CPU without a bf16 dot product a call
    trains too, and the file's last call says its products ran in float32 kernels and each run's
    steps before it; --status adds no call, and brings the last call's steps up to date."""
    monkeypatch.setattr(smollm2_study, "ROOT", tmp_path)
    monkeypatch.setattr(smollm2_study, "cpu_computes_bf16", lambda: False)
    monkeypatch.setattr(smollm2_study, "figure", lambda result, path: None)

    def start_policy(cfg):
        raise RuntimeError("trains from here")

    monkeypatch.setattr(smollm2_study, "start_policy", start_policy)
    out = ["--runs", "r", "--out", str(tmp_path / "study.json")]
    assert "calls" not in smollm2_study.main([*out, "--status"])
    with pytest.raises(RuntimeError, match="trains from here"):
        smollm2_study.main(out)
    (call,) = json.loads((tmp_path / "study.json").read_text())["calls"]
    assert call["bf16_products"].startswith("float32 kernels") and not call["machine"]["cpu_bf16"]
    names = {f"{e}-lr{lr}" for e in ("echo", "grpo") for lr in ("3e-4", "1e-3")}
    assert call["steps_from"] == call["steps_to"] == dict.fromkeys(names, 0)
    run = tmp_path / "r" / "echo-lr3e-4"  # the call's run, 3 steps on
    (run / "checkpoint").mkdir(parents=True)
    (run / "checkpoint" / "trainer_state.pt").write_bytes(b"")
    (run / "metrics.jsonl").write_text(json.dumps({"step": 3}) + "\n")
    monkeypatch.setattr(smollm2_study, "curve", lambda run_dir, names: [])
    (call,) = smollm2_study.main([*out, "--status"])["calls"]
    assert call["steps_from"]["echo-lr3e-4"] == 0 and call["steps_to"]["echo-lr3e-4"] == 3
    # the call trains on to step 5 and is stopped before it writes so; the next call says it
    (run / "metrics.jsonl").write_text(json.dumps({"step": 5}) + "\n")
    with pytest.raises(RuntimeError, match="trains from here"):
        smollm2_study.main(out)
    first, second = json.loads((tmp_path / "study.json").read_text())["calls"]
    assert first["steps_to"]["echo-lr3e-4"] == second["steps_from"]["echo-lr3e-4"] == 5
    assert "--precision bf16" in " ".join(run_flags(SmolStudyConfig(), "echo", "3e-4"))


def test_a_play_cut_short_goes_on_with_the_draws_it_would_have_made(tmp_path, monkeypatch):
    """A play stopped after its greedy half and its first sampled chunk, and resumed from the
    file it kept, plays only the chunks left, from the generator as the first chunk left it: its
    figures are evaluate_policy's, and its generator ends where an uninterrupted play's does."""
    import rollouts
    from evaluate import evaluate_policy
    from lm import models
    from oracle import RuleOracle

    policy, real = models.load_policy("tiny", "cpu", "fp32"), rollouts.play_rollouts
    chunks = []
    recording = lambda p, secrets, *a, **k: (
        chunks.append(list(secrets)) or real(p, secrets, *a, **k)
    )  # noqa: E731
    monkeypatch.setattr(rollouts, "play_rollouts", recording)
    cfg, game, secrets, rows = (
        SmolStudyConfig(eval_samples=2),
        GameConfig(max_turns=2),
        [3, 17, 42, 64, 99],
        4,
    )
    whole = {}
    figures = smollm2_study.played(policy, game, secrets, cfg, rows, whole, lambda: None)
    ev = evaluate_policy(policy, secrets, game, RuleOracle(), 2, 10_000, rows=rows)
    assert figures["greedy"] == ev["eval/resolve_rate"]
    assert figures["sampled"] == ev["eval/sampled_resolve_rate"]
    assert figures["valid_rate"] == 1 - ev["eval/invalid_rate"]

    class Stopped(Exception):
        pass

    path, kept = tmp_path / "plays" / "p.pt", {}

    def keep_twice():
        smollm2_study.save_play(kept, path)
        if "episodes" in kept:
            raise Stopped  # the call ends after its first sampled chunk

    chunks.clear()
    with pytest.raises(Stopped):
        smollm2_study.played(policy, game, secrets, cfg, rows, kept, keep_twice)
    assert chunks == [[3, 17]]  # 4 rows: two secrets x two samples
    saved = smollm2_study.torch.load(path)
    assert len(saved["episodes"]) == 4 and "greedy" in saved
    chunks.clear()
    resumed = smollm2_study.played(policy, game, secrets, cfg, rows, saved, lambda: None)
    assert chunks == [[42, 64], [99]] and resumed == figures
    assert smollm2_study.torch.equal(saved["generator"], whole["generator"])
    assert len(saved["episodes"]) == len(secrets) * 2


def test_a_play_records_each_place_that_played_a_part_of_it_once(tmp_path, monkeypatch):
    """both_sets keeps each finished piece: a call stopped in the 1..200 play leaves the held-out
    figures kept, a call on another machine plays only what is left, and the play's record lists
    the two places, each once however many calls it took there."""
    monkeypatch.setattr(smollm2_study, "ROOT", tmp_path)
    cfg, train_cfg = SmolStudyConfig(runs="r"), smollm2_study.study_train_config(SmolStudyConfig())
    places, played = iter(["bf16 cpu", "avx2 cpu", "avx2 cpu"]), []

    def playing(policy, game, secrets, cfg, rows, saved, keep):
        if "greedy" in saved:  # a finished piece, from what it kept
            return {"greedy": saved["greedy"]}
        played.append(len(secrets))
        if len(secrets) == 200 and len(played) == 2:
            raise KeyboardInterrupt  # the first call stops here
        saved["greedy"] = 0.5
        keep()
        return {"greedy": 0.5}

    monkeypatch.setattr(smollm2_study, "here", lambda: {"machine": next(places)})
    monkeypatch.setattr(smollm2_study, "played", playing)
    monkeypatch.setattr(smollm2_study, "sampled_batch", lambda *a: None)
    monkeypatch.setattr(smollm2_study, "again_probabilities", lambda p, b: ([0.5], [0.25]))
    with pytest.raises(KeyboardInterrupt):
        smollm2_study.both_sets("policy", train_cfg, cfg, "step0")
    out = smollm2_study.both_sets("policy", train_cfg, cfg, "step0")
    assert played == [20, 200, 200]  # the held-out secrets once, 1..200 again
    assert out["played_on"] == [{"machine": "bf16 cpu"}, {"machine": "avx2 cpu"}]
    assert out["heldout_repeat_ratio"] == smollm2_study.repeat_ratio([0.5], [0.25])


def test_a_plays_file_loads_as_torch_load_loads_by_default(tmp_path):
    """A play's file holds plain data, so that the next call loads it with torch.load's default
    (weights only): where it was played included, and a generator's state."""
    saved = {"played_on": [smollm2_study.here()], "generator": smollm2_study.torch.get_rng_state()}
    smollm2_study.save_play(saved, tmp_path / "p.pt")
    loaded = smollm2_study.torch.load(tmp_path / "p.pt")
    assert loaded["played_on"] == saved["played_on"] and not (tmp_path / "p.part").exists()


def test_a_replay_plays_a_kept_checkpoint_again_beside_its_first_play_and_trains_nothing(
    tmp_path, monkeypatch
):
    """--replay echo plays echo's chosen run's kept checkpoint (`best`) again into the file's
    "replayed", at every core, leaving its first play as it was and adding no call; an estimator
    whose kept checkpoint has not been played is refused."""
    monkeypatch.setattr(smollm2_study, "ROOT", tmp_path)
    monkeypatch.setattr(smollm2_study, "figure", lambda result, path: None)
    for name, scores in (("echo-lr3e-4", {10: 0.4, 60: 0.8}), ("echo-lr1e-3", {10: 0.6})):
        fake_run(tmp_path / "r", name, scores)
    for name in ("grpo-lr3e-4", "grpo-lr1e-3"):
        fake_run(tmp_path / "r", name, {10: 0.5})
    out = tmp_path / "study.json"
    first = {"heldout": "bf16 hardware"}
    out.write_text(json.dumps({"kept": {"echo": first}, "calls": [{"steps_from": {}}]}))
    load = lambda path, *args, **kwargs: path.split("/")[-2]  # noqa: E731
    monkeypatch.setattr(smollm2_study.models, "load_policy", load)
    monkeypatch.setattr(smollm2_study, "both_sets", lambda p, t, c, name: {"policy": p, "as": name})
    threads = []
    monkeypatch.setattr(smollm2_study.torch, "set_num_threads", threads.append)
    monkeypatch.setattr(smollm2_study.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(smollm2_study, "train_all", lambda *a, **k: pytest.fail("it trains"))
    argv = ["--runs", "r", "--out", str(out)]
    result = smollm2_study.main([*argv, "--replay", "echo"])
    saved = json.loads(out.read_text())
    assert saved["replayed"] == {"echo": {"policy": "echo-lr1e-3", "as": "replay-echo"}}
    assert saved["kept"] == {"echo": first} and len(saved["calls"]) == 1  # no call added
    assert result["replayed"] == saved["replayed"] and threads == [2]
    with pytest.raises(SystemExit, match="grpo's kept checkpoint has not been played"):
        smollm2_study.main([*argv, "--replay", "grpo"])
