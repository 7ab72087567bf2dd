"""Evaluation and training metrics of the Clue Selector Game, as pure functions over turn rows.

Paper: section 5.1 "Evaluation Strategy", Table 1 (tab:csg_main_results), App. C "Main
Evaluation Metric Definitions", the hint-type table (tab:csg_hint_distribution_all), the arm
tables (tab:arm_metric_definitions, tab:arm_routing_belief_diagnostics), the four recovery
tables (tab:csg_recovery_zero / _bad / _low / _late_bad), the training metrics
(tab:metric_definitions) and the paired seed-level t-test (tab:echo_grpo_final_window_stats).

Input: a turn row is a dict with the fields of env.TurnRecord (`TurnRecord.as_dict()`); an
episode is the list of its turn rows in turn order; a run is a list of episodes. The turn index
`turn` is 0-based, as everywhere in the code (the paper's tables count turns from 1, so its
"position >= 5" is turn >= 4 here). Every rate is a fraction in [0, 1]
except `reason_pct` (percent); an empty denominator gives NaN, never 0.

The turn-level definitions are those of the paper's recompute script (wasted = redundant or
invalid, see below):
    Qual      = min(eliminated / max(|C_t| / 2, 1), 1)        elimination relative to a halving
    grounded  = not wasted and Qual >= 0.5
    zero      = not wasted and eliminated == 0                "new but uninformative question"
    late      = turn >= 4 (the fifth turn on) and |C_t| <= 10  a late turn with a narrow belief

Choices where the paper is open (kept fixed; the README glossary repeats them):
- Invalid turns (unreadable action, env.py) did not exist in the paper. They count like
  redundant turns: *wasted* turns, not new-but-uninformative questions. So they are outside
  Zero's denominator, never grounded (Qual = 0), and count as redundant in LateCalib,
  NextBad, NextRed and the "bad" events.
- Inconsistent turns (an LLM-oracle answer refused because it was false of the secret) are
  ordinary turns that eliminated nothing: the policy is charged for them. The rule oracle
  never produces one.
- Events of the recovery tables: zero = a zero turn; bad = a zero or wasted turn; low-quality
  = a non-wasted turn with Qual < 0.5 (an answered question that removed under a quarter of
  C_t); late-bad = a bad turn at turn >= 4. As for the paper's ZeroEvents, an event needs
  a following turn in the same episode.
- Gain = the next turn's fractional elimination |C_t \\ C_t+1| / |C_t| (r_info); Sust2 = the
  next two turns are both grounded, or the next one is grounded and resolves the episode;
  NextRed = the next turn is wasted. EpRes = among the episodes with an event, the fraction
  that resolve: per episode, as the paper's numbers show (its Table 1 ResAfterZero and its
  zero-event EpRes agree for every model whose runs are the same); `EpResPerEvent` keeps the
  per-event reading, which weighs an episode by its number of events.
- Hint types are read from the structured turn fields (question_type, redundant, invalid,
  hint_status), not by keyword matching on the hint text as the paper did, so every turn
  lands in exactly one category (the paper's columns overlap and sum to over 100%).
- Aggregation (mean_sem): a metric is computed per run, then mean and SEM across runs; a run
  in which it is undefined (NaN) is left out of its mean and SEM. evaluate.py does this for
  Table 1 and LateCalib, and pools the episodes of all runs for the arm, hint-type and
  recovery-event tables, for which the paper gives single numbers.

What a run logs (train.py writes these names to metrics.jsonl; `clue/` is the play of a training
batch, sampled; `eval/` the held-out secrets, greedy, `eval/sampled_*` at T = 1; `train/` the
update):
- reward, normalized_reward: mean turn reward r_t (App. C); mean r_info = (|C_t| - |C_t+1|) /
  |C_t|
- episode_resolve_rate / resolve_rate, turn_resolve_rate, mean_turn: episodes that reached C =
  {secret} within T turns; turns that did; the mean 1-based turn of resolution
- episode_length, turns_saved, efficiency_bonus: turns per episode; T - turns taken on resolved
  episodes; mean r_efficiency
- eliminated_mean, candidates_before, candidates_after: candidates removed per turn; |C_t|
  before and after the turn
- zero_rate, quality_mean, grounded_rate: Table 1's Zero (answered turns that eliminated
  nothing), Qual. (elimination relative to a halving), Ground (Qual. >= 0.5)
- grounded_recover_rate, res_after_zero, reason_pct, late_calib: GRecover, ResAfterZero,
  Reason%, LateCalib (App. C)
- zero_events, rec1, rec_q, next_zero, next_bad, ttr, ttr_succ: App. C recovery after
  zero-elimination events (metrics.recovery)
- redundancy_rate, diversity_rate, invalid_rate, inconsistent_rate, arm_match_rate: repeated
  questions; questions new to every arm; unreadable actions; hints refused as false of the
  secret; questions the chosen arm owns
- efficiency, mean_total_reward, mean_eliminated, mean_final_candidates, mean_turns_taken: the
  paper's evaluation-script aggregates, per episode first (metrics.episode_aggregates)
- eval/sampled_resolve_rate, eval/sampled_resolve_sem, eval/sampled_episode_length: held-out
  secrets played 4 times each at T = 1: resolve rate, its standard error over secrets, episode
  length
- eval/validation_score, eval/validation_smoothed: mean of greedy and sampled resolve on the
  validation secrets; its mean over --validation-window evaluations (chooses the kept
  checkpoint)
- train/loss, train/clip_fraction, train/ratio_mean, train/ratio_max: -J of Eq. 2 per optimizer
  step; terms where the clip is active; rho
- train/kl, train/kl_ref, train/early_stop: KL(pi_old || pi) per action (k3) before the last
  optimizer step; KL to the initial policy; 1 if --target-kl stopped the update
- train/grad_norm, train/optimizer_steps, train/nonfinite_steps_skipped, train/lr: gradient norm
  before clipping; steps taken; steps skipped for a non-finite gradient; the annealed learning
  rate
- train/group_return_std, train/advantage_abs_mean, train/entropy: spread of a secret's G
  returns (near 0: the group teaches nothing); mean |advantage|; entropy of the sampling
  distribution
- train/first_step_log_ratio_max, train/behaviour_logprob_gap, _drift,
  train/behaviour_action_log_ratio_max_abs, _mean_abs: 0 exactly where pi_old is scored again
  before the update (on a GPU, or --old-logprobs recompute), float rounding where it is the
  sampled log-probs (a CPU run, whose gaps are then 0); the largest and the mean gap between
  sampled and recomputed log-probs, per token and per action (an action's is the sum of its
  tokens', what Eq. 2's rho sees)
- train/credit_onestep_corr: correlation of the estimator's credit with the one-step Bayesian
  advantage (fidelity.credit_probe)
- train/seconds_per_step, _rollout, _update, _eval, train/oracle_failures: wall time of a step
  and its parts; LLM-oracle requests that failed after retries
"""

