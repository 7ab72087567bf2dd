"""What a research run adds around train.py's loop: the run's directory and logs, checkpoints
and --resume, the checkpoint the run keeps (chosen on validation secrets), the config's checks,
the secrets' split, the policy's set-up, and the closing summary with its curves.

train.py calls this module at the points marked `# run:`; the paper's loop itself (play,
credit, Eq. 2, log) stays in train.py. Several processes (torchrun) are handled by the
`Ranks` that train.py passes in (tools/ranks.py): rank 0 alone writes, evaluates and prints.

Departures from the paper, and why:
- A run never overwrites another: running the same command again writes OUT/NAME-2, -3, ...;
  `--resume` continues the latest of them from its last checkpoint. Checkpoints are written
  atomically, so a crash never leaves a broken one.
- With `validation_secrets` > 0 the run keeps (as RUN/best) the policy with the best mean
  validation score over `validation_window` evaluations in a row, and its held-out evaluation
  is the run's result (the paper reports its last checkpoint). The best single evaluation of a
  run is mostly luck: 10 secrets, scored greedy and sampled, are noisy. Validation secrets are
  training secrets set aside, never trained on; the held-out secrets never choose.
"""

from __future__ import annotations

import glob
import json
import random
import shutil
import time
from dataclasses import dataclass, replace
from pathlib import Path

import torch

from baselines import (
    Credit,
    EstimatorContext,
    episode_returns,
)
from env import CSG, GameConfig
from evaluate import evaluate_policy
from lm import models
from lm.models import ModelConfig
from lm.warmup import WarmupConfig, starting_policy
from metrics import training_metrics
from rollouts import RolloutBatch
from tools.cli import code_version, fail
from tools.ranks import Ranks
from tools.ranks import finish as ranks_finish
from tools.report import TensorBoardLog, plot_curves


def run_directory(out: str, name: str, resume: bool = False) -> Path:
    """Where a run writes: OUT/NAME, or OUT/NAME-2, NAME-3, ... when that is taken, so the same
    command run again starts a new run. With resume: the latest run of that name."""
    first = Path(out) / name
    taken = {1: first} if first.exists() and any(first.iterdir()) else {}
    for path in Path(out).glob(glob.escape(name) + "-*"):
        number = path.name[len(name) + 1 :]
        if number.isdigit() and int(number) >= 2:
            taken[int(number)] = path
    if resume:
        return taken[max(taken)] if taken else first
    return Path(out) / (f"{name}-{max(taken) + 1}" if taken else name)


def eval_seed(seed: int, step: int) -> int:
    """The sampling seed of the held-out evaluation after a run's step (1-based, as logged; the last
    is the run's `steps`, whichever checkpoint the run keeps), so that the evaluation can be played
    again exactly (bench/generalization.py)."""
    return seed * 100_003 + step


def read_trainer_state(run_dir: Path) -> dict:
    """What --resume restores: RUN/checkpoint/trainer_state.pt (optimizer, random streams, kept
    checkpoint, estimator state) and the metric rows up to its step (later steps are redone).
    A damaged file is a DamagedFileError that names it."""
    path = run_dir / "checkpoint" / "trainer_state.pt"
    try:
        saved = torch.load(path, weights_only=False)
        missing = {"step", "optimizer", "rngs", "estimator", "kept"} - set(saved)
    except Exception as e:  # the unpickler's errors have no common class (EOFError, ...)
        raise models.damaged(path, type(e).__name__) from e
    if missing:
        raise models.damaged(path, f"no {', '.join(sorted(missing))}")
    rows, step = run_dir / "metrics.jsonl", saved["step"]
    try:
        saved["rows"] = [json.loads(line) for line in open(rows).readlines()[:step]]
    except (OSError, ValueError) as e:
        raise models.damaged(rows, type(e).__name__) from e
    if len(saved["rows"]) < step:
        raise models.damaged(rows, f"{len(saved['rows'])} rows for a checkpoint at step {step}")
    return saved


