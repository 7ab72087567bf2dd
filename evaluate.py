"""Evaluate policies on a fixed CSG evaluation set and print the paper's tables.

Paper: section 5.1 "Evaluation Strategy" and "Baselines", Table 1 (tab:csg_main_results),
App. C (the metric definitions and diagnostic tables: see metrics.py), App. B (the selector
prompt, env.py), App. D (the four-table episode data: model_summary, runs, episodes, turns).

    python evaluate.py                                   # reference policies, held-out secrets
    python evaluate.py --policies bayes,tiny,smollm2+cot --runs 3
    python evaluate.py --policies api:gpt-4o-mini+fullreact --eval-set generalization
    python evaluate.py --from-logs runs/eval/20250101-120000   # every table again, from disk

Policies (--policies, comma list): the reference policies random, fixed_sequence,
greedy_oracle, bayes (reference.py); language models (lm/models.py): tiny, smollm2, an HF
id, a local directory, checkpoint:PATH; and api:MODEL for any OpenAI-compatible chat model
(OPENAI_API_KEY, OPENAI_BASE_URL). A language model takes a prompting variant of the paper's
baselines as a suffix: +cot, +react, +fullreact (none: the zero-shot selector prompt).

Departures from the paper, and why:
- Run r uses seed r. With greedy decoding and the rule oracle the runs of a deterministic
  policy are identical (SEM 0): the paper's 3 runs differ through its sampled oracle calls.
- Full ReAct's observation is the oracle's hint followed by the updated turn counter and
  candidate list, so the growing chat keeps the belief in view as the selector prompt does
  (the paper does not print its Full ReAct observation format).
- The arm, hint-type and recovery-event tables pool the episodes of all runs (the paper gives
  single numbers there); Table 1 and the LateCalib table are mean +- SEM over runs.
"""

from __future__ import annotations

import json
import os
import random
import sys
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

# before torch: cli sets how OpenMP's idle threads wait (tools/cli.py)
from tools import cli
from tools.cli import arg, parse_config, use_threads

# isort: split

import torch

import metrics
from env import CSG, QUESTION_SETS, GameConfig, play, secret_split
from game.prompts import CANDIDATE_FORMATS, SYSTEM_PROMPT, candidate_text
from lm import models
from lm.api import APIModel, SkipPolicy
from oracle import OracleConfigError, make_oracle
from policy import SampleConfig
from reference import REFERENCE_POLICIES
from rollouts import play_chunked
from tools import report
from tools.stats import mean_sem

LM_ALIASES = ("tiny", "smollm2")
VARIANTS = ("cot", "react", "fullreact")
# The paper code's chain-of-thought prefix, put before the selector prompt.
COT_PREFIX = (
    "Think step by step:\n1. Which arms have already been queried and what did you learn?\n"
    "2. Which arm has the most remaining information?\n"
    "3. What property of the number would eliminate the most candidates?\n"
    "Then output your decision.\n\n"
)
REACT_SYSTEM = (
    SYSTEM_PROMPT + "\nReply in exactly this format:\nThought: <your reasoning about the "
    'remaining candidates>\nAction: {"arm": <arm>, "question": "<question>"}'
)