from __future__ import annotations

from game.prompts import first_json_object

GROUNDED_QUAL = 0.5  # a turn is grounded at Qual >= 0.5 (App. C "Ground")
LATE_TURN = 4  # late_narrow: 0-based turn >= 4 (the paper's 1-based position >= 5) ...
NARROW_CANDIDATES = 10  # ... and |C_t| <= 10
NAN = float("nan")


def mean_or_nan(values) -> float:
    values = list(values)
    return sum(values) / len(values) if values else NAN


# ---------------------------------------------------------------------------------------------
# Turn-level quantities
# ---------------------------------------------------------------------------------------------


def elim_quality(row: dict) -> float:
    """Qual of one turn: eliminated / max(|C_t| / 2, 1), capped at 1 (1 = an exact halving or
    better)."""
    # BEGIN SOLUTION
    return min(row["eliminated"] / max(row["candidates_before"] / 2, 1), 1.0)
    # END SOLUTION


def frac_eliminated(row: dict) -> float:
    """Fractional elimination |C_t \\ C_t+1| / |C_t| (r_info of App. C, whatever the turn's
    reward)."""
    return row["eliminated"] / row["candidates_before"]


def is_wasted(row: dict) -> bool:
    """A redundant or invalid turn: no question reached the oracle."""
    return bool(row["redundant"] or row["invalid"])


