"""Which episodes a run plays (section 5.1, "Evaluation strategy"; App. D): the split of the
secrets 1..n_max into training, validation and held-out ones, and where each training secret's G
rollouts start: its candidate universe C_0 and the history h_0 they carry on from.

The paper starts every training episode from 1..100 at turn 0. There one fixed question sequence
fits every episode, and nothing rewards reading the belief; so, not in the paper and each
switchable (train.py's flags; 0 or "full" is the paper's game):
- a random universe C_0 for a share of the secrets (`UNIVERSES`: an interval, a subset, or the
  numbers sharing a digit quantity with the secret);
- 0..K turns of random questions already played (`explored`), so the rollouts start from a real
  history h_t;
- families of questions the clue holders refuse (unseen until asked; env.CSG);
- prompts that leave C_t out (prompts.selector_prompt), for a share of the secrets.

The `offline` estimator (baselines.py) plays no episode while it trains: its steps sample a fixed
dataset of episodes the initial policy played once (`OfflineData`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import torch

from baselines import EstimatorContext, credit_from_batch, turn_stats
from env import ARM_FAMILIES, CSG, Episode, GameConfig, secret_split
from game.properties import QUANTITIES
from lm import models
from policy import SampleConfig
from reference import RandomPolicy
from rollouts import RolloutBatch, episode_seed, play_rollouts


@dataclass(frozen=True)
class SplitConfig:
    """Which secrets a run trains on, sets aside and holds out: train.py's flags of the same names
    (config.TrainConfig)."""

    n_max: int  # the secrets are 1..n_max
    n_heldout: int  # held out for evaluation (env.secret_split)
    split_seed: int  # draws the held-out and the validation secrets
    validation_secrets: int  # training secrets set aside to choose the kept checkpoint


def split_secrets(split_cfg: SplitConfig) -> tuple[list[int], list[int], list[int]]:
    """(training, validation, held-out) secrets of 1..n_max. The held-out ones (env.secret_split, as
    evaluate.py) only report; the validation ones, set aside from training, choose the kept
    checkpoint."""
    train_secrets, heldout = secret_split(
        split_cfg.n_max, split_cfg.n_heldout, split_cfg.split_seed
    )
    rng = random.Random(12345 + split_cfg.split_seed)
    validation = sorted(rng.sample(train_secrets, split_cfg.validation_secrets))
    return [s for s in train_secrets if s not in set(validation)], validation, heldout


@dataclass(frozen=True)
class StartConfig:
    """Where a training secret's G rollouts start: train.py's flags of the same names (their
    defaults and meanings are in config.TrainConfig; 0 or "full" is the paper's game)."""

    n_max: int  # secrets and the full universe are 1..n_max
    universe: str  # "full" (1..n_max) or a key of UNIVERSES
    universe_least: int  # the fewest numbers a random universe holds
    universe_share: float  # share of the step's secrets whose universe is random
    prefix_turns: int  # K: rollouts start after 0..K random questions
    refusal_rate: float  # chance each family an arm owns goes unanswered
    hidden_share: float  # share of secrets whose prompts leave C_t out


def random_interval(secret: int, n_max: int, least: int, rng: random.Random) -> frozenset:
    """A candidate universe lo..hi of at least `least` numbers (all of 1..n_max if it has fewer)
    that holds `secret`: its size uniform on least..n_max, then its place uniform among those
    that fit inside 1..n_max and hold the secret."""
    size = rng.randint(min(least, n_max), n_max)
    lo = rng.randint(max(1, secret - size + 1), min(secret, n_max - size + 1))
    return frozenset(range(lo, lo + size))


def random_subset(secret: int, n_max: int, least: int, rng: random.Random) -> frozenset:
    """A candidate universe of `secret` and other numbers of 1..n_max drawn without replacement:
    its size log-uniform on least..n_max (as many universes of 2..10 numbers as of 10..50), so
    that small beliefs are common. Unlike an interval's, a subset's numbers can all share a last
    digit, a digit sum or a parity: the question that splits a small universe depends on which
    numbers it holds, and a policy that does not read the list wastes turns on it."""
    least = min(least, n_max)
    size = min(n_max, max(least, round(least * (n_max / least) ** rng.random())))
    others = rng.sample([n for n in range(1, n_max + 1) if n != secret], size - 1)
    return frozenset([secret, *others])


def random_class(secret: int, n_max: int, least: int, rng: random.Random) -> frozenset:
    """A candidate universe of the numbers of 1..n_max that share the secret's digit sum, tens
    digit or last digit (one of the three, at random; all of 1..n_max if it holds fewer than
    `least`). Nothing in the history says so: the question that defined the class is one the
    belief already answers, and only the candidate list shows it. On secrets of 1..100 it stands
    in for the state a secret of 101..200 is in after the two questions that identify any number
    of 1..100: a digit question that tells nothing more, and candidates left."""
    quantity = QUANTITIES[rng.choice(("digit_sum", "tens_digit", "last_digit"))]
    part = frozenset(n for n in range(1, n_max + 1) if quantity(n) == quantity(secret))
    return part if len(part) >= least else frozenset(range(1, n_max + 1))


UNIVERSES = {"interval": random_interval, "subset": random_subset, "class": random_class}


def explored(
    secret: int,
    game_cfg: GameConfig,
    explorer,
    turns: int,
    oracle=None,
    universe=None,
    refused=frozenset(),
) -> Episode:
    """Where one episode stands after up to `turns` turns of another respond(game)-policy (an
    explorer: reference.RandomPolicy), stopping before a turn that would end it: a reachable
    state with a real history h_t, from which a learner's rollouts carry on (Episode.carried_on)."""
    game = CSG([secret], game_cfg, oracle, None if universe is None else [universe], [refused])
    for _ in range(turns):
        trial = game.branch(0, [secret])
        trial.step(explorer.respond(trial))
        if not trial.active:
            break
        game = trial
    return game.episodes[0].carried_on(secret)


def episode_starts(
    start_cfg: StartConfig,
    *,
    rng: random.Random,
    secrets: list[int],
    step: int,
    seed: int,
    game_cfg: GameConfig,
    oracle,
) -> tuple[list, list | None]:
    """Where each training secret's G rollouts start: its candidate universe C_0 (1..n_max, the
    paper's; or, for a share `universe_share` of secrets, one drawn by UNIVERSES[universe]),
    and with `prefix_turns` K > 0 the state after 0..K turns of random questions in it
    (`explored`, each secret's explorer seeded by the run's `seed`, the step and its index), with
    `refusal_rate` > 0 the families its clue holders refuse, with `hidden_share` > 0 whether its
    prompts leave C_t out (game.prompts.selector_prompt), or None. Not in the paper, which starts
    every episode from 1..100 at turn 0: there a fixed question sequence fits every episode, and
    nothing rewards reading the belief. `rng` is the run's stream of episodes (its draws, in this
    order, are the run's)."""
    universes = [
        UNIVERSES[start_cfg.universe](s, start_cfg.n_max, start_cfg.universe_least, rng)
        if start_cfg.universe != "full" and rng.random() < start_cfg.universe_share
        else range(1, start_cfg.n_max + 1)
        for s in secrets
    ]
    if not (start_cfg.prefix_turns or start_cfg.refusal_rate or start_cfg.hidden_share):
        return universes, None
    # Each family an arm owns is refused with chance refusal_rate, the same for a secret's G
    # rollouts (Eq. 1 compares them). The rng is drawn only when refusals are on: other runs stay as
    # they were.
    families = sorted({f for owned in ARM_FAMILIES.values() for f in owned})
    refused = [
        frozenset(f for f in families if rng.random() < start_cfg.refusal_rate)
        if start_cfg.refusal_rate
        else frozenset()
        for _ in secrets
    ]
    starts = [
        explored(
            s,
            game_cfg,
            RandomPolicy(episode_seed(seed, step, b, -1)),
            rng.randint(0, start_cfg.prefix_turns),
            oracle,
            u,
            r,
        )
        for b, (s, u, r) in enumerate(zip(secrets, universes, refused))
    ]
    if start_cfg.hidden_share:  # drawn only when on, as refusals: other runs stay as they were
        for start in starts:
            start.hidden = rng.random() < start_cfg.hidden_share
    return universes, starts


@dataclass(frozen=True)
class OfflineConfig:
    """The `offline` estimator's dataset and schedule: train.py's flags of the same names."""

    offline_episodes: int  # episodes played once by pi_0
    offline_sft_fraction: float  # share of the steps spent on filtered SFT first
    steps: int
    secrets_per_step: int
    group_size: int
    seed: int


class OfflineData:
    """The `offline` estimator's fixed dataset: episodes played once by the initial policy,
    collected at the start and kept with the run (`run`: an experiment.Run, whose directory,
    ranks, game and oracle it uses; so --resume reuses it). With several ranks
    each collects and samples its share (its dataset is per rank); the per-turn reward
    statistics are taken over every rank's data together."""

    def __init__(
        self,
        offline_cfg: OfflineConfig,
        *,
        run,
        policy,
        train_secrets: list,
        sample: SampleConfig,
        ctx: EstimatorContext,
    ):
        ranks, G = run.ranks, offline_cfg.group_size
        self.steps, self.sft_fraction = offline_cfg.steps, offline_cfg.offline_sft_fraction
        self.episodes_per_step = offline_cfg.secrets_per_step * G // ranks.world
        name = f"offline_dataset-rank{ranks.rank}.pt" if ranks.on else "offline_dataset.pt"
        path = run.dir / name
        if path.exists():
            try:
                data = torch.load(path, weights_only=False)
            except Exception as e:  # as in read_trainer_state
                raise models.damaged(path, type(e).__name__) from e
        else:
            seed = offline_cfg.seed + 10_000
            rng = random.Random(seed)
            n_secrets = max(offline_cfg.offline_episodes // G, 1)
            secrets = [rng.choice(train_secrets) for _ in range(n_secrets)]
            mine = ranks.share(len(secrets))
            data = play_rollouts(
                policy,
                [secrets[b] for b in mine],
                G,
                run.game_cfg,
                sample,
                run.oracle,
                seeds=[episode_seed(seed, 0, b, g) for b in mine for g in range(G)],
            )
            torch.save(data, path)
        self.data, self.turns_of = data, {}  # episode -> its turns' indices in data
        for i, r in enumerate(data.records):
            self.turns_of.setdefault(r.episode, []).append(i)
        ctx.turn_stats = turn_stats(credit_from_batch(data, run.game_cfg.n_max), ranks.sum)

    def step_batch(self, step: int, rng: random.Random, ctx: EstimatorContext) -> RolloutBatch:
        """A step's episodes from the dataset: filtered SFT for the first `offline_sft_fraction`
        of the steps, then RL (baselines.offline reads ctx.phase)."""
        ctx.phase = "sft" if step < self.sft_fraction * self.steps else "rl"
        return self.sample(rng, self.episodes_per_step)

    def sample(self, rng: random.Random, n_episodes: int) -> RolloutBatch:
        chosen = sorted(rng.sample(sorted(self.turns_of), min(n_episodes, len(self.turns_of))))
        d = self.data
        turns = [i for e in chosen for i in self.turns_of[e]]
        summaries = {s["episode"]: s for s in d.episodes}
        return RolloutBatch(
            secrets=d.secrets,
            group_size=d.group_size,
            max_turns=d.max_turns,
            prompt_ids=[d.prompt_ids[i] for i in turns],
            completion_ids=[d.completion_ids[i] for i in turns],
            logprobs=[d.logprobs[i] for i in turns],
            entropy=[d.entropy[i] for i in turns],
            records=[d.records[i] for i in turns],
            beliefs=[d.beliefs[i] for i in turns],
            episodes=[summaries[e] for e in chosen],
            starts=getattr(d, "starts", []),
        )
