"""Runs that share the machine: the same training workload (one step's rollout and its Eq. 2 update)
in 1, 2 or 3 processes side by side, under different thread settings, timed per process.

A student runs an evaluation next to a training run, or bench/reproduce.py runs seeds in
parallel: each torch process starts an OpenMP pool of `torch.get_num_threads()` threads, and
OpenMP threads spin while they wait for work. Two processes with 2 threads each on 2 cores then
take turns spinning on each other's cores. This bench measures that, and the settings that avoid
it: one thread per process, OMP_WAIT_POLICY=PASSIVE (threads sleep at once), a brief spin
(GOMP_SPINCOUNT), and what every entry point does (tools/cli.py). The workload is train.py's first
step of the default run: its rollout (many one-token model calls) and its update (Eq. 2's passes).

    python bench/threads.py [--episodes 6] [--processes 1,2,3] \\
        [--settings 2,1,2-passive,2-spin10000,2-spin1000,auto]
"""

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench.common import RESULTS, save_results
from tools.cli import arg, parse_config

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORKLOAD = """
import json, sys, time
sys.path.insert(0, {root!r})
{setup}
import config
import train
from tools.ranks import Ranks
from update import ppo_update
from baselines import ESTIMATORS, EstimatorContext, credit_from_batch
from policy import SampleConfig
from rollouts import play_rollouts
from config import warmup_config
from lm.models import ModelConfig
from lm.warmup import starting_policy
cfg = config.config_from_flags([])
game = settings(GameConfig, cfg)
policy = starting_policy(settings(ModelConfig, cfg), warmup_config(cfg), quiet=True)[0]
secrets = [1 + (17 * i) % 100 for i in range({episodes})]
start = time.perf_counter()
batch = play_rollouts(policy, secrets, cfg.group_size, game, \
SampleConfig(cfg.temperature, cfg.top_p),
                      generator=torch.Generator().manual_seed(0))
played = time.perf_counter()
advantages = batch.from_grid(ESTIMATORS["echo"].advantages(credit_from_batch(batch, game.n_max), \
EstimatorContext())).float()
optimizer = torch.optim.AdamW(policy.model.parameters(), lr=cfg.lr)
shuffle = torch.Generator().manual_seed(0)
ppo_update(
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
end = time.perf_counter()
print(json.dumps({{"seconds": end - start, "rollout": played - start, "update": end - played,
                  "threads": torch.get_num_threads()}}))
"""


@dataclass
class ThreadsConfig:
    episodes: int = arg(
        6, "secrets of the step each process plays (G rollouts each, train.py's) and updates on"
    )
    processes: str = arg("1,2,3", "comma list: how many processes run side by side")
    settings: str = arg(
        "2,1,2-passive,2-spin10000,2-spin1000,auto",
        "comma list of thread settings: N threads with spinning "
        "OpenMP threads (torch's default), N-passive with OMP_WAIT_POLICY=PASSIVE, N-spinK with "
        "GOMP_SPINCOUNT=K, auto as train.py does it (tools/cli.py imported first, cli.use_threads)",
    )
    out: str = arg(
        os.path.join(RESULTS, "threads.json"), "where the figures are written", writes="file"
    )


def side_by_side(n: int, setting: str, episodes: int) -> list[dict]:
    """Start n identical processes at once; each times its own step. Returns their timings."""
    threads, _, wait = setting.partition("-")
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("OMP_NUM_THREADS", "OMP_WAIT_POLICY", "GOMP_SPINCOUNT")
    }
    if wait == "passive":
        env["OMP_WAIT_POLICY"] = "PASSIVE"
    elif wait.startswith("spin"):
        env["GOMP_SPINCOUNT"] = wait[len("spin") :]
    setup = (
        "import cli\nimport torch\ncli.use_threads()"
        if threads == "auto"
        else f"import torch\ntorch.set_num_threads({int(threads)})"
    )
    code = WORKLOAD.format(root=ROOT, setup=setup, episodes=episodes)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        for _ in range(n)
    ]
    outs = [p.communicate()[0] for p in procs]
    return [json.loads(o.strip().splitlines()[-1]) for o in outs]


def main(argv=None):
    cfg = parse_config(ThreadsConfig, argv, description=__doc__.splitlines()[0])
    side_by_side(1, "1", 4)  # the warm-up cache exists before anything is timed
    results = {"episodes": cfg.episodes, "cpus": os.cpu_count(), "runs": []}
    for setting in cfg.settings.split(","):
        for n in [int(x) for x in cfg.processes.split(",")]:
            start = time.perf_counter()
            timings = side_by_side(n, setting, cfg.episodes)
            wall = time.perf_counter() - start
            each = {
                key: [round(t[key], 2) for t in timings] for key in ("seconds", "rollout", "update")
            }
            results["runs"].append(
                {
                    "setting": setting,
                    "processes": n,
                    "seconds_each": each["seconds"],
                    "rollout_each": each["rollout"],
                    "update_each": each["update"],
                    "wall": round(wall, 1),
                }
            )
            print(
                f"{setting:12s} x {n} side by side: a step of {cfg.episodes} secrets took "
                f"{', '.join(f'{s:.1f}' for s in each['seconds'])} s each",
                flush=True,
            )
    save_results(results, cfg.out)


if __name__ == "__main__":
    main(sys.argv[1:])