def is_zero(row: dict) -> bool:
    """zero_nonredundant: a new question was answered and eliminated no candidate."""
    # BEGIN SOLUTION
    return not is_wasted(row) and row["eliminated"] == 0
    # END SOLUTION


def is_grounded(row: dict) -> bool:
    """Non-redundant, valid and Qual >= 0.5."""
    return not is_wasted(row) and elim_quality(row) >= GROUNDED_QUAL


def is_bad(row: dict) -> bool:
    """A zero turn or a wasted (redundant / invalid) turn."""
    return is_zero(row) or is_wasted(row)


def is_low_quality(row: dict) -> bool:
    """An answered (not wasted) turn with Qual < 0.5: zero turns included."""
    return not is_wasted(row) and elim_quality(row) < GROUNDED_QUAL


def is_late_narrow(row: dict) -> bool:
    """Position >= 5 (1-based) and at most 10 candidates before the turn."""
    return row["turn"] >= LATE_TURN and row["candidates_before"] <= NARROW_CANDIDATES


def has_reasoning(text: str) -> bool:
    """Reasoning presence of one response, as the paper's recompute script reads it: remove ```
    fences and strip; find the first decodable JSON object with an "arm" key; the text before it
    and the text after it, each stripped, joined by one space: reasoning if that is longer than
    10 characters. Without such a JSON object: if the whole text is over 50 characters."""
    text = (text or "").replace("```json", "").replace("```", "").strip()
    found = first_json_object(text, required=("arm",))
    if found is not None:
        _, start, end = found
        return len((text[:start].strip() + " " + text[end:].strip()).strip()) > 10
    return len(text) > 50


def episode_resolved(episode: list) -> bool:
    return bool(episode) and bool(episode[-1]["turn_resolved"])


# ---------------------------------------------------------------------------------------------
# Table 1 and LateCalib: one run = a list of episodes
# ---------------------------------------------------------------------------------------------


def all_turns(episodes):
    return [row for ep in episodes for row in ep]


def resolve(episodes) -> float:
    """Resolve: fraction of episodes whose candidate set reached {secret} within the budget."""
    return mean_or_nan(episode_resolved(ep) for ep in episodes)


def zero(episodes) -> float:
    """Zero: fraction of non-wasted turns that eliminated no candidate."""
    # BEGIN SOLUTION
    return mean_or_nan(is_zero(r) for r in all_turns(episodes) if not is_wasted(r))
    # END SOLUTION


def quality(episodes) -> float:
    """Qual.: mean elimination quality over all turns (wasted turns count as 0)."""
    # BEGIN SOLUTION
    return mean_or_nan(elim_quality(r) for r in all_turns(episodes))
    # END SOLUTION


def ground(episodes) -> float:
    """Ground: fraction of all turns that are grounded."""
    return mean_or_nan(is_grounded(r) for r in all_turns(episodes))


def late_calib(episodes) -> float:
    """LateCalib: fraction of late, narrow turns (turn >= 4, |C_t| <= 10) that are wasted."""
    return mean_or_nan(is_wasted(r) for r in all_turns(episodes) if is_late_narrow(r))


def reason_pct(episodes) -> float:
    """Reason%: percent of turns whose raw response has reasoning text (has_reasoning)."""
    return 100 * mean_or_nan(has_reasoning(r["raw_response"]) for r in all_turns(episodes))


def zero_events(episode: list) -> list[int]:
    """0-based indices of the episode's ZeroEvents: zero turns that have a following turn."""
    return [t for t in range(len(episode) - 1) if is_zero(episode[t])]


def res_after_zero(episodes) -> float:
    """ResAfterZero: among episodes with at least one ZeroEvent, the fraction that resolve."""
    return mean_or_nan(episode_resolved(ep) for ep in episodes if zero_events(ep))


