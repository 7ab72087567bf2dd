"""Our exported tables load unchanged in the authors' tools.

The contract below is written from what the authors publish about their data, not from their
code: the paper's App. D figure "CSG dataset structure" (the fields of model_summary, runs,
episodes and turns) and the documented input of their recompute script
(csu-signal/echo-edp, recompute_csg_main_metrics_from_hf.py, "Expected dataset layout"):

- turns: model_key (or model), run_id, episode_id, turn_index (or turn); candidates_before,
  candidates_after, eliminated (which must equal before - after), redundant and hint;
  raw_response (or completion) for Reason%; at most 10 turns per episode, no repeated turn.
- Resolve comes from an episodes table (episode_id, resolved), or from episode_resolved
  repeated on the turns (which must not disagree within an episode: a turn-level "resolved"
  read there is the classic conflict), or from the last turn's candidates_after.
"""

import csv
import json
from collections import defaultdict

import pytest

import evaluate

MAX_TURNS = 10
FIGURE_FIELDS = {  # App. D, figure "CSG dataset structure"
    "model_summary": {
        "model_key",
        "group",
        "n_runs",
        "resolve_rate",
        "zero_rate",
        "quality",
        "grounded",
        "grounded_recover",
        "res_after_zero",
    },
    "runs": {
        "resolve_rate",
        "zero_rate",
        "quality_mean",
        "grounded_rate",
        "late_calib",
        "reason_pct",
        "grounded_recover_rate",
    },
    "episodes": {
        "episode_id",
        "secret",
        "resolved",
        "turns_taken",
        "final_candidates",
        "zero_rate",
        "grounded_rate",
        "resolved_after_zero",
    },
    "turns": {
        "arm",
        "question",
        "question_type",
        "raw_response",
        "completion",
        "hint",
        "answer",
        "candidates_before",
        "eliminated",
        "candidates_after",
        "zero_nonred",
        "elim_quality",
        "grounded",
        "late_narrow",
        "reasoning_presence",
        "prev_zero_nonred",
        "grounded_recover",
        "recovery_quality",
        "next_bad_after_this_zero",
    },
}
# the episode-level fields their results script reads, and the run and episode indices
EPISODE_FIELDS = {
    "resolved",
    "quality_mean",
    "grounded_recover_rate",
    "reason_pct",
    "run_index",
    "episode_index",
}


def first(row, *names):
    return next((row[n] for n in names if n in row and row[n] not in ("", None)), None)


def as_bool(value) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "1", "yes"):
        return True
    if text in ("false", "0", "no", ""):
        return False
    raise ValueError(f"not a boolean: {value!r}")


def load_as_documented(turns: list[dict], episodes: list[dict] | None) -> dict:
    """The documented contract: raise on what the authors' loader refuses; return per run the
    episodes' resolution, read the documented way (episodes table first, then turns)."""
    seen, by_episode = set(), defaultdict(list)
    for row in turns:
        ids = (
            first(row, "model_key", "model"),
            first(row, "run_id"),
            first(row, "episode_id"),
            first(row, "turn_index", "turn"),
        )
        if any(x is None for x in ids):
            raise ValueError(f"missing identifier in {ids}")
        before, after, eliminated = (
            float(row[k]) for k in ("candidates_before", "candidates_after", "eliminated")
        )
        if before <= 0 or after < 0 or eliminated != before - after:
            raise ValueError(f"inconsistent counts {before}, {after}, {eliminated}")
        if "raw_response" not in row and "completion" not in row:
            raise ValueError("Reason% needs raw_response or completion")
        key = tuple(str(x) for x in ids)
        if key in seen:
            raise ValueError(f"duplicate turn {key}")
        seen.add(key)
        by_episode[key[:3]].append(row)
    resolved_from_episodes = {
        (str(first(e, "model_key", "model")), str(e["run_id"]), str(e["episode_id"])): as_bool(
            first(e, "resolved", "episode_resolved")
        )
        for e in episodes or []
    }
    outcome = defaultdict(list)
    for key, rows in by_episode.items():
        if len(rows) > MAX_TURNS:
            raise ValueError(f"episode {key} has {len(rows)} turns")
        if key in resolved_from_episodes:
            resolved = resolved_from_episodes[key]
        else:
            repeated = {
                as_bool(v)
                for r in rows
                if (v := first(r, "episode_resolved", "resolved")) is not None
            }
            if len(repeated) > 1:
                raise ValueError(f"Conflicting episode_resolved values for {key}")
            rows = sorted(rows, key=lambda r: int(first(r, "turn_index", "turn")))
            resolved = repeated.pop() if repeated else float(rows[-1]["candidates_after"]) == 1
        outcome[key[:2]].append(resolved)
    return {run: sum(v) / len(v) for run, v in outcome.items()}


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    out = tmp_path_factory.mktemp("eval")
    evaluate.main(
        [
            "--policies",
            "random,fixed_sequence",
            "--runs",
            "2",
            "--max-secrets",
            "6",
            "--out",
            str(out),
            "--no-figures",
        ]
    )
    return out


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_exported_tables_load_in_the_documented_loader(exported, fmt):
    """Both formats load: identifiers, counts, ≤ 10 turns, and Resolve per run equal to ours,
    whether read from the episodes table or from the turns alone (no conflicting resolution)."""
    read = read_csv if fmt == "csv" else (lambda p: [json.loads(line) for line in open(p)])
    turns, episodes = read(exported / f"turns.{fmt}"), read(exported / f"episodes.{fmt}")
    ours = {
        (r["model_key"], r["run_id"]): float(r["resolve_rate"])
        for r in read(exported / f"runs.{fmt}")
    }
    assert load_as_documented(turns, episodes) == pytest.approx(ours)
    assert load_as_documented(turns, None) == pytest.approx(ours)  # turns alone: episode_resolved
    assert 0 < min(ours.values()) and max(ours.values()) == 1.0  # random resolves some, not all


def test_a_turn_level_resolved_column_would_conflict(exported):
    """Why the turn-level flag is `turn_resolved`: under the name `resolved` (as before) the
    loader, reading turns alone, takes it as the episode's resolution and refuses the episode."""
    turns = read_csv(exported / "turns.csv")
    renamed = [
        {
            ("resolved" if k == "turn_resolved" else k): v
            for k, v in r.items()
            if k != "episode_resolved"
        }
        for r in turns
    ]
    with pytest.raises(ValueError, match="Conflicting"):
        load_as_documented(renamed, None)


def test_every_field_of_the_papers_dataset_figure_is_exported(exported):
    for table, fields in FIGURE_FIELDS.items():
        assert fields <= set(read_csv(exported / f"{table}.csv")[0]), table
    episode = read_csv(exported / "episodes.csv")[0]
    assert EPISODE_FIELDS <= set(episode)
    turn = read_csv(exported / "turns.csv")[0]
    assert {"run_index", "episode_index", "episode_resolved", "turn_resolved"} <= set(turn)
