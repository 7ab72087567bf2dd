"""Return aliasing through the Clue Selector Game's code, on a game small enough to enumerate.

Checks (1)-(3) of return_aliasing.py, played through env.py.

Implements, on the game itself (env.py with the rule oracle and the full App. C reward), the
checks that theory/return_aliasing.py runs on a cut-down EDP: the Bayesian advantage of Sec. 3,
    A_B(h_t, a_t) = Q_B(h_t, a_t) - E_{a'~pi}[Q_B(h_t, a')],  Q_B = E_{z~b_t}[Q_z],
and part (ii), "Estimator insufficiency", of Theorem 3.2 with Theorem A.3 "Spectral aliasing
of trajectory-level credit" (App. A) and its Corollary A.4:
  (1) the best return-only estimator phi(R) is E[A | R], its error E[Var(A | R)] (least squares
      over all functions of R, against the exact conditional variance);
  (2) Pi_R is an orthogonal projection with spectrum {0, 1} and rank = number of return levels;
  (3) turn-level estimators (functions of r_t, ECHO's normalised r_t) against return-only ones.
The math (projections, errors, normalisation, A_B from enumerated histories) is imported from
return_aliasing; this module only builds the game's trajectories and prints their table.

The game: secrets 1..N (N = 8 by default), horizon T = 3, and a fixed menu of four actions
(CSG_MENU) sent through the game as JSON; the policy is epsilon-greedy (epsilon = 1/2) on the
expected r_info that the game's own belief update gives under b_t = Unif(C_t). Every trajectory
is enumerated by replaying the game; probabilities, rewards and A_B are exact Fractions.
Its test (tests/test_theory.py, test_real_clue_selector_game) runs the game's code at N = 6,
T = 2 with this four-question menu (CSG_MENU; "greater than 3" at N = 6) and epsilon = 1/2: it
checks (1) and (2) at each turn (least squares over functions of R equals E[Var(A_B | R)] > 0,
Pi_R idempotent with rank the number of return levels) and E_pi[A_B] = 0 at every history, not
(3); test_csg_aliasing_main_smoke runs main() at N = 4, T = 2.

Departures from the paper, with reasons:
  * Episodes end when the secret is resolved, so trajectories have 1..T turns and A_B(h_t, a_t)
    is analysed over the episodes still playing at turn t (probabilities renormalised; the
    table's P(active) column is that mass).
  * The reward is the full App. C turn reward (r_info plus arm match, diversity, resolution and
    efficiency terms), so R is the return GRPO would see. The shaping terms depend on the raw
    history (which questions were asked), not only on C_t, so A_B is computed from raw-history
    averages (return_aliasing.advantages_from_enumeration), not from a recursion on C_t.
  * A fixed four-question menu instead of free text keeps the trajectory tree enumerable.
"""

import json
import time
from collections import defaultdict
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from pathlib import Path

from env import CSG, REDUNDANT_HINT, GameConfig, update_belief
from game.grammar import read_hint
from game.questions import parse_question
from oracle import RuleOracle
from theory.return_aliasing import (
    advantages_from_enumeration,
    aliasing_example,
    analyse_turn,
    exact_table,
)
from tools.cli import parse_config, save_config

CSG_MENU = (  # (arm, question): a fixed action menu; arm 4 owns "between", so the last action
    (0, "Is the number even?"),  # asks a sound question through the wrong arm (no arm bonus)
    (0, "Is the number greater than {half}?"),
    (2, "Is the number divisible by 3?"),
    (4, "Is the number prime?"),
)


@dataclass
class Config:
    n_candidates: int = field(default=8, metadata={"help": "N: secrets are 1..N, in 2..16"})
    horizon: int = field(default=3, metadata={"help": "T: turns per episode (keep T <= 4)"})
    epsilon: float = field(
        default=0.5,
        metadata={
            "help": "exploration of the epsilon-greedy policy, in (0, 1]; used as a Fraction"
        },
    )
    turn: int = field(default=1, metadata={"help": "turn t of the printed aliasing example"})
    out: str = field(
        default="theory/out",
        metadata={"help": "output folder (relative to the working directory) for table and config"},
    )


