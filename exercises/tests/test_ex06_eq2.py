"""Exercise 6: Eq. 2, the clipped objective, its value and its gradient."""
import math

import pytest
import torch

from echo import clipped_objective


def two_token_actions(rho):
    """log pi_old = -1 on each of two tokens; log pi_new adds log(rho) / 2 per token."""
    logp_old = torch.full((len(rho), 2), -1.0)
    logp_new = (logp_old + torch.log(torch.tensor(rho))[:, None] / 2).requires_grad_(True)
    return logp_new, logp_old, torch.ones(len(rho), 2)


def test_value_clip_count_and_gradient_by_hand():
    """rho = 1.5, 0.5, 1.5, 0.5 with A = 1, 1, -1, -1, eta = 0.2: the terms are 1.2 (clipped),
    0.5, -1.5, -0.8 (clipped); J = -0.6 / 4 = -0.15. The gradient of rho A / 4 w.r.t. each token's
    log-prob is rho A / 4 where the unclipped branch is the minimum, 0 where the clip is."""
    logp_new, logp_old, mask = two_token_actions([1.5, 0.5, 1.5, 0.5])
    J, stats = clipped_objective(logp_new, logp_old, mask, torch.tensor([1.0, 1.0, -1.0, -1.0]), 0.2, n_terms=4)
    assert J.item() == pytest.approx(-0.15, abs=1e-6)
    assert stats["clipped"] == 2 and stats["terms"] == 4
    assert stats["ratio_max"] == pytest.approx(1.5) and stats["ratio_sum"] == pytest.approx(4.0)
    J.backward()
    expected = torch.tensor([0.0, 0.5 / 4, -1.5 / 4, 0.0])[:, None].expand(4, 2)
    assert torch.allclose(logp_new.grad, expected, atol=1e-6)


def test_padding_tokens_do_not_count_and_n_terms_divides():
    """One real token with log-ratio log 2 and a padding token with any value: rho = 2, clipped
    to 1.2 for A = 1; divided by n_terms = 3 (the other terms live in other minibatches)."""
    logp_new = torch.tensor([[math.log(2.0), 7.0]])
    J, stats = clipped_objective(logp_new, torch.zeros(1, 2), torch.tensor([[1.0, 0.0]]), torch.tensor([1.0]), 0.2, 3)
    assert J.item() == pytest.approx(1.2 / 3) and stats["clipped"] == 1


def test_token_level_ratio_averages_each_actions_tokens():
    """level="token": token ratios 2 and 1 with A = 1, eta = 0.2: min terms 1.2 and 1, mean 1.1;
    one of two tokens clipped (0.5 of the action); mean ratio 1.5."""
    logp_new = torch.tensor([[math.log(2.0), 0.0]])
    J, stats = clipped_objective(logp_new, torch.zeros(1, 2), torch.ones(1, 2), torch.tensor([1.0]), 0.2, 1, "token")
    assert J.item() == pytest.approx(1.1) and stats["clipped"] == pytest.approx(0.5)
    assert stats["ratio_sum"] == pytest.approx(1.5)


def test_at_rho_one_it_is_the_policy_gradient_objective():
    logp = torch.tensor([[-0.3, -2.0], [-1.0, 0.0]])
    mask = torch.tensor([[1.0, 1.0], [1.0, 0.0]])
    J, stats = clipped_objective(logp, logp, mask, torch.tensor([0.4, -1.0]), 0.2, n_terms=2)
    assert J.item() == pytest.approx(-0.3) and stats["clipped"] == 0
