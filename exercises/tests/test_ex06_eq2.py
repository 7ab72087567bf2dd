"""Exercise 6: Eq. 2, the clipped objective, its value and its gradient.

Wrong answers these tests tell apart: max instead of min; a mean over the given terms instead of
the division by n_terms; padding tokens counted in log rho; the token-level average over every
position L instead of the action's real tokens; a ratio without gradient; a clip count of the
terms whose ratio is outside [1 - eta, 1 + eta] instead of those where the clipped branch is the
minimum; a clipped branch cut from the graph (at rho = 1 both branches are the minimum, and the
gradient must come through whole)."""

import math

import torch
from expect import check

from echo import clipped_objective

NO_GRADIENT = (
    "Eq. 2 is what the optimizer follows, so J must be computed from logp_new with torch "
    "operations (no .item(), .detach() or numpy)"
)


def two_token_actions(rho):
    """log pi_old = -1 on each of two tokens; log pi_new adds log(rho) / 2 per token."""
    logp_old = torch.full((len(rho), 2), -1.0)
    logp_new = (logp_old + torch.log(torch.tensor(rho))[:, None] / 2).requires_grad_(True)
    return logp_new, logp_old, torch.ones(len(rho), 2)


def test_value_clip_count_and_gradient_by_hand():
    """rho = 1.5, 0.5, 1.5, 0.5 with A = 1, 1, -1, -1, eta = 0.2: the terms are 1.2 (clipped),
    0.5, -1.5, -0.8 (clipped); J = -0.6 / 4 = -0.15. The gradient of rho A / 4 w.r.t. each token's
    log-prob is rho A / 4 where the unclipped branch is the minimum, 0 where the clip is."""
    case = "rho = 1.5, 0.5, 1.5, 0.5 (two tokens each), A = 1, 1, -1, -1, eta = 0.2, n_terms = 4"
    logp_new, logp_old, mask = two_token_actions([1.5, 0.5, 1.5, 0.5])
    J, stats = clipped_objective(
        logp_new, logp_old, mask, torch.tensor([1.0, 1.0, -1.0, -1.0]), 0.2, n_terms=4
    )
    check(J, -0.15, f"J for {case}")
    check(
        float(stats["clipped"]),
        2.0,
        f'stats["clipped"] for {case}: the clipped branch is the minimum in terms 1 and 4',
    )
    check(float(stats["terms"]), 4.0, f'stats["terms"] for {case}')
    check(float(stats["ratio_max"]), 1.5, f'stats["ratio_max"] for {case}')
    check(float(stats["ratio_sum"]), 4.0, f'stats["ratio_sum"] for {case}')
    check(J.requires_grad, True, f"J.requires_grad for {case}: {NO_GRADIENT}")
    J.backward()
    check(
        logp_new.grad,
        torch.tensor([0.0, 0.5 / 4, -1.5 / 4, 0.0])[:, None].expand(4, 2),
        f"dJ / d logp_new for {case}",
    )


def test_padding_tokens_do_not_count_and_n_terms_divides():
    """One real token with log-ratio log 2 and a padding token with any value: rho = 2, clipped
    to 1.2 for A = 1; divided by n_terms = 3 (the other terms live in other minibatches)."""
    logp_new = torch.tensor([[math.log(2.0), 7.0]])
    J, stats = clipped_objective(
        logp_new, torch.zeros(1, 2), torch.tensor([[1.0, 0.0]]), torch.tensor([1.0]), 0.2, 3
    )
    case = (
        "one action: a real token with log-ratio log 2 and a padding token holding 7.0; A = 1, "
        "eta = 0.2, n_terms = 3"
    )
    check(J, 1.2 / 3, f"J for {case}")
    check(float(stats["clipped"]), 1.0, f'stats["clipped"] for {case}')


def test_token_level_ratio_averages_each_actions_tokens():
    """level="token": token ratios 2 and 1 with A = 1, eta = 0.2: min terms 1.2 and 1, mean 1.1;
    one of two tokens clipped (0.5 of the action); mean ratio 1.5."""
    logp_new = torch.tensor([[math.log(2.0), 0.0]])
    J, stats = clipped_objective(
        logp_new, torch.zeros(1, 2), torch.ones(1, 2), torch.tensor([1.0]), 0.2, 1, "token"
    )
    case = 'level="token": one action of two tokens with ratios 2 and 1, A = 1, eta = 0.2'
    check(J, 1.1, f"J for {case}")
    check(float(stats["clipped"]), 0.5, f'stats["clipped"] for {case}')
    check(float(stats["ratio_sum"]), 1.5, f'stats["ratio_sum"] for {case}')


def test_token_level_averages_over_the_real_tokens_only():
    """level="token", an action of two real tokens (ratios 2 and 1) and one padding token holding
    5.0: the mean is over the two real tokens, 1.1, as without the padding."""
    logp_new = torch.tensor([[math.log(2.0), 0.0, 5.0]])
    J, stats = clipped_objective(
        logp_new,
        torch.zeros(1, 3),
        torch.tensor([[1.0, 1.0, 0.0]]),
        torch.tensor([1.0]),
        0.2,
        1,
        "token",
    )
    case = (
        'level="token": real tokens with ratios 2 and 1, then a padding token holding 5.0; '
        "A = 1, eta = 0.2"
    )
    check(J, 1.1, f"J for {case}")
    check(float(stats["clipped"]), 0.5, f'stats["clipped"] for {case}')
    check(float(stats["ratio_sum"]), 1.5, f'stats["ratio_sum"] for {case}')


def test_at_rho_one_it_is_the_policy_gradient_objective():
    """logp_new = logp_old: rho = 1, nothing clipped, J = (0.4 - 1) / 2 at either level, and the
    gradient is the policy gradient's, whole: A / n_terms on each real token of the action (token
    level: shared among its real tokens), although both branches of the min are equal there."""
    logp = torch.tensor([[-0.3, -2.0], [-1.0, 0.0]])
    mask = torch.tensor([[1.0, 1.0], [1.0, 0.0]])
    gradients = {"sequence": [[0.2, 0.2], [-0.5, 0.0]], "token": [[0.1, 0.1], [-0.5, 0.0]]}
    for level in ("sequence", "token"):
        logp_new = logp.clone().requires_grad_(True)
        J, stats = clipped_objective(logp_new, logp, mask, torch.tensor([0.4, -1.0]), 0.2, 2, level)
        case = f"rho = 1 (logp_new = logp_old), A = 0.4, -1, n_terms = 2, level={level!r}"
        check(J, -0.3, f"J for {case}")
        check(float(stats["clipped"]), 0.0, f'stats["clipped"] for {case}')
        check(J.requires_grad, True, f"J.requires_grad for {case}: {NO_GRADIENT}")
        J.backward()
        check(logp_new.grad, torch.tensor(gradients[level]), f"dJ / d logp_new for {case}")
