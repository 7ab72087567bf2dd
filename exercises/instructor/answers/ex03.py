"""Exercise 3's answers to tell apart, planted as echo.group_normalize and
baselines.normalize_within: WRONG, likely mistakes that must turn the exercise to FAIL, and
RIGHT, two correct answers written differently from the reference that must PASS
(exercises/instructor/answers/__init__.py plants them). An answer may use only what the module
it is planted in defines; the imports name those."""

import torch


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


def normalize_within__population_std(values, groups, eps=1e-6):
    """Wrong: the population std within each id (divides by n)."""
    adv = torch.zeros_like(values, dtype=torch.float64)
    size = torch.zeros_like(values, dtype=torch.float64)
    for g in groups[groups >= 0].unique():
        cells = groups == g
        v = values.double()[cells]
        size[cells] = float(len(v))
        if len(v) > 1:
            adv[cells] = (v - v.mean()) / (v.std(correction=0) + eps)
    return adv, size


def normalize_within__size_counts_no_group(values, groups, eps=1e-6):
    """Wrong: the cells of no group (-1) get the size of that pseudo-group."""
    adv, size = normalize_within__by_loop(values, groups, eps)
    none = groups < 0
    return adv, torch.where(none, none.sum().double(), size)


def normalize_within__by_loop(values, groups, eps=1e-6):
    """Right: one id at a time, with torch's sample std."""
    adv = torch.zeros_like(values, dtype=torch.float64)
    size = torch.zeros_like(values, dtype=torch.float64)
    for g in groups[groups >= 0].unique():
        cells = groups == g
        v = values.double()[cells]
        size[cells] = float(len(v))
        if len(v) > 1:
            adv[cells] = (v - v.mean()) / (v.std() + eps)
    return adv, size


def normalize_within__as_a_grid(values, groups, eps=1e-6):
    """Right: the groups laid out as the rows of a padded grid, normalised by group_normalize."""
    import echo

    ids = groups[groups >= 0]
    n_groups = int(ids.max()) + 1 if len(ids) else 0
    rows = [values.double()[groups == g] for g in range(n_groups)]
    width = max((len(r) for r in rows), default=0)
    grid = torch.zeros(n_groups, width, 1, dtype=torch.float64)
    active = torch.zeros(n_groups, width, 1, dtype=torch.bool)
    for g, r in enumerate(rows):
        grid[g, : len(r), 0], active[g, : len(r), 0] = r, True
    normalised = echo.group_normalize(grid, active, dims=1, eps=eps)
    adv = torch.zeros_like(values, dtype=torch.float64)
    size = torch.zeros_like(values, dtype=torch.float64)
    for g, r in enumerate(rows):
        adv[groups == g] = normalised[g, : len(r), 0]
        size[groups == g] = float(len(r))
    return adv, size


WRONG = [
    group_normalize__population_std,
    group_normalize__eps_in_the_root,
    group_normalize__unmasked,
    group_normalize__nan_when_alone,
    group_normalize__axis_one_always,
    normalize_within__population_std,
    normalize_within__size_counts_no_group,
]
RIGHT = [
    (group_normalize__by_loop, normalize_within__as_a_grid),
    (group_normalize__nan_reductions, normalize_within__by_loop),
]
