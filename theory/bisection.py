"""Bisection as a special case of the EDP objective, checked against the game's own machinery.

Implements App. C, paragraph "Bisection as a special case of the EDP objective": under the
uniform belief b_t = Unif(C_t) of the CSG (Lemma A.5 "Exact posterior in CSG") and a
deterministic yes/no question whose yes-set is a fraction p of C_t, the expected fractional
elimination u = (|C_t| - |C_{t+1}|) / |C_t| (Sec. 5.1, the r_info term of App. C
"CSG Reward Composition") is

    E_{z*~b_t}[u(b_t, a_t, o_t)] = p (1 - p) + (1 - p) p = 2p(1 - p),   maximal at p = 1/2.

What is computed (python -m theory.bisection), every number an exact Fraction:
  (1) the identity, on random candidate sets C (random subsets of 1..N, random intervals, and
      the sets the game's bisection policy actually visits) and random yes/no questions
      (comparisons, divisibility, parity, between, digit predicates; some negated) rendered as
      English with grammar.render_question. For every secret z in C the realised
      elimination is what the game computes: RuleOracle answers, grammar.read_hint reads the
      sentence, env.update_belief applies it. The average over z in C is compared with 2p(1-p),
      where p is counted with a plain-Python transcription of the question (not game/properties.py);
  (a) for value questions ("what is the last digit?"), the general form 1 - sum_k p_k^2, with
      p_k the fraction of C whose answer is k;
  (b) the best yes/no question of reference.question_bank (binary set) reaches the largest
      value any split of C can: 2 floor(n/2) ceil(n/2) / n^2 for n = |C|, which is 1/2 exactly
      when n is even; the max-information-gain question (reference.BayesPolicy's choice) reaches
      it too, and so does the measured elimination of that question in the game;
  (c) repeated bisection (reference.BayesPolicy on the binary question set) resolves every secret
      of 1..N within ceil(log2 N) turns, the fewest any yes/no policy can guarantee (t answers
      tell apart at most 2^t secrets), and its mean turn count is the optimum of a binary
      search tree, floor(log2 N) + 2 (N - 2^floor(log2 N)) / N.

Departures from the paper, with reasons:
  * With finitely many candidates p is a multiple of 1/|C|, so p = 1/2 exists only for even |C|;
    for odd |C| the maximum is (1 - 1/|C|^2) / 2, which is what (b) checks.
  * The paper's "bisection" is read as the game's own belief-only policy on yes/no questions
    (max expected information gain; for two outcomes this maximises 2p(1-p) too, both being
    increasing in min(p, 1-p)). Its first question on 1..100 is parity, not a range, so the
    sets it visits are not all intervals; (1) checks the identity on those sets as well.
  * A value question is not a bisection question: its 1 - sum_k p_k^2 can exceed 1/2 (the last
    digit of 1..100 gives 9/10). This is why the `binary` question set exists (env.py).
"""

import math
import random
import time
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

import numpy as np

from env import CSG, GameConfig, update_belief
from game.grammar import read_hint, render_question
from game.properties import Predicate, Query
from game.questions import parse_question
from oracle import RuleOracle
from reference import BayesPolicy, expected_information_gain, question_bank
from tools.cli import parse_config, save_config


@dataclass
class Config:
    seed: int = field(default=0, metadata={"help": "seed for the random sets and questions"})
    n_max: int = field(
        default=100,
        metadata={
            "help": "N: candidates are subsets of 1..N (paper, l. 391: 100 for training), in 2..200"
        },
    )
    n_sets: int = field(
        default=60,
        metadata={
            "help": (
                "random candidate sets of each kind (random subset, interval, bisection-visited)"
            )
        },
    )
    questions_per_set: int = field(default=8, metadata={"help": "random yes/no questions per set"})
    sizes: str = field(
        default="2,3,4,5,7,8,9,16,17,31,32,33,50,64,65,100",
        metadata={"help": "comma-separated N for the bisection game (c), each in 2..200"},
    )
    max_turns: int = field(
        default=10, metadata={"help": "T of the bisection game (paper, l. 750: 10)"}
    )
    out: str = field(
        default="theory/out",
        metadata={
            "help": "output folder (relative to the working directory) for table, plot, config"
        },
    )


# ---------------------------------------------------------------- plain-Python references
# Transcriptions of what each question asks, written with arithmetic only, so that p does not
# come from the code (game/properties.py) whose sentences the game reads.


def digits(z):
    """Decimal digits of z >= 1, least significant first."""
    out = []
    while z:
        z, d = divmod(z, 10)
        out.append(d)
    return out


