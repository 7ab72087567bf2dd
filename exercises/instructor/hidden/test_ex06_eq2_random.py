"""Hidden tests of exercise 6 (kept out of the student copy): Eq. 2 on random actions against a
loop over the actions (value and stats, at both levels), and its gradient against finite
differences of its value, in float64.

WRONG and RIGHT, at the end, are answers the graded tests must tell apart (see exercise 1's file)."""

import math

import torch
from expect import check

from echo import clipped_objective


def by_loop(logp_new, logp_old, mask, advantages, clip_eta, n_terms, level):
    """(J, clipped, ratio_sum, ratio_max) from Python floats, one action at a time."""
    J, clipped, ratios = 0.0, 0.0, []
    for i in range(len(advantages)):
        A = float(advantages[i])
        logs = [float(logp_new[i, j] - logp_old[i, j]) for j in range(mask.shape[1]) if mask[i, j]]
        per_token = [sum(logs)] if level == "sequence" else logs
        terms = [
            min(math.exp(x) * A, min(max(math.exp(x), 1 - clip_eta), 1 + clip_eta) * A)
            for x in per_token
        ]
        was_clipped = [
            min(max(math.exp(x), 1 - clip_eta), 1 + clip_eta) * A < math.exp(x) * A
            for x in per_token
        ]
        J += sum(terms) / len(terms)
        clipped += sum(was_clipped) / len(terms)
        ratios.append(sum(math.exp(x) for x in per_token) / len(per_token))
    return J / n_terms, clipped, sum(ratios), max(ratios)


def random_actions(gen):
    N, L = (int(x) for x in torch.randint(1, 6, (2,), generator=gen))
    logp_old = -torch.rand(N, L, generator=gen, dtype=torch.float64) * 3
    logp_new = logp_old + 0.4 * torch.randn(N, L, generator=gen, dtype=torch.float64)
    lengths = torch.randint(1, L + 1, (N,), generator=gen)
    mask = (torch.arange(L)[None, :] < lengths[:, None]).double()
    logp_new = torch.where(mask.bool(), logp_new, 3.0)  # padding holds a value that must not count
    advantages = torch.randn(N, generator=gen, dtype=torch.float64)
    return logp_new, logp_old, mask, advantages


def test_random_actions_match_a_loop():
    """40 random batches of actions with padding, both levels, eta 0.2 or 0.1, n_terms >= N: J
    and every stat as the loop computes them."""
    gen = torch.Generator().manual_seed(7)
    for case in range(40):
        logp_new, logp_old, mask, advantages = random_actions(gen)
        level, clip_eta = ("sequence", "token")[case % 2], (0.2, 0.1)[case % 3 == 0]
        n_terms = len(advantages) + case % 3
        J, stats = clipped_objective(logp_new, logp_old, mask, advantages, clip_eta, n_terms, level)
        J_loop, clipped, ratio_sum, ratio_max = by_loop(
            logp_new, logp_old, mask, advantages, clip_eta, n_terms, level
        )
        what = (
            f"random actions {case}, level={level!r}, eta {clip_eta}, n_terms {n_terms}: log-ratios "
            f"{(logp_new - logp_old).tolist()}, mask {mask.int().tolist()}, A {advantages.tolist()}"
        )
        check(J, J_loop, f"J for {what}", tol=1e-9)
        check(float(stats["clipped"]), clipped, f'stats["clipped"] for {what}', tol=1e-9)
        check(float(stats["ratio_sum"]), ratio_sum, f'stats["ratio_sum"] for {what}', tol=1e-9)
        check(float(stats["ratio_max"]), ratio_max, f'stats["ratio_max"] for {what}', tol=1e-9)
        check(float(stats["terms"]), float(len(advantages)), f'stats["terms"] for {what}')


