"""How people ask: free-form questions parsed into what they mean, or deflected.

Paper: section 5.1 (the agent asks free-form property questions), App. B figure "Prompts used
in the CSG" (B) (the clue holder answers one property per question and deflects vague ones).

    parse_question(text)  -> Query | None    what a question asks (None: deflect)
    question_type(text)   -> str             its family (the turns table's question_type)

Built on game/grammar.py's clauses. A question is understood whole or deflected: questions about the
number itself ("is it 42?", "what is the number?") are identity questions and never answered;
questions the properties cannot state ("a factor of 100?") and ones that contradict themselves
("large (under 20)") are deflected.

The phrasings follow how people ask (tests/phrasings.tsv: natural questions with their meanings,
none of which may be misread): divisibility with verbs ("does 7 go into it?"), ranges with dashes
("20-40", digits only), comparisons with a bracketed restatement ("bigger than 50 (i.e. 51 or
more)", answered only if the restatement agrees), digit sums that "add up to", and casual forms
("Number prime?", "n>50?").
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from functools import lru_cache

from game.grammar import (
    _DECLARATIVE,
    _DIGIT_WORDS,
    _DIGITS_NP,
    _DIV_HOW,
    _DNUM,
    _NEG,
    _NUM,
    _QUANT,
    _QUANT_PATTERNS,
    _SUBJ,
    _TEST,
    _c,
    _clause,
    _divisor,
    _neg,
    _quantity,
    normalize,
    parse_number,
)
from game.properties import TESTS, Predicate, Query

_ANYQ = "|".join(_QUANT_PATTERNS.values())  # the same noun phrases, without groups
_ADD_UP = r"(?:add up|sum up|sum|add|come|amount) to|total"  # what digits do to make their sum


_YESNO = [  # question forms with the number's quantity as subject
    _c(rf"(?:is|are) (?:{_QUANT}) {_NEG}(?:{_TEST})(?: or not)?"),
    _c(
        rf"does (?:{_QUANT}) {_NEG}(?P<verb>exceed|equal|go above|go over|go beyond|surpass) "
        rf"(?P<k_verb>{_NUM})"
    ),
    _c(rf"(?:does|do) (?:{_QUANT}) {_NEG}(?:lie|fall|sit) (?:{_TEST})"),
    # "do the digits add up to 10 / to more than 12 / to an even number": a digit-sum test
    _c(rf"(?:do|does) (?P<q_digit_sum>{_DIGITS_NP}) {_NEG}(?:{_ADD_UP}) (?:{_TEST})"),
    _c(rf"(?:can|could) (?:{_QUANT}) {_NEG}be (?:written|expressed|represented) as (?:{_TEST})"),
]
_ELLIPTIC = [  # questions without the copula: "Number prime?", "n > 50?", "Divisible by 7?"
    _c(rf"(?:{_QUANT}) {_NEG}(?:{_TEST})"),
    _c(rf"(?P<q_n>){_NEG}(?:{_TEST})"),
]

# Question-only forms, family by family: (pattern, meaning of the match -> (predicate, negated)).
# Each spells its property out in full; anything looser stays a deflection.
_SPLIT = r"(?:split|divided|shared|broken up|separated)"
_PARTS = r"(?:parts|groups|pieces|piles|portions|shares|people|ways)"
_WHEN_DIVIDED = (
    rf"(?:when|if) (?:(?:{_SUBJ} is )?divided|(?:you|we) divide {_SUBJ}|dividing {_SUBJ}) "
    rf"by (?P<k>{_NUM})"
)
_BOTH_WAYS = (
    r"backwards? (?:and|as) forwards?|forwards? (?:and|as) backwards?|backwards?|in reverse|"
    r"reversed|both ways|in both directions|(?:from )?left to right (?:and|as) (?:from )?right to "
    r"left|"
    r"(?:from )?right to left (?:and|as) (?:from )?left to right"
)
_REVERSING = (
    r"(?:you )?reverse (?:it|the digits|its digits)|(?:it is )?reversed|"
    r"(?:the|its) digits are reversed"
)


def _remainder(m: re.Match) -> tuple[Predicate, bool] | None:
    """'leave a remainder' means not divisible; 'leave no remainder' means divisible."""
    leaves_one = m.group("amt") in ("a", "any")
    return _divisor(m, leaves_one != bool(m.groupdict().get("not") or m.groupdict().get("neg")))


_QUESTION_FORMS = [
    # divisibility with a verb: "Can it be divided by 3?", "Does it divide by 4?", "Does 7 go into
    # it?"
    (
        _c(
            rf"(?:can|could) {_SUBJ} {_NEG}be (?:evenly |exactly )?divided (?:evenly |exactly )?by "
            rf"(?P<k>{_NUM}){_DIV_HOW}?"
        ),
        lambda m: _divisor(m, _neg(m)),
    ),
    (
        _c(
            rf"(?:can|could) you {_NEG}divide {_SUBJ} (?:evenly |exactly )?by "
            rf"(?P<k>{_NUM}){_DIV_HOW}?"
        ),
        lambda m: _divisor(m, _neg(m)),
    ),
    (
        _c(rf"(?:does|do) {_SUBJ} {_NEG}divide (?:evenly |exactly )?by (?P<k>{_NUM}){_DIV_HOW}?"),
        lambda m: _divisor(m, _neg(m)),
    ),
    (
        _c(
            rf"(?:does|can|will|would) (?P<k>{_NUM}) {_NEG}(?:go|fit) (?:evenly |exactly )?into "
            rf"{_SUBJ}{_DIV_HOW}?"
        ),
        lambda m: _divisor(m, _neg(m)),
    ),
    # splitting into equal parts; "split into 2" alone (unequal parts allowed) stays deflected
    (
        _c(
            rf"(?:can|could) {_SUBJ} {_NEG}be {_SPLIT} (?:(?:evenly|equally|exactly) "
            rf"(?:into|among|between) "
            rf"(?P<k>{_NUM})(?: (?:equal )?{_PARTS})?|into (?P<k2>{_NUM}) equal {_PARTS}|"
            rf"(?:(?:evenly|equally|exactly) into (?:equal )?|into equal )groups of (?P<k3>{_NUM}))"
        ),
        lambda m: _divisor(m, _neg(m)),
    ),
    (
        _c(rf"is (?P<k>{_NUM}) {_NEG}(?:one of|among) (?:its|the|{_SUBJ}'s) (?:factors|divisors)"),
        lambda m: _divisor(m, _neg(m)),
    ),
    (
        _c(rf"(?:does|do) {_SUBJ} {_NEG}have (?P<k>{_NUM}) as an? (?:factor|divisor)"),
        lambda m: _divisor(m, _neg(m)),
    ),
    # remainders: only "a remainder or none" (a remainder of r > 0 is not a property here)
    (
        _c(
            rf"(?:does|will|would) {_SUBJ} (?P<not>not )?leave (?P<amt>no|a|any) remainder "
            rf"{_WHEN_DIVIDED}"
        ),
        _remainder,
    ),
    (_c(rf"is there (?P<amt>no|a|any) remainder {_WHEN_DIVIDED}"), _remainder),
    (
        _c(
            rf"(?:does|will|would) dividing {_SUBJ} by (?P<k>{_NUM}) (?P<not>not )?leave "
            rf"(?P<amt>no|a|any) remainder"
        ),
        _remainder,
    ),
    (_c(rf"is the remainder {_NEG}(?:0|zero) {_WHEN_DIVIDED}"), lambda m: _divisor(m, _neg(m))),
    (_c(rf"{_WHEN_DIVIDED},? is the remainder {_NEG}(?:0|zero)"), lambda m: _divisor(m, _neg(m))),
    (
        _c(
            rf"(?:is )?{_SUBJ} (?:mod|modulo|%) (?P<k>{_NUM}) "
            r"(?:(?P<neg>not |!= |not equal to |does not equal )|(?:equal to |equals |== |= |is "
            rf")?)(?:0|zero)"
        ),
        lambda m: _divisor(m, _neg(m)),
    ),
    (
        _c(
            rf"is {_SUBJ}(?: divided by |/| / )(?P<k>{_NUM}) {_NEG}(?:an integer|a whole "
            rf"number|whole|a natural number)"
        ),
        lambda m: _divisor(m, _neg(m)),
    ),
    # primality by definition; "only divisible by 1 and itself" is true of 1 too: "not composite"
    (
        _c(
            rf"is {_SUBJ} {_NEG}(?:only divisible|divisible only) by (?:1|one) and "
            rf"(?:itself|{_SUBJ})"
        ),
        lambda m: (Predicate("n", "composite"), not _neg(m)),
    ),
    (
        _c(
            rf"(?:does|do) {_SUBJ} {_NEG}have (?:any )?(?:other )?(?:factors|divisors) "
            r"(?:other than|besides|apart from|aside from|except(?: for)?) (?:1|one) and "
            rf"(?:itself|{_SUBJ})"
        ),
        lambda m: (Predicate("n", "composite"), _neg(m)),
    ),
    (
        _c(rf"(?:does|do) {_SUBJ} {_NEG}have (?:exactly|only) (?:2|two) (?:factors|divisors)"),
        lambda m: (Predicate("n", "prime"), _neg(m)),
    ),
    # squares and cubes by their roots
    (
        _c(
            rf"is (?:the |its |{_SUBJ}'s )(?P<root>square|cube) root(?: of {_SUBJ})? {_NEG}"
            rf"(?:an integer|a whole number|whole|a natural number)"
        ),
        lambda m: (Predicate("n", m.group("root")), _neg(m)),
    ),
    (
        _c(
            rf"(?:does|do) {_SUBJ} {_NEG}have an? (?:integer|whole(?: number)?|exact|natural(?: "
            rf"number)?) "
            rf"(?P<root>square|cube) root"
        ),
        lambda m: (Predicate("n", m.group("root")), _neg(m)),
    ),
    # palindromes by reading them backwards
    (
        _c(rf"(?:does|do) {_SUBJ} {_NEG}read the same (?:{_BOTH_WAYS})"),
        lambda m: (Predicate("n", "palindrome"), _neg(m)),
    ),
    (
        _c(
            rf"is {_SUBJ} {_NEG}the same (?:{_BOTH_WAYS}|when (?:read backwards?|written "
            rf"backwards?|{_REVERSING}))"
        ),
        lambda m: (Predicate("n", "palindrome"), _neg(m)),
    ),
    (
        _c(rf"(?:does|do) {_SUBJ} {_NEG}(?:stay|remain) the same (?:if|when) (?:{_REVERSING})"),
        lambda m: (Predicate("n", "palindrome"), _neg(m)),
    ),
    (
        _c(
            rf"(?:does|do) {_SUBJ} {_NEG}(?:appear|occur|show up|belong) in the fibonacci "
            rf"(?:sequence|series|numbers)"
        ),
        lambda m: (Predicate("n", "fibonacci"), _neg(m)),
    ),
    # "ends in an even digit" is about the last digit ("ends in a prime number" is not: 13?)
    (
        _c(
            rf"(?:does|do) {_SUBJ} {_NEG}end (?:in|with) an? (?:(?P<t>even|odd|prime) "
            rf"digit|(?P<t2>even|odd) number)"
        ),
        lambda m: (Predicate("last_digit", m.group("t") or m.group("t2")), _neg(m)),
    ),
    # first digit: one digit only ("starts with 12" is not a property here)
    (
        _c(
            rf"(?:does|do) {_SUBJ} {_NEG}(?:start|begin) (?:with|in|on) (?:the digit |the number "
            rf"|an? )?"
            rf"(?P<k>\d|{_DIGIT_WORDS})"
        ),
        lambda m: (Predicate("first_digit", "eq", (int(parse_number(m.group("k"))),)), _neg(m)),
    ),
    (
        _c(
            rf"(?:does|do) {_SUBJ} {_NEG}(?:start|begin) with an? (?:(?P<t>even|odd|prime) "
            rf"digit|(?P<t2>even|odd) number)"
        ),
        lambda m: (Predicate("first_digit", m.group("t") or m.group("t2")), _neg(m)),
    ),
]

# a question for a value, e.g. "What is the last digit?" or just "Last digit?"
_VALUE_Q = _c(rf"(?:(?:what is|what are|what|tell me|give me|which is|say) )?(?:{_QUANT})")
_ODD_EVEN = (
    r"(?:an? )?odd(?: number)?(?: or | ?/ ?)(?:an? )?even(?: number)?|"
    r"(?:an? )?even(?: number)?(?: or | ?/ ?)(?:an? )?odd(?: number)?"
)
_VALUE_OTHER = [
    (
        _c(
            rf"how many digits(?: (?:does|do) {_SUBJ}(?: have| contain)?| long is {_SUBJ}| is "
            rf"{_SUBJ}|"
            rf" are (?:there )?in {_SUBJ}| is in {_SUBJ}| are there)?"
        ),
        "num_digits",
    ),
    (_c(rf"what (?:(?:digit|number) )?does {_SUBJ} end (?:in|with)"), "last_digit"),
    (
        _c(
            r"what(?: digit| number)? is in the (?:ones|units|one's|unit) (?:place|position|column)"
        ),
        "last_digit",
    ),
    (_c(r"what(?: digit| number)? is in the tens (?:place|position|column)"), "tens_digit"),
    (_c(rf"what (?:(?:digit|number) )?does {_SUBJ} (?:start|begin) with"), "first_digit"),
    (_c(rf"what (?:do|does) {_DIGITS_NP} (?:{_ADD_UP})"), "digit_sum"),
    (
        _c(
            r"what (?:do you get|is the (?:result|total|sum)|does it come to) (?:if|when) (?:you "
            rf")?add (?:up )?"
            rf"{_DIGITS_NP}(?: together| up)?"
        ),
        "digit_sum",
    ),
    (
        _c(
            rf"if (?:you )?add (?:up )?{_DIGITS_NP}(?: together| up)?,? what (?:do you get|is the "
            rf"(?:result|total|sum))"
        ),
        "digit_sum",
    ),
    (_c(rf"(?:(?:is|are) {_SUBJ} )?(?:{_ODD_EVEN})"), "parity"),
    (_c(rf"(?:what is )?(?:the )?parity(?: of {_SUBJ})?"), "parity"),
]
_WRAPPER = _c(
    r"(?:(?:can|could|would|will) you (?:please )?(?:tell me|let me know|say|confirm)|"
    r"(?:please )?(?:tell me|confirm)|would you say|"
    r"i (?:want|would like|need) to know|i (?:wonder|am wondering)|is it (?:true|the case|correct) "
    r"that|"
    r"do you know|please|question:|q:|arm \d+:|(?:yes or no|yes/no|true or false)[:,]?|"
    r"(?:ok|okay|so|alright|all right|well|now|next|and|then|hmm+))"  # a leading "OK," says nothing
    r"[,:]? (?:if |whether )?(?P<rest>.+)"
)
_POLITE_TAIL = re.compile(
    r"(?:,? (?:please|thanks|thank you)|[,?.]? \(?(?:yes or no|yes/no|true or false|y/n)\)?|"
    r",? or not|[?.] please answer(?: yes or no)?)$"
)


def _question_clause(t: str) -> tuple[Predicate, bool] | None:
    """A yes/no question in any of its forms -> (predicate, negated), or None."""
    clause = _clause(t, _YESNO) or _clause(t, _DECLARATIVE)
    if clause is None:
        for pattern, meaning in _QUESTION_FORMS:
            m = pattern.fullmatch(t)
            if m:
                clause = meaning(m)
                break
    return clause or _clause(t, _ELLIPTIC) or _parenthetical(t)


# ---------------------------------------------------------------------------------------------
# A parenthesis in a question either restates the question, which is then answered only if the
# restatement means the same ("bigger than 50 (i.e. 51 or more)", "a perfect square (like 4, 9)",
# "greater than 50 (strictly)"), or makes a vague word exact ("large (over 50)"), which is then
# answered only if the word agrees with it ("large (under 20)" is deflected).
# ---------------------------------------------------------------------------------------------

_PAREN = re.compile(r"(?P<head>[^()]+?) \((?P<note>[^()]+)\)(?P<tail> [^()]+)?")
_INLINE_NOTES = ("strictly", "evenly", "exactly")  # "is it (strictly) greater than 50"
_NOTE_LEAD = re.compile(r"(?:i\.?e\.?|ie|that is|so|meaning|in other words|aka|=)[,:]? ")
_EXAMPLES = re.compile(
    rf"(?:(?:like|e\.?g\.?|eg|such as|for example|for instance|say)[,:]? )?"
    rf"(?P<list>(?:{_DNUM})(?:(?:,? or |,? and |, ?)(?:{_DNUM}))*)(?:,? (?:\.\.\.|etc\.?|and so "
    rf"on))?"
)
_STRICT_NOTE = re.compile(
    rf"strictly|strict|exclusive|not inclusive|non-inclusive|"
    rf"(?:not including|excluding|exclusive of) (?P<x>{_DNUM})|(?P<x2>{_DNUM}) (?:excluded|not "
    rf"included|exclusive)"
)
_INCL_NOTE = re.compile(
    rf"inclusive|(?:including|inclusive of) (?P<x>{_DNUM})|(?P<x2>{_DNUM}) (?:included|inclusive)"
)
_RESTATED = re.compile(
    rf"(?P<pre>(?:is|are) (?:{_ANYQ})|(?:{_ANYQ}) (?:is|are)|(?:does|do) (?:{_ANYQ}) "
    rf"(?:lie|fall|sit)|"
    rf"(?:do|does) {_DIGITS_NP} (?:{_ADD_UP})) (?P<rest>.+)"
)
_VAGUE = re.compile(
    rf"(?P<pre>(?:is|are) (?:{_ANYQ})|(?:{_ANYQ}) (?:is|are)) (?:an? "
    rf")?(?:(?P<up>large|big|high|huge)|(?P<down>small|low|tiny)|"
    rf"in the (?:(?P<up_half>upper|top|higher|second|bigger|larger)|(?P<down_half>lower|bottom|"
    rf"first|smaller)) half)"
    rf"(?: number| one| value)?"
)


def _parenthetical(t: str) -> tuple[Predicate, bool] | None:
    m = _PAREN.fullmatch(t)
    if m is None:
        return None
    head, note, tail = m.group("head"), m.group("note"), m.group("tail")
    if tail:
        return _question_clause(f"{head} {note}{tail}") if note in _INLINE_NOTES else None
    note = _NOTE_LEAD.sub("", note, count=1) if _NOTE_LEAD.match(note) else note
    first = _question_clause(head)
    if first is not None:
        return first if _restates(first, head, note) else None
    vague = _VAGUE.fullmatch(head)
    if vague is None:
        return None
    exact = _question_clause(f"{vague.group('pre')} {note}")
    if exact is None or exact[1]:
        return None
    test = exact[0].test
    if (
        (vague.group("up") or vague.group("up_half"))
        and test in ("gt", "ge")
        or (vague.group("down") or vague.group("down_half"))
        and test in ("lt", "le")
        or (vague.group("up_half") or vague.group("down_half"))
        and test == "between"
    ):
        return exact
    return None


def _restates(first: tuple[Predicate, bool], head: str, note: str) -> bool:
    """Whether a bracketed note agrees with the question before it."""
    p, negated = first
    for pattern, strict in ((_STRICT_NOTE, True), (_INCL_NOTE, False)):
        m = pattern.fullmatch(note)
        if m:
            named = m.group("x") or m.group("x2")
            if negated or p.test not in ("gt", "ge", "lt", "le", "between", "strictly_between"):
                return False
            if named is not None and (
                p.test in ("between", "strictly_between")  # [20, 40)?
                or Fraction(named) != Fraction(p.args[0])
            ):
                return False
            return (p.test in ("gt", "lt", "strictly_between")) == strict
    m = _EXAMPLES.fullmatch(note)
    if m:
        values = [Fraction(v) for v in re.findall(_DNUM, m.group("list"))]
        return all(v.denominator == 1 and TESTS[p.test](int(v), *p.args) != negated for v in values)
    m = _RESTATED.fullmatch(head)
    second = _question_clause(f"{m.group('pre')} {note}") if m else None
    return second is not None and _same_meaning(first, second)


def _same_meaning(a: tuple[Predicate, bool], b: tuple[Predicate, bool]) -> bool:
    """Two yes/no readings agree on every integer value of their (common) quantity: checked on
    0..1000 and around every bound either one names (all these tests change only there)."""
    (p, p_neg), (q, q_neg) = a, b
    if p.quantity != q.quantity:
        return False
    values = set(range(-1, 1001))
    for x in p.args + q.args:
        if isinstance(x, (int, Fraction)):
            values.update(range(math.floor(x) - 1, math.floor(x) + 3))
    return all(
        (TESTS[p.test](v, *p.args) != p_neg) == (TESTS[q.test](v, *q.args) != q_neg) for v in values
    )


def parse_question(text: str) -> Query | None:
    """What a free-form question asks, or None when the oracle should deflect it.

    Deflected: anything not understood whole (vague, unsupported, several properties at once),
    and identity questions ("what is the number?", "is it 42?", "between 42 and 42?").
    """
    parsed = _parse(text)
    return parsed if isinstance(parsed, Query) else None


def question_type(text: str) -> str:
    """The family of a question (the turns table's question_type), 'identity' or 'unsupported'."""
    parsed = _parse(text)
    return parsed.family if isinstance(parsed, Query) else parsed


_IDENTITY = re.compile(
    rf"(?:what|which) (?:is|number is) {_SUBJ}|(?:tell me|guess|reveal) {_SUBJ}|{_SUBJ}"
)


def _strip_tail(t: str) -> str:
    """Without closing courtesies and yes-no reminders: "Is it odd? Thanks" -> "is it odd"."""
    for _ in range(3):
        t = re.sub(r"\s*([?.!]\s*)+$", "", _POLITE_TAIL.sub("", t)).strip()
    return t


@lru_cache(maxsize=100_000)
def _parse(text: str) -> Query | str:
    """A Query, or why not: 'identity' (asks for the secret) or 'unsupported'."""
    t = normalize(text)
    if not t:
        return "unsupported"
    t = _strip_tail(t)
    for _ in range(3):  # "OK, can you tell me whether ..." -> "..."; at most three wrappers deep
        m = _WRAPPER.fullmatch(t)
        if m is None:
            break
        t = _strip_tail(m.group("rest"))
    clause = _question_clause(t)
    if clause is not None:
        predicate, negated = clause
        return "identity" if predicate.is_identity else Query("yesno", predicate, negated)
    m = _VALUE_Q.fullmatch(t)
    if m is not None:
        q = _quantity(m)
        return "identity" if q == "n" else Query("value", quantity=q)
    for pattern, quantity in _VALUE_OTHER:
        if pattern.fullmatch(t):
            return Query("value", quantity=quantity)
    return "identity" if _IDENTITY.fullmatch(t) else "unsupported"
