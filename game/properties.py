"""The number properties of the Clue Selector Game: what a question asks and a hint states, as sets.

Paper: section 5.1 ("Clue Selector Game": property questions about a secret n in 1..N),
Lemma A.5 "Exact posterior in CSG" (App. A).

The lemma needs the observation likelihood p(o | z, a) = 1[z in C_{t+1}]: every hint must mean
an exact set of numbers. This module is that meaning, free of English (game/grammar.py reads and
writes the sentences):

    Predicate   a test of one integer quantity of the number: ("n", "prime"),
                ("digit_sum", "gt", (10,)), ("last_digit", "eq", (7,))
    Fact        what a hint states: a predicate holds (or, negated, does not); `members(N)` is
                the set {n in 1..N : fact holds}, so the belief update is one set intersection
    Query       what a question asks: a yes/no predicate, or the value of a quantity

Departures from the paper's code, and why:
- 1 is neither prime nor composite; 0 and 1 are powers of two / Fibonacci / triangular / square
  / cube exactly as their definitions say (only the digit quantities can be 0).
- Either-or parity ("odd or even?") has two outcomes, so it counts as a yes/no question for the
  `binary` question set; multi-valued questions ("what is the last digit?") are `value` queries.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from math import isqrt

# ---------------------------------------------------------------------------------------------
# Predicates: the meaning of a property, as a test of one integer quantity of the number.
# ---------------------------------------------------------------------------------------------

QUANTITIES = {  # quantity name -> function of the number n >= 1
    "n": lambda n: n,
    "digit_sum": lambda n: sum(int(c) for c in str(n)),
    "last_digit": lambda n: n % 10,
    "tens_digit": lambda n: (n // 10) % 10,
    "first_digit": lambda n: int(str(n)[0]),
    "num_digits": lambda n: len(str(n)),
}


def _is_prime(v: int) -> bool:
    return v >= 2 and all(v % p for p in range(2, isqrt(v) + 1))


def _is_cube(v: int) -> bool:
    if v < 0:
        return False
    r = round(v ** (1 / 3))
    return any((r + d) ** 3 == v for d in (-1, 0, 1))


def _is_fibonacci(v: int) -> bool:  # v is Fibonacci iff 5v^2 +- 4 is a perfect square
    return v >= 0 and any(
        isqrt(5 * v * v + s) ** 2 == 5 * v * v + s for s in (4, -4) if 5 * v * v + s >= 0
    )


TESTS = {  # test name -> f(value, *args) -> bool
    "even": lambda v: v % 2 == 0,
    "odd": lambda v: v % 2 == 1,
    "prime": _is_prime,
    "composite": lambda v: v >= 4 and not _is_prime(v),
    "square": lambda v: v >= 0 and isqrt(v) ** 2 == v,
    "cube": _is_cube,
    "pow2": lambda v: v > 0 and v & (v - 1) == 0,
    "palindrome": lambda v: v >= 0 and str(v) == str(v)[::-1],
    "fibonacci": _is_fibonacci,
    "triangular": lambda v: v >= 0 and isqrt(8 * v + 1) ** 2 == 8 * v + 1,
    "div": lambda v, k: v % k == 0,
    "gt": lambda v, k: v > k,
    "ge": lambda v, k: v >= k,
    "lt": lambda v, k: v < k,
    "le": lambda v, k: v <= k,
    "eq": lambda v, k: v == k,
    "between": lambda v, a, b: a <= v <= b,
    "strictly_between": lambda v, a, b: a < v < b,
    "endswith": lambda v, s: str(v).endswith(s),
}

# The question family a predicate belongs to: the `question_type` of the paper's turns table.
_TEST_FAMILY = {
    "even": "parity",
    "odd": "parity",
    "prime": "prime",
    "composite": "prime",
    "square": "square",
    "cube": "cube",
    "pow2": "power_of_two",
    "palindrome": "palindrome",
    "fibonacci": "fibonacci",
    "triangular": "triangular",
    "div": "divisibility",
    "gt": "comparison",
    "ge": "comparison",
    "lt": "comparison",
    "le": "comparison",
    "eq": "comparison",
    "between": "between",
    "strictly_between": "between",
    "endswith": "last_digit",
}
FAMILIES = (
    "parity",
    "prime",
    "square",
    "cube",
    "power_of_two",
    "palindrome",
    "fibonacci",
    "triangular",
    "divisibility",
    "comparison",
    "between",
    "digit_sum",
    "last_digit",
    "tens_digit",
    "first_digit",
    "num_digits",
)


@dataclass(frozen=True)
class Predicate:
    """test(quantity(n), *args): e.g. Predicate("digit_sum", "gt", (10,)) is 'digit sum > 10'."""

    quantity: str
    test: str
    args: tuple = ()

    def holds(self, n: int) -> bool:
        return TESTS[self.test](QUANTITIES[self.quantity](n), *self.args)

    @property
    def family(self) -> str:
        return _TEST_FAMILY[self.test] if self.quantity == "n" else self.quantity

    @property
    def is_identity(self) -> bool:
        """True if the predicate can only name one number: asking it is asking for the secret."""
        if self.quantity != "n":
            return False
        return self.test == "eq" or (self.test == "between" and self.args[0] == self.args[1])


@dataclass(frozen=True)
class Fact:
    """What a hint states about the secret: `predicate` holds (or, if negated, does not)."""

    predicate: Predicate
    negated: bool = False

    def holds(self, n: int) -> bool:
        return self.predicate.holds(n) != self.negated

    def members(self, n_max: int) -> frozenset:
        """The numbers in 1..n_max consistent with this fact (cached: facts repeat a lot)."""
        return _members(self, n_max)


@lru_cache(maxsize=200_000)
def _members(fact: Fact, n_max: int) -> frozenset:
    return frozenset(n for n in range(1, n_max + 1) if fact.holds(n))


@dataclass(frozen=True)
class Query:
    """A parsed question. kind 'yesno': is `predicate` (negated?) true. kind 'value': what is
    `quantity` (a QUANTITIES name other than 'n', or 'parity' for 'odd or even?')."""

    kind: str
    predicate: Predicate | None = None
    negated: bool = False
    quantity: str | None = None

    @property
    def family(self) -> str:
        return (
            self.predicate.family
            if self.kind == "yesno"
            else ("parity" if self.quantity == "parity" else self.quantity)
        )

    @property
    def binary(self) -> bool:
        """Two possible answers: answered in the `binary` question set."""
        return self.kind == "yesno" or self.quantity == "parity"

    def true_fact(self, secret: int) -> Fact:
        """The one fact a truthful oracle states in answer to this query."""
        if self.kind == "yesno":
            return Fact(self.predicate, negated=not self.predicate.holds(secret))
        if self.quantity == "parity":
            return Fact(Predicate("n", "even" if secret % 2 == 0 else "odd"))
        return Fact(Predicate(self.quantity, "eq", (QUANTITIES[self.quantity](secret),)))
