"""The game: hand-worked rewards (App. C "CSG Reward Composition"), the action reader, the batch,
and hostile input."""

import json
import random
import re

import numpy as np
import pytest

from env import (
    BINARY_DEFLECTION,
    CSG,
    REDUNDANT_HINT,
    REWARD,
    GameConfig,
    turn_reward,
    update_belief,
)
from game.prompts import candidate_text, read_action, selector_prompt
from game.properties import Fact, Predicate
from oracle import DEFLECTION, RuleOracle


def act(arm, question):
    return json.dumps({"arm": arm, "question": question})


def test_turn_reward_hand_worked():
    """App. C by hand: r_info + arm match + diversity (+ resolve + 0.1 (T - t)); penalties alone."""
    r = turn_reward(100, 10, turn=0, max_turns=10, arm_match=True, novel=True)
    assert r["reward"] == pytest.approx(0.9 + 0.05 + 0.05)
    # resolving at the second turn (t = 1): 9/10 eliminated, +1 resolve, +0.1 * (10 - 1) efficiency
    r = turn_reward(10, 1, turn=1, max_turns=10, arm_match=True, novel=True, resolved=True)
    assert (r["r_info"], r["r_resolve"], r["r_efficiency"]) == pytest.approx((0.9, 1.0, 0.9))
    assert r["reward"] == pytest.approx(2.9)
    r = turn_reward(50, 50, turn=3, max_turns=10, novel=True)  # a new but useless question
    assert r["reward"] == pytest.approx(0.05) and r["r_info"] == 0
    # penalties return early: nothing else is paid even if the flags say so
    assert turn_reward(50, 50, 3, 10, redundant=True, arm_match=True, novel=True)[
        "reward"
    ] == pytest.approx(-0.1)
    assert turn_reward(50, 50, 3, 10, invalid=True)["reward"] == pytest.approx(
        REWARD.invalid_penalty
    )


def test_two_turn_game_rewards_and_records():
    """Last digit then digit sum resolves 42 in two turns with the rewards worked out by hand."""
    game = CSG([42], GameConfig())
    (r0,) = game.step([act(3, "What is the last digit?")])
    assert (r0.candidates_before, r0.candidates_after, r0.eliminated) == (100, 10, 90)
    assert r0.reward == pytest.approx(1.0) and r0.arm_match and r0.novel and r0.answer == "2"
    (r1,) = game.step([act(3, "What is the sum of the digits?")])
    assert (r1.candidates_after, r1.turn_resolved) == (1, True)
    assert r1.reward == pytest.approx(0.9 + 0.05 + 0.05 + 1.0 + 0.9)
    assert game.active == [] and game.episode_summary(0)["turns_taken"] == 2


def test_redundant_question_is_penalised_without_asking_the_oracle():
    """Same question to the same arm: -0.1, no oracle call, belief unchanged; to another arm it is
    a new (if useless) turn that earns no diversity bonus."""
    calls = []

    class CountingOracle(RuleOracle):
        def answer(self, q, s):
            calls.append(q)
            return super().answer(q, s)

    game = CSG([42], GameConfig(), oracle=CountingOracle())
    game.step([act(0, "Is the number even?")])
    (r,) = game.step([act(0, "is the number EVEN")])  # same question, normalised
    assert r.redundant and r.reward == pytest.approx(-0.1) and r.hint == REDUNDANT_HINT
    assert len(calls) == 1 and r.candidates_after == r.candidates_before == 50
    (r,) = game.step([act(1, "Is the number even?")])
    assert not r.redundant and not r.novel and r.eliminated == 0 and len(calls) == 2
    assert r.reward == pytest.approx(0.0)