VALUE_REFERENCE = {  # quantity of a value question -> its answer for secret z
    "parity": lambda z: z % 2,
    "digit_sum": lambda z: sum(digits(z)),
    "last_digit": lambda z: z % 10,
    "tens_digit": lambda z: z // 10 % 10,
    "first_digit": lambda z: digits(z)[-1],
    "num_digits": lambda z: len(digits(z)),
}
YESNO_FAMILIES = ("comparison", "divisibility", "parity", "between", "digit")


def random_yesno(rng, N):
    """A random yes/no question about secrets in 1..N: (family, Query, truth), where truth(z)
    says whether the answer to the question as asked (negation included) is yes."""
    family = rng.choice(YESNO_FAMILIES)
    if family == "comparison":
        op, k = rng.choice(["gt", "ge", "lt", "le"]), rng.randint(1, N - 1)
        truth = {
            "gt": lambda z: z > k,
            "ge": lambda z: z >= k,
            "lt": lambda z: z < k,
            "le": lambda z: z <= k,
        }[op]
        predicate = Predicate("n", op, (k,))
    elif family == "divisibility":
        k = rng.randint(2, max(2, N // 2))
        predicate, truth = Predicate("n", "div", (k,)), lambda z: z % k == 0
    elif family == "parity":
        test = rng.choice(["even", "odd"])
        predicate, truth = Predicate("n", test), lambda z: z % 2 == (test == "odd")
    elif family == "between":
        a, b = sorted(rng.sample(range(1, N + 1), 2))
        predicate, truth = Predicate("n", "between", (a, b)), lambda z: a <= z <= b
    else:
        quantity, test = rng.choice(
            [
                ("digit_sum", "gt"),
                ("digit_sum", "lt"),
                ("digit_sum", "eq"),
                ("last_digit", "eq"),
                ("last_digit", "gt"),
                ("last_digit", "even"),
                ("tens_digit", "eq"),
                ("num_digits", "eq"),
                ("n", "endswith"),
            ]
        )
        if test == "endswith":
            d = rng.randint(0, 9)
            predicate, truth = Predicate("n", "endswith", (str(d),)), lambda z: z % 10 == d
        elif test == "even":
            predicate, truth = Predicate(quantity, "even"), lambda z: z % 10 % 2 == 0
        else:
            k = rng.randint(0, 18 if quantity == "digit_sum" else 9)
            value = VALUE_REFERENCE[quantity]
            predicate = Predicate(quantity, test, (k,))
            truth = {
                "gt": lambda z: value(z) > k,
                "lt": lambda z: value(z) < k,
                "eq": lambda z: value(z) == k,
            }[test]
    negated = rng.random() < 0.25
    return family, Query("yesno", predicate, negated), lambda z: truth(z) != negated


# ---------------------------------------------------------------- the identity


def answer_fractions(C, answer):
    """p_k = |{z in C : answer(z) = k}| / |C| for every answer k that occurs, as Fractions."""
    counts = {}
    for z in C:
        counts[answer(z)] = counts.get(answer(z), 0) + 1
    return [Fraction(c, len(C)) for c in counts.values()]


def bisection_value(p):
    """App. C: E_{z~Unif(C)}[u] = 2p(1-p) for a yes/no question with yes-fraction p: a secret
    answering yes keeps p|C| candidates (eliminates 1 - p), one answering no eliminates p."""
    return 2 * p * (1 - p)


def value_question_value(p):
    """The general form for answer fractions p_k: a secret with answer k eliminates 1 - p_k, so
    E[u] = sum_k p_k (1 - p_k) = 1 - sum_k p_k^2 (= 2p(1-p) for two answers)."""
    return 1 - sum(p_k * p_k for p_k in p)


def game_elimination(C, question, N, oracle):
    """The elimination the game realises for each secret z in C: the oracle's sentence, read by
    grammar.read_hint and applied by env.update_belief. Returns (Fractions per z, number of
    secrets whose hint was not used: unread, deflected or inconsistent)."""
    C, eliminated, unused = frozenset(C), [], 0
    for z in sorted(C):
        fact = read_hint(oracle.answer(question, z), parse_question(question)).fact
        C_next, inconsistent = update_belief(C, fact, z, N)
        unused += fact is None or inconsistent
        eliminated.append(Fraction(len(C) - len(C_next), len(C)))
    return eliminated, unused


def check_yesno(C, query, truth, N, oracle):
    """One check of (1): the game's mean elimination against 2p(1-p), p counted with truth."""
    question = render_question(query)
    eliminated, unused = game_elimination(C, question, N, oracle)
    p = Fraction(sum(map(truth, C)), len(C))
    return {
        "question": question,
        "size": len(C),
        "p": p,
        "predicted": bisection_value(p),
        "measured": sum(eliminated) / len(C),
        "unused": unused,
    }


def check_value(C, quantity, N, oracle):
    """One check of (a): the game's mean elimination against 1 - sum_k p_k^2."""
    question = render_question(Query("value", quantity=quantity))
    eliminated, unused = game_elimination(C, question, N, oracle)
    p = answer_fractions(C, VALUE_REFERENCE[quantity])
    return {
        "question": question,
        "size": len(C),
        "p": p,
        "predicted": value_question_value(p),
        "measured": sum(eliminated) / len(C),
        "unused": unused,
    }


# ---------------------------------------------------------------- (b) the bank, (c) bisection


def best_bank_split(bank, C):
    """(best 2p(1-p) over the bank's yes/no questions, 2p(1-p) of the max-information-gain
    question, index of the best question) for candidates C; exact, from integer counts."""
    n = len(C)
    yes = bank.outcomes[:, np.array(sorted(C)) - 1].sum(axis=1, dtype=np.int64)  # (Q,)
    value = 2 * yes * (n - yes)  # 2p(1-p) * n^2
    q_best = int(np.argmax(value))
    q_eig = int(np.argmax(expected_information_gain(bank, C)))
    return Fraction(int(value[q_best]), n * n), Fraction(int(value[q_eig]), n * n), q_best


def best_possible_split(n):
    """max over all yes-sets of 2p(1-p) with p in {0, 1/n, ..., 1}: the most even split."""
    return Fraction(2 * (n // 2) * ((n + 1) // 2), n * n)


def optimal_mean_turns(N):
    """Mean leaf depth of the best binary search tree on N leaves: k + 2 (N - 2^k) / N, k =
    floor(log2 N) (2^(k+1) - N leaves at depth k, 2 (N - 2^k) at depth k + 1)."""
    k = N.bit_length() - 1
    return k + Fraction(2 * (N - 2**k), N)


def play_bisection(N, max_turns):
    """Play every secret of 1..N with reference.BayesPolicy on the binary question set.
    Returns the finished game and every candidate set the policy was asked to split."""
    game, policy, visited = (
        CSG(range(1, N + 1), GameConfig(n_max=N, question_set="binary", max_turns=max_turns)),
        BayesPolicy(),
        set(),
    )
    while game.active:
        visited.update(game.episodes[i].candidates for i in game.active)
        game.step(policy.respond(game))
    return game, visited


# ---------------------------------------------------------------- report


def plot_yesno(ax, yesno):
    """Panel (1): the game's mean elimination of each yes/no check against the curve 2p(1-p),
    one marker per kind of candidate set."""
    p = np.linspace(0, 1, 201)
    ax.plot(p, 2 * p * (1 - p), "k-", lw=1, label="$2p(1-p)$")
    for kind, marker in (("random", "o"), ("interval", "s"), ("visited", "^")):
        rows = [r for r in yesno if r["kind"] == kind]
        ax.plot(
            [float(r["p"]) for r in rows],
            [float(r["measured"]) for r in rows],
            marker,
            ms=4,
            mfc="none",
            label=f"measured in the game, {kind} $C_t$",
        )
    ax.set(
        xlabel="yes-fraction $p$ of $C_t$",
        ylabel="mean fractional elimination",
        title="yes/no questions: (1)",
    )
    ax.legend(fontsize=7)


def plot_value(ax, value):
    """Panel (a): measured against predicted 1 - sum_k p_k^2 for value questions, with the
    1/2 that no yes/no question can pass."""
    ax.plot([0, 1], [0, 1], "k-", lw=1, label="measured = $1-\\sum_k p_k^2$")
    ax.plot(
        [float(r["predicted"]) for r in value],
        [float(r["measured"]) for r in value],
        "o",
        ms=4,
        mfc="none",
        color="tab:green",
        label="value questions",
    )
    ax.axhline(0.5, color="grey", ls=":", lw=1, label="best yes/no: 1/2")
    ax.set(
        xlabel="$1-\\sum_k p_k^2$",
        ylabel="mean fractional elimination",
        title="value questions: (a)",
    )
    ax.legend(fontsize=7)


def plot_turns(ax, games):
    """Panel (c): turns bisection took on 1..N (max and mean) against ceil(log2 N) and the
    optimal mean of a binary search tree."""
    Ns = np.array([g["N"] for g in games])
    grid = np.arange(2, Ns.max() + 1)
    ax.step(
        grid, np.ceil(np.log2(grid)), "k-", where="post", lw=1, label="$\\lceil\\log_2 N\\rceil$"
    )
    ax.plot(
        grid,
        [float(optimal_mean_turns(int(n))) for n in grid],
        "k:",
        lw=1,
        label="optimal mean turns",
    )
    ax.plot(Ns, [g["max_turns"] for g in games], "rv", label="max turns played")
    ax.plot(Ns, [float(g["mean_turns"]) for g in games], "b+", label="mean turns played")
    ax.set(xscale="log", xlabel="N", ylabel="turns to resolve", title="bisection in the game: (c)")
    ax.legend(fontsize=7)


def plot(yesno, value, games, path):
    """The figure: panels (1), (a) and (c) side by side, saved to path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax, ax2, ax3) = plt.subplots(1, 3, figsize=(15, 4.2))
    plot_yesno(ax, yesno)
    plot_value(ax2, value)
    plot_turns(ax3, games)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def summary(rows, key, label):
    """One line per group: checks, exact matches, unused hints, mean predicted value."""
    lines = [f"{label:<14} {'checks':>6} {'exact':>6} {'unused':>6} {'mean E[u]':>9}  example"]
    for group in dict.fromkeys(r[key] for r in rows):
        g = [r for r in rows if r[key] == group]
        exact = sum(r["measured"] == r["predicted"] for r in g)
        mean = float(sum(r["predicted"] for r in g) / len(g))
        lines.append(
            f"{group:<14} {len(g):>6} {exact:>6} {sum(r['unused'] for r in g):>6} "
            f"{mean:>9.4f}  {g[0]['question']}"
        )
    return lines


def report(N, T, yesno, value, full, n_bank, bank_rows, games):
    """The printed table: (1) and (a) per family, (b) per kind of set, (c) per N."""
    lines = [
        f"(1) E[u] = 2p(1-p) for yes/no questions on C_t within 1..{N}: measured through "
        "RuleOracle -> read_hint -> update_belief, exact Fractions",
        *summary(yesno, "family", "family"),
        *summary(yesno, "kind", "set kind"),
        "",
        "(a) E[u] = 1 - sum_k p_k^2 for value questions (same sets)",
        *summary(value, "quantity", "quantity"),
        f"on C_0 = 1..{N} (measured == 1 - sum p_k^2 for all: "
        f"{all(r['measured'] == r['predicted'] for r in full)}): "
        + ", ".join(f"{r['quantity']} {r['measured']}" for r in full),
        "",
        f"(b) best yes/no question of the binary bank (N={N}, {n_bank} questions) vs "
        "the best split of C_t, 2 floor(n/2) ceil(n/2) / n^2",
        f"{'C_t kind':<9} {'|C_t|':>6} {'sets':>5} {'best==bound':>11} {'best==1/2':>9} "
        f"{'max-EIG==best':>13} {'measured==best':>14}",
    ]
    for kind in ("random", "interval", "visited"):
        for parity in ("even", "odd"):
            g = [
                r
                for r in bank_rows
                if r["kind"] == kind and (r["size"] % 2 == 0) == (parity == "even")
            ]
            counts = [
                sum(r["best"] == r["bound"] for r in g),
                sum(r["best"] == Fraction(1, 2) for r in g),
                sum(r["eig"] == r["best"] for r in g),
                sum(r["measured"] == r["best"] for r in g),
            ]
            lines.append(
                f"{kind:<9} {parity:>6} {len(g):>5} {counts[0]:>11} {counts[1]:>9} "
                f"{counts[2]:>13} {counts[3]:>14}"
            )
    lines += [
        "",
        f"(c) bisection (reference.BayesPolicy, binary question set, T={T}) on every "
        "secret of 1..N",
        f"{'N':>4} {'ceil(log2 N)':>12} {'resolved':>8} {'max turns':>9} "
        f"{'mean turns':>10} {'optimal mean':>12}  first question",
    ]
    lines += [
        f"{g['N']:>4} {g['bound']:>12} {g['resolved']:>4}/{g['N']:<3} {g['max_turns']:>9} "
        f"{float(g['mean_turns']):>10.4f} {float(g['optimal']):>12.4f}  {g['first']}"
        for g in games
    ]
    return "\n".join(lines)


def check_flags(cfg):
    """The N of the bisection game (c), read from --sizes, once every flag is in range; a bad
    flag stops the run with one sentence, before anything is written."""
    try:
        sizes = [int(s) for s in cfg.sizes.split(",")]
    except ValueError:
        raise SystemExit("--sizes must be comma-separated integers, e.g. 2,8,100.")
    if not all(2 <= n <= 200 for n in sizes + [cfg.n_max]):
        raise SystemExit(
            "--n-max and every --sizes value must be in 2..200 (the question bank grows as N^3)."
        )
    if min(cfg.n_sets, cfg.questions_per_set) < 1:
        raise SystemExit("--n-sets and --questions-per-set must be >= 1.")
    if max(math.ceil(math.log2(n)) for n in sizes) > cfg.max_turns:
        raise SystemExit("--max-turns must be at least ceil(log2 N) for every N in --sizes.")
    return sizes


def play_sizes(sizes, N, max_turns):
    """(c): bisection on every secret of 1..n for each n in sizes, and on 1..N. Returns the rows
    of (c), one per n in sizes, and the sets of 1..N's games with more than one candidate,
    which (1), (a) and (b) check too."""
    games, visited_sets = [], None
    for n in sizes + ([N] if N not in sizes else []):
        game, visited = play_bisection(n, max_turns)
        turns = [e.turn for e in game.episodes]
        if n == N:
            visited_sets = sorted((C for C in visited if len(C) > 1), key=sorted)
        if n in sizes:
            games.append(
                {
                    "N": n,
                    "bound": math.ceil(math.log2(n)),
                    "max_turns": max(turns),
                    "resolved": sum(e.resolved for e in game.episodes),
                    "mean_turns": Fraction(sum(turns), n),
                    "optimal": optimal_mean_turns(n),
                    "first": game.episodes[0].records[0].question,
                }
            )
    return games, visited_sets


def candidate_sets(rng, N, n_sets, visited_sets):
    """The candidate sets C_t of (1), (a) and (b), as (kind, C): n_sets random subsets of 1..N,
    n_sets random intervals, and up to n_sets of the sets bisection visited."""
    sets = [
        ("random", frozenset(rng.sample(range(1, N + 1), rng.randint(2, N)))) for _ in range(n_sets)
    ]
    for _ in range(n_sets):
        a, b = sorted(rng.sample(range(1, N + 1), 2))
        sets.append(("interval", frozenset(range(a, b + 1))))
    sets += [("visited", C) for C in rng.sample(visited_sets, min(n_sets, len(visited_sets)))]
    return sets


def check_sets(sets, bank, rng, N, questions_per_set, oracle):
    """(1), (a) and (b) on every candidate set: questions_per_set random yes/no questions, every
    value question, and the bank's best yes/no question. Returns the three lists of rows."""
    yesno, value, bank_rows = [], [], []
    for kind, C in sets:
        for _ in range(questions_per_set):  # (1)
            family, query, truth = random_yesno(rng, N)
            yesno.append(
                {"kind": kind, "family": family, **check_yesno(C, query, truth, N, oracle)}
            )
        for quantity in VALUE_REFERENCE:  # (a)
            value.append({"quantity": quantity, **check_value(C, quantity, N, oracle)})
        best, eig, q = best_bank_split(bank, C)  # (b)
        measured = sum(game_elimination(C, bank.texts[q], N, oracle)[0]) / len(C)
        bank_rows.append(
            {
                "kind": kind,
                "size": len(C),
                "best": best,
                "eig": eig,
                "measured": measured,
                "bound": best_possible_split(len(C)),
            }
        )
    return yesno, value, bank_rows


def main(argv=None):
    cfg = parse_config(Config, argv, description=__doc__.splitlines()[0])
    sizes = check_flags(cfg)
    out = Path(cfg.out)
    save_config(cfg, out / "bisection_config.json")
    rng, oracle, N, t0 = random.Random(cfg.seed), RuleOracle(), cfg.n_max, time.time()

    # (c) first: the sets bisection visits on 1..N are also sets for (1), (a), (b)
    games, visited_sets = play_sizes(sizes, N, cfg.max_turns)
    sets = candidate_sets(rng, N, cfg.n_sets, visited_sets)
    bank = question_bank(GameConfig(n_max=N, question_set="binary"))
    yesno, value, bank_rows = check_sets(sets, bank, rng, N, cfg.questions_per_set, oracle)
    full = [{"quantity": q, **check_value(range(1, N + 1), q, N, oracle)} for q in VALUE_REFERENCE]

    table = report(N, cfg.max_turns, yesno, value, full, len(bank.queries), bank_rows, games)
    print(table)
    (out / "bisection.txt").write_text(table + "\n")
    plot(yesno, value, games, out / "bisection.png")
    print(
        f"wrote {out / 'bisection.txt'}, {out / 'bisection.png'}, "
        f"{out / 'bisection_config.json'} in {time.time() - t0:.1f}s"
    )
    return {"yesno": yesno, "value": value, "bank": bank_rows, "games": games}


if __name__ == "__main__":
    main()
