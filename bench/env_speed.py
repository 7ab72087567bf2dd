"""Turns per second of the game on one core: action reading, rule oracle, exact belief update
and reward (env.CSG.step), for batches of 64 episodes played by the random-question policy.
The machine's speed drifts from minute to minute, so each question set is timed in `repeats`
windows and the median is reported with the range.

Goal: at least 20,000 turns/s, so the game never shows up in a training profile.
    python bench/env_speed.py [--seconds 10] [--repeats 5]
"""

import os
import random
import statistics
import sys
import time
from dataclasses import dataclass

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench.common import RESULTS, save_results
from env import CSG, GameConfig
from reference import action_text, random_query
from tools.cli import arg, parse_config


@dataclass
class EnvSpeedConfig:
    seconds: float = arg(
        10.0, "how long to play in each repeat, split over the two question sets", above=0
    )
    repeats: int = arg(5, "timed windows per question set; the median is reported", at_least=1)
    out: str = arg(
        os.path.join(RESULTS, "env_speed.json"), "where the figures are written", writes="file"
    )


def main(argv=None):
    args = parse_config(EnvSpeedConfig, argv, description=__doc__.splitlines()[0])
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core
    results = {}
    for question_set in ("paper", "binary"):
        cfg = GameConfig(question_set=question_set)
        rng = random.Random(0)
        # Action texts are made before timing: the benchmark measures the game, not the policy.
        texts = [action_text(random_query(rng, cfg), rng.randrange(5)) for _ in range(5000)]
        rates = []
        for _ in range(args.repeats):
            turns, start = 0, time.perf_counter()
            while time.perf_counter() - start < args.seconds / 2:
                game = CSG([rng.randint(1, cfg.n_max) for _ in range(64)], cfg)
                while game.active:
                    turns += len(game.step([rng.choice(texts) for _ in game.active]))
            rates.append(turns / (time.perf_counter() - start))
        results[question_set] = {
            "turns_per_s": round(statistics.median(rates)),
            "min": round(min(rates)),
            "max": round(max(rates)),
            "repeats": args.repeats,
            "seconds_each": args.seconds / 2,
        }
        print(
            f"{question_set:7s} {statistics.median(rates):9.0f} turns/s on one core, "
            f"median of {args.repeats} windows of {args.seconds / 2:g} s "
            f"(range {min(rates):.0f}-{max(rates):.0f}; goal 20000)"
        )
    save_results(results, args.out)


if __name__ == "__main__":
    main(sys.argv[1:])