def test_the_redundancy_penalty_is_the_games():
    """GameConfig.redundancy_penalty (train.py --redundancy-penalty) is a repeat's whole reward; the
    other turns' rewards do not change with it."""

    def play(penalty):
        game = CSG([42], GameConfig(redundancy_penalty=penalty))
        return [
            r.reward
            for r in (
                *game.step([act(0, "Is the number even?")]),
                *game.step([act(0, "Is the number even?")]),
            )
        ]

    assert play(-0.5) == [play(-0.1)[0], -0.5] and play(-0.1)[1] == pytest.approx(-0.1)


@pytest.mark.parametrize(
    "text,reason",
    [
        ("I would ask about parity.", "no_json"),
        ('{"arm": 7, "question": "Is it even?"}', "arm_out_of_range"),
        ('{"arm": -1, "question": "Is it even?"}', "arm_out_of_range"),
        ('{"arm": true, "question": "Is it even?"}', "bad_arm"),
        ('{"arm": "two", "question": "Is it even?"}', "bad_arm"),
        ('{"arm": 1, "question": ""}', "no_question"),
        ('{"arm": 1, "question": 5}', "no_question"),
        ('{"arm": 1, "question": "Is it even?"', "no_json"),  # cut off by the token limit
    ],
)
def test_unreadable_actions_are_invalid_turns(text, reason):
    """No silent fallback question: an invalid turn has a penalty, no oracle call, no belief
    change."""
    assert read_action(text, 5) == (None, reason)
    game = CSG([42], GameConfig(), oracle=None)
    (r,) = game.step([text])
    assert r.invalid and r.invalid_reason == reason and r.arm == -1 and r.hint == ""
    assert r.reward == pytest.approx(REWARD.invalid_penalty) and r.eliminated == 0
    assert game.episodes[0].turn == 1 and all(h == [] for h in game.episodes[0].arm_histories)


@pytest.mark.parametrize(
    "text",
    [
        '```json\n{"arm": 2, "question": "Is it divisible by 3?"}\n```',
        'Thought: parity splits evenly.\nAction: {"arm": 2, "question": '
        '"Is it divisible by 3?"} done',
        '{"note": {"x": 1}} then {"arm": "2", "question": " Is it divisible by 3? "}',
        '{"arm": 2.0, "question": "Is it divisible by 3?"}',
    ],
)
def test_action_reader_tolerates_fences_and_prose(text):
    """The first JSON object with arm and question is the action, wherever it is in the text."""
    action, reason = read_action(text, 5)
    assert reason == "" and action.arm == 2 and action.question == "Is it divisible by 3?"
    assert json.loads(action.completion)["question"].strip() == "Is it divisible by 3?"


def test_belief_update_refuses_a_fact_that_eliminates_the_secret():
    """Lemma 'Exact posterior in CSG' holds only for true hints: a false one is refused, not
    used."""
    universe = frozenset(range(1, 101))
    even = Fact(Predicate("n", "even"))
    assert update_belief(universe, even, 7, 100) == (universe, True)
    kept, bad = update_belief(universe, even, 8, 100)
    assert not bad and kept == frozenset(range(2, 101, 2))


def test_lying_oracle_turns_are_marked_inconsistent():
    """A wrong answer never removes the secret; the turn is flagged and earns no elimination."""

    class Liar:
        failures = 0

        def answer_many(self, pairs):
            return ["The number is odd." if s % 2 == 0 else "The number is even." for _, s in pairs]

    game = CSG([42, 43], GameConfig(), oracle=Liar())
    records = game.step([act(0, "Is the number even?")] * 2)
    assert all(r.inconsistent and r.eliminated == 0 and r.r_info == 0 for r in records)
    assert all(e.secret in e.candidates and len(e.candidates) == 100 for e in game.episodes)


