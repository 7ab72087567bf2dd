"""The bit-reveal EDP E_d: adaptive policies vs belief-agnostic ones, checked numerically.

Implements the construction in the proof of Theorem A.2 (App. A) "Adaptive policies can strictly
outperform belief-agnostic policies" (= part (i), "Performance gap", of Theorem 3.2
"Adaptive policies require epistemic credit"):

    latent z* = (z_1, ..., z_d) uniform on {0,1}^d, actions {0,1}, observations {0,1,BOT},
    surface state s(h_t) = t, horizon d (turns t = 0, ..., d-1),
    turn 0:   a_0 = 0 reveals z_1, a_0 = 1 reveals BOT;
    turn t>0: o_t = z_{t+1} if a_t = z_t else BOT;
    R_T = 1 iff all d bits were observed.

What is computed (python -m theory.bit_reveal):
  * the exact success probability of EVERY deterministic belief-agnostic policy (an action
    sequence a_0..a_{d-1}), by playing all 2^d sequences against all 2^d latent strings; the
    best is 2^(1-d) exactly (integer counts, no floating point);
  * the exact success probability of the adaptive policy pi* of the proof (= 1);
  * random stochastic belief-agnostic policies mu_t in Delta({0,1}) by Monte Carlo, with
    Wilson intervals, against the closed form mu_0(0) * 2^(1-d) that Steps 3-4 of the proof
    give with equality;
  * two REINFORCE learners on the sparse terminal reward R_T: one sees only the turn index,
    one also sees the belief b_t. Same model, only the input differs.

Choices where the paper is not explicit (none changes the theorem):
  1. Indexing. The paper numbers bits z_1..z_d and turns t = 0..d-1; arrays here are 0-based,
     so z_t is z[:, t-1]. Turn t reveals z_{t+1}, so turn d-1 reveals z_d and the horizon d
     holds exactly d observations: pi* succeeds with probability exactly 1 (checked).
  2. After a BOT the paper's formula still reveals z_{t+1} at turn t if a_t happens to equal
     the never-observed z_t. We keep the formula as written. It does not matter for success:
     bit z_{t+1} can only be revealed at turn t, so success <=> no turn returns BOT.
  3. "Belief-agnostic" is read as the paper's Step 3 does: the action distribution depends on
     t only, mu(a_t | h_t) = mu_t(a_t). A policy that also conditions on its own past actions
     (but not on observations) is a mixture of action sequences, and its success is a convex
     combination of the enumerated ones, so the exhaustive check covers it too.
  4. Belief representation. Prior uniform and reveals exact, so b_t is the product of the
     marginals P(z_i = 1 | h_t), each in {0, 1/2, 1}; the adaptive learner is given that
     vector of marginals (the whole posterior), not the hand-picked relevant bit.
  5. The learners are not in the paper: they illustrate that a policy-gradient learner finds
     the adaptive policy when it can see b_t and cannot beat 2^(1-d) when it cannot.
"""

import time
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

import numpy as np

from theory._common import wilson_interval
from tools.cli import parse_config, save_config

BOT = -1  # the observation "nothing revealed" (the paper's bottom symbol)


@dataclass
class Config:
    seed: int = field(default=0, metadata={"help": "seed for every random draw"})
    d_max_exact: int = field(
        default=12,
        metadata={"help": "exact enumeration and Monte Carlo for d = 1..d_max_exact (cost ~4^d)"},
    )
    mc_policies: int = field(
        default=16, metadata={"help": "random belief-agnostic policies mu drawn per depth d"}
    )
    mc_episodes: int = field(
        default=20000, metadata={"help": "Monte Carlo episodes per random policy"}
    )
    learn_d_min: int = field(default=2, metadata={"help": "smallest depth d for the learners"})
    learn_d_max: int = field(default=8, metadata={"help": "largest depth d for the learners"})
    steps: int = field(default=1000, metadata={"help": "policy-gradient updates per learner"})
    batch: int = field(default=256, metadata={"help": "episodes per policy-gradient update"})
    lr: float = field(default=0.1, metadata={"help": "Adam step size"})
    eval_every: int = field(default=10, metadata={"help": "updates between learning-curve points"})
    out: str = field(
        default="theory/out",
        metadata={
            "help": "output folder (relative to the working directory) for table, plot, config"
        },
    )