def menu_policy(N=8, epsilon=Fraction(1, 2)):
    """(action texts of CSG_MENU, pi): pi(C_t) -> {menu index: probability}, epsilon-greedy on
    the expected r_info that the game's own belief update gives under b_t = Unif(C_t)."""
    oracle = RuleOracle()
    menu = [(arm, q.format(half=N // 2)) for arm, q in CSG_MENU]
    texts = [json.dumps({"arm": arm, "question": q}) for arm, q in menu]

    @lru_cache(maxsize=None)
    def pi(C):  # the game's own belief update, applied as if each candidate were the secret
        after = [
            [
                update_belief(C, read_hint(oracle.answer(q, z), parse_question(q)).fact, z, N)[0]
                for z in C
            ]
            for _, q in menu
        ]
        elim = [sum(len(C) - len(C_next) for C_next in afters) for afters in after]
        greedy = [k for k in range(len(menu)) if elim[k] == max(elim)]
        return {
            k: (1 - epsilon) * Fraction(k in greedy, len(greedy)) + epsilon / len(menu)
            for k in range(len(menu))
        }

    return texts, pi


def csg_trajectories(N=8, T=3, epsilon=Fraction(1, 2)):
    """Every trajectory of the real CSG (env.py with the rule oracle, full App. C reward) for
    secrets 1..N, horizon T, actions CSG_MENU, and the epsilon-greedy policy on expected
    r_info. Episodes stop when resolved, so trajectories have 1..T turns. Same dict as
    return_aliasing.enumerate_trajectories plus "pi" (the policy at each turn); rewards are
    made exact Fractions (their denominators divide 20 N, checked)."""
    cfg, oracle = GameConfig(n_max=N, n_arms=5, max_turns=T), RuleOracle()
    texts, pi = menu_policy(N, epsilon)

    traj = defaultdict(list)

    def extend(z, actions, p):
        game = CSG([z], cfg, oracle)  # replay the prefix: the game state is not copyable cheaply
        beliefs, history, rewards, pis = [], [], [], []
        for k in actions:
            beliefs.append(game.episodes[0].candidates)
            pis.append(pi(beliefs[-1]))
            record = game.step([texts[k]])[0]
            history.append((k, record.hint))
            rewards.append(Fraction(record.reward).limit_denominator(20 * N))
            assert abs(float(rewards[-1]) - record.reward) < 1e-12, record.reward
        if not game.active:
            for key, value in zip(
                ("z", "p", "history", "beliefs", "rewards", "pi"),
                (z, p, tuple(history), tuple(beliefs), tuple(rewards), tuple(pis)),
            ):
                traj[key].append(value)
            return
        for k, pi_k in pi(game.episodes[0].candidates).items():
            extend(z, actions + (k,), p * pi_k)

    for z in range(1, N + 1):
        extend(z, (), Fraction(1, N))
    traj = dict(traj)
    traj["A"] = advantages_from_enumeration(traj, pi)
    return traj


def active_at(traj, t):
    """The trajectories still playing at turn t, probabilities renormalised: A_B(h_t, a_t) is
    only defined where a turn-t decision is made. Returns (sub-dict, P(still playing at t))."""
    keep = [i for i, hist in enumerate(traj["history"]) if len(hist) > t]
    mass = sum(traj["p"][i] for i in keep)
    sub = {key: [values[i] for i in keep] for key, values in traj.items()}
    sub["p"] = [p / mass for p in sub["p"]]
    return sub, mass


def describe(traj, i, t):
    """One trajectory as menu index and answer per turn, e.g. '1:no 0:yes 1:repeat' (a repeat
    is the game's redundancy penalty), with its C_t, R and A_B(h_t, a_t)."""

    def answer(hint):
        word = hint.split(",")[0].lower()
        return "repeat" if hint == REDUNDANT_HINT else word if word in ("yes", "no") else "?"

    steps = " ".join(f"{k}:{answer(hint)}" for k, hint in traj["history"][i])
    C_t = "{" + ", ".join(map(str, sorted(traj["beliefs"][i][t]))) + "}"
    return (
        f"z*={traj['z'][i]}  {steps:<22} C_{t}={C_t}  "
        f"R={float(sum(traj['rewards'][i])):.4f}  "
        f"A_B(h_{t},a_{t})={float(traj['A'][i][t]):+.4f}"
    )


def main(argv=None):
    cfg = parse_config(Config, argv, description=__doc__.splitlines()[0])
    if not 2 <= cfg.n_candidates <= 16 or not 1 <= cfg.horizon <= 4:
        raise SystemExit(
            "--n-candidates must be in 2..16 and --horizon in 1..4 (the number of "
            "trajectories grows as N * 4^T)."
        )
    if not 0 <= cfg.turn < cfg.horizon or not 0 < cfg.epsilon <= 1:
        raise SystemExit("--turn must be in [0, horizon) and --epsilon in (0, 1].")
    out = Path(cfg.out)
    save_config(cfg, out / "csg_aliasing_config.json")
    t0 = time.time()
    epsilon = Fraction(cfg.epsilon).limit_denominator(10**6)
    csg = csg_trajectories(cfg.n_candidates, cfg.horizon, epsilon)
    per_turn = [active_at(csg, t) for t in range(max(map(len, csg["history"])))]
    analyses = [analyse_turn(sub, t) for t, (sub, _) in enumerate(per_turn)]
    table = exact_table(analyses)
    table = [table[0] + f" {'P(active)':>9}"] + [
        line + f" {float(mass):>9.4f}" for line, (_, mass) in zip(table[1:], per_turn)
    ]
    menu = [q.format(half=cfg.n_candidates // 2) for _, q in CSG_MENU]
    lines = [
        f"real Clue Selector Game (env.py, rule oracle, App. C reward): N={cfg.n_candidates}, "
        f"T={cfg.horizon}, epsilon={epsilon}, menu {menu} via arms "
        f"{[arm for arm, _ in CSG_MENU]}; {len(csg['p'])} trajectories, "
        f"sum p = {sum(csg['p'])}",
        "(1)-(3) exact, per turn t over the episodes still playing  "
        "[errors are E[(estimate - A_B(h_t,a_t))^2]]",
        *table,
    ]
    if cfg.turn < len(per_turn):
        sub = per_turn[cfg.turn][0]
        pair = aliasing_example(sub, cfg.turn)
        lines += [
            "",
            f"aliasing at t={cfg.turn}: same R, same menu question a_{cfg.turn}, "
            "different belief (menu index:answer per turn)",
        ]
        lines += ["  " + describe(sub, i, cfg.turn) for i in pair] if pair else ["  none"]
    text = "\n".join(lines)
    print(text)
    (out / "csg_aliasing.txt").write_text(text + "\n")
    print(
        f"wrote {out / 'csg_aliasing.txt'}, {out / 'csg_aliasing_config.json'} "
        f"in {time.time() - t0:.1f}s"
    )
    return csg, analyses


if __name__ == "__main__":
    main()
