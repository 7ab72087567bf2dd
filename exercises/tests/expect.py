"""What a graded test says when it fails: the hand-worked case, what was computed, what was expected.

    check(computed, expected, case)     equal (numbers and tensors to `tol`; NaN equals NaN)
    check_type(value, kind, case)       an instance of `kind`

Both raise AssertionError with a message grade.py prints as it is:

    turn 1 of secret 0 (rollouts 0 and 1 play it)
      computed: [-0.5, 0.5]
      expected: [-0.7071, 0.7071]
"""

from __future__ import annotations

import math
from fractions import Fraction

import torch


def show(x) -> str:
    """A value as a student reads it: tensors as nested lists at 4 decimals, with shape and dtype."""
    if isinstance(x, torch.Tensor):
        values = x.detach().double().tolist() if x.is_floating_point() else x.detach().tolist()
        return f"{rounded(values)} (shape {tuple(x.shape)}, {str(x.dtype).replace('torch.', '')})"
    if isinstance(x, (frozenset, set)):
        return f"{type(x).__name__}({sorted(x)})"
    return repr(rounded(x))


def rounded(x):
    if isinstance(x, float):
        return round(x, 4)
    if isinstance(x, (list, tuple)):
        return type(x)(rounded(v) for v in x)
    if isinstance(x, dict):
        return {k: rounded(v) for k, v in x.items()}
    return x


def fail(case: str, computed, expected, note: str = ""):
    message = f"{case}\n  computed: {show(computed)}\n  expected: {show(expected)}"
    raise AssertionError(message + (f"\n  {note}" if note else ""))


def check(computed, expected, case: str, tol: float = 1e-6):
    """Fail unless `computed` equals `expected`: tensors of the same shape and numbers within `tol`
    (NaN where NaN is expected), anything else by ==."""
    if isinstance(expected, torch.Tensor):
        if not isinstance(computed, torch.Tensor):
            fail(case, computed, expected, f"a tensor was expected, not {type(computed).__name__}")
        if tuple(computed.shape) != tuple(expected.shape):
            fail(case, computed, expected, "the shapes differ")
        if not torch.allclose(
            computed.detach().double(), expected.double(), rtol=0, atol=tol, equal_nan=True
        ):
            fail(case, computed, expected)
    elif isinstance(expected, float) and not isinstance(computed, Fraction):
        if not isinstance(computed, (int, float)) and not (
            isinstance(computed, torch.Tensor) and computed.numel() == 1
        ):
            fail(case, computed, expected, f"a number was expected, not {type(computed).__name__}")
        value = float(computed.detach()) if isinstance(computed, torch.Tensor) else float(computed)
        if not (math.isnan(expected) and math.isnan(value)) and not abs(value - expected) <= tol:
            fail(case, computed, expected)
    elif computed != expected:
        fail(case, computed, expected)


def check_type(value, kind, case: str):
    """Fail unless `value` is an instance of `kind` (a type or a tuple of types)."""
    if not isinstance(value, kind):
        names = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
        raise AssertionError(
            f"{case}\n  computed: {show(value)}, a {type(value).__name__}\n  expected: a {names}"
        )