# ---------------------------------------------------------------- the environment E_d


def observe(z, t, a):
    """Observation kernel O of E_d at turn t. z: (..., d) bits, a: (...) actions -> (...)."""
    if t == 0:
        return np.where(a == 0, z[..., 0], BOT)
    # a_t must equal the previously revealed bit z_t (0-based column t-1) to reveal z_{t+1}
    return np.where(a == z[..., t - 1], z[..., t], BOT)


def belief(obs):
    """Posterior marginals P(z_i = 1 | h_t), (B, d). obs: (B, d), column t holds o_t, which is
    bit z_{t+1} (also column t of z) or BOT, so columns of obs and of the belief line up."""
    return np.where(obs == BOT, 0.5, obs).astype(float)


def all_bit_strings(d):
    """Every element of {0,1}^d as rows, (2^d, d); also every action sequence of length d."""
    return ((np.arange(2**d)[:, None] >> np.arange(d)[::-1]) & 1).astype(np.int8)


# ---------------------------------------------------------------- exact results


def agnostic_success_counts(d):
    """For each deterministic belief-agnostic policy (action sequence), the number of latent
    strings z for which it succeeds. Returns (2^d,) ints; success prob = count / 2^d."""
    seqs = all_bit_strings(d)[:, None, :]  # (2^d, 1, d) action sequences
    z = all_bit_strings(d)[None, :, :]  # (1, 2^d, d) latent strings
    revealed_all = np.ones((2**d, 2**d), dtype=bool)
    for t in range(d):
        revealed_all &= observe(z, t, seqs[..., t]) != BOT
    return revealed_all.sum(axis=1)


def best_agnostic_success(d):
    """Exact max over deterministic belief-agnostic policies of P(success), as a Fraction."""
    return Fraction(int(agnostic_success_counts(d).max()), 2**d)


def agnostic_success_formula(p1, d):
    """P(success | mu) = mu_0(0) * 2^(1-d) for a belief-agnostic mu with mu_t(1) = p1[t]
    (Steps 3-4 of the proof, which hold with equality): turn 0 passes w.p. mu_0(0), every later
    turn w.p. exactly 1/2 whatever mu_t is. Works on (..., d) arrays of p1."""
    return (1.0 - np.asarray(p1)[..., 0]) * 2.0 ** (1 - d)


def adaptive_policy(t, b):
    """pi* of the proof, as P(a_t = 1): a_0 = 0, then a_t = z_t, the bit revealed at t-1.
    b: (B, d) belief marginals. If z_t is unknown (after a BOT) it plays 0; nothing can be
    won from there."""
    if t == 0:
        return np.zeros(b.shape[0])
    return (b[:, t - 1] == 1.0).astype(float)


def simulate(policy, z, rng):
    """Roll out a closed-loop policy on latent strings z: (B, d). policy(t, b) -> P(a_t=1), (B,).
    Returns obs (B, d) and the success indicator (B,)."""
    B, d = z.shape
    obs = np.full((B, d), BOT)
    for t in range(d):
        a = (rng.random(B) < policy(t, belief(obs))).astype(np.int8)
        obs[:, t] = observe(z, t, a)
    return obs, (obs != BOT).all(axis=1)


def exact_adaptive_success(d):
    """P(success | pi*) by playing pi* (deterministic) against all 2^d strings; a Fraction."""
    _, success = simulate(adaptive_policy, all_bit_strings(d), np.random.default_rng(0))
    return Fraction(int(success.sum()), 2**d)


# ---------------------------------------------------------------- Monte Carlo: random mu