def test_binary_question_set_deflects_value_questions_only():
    """binary: 'what is the last digit?' is deflected without an oracle; yes/no and odd-or-even are
    answered."""
    cfg = GameConfig(question_set="binary")
    game = CSG([42, 42, 42], cfg)
    r = game.step(
        [
            act(3, "What is the last digit?"),
            act(3, "Is the last digit greater than 4?"),
            act(0, "Is the number odd or even?"),
        ]
    )
    assert r[0].hint == BINARY_DEFLECTION and r[0].eliminated == 0 and not r[0].arm_match
    assert r[1].eliminated == 50 and r[2].eliminated == 50
    assert "Only yes-or-no questions are answered." in selector_prompt(
        range(1, 101), [[]] * 5, 0, cfg
    )
    assert "Only yes-or-no" not in selector_prompt(range(1, 101), [[]] * 5, 0, GameConfig())


def test_batch_steps_together_and_resolved_episodes_drop_out():
    """Only active episodes take a turn; an episode ends on resolution or after T turns."""
    cfg = GameConfig(max_turns=3)
    game = CSG([42, 7, 99], cfg)
    game.step([act(3, "What is the last digit?"), act(0, "Is it even?"), act(0, "Is it even?")])
    game.step(
        [act(3, "What is the sum of the digits?"), act(0, "Is it prime?"), act(1, "Is it prime?")]
    )
    assert game.active == [1, 2]  # 42 resolved at turn 1
    with pytest.raises(ValueError):
        game.step(["{}"])
    prompt = game.messages()[0][1]["content"]
    assert "Turn 3 of 3" in prompt and "Arm 0 (queried 2x)" in prompt  # episode 7's own history
    game.step([act(4, "Is it between 1 and 50?"), act(4, "Is it between 1 and 50?")])
    assert game.active == [] and [e.turn for e in game.episodes] == [2, 3, 3]


def test_selector_prompt_shows_belief_and_histories():
    """App. B (A): the candidate list with its size, the turn, and Q/A pairs under their arm."""
    text = selector_prompt(
        frozenset({5, 3, 9}),
        [[("Is it odd?", "Yes, the number is odd.")], [], [], [], []],
        turn=2,
        game_cfg=GameConfig(),
    )
    assert "Turn 3 of 10" in text and "Remaining candidates (3): [3, 5, 9]" in text
    assert "Arm 0 (queried 1x):\n    Q: Is it odd?\n    A: Yes, the number is odd." in text
    assert "Arm 1: not yet queried" in text and '{"arm": <0 to 4>' in text


def test_runs_of_candidates_are_written_first_to_last_and_read_back():
    """--candidate-format runs: three or more consecutive numbers as FIRST-LAST, shorter runs number
    by number; the prompt of 1..200 is then as long as the prompt of 1..100. Read back, the text
    gives the same set (any set: a run of two stays two numbers)."""
    assert (
        candidate_text([9, 1, 2, 4, 5, 6, 40, 41, 42, 43, 200], "runs")
        == "1, 2, 4-6, 9, 40-43, 200"
    )
    assert candidate_text([9, 1, 2, 4, 5, 6], "list") == "1, 2, 4, 5, 6, 9"
    assert (
        candidate_text(range(1, 201), "runs"),
        candidate_text([], "runs"),
        candidate_text([7], "runs"),
    ) == ("1-200", "", "7")
    rng = random.Random(0)
    for _ in range(200):
        c = set(rng.sample(range(1, 201), rng.randint(1, 200)))
        read = set()
        for part in candidate_text(c, "runs").split(", "):
            first, _, last = part.partition("-")
            read |= set(range(int(first), int(last or first) + 1))
        assert read == c
    wide, narrow = (
        selector_prompt(range(1, n + 1), [[]] * 5, 0, GameConfig(n_max=n, candidate_format="runs"))
        for n in (200, 100)
    )
    assert "Remaining candidates (200): [1-200]" in wide and len(wide) == len(narrow)
    assert (
        CSG([5], GameConfig(candidate_format="runs")).messages()[0][1]["content"].count("[1-100]")
        == 1
    )


