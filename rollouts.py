"""The rollouts of section 4: for each training instance (a secret), G rollouts sampled from
pi_old, all live rollouts of a turn in one batched generation (policy.LMPolicy.generate);
episodes that resolve drop out. A `RolloutBatch` keeps every turn flat, in play order, and lays
any per-turn value out as the (B, G, T) grid that Eq. 1 normalises over (`to_grid`,
`from_grid`); each rollout's sampling is seeded by its own generator (`episode_seed`), so a run
plays the same episodes however its secrets are batched or shared out to ranks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import torch

from env import CSG, GameConfig
from policy import LMPolicy, SampleConfig


@dataclass
class RolloutBatch:
    """Every turn of one batch, flat and in play order, and the (B, G, T) grid it fills.

    Episode e of the batch is rollout g = e % G of secret b = e // G; its turn t sits in cell
    (b, g, t) of the grid. A cell no turn filled is inactive: that rollout had already resolved.
    """

    secrets: list  # (B,) the batch's secrets; each is played G times
    group_size: int  # G: rollouts per secret, the group of Eq. 1
    max_turns: int  # T: the horizon, the grid's last axis
    first_secret: int = (
        0  # index of secrets[0] among the step's secrets (a rank's share, tools/ranks.py)
    )
    prompt_ids: list = field(default_factory=list)  # per turn
    completion_ids: list = field(default_factory=list)  # per turn
    logprobs: list = field(default_factory=list)  # per turn: log pi_old per token, as sampled
    entropy: list = field(default_factory=list)  # per turn
    records: list = field(default_factory=list)  # per turn: env.TurnRecord
    beliefs: list = field(default_factory=list)  # per turn: C_t, the candidates it was played on
    episodes: list = field(default_factory=list)  # per episode played: CSG.episode_summary
    starts: list = field(default_factory=list)  # per episode: the env.Episode it started from

    def cells(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(b, g, t) of every turn: where it sits in the (B, G, T) grid. Each (N,)."""
        e = torch.tensor([r.episode for r in self.records], dtype=torch.long)
        t = torch.tensor([r.turn for r in self.records], dtype=torch.long)
        return e // self.group_size, e % self.group_size, t

    def to_grid(self, values, fill=0.0) -> torch.Tensor:
        """Per-turn values (N,) -> (B, G, T); cells no turn filled hold `fill`."""
        values = torch.as_tensor(values)
        grid = torch.full(
            (len(self.secrets), self.group_size, self.max_turns), fill, dtype=values.dtype
        )
        grid[self.cells()] = values
        return grid

    def from_grid(self, grid: torch.Tensor) -> torch.Tensor:
        """(B, G, T) -> per-turn values (N,), in play order."""
        return grid[self.cells()]

    def actions(self, turns: list[int]) -> tuple[list, list]:
        """The prompts and the actions (token ids) of these turns, as LMPolicy.score takes them."""
        return [self.prompt_ids[i] for i in turns], [self.completion_ids[i] for i in turns]

    def turn_keys(self, ranks) -> list[TurnKey]:
        """Every turn of the step's batch as a TurnKey, on several ranks (tools.ranks.Ranks) every
        rank's (the keys are gathered), so that Eq. 2's minibatches (update.minibatches) are dealt
        from the same turns whatever the number of ranks."""
        b, g, t = (x.tolist() for x in self.cells())
        keys = [
            TurnKey(
                prompt_length=len(self.prompt_ids[i]),
                prompt_hash=hash(tuple(self.prompt_ids[i])),
                completion_length=len(self.completion_ids[i]),
                secret=self.first_secret + b[i],
                rollout=g[i],
                turn=t[i],
                rank=ranks.rank,
                index=i,
            )
            for i in range(len(self.prompt_ids))
        ]
        return ranks.gather(keys)