def mc_random_agnostic(d, n_policies, n_episodes, rng):
    """Draw n_policies belief-agnostic policies (mu_t(1) ~ U(0,1) per turn), play each for
    n_episodes on fresh z. Returns p1 (K, d) and success counts (K,)."""
    p1 = rng.random((n_policies, d))
    z = rng.integers(0, 2, (n_policies * n_episodes, d))
    per_episode_p1 = np.repeat(p1, n_episodes, axis=0)  # (K * n, d), policy k's rows together
    _, success = simulate(lambda t, b: per_episode_p1[:, t], z, rng)
    return p1, success.reshape(n_policies, n_episodes).sum(axis=1)


# ---------------------------------------------------------------- the learners


def features(t, b, sees_belief):
    """Input of the logistic policy at turn t: [1, b_t - 1/2] or [1, 0...0]. (B, d+1)."""
    x = np.zeros((b.shape[0], b.shape[1] + 1))
    x[:, 0] = 1.0
    if sees_belief:
        x[:, 1:] = b - 0.5
    return x


def learner_policy(W, sees_belief):
    """P(a_t = 1 | h_t) = sigmoid(W[t] . features). W: (d, d+1), one weight row per turn."""
    return lambda t, b: 1.0 / (1.0 + np.exp(-features(t, b, sees_belief) @ W[t]))


def exact_success(policy, d):
    """Exact P(success) of any closed-loop policy on E_d. On the successful path the belief at
    turn t is determined by z (bits z_1..z_t revealed), and the required action is 0 at t = 0
    and z_t after, so P(success | z) is a product of per-turn probabilities; average over z."""
    z = all_bit_strings(d)
    obs = np.full(z.shape, BOT)
    p_success = np.ones(len(z))
    for t in range(d):
        required = np.zeros(len(z)) if t == 0 else z[:, t - 1]
        p1 = policy(t, belief(obs))
        p_success *= np.where(required == 1, p1, 1.0 - p1)
        obs[:, t] = z[:, t]
    return float(p_success.mean())


def train_learner(d, sees_belief, cfg, rng):
    """REINFORCE with a batch-mean baseline on the terminal reward R_T, Adam updates.
    Returns the weights W (d, d+1) and the curve [(update, exact success)]."""
    W = np.zeros((d, d + 1))
    m, v = np.zeros_like(W), np.zeros_like(W)  # Adam moments
    curve = [(0, exact_success(learner_policy(W, sees_belief), d))]
    for step in range(1, cfg.steps + 1):
        z = rng.integers(0, 2, (cfg.batch, d))
        obs = np.full((cfg.batch, d), BOT)
        grad_logp = np.zeros((cfg.batch, d, d + 1))  # d log pi(a_t|h_t) / d W[t], per episode
        for t in range(d):
            x = features(t, belief(obs), sees_belief)
            p1 = 1.0 / (1.0 + np.exp(-x @ W[t]))
            a = (rng.random(cfg.batch) < p1).astype(np.int8)
            grad_logp[:, t] = (a - p1)[:, None] * x
            obs[:, t] = observe(z, t, a)
        R_T = (obs != BOT).all(axis=1).astype(float)
        advantages = R_T - R_T.mean()
        grad = (advantages[:, None, None] * grad_logp).mean(axis=0)
        # Adam ascent: its per-weight step normalisation is what lets the rare early successes
        # (probability 2^-d at initialisation) move the policy at all
        m = 0.9 * m + 0.1 * grad
        v = 0.999 * v + 0.001 * grad**2
        W += cfg.lr * (m / (1 - 0.9**step)) / (np.sqrt(v / (1 - 0.999**step)) + 1e-8)
        if step % cfg.eval_every == 0 or step == cfg.steps:
            curve.append((step, exact_success(learner_policy(W, sees_belief), d)))
    return W, curve


# ---------------------------------------------------------------- report


def fmt_prob(x):
    return f"{x:.3e}" if x < 1e-2 else f"{x:.4f}"