def test_padded_runs_write_every_number_with_three_digits():
    """--candidate-format padded: the runs of `runs`, each number in three digits, so that a list
    holding 101..200 has the shape of training's lists of 001..100: no number is a longer word."""
    assert (
        candidate_text([40, 13, 4, 22, 31, 103, 112, 121, 130], "padded")
        == "004, 013, 022, 031, 040, 103, 112, 121, 130"
    )
    assert (candidate_text(range(1, 201), "padded"), candidate_text([5, 6, 7, 9], "padded")) == (
        "001-200",
        "005-007, 009",
    )
    rng = random.Random(1)
    for _ in range(200):
        c = rng.sample(range(1, 201), rng.randint(1, 200))
        padded = candidate_text(c, "padded")
        assert all(len(n) == 3 for part in padded.split(", ") for n in part.split("-"))
        assert re.sub(r"\b0+(?=\d)", "", padded) == candidate_text(c, "runs")


def test_bad_configuration_fails_at_once():
    with pytest.raises(ValueError):
        GameConfig(candidate_format="ranges")
    with pytest.raises(ValueError):
        GameConfig(question_set="trinary")
    with pytest.raises(ValueError):
        CSG([0, 101], GameConfig())


def hostile_strings(count, seed=0):
    """Random and adversarial question / response text: the game must never raise on them."""
    rng = random.Random(seed)
    fixed = [
        "",
        " ",
        "?",
        "\x00",
        "\x1b[31m",
        "{}",
        "[]",
        "null",
        '{"arm": 1}',
        "9" * 10_000,
        "Is it greater than " + "9" * 5000 + "?",
        "Is it divisible by 0?",
        "Is it divisible by -0?",
        "Is it greater than -1e308?",
        "Is it greater than NaN?",
        "Is it between 5 and -5?",
        "Is it divisible by 0.0?",
        "Is it less than 1/0?",
        "Is it ＞ ５０？",
        "Is it ≥ 50.5?",
        "Is the number greater than 50" * 100,
        "\u202eIs it even?",
        "Is it even?\x00\x00",
        "Is the number \ud800 even?",
        "🙂" * 300,
        "is it " + "not " * 200 + "even",
    ]
    alphabet = "abcdefghijklmnopqrstuvwxyz 0123456789?.,-+<>=≥≤{}[]\":'\\/\n\t\x00\x07é漢🙂\u200b"
    words = (
        "is the number it greater less than between and or not divisible by digit sum last even "
        "odd prime".split()
    )
    out = list(fixed)
    while len(out) < count:
        kind = rng.random()
        if kind < 0.4:
            out.append("".join(rng.choice(alphabet) for _ in range(rng.randint(0, 80))))
        elif kind < 0.8:
            nums = [str(rng.choice([0, -1, 7, 10**12, 3.5, -2.25, 10**40]))]
            out.append(
                " ".join(rng.choice(words + nums) for _ in range(rng.randint(1, 12)))
                + rng.choice(["?", "", "!"])
            )
        else:
            out.append(
                json.dumps(
                    {"arm": rng.choice([0, 4, 9, -1, "3", None]), "question": rng.choice(words)}
                )
            )
    return out[:count]


def test_ten_thousand_hostile_strings_never_raise_or_eliminate_the_secret():
    """10,000 hostile questions and raw responses: no exception, the secret always survives."""
    texts = hostile_strings(10_000)
    rng = random.Random(1)
    secrets = [rng.randint(1, 200) for _ in texts]
    game = CSG(secrets, GameConfig(n_max=200))
    records = game.step([json.dumps({"arm": i % 5, "question": t}) for i, t in enumerate(texts)])
    records += game.step(texts)  # the same strings as the whole policy output
    assert len(records) == 20_000
    for e in game.episodes:
        assert e.secret in e.candidates
    for r in records:
        assert r.candidates_after <= r.candidates_before and r.eliminated >= 0
        if r.hint in (DEFLECTION, REDUNDANT_HINT, ""):
            assert r.eliminated == 0