@dataclass
class EvalConfig:
    policies: str = arg(
        "random,fixed_sequence,greedy_oracle,bayes",
        "comma list: random, fixed_sequence, greedy_oracle, bayes, tiny, smollm2, an HF id or "
        "dir, checkpoint:PATH, api:MODEL; a language model takes +cot, +react or +fullreact",
    )
    eval_set: str = arg(
        "heldout",
        "heldout: the 20 held-out secrets of env.secret_split(), N=100; "
        "generalization: secrets 1..200, N=200",
    )
    split_seed: int = arg(0, "seed of the held-out split (train.py --split-seed)", at_least=0)
    max_secrets: int = arg(
        0, "evaluate a seeded random subset of this many secrets of the set (0: all)", at_least=0
    )
    question_set: str = arg(
        "paper", "paper: every question family; binary: only yes/no questions (App. C)"
    )
    max_turns: int = arg(10, "horizon T (paper, l. 750: 10)", at_least=1)
    candidate_format: str = arg(
        "auto",
        "how prompts write the candidates: list (App. B), runs or padded; auto: a checkpoint in "
        "its run's train.py --candidate-format, any other policy in list",
        choices=("auto", *CANDIDATE_FORMATS),
    )
    runs: int = arg(3, "runs per policy, run r with seed r (paper, l. 646: 3)", at_least=1)
    oracle: str = arg(
        "rule",
        "clue holder: rule (offline, exact) or llm (OpenAI API; paper, l. 1177: gpt-4o-mini, T=0)",
    )
    oracle_model: str = arg("gpt-4o-mini", "the llm oracle's model")
    temperature: float = arg(0.0, "LM sampling temperature; 0 is greedy decoding", at_least=0)
    samples: int = arg(
        4,
        "with greedy decoding, language models also play every secret this many times per run "
        "sampled at T = 1, as the row '<policy> [T=1]' (the paper sampled its trained models; 0: "
        "no)",
        at_least=0,
    )
    top_p: float = arg(1.0, "nucleus mass of sampled decoding", above=0, at_most=1)
    max_new_tokens: int = arg(64, "token limit of a zero-shot LM action", at_least=1)
    reasoning_max_new_tokens: int = arg(
        256, "token limit with +cot, +react, +fullreact (reasoning first)", at_least=1
    )
    batch_size: int = arg(64, "conversations per LM generate call", at_least=1)
    out: str = arg("", "output directory; empty: runs/eval/<timestamp>", writes="directory")
    from_logs: str = arg(
        "", "recompute and print every table from an earlier --out directory, playing nothing"
    )
    figures: bool = arg(True, "write the PNG figures")
    threads: int = arg(
        0,
        "torch threads on a CPU (0: every core this process may use; cli.use_threads)",
        at_least=0,
    )


def parse_args(argv=None) -> EvalConfig:
    """EvalConfig from the command line (tools/cli.py: unknown flags, wrong types and values out of
    range are errors), checked."""
    cfg = parse_config(EvalConfig, argv, description=__doc__.splitlines()[0])
    checks = [
        (
            cfg.eval_set in ("heldout", "generalization"),
            "--eval-set must be heldout or generalization",
        ),
        (
            cfg.question_set in QUESTION_SETS,
            f"--question-set must be one of {', '.join(QUESTION_SETS)}",
        ),
        (cfg.oracle in ("rule", "llm"), "--oracle must be rule or llm"),
    ]
    for ok, message in checks:
        if not ok:
            fail(message + ".")
    return cfg


def fail(message: str):
    """A mistake the user can fix: one sentence on stderr, exit status 2 (cli.fail)."""
    cli.fail("evaluate.py", message)


def evaluation_set(cfg: EvalConfig) -> tuple[GameConfig, list[int]]:
    """(game, secrets): the held-out split at N = 100 or 1..200 at N = 200 (section 5.1), or a
    seeded subset of either (--max-secrets)."""
    n_max = 100 if cfg.eval_set == "heldout" else 200
    secrets = (
        secret_split(100, seed=cfg.split_seed)[1]
        if cfg.eval_set == "heldout"
        else list(range(1, 201))
    )
    if 0 < cfg.max_secrets < len(secrets):
        secrets = sorted(random.Random(0).sample(secrets, cfg.max_secrets))
    return GameConfig(
        n_max=n_max,
        max_turns=cfg.max_turns,
        question_set=cfg.question_set,
        candidate_format="list" if cfg.candidate_format == "auto" else cfg.candidate_format,
    ), secrets


def game_of(base: str, cfg: EvalConfig, game_cfg: GameConfig) -> GameConfig:
    """The game one policy plays: with --candidate-format auto, a checkpoint reads its prompts as
    its run wrote them in training, candidates and layout (RUN/train_config.json beside it; App.
    B's list and layout if there is none)."""
    run_config = Path(base.removeprefix("checkpoint:")).parent / "train_config.json"
    if (
        cfg.candidate_format != "auto"
        or not base.startswith("checkpoint:")
        or not run_config.exists()
    ):
        return game_cfg
    saved = json.loads(run_config.read_text())
    return replace(
        game_cfg,
        candidate_format=saved.get("candidate_format", "list"),
        prompt_layout=saved.get("prompt_layout", "paper"),
    )


# ---------------------------------------------------------------------------------------------
# Policies: a spec is "<base>[+variant]"; every player has respond(game) -> [text per active
# episode]
# ---------------------------------------------------------------------------------------------