@dataclass(frozen=True)
class RunConfig:
    """What a run's directory, console, evaluations and checkpoints are set by: train.py's flags
    of the same names (their defaults and meanings are in config.TrainConfig)."""

    out: str  # runs go to OUT/NAME (-2, -3, ... if taken)
    run_name: str  # NAME; "": ESTIMATOR-QUESTION_SET-seedSEED
    resume: bool  # continue the latest run of NAME from its last checkpoint
    estimator: str
    question_set: str
    seed: int  # of the secrets each step plays and of Eq. 2's minibatches
    steps: int
    secrets_per_step: int  # B
    group_size: int  # G
    max_new_tokens: int  # with B x G, what a step's generation must fit in memory
    lr: float
    eval_every: int
    eval_samples: int
    eval_rows: int  # most sampled evaluation episodes decoded at once (0: all)
    save_every: int
    time_limit_min: float  # 0: none
    pause_after: int  # stop after this step to be resumed (0: never)
    validation_window: int
    tensorboard: bool  # also write each step's row to TensorBoard event files


def smoothed(scores: list[float], window: int) -> list[float]:
    """Each validation score's mean with the `window` - 1 before it (fewer at the start): the
    figure the kept checkpoint is chosen on."""
    return [
        sum(scores[max(0, i - window + 1) : i + 1]) / len(scores[max(0, i - window + 1) : i + 1])
        for i in range(len(scores))
    ]


def kept_evaluation(scores: list[float], window: int) -> int:
    """Which evaluation a run keeps: the last with the best smoothed score (`Run.keep_best` saves
    on >=, so a later tie wins)."""
    s = smoothed(scores, window)
    return max(range(len(s)), key=lambda i: (s[i], i))


def validation_halves(greedy: list[float], sampled: list[float]) -> tuple[float, float]:
    """The validation score (greedy and sampled resolve, averaged) on each half of the validation
    secrets, alternate ones, so that a rule for keeping checkpoints can be chosen on one half and
    judged on the other (bench/binary_defaults.py). Per-secret lists in the same order."""
    a, b = greedy[0::2] + sampled[0::2], greedy[1::2] + sampled[1::2]
    return sum(a) / max(len(a), 1), sum(b) / max(len(b), 1)


def changed_on_resume(run_dir: Path, config: dict, kept: set[str]) -> str | None:
    """Why --resume must not continue the run in `run_dir` with `config`, or None: a setting of
    `kept` whose value differs from the one the run trained with (RUN/train_config.json; a
    setting it predates is not compared). The presets resolve such settings from the machine
    (a GPU, the CPU's bf16), so the same flags elsewhere would go on with another precision or
    prompt than the run's first steps had."""
    saved_file = run_dir / "train_config.json"
    saved = json.loads(saved_file.read_text()) if saved_file.exists() else {}
    changed = sorted(k for k in kept if k in saved and k in config and saved[k] != config[k])
    if not changed:
        return None
    now = ", ".join(f"{k} {config[k]}" for k in changed)
    flags = " ".join(f"--{k.replace('_', '-')} {saved[k]}" for k in changed)
    return (
        f"{run_dir} trained with {', '.join(f'{k} {saved[k]}' for k in changed)}, and these "
        f"flags give {now} on this machine: give {flags} to continue it as it trained."
    )