def test_expected_elimination_is_the_realised_elimination_averaged_over_the_belief():
    """For random beliefs C and questions (yes/no, value, deflected, binary-set), playing every
    secret z of C through the real game and averaging the realised fractional elimination gives
    exactly (Fractions) expected_elimination of the parts the answers split C into."""
    import random
    from fractions import Fraction

    from env import answer_parts, expected_elimination

    rng = random.Random(3)
    questions = [
        "Is the number even?",
        "What is the last digit?",
        "What is the sum of the digits?",
        "Is the number greater than 37?",
        "Is it prime?",
        "Is the number between 20 and 45?",
        "Is it big?",
        "Is the number odd or even?",
    ]
    for question_set in ("paper", "binary"):
        cfg = GameConfig(question_set=question_set)
        for _ in range(40):
            belief = frozenset(rng.sample(range(1, 101), rng.randint(1, 60)))
            question = rng.choice(questions)
            realised = []
            for z in sorted(belief):
                game = CSG([z], cfg)
                game.episodes[0].candidates = belief
                (record,) = game.step([json.dumps({"arm": 0, "question": question})])
                realised.append(Fraction(record.eliminated, len(belief)))
            assert sum(realised, Fraction(0)) / len(belief) == expected_elimination(
                answer_parts(question, belief, cfg)
            )
    assert expected_elimination([1, 1]) == Fraction(1, 2) and expected_elimination(
        [3, 1]
    ) == 2 * Fraction(3, 4) * Fraction(1, 4)
    assert expected_elimination([10]) == 0


def test_expected_info_reward_replaces_only_r_info():
    """With expected_info the turn's r_info is 1 - sum p_k^2 of C_t's split, whatever the secret;
    resolution, arm and diversity terms stay as they are; penalties too."""
    cfg = GameConfig(expected_info=True)
    even = json.dumps({"arm": 0, "question": "Is the number even?"})
    for secret in (4, 7):
        game = CSG([secret], cfg)
        (r,) = game.step([even])
        assert r.r_info == 0.5 and r.eliminated == 50 and r.r_arm_match == REWARD.arm_match_bonus
        (r,) = game.step([even])
        assert r.redundant and r.reward == REWARD.redundancy_penalty
    game = CSG([2], cfg)
    game.episodes[0].candidates = frozenset({2, 3})
    (r,) = game.step([even])  # splits {2, 3} in two: expected 1/2, and it resolves
    assert r.r_info == 0.5 and r.turn_resolved and r.r_resolve == REWARD.resolve_bonus


def test_branch_carries_an_episode_on_for_other_secrets_of_its_belief():
    game = CSG([42], GameConfig())
    game.step([json.dumps({"arm": 3, "question": "What is the last digit?"})])
    belief = game.episodes[0].candidates
    branch = game.branch(0, [2, 12, 92])
    assert [e.secret for e in branch.episodes] == [2, 12, 92] and all(
        e.candidates == belief for e in branch.episodes
    )
    assert branch.messages() == game.messages() * 3  # the same history, the same prompt
    records = branch.step([json.dumps({"arm": 3, "question": "What is the last digit?"})] * 3)
    # the original is untouched
    assert all(r.redundant for r in records) and game.episodes[0].turn == 1
    with pytest.raises(ValueError):
        game.branch(0, [43])  # 43 is not in C_t


def test_random_interval_holds_its_secret_inside_the_range():
    """Every universe drawn holds its secret, lies in 1..n_max and has at least `least` numbers;
    sizes and places vary (a fixed question sequence cannot bisect them all)."""
    from episodes import random_interval

    rng = random.Random(0)
    draws = [
        (s, random_interval(s, 100, 5, rng)) for s in [rng.randint(1, 100) for _ in range(500)]
    ]
    # each an interval lo..hi
    assert all(u == frozenset(range(min(u), max(u) + 1)) for _, u in draws)
    assert all(1 <= min(u) and s in u and max(u) <= 100 and len(u) >= 5 for s, u in draws)
    assert len({len(u) for _, u in draws}) > 50 and len({min(u) for _, u in draws}) > 50
    # a universe wider than the game is all of it
    assert random_interval(7, 10, 50, rng) == frozenset(range(1, 11))


