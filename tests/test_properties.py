"""The property language: every family, many phrasings, every secret in 1..200.

The reference meanings below are written independently of game/properties.py and game/grammar.py
(plain definitions), so a test fails if the grammar misreads a question, the oracle answers it
wrongly, or the reader turns the answer into the wrong set of candidates.
"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from env import update_belief
from game.grammar import answer_sentence, read_hint
from game.questions import parse_question, question_type
from oracle import DEFLECTION, RuleOracle

UNIVERSE = frozenset(range(1, 201))
ORACLE = RuleOracle()


def is_prime(v):
    return v > 1 and all(v % d for d in range(2, v))


def digits(n):
    return [int(c) for c in str(n)]


FIB = {1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144}
TRIANGULAR = {k * (k + 1) // 2 for k in range(1, 25)}
STYLES = [
    str,
    str.lower,
    str.upper,
    lambda s: s.rstrip("?"),
    lambda s: s.replace(" ", "  "),
    lambda s: "  " + s + " ",
    lambda s: s + " ?",
]


def fixed(*cases):
    return st.sampled_from(cases)


def with_k(lo, hi, templates):
    """Templates "...{k}..." with a meaning f(n, k); k drawn from lo..hi."""
    return st.tuples(st.integers(lo, hi), st.sampled_from(templates)).map(
        lambda kt: (kt[1][0].format(k=kt[0]), lambda n, k=kt[0], f=kt[1][1]: f(n, k))
    )


OPS = [
    ("greater than", lambda a, b: a > b),
    ("more than", lambda a, b: a > b),
    ("larger than", lambda a, b: a > b),
    ("above", lambda a, b: a > b),
    ("higher than", lambda a, b: a > b),
    ("over", lambda a, b: a > b),
    (">", lambda a, b: a > b),
    ("less than", lambda a, b: a < b),
    ("smaller than", lambda a, b: a < b),
    ("below", lambda a, b: a < b),
    ("lower than", lambda a, b: a < b),
    ("under", lambda a, b: a < b),
    ("<", lambda a, b: a < b),
    ("at least", lambda a, b: a >= b),
    (">=", lambda a, b: a >= b),
    ("≥", lambda a, b: a >= b),
    ("greater than or equal to", lambda a, b: a >= b),
    ("no less than", lambda a, b: a >= b),
    ("at most", lambda a, b: a <= b),
    ("<=", lambda a, b: a <= b),
    ("less than or equal to", lambda a, b: a <= b),
    ("no more than", lambda a, b: a <= b),
]


def comparisons(subject, quantity, lo, hi):
    return st.tuples(st.integers(lo, hi), st.sampled_from(OPS)).map(
        lambda ko: (
            f"Is {subject} {ko[1][0]} {ko[0]}?",
            lambda n, k=ko[0], f=ko[1][1]: f(quantity(n), k),
        )
    )


@st.composite
def between(draw):
    a, b = draw(st.integers(-5, 210)), draw(st.integers(-5, 210))
    if a == b:
        b = a + 1
    lo, hi = min(a, b), max(a, b)
    template, strict = draw(
        st.sampled_from(
            [
                ("Is the number between {a} and {b}?", False),
                ("Is it between {a} and {b} inclusive?", False),
                ("Is the number in the range {a} to {b}?", False),
                ("Is the number in the range of {a} to {b}?", False),
                ("Is the number strictly between {a} and {b}?", True),
                ("Is it from {a} to {b}?", False),
            ]
        )
    )
    meaning = (lambda n: lo < n < hi) if strict else (lambda n: lo <= n <= hi)
    return template.format(a=a, b=b), meaning


DS = lambda n: sum(digits(n))
CASES = {
    "parity": fixed(
        ("Is the number even?", lambda n: n % 2 == 0),
        ("Is it odd?", lambda n: n % 2),
        ("Is the number odd or even?", lambda n: n % 2),
        ("What is the parity of the number?", lambda n: n % 2),
        ("Can you tell me whether the number is even?", lambda n: n % 2 == 0),
        ("Is the number not even?", lambda n: n % 2 == 0),
    ),
    "prime": fixed(
        ("Is the number prime?", is_prime),
        ("Is it a prime number?", is_prime),
        ("Is the number composite?", lambda n: n > 1 and not is_prime(n)),
    ),
    "square": fixed(
        ("Is the number a perfect square?", lambda n: int(n**0.5 + 0.5) ** 2 == n),
        ("Is it a square number?", lambda n: int(n**0.5 + 0.5) ** 2 == n),
    ),
    "cube": fixed(
        ("Is the number a perfect cube?", lambda n: round(n ** (1 / 3)) ** 3 == n),
        ("Is it a cube number?", lambda n: round(n ** (1 / 3)) ** 3 == n),
    ),
    "power_of_two": fixed(
        ("Is the number a power of 2?", lambda n: n in {1, 2, 4, 8, 16, 32, 64, 128}),
        ("Is it a power of two?", lambda n: n in {1, 2, 4, 8, 16, 32, 64, 128}),
    ),
    "palindrome": fixed(
        ("Is the number a palindrome?", lambda n: str(n) == str(n)[::-1]),
        ("Is it palindromic?", lambda n: str(n) == str(n)[::-1]),
    ),
    "fibonacci": fixed(
        ("Is the number a Fibonacci number?", lambda n: n in FIB),
        ("Is it in the Fibonacci sequence?", lambda n: n in FIB),
    ),
    "triangular": fixed(
        ("Is the number a triangular number?", lambda n: n in TRIANGULAR),
        ("Is it triangular?", lambda n: n in TRIANGULAR),
    ),
    "divisibility": with_k(
        1,
        60,
        [
            ("Is the number divisible by {k}?", lambda n, k: n % k == 0),
            ("Is it a multiple of {k}?", lambda n, k: n % k == 0),
            ("Is {k} a factor of the number?", lambda n, k: n % k == 0),
            ("Does {k} divide the number?", lambda n, k: n % k == 0),
            ("Is the number evenly divisible by {k}?", lambda n, k: n % k == 0),
        ],
    ),
    "comparison": st.one_of(
        comparisons("the number", lambda n: n, -5, 210),
        comparisons("it", lambda n: n, 0, 201),
        with_k(-5, 210, [("Does the number exceed {k}?", lambda n, k: n > k)]),
    ),
    "between": between(),
    "digit_sum": st.one_of(
        fixed(
            ("What is the sum of the digits?", DS),
            ("What is the digit sum?", DS),
            ("Is the sum of the digits even?", lambda n: DS(n) % 2 == 0),
        ),
        comparisons("the digit sum", DS, 0, 20),
        comparisons("the sum of its digits", DS, 0, 20),
        with_k(0, 20, [("Is the sum of the digits {k}?", lambda n, k: DS(n) == k)]),
    ),
    "last_digit": st.one_of(
        fixed(
            ("What is the last digit?", lambda n: n % 10),
            ("What is the units digit?", lambda n: n % 10),
            ("What is the ones digit?", lambda n: n % 10),
            ("What digit does the number end in?", lambda n: n % 10),
            ("Is the last digit even?", lambda n: n % 2 == 0),
        ),
        comparisons("the last digit", lambda n: n % 10, 0, 9),
        with_k(
            0,
            9,
            [
                ("Does the number end in {k}?", lambda n, k: n % 10 == k),
                ("Does it end with {k}?", lambda n, k: n % 10 == k),
                ("Is the last digit {k}?", lambda n, k: n % 10 == k),
            ],
        ),
    ),
    "tens_digit": st.one_of(
        fixed(("What is the tens digit?", lambda n: n // 10 % 10)),
        comparisons("the tens digit", lambda n: n // 10 % 10, 0, 9),
        with_k(0, 9, [("Is the tens digit {k}?", lambda n, k: n // 10 % 10 == k)]),
    ),
    "first_digit": st.one_of(
        fixed(
            ("What is the first digit?", lambda n: digits(n)[0]),
            ("What is the leading digit?", lambda n: digits(n)[0]),
        ),
        comparisons("the first digit", lambda n: digits(n)[0], 0, 9),
    ),
    "num_digits": st.one_of(
        fixed(
            ("How many digits does the number have?", lambda n: len(str(n))),
            ("What is the number of digits?", lambda n: len(str(n))),
            ("Is the number a two-digit number?", lambda n: len(str(n)) == 2),
        ),
        with_k(
            1,
            3,
            [
                ("Does the number have {k} digits?", lambda n, k: len(str(n)) == k),
                ("Does the number have more than {k} digits?", lambda n, k: len(str(n)) > k),
            ],
        ),
    ),
}


@st.composite
def dash_ranges(draw):
    """Ranges written with a dash or "to", low to high (the project reads them inclusive)."""
    a = draw(st.integers(-5, 209))
    b = draw(st.integers(a + 1, 210))
    template = draw(
        st.sampled_from(
            [
                "Is the number between {a}-{b}?",
                "Is it {a}-{b}?",
                "Is it in {a}–{b}?",
                "Is the number in the range {a} - {b}?",
                "Is it {a} to {b}?",
                "Is it at least {a} and at most {b}?",
            ]
        )
    )
    return template.format(a=a, b=b), lambda n: a <= n <= b


@st.composite
def restated_comparisons(draw):
    """A comparison with a bracketed restatement that agrees with it."""
    k = draw(st.integers(-5, 210))
    return f"Is the number bigger than {k} (i.e. {k + 1} or more)?", lambda n: n > k


# Phrasings of the widened grammar, with random parameters (tests/phrasings.tsv has many more).
WIDER = {
    "parity": fixed(("Odd/even?", lambda n: n % 2), ("Even?", lambda n: n % 2 == 0)),
    "prime": fixed(
        ("Is it only divisible by 1 and itself?", lambda n: n == 1 or is_prime(n)),
        ("Number prime?", is_prime),
    ),
    "square": fixed(("Is its square root a whole number?", lambda n: int(n**0.5 + 0.5) ** 2 == n)),
    "cube": fixed(
        ("Is the cube root of the number an integer?", lambda n: round(n ** (1 / 3)) ** 3 == n)
    ),
    "power_of_two": fixed(
        ("Can the number be written as a power of 2?", lambda n: n in {1, 2, 4, 8, 16, 32, 64, 128})
    ),
    "palindrome": fixed(("Does it read the same backwards?", lambda n: str(n) == str(n)[::-1])),
    "fibonacci": fixed(("Does it appear in the Fibonacci sequence?", lambda n: n in FIB)),
    "triangular": fixed(("Is it one of the triangular numbers?", lambda n: n in TRIANGULAR)),
    "divisibility": with_k(
        1,
        60,
        [
            ("Can the number be divided by {k}?", lambda n, k: n % k == 0),
            ("Does {k} go into it?", lambda n, k: n % k == 0),
            ("Does the number divide evenly by {k}?", lambda n, k: n % k == 0),
            ("Is it in the {k} times table?", lambda n, k: n % k == 0),
            ("Does the number leave a remainder when divided by {k}?", lambda n, k: n % k != 0),
        ],
    ),
    "comparison": with_k(
        -5,
        210,
        [
            ("Is the number {k} or more?", lambda n, k: n >= k),
            ("Is it {k} or less?", lambda n, k: n <= k),
            ("is n>{k}", lambda n, k: n > k),
            ("Is it large (over {k})?", lambda n, k: n > k),
        ],
    )
    | restated_comparisons(),
    "between": dash_ranges(),
    "digit_sum": st.one_of(
        fixed(("What do the digits add up to?", DS)),
        with_k(
            0,
            20,
            [
                ("Do the digits add up to {k}?", lambda n, k: DS(n) == k),
                ("Do its digits sum to more than {k}?", lambda n, k: DS(n) > k),
            ],
        ),
    ),
    "last_digit": fixed(
        ("Does it end in an even digit?", lambda n: n % 2 == 0), ("Last digit?", lambda n: n % 10)
    ),
    "tens_digit": st.one_of(
        fixed(("What is the digit in the tens place?", lambda n: n // 10 % 10)),
        with_k(0, 9, [("Is the digit in the tens place {k}?", lambda n, k: n // 10 % 10 == k)]),
    ),
    "first_digit": with_k(1, 9, [("Does it start with {k}?", lambda n, k: digits(n)[0] == k)]),
    "num_digits": with_k(
        1,
        3,
        [
            ("Is the number more than {k} digits long?", lambda n, k: len(str(n)) > k),
            ("Does it have {k} or more digits?", lambda n, k: len(str(n)) >= k),
        ],
    ),
}
assert set(WIDER) == set(CASES)
CASES = {family: st.one_of(CASES[family], WIDER[family]) for family in CASES}


@pytest.mark.parametrize("family", sorted(CASES))
@given(data=st.data())
@settings(max_examples=25, deadline=None)
def test_kept_set_is_exactly_what_the_question_means(family, data):
    """For every secret in 1..200 the belief update keeps exactly {n : meaning(n) ==
    meaning(secret)}: the secret is never eliminated and nothing consistent with the answer is
    lost."""
    question, meaning = data.draw(CASES[family])
    question = data.draw(st.sampled_from(STYLES))(question)
    assert question_type(question) == family, question
    for secret in range(1, 201):
        hint = ORACLE.answer(question, secret)
        reading = read_hint(hint, parse_question(question))
        kept, inconsistent = update_belief(UNIVERSE, reading.fact, secret, 200)
        assert reading.status == "fact" and not inconsistent, (question, secret, hint)
        assert kept == {n for n in UNIVERSE if meaning(n) == meaning(secret)}, (
            question,
            secret,
            hint,
        )


@pytest.mark.parametrize("family", sorted(CASES))
@given(data=st.data())
@settings(max_examples=15, deadline=None)
def test_rule_oracle_sentences_read_back_exactly(family, data):
    """read_hint(answer) recovers the very Fact the oracle stated, without seeing the question."""
    question, _ = data.draw(CASES[family])
    query = parse_question(question)
    for secret in range(1, 201):
        sentence = answer_sentence(query, secret)
        assert read_hint(sentence).fact == query.true_fact(secret), sentence


VAGUE = [
    "What is the number?",
    "Is it 42?",
    "Is the number 42?",
    "Is the number equal to 17?",
    "Tell me the number",
    "Is it between 42 and 42?",
    "Give me a hint",
    "Is the number nice?",
    "Is the number even and greater than 50?",
    "Is it prime or a perfect square?",
    "Is the number divisible by 3 or 5?",
    "What is n mod 7?",
    "",
    "?",
    "Is it divisible by 0?",
    "Is it divisible by 2.5?",
    "Is it greater than " + "9" * 40 + "?",
    "Is it big?",
]


@pytest.mark.parametrize("question", VAGUE)
def test_vague_identity_and_multi_property_questions_are_deflected(question):
    """The oracle answers them with the paper's deflection, which eliminates nothing for any
    secret."""
    for secret in (1, 17, 42, 100, 200):
        hint = ORACLE.answer(question, secret)
        assert hint == DEFLECTION
        reading = read_hint(hint, parse_question(question))
        assert reading.fact is None and reading.status == "deflection"
        assert update_belief(UNIVERSE, reading.fact, secret, 200) == (UNIVERSE, False)


def test_identity_questions_are_labelled():
    """Questions asking for the secret itself are typed 'identity' (and deflected, above)."""
    for q in [
        "What is the number?",
        "Is it 42?",
        "Is the number equal to 42?",
        "Is the number between 42 and 42?",
    ]:
        assert question_type(q) == "identity" and parse_question(q) is None


@given(case=st.one_of(*CASES.values()), secret=st.integers(1, 200))
@settings(max_examples=200, deadline=None)
def test_no_answer_names_the_secret(case, secret):
    """Whatever property is asked, the fact the oracle states is never 'the number is <secret>'."""
    question, _ = case
    fact = read_hint(ORACLE.answer(question, secret), parse_question(question)).fact
    assert fact is not None and not fact.predicate.is_identity


LLM_STYLE = [  # (hint, question, secret, kept set) as an LLM might phrase them
    ("Yes.", "Is the number even?", 42, {n for n in UNIVERSE if n % 2 == 0}),
    ("No, it is not.", "Is the number greater than 50?", 42, {n for n in UNIVERSE if n <= 50}),
    ("The number is less than or equal to 50.", None, 42, {n for n in UNIVERSE if n <= 50}),
    ("It's not a prime number.", None, 42, {n for n in UNIVERSE if not is_prime(n)}),
    ("The digits of the number add up to 6.", None, 42, {n for n in UNIVERSE if DS(n) == 6}),
    ("The number ends with the digit 2.", None, 42, {n for n in UNIVERSE if n % 10 == 2}),
    ("The secret number falls between 25 and 75.", None, 42, set(range(25, 76))),
    ("Yes, 7 is a factor of the number.", None, 42, {n for n in UNIVERSE if n % 7 == 0}),
    ("The number has two digits.", None, 42, set(range(10, 100))),
]


@pytest.mark.parametrize("hint,question,secret,expected", LLM_STYLE)
def test_reader_understands_common_llm_phrasings(hint, question, secret, expected):
    """Free-form answers of the kind an LLM oracle gives are read as the right candidate set."""
    reading = read_hint(hint, parse_question(question))
    kept, inconsistent = update_belief(UNIVERSE, reading.fact, secret, 200)
    assert not inconsistent and kept == expected


def test_reader_refuses_statements_of_the_secret_and_unreadable_text():
    """'The number is 42.' (a leak) and prose it cannot parse carry no information."""
    assert read_hint("The number is 42.").status == "identity"
    assert read_hint("The secret is 42.").fact is None
    assert read_hint("Hmm, I would rather not say much about that one.").status == "unreadable"
    assert read_hint("Yes.").status == "unreadable"  # a bare yes without the question says nothing
