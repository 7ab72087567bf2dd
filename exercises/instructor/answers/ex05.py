"""Exercise 5's answers to tell apart, planted as baselines.leave_one_out: WRONG, likely mistakes
that must turn the exercise to FAIL, and RIGHT, two correct answers written differently from the
reference that must PASS (exercises/instructor/answers/__init__.py plants them). An answer may
use only what the module it is planted in defines; the imports name those."""

import torch


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
