"""Hidden tests of exercise 4 (kept out of the student copy): GRPO on random batches, with episodes
of random lengths and garbage in the cells of turns not played. Eq. 1's normalisation is replaced
as in the graded tests (test_ex04_grpo.py), so exercise 3 is not needed. Each check is held to the
value the reference computed (the grader holds them; see exercise 1's file)."""

import random

import torch
from expect import HELD, check
from test_ex04_grpo import credit, whole_group_normalize_in_place

import baselines
from baselines import EstimatorContext


def test_random_batches():
    """30 random batches, episodes of random lengths, garbage in unplayed cells: the normalised
    returns on the played turns."""
    rng = random.Random(5)
    for case in range(30):
        B, G, T = (rng.randint(1, 5) for _ in range(3))
        lengths = [[rng.randint(1, T) for _ in range(G)] for _ in range(B)]
        active = torch.tensor([[[t < n for t in range(T)] for n in row] for row in lengths])
        rewards = torch.tensor(
            [
                [[rng.gauss(0, 1) if t < n else 5.0 for t in range(T)] for n in row]
                for row in lengths
            ],
            dtype=torch.float64,
        )  # unplayed cells hold garbage (5.0)
        with whole_group_normalize_in_place():
            adv = baselines.grpo(credit(rewards, active), EstimatorContext())
        what = f"random batch {case}: rewards {rewards.tolist()}, active {active.int().tolist()} "
        check(adv, HELD, what + "(5.0 marks a cell not played)", tol=1e-5)