class TurnKey(NamedTuple):
    """A turn of a step's batch, in the order Eq. 2's forward passes take a minibatch's turns: by
    prompt length, then equal prompts together, then by action length; the rest tells every turn
    apart, the same way on every rank."""

    prompt_length: int
    prompt_hash: int  # equal prompts side by side: each distinct prompt runs once
    completion_length: int
    secret: int  # b, among every rank's secrets of the step
    rollout: int  # g
    turn: int  # t
    rank: int  # the rank that played it
    index: int  # its place in that rank's batch, in play order


def episode_seed(seed: int, step: int, secret: int, rollout: int) -> int:
    """The sampling seed of one rollout: a function of (run seed, step, secret index, rollout g),
    so a run plays the same episodes however its secrets are batched or shared out to ranks."""
    return hash((seed, step, secret, rollout)) & (2**63 - 1)


def play_rollouts(
    policy: LMPolicy,
    secrets,
    group_size: int,
    game_cfg: GameConfig = GameConfig(),
    sample: SampleConfig = SampleConfig(),
    oracle=None,
    generator: torch.Generator | None = None,
    seeds: list[int] | None = None,
    universes: list | None = None,
    starts: list | None = None,
) -> RolloutBatch:
    """Play G rollouts of each secret; each turn, one batched generation over the live ones.
    Sampling draws from `generator`, or, given `seeds` (one per episode, b * G + g), from each
    episode's own generator: its rollout is then the same whatever else is played beside it.
    `universes`: each secret's candidate universe C_0, shared by its G rollouts (env.CSG).
    `starts`: each secret's state after turns played by another policy (episodes.explored); its G
    rollouts carry on from it, and only their own turns are recorded."""
    game = CSG(
        [s for s in secrets for _ in range(group_size)],
        game_cfg,
        oracle,  # episode e = b * G + g
        None if universes is None else [u for u in universes for _ in range(group_size)],
    )
    if starts is not None:
        game.episodes = [
            start.carried_on(s) for s, start in zip(secrets, starts) for _ in range(group_size)
        ]
    out = RolloutBatch(
        secrets=list(secrets),
        group_size=group_size,
        max_turns=game_cfg.max_turns,
        starts=[ep.carried_on(ep.secret) for ep in game.episodes],
    )
    if seeds is not None:
        generators = [torch.Generator(policy.device).manual_seed(s) for s in seeds]
    while game.active:
        gens = policy.generate(
            policy.encode(game.messages()),
            sample,
            [generators[i] for i in game.active] if seeds is not None else generator,
        )
        out.beliefs += [game.episodes[i].candidates for i in game.active]
        for g, record in zip(gens, game.step([g.text for g in gens])):
            out.prompt_ids.append(g.prompt_ids)
            out.completion_ids.append(g.completion_ids)
            out.logprobs.append(g.logprobs)
            out.entropy.append(g.entropy)
            out.records.append(record)
    out.episodes = [game.episode_summary(e) for e in range(len(game.episodes))]
    return out


def play_chunked(
    policy: LMPolicy,
    secrets,
    group_size: int,
    game_cfg: GameConfig,
    sample: SampleConfig,
    oracle,
    generator: torch.Generator,
    rows: int = 0,
    played: list[dict] = (),
    on_chunk=None,
) -> list[dict]:
    """The episodes of `play_rollouts` over `secrets`, played at most `rows` episodes at a time
    (whole secrets, at least one; 0: all at once), the chunks drawing from `generator` in turn: a
    language model's KV cache and logits grow with the rows decoded together. A chunked play
    draws other numbers than an unchunked one of the same generator.
    A play cut short goes on where it stopped: `played` holds the episodes of its first chunks
    and `generator` the state they left it in; on_chunk(episodes so far) is called after each
    chunk, to keep them (bench/smollm2_study.py's plays outlast a session)."""
    chunk = len(secrets) if rows <= 0 else max(1, rows // group_size)  # secrets at a time
    episodes = list(played)
    for start in range(len(played) // group_size, len(secrets), chunk):
        part = secrets[start : start + chunk]
        episodes += play_rollouts(
            policy, part, group_size, game_cfg, sample, oracle, generator
        ).episodes
        if on_chunk is not None:
            on_chunk(episodes)
    return episodes
