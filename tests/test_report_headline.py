"""RESULTS.md's headline and its form (bench/report_headline.py, bench/report_results.py): the
paper set's ECHO against GRPO and RLOO, and its generalization to 1..200, read the split
bench/results/sealed.json names and no other; until that file exists they show no test figure;
RESULTS.md stays at most 250 lines and the README's summary at most 12 once the sealed split is
played; and every row of a result whose code has changed carries the mark, in a scratch git
repository."""

import copy
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from test_results_claims import commit_all, figures

from bench import report_results, report_tables
from bench.common import RESULTS, code_version
from bench.report_headline import section_generalization, section_versus

ROOT = Path(__file__).resolve().parent.parent


def row(estimator: str, seed: int, split: int, heldout: float, gen200: float, **changed) -> dict:
    """A generalization.json row of the paper set: `changed` beyond the split, if any."""
    return {
        "question_set": "paper",
        "estimator": estimator,
        "seed": seed,
        "split_seed": split,
        "steps": 80,
        "kept_step": 80,
        "changed": {"split_seed": split, **changed},
        "train_seconds": 300.0,
        "threads": 1,
        "samples": 4,
        "heldout_greedy": heldout,
        "heldout_sampled": heldout,
        "gen200_greedy": gen200,
        "gen200_sampled": gen200,
        "gen200_redundant_rate_greedy": 0.1,
        "gen200_redundant_rate_sampled": 0.1,
        "gen200_eliminated_fraction_greedy": 0.3,
        "gen200_threshold_median_corr_greedy": float("nan"),
        "gen200_threshold_median_corr_sampled": float("nan"),
        "gen200_repeat_ratio": 0.5,
    }


def reference(split: int, policy: str, value: float) -> dict:
    return {
        "question_set": "paper",
        "policy": policy,
        "split_seed": split,
        "heldout": value,
        "gen200": value,
    }


def two_splits(tmp_path: Path, sealed: int | None) -> None:
    """generalization.json with split 3594's default runs and a flag group (ECHO 33% held-out,
    23% on 1..200; GRPO 13%, 11%), split 7's default runs (ECHO 85% / 75%, GRPO 45% / 35%) and a
    stray flag group of split 7, each split's references; and sealed.json naming `sealed`, where
    given."""
    runs = [row("echo", s, 3594, 0.33, 0.23) for s in range(3)]
    runs += [row("grpo", s, 3594, 0.13, 0.11) for s in range(3)]
    runs += [row("echo", s, 3594, 0.5, 0.5, top_p=1.0) for s in range(3)]
    runs += [row("echo", s, 7, 0.8 + 0.05 * s, 0.7 + 0.05 * s) for s in range(3)]
    runs += [row("grpo", s, 7, 0.4 + 0.05 * s, 0.3 + 0.05 * s) for s in range(3)]
    runs += [row("echo", s, 7, 0.05, 0.05, lr=0.001) for s in range(3)]
    refs = [reference(3594, "bayes", 0.95), reference(7, "bayes", 0.9)]
    data = {"command": "python bench/generalization.py", "machine": "m", "date": "2026-01-01"}
    data |= {"runs": runs, "references": refs, "paired": {}}
    (tmp_path / "generalization.json").write_text(json.dumps(data))
    if sealed is not None:
        (tmp_path / "sealed.json").write_text(
            json.dumps({"split_seed": sealed, "drawn": "2026-01-02", "rule": "drawn once"})
        )


def subsection(text: str, title: str) -> str:
    """A section's part from its `### title` line to the next heading."""
    after = text.split(title, 1)[1]
    return after.split("\n#", 1)[0]


def versus_summary() -> list[str]:
    """The README summary's lines of the headline (report_results.readme_summary)."""
    lines = report_results.readme_summary()
    return [line for line in lines if line.startswith(("- **ECHO against", "- **Generalization"))]