# ---------------------------------------------------------------------------------------------
# Recovery after an event (App. C; tables tab:csg_recovery_*)
# ---------------------------------------------------------------------------------------------

EVENTS = {  # event name -> test of a turn row
    "zero": is_zero,
    "bad": is_bad,
    "low": is_low_quality,
    "late_bad": lambda row: is_bad(row) and row["turn"] >= LATE_TURN,
}


def recovery(episodes, event: str = "zero") -> dict:
    """What happens after each event that has a following turn in its episode.

    N        number of events
    Rec1     next turn is not wasted and eliminates >= 1 candidate
    GRec1    next turn is grounded (Table 1's GRecover for event "zero")
    RecQ     next turn's Qual
    Gain     next turn's fractional elimination (r_info)
    NextZero next turn is a zero turn
    NextBad  next turn is a zero or wasted turn
    NextRed  next turn is wasted (redundant or invalid)
    Sust2    next two turns grounded (or the next is grounded and resolves the episode)
    TTR      turns from the event to the first later grounded turn (next turn = 1), averaged
             over events that have one
    TTRsucc  a later grounded turn exists in the episode
    EpRes    among the episodes with at least one event, the fraction that resolve (per episode,
             as the paper reads it: for zero events it equals Table 1's ResAfterZero)
    EpResPerEvent  the same per event: an episode with three events counts three times
    Each other column is a mean over events (NaN when N == 0; TTR also when no event recovers).
    """
    test = EVENTS[event]
    rows, with_event = [], []
    for ep in episodes:
        events = [t for t in range(len(ep) - 1) if test(ep[t])]  # each has a following turn
        with_event += [episode_resolved(ep)] if events else []
        rows += [after_event(ep, t) for t in events]
    out = {"N": len(rows)}
    for key in "Rec1 GRec1 RecQ Gain NextZero NextBad NextRed Sust2 TTRsucc EpResPerEvent".split():
        out[key] = mean_or_nan(float(r[key]) for r in rows)
    out["TTR"] = mean_or_nan(r["TTR"] for r in rows if r["TTR"] is not None)
    out["EpRes"] = mean_or_nan(float(r) for r in with_event)
    return out


def after_event(ep: list, t: int) -> dict:
    """recovery's columns for one event at turn t of an episode: what its next turns did."""
    nxt = ep[t + 1]
    later = [k - t for k in range(t + 1, len(ep)) if is_grounded(ep[k])]
    sust2 = is_grounded(nxt) and (
        bool(nxt["turn_resolved"]) or (t + 2 < len(ep) and is_grounded(ep[t + 2]))
    )
    return dict(
        Rec1=not is_wasted(nxt) and nxt["eliminated"] >= 1,
        GRec1=is_grounded(nxt),
        RecQ=elim_quality(nxt),
        Gain=frac_eliminated(nxt),
        NextZero=is_zero(nxt),
        NextBad=is_bad(nxt),
        NextRed=is_wasted(nxt),
        Sust2=sust2,
        TTR=later[0] if later else None,
        TTRsucc=bool(later),
        EpResPerEvent=episode_resolved(ep),
    )


def episode_aggregates(episodes) -> dict:
    """What the paper's evaluation script (eval.py `aggregate`) prints for a run: every quantity
    computed per episode first, then averaged over episodes (so a long episode weighs as much as
    a short one).

    efficiency          total reward / turns taken
    mean_total_reward   sum of the turn rewards r_t (App. C)
    mean_eliminated     mean candidates eliminated per turn
    mean_final_candidates  |C| when the episode ended
    arm_match_rate, redundancy_rate, diversity_rate   fraction of the episode's turns with the flag
    mean_turns_taken    turns played
    """
    per = lambda f: mean_or_nan(f(ep) for ep in episodes if ep)
    share = lambda key: per(lambda ep: sum(bool(r[key]) for r in ep) / len(ep))
    return {
        "efficiency": per(lambda ep: sum(r["reward"] for r in ep) / len(ep)),
        "mean_total_reward": per(lambda ep: sum(r["reward"] for r in ep)),
        "mean_eliminated": per(lambda ep: sum(r["eliminated"] for r in ep) / len(ep)),
        "mean_final_candidates": per(lambda ep: ep[-1]["candidates_after"]),
        "arm_match_rate": share("arm_match"),
        "redundancy_rate": share("redundant"),
        "diversity_rate": share("novel"),
        "mean_turns_taken": per(len),
    }


