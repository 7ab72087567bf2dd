"""The English of the Clue Selector Game shared by questions and hints, and the oracle's sentences.

Paper: section 5.1 (free-form property questions), App. B figure "Prompts used in the CSG" (B)
(the oracle answers one property per question in one sentence, and deflects vague ones),
Lemma A.5 "Exact posterior in CSG" (every hint is read as an exact set: properties.Fact).

One grammar of clauses about the number (its quantities, the tests on them, negation), so that
what is asked, what is said and what is read back cannot drift apart:

    state(fact)               -> str       the sentence the rule oracle says
    answer_sentence(query, n) -> str       "Yes, ..." / "No, ..." / "The last digit is 7."
    render_question(query)    -> str       the canonical English of a query (scripted policies)
    read_hint(text, query)    -> Reading   the Fact a sentence states, from either oracle

Questions, which people phrase in many more ways than an oracle answers, are parsed by
game/questions.py on top of this grammar.

Departure from the paper's code, and why: its oracle reader pattern-matched substrings of the
hint ("prime" anywhere means prime, so "not a prime" could match both ways, and a filter that
emptied the set was silently undone). Here hints are matched against whole-sentence patterns:
anything that does not parse carries no information. Precision over recall: a wrong reading
would corrupt the exact posterior.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass
from decimal import Decimal, localcontext
from fractions import Fraction
from functools import lru_cache

from game.properties import Fact, Predicate, Query

QUANTITY_NAMES = {  # how a sentence names each quantity
    "digit_sum": "sum of the digits",
    "last_digit": "last digit",
    "tens_digit": "tens digit",
    "first_digit": "first digit",
    "num_digits": "number of digits",
}

# ---------------------------------------------------------------------------------------------
# Normalisation and numbers
# ---------------------------------------------------------------------------------------------

MAX_TEXT = 300  # a question or hint longer than this is not "one precise property question"
MAX_DIGITS = 30  # bigger numbers are deflected (and int() of 4300+ digits raises in Python)
_WORD_NUMBERS = {
    w: i
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
        "fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
}
_WORD_NUMBERS.update(
    {
        "thirty": 30,
        "forty": 40,
        "fifty": 50,
        "sixty": 60,
        "seventy": 70,
        "eighty": 80,
        "ninety": 90,
        "hundred": 100,
        "a hundred": 100,
        "one hundred": 100,
        "single": 1,
    }
)
_SIMPLE_WORDS = "|".join(sorted(_WORD_NUMBERS, key=len, reverse=True))
# "twenty-five" / "twenty five" are whole tokens, so a hyphenated word number is never split into
# a range (dash ranges take digits only: _SPAN below).
_TENS_WORDS, _UNIT_WORDS = (
    "twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety",
    "one|two|three|four|five|six|seven|eight|nine",
)
for _tens in _TENS_WORDS.split("|"):
    for _unit in _UNIT_WORDS.split("|"):
        for _sep in "- ":
            _WORD_NUMBERS[f"{_tens}{_sep}{_unit}"] = _WORD_NUMBERS[_tens] + _WORD_NUMBERS[_unit]
_CONTRACTIONS = [
    (r"\bisn't\b", "is not"),
    (r"\bdoesn't\b", "does not"),
    (r"\bit's\b", "it is"),
    (r"\bwhat's\b", "what is"),
    (r"\bthat's\b", "that is"),
    (r"\bdon't\b", "do not"),
    (r"\baren't\b", "are not"),
    (r"\bi'd\b", "i would"),
    (r"\bi'm\b", "i am"),
]
_SYMBOLS = {
    "≥": ">=",
    "≤": "<=",
    "−": "-",
    "–": "-",
    "—": "-",
    "’": "'",
    "‘": "'",
    "“": '"',
    "”": '"',
    "⩾": ">=",
    "⩽": "<=",
}


def normalize(text: str) -> str | None:
    """Lower-case, NFKC, no control characters, single spaces, no closing punctuation;
    comparison symbols spaced ("n>50" -> "n > 50") and no spaces just inside brackets."""
    if not isinstance(text, str) or len(text) > MAX_TEXT:
        return None
    t = unicodedata.normalize("NFKC", text)
    t = "".join(_SYMBOLS.get(c, c) for c in t)
    t = "".join(" " if unicodedata.category(c)[0] == "C" else c for c in t).lower()
    for pattern, repl in _CONTRACTIONS:
        t = re.sub(pattern, repl, t)
    t = re.sub(r"\s*(>=|<=|=>|=<|==|!=|>|<|=)\s*", r" \1 ", t)
    t = re.sub(r"\s+", " ", t).strip().strip("\"'`")
    t = re.sub(r"\( ", "(", re.sub(r" \)", ")", t))
    t = re.sub(r"\s*([?.!]\s*)+$", "", t).strip()
    return t


def parse_number(token: str) -> Fraction | None:
    token = token.strip()
    if token in _WORD_NUMBERS:
        return Fraction(_WORD_NUMBERS[token])
    if len(token.replace("-", "").replace(".", "")) > MAX_DIGITS:
        return None
    try:
        return Fraction(token)
    except (ValueError, ZeroDivisionError):
        return None


def fmt_number(x) -> str:
    """Exact decimal text: every non-integer here came from a terminating decimal in a question."""
    x = Fraction(x)
    if x.denominator == 1:
        return str(x.numerator)
    with localcontext(prec=2 * MAX_DIGITS + 10):
        return format(Decimal(x.numerator) / Decimal(x.denominator), "f")


# ---------------------------------------------------------------------------------------------
# The grammar. Each regex is anchored (fullmatch): a sentence is understood whole or not at all.
# ---------------------------------------------------------------------------------------------

_NUM = rf"-?\d+(?:\.\d+)?|(?:{_TENS_WORDS})[- ](?:{_UNIT_WORDS})|{_SIMPLE_WORDS}"
_DNUM = r"-?\d+(?:\.\d+)?"  # a number in digits: the only kind a dash range may join
_DIGIT_WORDS = f"zero|{_UNIT_WORDS}"
_SUBJ = (
    r"(?:the (?:secret |hidden |mystery |chosen |unknown |target |selected )?number|"
    r"your (?:secret |hidden |mystery |chosen )?number|number|"  # "Number prime?"
    r"the secret|it|this number|that number|n|x)"
)
_DIGITS_NP = rf"(?:the |its |all (?:the |its )?|{_SUBJ}'s )?digits(?: (?:of|in) {_SUBJ})?"
_QUANT_PATTERNS = {  # quantity -> noun phrase
    "digit_sum": rf"(?:the )?(?:sum of (?:the |its |all (?:the |its )?)?digits(?: (?:of|"
    rf"in) {_SUBJ})?|"
    rf"digit sum(?: of {_SUBJ})?|{_SUBJ}'s digit sum|sum of {_SUBJ}'s digits|"
    rf"total of (?:the |its |all (?:the |its )?)?digits(?: (?:of|in) {_SUBJ})?)",
    "last_digit": rf"(?:the )?(?:last|final|units|unit|ones|one's|rightmost) digit(?: of {_SUBJ})?|"
    rf"{_SUBJ}'s (?:last|final|units|ones|rightmost) digit|"
    rf"(?:the )?digit in the (?:ones|units|one's|unit) (?:place|position|column)|"
    rf"(?:the )?(?:ones|units)[- ]place digit",
    "tens_digit": rf"(?:the )?tens digit(?: of {_SUBJ})?|{_SUBJ}'s tens digit|"
    rf"(?:the )?digit in the tens (?:place|position|column)|(?:the )?tens[- ]place digit",
    "first_digit": rf"(?:the )?(?:first|leading|leftmost) digit(?: of {_SUBJ})?|"
    rf"{_SUBJ}'s (?:first|leading|leftmost) digit",
    "num_digits": rf"(?:the )?(?:number|count) of digits(?: (?:in|of) {_SUBJ})?|"
    rf"(?:the )?digit count(?: of {_SUBJ})?",
    "n": _SUBJ,
}
_QUANT = "|".join(f"(?P<q_{q}>{p})" for q, p in _QUANT_PATTERNS.items())
_OPS = {  # comparison words -> test; longer phrases first so "greater than or equal to" wins
    "ge": r"greater than or equal to|more than or equal to|bigger than or equal to|"
    r"larger than or equal to|"
    r"higher than or equal to|(?:greater|more|bigger|larger|higher) or equal to|"
    r"equal to or (?:greater|more|bigger|larger|higher) than|above or equal to|"
    r"at least|no less than|no smaller than|no lower than|>=|=>",
    "le": r"less than or equal to|smaller than or equal to|lower than or equal to|(?:less|smaller|"
    r"lower) or equal to|"
    r"equal to or (?:less|smaller|lower|fewer) than|below or equal to|"
    r"at most|no more than|no greater than|no larger than|no bigger than|no higher than|<=|=<",
    "gt": r"(?:strictly )?(?:greater|more|larger|bigger|higher) than|above|over|>",
    "lt": r"(?:strictly )?(?:less|smaller|lower|fewer) than|below|under|<",
}
_OPS_ANY = "|".join(_OPS.values())
# "50 or more", "60 and up", "150+": the number first, the direction after (inclusive)
_POST_UP = ("more", "greater", "higher", "larger", "bigger", "above", "over", "up", "upwards")
_POST = (
    r"or (?:more|greater|higher|larger|bigger|above|over|less|fewer|lower|smaller|below|under)|"
    r"and (?:up|upwards|above|over|higher|below|under|lower|less)"
)
# Divisibility said with its exactness spelled out: "divisible by 4 without leaving a remainder"
_DIV_HOW = (
    r"(?: evenly| exactly| with no remainder| with zero remainder| without (?:a |any )?remainder|"
    r" without leaving (?:a |any )?remainder| leaving no remainder)"
)
# Ranges: "20-40" / "20 – 40" (digits only, so "twenty-five" stays a number; spaced evenly, so
# "3 -5" is not one), "20 to 40"
_SPAN = (
    rf"(?:{_DNUM})(?:-| - )(?:{_DNUM})|(?:{_NUM}) (?:to|through|thru|up to|till|until) (?:{_NUM})"
)
_SPAN_PARTS = re.compile(
    rf"(?P<a>{_NUM}) (?:and|to|through|thru|up to|till|until) (?P<b>{_NUM})|"
    rf"(?P<a2>{_DNUM})(?:-| - )(?P<b2>{_DNUM})|(?P<a3>{_NUM}), ?(?P<b3>{_NUM})"
)
_ENDPOINTS = (
    rf"both(?: ends| endpoints| numbers| bounds)?|the (?:ends|endpoints|end points|bounds|limits)|"
    rf"(?:both )?(?:{_DNUM}) and (?:{_DNUM})"
)
_QUAL = (
    rf"inclusive|inclusively|exclusive|exclusively|not inclusive|non-inclusive|"
    rf"(?:including|not including|excluding|inclusive of|exclusive of) (?:{_ENDPOINTS})|"
    rf"(?:{_ENDPOINTS}) (?:included|inclusive|excluded|exclusive|not included)"
)
_DECADES = {
    "twenties": 20,
    "thirties": 30,
    "forties": 40,
    "fifties": 50,
    "sixties": 60,
    "seventies": 70,
    "eighties": 80,
    "nineties": 90,
}
_TEST_PATTERNS = {  # test -> phrase after the copula ("is ..."); numbers in named groups
    "even": r"(?:an )?even(?: number)?",
    "odd": r"(?:an )?odd(?: number)?",
    "prime": r"(?:a )?prime(?: number)?|one of the primes|one of the prime numbers",
    # "non-prime" is "not prime" (1 included), which is not "composite"
    "nonprime": r"(?:a )?non[- ]?prime(?: number)?",
    "composite": r"(?:a )?composite(?: number)?",
    "square": r"(?:a )?(?:perfect square|square)(?: number)?|one of the (?:perfect )?squares|"
    r"(?:the |a )square of (?:an integer|a whole number|some (?:integer|whole number)|a natural "
    r"number)|"
    r"(?:an integer|a whole number|some (?:integer|whole number)) squared",
    "cube": r"(?:a )?(?:perfect cube|cube|cubic)(?: number)?|one of the (?:perfect )?cubes|"
    r"(?:the |a )cube of (?:an integer|a whole number|some (?:integer|whole number)|a natural "
    r"number)|"
    r"(?:an integer|a whole number|some (?:integer|whole number)) cubed",
    "pow2": r"(?:a |an exact |an integer )?power of (?:2|two)|one of the powers of (?:2|two)",
    "palindrome": r"(?:a )?(?:palindrome|palindromic)(?: number)?",
    "fibonacci": r"(?:a )?fibonacci(?: number)?|one of the fibonacci numbers|"
    r"(?:in|part of|a member of|an element of) the fibonacci (?:sequence|series|numbers)",
    "triangular": r"(?:a )?(?:triangular|triangle) number|triangular|one of the triangular numbers",
    "positive": r"(?:a )?positive(?: number)?",
    "negative": r"(?:a )?negative(?: number)?",
    "div": rf"(?:evenly |exactly )?divisible (?:evenly |exactly )?by (?P<k_div>{_NUM}){_DIV_HOW}?|"
    rf"(?:a )?multiple of (?P<k_mul>{_NUM})|"
    rf"(?:evenly|exactly) divided by (?P<k_ed>{_NUM}){_DIV_HOW}?|divided by "
    rf"(?P<k_dr>{_NUM}){_DIV_HOW}|"
    rf"in the (?P<k_tt>{_NUM})(?:'s|s)? times[- ]tables?|in the times[- ]tables? (?:of|for) "
    rf"(?P<k_tf>{_NUM})",
    "cmp": rf"(?:a (?:number|value) )?(?P<op>{_OPS_ANY}) (?P<k_cmp>{_NUM})",
    "cmp_post": rf"(?P<k_post>{_NUM}) (?P<post>{_POST})|(?P<k_plus>{_DNUM})\+",
    # "more than 50 but less than 100": one interval, bounded on both sides
    "interval": rf"(?P<op1>{_OPS_ANY}) (?P<k1>{_NUM}),? (?:and|"
    rf"but) (?:also )?(?P<op2>{_OPS_ANY}) (?P<k2>{_NUM})",
    "between": rf"(?:(?P<strict>strictly )?(?:somewhere |"
    rf"anywhere )?between (?P<span_btw>(?:{_NUM}) and (?:{_NUM})|{_SPAN})|"
    rf"(?:(?:in|within) the range (?:of |from )?|from |within )(?P<span_and>(?:{_NUM}) and "
    rf"(?:{_NUM}))|"
    rf"(?:(?:in|within) the (?:range|interval) (?:of |from )?|within |from )(?P<span_rng>{_SPAN})|"
    rf"(?:in )?(?P<span_asc>{_SPAN})|"  # a bare "20-40" is a range only low to high ("5 - 3"?)
    rf"(?:in|within) (?:the (?:range|interval) (?:of )?)?\[(?P<span_brk>(?:{_NUM}), ?(?:{_NUM}))\]|"
    r"(?P<inv_out>outside) (?:of )?(?:the (?:range|interval) (?:of |from "
    rf")?)?(?P<span_out>{_SPAN}))"
    rf"(?P<incl>,? (?:{_QUAL})| \((?:{_QUAL})\))?",
    # "in the 40s" = 40..49, "in the 100s" = 100..199, "in the twenties" = 20..29 ("teens" is
    # ambiguous)
    "decade": rf"in the (?P<dec>[1-9]\d{{0,{MAX_DIGITS - 2}}}0)'?s|"
    rf"in the (?P<dec_w>{'|'.join(_DECADES)})",
    "eq": rf"(?:equal to |exactly |equals |the same as |an? |== |= )?(?P<k_eq>{_NUM})",
}
_TEST = "|".join(f"(?P<t_{t}>{p})" for t, p in _TEST_PATTERNS.items())
_NEG = r"(?P<neg>not |no longer )?"


def _c(pattern: str) -> re.Pattern:
    return re.compile(pattern)


_DECLARATIVE = [  # the same, stated: used for hints and for "tell me whether <clause>"
    _c(rf"(?:{_QUANT}) (?:is|lies|falls|sits|is also) {_NEG}(?:{_TEST})"),
    _c(rf"(?:{_QUANT}) (?P<neg>does not )?(?P<verb>exceeds?|equals?) (?P<k_verb>{_NUM})"),
    _c(rf"(?:{_QUANT}) (?P<neg>does not )?(?:lie|fall|sit)s? (?:{_TEST})"),
    _c(
        rf"(?P<q_digit_sum>{_DIGITS_NP}) (?P<neg>do not |does not )?"
        rf"(?:(?:add|adds|sum|sums|come|comes|amount|amounts) (?:up )?to|totals?) (?:{_TEST})"
    ),
]
_END_DIGIT = rf"(?:the digits? |an? |the number )?(?P<k>\d{{1,{MAX_DIGITS}}}|{_DIGIT_WORDS})"
_ENDS_Q = _c(rf"does {_SUBJ} {_NEG}end (?:in|with) {_END_DIGIT}")
_ENDS_S = _c(rf"{_SUBJ} (?P<neg>does not )?ends? (?:in|with) {_END_DIGIT}")
_COUNT_OP = rf"(?:(?P<op>{_OPS_ANY}|exactly|only) )?"
_COUNT_POST = r"(?: (?P<post>or (?:more|greater|fewer|less)))?"
_DIGITS_Q = _c(
    rf"(?:does|do) {_SUBJ} {_NEG}(?:have|contain|consist of) {_COUNT_OP}(?P<k>{_NUM}){_COUNT_POST} "
    rf"digits?"
)
_DIGITS_S = _c(
    rf"{_SUBJ} (?P<neg>does not )?(?:has|have|contains?|consists? of) "
    rf"{_COUNT_OP}(?P<k>{_NUM}){_COUNT_POST} digits?"
)
# "a two-digit number", "double digits", "in the triple digits", "three digits long"
_NDIGIT = _c(
    rf"(?:is {_SUBJ}|{_SUBJ} is) {_NEG}(?:an? |in (?:the )?)?(?P<k>{_NUM}|double|triple)[- "
    rf"]digits?(?: number| long)?"
)
_DIGITS_LONG = _c(rf"(?:is {_SUBJ}|{_SUBJ} is) {_NEG}(?P<op>{_OPS_ANY}) (?P<k>{_NUM}) digits? long")
_DIVIDES = [
    _c(rf"(?:does|can) (?P<k>{_NUM}) {_NEG}(?:evenly )?divide(?: into)? {_SUBJ}(?: evenly)?"),
    _c(rf"is (?P<k>{_NUM}) {_NEG}an? (?:factor|divisor)(?: of {_SUBJ})?"),  # "Is 7 a factor?"
    _c(
        rf"(?P<k>{_NUM}) (?:is {_NEG}an? (?:factor|divisor) of|(?P<neg2>does not )?divides?) "
        rf"{_SUBJ}(?: evenly)?"
    ),
]


def _divisor(m: re.Match, negated: bool) -> tuple[Predicate, bool] | None:
    text = next(g for g in (m.groupdict().get(k) for k in ("k", "k2", "k3")) if g is not None)
    k = parse_number(text)
    if k is None or k.denominator != 1 or k == 0:
        return None
    return Predicate("n", "div", (abs(int(k)),)), negated


_DEFLECT_NOTES = (
    "please ask",
    "cannot answer",
    "can't answer",
    "cannot help",
    "can't help",
    "not allowed",
    "cannot reveal",
    "can't reveal",
    "already asked",
    "no new information",
)


def _quantity(m: re.Match) -> str:
    groups = m.groupdict()
    return next(q for q in _QUANT_PATTERNS if groups.get(f"q_{q}") is not None)


def _number(text: str):
    k = parse_number(text)
    return None if k is None else _int_or_frac(k)


def _span(text: str) -> tuple | None:
    """The two ends of a range written "a and b", "a to b", "a-b" or "a, b", as written."""
    m = _SPAN_PARTS.fullmatch(text)
    a = next(g for g in (m.group("a"), m.group("a2"), m.group("a3")) if g is not None)
    b = next(g for g in (m.group("b"), m.group("b2"), m.group("b3")) if g is not None)
    a, b = _number(a), _number(b)
    return None if a is None or b is None else (a, b)


def _inclusive(qualifier: str, a, b) -> bool | None:
    """True for an inclusive qualifier, False for an exclusive one; None if it names numbers
    other than the two ends ("between 20 and 40, including 30" is not a range qualifier)."""
    named = [Fraction(x) for x in re.findall(_DNUM, qualifier)]
    if named and sorted(named) != [Fraction(a), Fraction(b)]:
        return None
    return not re.search(r"exclu|not |non-", qualifier)


def _test(m: re.Match, quantity: str) -> tuple[Predicate, bool] | None:
    """The Predicate named by the _TEST alternative that matched, and whether the phrase itself
    negates it ("non-prime", "outside 20-40"); None if it is unusable."""
    t = next(t for t in _TEST_PATTERNS if m.group(f"t_{t}") is not None)
    g = m.group
    if t == "div":
        k = parse_number(
            next(
                x
                for x in (g("k_div"), g("k_mul"), g("k_ed"), g("k_dr"), g("k_tt"), g("k_tf"))
                if x is not None
            )
        )
        if k is None or k.denominator != 1 or k == 0:
            return None
        return Predicate(quantity, "div", (abs(int(k)),)), False
    if t == "cmp":
        k = _number(g("k_cmp"))
        op = next(o for o, p in _OPS.items() if re.fullmatch(p, g("op")))
        return None if k is None else (Predicate(quantity, op, (k,)), False)
    if t == "cmp_post":
        k = _number(g("k_post") or g("k_plus"))
        op = "ge" if g("k_plus") or g("post").split()[1] in _POST_UP else "le"
        return None if k is None else (Predicate(quantity, op, (k,)), False)
    if t == "interval":
        return _interval(quantity, (g("op1"), g("k1")), (g("op2"), g("k2")))
    if t == "between":
        ends = _span(
            g("span_btw")
            or g("span_and")
            or g("span_rng")
            or g("span_asc")
            or g("span_brk")
            or g("span_out")
        )
        if ends is None or (g("span_asc") and ends[0] > ends[1]):
            return None
        a, b = sorted(ends)
        inclusive = True if g("incl") is None else _inclusive(g("incl"), a, b)
        if inclusive is None or (g("strict") and inclusive and g("incl")):
            return None  # "strictly between 20 and 40 inclusive" contradicts itself
        strict = bool(g("strict")) or not inclusive
        return Predicate(quantity, "strictly_between" if strict else "between", (a, b)), bool(
            g("inv_out")
        )
    if t == "decade":
        if g("dec_w"):
            a, width = _DECADES[g("dec_w")], 10
        else:
            a, width = int(g("dec")), 10 ** (len(g("dec")) - len(g("dec").rstrip("0")))
        return Predicate(quantity, "between", (a, a + width - 1)), False
    if t == "eq":
        k = _number(g("k_eq"))
        return None if k is None else (Predicate(quantity, "eq", (k,)), False)
    if t == "nonprime":
        return Predicate(quantity, "prime"), True
    if t in ("positive", "negative"):
        return Predicate(quantity, "gt" if t == "positive" else "lt", (0,)), False
    return Predicate(quantity, t), False


def _interval(quantity: str, *bounds) -> tuple[Predicate, bool] | None:
    """Two comparisons in opposite directions, one interval. The quantities are integers, so a
    mixed pair ("at least 10 but less than 20") is the inclusive range 10..19."""
    tests = []
    for op_text, k_text in bounds:
        k = parse_number(k_text)
        if k is None:
            return None
        tests.append((next(o for o, p in _OPS.items() if re.fullmatch(p, op_text)), k))
    lower = [(o, k) for o, k in tests if o in ("gt", "ge")]
    upper = [(o, k) for o, k in tests if o in ("lt", "le")]
    if len(lower) != 1 or len(upper) != 1:
        return None
    (lo_op, lo), (hi_op, hi) = lower[0], upper[0]
    if lo_op == "gt" and hi_op == "lt":
        return (
            (Predicate(quantity, "strictly_between", (_int_or_frac(lo), _int_or_frac(hi))), False)
            if lo < hi
            else None
        )
    if lo_op == "ge" and hi_op == "le":
        return (
            (Predicate(quantity, "between", (_int_or_frac(lo), _int_or_frac(hi))), False)
            if lo <= hi
            else None
        )
    lo = math.floor(lo) + 1 if lo_op == "gt" else math.ceil(lo)
    hi = math.ceil(hi) - 1 if hi_op == "lt" else math.floor(hi)
    return (Predicate(quantity, "between", (lo, hi)), False) if lo <= hi else None


def _int_or_frac(x: Fraction):
    return int(x) if x.denominator == 1 else x


def _neg(m: re.Match) -> bool:
    return bool(m.groupdict().get("neg") or m.groupdict().get("neg2"))


def _verb_predicate(m: re.Match, quantity: str) -> Predicate | None:
    k = parse_number(m.group("k_verb"))
    if k is None:
        return None
    return Predicate(
        quantity, "eq" if m.group("verb").startswith("equal") else "gt", (_int_or_frac(k),)
    )


def _count_predicate(op_text: str | None, k_text: str, post: str | None = None) -> Predicate | None:
    k = parse_number({"double": "2", "triple": "3"}.get(k_text, k_text))
    if k is None or (post and op_text):
        return None
    if post:
        op = "ge" if post.split()[1] in ("more", "greater") else "le"
    else:
        op = (
            "eq"
            if not op_text or op_text.strip() in ("exactly", "only")
            else next(o for o, p in _OPS.items() if re.fullmatch(p, op_text.strip()))
        )
    return Predicate("num_digits", op, (_int_or_frac(k),))


def _clause(t: str, patterns: list[re.Pattern]) -> tuple[Predicate, bool] | None:
    """A yes/no clause (question or statement) -> (predicate, negated), or None."""
    for pattern in patterns:
        m = pattern.fullmatch(t)
        if m:
            q = _quantity(m)
            if "k_verb" in m.groupdict():
                p = _verb_predicate(m, q)
                return (p, _neg(m)) if p is not None else None
            tested = _test(m, q)
            return (tested[0], _neg(m) != tested[1]) if tested is not None else None
    for pattern in (_ENDS_Q, _ENDS_S):
        m = pattern.fullmatch(t)
        if m:
            k = m.group("k") if m.group("k").isdigit() else str(_WORD_NUMBERS[m.group("k")])
            return Predicate("n", "endswith", (k,)), _neg(m)
    for pattern in (_DIGITS_Q, _DIGITS_S):
        m = pattern.fullmatch(t)
        if m:
            p = _count_predicate(m.group("op"), m.group("k"), m.group("post"))
            return (p, _neg(m)) if p is not None else None
    for pattern, op in ((_NDIGIT, None), (_DIGITS_LONG, "op")):
        m = pattern.fullmatch(t)
        if m:
            p = _count_predicate(op and m.group(op), m.group("k"))
            return (p, _neg(m)) if p is not None else None
    for pattern in _DIVIDES:
        m = pattern.fullmatch(t)
        if m:
            return _divisor(m, _neg(m))
    return None


# ---------------------------------------------------------------------------------------------
# Sentences: what the rule oracle says, and how any oracle's sentence is read back.
# ---------------------------------------------------------------------------------------------

_PHRASES = {
    "even": "even",
    "odd": "odd",
    "prime": "a prime number",
    "composite": "a composite number",
    "square": "a perfect square",
    "cube": "a perfect cube",
    "pow2": "a power of two",
    "palindrome": "a palindrome",
    "fibonacci": "a Fibonacci number",
    "triangular": "a triangular number",
}
_OP_WORDS = {"gt": "greater than", "ge": "at least", "lt": "less than", "le": "at most"}


def _phrase(p: Predicate) -> str:
    if p.test in _PHRASES:
        return _PHRASES[p.test]
    a = [fmt_number(x) for x in p.args] if p.test != "endswith" else list(p.args)
    return {
        "div": lambda: f"divisible by {a[0]}",
        "eq": lambda: a[0],
        "between": lambda: f"between {a[0]} and {a[1]} inclusive",
        "strictly_between": lambda: f"strictly between {a[0]} and {a[1]}",
    }.get(p.test, lambda: f"{_OP_WORDS[p.test]} {a[0]}")()


def state(fact: Fact) -> str:
    """The clause that states a fact, e.g. 'the sum of the digits is not greater than 10'."""
    p, neg = fact.predicate, fact.negated
    if p.test == "endswith":
        return f"the number {'does not end' if neg else 'ends'} in {p.args[0]}"
    subject = "the number" if p.quantity == "n" else f"the {QUANTITY_NAMES[p.quantity]}"
    return f"{subject} is {'not ' if neg else ''}{_phrase(p)}"


def answer_sentence(query: Query, secret: int) -> str:
    """The rule oracle's one-sentence answer: 'Yes, <fact>.' / 'No, <fact>.' / '<Fact>.'"""
    fact = query.true_fact(secret)
    clause = state(fact)
    if query.kind == "value":
        return clause[0].upper() + clause[1:] + "."
    yes = fact.negated == query.negated
    return f"{'Yes' if yes else 'No'}, {clause}."