def split_spec(spec: str) -> tuple[str, str, str]:
    """(base, variant, kind) of a policy spec, kind one of reference, api, lm; unknown names stop
    here, before anything runs."""
    base, plus, variant = spec.rpartition("+")
    if not plus or (base.startswith("checkpoint:") and os.path.isdir(spec[len("checkpoint:") :])):
        base, variant = spec, ""  # a directory whose name holds a '+' (a pbrs+rloo run)
    elif variant not in VARIANTS:
        fail(
            f"unknown prompting variant {'+' + variant!r} in {spec!r}: use +cot, +react or "
            "+fullreact."
        )
    if base in REFERENCE_POLICIES:
        if variant:
            fail(
                f"{spec!r}: prompting variants apply to language models, not to reference policies."
            )
        return base, variant, "reference"
    if base.startswith("api:") and len(base) > 4:
        return base, variant, "api"
    if base.startswith("checkpoint:") and not os.path.isdir(base[len("checkpoint:") :]):
        fail(
            f"{spec!r}: {base[len('checkpoint:') :]!r} is not a directory; give a trained "
            "checkpoint directory."
        )
    if base.startswith("checkpoint:") or base in LM_ALIASES or "/" in base or os.path.isdir(base):
        return base, variant, "lm"
    fail(
        f"unknown policy {spec!r}: use {', '.join(REFERENCE_POLICIES)}, {', '.join(LM_ALIASES)}, "
        "an HF id (owner/name), a local directory, checkpoint:PATH or api:MODEL."
    )


def load_lm(base: str, question_set: str = "paper", candidate_format: str = "list"):
    """A language model (lm/models.py); missing weights stop the evaluation with its message.
    "tiny" is the built-in model after its format warm-up for `question_set`, on prompts that write
    the candidates as it will read them (lm/warmup.py)."""
    from lm.models import ModelConfig
    from lm.warmup import WarmupConfig, starting_policy

    try:
        if base == "tiny":
            warmup_cfg = WarmupConfig(question_set=question_set, candidate_format=candidate_format)
            return starting_policy(ModelConfig(), warmup_cfg, quiet=True)[0]
        return models.load_policy(base.removeprefix("checkpoint:"))
    except (models.ModelNotFoundError, models.DamagedFileError) as e:
        fail(str(e))


class LMPlayer:
    """Plays a language model with one of the paper's prompting variants (see VARIANTS), greedy
    (temperature 0) or sampled."""

    def __init__(self, lm, variant: str, cfg: EvalConfig, seed: int, temperature: float):
        self.lm, self.variant, self.cfg, self.seed, self.temperature = (
            lm,
            variant,
            cfg,
            seed,
            temperature,
        )
        self.chats = {}  # fullreact: episode index -> the growing Thought/Action/Observation chat

    def messages(self, game: CSG, i: int) -> list[dict]:
        ep = game.episodes[i]
        game_cfg = game.game_cfg
        system, user = game.messages([i])[0]
        if self.variant == "cot":
            return [system, {"role": "user", "content": COT_PREFIX + user["content"]}]
        if self.variant == "react":
            return [{"role": "system", "content": REACT_SYSTEM}, user]
        if self.variant == "fullreact":
            if i not in self.chats:
                self.chats[i] = [{"role": "system", "content": REACT_SYSTEM}, user]
            else:
                hint = (
                    ep.records[-1].hint
                    or "No valid action was read. Reply with a Thought and an Action."
                )
                self.chats[i].append(
                    {
                        "role": "user",
                        "content": (
                            f"Observation: {hint}\nTurn {ep.turn + 1} of {game_cfg.max_turns}. "
                            "Remaining candidates "
                            f"({len(ep.candidates)}): "
                            f"[{candidate_text(ep.candidates, game_cfg.candidate_format)}]"
                        ),
                    }
                )
            return list(self.chats[i])
        return [system, user]

    def respond(self, game: CSG) -> list[str]:
        active = game.active
        cfg = self.cfg
        batch = [self.messages(game, i) for i in active]
        limit = cfg.reasoning_max_new_tokens if self.variant else cfg.max_new_tokens
        turn, texts = game.episodes[active[0]].turn, []
        for start in range(0, len(batch), cfg.batch_size):
            texts += self.lm.generate_text(
                batch[start : start + cfg.batch_size],
                greedy=self.temperature == 0,
                temperature=self.temperature or 1.0,
                top_p=cfg.top_p,
                max_new_tokens=limit,
                seed=self.seed * 10**6 + turn * 10**3 + start,
            )
        if self.variant == "fullreact":
            for i, text in zip(active, texts):
                self.chats[i].append({"role": "assistant", "content": text})
        return texts


