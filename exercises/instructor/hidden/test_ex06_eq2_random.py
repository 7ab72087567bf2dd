"""Hidden tests of exercise 6 (kept out of the student copy): Eq. 2 on random actions, its value,
stats and gradient at both levels, in float64. Each check is held to the value the reference
computed (the grader holds them; see exercise 1's file)."""

import random

import torch
from expect import HELD, check

from echo import clipped_objective


def random_actions(rng):
    N, L = rng.randint(1, 5), rng.randint(1, 5)
    logp_old = torch.tensor([[-3 * rng.random() for _ in range(L)] for _ in range(N)])
    step = torch.tensor([[0.4 * rng.gauss(0, 1) for _ in range(L)] for _ in range(N)])
    lengths = [rng.randint(1, L) for _ in range(N)]
    mask = torch.tensor([[float(j < n) for j in range(L)] for n in lengths], dtype=torch.float64)
    logp_old = logp_old.double()
    logp_new = torch.where(mask.bool(), logp_old + step.double(), 3.0)  # padding holds 3.0
    advantages = torch.tensor([rng.gauss(0, 1) for _ in range(N)], dtype=torch.float64)
    return logp_new, logp_old, mask, advantages


def test_random_actions():
    """40 random batches of actions with padding, both levels, eta 0.2 or 0.1, n_terms >= N: J,
    every stat and dJ / d logp_new."""
    rng = random.Random(7)
    for case in range(40):
        logp_new, logp_old, mask, advantages = random_actions(rng)
        level, clip_eta = ("sequence", "token")[case % 2], (0.2, 0.1)[case % 3 == 0]
        n_terms = len(advantages) + case % 3
        x = logp_new.clone().requires_grad_(True)
        J, stats = clipped_objective(x, logp_old, mask, advantages, clip_eta, n_terms, level)
        what = f"random actions {case}, level={level!r}, eta {clip_eta}, n_terms {n_terms}: "
        what += f"log-ratios {(logp_new - logp_old).tolist()}, mask {mask.int().tolist()}, "
        what += f"A {advantages.tolist()}"
        check(J, HELD, f"J for {what}", tol=1e-9)
        for stat in ("clipped", "ratio_sum", "ratio_max", "terms"):
            check(float(stats[stat]), HELD, f'stats["{stat}"] for {what}', tol=1e-9)
        check(J.requires_grad, HELD, f"J.requires_grad for {what}")
        J.backward()
        check(x.grad, HELD, f"dJ / d logp_new for {what}", tol=1e-9)
