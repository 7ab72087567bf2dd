"""Hidden tests of exercise 5 (kept out of the student copy): the leave-one-out baseline on random
grids and masks against a loop over the groups, with garbage in the inactive cells.

WRONG and RIGHT, at the end, are answers the graded tests must tell apart (see exercise 1's file)."""

import torch
from expect import check

from baselines import leave_one_out


def by_loop(values, active):
    out = torch.zeros_like(values, dtype=torch.float64)
    B, G, T = values.shape
    for b in range(B):
        for t in range(T):
            rows = [g for g in range(G) if active[b, g, t]]
            if len(rows) > 1:
                for g in rows:
                    others = [float(values[b, j, t]) for j in rows if j != g]
                    out[b, g, t] = float(values[b, g, t]) - sum(others) / len(others)
    return out


def test_random_grids_match_a_loop():
    """30 random grids and masks, garbage in inactive cells: each active value minus the mean of
    the other active ones."""
    gen = torch.Generator().manual_seed(6)
    for case in range(30):
        shape = tuple(int(x) for x in torch.randint(1, 6, (3,), generator=gen))
        active = torch.rand(shape, generator=gen) < 0.7
        values = torch.where(active, torch.randn(shape, generator=gen, dtype=torch.float64), 7.0)
        check(
            leave_one_out(values, active),
            by_loop(values, active),
            f"random grid {case}: values {values.tolist()} (7.0 in inactive cells), active {active.int().tolist()}",
            tol=1e-9,
        )


# ---------------------------------------------------------------- answers to tell apart
# Each is planted as baselines.leave_one_out, so it may use only what baselines.py defines.


def leave_one_out__mean_of_all(values, active):
    """Wrong: the baseline is the mean of every active rollout, one's own value included."""
    v, m = values.double(), active.bool()
    n = m.sum(dim=1, keepdim=True)
    mean = torch.where(m, v, 0.0).sum(dim=1, keepdim=True) / n.clamp(min=1)
    return torch.where(m & (n > 1), v - mean, 0.0)


def leave_one_out__divided_by_std(values, active):
    """Wrong: divided by the group's std, as Eq. 1 is."""
    v, m = values.double(), active.bool()
    n = m.sum(dim=1, keepdim=True)
    mean = torch.where(m, v, 0.0).sum(dim=1, keepdim=True) / n.clamp(min=1)
    std = (
        torch.where(m, (v - mean) ** 2, 0.0).sum(dim=1, keepdim=True) / (n - 1).clamp(min=1)
    ).sqrt()
    others = (torch.where(m, v, 0.0).sum(dim=1, keepdim=True) - v) / (n - 1).clamp(min=1)
    return torch.where(m & (n > 1), (v - others) / (std + 1e-6), 0.0)


def leave_one_out__g_minus_one(values, active):
    """Wrong: the others counted as G - 1, active or not."""
    v, m = values.double(), active.bool()
    n = m.sum(dim=1, keepdim=True)
    others = (torch.where(m, v, 0.0).sum(dim=1, keepdim=True) - v) / (v.shape[1] - 1)
    return torch.where(m & (n > 1), v - others, 0.0)


def leave_one_out__alone_keeps_its_value(values, active):
    """Wrong: a rollout alone at its turn keeps its value (the mean of no others taken as 0)."""
    v, m = values.double(), active.bool()
    n = m.sum(dim=1, keepdim=True)
    others = (torch.where(m, v, 0.0).sum(dim=1, keepdim=True) - v) / (n - 1).clamp(min=1)
    return torch.where(m, v - others, 0.0)


def leave_one_out__by_loop(values, active):
    """Right: a loop over the rollouts of each group."""
    out = torch.zeros_like(values, dtype=torch.float64)
    B, G, T = values.shape
    for b in range(B):
        for t in range(T):
            rows = [g for g in range(G) if active[b, g, t]]
            for g in rows if len(rows) > 1 else []:
                out[b, g, t] = values[b, g, t] - sum(values[b, j, t] for j in rows if j != g) / (
                    len(rows) - 1
                )
    return out


def leave_one_out__scaled_deviation(values, active):
    """Right: v - mean of the others = n / (n - 1) (v - mean of all)."""
    v, m = values.double(), active.bool()
    n = m.sum(dim=1, keepdim=True).double()
    mean = torch.where(m, v, 0.0).sum(dim=1, keepdim=True) / n.clamp(min=1)
    return torch.where(m & (n > 1), n / (n - 1).clamp(min=1) * (v - mean), 0.0)


WRONG = [
    leave_one_out__mean_of_all,
    leave_one_out__divided_by_std,
    leave_one_out__g_minus_one,
    leave_one_out__alone_keeps_its_value,
]
RIGHT = [leave_one_out__by_loop, leave_one_out__scaled_deviation]