def make_player(spec: str, cfg: EvalConfig, seed: int, loaded: dict, temperature: float):
    base, variant, kind = split_spec(spec)
    if kind == "reference":
        return (
            REFERENCE_POLICIES[base](seed=seed) if base == "random" else REFERENCE_POLICIES[base]()
        )
    return LMPlayer(loaded[base], variant, cfg, seed, temperature)


def game_rows(game, model_key: str, kind: str, run: int) -> tuple[list, list]:
    """The turns and episodes tables' rows of one finished game (App. D), under the ids the
    paper's tools read: model_key, group (the policy's kind), run_id / run_index, episode_id /
    episode_index, and on every turn the episode's secret and its resolution."""
    turns, episodes = [], []
    for i, ep in enumerate(game.episodes):
        rows = [r.as_dict() for r in ep.records]
        ids = {
            "model_key": model_key,
            "group": kind,
            "run_id": f"run{run}",
            "run_index": run,
            "episode_id": i,
            "episode_index": i,
        }
        summary = game.episode_summary(i)
        on_turns = {"secret": summary["secret"], "episode_resolved": summary["resolved"]}
        turns += [
            {**ids, **on_turns, **r, **extra} for r, extra in zip(rows, metrics.turn_columns(rows))
        ]
        episodes.append({**ids, **summary, **metrics.episode_columns(rows)})
    return turns, episodes


# ---------------------------------------------------------------------------------------------
# Play, then the four tables of App. D
# ---------------------------------------------------------------------------------------------


def play_all(cfg: EvalConfig, game_cfg: GameConfig, secrets: list[int]) -> tuple[list, list, dict]:
    """(turn rows, episode rows, skipped policies) for every policy x run."""
    specs = [s.strip() for s in cfg.policies.split(",") if s.strip()]
    if not specs:
        fail("--policies is empty: name at least one policy.")
    parsed = {spec: split_spec(spec) for spec in specs}
    try:
        oracle = make_oracle(cfg.oracle, cfg.oracle_model, models.cache_dir())
    except OracleConfigError as e:
        fail(str(e))
    loaded, refused = {}, {}  # base -> loaded model; base -> why it is skipped
    for base, _, kind in parsed.values():  # load every model first: missing weights stop early
        if kind != "reference" and base not in loaded and base not in refused:
            try:
                loaded[base] = (
                    load_lm(base, cfg.question_set, game_of(base, cfg, game_cfg).candidate_format)
                    if kind == "lm"
                    else APIModel(base[len("api:") :])
                )
            except SkipPolicy as e:
                refused[base] = str(e)
    turns, episodes, skipped = [], [], {}
    for spec in specs:
        (base, _, kind), start, rows_t, rows_e = parsed[spec], time.perf_counter(), [], []
        try:
            if base in refused:
                raise SkipPolicy(refused[base])
            for run in range(1, cfg.runs + 1):
                plays = [(spec, cfg.temperature, secrets)]
                if kind != "reference" and cfg.samples > 0 and cfg.temperature == 0:
                    plays.append((spec + report.SAMPLED, 1.0, secrets * cfg.samples))
                for model_key, temperature, episode_secrets in plays:
                    game = play(
                        make_player(spec, cfg, run, loaded, temperature),
                        episode_secrets,
                        game_of(base, cfg, game_cfg),
                        oracle,
                    )
                    new_turns, new_episodes = game_rows(game, model_key, kind, run)
                    rows_t += new_turns
                    rows_e += new_episodes
        except SkipPolicy as e:
            print(e)
            skipped[spec] = refused[base] = str(e)
            continue
        turns += rows_t
        episodes += rows_e
        if getattr(loaded.get(base), "failures", None):
            failures = loaded[base].failures
            print(
                f"{spec}: {len(failures)} API requests failed after retries and were logged as "
                "invalid turns "
                f"(first: {failures[0]})"
            )
        print(
            f"played {spec}: {cfg.runs} runs x {len(secrets)} secrets in "
            f"{time.perf_counter() - start:.1f} s",
            file=sys.stderr,
        )
    return turns, episodes, skipped