AGGREGATE_KEYS = (
    "efficiency",
    "mean_total_reward",
    "mean_eliminated",
    "mean_final_candidates",
    "arm_match_rate",
    "redundancy_rate",
    "diversity_rate",
    "mean_turns_taken",
)
RUN_KEYS = (
    "resolve_rate",
    "zero_rate",
    "quality_mean",
    "grounded_rate",
    "grounded_recover_rate",
    "res_after_zero",
    "reason_pct",
    "late_calib",
    "zero_events",
    "rec1",
    "rec_q",
    "next_zero",
    "next_bad",
    "ttr",
    "ttr_succ",
) + AGGREGATE_KEYS


def run_metrics(episodes) -> dict:
    """One row of the `runs` table (App. D): Table 1, LateCalib, zero-event recovery and the
    paper's evaluation-script aggregates of one run."""
    rec = recovery(episodes, "zero")
    return {
        "resolve_rate": resolve(episodes),
        "zero_rate": zero(episodes),
        "quality_mean": quality(episodes),
        "grounded_rate": ground(episodes),
        "grounded_recover_rate": rec["GRec1"],
        "res_after_zero": res_after_zero(episodes),
        "reason_pct": reason_pct(episodes),
        "late_calib": late_calib(episodes),
        "zero_events": rec["N"],
        "rec1": rec["Rec1"],
        "rec_q": rec["RecQ"],
        "next_zero": rec["NextZero"],
        "next_bad": rec["NextBad"],
        "ttr": rec["TTR"],
        "ttr_succ": rec["TTRsucc"],
        **episode_aggregates(episodes),
    }


# ---------------------------------------------------------------------------------------------
# The turns and episodes tables' metric columns (App. D, fig:csg_dataset_structure)
# ---------------------------------------------------------------------------------------------


def turn_columns(episode: list) -> list[dict]:
    """Per turn: zero_nonred, elim_quality, grounded, late_narrow, reasoning_presence, and the
    recovery diagnostics prev_zero_nonred, grounded_recover (previous turn zero and this one
    grounded), recovery_quality (this turn's Qual after a zero turn, else None) and
    next_bad_after_this_zero (this turn zero and the next one bad)."""
    out = []
    for t, r in enumerate(episode):
        prev_zero = t > 0 and is_zero(episode[t - 1])
        out.append(
            dict(
                zero_nonred=is_zero(r),
                elim_quality=elim_quality(r),
                grounded=is_grounded(r),
                late_narrow=is_late_narrow(r),
                reasoning_presence=has_reasoning(r["raw_response"]),
                prev_zero_nonred=prev_zero,
                grounded_recover=prev_zero and is_grounded(r),
                recovery_quality=elim_quality(r) if prev_zero else None,
                next_bad_after_this_zero=is_zero(r)
                and t + 1 < len(episode)
                and is_bad(episode[t + 1]),
            )
        )
    return out


def episode_columns(episode: list) -> dict:
    """Per episode, the columns the paper's episodes table and its results script read:
    zero_rate, grounded_rate, quality_mean, grounded_recover_rate (NaN without a ZeroEvent),
    reason_pct, and resolved_after_zero (None without a ZeroEvent)."""
    return {
        "zero_rate": zero([episode]),
        "grounded_rate": ground([episode]),
        "quality_mean": quality([episode]),
        "grounded_recover_rate": recovery([episode], "zero")["GRec1"],
        "reason_pct": reason_pct([episode]),
        "resolved_after_zero": episode_resolved(episode) if zero_events(episode) else None,
    }


# ---------------------------------------------------------------------------------------------
# Training metrics (tab:metric_definitions): logged by train.py every step, so one pass.
# ---------------------------------------------------------------------------------------------


