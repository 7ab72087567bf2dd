"""Runs that share the machine: the same rollout workload in 1, 2 or 3 processes side by side, under
different thread settings, timed per process.

A student runs an evaluation next to a training run, or bench/reproduce.py runs seeds in
parallel: each torch process starts an OpenMP pool of `torch.get_num_threads()` threads, and
OpenMP threads spin while they wait for work. Two processes with 2 threads each on 2 cores then
take turns spinning on each other's cores. This bench measures that, and the settings that avoid
it: one thread per process, and OMP_WAIT_POLICY=PASSIVE (threads sleep instead of spinning).

    python bench/threads.py [--episodes 64] [--processes 1,2,3]
"""
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench.common import RESULTS, save_results  # noqa: E402
from cli import arg, parse_config  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORKLOAD = """
import json, sys, time
sys.path.insert(0, {root!r})
{setup}
from env import GameConfig
from policy import SampleConfig, play_rollouts
from warmup import warmed_up
policy = warmed_up("tiny", quiet=True)
secrets = [1 + (17 * i) % 100 for i in range({episodes})]
start = time.perf_counter()
play_rollouts(policy, secrets, 1, GameConfig(), SampleConfig(), generator=torch.Generator().manual_seed(0))
print(json.dumps({{"seconds": time.perf_counter() - start, "threads": torch.get_num_threads()}}))
"""


@dataclass
class ThreadsConfig:
    episodes: int = arg(64, "episodes of the tiny model's batched rollout each process plays")
    processes: str = arg("1,2,3", "comma list: how many processes run side by side")
    settings: str = arg("2,1,auto", "comma list of thread settings: N threads with spinning OpenMP threads (torch's "
                                    "default), N-passive with OMP_WAIT_POLICY=PASSIVE, auto as train.py does it "
                                    "(cli.py imported first, cli.use_threads)")
    out: str = arg(os.path.join(RESULTS, "threads.json"), "where the figures are written", writes="file")


def side_by_side(n: int, setting: str, episodes: int) -> list[float]:
    """Start n identical processes at once; each times its own rollout. Returns their seconds."""
    threads = setting.split("-")[0]
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "OMP_WAIT_POLICY")}
    if setting.endswith("-passive"):
        env["OMP_WAIT_POLICY"] = "PASSIVE"
    setup = ("import cli\nimport torch\ncli.use_threads()" if threads == "auto" else
             f"import torch\ntorch.set_num_threads({int(threads)})")
    code = WORKLOAD.format(root=ROOT, setup=setup, episodes=episodes)
    procs = [subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True) for _ in range(n)]
    outs = [p.communicate()[0] for p in procs]
    return [json.loads(o.strip().splitlines()[-1])["seconds"] for o in outs]


def main(argv=None):
    cfg = parse_config(ThreadsConfig, argv, description=__doc__.splitlines()[0])
    side_by_side(1, "1", 4)   # the warm-up cache exists before anything is timed
    results = {"episodes": cfg.episodes, "cpus": os.cpu_count(), "runs": []}
    for setting in cfg.settings.split(","):
        for n in [int(x) for x in cfg.processes.split(",")]:
            start = time.perf_counter()
            seconds = side_by_side(n, setting, cfg.episodes)
            wall = time.perf_counter() - start
            results["runs"].append({"setting": setting, "processes": n, "seconds_each": [round(s, 2) for s in seconds],
                                    "wall": round(wall, 1)})
            print(f"{setting:10s} x {n} side by side: rollout of {cfg.episodes} episodes took "
                  f"{', '.join(f'{s:.1f}' for s in seconds)} s each", flush=True)
    save_results(results, cfg.out)


if __name__ == "__main__":
    main(sys.argv[1:])