def render_question(query: Query) -> str:
    """The canonical English of a query, the inverse of parse_question (scripted policies use
    it)."""
    if query.kind == "value":
        return (
            "Is the number odd or even?"
            if query.quantity == "parity"
            else f"What is the {QUANTITY_NAMES[query.quantity]}?"
        )
    p = query.predicate
    if p.test == "endswith":
        return f"Does the number {'not ' if query.negated else ''}end in {p.args[0]}?"
    subject = "the number" if p.quantity == "n" else f"the {QUANTITY_NAMES[p.quantity]}"
    return f"Is {subject} {'not ' if query.negated else ''}{_phrase(p)}?"


@dataclass(frozen=True)
class Reading:
    """How a hint was read. fact is None when it carries no information (deflection,
    unreadable, or an identity statement, which the game refuses to use)."""

    fact: Fact | None
    status: str  # "fact" | "deflection" | "unreadable" | "identity"


_POLARITY = re.compile(
    r"(?P<pol>yes|no|correct|incorrect|true|false|nope|yep|yeah|indeed)\b[,.!:;]?\s*(?P<rest>.*)"
)
_BARE_REPLY = re.compile(
    rf"(?:that is |{_SUBJ} )?(?:(?:is|does|do|it is|it does)(?: "
    rf"not)?|not|correct|incorrect|right|wrong)?"
)


