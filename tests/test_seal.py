"""bench/seal.py: the sealed test split is drawn under its rule, once."""

import json
import random

import pytest

from bench import seal
from bench.seal import draw, main, used_splits
from env import secret_split


def test_the_draw_keeps_the_rule():
    """Whatever the random source gives, the seed drawn is new and holds out none of split 0's
    held-out secrets (the screens' validation secrets); the refused draws are counted."""
    validation = set(secret_split(100, 20, 0)[1])
    for k in range(20):
        used = {0, 1, 3594}
        seed, refused = draw(random.Random(k), used)
        assert seed not in used and not validation & set(secret_split(100, 20, seed)[1])
        replay = random.Random(k)
        first = [replay.randint(1, 999_999) for _ in range(refused + 1)]
        assert first[-1] == seed  # the draws before it were refused, not skipped


def test_every_split_a_result_file_names_is_used(tmp_path):
    """Rows' split seeds and splits.json's keys count as used, with 0 and 1 always."""
    (tmp_path / "a.json").write_text(json.dumps({"runs": [{"split_seed": 3594}, {"x": 1}]}))
    (tmp_path / "splits.json").write_text(json.dumps({"splits": {"7": {}, "0": {}}}))
    (tmp_path / "b.json").write_text(json.dumps([1, 2]))
    assert used_splits(str(tmp_path)) == {0, 1, 7, 3594}


def test_a_second_draw_is_refused(tmp_path, capsys):
    """The record is written once; asking again is one sentence and exit status 2."""
    out = tmp_path / "sealed.json"
    record = main(["--results", str(tmp_path), "--out", str(out)])
    assert json.loads(out.read_text())["split_seed"] == record["split_seed"]
    with pytest.raises(SystemExit) as stop:
        main(["--results", str(tmp_path), "--out", str(out)])
    assert stop.value.code == 2 and "drawn once" in capsys.readouterr().err


def test_a_superseding_draw_keeps_the_earlier_one_and_never_redraws_it(tmp_path, monkeypatch):
    """With a reason, a new split replaces the sealed one; the earlier draw (with the reason)
    stays in the record, newest first, and its seed counts as used by every later draw."""
    out, seen = tmp_path / "sealed.json", []
    monkeypatch.setattr(seal, "draw", lambda rng, used: seen.append(set(used)) or draw(rng, used))
    first = main(["--results", str(tmp_path), "--out", str(out)])
    second = main(["--results", str(tmp_path), "--out", str(out), "--supersede", "code changed"])
    third = main(["--results", str(tmp_path), "--out", str(out), "--supersede", "again"])
    record = json.loads(out.read_text())
    assert record["split_seed"] == third["split_seed"]
    assert [e["split_seed"] for e in record["earlier"]] == [
        second["split_seed"],
        first["split_seed"],
    ]
    assert [e["superseded"] for e in record["earlier"]] == ["again", "code changed"]
    assert "earlier" not in record["earlier"][0]
    assert first["split_seed"] in seen[1] and {first["split_seed"], second["split_seed"]} <= seen[2]
