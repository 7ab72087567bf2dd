"""Hidden tests of exercise 7 (kept out of the student copy): the k3 estimate on random actions,
with padding holding random values, inf and -inf, and its gradient. Each check is held to the
value the reference computed (the grader holds them; see exercise 1's file)."""

import math
import random

import torch
from expect import HELD, check

from echo import approx_kl


def random_actions(rng, case):
    N, L = rng.randint(1, 5), rng.randint(1, 5)
    mask = torch.tensor([[rng.random() < 0.7 for _ in range(L)] for _ in range(N)])
    x = torch.tensor([[rng.gauss(0, 1) for _ in range(L)] for _ in range(N)], dtype=torch.float64)
    padding = (math.inf, -math.inf, 50.0)[case % 3]
    return torch.where(mask, x, padding), mask.to((torch.float64, torch.bool)[case % 2])


def test_random_actions():
    """30 random actions, padding holding inf, -inf or 50, float or bool masks: the sum over real
    tokens, and d kl / d log_ratio."""
    rng = random.Random(9)
    for case in range(30):
        x, mask = random_actions(rng, case)
        x.requires_grad_(True)
        kl = approx_kl(x, mask)
        what = f"random actions {case}: x {x.tolist()}, mask {mask.int().tolist()}"
        check(kl, HELD, what, tol=1e-9)
        check(kl.requires_grad, HELD, f"kl.requires_grad for {what}")
        kl.sum().backward()
        check(x.grad, HELD, f"d kl / d log_ratio for {what}", tol=1e-9)
