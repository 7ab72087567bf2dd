"""Hidden tests of exercise 3 (kept out of the student copy): Eq. 1 on random grids and masks
against a plain loop over the groups, so that a solution tuned to the visible hand-worked cases
does not pass by accident.

WRONG and RIGHT, at the end, are answers the graded tests must tell apart (see exercise 1's file)."""

import statistics

import torch
from expect import check

from echo import group_normalize


def by_loop(values, active, eps):
    """Eq. 1 over axis 1: for each secret b and turn t, the active rollouts' mean and sample std."""
    out = torch.zeros_like(values, dtype=torch.float64)
    B, G, T = values.shape
    for b in range(B):
        for t in range(T):
            rows = [g for g in range(G) if active[b, g, t]]
            if len(rows) > 1:
                xs = [float(values[b, g, t]) for g in rows]
                mean, std = statistics.mean(xs), statistics.stdev(xs)
                for g, x in zip(rows, xs):
                    out[b, g, t] = (x - mean) / (std + eps)
    return out


def random_grid(gen):
    shape = tuple(int(x) for x in torch.randint(1, 6, (3,), generator=gen))
    values = torch.randn(shape, generator=gen, dtype=torch.float64) * 3
    active = torch.rand(shape, generator=gen) < 0.7
    return values, active


def test_random_grids_match_a_loop():
    """30 random (B, G, T) grids and masks, eps 1e-6, 0.1 or 1: Eq. 1 over axis 1 as the loop
    computes it."""
    gen = torch.Generator().manual_seed(3)
    for case in range(30):
        values, active = random_grid(gen)
        eps = (1e-6, 0.1, 1.0)[case % 3]
        check(
            group_normalize(values, active, eps=eps),
            by_loop(values, active, eps),
            f"random grid {case}: shape {tuple(values.shape)}, eps {eps}, values {values.tolist()}, "
            f"active {active.int().tolist()}",
            tol=1e-9,
        )


def test_random_groups_over_two_axes_match_a_loop():
    """dims=(1, 2) is the loop over a grid whose axes 1 and 2 are flattened into one."""
    gen = torch.Generator().manual_seed(4)
    for case in range(20):
        values, active = random_grid(gen)
        B = values.shape[0]
        flat = by_loop(values.reshape(B, -1, 1), active.reshape(B, -1, 1), 1e-6).reshape(
            values.shape
        )
        check(
            group_normalize(values, active, dims=(1, 2)),
            flat,
            f"random grid {case}, dims=(1, 2): values {values.tolist()}, active {active.int().tolist()}",
            tol=1e-9,
        )


# ---------------------------------------------------------------- answers to tell apart
# Each is planted as echo.group_normalize, so it may use only what echo.py defines.


def group_normalize__population_std(values, active, dims=1, eps=1e-6):
    """Wrong: the population std (divides by n)."""
    v, m = values.double(), active.bool()
    n = m.sum(dim=dims, keepdim=True)
    mean = torch.where(m, v, 0.0).sum(dim=dims, keepdim=True) / n.clamp(min=1)
    var = torch.where(m, (v - mean) ** 2, 0.0).sum(dim=dims, keepdim=True) / n.clamp(min=1)
    return torch.where(m & (n > 1), (v - mean) / (var.sqrt() + eps), 0.0)


def group_normalize__eps_in_the_root(values, active, dims=1, eps=1e-6):
    """Wrong: sqrt(var + eps) instead of std + eps."""
    v, m = values.double(), active.bool()
    n = m.sum(dim=dims, keepdim=True)
    mean = torch.where(m, v, 0.0).sum(dim=dims, keepdim=True) / n.clamp(min=1)
    var = torch.where(m, (v - mean) ** 2, 0.0).sum(dim=dims, keepdim=True) / (n - 1).clamp(min=1)
    return torch.where(m & (n > 1), (v - mean) / (var + eps).sqrt(), 0.0)


def group_normalize__unmasked(values, active, dims=1, eps=1e-6):
    """Wrong: mean and std over every cell of the group, active or not."""
    v, m = values.double(), active.bool()
    mean, std = v.mean(dim=dims, keepdim=True), v.std(dim=dims, keepdim=True)
    return torch.where(m, (v - mean) / (std + eps), 0.0)


def group_normalize__nan_when_alone(values, active, dims=1, eps=1e-6):
    """Wrong: no guard for groups of one: 0 / 0."""
    v, m = values.double(), active.bool()
    n = m.sum(dim=dims, keepdim=True)
    mean = torch.where(m, v, 0.0).sum(dim=dims, keepdim=True) / n
    var = torch.where(m, (v - mean) ** 2, 0.0).sum(dim=dims, keepdim=True) / (n - 1)
    return torch.where(m, (v - mean) / (var.sqrt() + eps), 0.0)


def group_normalize__axis_one_always(values, active, dims=1, eps=1e-6):
    """Wrong: the group is axis 1, whatever `dims` says."""
    v, m = values.double(), active.bool()
    n = m.sum(dim=1, keepdim=True)
    mean = torch.where(m, v, 0.0).sum(dim=1, keepdim=True) / n.clamp(min=1)
    var = torch.where(m, (v - mean) ** 2, 0.0).sum(dim=1, keepdim=True) / (n - 1).clamp(min=1)
    return torch.where(m & (n > 1), (v - mean) / (var.sqrt() + eps), 0.0)


def group_normalize__by_loop(values, active, dims=1, eps=1e-6):
    """Right: a loop over every group, with the statistics module."""
    import itertools
    import statistics

    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    x, on = values.double(), active.bool()
    out = torch.zeros_like(x)
    for index in itertools.product(
        *[[slice(None)] if d in dims else range(n) for d, n in enumerate(x.shape)]
    ):
        xs = x[index][on[index]].tolist()
        if len(xs) > 1:
            out[index] = torch.where(
                on[index], (x[index] - statistics.mean(xs)) / (statistics.stdev(xs) + eps), 0.0
            )
    return out


def group_normalize__nan_reductions(values, active, dims=1, eps=1e-6):
    """Right: inactive cells as NaN, then nanmean and a nan-aware sample variance."""
    v = torch.where(active.bool(), values.double(), torch.nan)
    n = (~v.isnan()).sum(dim=dims, keepdim=True)
    mean = v.nanmean(dim=dims, keepdim=True)
    var = ((v - mean) ** 2).nansum(dim=dims, keepdim=True) / (n - 1)
    adv = (v - mean) / (var.sqrt() + eps)
    return torch.where(v.isnan() | (n < 2), 0.0, adv)


WRONG = [
    group_normalize__population_std,
    group_normalize__eps_in_the_root,
    group_normalize__unmasked,
    group_normalize__nan_when_alone,
    group_normalize__axis_one_always,
]
RIGHT = [group_normalize__by_loop, group_normalize__nan_reductions]