def test_the_gradient_matches_finite_differences():
    """10 random batches, both levels: dJ / d logp_new equals the central finite difference of J
    (float64)."""
    gen = torch.Generator().manual_seed(8)
    for case in range(10):
        logp_new, logp_old, mask, advantages = random_actions(gen)
        level = ("sequence", "token")[case % 2]
        value = lambda x: clipped_objective(
            x, logp_old, mask, advantages, 0.2, len(advantages), level
        )[0]  # noqa: E731
        x = logp_new.clone().requires_grad_(True)
        J = value(x)
        what = f"random actions {case}, level={level!r}: log-ratios {(logp_new - logp_old).tolist()}, A {advantages.tolist()}"
        if not J.requires_grad:
            raise AssertionError(f"J has no gradient for {what}")
        J.backward()
        numeric = torch.zeros_like(logp_new)
        for i in range(logp_new.shape[0]):
            for j in range(logp_new.shape[1]):
                step = torch.zeros_like(logp_new)
                step[i, j] = 1e-6
                numeric[i, j] = (value(logp_new + step) - value(logp_new - step)).detach() / 2e-6
        check(x.grad, numeric, f"dJ / d logp_new for {what}", tol=1e-5)


# ---------------------------------------------------------------- answers to tell apart
# Each is planted as echo.clipped_objective, so it may use only what echo.py defines and the other
# answers here (planted beside it).


def clipped_objective__max(
    logp_new, logp_old, mask, advantages, clip_eta, n_terms, level="sequence"
):
    """Wrong: max of the two branches (the pessimistic bound turned optimistic)."""
    mask = mask.to(logp_new.dtype)
    per = (
        ((logp_new - logp_old) * mask).sum(-1, keepdim=True)
        if level == "sequence"
        else logp_new - logp_old
    )
    keep = torch.ones_like(mask[:, :1]) if level == "sequence" else mask
    ratio = per.exp()
    t1, t2 = (
        ratio * advantages[:, None],
        ratio.clamp(1 - clip_eta, 1 + clip_eta) * advantages[:, None],
    )
    n = keep.sum(-1)
    terms = (torch.maximum(t1, t2) * keep).sum(-1) / n
    clipped = ((t2 > t1).double() * keep).sum(-1) / n
    mean_ratio = ((ratio * keep).sum(-1) / n).detach()
    return terms.sum() / n_terms, {
        "clipped": clipped.sum().item(),
        "ratio_sum": mean_ratio.sum().item(),
        "ratio_max": mean_ratio.max().item(),
        "terms": len(terms),
    }


def clipped_objective__mean(
    logp_new, logp_old, mask, advantages, clip_eta, n_terms, level="sequence"
):
    """Wrong: the mean of these terms, whatever n_terms says."""
    J, stats = clipped_objective__by_cases(
        logp_new, logp_old, mask, advantages, clip_eta, n_terms, level
    )
    return J * n_terms / len(advantages), stats


def clipped_objective__padding_counted(
    logp_new, logp_old, mask, advantages, clip_eta, n_terms, level="sequence"
):
    """Wrong: every position counts, padding included."""
    return clipped_objective__by_cases(
        logp_new, logp_old, torch.ones_like(mask), advantages, clip_eta, n_terms, level
    )


def clipped_objective__detached(
    logp_new, logp_old, mask, advantages, clip_eta, n_terms, level="sequence"
):
    """Wrong: computed without gradient."""
    with torch.no_grad():
        return clipped_objective__by_cases(
            logp_new, logp_old, mask, advantages, clip_eta, n_terms, level
        )


def clipped_objective__clamp_count(
    logp_new, logp_old, mask, advantages, clip_eta, n_terms, level="sequence"
):
    """Wrong: counts the terms whose ratio is outside [1 - eta, 1 + eta] as clipped."""
    J, stats = clipped_objective__by_cases(
        logp_new, logp_old, mask, advantages, clip_eta, n_terms, level
    )
    m = mask.to(logp_new.dtype)
    log_ratio = (
        ((logp_new - logp_old) * m).sum(-1, keepdim=True)
        if level == "sequence"
        else logp_new - logp_old
    )
    keep = torch.ones_like(m[:, :1]) if level == "sequence" else m
    outside = ((log_ratio.exp() - 1).abs() > clip_eta).double() * keep
    return J, {**stats, "clipped": (outside.sum(-1) / keep.sum(-1)).sum().item()}


