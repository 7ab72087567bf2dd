"""Can the built-in model represent bisection at all? A capacity check, never an RL result: the
tiny model trained supervised (cross-entropy, warmup.supervised_finetune) on the actions of the
Bayes policy (reference.BayesPolicy: the question of largest expected information gain under
b_t = Unif(C_t), which on the binary set halves C_t) in the states that policy reaches, then
played like any trained policy.

Paper: Proposition 3.1 (belief sufficiency); App. C "Bisection as a special case of the EDP
objective". If the model cannot imitate the Bayes policy, no estimator can train it to bisect,
and the binary set measures the model rather than the credit.

Training states: Bayes episodes on the training secrets of 1..100 (env.secret_split), each in a
candidate universe lo..hi drawn around its secret (env.random_interval), so that the right
question depends on the candidates listed in the prompt and no fixed sequence fits. Reported,
greedy and sampled at T = 1: the resolve rate on the held-out secrets in the full 1..100, and on
1..200 (secrets the model never saw, universes twice as wide: evaluate.py's "generalization"),
and the comparison thresholds against the median of C_t (bench/bisection_behaviour.py); and,
teacher-forced, the share of the Bayes policy's own states in which the model's action halves C_t
(`halving_share`: imitation where it stands, without compounding its own mistakes).
    python bench/capacity_check.py [--layers 2 --width 128] [--episodes 1500 --epochs 4]
"""

import os
import random
import sys
import time
from dataclasses import dataclass

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import torch

from bench.bisection_behaviour import halving_share, heldout_and_n200
from bench.common import RESULTS, save_results
from env import GameConfig, secret_split
from episodes import random_interval
from lm import models, tinylm, warmup
from reference import BayesPolicy
from tools.cli import arg, parse_config, use_threads


@dataclass
class CapacityConfig:
    layers: int = arg(2, "layers of the tiny model (train.py --tiny-layers)", at_least=1)
    width: int = arg(128, "hidden size of the tiny model (train.py --tiny-width)", at_least=32)
    episodes: int = arg(
        1500,
        "Bayes-policy episodes of training data (training secrets, random universes)",
        at_least=1,
    )
    least: int = arg(2, "the smallest universe drawn (env.random_interval)", at_least=1)
    epochs: int = arg(4, "passes over the data", at_least=1)
    lr: float = arg(2e-3, "AdamW learning rate, decayed linearly to 0", above=0)
    batch_size: int = arg(32, "states per optimizer step", at_least=1)
    samples: int = arg(4, "sampled episodes (T = 1) per evaluation secret", at_least=0)
    seed: int = arg(0, "seed of the model, the data and the sampling", at_least=0)
    threads: int = arg(0, "torch threads (0: every core)", at_least=0)
    save: str = arg(
        "", "also save the trained model here (a checkpoint directory; empty: not saved)"
    )
    out: str = arg(
        os.path.join(RESULTS, "capacity_check.json"), "where the figures are written", writes="file"
    )


def main(argv=None):
    cfg = parse_config(CapacityConfig, argv, description=__doc__.splitlines()[0])
    use_threads(cfg.threads)
    torch.manual_seed(cfg.seed)
    game = GameConfig(question_set="binary")
    train_secrets, heldout = secret_split()
    rng = random.Random(cfg.seed)
    secrets = [rng.choice(train_secrets) for _ in range(cfg.episodes)]
    universes = [random_interval(s, game.n_max, cfg.least, rng) for s in secrets]
    examples = warmup.reference_states(BayesPolicy(), secrets, game, universes)
    tiny = tinylm.TinyConfig(
        hidden_size=cfg.width,
        num_layers=cfg.layers,
        num_heads=cfg.width // 32,
        intermediate_size=4 * cfg.width,
    )
    policy = models.load_policy("tiny", "cpu", "fp32", tiny=tiny)
    start = time.time()
    losses = warmup.supervised_finetune(
        policy,
        examples,
        warmup.WarmupConfig(epochs=cfg.epochs, batch_size=cfg.batch_size, lr=cfg.lr, seed=cfg.seed),
    )
    trained = time.time() - start
    results = {
        "config": vars(cfg),
        "parameters": sum(p.numel() for p in policy.model.parameters()),
        "training_states": len(examples),
        "train_seconds": round(trained, 1),
        "epoch_losses": losses,
    }
    if cfg.save:
        policy.save(cfg.save)
    results.update(heldout_and_n200(policy, heldout, cfg.samples, cfg.seed))
    for name, secrets_, game_ in (
        ("heldout", heldout, game),
        ("n200", list(range(1, 201)), GameConfig(question_set="binary", n_max=200)),
    ):
        b = results[name]
        b["halving_share"] = halving_share(policy, secrets_, game_)
        print(
            f"{name}: resolve greedy {b['greedy']:.3f}, sampled {b['sampled']:.3f}; "
            "threshold-median corr greedy "
            f"{b['behaviour_greedy'].get('threshold_median_corr', float('nan')):.3f}, "
            f"sampled {b['behaviour_sampled'].get('threshold_median_corr', float('nan')):.3f}; "
            f"eliminated per turn {b['behaviour_greedy']['mean_fraction_eliminated']:.3f}; "
            f"halving share on Bayes states {b['halving_share']:.3f}",
            flush=True,
        )
    print(
        f"{results['parameters']:,} parameters, {len(examples)} states, "
        f"{trained:.0f} s of training, losses {', '.join(f'{x:.3f}' for x in losses)}"
    )
    save_results(results, cfg.out)


if __name__ == "__main__":
    main(sys.argv[1:])