# ---------------------------------------------------------------------------------------------
# During training: the eval/ metrics of train.py
# ---------------------------------------------------------------------------------------------


def evaluate_policy(
    policy, secrets, game_cfg: GameConfig, oracle, samples: int, seed: int, per_secret=False, rows=0
) -> dict:
    """The eval/ metrics of a language-model policy on these secrets, played two ways. Greedy
    (one episode per secret): the paper's Table 1 columns among them. Sampled at T = 1 as in
    training (`samples` episodes per secret, as the paper evaluated its trained models):
    eval/sampled_resolve_rate and its standard error over secrets, which does not flip between
    0 and 1 the way a greedy policy that repeats one question can. With per_secret, also each
    secret's greedy and sampled resolve, in `secrets` order (lists, so not logged as metrics).
    rows > 0: the sampled play decodes at most that many episodes at once (rollouts.play_chunked;
    SmolLM2's evaluation on a CPU peaked on its 80 rows at once, bench/smollm2_step.py)."""
    out = greedy_figures(policy, secrets, game_cfg, oracle, per_secret)
    if samples > 0:
        generator = torch.Generator(policy.device).manual_seed(seed)
        sample = SampleConfig()
        episodes = play_chunked(policy, secrets, samples, game_cfg, sample, oracle, generator, rows)
        out |= sampled_figures(episodes, samples, per_secret)
    return out


def greedy_figures(policy, secrets, game_cfg: GameConfig, oracle, per_secret=False) -> dict:
    """evaluate_policy's greedy half: one episode per secret at T = 0."""
    game = play(policy, secrets, game_cfg, oracle)
    episodes = [[r.as_dict() for r in e.records] for e in game.episodes]
    summaries = [game.episode_summary(i) for i in range(len(secrets))]
    out = {
        f"eval/{k}": v
        for k, v in metrics.training_metrics(
            [r for ep in episodes for r in ep], summaries, game_cfg.max_turns
        ).items()
    }
    out.update({f"eval/{k}": v for k, v in metrics.run_metrics(episodes).items()})
    if per_secret:
        out["per_secret_greedy"] = [float(s["resolved"]) for s in summaries]
    return out


def sampled_figures(episodes: list[dict], samples: int, per_secret=False) -> dict:
    """evaluate_policy's sampled half, from its episodes' summaries (`samples` a secret, secret
    by secret): the resolve rate, its standard error over secrets, and the mean length."""
    resolved = torch.tensor([e["resolved"] for e in episodes], dtype=torch.float64)
    by_secret = resolved.view(-1, samples).mean(1)  # (secrets,)
    rate, sem = mean_sem(by_secret.tolist())
    out = {"eval/sampled_resolve_rate": rate, "eval/sampled_resolve_sem": sem}
    out["eval/sampled_episode_length"] = sum(e["turns_taken"] for e in episodes) / len(episodes)
    if per_secret:
        out["per_secret_sampled"] = by_secret.tolist()
    return out


def main(argv=None) -> dict:
    cfg = parse_args(argv)
    if cfg.from_logs:
        try:
            turns, info = report.read_logs(cfg.from_logs)
        except report.LogError as err:
            fail(str(err))
        results = report.build_tables(turns, info["game"]["n_arms"], info["game"]["max_turns"])
        print(report.format_tables(results, info))
        return results
    use_threads(cfg.threads)
    game_cfg, secrets = evaluation_set(cfg)
    out = Path(cfg.out or Path("runs") / "eval" / time.strftime("%Y%m%d-%H%M%S"))
    turns, episodes, skipped = play_all(cfg, game_cfg, secrets)
    if not turns:
        fail("no policy could be evaluated (see the messages above).")
    info = {
        "eval": {**asdict(cfg), "out": str(out)},
        "game": asdict(game_cfg),
        "secrets": secrets,
        "skipped": skipped,
    }
    results = report.build_tables(turns, game_cfg.n_arms, game_cfg.max_turns)
    text = report.format_tables(results, info)
    print(text)
    report.write_logs(out, turns, episodes, results, info, text)
    figures = report.write_figures(results, info, out / "figures") if cfg.figures else []
    print(
        f"\nwrote {out}/{{model_summary,runs,episodes,turns}}.{{csv,jsonl}}, config.json, "
        "tables.txt" + (f" and {len(figures)} figures in {out / 'figures'}" if figures else "")
    )
    return results


if __name__ == "__main__":
    main()