class Run:
    """One training run on disk: its directory, metric rows, timings, kept checkpoint and random
    streams. Built before anything is written, so a setting that cannot work fails cleanly; used
    as a context (`with Run(...) as run:`), a run that fails or is stopped before its first step
    is written leaves nothing behind."""

    def __init__(
        self,
        run_cfg: RunConfig,
        *,
        config: dict,
        ranks: Ranks,
        game_cfg: GameConfig,
        oracle,
        train_secrets: list[int],
        validation: list[int],
        heldout: list[int],
        kept_on_resume: set[str] = frozenset(),
    ):
        """kept_on_resume: the settings of `config` a resumed run must hold at the values it
        trained with (config.kept_on_resume), or --resume is refused (`changed_on_resume`)."""
        name = run_cfg.run_name or f"{run_cfg.estimator}-{run_cfg.question_set}-seed{run_cfg.seed}"
        chosen = run_directory(run_cfg.out, name, run_cfg.resume)
        self.dir = Path(ranks.gather([str(chosen)])[0])  # rank 0's choice
        self.run_cfg = replace(run_cfg, run_name=self.dir.name)
        self.config = config | {"run_name": self.dir.name}  # saved with the run and checkpoints
        self.ranks, self.game_cfg, self.oracle = ranks, game_cfg, oracle
        self.train_secrets, self.validation, self.heldout = train_secrets, validation, heldout
        if self.run_cfg.resume and not (self.dir / "checkpoint" / "trainer_state.pt").exists():
            why = f"there is nothing to resume in {self.dir}: it has no checkpoint"
            fail("train.py", f"{why}, so start it without --resume.")
        self.saved = (
            read_trainer_state(self.dir) if self.run_cfg.resume else None
        )  # damaged: fail now
        if self.run_cfg.resume and (problem := changed_on_resume(self.dir, config, kept_on_resume)):
            fail("train.py", problem)
        self.rows, self.seconds, self.kept = [], [], {"score": -1.0, "step": 0}
        self.paused = False  # stopped by --pause-after: its kept checkpoint is played at its end
        self.rng = random.Random(run_cfg.seed)  # which secrets each step plays
        self.shuffle = torch.Generator().manual_seed(run_cfg.seed)  # Eq. 2's minibatches
        self.say = print if ranks.main else (lambda *a, **k: None)
        self.code = code_version() if ranks.main else {}  # what trained it: its results cite it
        self.model_cfg = None  # set by initial_policy: how the kept checkpoint loads again
        self.board = None  # RUN/tensorboard's writer, with --tensorboard (set by begin)

    def __enter__(self):
        return self

    def __exit__(self, kind, error, trace):
        written = self.run_cfg.resume or (self.dir / "metrics.jsonl").exists()
        if kind is not None and self.ranks.main and not written:
            shutil.rmtree(self.dir, ignore_errors=True)

    def fits_in_memory(self, policy) -> None:
        """Refuse, with the estimate, a step whose generation cannot fit in the device's free
        memory (policy.generation_bytes: a lower bound), before the run writes anything."""
        run_cfg = self.run_cfg
        game = CSG([1], self.game_cfg)
        rows = (
            -(-run_cfg.secrets_per_step // self.ranks.world) * run_cfg.group_size
        )  # this rank's B x G
        need = policy.generation_bytes(
            rows, len(policy.encode(game.messages())[0]) + run_cfg.max_new_tokens
        )
        free = models.available_memory(policy.device)
        if need > free:
            gib = f"{need / 2**30:.1f} GiB and this {policy.device.type} has {free / 2**30:.1f}"
            fail(
                "train.py",
                f"a step generates {rows} rollouts at once ({run_cfg.secrets_per_step} secrets "
                f"x {run_cfg.group_size}), which needs at least {gib} GiB free: lower --group-size "
                "or --secrets-per-step.",
            )

    def initial_policy(self, model_cfg: ModelConfig, warmup_cfg: WarmupConfig):
        """The policy to train: warmed up (rank 0 first, so the others read its cache), or the
        checkpoint that --resume continues. The run's directory and config are written here."""
        self.model_cfg = model_cfg
        if not self.ranks.main:
            self.ranks.barrier()
        if self.run_cfg.resume:  # the whole model, or a LoRA adapter and the base it names
            checkpoint, device = str(self.dir / "checkpoint"), model_cfg.device or None
            policy, info = models.load_policy(checkpoint, device, model_cfg.precision), {}
        else:
            policy, info = starting_policy(model_cfg, warmup_cfg, quiet=not self.ranks.main)
        self.fits_in_memory(policy)
        if self.ranks.main:
            self.ranks.barrier()
            try:
                self.dir.mkdir(parents=True, exist_ok=True)
            except OSError as e:  # what cli.unwritable cannot foresee (a read-only file system)
                fail("train.py", f"cannot make {self.dir} ({e.strerror}): give another --out.")
            self.write_config(self.dir / "train_config.json")
            if info:
                (self.dir / "warmup.json").write_text(json.dumps(info, indent=2))
        return policy

    def write_config(self, path: Path) -> None:
        """The run's resolved config (the presets applied first), as JSON."""
        path.write_text(json.dumps(self.config, indent=2) + "\n")

    def begin(self, policy, optimizer, ctx: EstimatorContext) -> int:
        """Restore a resumed run's state; print the run's first line. Returns the first step."""
        start = 0
        if self.saved:
            saved = self.saved
            optimizer.load_state_dict(saved["optimizer"])
            self.rng.setstate(saved["rngs"]["python"])
            self.shuffle.set_state(saved["rngs"]["shuffle"])
            ctx.phi, ctx.phase = saved["estimator"]["phi"], saved["estimator"]["phase"]
            self.kept, start, self.rows = saved["kept"], saved["step"], saved["rows"]
        run_cfg = self.run_cfg
        ranks = f"; {self.ranks.world} ranks" if self.ranks.on else ""
        self.say(
            f"[{self.dir.name}] {run_cfg.estimator} on {policy.name}, "
            f"{run_cfg.question_set} questions, {run_cfg.steps} steps x "
            f"{run_cfg.secrets_per_step} secrets x {run_cfg.group_size} rollouts, "
            f"lr {run_cfg.lr:g}; {len(self.train_secrets)} training / {len(self.heldout)} "
            f"held-out secrets -> {self.dir}{ranks}",
            flush=True,
        )
        # a resumed run's clock goes on from its stop: the summary's seconds and a --time-limit-min
        # budget (and the learning rate annealed over it) count the steps before the stop too
        self.seconds = [r.get("train/seconds_per_step", 0.0) for r in self.rows]
        self.started = time.time() - sum(self.seconds)
        if run_cfg.tensorboard and self.ranks.main:
            self.board = self.tensorboard(purge_step=start + 1 if self.saved else None)
        return start

    def tensorboard(self, purge_step: int | None) -> TensorBoardLog:
        """RUN/tensorboard's writer, or one sentence where the package is missing."""
        try:
            return TensorBoardLog(self.dir / "tensorboard", self.config, purge_step)
        except RuntimeError as e:
            fail("train.py", str(e))

    def budget_used(self, step: int) -> float:
        """The share of the run's budget spent before this step: of its steps, or of its time
        limit if that runs out first (the learning rate anneals over whichever ends the run)."""
        limit, minutes = self.run_cfg.time_limit_min, (time.time() - self.started) / 60
        return max(step / self.run_cfg.steps, minutes / limit if limit else 0.0)

    def end_step(
        self, step: int, row: dict, policy, optimizer, ctx: EstimatorContext, started: float
    ) -> bool:
        """Evaluate (every eval_every steps and at the last), keep the best checkpoint on the
        validation secrets, log, print and checkpoint. Returns True at the run's last step."""
        run_cfg = self.run_cfg
        step_end = time.time()
        limit = run_cfg.time_limit_min
        out_of_time = limit > 0 and (time.time() - self.started) / 60 >= limit
        self.paused = step + 1 == run_cfg.pause_after and step + 1 < run_cfg.steps
        ending = step + 1 == run_cfg.steps or out_of_time or self.paused
        last = bool(self.ranks.max(float(ending)))  # on all ranks
        if self.ranks.main and ((step + 1) % run_cfg.eval_every == 0 or last):
            seed = eval_seed(run_cfg.seed, step + 1)
            samples = run_cfg.eval_samples
            row |= self.evaluated(policy, self.heldout, samples, seed)
            if self.validation:
                self.keep_best(step, row, policy)
        self.seconds.append(time.time() - started)
        row["train/seconds_per_step"] = self.seconds[-1]
        row["train/seconds_eval"] = time.time() - step_end
        row["train/oracle_failures"] = getattr(self.oracle, "failures", 0)
        self.rows.append(row)
        if self.ranks.main:
            self.write_metrics()
            if self.board is not None:
                self.board.write(row)
            self.say(self.progress(step), flush=True)
            if (step + 1) % run_cfg.save_every == 0 or last:
                self.save_checkpoint(step + 1, policy, optimizer, ctx)
        return last

    def evaluated(self, policy, secrets, samples: int, seed: int, per_secret=False) -> dict:
        """evaluate.evaluate_policy in this run's game, with its oracle, the sampled play at most
        --eval-rows episodes at a time."""
        game, oracle, rows = self.game_cfg, self.oracle, self.run_cfg.eval_rows
        return evaluate_policy(policy, secrets, game, oracle, samples, seed, per_secret, rows)

    def keep_best(self, step: int, row: dict, policy) -> None:
        """Score the policy on the validation secrets (greedy and sampled resolve, averaged); keep
        it as RUN/best if its mean over the last `validation_window` scores is the best so far."""
        samples = max(self.run_cfg.eval_samples, 2)
        v = self.evaluated(policy, self.validation, samples, self.run_cfg.seed + step, True)
        row["eval/validation_score"] = (v["eval/resolve_rate"] + v["eval/sampled_resolve_rate"]) / 2
        if len(self.validation) >= 2:
            halves = validation_halves(v["per_secret_greedy"], v["per_secret_sampled"])
            row["eval/validation_score_a"], row["eval/validation_score_b"] = halves
        scores = [
            r["eval/validation_score"] for r in self.rows + [row] if "eval/validation_score" in r
        ]
        row["eval/validation_smoothed"] = smoothed(scores, self.run_cfg.validation_window)[-1]
        if row["eval/validation_smoothed"] >= self.kept["score"]:
            self.kept = {"score": row["eval/validation_smoothed"], "step": step + 1}
            policy.save(self.dir / "best")

    def write_metrics(self) -> None:
        """RUN/metrics.jsonl and RUN/metrics.csv: one row per step, every logged name. Each is
        written beside and then renamed, so a crash mid-write leaves the last whole one."""
        keys = sorted({k for r in self.rows for k in r}, key=lambda k: (k != "step", k))
        csv = [",".join("" if r.get(k) is None else str(r.get(k)) for k in keys) for r in self.rows]
        for name, lines in [
            ("metrics.jsonl", [json.dumps(r) for r in self.rows]),
            ("metrics.csv", [",".join(keys), *csv]),
        ]:
            (self.dir / f"{name}.tmp").write_text("".join(line + "\n" for line in lines))
            (self.dir / f"{name}.tmp").replace(self.dir / name)

    def progress(self, step: int) -> str:
        """The step's console line; its time per step is the mean of the last five steps'."""
        row, steps_done, steps = self.rows[-1], step + 1, self.run_cfg.steps
        per = sum(self.seconds[-5:]) / len(self.seconds[-5:])
        eta = per * (steps - steps_done)
        bar = "#" * int(20 * steps_done / steps) + "." * (20 - int(20 * steps_done / steps))
        ev = ""
        if "eval/resolve_rate" in row:
            sampled = row.get("eval/sampled_resolve_rate", float("nan"))
            ev = f"  eval resolve {row['eval/resolve_rate']:.2f} greedy, {sampled:.2f} sampled"
        return (
            f"[{self.dir.name}] step {steps_done}/{steps} |{bar}| {per:.1f} s/step, "
            f"ETA {int(eta // 60)}m{int(eta % 60):02d}s  reward {row['clue/reward']:.3f}  "
            f"resolve {row['clue/episode_resolve_rate']:.2f}  len {row['clue/episode_length']:.1f}"
            f"{ev}"
        )

    def save_checkpoint(self, step: int, policy, optimizer, ctx: EstimatorContext) -> None:
        """Write RUN/checkpoint atomically: a crash mid-write never leaves a broken checkpoint."""
        tmp, final = self.dir / "checkpoint.tmp", self.dir / "checkpoint"
        old = self.dir / "checkpoint.old"
        shutil.rmtree(tmp, ignore_errors=True)
        policy.save(tmp)
        rngs = {"python": self.rng.getstate(), "shuffle": self.shuffle.get_state()}
        state = {"step": step, "optimizer": optimizer.state_dict(), "rngs": rngs}
        torch.save(
            state | {"estimator": ctx.carried(), "kept": self.kept}, tmp / "trainer_state.pt"
        )
        self.write_config(tmp / "train_config.json")
        if final.exists():
            final.rename(old)
        tmp.rename(final)
        shutil.rmtree(old, ignore_errors=True)

    def finish(self) -> dict:
        """The run's result: the held-out evaluation of the kept checkpoint (or of the last step),
        RUN/summary.json, RUN/training_curves.png and the closing line."""
        kept = None
        run_cfg = self.run_cfg
        if not self.paused and self.ranks.main and self.validation and (self.dir / "best").exists():
            device = self.model_cfg.device or None
            precision = self.model_cfg.precision
            seed = eval_seed(run_cfg.seed, run_cfg.steps)
            best = models.load_policy(str(self.dir / "best"), device, precision, trainable=False)
            scores = self.evaluated(best, self.heldout, run_cfg.eval_samples, seed)
            kept = {"step": self.kept["step"], **scores}
        summary = self.summary(kept) if self.ranks.main else {}
        if self.board is not None:
            self.board.close()
        ranks_finish(self.ranks)
        return summary

    def summary(self, kept: dict | None) -> dict:
        """RUN/summary.json, the training curves and the closing line: the held-out evaluation of
        the kept checkpoint (or of the last step) and the steps to 90% held-out resolve."""
        run_cfg = self.run_cfg
        rows = self.rows
        evals = [r for r in rows if "eval/resolve_rate" in r]
        # steps to 90%: the first evaluation whose held-out resolve reaches 0.9, sampled (which does
        # not flip between 0 and 1 as greedy play can) and greedy
        measure = "eval/sampled_resolve_rate" if run_cfg.eval_samples > 0 else "eval/resolve_rate"
        reach = next((r["step"] for r in evals if r[measure] >= 0.9), None)
        reach_greedy = next((r["step"] for r in evals if r["eval/resolve_rate"] >= 0.9), None)
        last, steps = (evals[-1] if evals else {}), (rows[-1]["step"] if rows else 0)
        final = kept or last
        kept_at = {"step": kept["step"], "path": str(self.dir / "best")} if kept else None
        summary = {
            "run_name": self.dir.name,
            "run_dir": str(self.dir),
            "estimator": run_cfg.estimator,
            "question_set": run_cfg.question_set,
            "seed": run_cfg.seed,
            "presets": self.config.get("presets", []),
            "steps": steps,
            "paused": self.paused,
            "final_eval": {k: v for k, v in final.items() if k.startswith("eval/")},
            "last_eval": {k: v for k, v in last.items() if k.startswith("eval/")},
            "kept": kept_at or {"step": steps, "path": str(self.dir / "checkpoint")},
            "steps_to_90": reach,
            "steps_to_90_greedy": reach_greedy,
            "train_seconds": round(time.time() - self.started, 1),
            "step_seconds": round(sum(self.seconds), 1),
            "checkpoint": str(self.dir / "checkpoint"),
            "code": self.code,
        }
        (self.dir / "summary.json").write_text(json.dumps(summary, indent=2))
        plot_curves(rows, self.dir / "training_curves.png", self.dir.name)
        fe, nan = summary["final_eval"], float("nan")
        print(
            f"[{self.dir.name}] done in {summary['train_seconds']:.0f} s: held-out resolve greedy "
            f"{fe.get('eval/resolve_rate', nan):.3f}, sampled "
            f"{fe.get('eval/sampled_resolve_rate', nan):.3f} "
            f"+- {fe.get('eval/sampled_resolve_sem', nan):.3f}; zero "
            f"{fe.get('eval/zero_rate', nan):.3f}, episode length "
            f"{fe.get('eval/episode_length', nan):.2f}; steps to 90% (sampled): {reach}, greedy: "
            f"{reach_greedy}; curves in {self.dir / 'training_curves.png'}",
            flush=True,
        )
        return summary


def batch_metrics(batch: RolloutBatch, credit: Credit, advantages: torch.Tensor, ranks) -> dict:
    """clue/ behaviour of the training batch (metrics.training_metrics) and credit diagnostics,
    of every rank's share together (ranks: ranks.Ranks)."""
    played = credit.active.any(-1)  # (B, G): rollouts in the batch
    returns = episode_returns(credit)  # (B, G)
    stds = [returns[b][played[b]].std().item() for b in range(len(returns)) if played[b].sum() > 1]
    records = ranks.gather([r.as_dict() for r in batch.records])
    episodes, entropy = ranks.gather(batch.episodes), ranks.gather(batch.entropy)
    stds, abs_advantages = ranks.gather(stds), ranks.gather(advantages.abs().tolist())
    out = {f"clue/{k}": v for k, v in training_metrics(records, episodes, batch.max_turns).items()}
    out["train/group_return_std"] = sum(stds) / len(stds) if stds else 0.0  # ~0: a collapsed group
    out["train/entropy"] = sum(entropy) / len(entropy)
    out["train/advantage_abs_mean"] = sum(abs_advantages) / len(abs_advantages)
    return out