def plot_depths(ax, rows):
    """Left panel: P(success) against depth d for the bound, the exact policies, the best
    random mu (Monte Carlo) and the two learners."""
    learned = [r for r in rows if r["learned_adaptive"] is not None]
    rows = [r for r in rows if r["best_agnostic"] is not None]
    ds = np.array([r["d"] for r in rows])
    ax.semilogy(ds, [2.0 ** (1 - d) for d in ds], "k-", lw=1, label="bound $2^{1-d}$")
    ax.semilogy(
        ds,
        [float(r["best_agnostic"]) for r in rows],
        "ko",
        mfc="none",
        label="best deterministic agnostic (exact)",
    )
    ax.semilogy(ds, [float(r["adaptive"]) for r in rows], "g^-", label="adaptive $\\pi^*$ (exact)")
    mc, lo, hi = (np.array([r[k] for r in rows]) for k in ("mc_best", "mc_lo", "mc_hi"))
    ax.errorbar(
        ds + 0.15,
        np.maximum(mc, 1e-6),
        yerr=[mc - lo, hi - mc],
        fmt="s",
        ms=3,
        color="tab:orange",
        label="best of random $\\mu$ (MC, 95% CI)",
    )
    ax.semilogy(
        [r["d"] for r in learned],
        [r["learned_agnostic"] for r in learned],
        "bx--",
        label="learned, sees $t$ only",
    )
    ax.semilogy(
        [r["d"] for r in learned],
        [r["learned_adaptive"] for r in learned],
        "r+--",
        label="learned, sees $b_t$",
    )
    ax.set(xlabel="depth $d$", ylabel="P(success)", title="E_d: success vs depth")
    ax.legend(fontsize=7)


def plot_curves(ax, curves):
    """Right panel: each learner's exact P(success) over its updates, one colour per depth d
    (solid: sees b_t, dotted: t only)."""
    import matplotlib.pyplot as plt

    learn_ds = sorted({d for d, _ in curves})
    for (d, sees_belief), curve in curves.items():
        steps, success = zip(*curve)
        colour = plt.cm.viridis(learn_ds.index(d) / max(1, len(learn_ds) - 1))
        ax.semilogy(
            steps,
            success,
            "-" if sees_belief else ":",
            color=colour,
            lw=1,
            label=f"d={d}" if sees_belief else None,
        )
    ax.set(
        xlabel="policy-gradient update",
        ylabel="P(success) (exact)",
        title="learning curves (solid: sees $b_t$, dotted: $t$ only)",
    )
    ax.legend(fontsize=7, ncol=2)


def plot(rows, curves, path):
    """The figure: success against depth beside the learning curves, saved to path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    plot_depths(ax, rows)
    plot_curves(ax2, curves)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def check_flags(cfg):
    """Stop with one sentence, before anything is written, if a flag is out of range."""
    if not 1 <= cfg.d_max_exact <= 14 or not 1 <= cfg.learn_d_min <= cfg.learn_d_max:
        raise SystemExit(
            "Need 1 <= --d-max-exact <= 14 (memory grows as 4^d) and "
            "1 <= --learn-d-min <= --learn-d-max."
        )
    if min(cfg.mc_policies, cfg.mc_episodes, cfg.steps, cfg.batch, cfg.eval_every) < 1:
        raise SystemExit(
            "--mc-policies, --mc-episodes, --steps, --batch and --eval-every must be >= 1."
        )


def depth_row(d, cfg, rng):
    """Depth d's row of the table: the bound 2^(1-d), and for d <= d_max_exact the exact
    results and the Monte Carlo check of random mu; the learners' columns are left blank."""
    exact = d <= cfg.d_max_exact
    row = {
        "d": d,
        "bound": Fraction(1, 2 ** (d - 1)),
        "best_agnostic": None,
        "adaptive": None,
        "mc_best": np.nan,
        "mc_lo": np.nan,
        "mc_hi": np.nan,
        "mc_above_bound": 0,
        "mc_exact_in_ci": 0,
        "learned_agnostic": None,
        "learned_adaptive": None,
    }
    if exact:
        row["best_agnostic"] = best_agnostic_success(d)
        row["adaptive"] = exact_adaptive_success(d)
        p1, successes = mc_random_agnostic(d, cfg.mc_policies, cfg.mc_episodes, rng)
        cis = [wilson_interval(k, cfg.mc_episodes) for k in successes]
        exact_mu = agnostic_success_formula(p1, d)
        k_best = int(np.argmax(successes))
        row.update(
            mc_best=successes[k_best] / cfg.mc_episodes,
            mc_lo=cis[k_best][0],
            mc_hi=cis[k_best][1],
            mc_above_bound=sum(lo > 2.0 ** (1 - d) for lo, _ in cis),
            mc_exact_in_ci=sum(lo <= e <= hi for (lo, hi), e in zip(cis, exact_mu)),
        )
    return row


