"""Exercise 6's answers to tell apart, planted as echo.clipped_objective: WRONG, likely mistakes
that must turn the exercise to FAIL, and RIGHT, two correct answers written differently from the
reference that must PASS (exercises/instructor/answers/__init__.py plants them). An answer may
use only what the module it is planted in defines; the imports name those."""

import torch


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


def clipped_objective__detached_clip(
    logp_new, logp_old, mask, advantages, clip_eta, n_terms, level="sequence"
):
    """Wrong: the clipped branch cut from the graph: where both branches are the minimum (rho =
    1, every first epoch) only half the gradient comes through."""
    m = mask.to(logp_new.dtype)
    if level == "sequence":
        ratio = ((logp_new - logp_old) * m).sum(-1, keepdim=True).exp()  # (N, 1)
        keep = torch.ones_like(ratio)
    else:
        ratio, keep = (logp_new - logp_old).exp(), m  # (N, L)
    A = advantages[:, None]
    t1, t2 = ratio * A, ratio.detach().clamp(1 - clip_eta, 1 + clip_eta) * A
    n = keep.sum(-1)
    per_action = (torch.minimum(t1, t2) * keep).sum(-1) / n
    clipped = ((t2 < t1).double() * keep).sum(-1) / n
    mean_ratio = ((ratio * keep).sum(-1) / n).detach()
    return per_action.sum() / n_terms, {
        "clipped": clipped.sum().item(),
        "ratio_sum": mean_ratio.sum().item(),
        "ratio_max": mean_ratio.max().item(),
        "terms": len(advantages),
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
    clipped_objective__detached_clip,
]
RIGHT = [clipped_objective__by_cases, clipped_objective__loop]