def test_random_subset_holds_its_secret_and_small_universes_are_common():
    """A subset universe holds its secret and `least` to n_max numbers of 1..n_max; its size is
    log-uniform, so about as many universes have 2..10 numbers as 10..50; and the numbers are
    not an interval, so small universes share last digits or digit sums the way no interval
    does (the question that resolves them depends on which numbers they hold)."""
    from episodes import random_subset

    rng = random.Random(0)
    draws = [(s, random_subset(s, 100, 2, rng)) for s in [rng.randint(1, 100) for _ in range(4000)]]
    assert all(s in u and len(u) >= 2 and u <= set(range(1, 101)) for s, u in draws)
    small = sum(2 <= len(u) <= 10 for _, u in draws) / len(draws)
    middle = sum(10 < len(u) <= 50 for _, u in draws) / len(draws)
    assert (
        abs(small - 0.41) < 0.04
        and abs(middle - 0.41) < 0.04
        and max(len(u) for _, u in draws) == 100
    )
    pairs = [u for _, u in draws if len(u) == 2]
    same_last = sum(len({n % 10 for n in u}) == 1 for u in pairs) / len(pairs)
    assert 0.05 < same_last < 0.2  # two random numbers share a last digit about 1 time in 10
    assert random_subset(7, 10, 50, rng) == frozenset(range(1, 11))


def test_random_class_is_the_secrets_digit_class_where_one_digit_question_tells_nothing():
    """A class universe is every number of 1..n_max that shares the secret's digit sum, tens digit
    or last digit, each of the three drawn; that digit question then leaves C_0 whole, while the
    two others still split it; a class smaller than `least` falls back to all of 1..n_max."""
    from env import GameConfig, answer_parts
    from episodes import random_class

    rng, cfg = random.Random(0), GameConfig()
    questions = {
        "digit_sum": "What is the sum of the digits?",
        "tens_digit": "What is the tens digit?",
        "last_digit": "What is the last digit?",
    }
    seen = set()
    for secret in [rng.randint(1, 100) for _ in range(300)]:
        universe = random_class(secret, 100, 2, rng)
        assert secret in universe and universe <= set(range(1, 101))
        shared = [
            name
            for name, q in questions.items()
            if answer_parts(q, universe, cfg) == [len(universe)]
        ]
        if len(universe) < 100:
            # exactly the drawn question tells nothing
            assert len(shared) == 1 and 2 <= len(universe) <= 10
            seen.add(shared[0])
            f = {
                "digit_sum": lambda n: sum(map(int, str(n))),
                "tens_digit": lambda n: n // 10 % 10,
                "last_digit": lambda n: n % 10,
            }[shared[0]]
            assert universe == {n for n in range(1, 101) if f(n) == f(secret)}
    assert seen == set(questions)
    assert random_class(1, 100, 2, rng) in (
        {1, 10, 100},
        {*range(1, 10), 100},
        set(range(1, 92, 10)),
    )
    # no class has 11
    assert all(random_class(s, 100, 11, rng) == set(range(1, 101)) for s in range(1, 101))