def test_the_headline_reads_the_sealed_split_only(tmp_path):
    """With sealed.json naming split 7, the headline is split 7's default runs (means, the paired
    test, its references), never split 3594's or a flag group's; split 3594's default runs, on
    which the defaults were compared, leave RESULTS.md for bench/LAB.md; the README's lines read
    split 7."""
    two_splits(tmp_path, sealed=7)
    with report_tables.reading(str(tmp_path)):
        versus, general = "\n".join(section_versus()), "\n".join(section_generalization())
        readme = "\n".join(versus_summary())
    head = subsection(versus, "### Paper set, the sealed split 7 (the test)")
    assert "| ECHO | 0-2 (80) | 85.0 ± 2.9 | 85.0 ± 2.9 |" in head
    assert "| GRPO | 0-2 (80) | 45.0 ± 2.9 | 45.0 ± 2.9 |" in head
    assert "| the Bayes policy (reference) | - | 90.0 |" in head and "95.0" not in head
    assert "ECHO minus GRPO, paired over seeds 0-2: greedy 40.0 points" in head
    assert "drawn on 2026-01-02 under the rule it records (drawn once)" in head
    assert "| ECHO | 0-2 (80) | 75.0 ± 2.9 |" in subsection(general, "### Paper set, the sealed")
    for text in (versus, general):
        assert "3594" not in text.split("### The defaults")[0]
        assert not any(x in text for x in ("33.0", "23.0", "13.0", "11.0", "| 5.0"))
    assert "sealed split 7" in readme and "3594" not in readme
    assert (
        "ECHO 85.0 ± 2.9 / 75.0 ± 2.9, GRPO 45.0 ± 2.9 / 35.0 ± 2.9" in readme
    )  # held-out / 1..200


def test_without_the_sealed_file_the_headline_shows_no_test_figure(tmp_path):
    """Without sealed.json the headline says in one sentence that the sealed test has not been
    played and shows no figure, whatever splits generalization.json holds; the default runs of
    each split with flag groups (3594, and 7 here) are shown apart, labelled as a split the
    defaults were compared on; the README's line holds no figure. With sealed.json but no runs of
    its split yet, the same."""
    two_splits(tmp_path, sealed=None)
    with report_tables.reading(str(tmp_path)):
        for section in (section_versus, section_generalization):
            text = "\n".join(section())
            head = subsection(text, "### Paper set, the sealed test")
            assert "The sealed test has not been played yet" in head and figures(head) == []
            for split in (3594, 7):
                compared = subsection(text, f"### Paper set, split {split}: the split the defaults")
                assert "| ECHO | 0-2 (80) |" in compared
        (line,) = versus_summary()
    assert (
        "has not been played yet" in line
        and "splits 7 and 3594, on which" in line
        and figures(line) == []
    )
    two_splits(tmp_path, sealed=11)
    with report_tables.reading(str(tmp_path)):
        text = "\n".join(section_versus())
        (line,) = versus_summary()
    head = subsection(text, "### Paper set, the sealed split 11 (the test)")
    assert "its runs have not been scored yet" in head and figures(head) == []
    assert figures(line) == []


def sealed_results(tmp_path: Path) -> Path:
    """A copy of bench/results with the sealed split played (split 7: split 3594's default runs
    again, their figures shuffled) and a SmolLM2 GPU file of two estimators at two learning
    rates: the most the report will have to say."""
    results = tmp_path / "results"
    shutil.copytree(RESULTS, results)
    d = json.loads((results / "generalization.json").read_text())
    runs = [
        r
        for r in d["runs"]
        if r["question_set"] == "paper" and r["changed"] == {"split_seed": 3594}
    ]
    for r in runs:
        new = copy.deepcopy(r)
        new.update(split_seed=7, changed={"split_seed": 7}, heldout_greedy=r["gen200_greedy"])
        d["runs"].append(new)
    d["references"] += [{**r, "split_seed": 7} for r in d["references"] if r["split_seed"] == 3594]
    (results / "generalization.json").write_text(json.dumps(d))
    (results / "sealed.json").write_text(json.dumps({"split_seed": 7, "drawn": "2026-12-01"}))
    played = {"greedy": 0.1, "sampled": 0.2, "valid_rate": 0.9, "redundancy_rate": 0.1}
    both = {"heldout": played, "gen200": played}
    point = {"step": 30, "heldout_greedy": 0.3, "heldout_sampled": 0.3}
    point |= {"validation": 0.4, "invalid_rate": 0.1, "redundancy_rate": 0.1, "reward": 0.5}
    smol = {
        "model": "smollm2",
        "preset": "llm",
        "batch": {"secrets_per_step": 8, "group_size": 4},
        "split_seed": 0,
        "samples": 2,
        "chosen_on": "the kept checkpoint's score on validation secrets",
        "step0": both,
        "chosen": {"echo": {"lr": 1e-4, **both}, "grpo": {"lr": 3e-4, **both}},
        "runs": [
            {"estimator": e, "lr": lr, "steps": 30, "kept_step": 25, "curve": [point]}
            for e in ("echo", "grpo")
            for lr in (1e-4, 3e-4)
        ],
        "command": "python bench/smollm2_gpu.py",
        "machine": "one GPU",
        "date": "2026-12-01",
    }
    (results / "smollm2_gpu.json").write_text(json.dumps(smol))
    return results


