"""Exercise 3: Eq. 1, the group normalisation over the rollouts active at each turn
(echo.group_normalize), and over groups given by ids (baselines.normalize_within).

Wrong answers these tests tell apart: the population std (divide by n); eps inside the square
root; a mean or std that counts inactive cells; NaN (0 / 0) for a lone rollout or a group without
spread; a group always over axis 1, whatever `dims` says; groups by id with the population std, or
a size that counts the cells of no group (-1)."""

import math

import torch
from expect import check

from baselines import normalize_within
from echo import echo_advantages, group_normalize

# Secret 0: three rollouts; rollout 2 resolved at turn 0, so only 0 and 1 play turn 1.
# Secret 1: three rollouts with equal rewards, one turn each.
REWARDS = torch.tensor(
    [[[1.0, 0.3], [0.5, 0.7], [0.0, 0.0]], [[1.0, 0.0], [1.0, 0.0], [1.0, 0.0]]],
    dtype=torch.float64,
)
ACTIVE = torch.tensor([[[1, 1], [1, 1], [1, 0]], [[1, 0], [1, 0], [1, 0]]], dtype=torch.bool)
R2 = 1 / math.sqrt(2)


def test_each_turn_is_normalised_over_its_active_rollouts():
    """Turn 0 of secret 0: mean 0.5, sample std 0.5 -> 1, 0, -1. Turn 1: only rollouts 0 and 1
    (mean 0.5, std 0.2 sqrt 2) -> -1/sqrt 2, +1/sqrt 2; rollout 2's empty cell stays 0."""
    adv = group_normalize(REWARDS, ACTIVE)
    check(adv.shape, (2, 3, 2), "the shape of the advantages of the (2, 3, 2) batch")
    check(
        adv[0, :, 0],
        torch.tensor([1.0, 0.0, -1.0]),
        "turn 0 of secret 0: rewards 1, 0.5, 0 (all three active)",
        tol=1e-5,
    )
    check(
        adv[0, :, 1],
        torch.tensor([-R2, R2, 0.0]),
        "turn 1 of secret 0: rewards 0.3, 0.7 (rollouts 0, 1); rollout 2 resolved at turn 0",
        tol=1e-5,
    )


def test_no_spread_or_a_single_rollout_gives_zero_never_nan():
    """Secret 1's equal rewards give 0; so does a rollout alone at its turn (no one to compare
    with)."""
    check(
        group_normalize(REWARDS, ACTIVE)[1],
        torch.zeros(3, 2),
        "secret 1: three equal rewards at turn 0, none at turn 1",
    )
    alone = group_normalize(torch.tensor([[[3.0], [5.0]]]), torch.tensor([[[True], [False]]]))
    check(
        alone,
        torch.zeros(1, 2, 1),
        "one secret, rollout 0 alone at its turn (reward 3; rollout 1 inactive)",
    )


def test_eps_is_added_to_the_std():
    """Two rewards 0 and 2: std sqrt 2, so the advantages are -+1 / (sqrt 2 + eps)."""
    adv = group_normalize(
        torch.tensor([[[0.0], [2.0]]]), torch.ones(1, 2, 1, dtype=torch.bool), eps=0.5
    )
    check(
        adv.flatten(),
        torch.tensor([-1.0, 1.0]) / (math.sqrt(2) + 0.5),
        "rewards 0 and 2 with eps = 0.5",
    )


def test_the_group_can_span_several_axes():
    """dims=(1, 2): all five active rewards of secret 0 at once (mean 0.5, sample std 0.3808)."""
    adv = group_normalize(REWARDS, ACTIVE, dims=(1, 2))
    five = torch.tensor([1.0, 0.3, 0.5, 0.7, 0.0], dtype=torch.float64)
    check(
        adv[0][ACTIVE[0]],
        (five - 0.5) / (five.std() + 1e-6),
        "dims=(1, 2): secret 0's active cells 1, 0.3, 0.5, 0.7, 0 in one group",
        tol=1e-9,
    )
    check(adv[0, 2, 1].item(), 0.0, "dims=(1, 2): secret 0's inactive cell")


def test_echo_advantages_is_eq1_over_the_group_axis():
    """echo_advantages (given) is group_normalize over axis 1, as float32."""
    check(
        echo_advantages(REWARDS, ACTIVE),
        torch.tensor([[[1.0, -R2], [0.0, R2], [-1.0, 0.0]], [[0.0, 0.0]] * 3]),
        "echo_advantages of the hand-worked batch",
        tol=1e-5,
    )


def test_each_group_id_is_normalised_on_its_own():
    """Ids 0, 0, 1, 1, 2, -1 over six cells: groups {1, 3} and {10, 20} each give -1/sqrt 2 and
    +1/sqrt 2 (sample std); the lone cell of group 2 gets 0 and size 1; the cell of no group (-1)
    gets 0 and size 0."""
    values = torch.tensor([[[1.0], [3.0], [10.0], [20.0], [7.0], [4.0]]], dtype=torch.float64)
    groups = torch.tensor([[[0], [0], [1], [1], [2], [-1]]])
    case = "values 1, 3, 10, 20, 7, 4 with group ids 0, 0, 1, 1, 2, -1"
    check(
        normalize_within(values, groups),
        (
            torch.tensor([[[-R2], [R2], [-R2], [R2], [0.0], [0.0]]], dtype=torch.float64),
            torch.tensor([[[2.0], [2.0], [2.0], [2.0], [1.0], [0.0]]], dtype=torch.float64),
        ),
        f"(advantages, sizes) for {case}",
        tol=1e-5,
    )


def test_a_group_by_id_spans_secrets_and_turns():
    """A (2, 2, 2) grid whose ids cross secrets and turns: group 0 holds 1, 2, 3 (mean 2, std 1,
    so with eps = 0.5: -2/3, 0, 2/3), group 1 holds 5, 9, 9, group 2 only 4, and one cell none."""
    values = torch.tensor([[[1.0, 5.0], [2.0, 0.0]], [[3.0, 9.0], [4.0, 9.0]]])
    groups = torch.tensor([[[0, 1], [0, -1]], [[0, 1], [2, 1]]])
    nine = torch.tensor([5.0, 9.0, 9.0], dtype=torch.float64)
    a, b, c = ((nine - nine.mean()) / (nine.std() + 0.5)).tolist()
    adv, size = normalize_within(values, groups, eps=0.5)
    case = "values [[[1, 5], [2, 0]], [[3, 9], [4, 9]]], ids [[[0, 1], [0, -1]], [[0, 1], [2, 1]]]"
    check(
        adv,
        torch.tensor([[[-2 / 3, a], [0.0, 0.0]], [[2 / 3, b], [0.0, c]]], dtype=torch.float64),
        f"the advantages for {case}, eps = 0.5",
        tol=1e-9,
    )
    check(
        size,
        torch.tensor([[[3.0, 3.0], [3.0, 0.0]], [[3.0, 3.0], [1.0, 3.0]]], dtype=torch.float64),
        f"the sizes of the groups for {case}",
    )
