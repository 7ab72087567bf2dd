"""Hints that spell out the code, for a course that wants them: `python exercises/build.py --out DIR
--hints code` puts these in the stubs instead of the catalog's hints, which only point at the
paper and the docstrings. Kept out of the student copy. One per stub of exercises/catalog.py."""

CODE_HINTS = {
    (
        "env.py",
        "update_belief",
    ): "keep the candidates the fact holds for (fact.members), unless the fact is false of the "
    "secret (fact.holds): then refuse the update and flag the turn; no fact, no change",
    (
        "env.py",
        "turn_reward",
    ): "an invalid turn gets only w.invalid_penalty, a redundant one only w.redundancy_penalty; "
    "otherwise r_info = (n_before - n_after) / n_before (or float(info) when info is not None), "
    "the arm-match and diversity bonuses, and on resolution w.resolve_bonus plus "
    "w.efficiency_weight * (max_turns - turn)",
    (
        "echo.py",
        "group_normalize",
    ): "mean and sample std (divide by n - 1) over the axes `dims`, counting only the active "
    "cells; (v - mean) / (std + eps) on active cells of groups with at least two active cells, 0 "
    "elsewhere",
    (
        "baselines.py",
        "normalize_within",
    ): "per id >= 0: the mean and the sample std of its cells; (v - mean) / (std + eps) on them "
    "when the group has two cells or more, else 0; the size is the group's number of cells (0 "
    "for -1); a loop over the ids, or sums by index_add_",
    (
        "baselines.py",
        "grpo",
    ): "the return R = sum_t r_t of each rollout (episode_returns), normalised over the G rollouts "
    "of its secret with group_normalize (exercise 3) over dims=1, then the same value on every "
    "turn the rollout played (0 on turns it did not play)",
    (
        "baselines.py",
        "leave_one_out",
    ): "at each turn, each active value minus the mean of the OTHER active values of its group "
    "(axis 1); 0 where fewer than two are active",
    (
        "echo.py",
        "clipped_objective",
    ): "log rho = masked sum of logp_new - logp_old over each action's tokens; terms = "
    "min(rho A, clip(rho, 1 - clip_eta, 1 + clip_eta) A); return (sum of terms / n_terms, stats); "
    "the gradient flows through logp_new; the docstring defines level 'token' and the stats",
    (
        "echo.py",
        "approx_kl",
    ): "x = log_ratio on real tokens (torch.where, so that an inf on a padding token stays out); "
    "(exp(x) - 1) - x is >= 0 per token; sum it over each action's tokens",
    (
        "metrics.py",
        "elim_quality",
    ): "eliminated relative to an exact halving, max(candidates_before / 2, 1), capped at 1",
    ("metrics.py", "is_zero"): "an answered turn (not is_wasted) that eliminated no candidate",
    (
        "metrics.py",
        "zero",
    ): "the mean of is_zero over the turns that are not wasted (_turns, _mean)",
    ("metrics.py", "quality"): "the mean of elim_quality over all turns, wasted ones included",
    (
        "theory/return_aliasing.py",
        "expected_conditional_variance",
    ): "group the outcomes by key; within each group take the p-weighted mean of A, then add up "
    "p_i (A_i - mean)^2 over every outcome; keep the arithmetic exact for Fractions",
}