@lru_cache(maxsize=100_000)
def read_hint(hint: str, query: Query | None = None) -> Reading:
    """The Fact a hint states. A bare 'Yes.' / 'No, it is not.' is read against the question
    it answers, given as its parsed `query` (questions.parse_question)."""
    t = normalize(hint)
    if not t:
        return Reading(None, "unreadable")
    if any(note in t for note in _DEFLECT_NOTES):
        return Reading(None, "deflection")
    t = t.split(". ")[0] if ". " in t and not _POLARITY.fullmatch(t.split(". ")[0]) else t
    polarity = None
    m = _POLARITY.fullmatch(t)
    if m:
        polarity = m.group("pol") in ("yes", "correct", "true", "yep", "yeah", "indeed")
        t = m.group("rest").strip(" ,.")
    if t.startswith("the answer is "):
        t = t[len("the answer is ") :]
    clause = _clause(t, _DECLARATIVE) if t else None
    if clause is None:
        m = _DIGITS_ADD_UP.fullmatch(t) if t else None
        if m:
            clause = (Predicate("digit_sum", "eq", (int(m.group("v")),)), False)
    if clause is not None:
        predicate, negated = clause
        if predicate.is_identity:
            return Reading(None, "identity")
        return Reading(Fact(predicate, negated), "fact")
    if polarity is not None and _BARE_REPLY.fullmatch(t):
        if query is not None and query.kind == "yesno":
            return Reading(Fact(query.predicate, negated=query.negated == polarity), "fact")
    return Reading(None, "unreadable")


_DIGITS_ADD_UP = re.compile(  # "the digits of the number add up to 12": an LLM's digit-sum answer
    rf"(?:the |its )?digits(?: of {_SUBJ})? (?:add up|sum|add) to (?P<v>\d{{1,4}})"
)