def training_metrics(turn_rows: list, episode_rows: list, max_turns: int) -> dict:
    """The train/ metrics of one step, from its turn rows and episode rows (CSG.episode_summary).

    reward               mean per-turn reward r_t (App. C, all components)
    normalized_reward    mean r_info per turn: the fractional elimination part of the reward,
                         in [0, 1] (what the paper's code logged under this name)
    episode_resolve_rate fraction of episodes resolved within the budget
    turn_resolve_rate    fraction of turns that reduced the candidate set to {secret}
    eliminated_mean      mean candidates eliminated per turn
    candidates_before    mean |C_t| at the start of a turn
    candidates_after     mean |C_t+1| after the turn
    arm_match_rate       fraction of turns with the arm-match bonus (question family owned by
                         the chosen arm, env.ARM_FAMILIES); random arms give about 1/K
    mean_turn            mean 1-based turn of resolution over resolved episodes (NaN if none)
    episode_length       mean turns played per episode, unresolved episodes included
    turns_saved          mean over episodes of (max_turns - turns taken) if resolved, else 0
    efficiency_bonus     mean r_efficiency per turn
    redundancy_rate      fraction of turns repeating a question to the same arm (the paper's
                         table mislabels this as "eliminates zero candidates": see zero_rate)
    diversity_rate       fraction of turns whose question was new to every arm in the episode
    invalid_rate         fraction of turns with an unreadable action
    inconsistent_rate    fraction of turns whose hint was refused as false of the secret
    zero_rate            fraction of non-wasted turns that eliminated nothing (Zero)
    """
    n = len(turn_rows)
    keys = "reward r_info turn_resolved eliminated candidates_before candidates_after arm_match"
    keys += " r_efficiency redundant novel invalid inconsistent"
    sums = dict.fromkeys(keys.split(), 0.0)
    for r in turn_rows:
        for key in sums:
            sums[key] += r[key]
    per_turn = {key: (value / n if n else NAN) for key, value in sums.items()}
    resolved_lengths = [e["turns_taken"] for e in episode_rows if e["resolved"]]
    n_ep = len(episode_rows)
    return {
        "reward": per_turn["reward"],
        "normalized_reward": per_turn["r_info"],
        "episode_resolve_rate": len(resolved_lengths) / n_ep if n_ep else NAN,
        "turn_resolve_rate": per_turn["turn_resolved"],
        "eliminated_mean": per_turn["eliminated"],
        "candidates_before": per_turn["candidates_before"],
        "candidates_after": per_turn["candidates_after"],
        "arm_match_rate": per_turn["arm_match"],
        "mean_turn": mean_or_nan(resolved_lengths),
        "episode_length": mean_or_nan(e["turns_taken"] for e in episode_rows),
        "turns_saved": sum(max_turns - t for t in resolved_lengths) / n_ep if n_ep else NAN,
        "efficiency_bonus": per_turn["r_efficiency"],
        "redundancy_rate": per_turn["redundant"],
        "diversity_rate": per_turn["novel"],
        "invalid_rate": per_turn["invalid"],
        "inconsistent_rate": per_turn["inconsistent"],
        "zero_rate": zero([turn_rows]),
    }


# ---------------------------------------------------------------------------------------------
# History reading (not in the paper): does the policy ask again what it has just been answered?
# ---------------------------------------------------------------------------------------------


def repeat_ratio(before, after) -> float:
    """sum_t pi(a_t | h_{t+1}) / sum_t pi(a_t | h_t), over the turns t whose action a_t was read and
    that the episode followed with another: how likely the policy is to take the action it just
    took once more, now that its answer sits in the history (now redundant), relative to how likely
    it took it. 1: the history changes nothing (a belief-agnostic policy, one that asks a mixture
    of good questions whatever it was told); 0: it never asks again. Resolve at T = 1 cannot tell
    the two apart: a history-blind mixture of good questions also resolves, by drawing new ones."""
    total = sum(before)
    return sum(after) / total if total > 0 else NAN
