"""Hidden tests of exercise 3 (kept out of the student copy): Eq. 1 on random grids and masks, over
one axis and two, and over random group ids, so that a solution tuned to the visible hand-worked
cases does not pass by accident. Each check is held to the value the reference computed (the
grader holds them; see exercise 1's file)."""

import random

import torch
from expect import HELD, check

from baselines import normalize_within
from echo import group_normalize


def random_grid(rng):
    shape = [rng.randint(1, 5) for _ in range(3)]
    cells = shape[0] * shape[1] * shape[2]
    values = torch.tensor([rng.gauss(0, 3) for _ in range(cells)], dtype=torch.float64)
    active = torch.tensor([rng.random() < 0.7 for _ in range(cells)])
    return values.reshape(shape), active.reshape(shape)


def test_random_grids():
    """30 random (B, G, T) grids and masks, eps 1e-6, 0.1 or 1: Eq. 1 over axis 1."""
    rng = random.Random(3)
    for case in range(30):
        values, active = random_grid(rng)
        eps = (1e-6, 0.1, 1.0)[case % 3]
        what = f"random grid {case}: shape {tuple(values.shape)}, eps {eps}, values "
        what += f"{values.tolist()}, active {active.int().tolist()}"
        check(group_normalize(values, active, eps=eps), HELD, what, tol=1e-9)


def test_random_groups_over_two_axes():
    """20 random grids with dims=(1, 2): each secret's active cells in one group."""
    rng = random.Random(4)
    for case in range(20):
        values, active = random_grid(rng)
        what = f"random grid {case}, dims=(1, 2): values {values.tolist()}, active "
        what += f"{active.int().tolist()}"
        check(group_normalize(values, active, dims=(1, 2)), HELD, what, tol=1e-9)


def test_random_group_ids():
    """30 random grids with random ids (-1: no group), eps 1e-6 or 0.5: (advantages, sizes)."""
    rng = random.Random(5)
    for case in range(30):
        values, _ = random_grid(rng)
        n_ids = rng.randint(1, 4)
        groups = torch.tensor([rng.randint(-1, n_ids) for _ in range(values.numel())])
        groups = groups.reshape(values.shape)
        eps = (1e-6, 0.5)[case % 2]
        what = f"random ids {case}: values {values.tolist()}, ids {groups.tolist()}, eps {eps}"
        check(normalize_within(values, groups, eps=eps), HELD, what, tol=1e-9)