def report(rows, mc_policies):
    """The printed table, one line per depth d; '-' where a column was not computed."""
    header = (
        f"{'d':>2} {'best agnostic (exact)':>22} {'2^(1-d)':>8} {'adaptive':>8} "
        f"{'best random mu, MC [95% Wilson]':>34} {'CI>bnd':>6} {'exact in CI':>11} "
        f"{'learned t-only':>14} {'learned b_t':>11}"
    )
    lines = [header]
    for r in rows:
        same = " ==" if r["best_agnostic"] == r["bound"] else " !="
        best = "-" if r["best_agnostic"] is None else f"{str(r['best_agnostic']):>10}{same}"
        mc = (
            f"{fmt_prob(r['mc_best'])} [{fmt_prob(r['mc_lo'])}, {fmt_prob(r['mc_hi'])}]"
            if r["best_agnostic"] is not None
            else "-"
        )
        la = fmt_prob(r["learned_agnostic"]) if r["learned_agnostic"] is not None else "-"
        lb = fmt_prob(r["learned_adaptive"]) if r["learned_adaptive"] is not None else "-"
        has_mc = r["best_agnostic"] is not None
        n_in = f"{r['mc_exact_in_ci']}/{mc_policies}" if has_mc else "-"
        above = r["mc_above_bound"] if has_mc else "-"
        lines.append(
            f"{r['d']:>2} {best:>22} {str(r['bound']):>8} {str(r['adaptive'] or '-'):>8} "
            f"{mc:>34} {above:>6} {n_in:>11} {la:>14} {lb:>11}"
        )
    return "\n".join(lines)


def main(argv=None):
    cfg = parse_config(Config, argv, description=__doc__.splitlines()[0])
    check_flags(cfg)
    out = Path(cfg.out)
    save_config(cfg, out / "bit_reveal_config.json")
    rng = np.random.default_rng(cfg.seed)
    t0 = time.time()

    rows, curves = [], {}
    for d in range(1, max(cfg.d_max_exact, cfg.learn_d_max) + 1):
        row = depth_row(d, cfg, rng)
        if cfg.learn_d_min <= d <= cfg.learn_d_max:
            for sees_belief in (False, True):
                W, curve = train_learner(d, sees_belief, cfg, rng)
                curves[(d, sees_belief)] = curve
                key = "learned_adaptive" if sees_belief else "learned_agnostic"
                row[key] = exact_success(learner_policy(W, sees_belief), d)
        rows.append(row)

    table = report(rows, cfg.mc_policies)
    print(table)
    (out / "bit_reveal.txt").write_text(table + "\n")
    plot(rows, curves, out / "bit_reveal.png")
    print(
        f"wrote {out / 'bit_reveal.txt'}, {out / 'bit_reveal.png'}, "
        f"{out / 'bit_reveal_config.json'} in {time.time() - t0:.1f}s"
    )
    return rows, curves


if __name__ == "__main__":
    main()