def blocks(text: str) -> list[str]:
    """A markdown text's lines as they were before its prose was wrapped: a paragraph or a list
    item is one, each table row one (report_results.wrapped)."""
    out = []
    for line in text.splitlines():
        joins = out and out[-1] and line and not line.startswith(("|", "#", "- ", "!["))
        if joins and line.startswith(" ") or joins and not out[-1].startswith(("|", "#")):
            out[-1] += " " + line.strip()
        else:
            out.append(line)
    return out


def test_results_md_stays_a_results_section_with_the_sealed_split_played(tmp_path):
    """RESULTS.md is at most 250 lines and links bench/LAB.md once, and the README's generated
    summary is at most 12 lines: as committed, and as built once the sealed split is played and
    SmolLM2's GPU file exists."""
    results = (ROOT / "RESULTS.md").read_text()
    start, end = report_results.SUMMARY
    summary = (ROOT / "README.md").read_text().split(start)[1].split(end)[0].strip("\n")
    assert len(blocks(results)) <= 250 and len(summary.splitlines()) <= 12
    assert results.count("](bench/LAB.md)") == 1
    try:
        report_tables.use(str(sealed_results(tmp_path)))
        built, lines = report_results.build(), report_results.readme_summary()
    finally:
        report_tables.use(RESULTS)
    assert "### Paper set, the sealed split 7 (the test)" in built
    assert "### SmolLM2-135M-Instruct on one GPU" in built
    assert len(blocks(built)) <= 250 and len(lines) <= 12
    assert built.count("](bench/LAB.md)") == 1


def scratch(tmp_path: Path, names: list[str]) -> Path:
    """A git repository holding every source file these result kinds depend on, committed."""
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    for f in sorted({f for n in names for f in report_tables.depends_on(n)}):
        (repo / f).parent.mkdir(parents=True, exist_ok=True)
        (repo / f).write_text(f"# {f}\nVALUE = 1\n")
    commit_all(repo, "code")
    return repo


def marked_results(tmp_path: Path, version: dict) -> Path:
    """Table 1's file, split 3594's default runs (measured at `version`) and a profile of a step,
    each recording `version` as the code it measured."""
    results = tmp_path / "results"
    results.mkdir()
    summary = [
        {"model_key": k, "resolve_rate": 1.0, "resolve_rate_sem": 0.0, "zero_rate": 0.0}
        for k in ("bayes", "random", "checkpoint:runs/x/paper/echo-seed3/checkpoint")
    ]
    table1 = {"command": "python evaluate.py", "machine": "m", "date": "2026-01-01"}
    (results / "eval_paper_model_summary.json").write_text(
        json.dumps({**table1, **version, "protocol": "20 held-out secrets", "rows": summary})
    )
    measured = {"date": "2026-01-01", "scored": version, "trained": version}
    runs = [
        {**row(e, s, 3594, 0.5, 0.5), "measured": measured}
        for e in ("echo", "grpo")
        for s in range(2)
    ]
    runs.append(row("echo", 0, 3594, 0.5, 0.5, top_p=1.0))  # a flag group: the compared split
    general = {"command": "python bench/generalization.py", "machine": "m", "date": "2026-01-01"}
    general |= {"runs": runs, "references": [reference(3594, "bayes", 1.0)], **version}
    (results / "generalization.json").write_text(json.dumps(general))
    pieces = {k: {"seconds": 1.0} for k in ("rollout (total)", "update (total)")}
    pieces["update: backward"] = {"seconds": 0.5}
    profile = {"steps": 1, "turns": 10, "threads": 2, "seconds": 2.0, "pieces": pieces}
    profile |= {"train_flags": "", "command": "python bench/profile_step.py"}
    (results / "profile_step.json").write_text(
        json.dumps({**profile, "machine": "m", "date": "2026-01-01", **version})
    )
    return results


def table_rows(text: str, first: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(f"| {first}")]


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_each_file_has_one_line_saying_what_changed_since_it_was_measured(tmp_path):
    """In a scratch repository: measured at HEAD, each file's line in the list of files says
    nothing has changed; once a file they depend on changes, each line names it, and no table row
    carries a mark or names it."""
    names = ["eval_paper_model_summary.json", "generalization.json", "profile_step.json"]
    repo = scratch(tmp_path, names)
    results = marked_results(tmp_path, code_version(str(repo)))
    sections = (
        report_results.section_table1_older,
        section_versus,
        report_results.section_speed_and_gpu,
    )

    def rendered():
        with report_tables.reading(str(results), str(repo)):
            text = "\n".join(line for s in sections for line in s())
            return text, report_tables.provenance("this test")

    try:
        before, files_before = rendered()
        (repo / "env.py").write_text("VALUE = 2\n")
        commit_all(repo, "change the game")
        after, files_after = rendered()
    finally:
        report_tables.use(RESULTS)
    lines = lambda files: [f for f in files if f.startswith("- `")]  # noqa: E731
    assert len(lines(files_before)) == 3 and len(lines(files_after)) == 3
    assert all(f.endswith("changed since: nothing.") for f in lines(files_before))
    assert all(f.endswith("changed since: `env.py`.") for f in lines(files_after))
    assert {f.split("`")[1] for f in lines(files_after)} == set(names)
    rows = table_rows(after, "`echo`") + table_rows(after, "ECHO") + table_rows(after, "GRPO")
    rows += table_rows(after, "one training")
    assert len(rows) == 4, rows
    assert all("†" not in r and "env.py" not in r for r in after.splitlines() if r.startswith("|"))
    assert before == after


