"""Instructor test for exercise 6, kept out of the student copy: the gradient of Eq. 2 on random
actions against finite differences of its value, in float64."""
import pytest
import torch

from echo import clipped_objective


@pytest.mark.parametrize("seed", range(5))
def test_gradient_matches_finite_differences(seed):
    gen = torch.Generator().manual_seed(seed)
    logp_old = -torch.rand(6, 4, generator=gen, dtype=torch.float64) * 3
    logp_new = (logp_old + 0.3 * torch.randn(6, 4, generator=gen, dtype=torch.float64)).requires_grad_(True)
    mask = torch.ones(6, 4, dtype=torch.float64)
    mask[:, 3] = 0
    advantages = torch.randn(6, generator=gen, dtype=torch.float64)
    value = lambda x: clipped_objective(x, logp_old, mask, advantages, 0.2, 6)[0]  # noqa: E731
    value(logp_new).backward()
    h = 1e-6
    for i in range(6):
        for j in range(4):
            step = torch.zeros_like(logp_old)
            step[i, j] = h
            numeric = (value(logp_new.detach() + step) - value(logp_new.detach() - step)) / (2 * h)
            assert logp_new.grad[i, j].item() == pytest.approx(numeric.item(), abs=1e-6)
