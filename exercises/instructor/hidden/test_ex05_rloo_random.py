"""Hidden tests of exercise 5 (kept out of the student copy): the leave-one-out baseline on random
grids and masks, with garbage in the inactive cells. Each check is held to the value the reference
computed (the grader holds them; see exercise 1's file)."""

import random

import torch
from expect import HELD, check

from baselines import leave_one_out


def test_random_grids():
    """30 random grids and masks, garbage (7.0) in inactive cells."""
    rng = random.Random(6)
    for case in range(30):
        shape = [rng.randint(1, 5) for _ in range(3)]
        cells = shape[0] * shape[1] * shape[2]
        active = torch.tensor([rng.random() < 0.7 for _ in range(cells)]).reshape(shape)
        values = torch.tensor([rng.gauss(0, 1) for _ in range(cells)], dtype=torch.float64)
        values = torch.where(active, values.reshape(shape), 7.0)
        what = f"random grid {case}: values {values.tolist()} (7.0 in inactive cells), active "
        check(leave_one_out(values, active), HELD, what + f"{active.int().tolist()}", tol=1e-9)