def test_the_headline_names_the_planned_runs_not_yet_played(tmp_path):
    """sealed.json's command plans seeds 0-3 of ECHO, GRPO and RLOO; with ECHO and GRPO of seeds
    0-2 scored, the headline names the 6 runs missing, and says nothing once none is."""
    two_splits(tmp_path, sealed=7)
    seal = json.loads((tmp_path / "sealed.json").read_text())
    seal["played_by"] = 'python bench/reproduce.py --seeds 0,1,2,3 --train-flags "--split-seed 7"'
    (tmp_path / "sealed.json").write_text(json.dumps(seal))
    with report_tables.reading(str(tmp_path)):
        head = subsection("\n".join(section_versus()), "### Paper set, the sealed split 7")
    assert "Of the 12 runs it plans (ECHO, GRPO and RLOO, seeds 0-3), 6 are not yet" in head
    assert "ECHO seed 3, GRPO seed 3, RLOO seed 0, RLOO seed 1, RLOO seed 2, RLOO seed 3." in head
    data = json.loads((tmp_path / "generalization.json").read_text())
    data["runs"] += [row(e, 3, 7, 0.9, 0.9) for e in ("echo", "grpo")]
    data["runs"] += [row("rloo", s, 7, 0.9, 0.9) for s in range(4)]
    (tmp_path / "generalization.json").write_text(json.dumps(data))
    with report_tables.reading(str(tmp_path)):
        assert "not yet trained" not in "\n".join(section_versus())


def test_the_sealed_runs_training_files_are_named_once_where_they_exist(tmp_path):
    """bench/reproduce.py's summary of the sealed runs is named under the generalization table,
    once, and counts as read; without it no line is written."""
    two_splits(tmp_path, sealed=7)
    with report_tables.reading(str(tmp_path)):
        text = "\n".join(section_versus() + section_generalization())
    assert "training (curves" not in text
    for ext in ("json", "png"):
        (tmp_path / f"reproduce_paper_sealed.{ext}").write_text("{}")
    with report_tables.reading(str(tmp_path)):
        versus, general = "\n".join(section_versus()), "\n".join(section_generalization())
        read = set(report_tables.READ)
    line = "`bench/results/reproduce_paper_sealed.json`, `bench/results/reproduce_paper_sealed.png`"
    assert line not in versus and general.count(line) == 1
    assert {"reproduce_paper_sealed.json", "reproduce_paper_sealed.png"} <= read


def test_results_md_opens_with_the_answer_read_from_the_sealed_runs(tmp_path):
    """With the sealed split 7 played, RESULTS.md's first lines say in sentences which of the
    paper's comparisons its runs reproduce, by the paired test at 5% (ECHO 40 points over GRPO,
    p < 0.05: reproduced), beside the paper's figures; with no sealed runs, that none is shown."""
    two_splits(tmp_path, sealed=7)
    with report_tables.reading(str(tmp_path)):
        first = report_results.build().split("## ")[0]
    flat = " ".join(first.split())
    assert "**ECHO against GRPO** (the sealed split 7, seeds 0-2" in flat
    assert "reproduced: ECHO resolves 40.0 points more than GRPO" in flat
    assert "the paper's Table 1 gives 45.3 against 14.7" in flat
    two_splits(tmp_path, sealed=11)
    with report_tables.reading(str(tmp_path)):
        first = report_results.build().split("## ")[0]
    assert "not yet scored" in " ".join(first.split()) and figures(first) == []


def test_a_difference_the_paired_test_cannot_tell_is_level():
    """side(): higher or lower only where the paired t-test's p is under 0.05."""
    from bench.report_headline import side

    assert side({"p": 0.01, "mean_difference": 0.3}) == "higher"
    assert side({"p": 0.01, "mean_difference": -0.3}) == "lower"
    assert side({"p": 0.2, "mean_difference": 0.3}) == "level"
    assert side({"p": float("nan"), "mean_difference": 0.0}) == "level"