def test_episodes_start_from_their_own_universe_and_bisection_resolves_each():
    """CSG(universes=...): C_0 is the universe, listed in the prompt; a secret outside its
    universe is refused; the Bayes policy (bisection on the binary set) resolves every secret of
    an interval of k numbers in at most ceil(log2 k) turns."""
    import math

    from env import play
    from episodes import random_interval
    from reference import BayesPolicy

    cfg = GameConfig(question_set="binary")
    game = CSG([30, 8], cfg, universes=[range(20, 40), range(1, 101)])
    assert (
        game.episodes[0].candidates == frozenset(range(20, 40))
        and len(game.episodes[1].candidates) == 100
    )
    assert "Remaining candidates (20): [20, 21," in game.messages()[0][1]["content"]
    assert (
        "Remaining candidates (3): [8, 19, 77]"
        in CSG([8], cfg, universes=[{77, 8, 19}]).messages()[0][1]["content"]
    )
    for bad in ([range(31, 40), range(1, 101)], [range(20, 40)], [range(0, 40), range(1, 101)]):
        with pytest.raises(ValueError):
            CSG([30, 8], cfg, universes=bad)
    rng = random.Random(1)
    secrets = [rng.randint(1, 100) for _ in range(40)]
    universes = [random_interval(s, 100, 2, rng) for s in secrets]
    game = play(BayesPolicy(), secrets, cfg, universes=universes)
    for ep, u in zip(game.episodes, universes):
        assert ep.resolved and ep.turn <= math.ceil(math.log2(len(u)))


def test_a_hidden_belief_leaves_the_candidates_out_of_the_prompt_and_carries_on():
    """An episode with `hidden` set has the same prompt as one without, but for the line of C_t,
    which shows neither the count nor a number; a state carried on (a branch) keeps it; the game
    it plays is the same."""
    game = CSG([42, 42], GameConfig())
    game.episodes[0].hidden = True
    act = '{"arm": 3, "question": "What is the last digit?"}'
    game.step([act, act])
    hidden, shown = [m[1]["content"].splitlines() for m in game.messages()]
    differ = [(h, s) for h, s in zip(hidden, shown) if h != s]
    assert len(hidden) == len(shown) and differ == [
        (
            "Remaining candidates not shown",
            "Remaining candidates (10): [2, 12, 22, 32, 42, 52, 62, 72, 82, 92]",
        )
    ]
    assert game.episodes[0].candidates == game.episodes[1].candidates
    assert game.branch(0, [42]).episodes[0].hidden and not game.branch(1, [42]).episodes[0].hidden


def test_a_refused_family_is_deflected_without_the_oracle_and_the_refusal_carries_on():
    """CSG(refused=...): a question of a family the episode's clue holders refuse gets DEFLECTION,
    no oracle call, no elimination and no arm match, to any arm; other families and the other
    episodes are answered as usual; the prompt does not list the refusal; a state carried on
    (a branch, an explored start) keeps it; under expected_info the refused question is worth 0."""
    from episodes import explored
    from reference import RandomPolicy

    calls = []

    class CountingOracle(RuleOracle):
        def answer(self, q, s):
            calls.append(q)
            return super().answer(q, s)

    game = CSG(
        [42, 42], GameConfig(), oracle=CountingOracle(), refused=[{"last_digit", "parity"}, set()]
    )
    r = game.step([act(3, "What is the last digit?")] * 2)
    assert (
        r[0].hint == DEFLECTION and r[0].eliminated == 0 and not r[0].arm_match and r[0].r_info == 0
    )
    assert r[1].answer == "2" and r[1].eliminated == 90 and r[1].arm_match and len(calls) == 1
    assert game.messages()[0][1]["content"] == CSG([42], GameConfig()).messages()[0][1][
        "content"
    ].replace("Turn 1", "Turn 2").replace(
        "Arm 3: not yet queried",
        f"Arm 3 (queried 1x):\n    Q: What is the last digit?\n    A: {DEFLECTION}",
    )
    (r,) = game.branch(0, [42]).step([act(0, "Is the number even?")])
    assert r.hint == DEFLECTION and len(calls) == 1
    (r,) = game.branch(0, [42]).step([act(3, "What is the sum of the digits?")])
    assert r.eliminated == 93 and len(calls) == 2  # digit sum 6: 6, 15, 24, 33, 42, 51, 60 are left
    (r,) = game.step([act(2, "What is the last digit?"), act(3, "What is the sum of the digits?")])[
        :1
    ]
    # to another arm: refused again
    assert r.hint == DEFLECTION and not r.redundant and len(calls) == 3
    start = explored(42, GameConfig(), RandomPolicy(0), 0, refused=frozenset({"digit_sum"}))
    assert start.refused == {"digit_sum"} and start.carried_on(7).refused == {"digit_sum"}
    (r,) = CSG([42], GameConfig(expected_info=True), refused=[{"parity"}]).step(
        [act(0, "Is the number even?")]
    )
    assert r.r_info == 0 and r.hint == DEFLECTION
    (r,) = CSG([42], GameConfig(expected_info=True)).step([act(0, "Is the number even?")])
    assert r.r_info == pytest.approx(0.5)