def clipped_objective__token_mean_over_every_position(
    logp_new, logp_old, mask, advantages, clip_eta, n_terms, level="sequence"
):
    """Wrong: at token level, the mean over all L positions (padding counts as a 0 term)."""
    if level == "sequence":
        return clipped_objective__by_cases(
            logp_new, logp_old, mask, advantages, clip_eta, n_terms, level
        )
    m = mask.to(logp_new.dtype)
    ratio, A = (logp_new - logp_old).exp(), advantages[:, None]
    t1, t2 = ratio * A, ratio.clamp(1 - clip_eta, 1 + clip_eta) * A
    terms = (torch.minimum(t1, t2) * m).mean(-1)
    clipped = ((t2 < t1).double() * m).mean(-1)
    mean_ratio = (ratio * m).mean(-1).detach()
    return terms.sum() / n_terms, {
        "clipped": clipped.sum().item(),
        "ratio_sum": mean_ratio.sum().item(),
        "ratio_max": mean_ratio.max().item(),
        "terms": len(terms),
    }


def clipped_objective__by_cases(
    logp_new, logp_old, mask, advantages, clip_eta, n_terms, level="sequence"
):
    """Right: the min written as its two cases, A >= 0 (clip above) and A < 0 (clip below)."""
    m = mask.to(logp_new.dtype)
    if level == "sequence":
        ratio = ((logp_new - logp_old) * m).sum(-1, keepdim=True).exp()  # (N, 1)
        keep = torch.ones_like(ratio)
    else:
        ratio, keep = (logp_new - logp_old).exp(), m  # (N, L)
    A = advantages[:, None]
    clip_above, clip_below = (A >= 0) & (ratio > 1 + clip_eta), (A < 0) & (ratio < 1 - clip_eta)
    terms = torch.where(
        clip_above, (1 + clip_eta) * A, torch.where(clip_below, (1 - clip_eta) * A, ratio * A)
    )
    n = keep.sum(-1)
    per_action = (terms * keep).sum(-1) / n
    clipped = ((clip_above | clip_below).double() * keep).sum(-1) / n
    mean_ratio = ((ratio * keep).sum(-1) / n).detach()
    return per_action.sum() / n_terms, {
        "clipped": clipped.sum().item(),
        "ratio_sum": mean_ratio.sum().item(),
        "ratio_max": mean_ratio.max().item(),
        "terms": len(advantages),
    }


def clipped_objective__loop(
    logp_new, logp_old, mask, advantages, clip_eta, n_terms, level="sequence"
):
    """Right: a loop over the actions."""
    J, clipped, ratios = 0.0, 0.0, []
    for i in range(len(advantages)):
        real = mask[i].bool()
        log_ratios = (logp_new[i] - logp_old[i])[real]
        per = log_ratios.sum()[None] if level == "sequence" else log_ratios
        ratio = per.exp()
        unclipped, clip = (
            ratio * advantages[i],
            ratio.clamp(1 - clip_eta, 1 + clip_eta) * advantages[i],
        )
        J = J + torch.minimum(unclipped, clip).mean()
        clipped += (clip < unclipped).double().mean().item()
        ratios.append(ratio.mean().item())
    return J / n_terms, {
        "clipped": clipped,
        "ratio_sum": sum(ratios),
        "ratio_max": max(ratios),
        "terms": len(ratios),
    }


WRONG = [
    clipped_objective__max,
    clipped_objective__mean,
    clipped_objective__padding_counted,
    clipped_objective__token_mean_over_every_position,
    clipped_objective__detached,
    clipped_objective__clamp_count,
]
RIGHT = [clipped_objective__by_cases, clipped_objective__loop]