def test_an_explored_start_is_a_reachable_state_that_has_not_ended():
    """env.explored: up to K turns of random questions from the universe, never the turn that
    would end the episode; the state's history shows them, its belief holds the secret, and a
    learner's rollouts carried on from it (rollouts.play_rollouts starts=) play from that turn
    on."""
    from episodes import explored, random_subset
    from reference import RandomPolicy
    from rollouts import play_rollouts

    cfg, rng = GameConfig(), random.Random(3)
    for k in range(40):
        secret = rng.randint(1, 100)
        universe = random_subset(secret, 100, 2, rng)
        start = explored(secret, cfg, RandomPolicy(k), 4, universe=universe)
        assert not start.resolved and start.turn <= 4 and not start.records
        assert secret in start.candidates <= universe
        # each turn in its arm's history
        assert sum(len(h) for h in start.arm_histories) == start.turn
    start = explored(57, cfg, RandomPolicy(1), 3)
    assert start.turn == 3 and len(start.candidates) > 1

    class Echo:  # a scripted "LM": always the same action; records what it was prompted with
        device = "cpu"
        prompts = []

        def encode(self, messages):
            self.prompts += [m[1]["content"] for m in messages]
            return [[0]] * len(messages)

        def generate(self, prompts, sample, generator=None):
            from policy import Generation

            text = '{"arm": 0, "question": "Is the number even?"}'
            return [Generation([0], [1], [0.0], text, 0.0) for _ in prompts]

    lm = Echo()
    batch = play_rollouts(lm, [57], 2, cfg, starts=[start])
    assert min(r.turn for r in batch.records) == 3 and len(batch.starts) == 2
    assert batch.starts[0].turn == 3 and not batch.starts[0].records
    assert "Turn 4 of 10" in lm.prompts[0] and "(queried" in lm.prompts[0]


def test_the_fixed_sequence_scores_each_question_as_its_own_row_would():
    """reference._scores sums the rows with as many classes as one block: each row's secrets
    identified (classes of one number) and partition entropy are those of the row taken alone,
    to the bit, so ties between questions break as a sum per row breaks them."""
    from reference import _scores

    rng = np.random.default_rng(0)
    n_max = 60
    # rows of sorted class ids with from 1 to n_max classes, as reference._refine makes them
    refined = np.sort(
        np.stack([rng.integers(0, k, n_max) for k in rng.integers(1, n_max + 1, 300)]), axis=1
    )
    identified, entropy = _scores(refined)
    for row, alone, h in zip(refined, identified, entropy):
        _, sizes = np.unique(row, return_counts=True)
        p = sizes / n_max
        assert alone == (sizes == 1).sum()
        assert h == -(p * np.log(p)).sum()  # the same bits, not only close


def test_the_banks_truth_over_1_to_n_max_is_whether_each_number_holds():
    """reference.truth, which question_bank builds its answers from, is
    [holds(n) for n in 1..n_max] for the bank's questions of both question sets."""
    from reference import _bank_queries, truth

    n_max = 120
    for question_set in ("paper", "binary"):
        predicates = [
            q.predicate
            for q in _bank_queries(GameConfig(question_set=question_set, n_max=n_max))
            if q.kind == "yesno"
        ]
        for p in predicates[::5] + predicates[-40:]:
            assert truth(p, n_max) == [p.holds(n) for n in range(1, n_max + 1)], p
