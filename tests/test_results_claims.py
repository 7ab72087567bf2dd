"""Every figure in RESULTS.md, bench/LAB.md and the README has a file behind it, and says whether
the code it measured has changed since.

How this holds together:
1. RESULTS.md, bench/LAB.md and the README's results summary are regenerated here from
   bench/results (and git's HEAD, for the code-changed marks) and must match the committed text
   byte for byte, so every figure in them was written by bench/report_*.py from a file;
2. the string literals of bench/report_*.py hold no measured figure, so the figures the report
   writes come from the files, not from its own source;
3. the README's hand-written prose (outside the generated block, code blocks and inline code)
   holds no measured figure: results live in the generated block only;
4. every file in bench/results is read or named by the report, and every result kind lists the
   source files its figures depend on;
5. `report_results.py --check` (which CI runs) fails when a result's code changes in git and the
   text does not say so, and when bench/LAB.md is stale: checked in a scratch git repository.
tests/test_report_headline.py checks what RESULTS.md's headline reads (the sealed split only),
its length, and the marks of rows whose code has changed.

A "measured figure" is what a result looks like in text: a spread (± 3), a percentage, a decimal
fraction, a duration or a size, a speed-up (3x), a rate. Integers alone (settings, counts) and the
numbers of sections, equations and versions are not. A few phrases that define a quantity rather
than report one (the 90% of the steps-to-90% metric) are allowed by name, each with its reason.
"""

import ast
import json
import re
import subprocess
from pathlib import Path

import pytest

from bench import report_results, report_tables
from bench.common import RESULTS, code_version

ROOT = Path(__file__).resolve().parent.parent
FIGURE = re.compile(
    r"""
    [±]\s*\d | \+-\s*\d                         # a spread
  | \d+(?:\.\d+)?\s*%                           # a percentage
  | (?<![\w.\-])\d+\.\d+(?![\w.])               # a decimal fraction (not 2.13.0, not Qwen2.5-1.5B)
  | \b\d+(?:\.\d+)?\s*(?:ms|s|sec|seconds?|min|minutes?|h|hours?|GB|MB|GiB)\b
                                                # a duration or a size
  | \ban\s+hour\b
  | \b\d+(?:\.\d+)?x\b                          # a speed-up
""",
    re.X,
)
NUMBERED = re.compile(
    r"(?:§|Proposition|Theorem|Lemma|Corollary|Definition|Section|Table|Figure|Eq\.)"
    r"\s*[A-Z]?\d+(?:\.\d+)*"
)
DEFINITIONS = {  # phrase: why it is not a result
    "steps-to-90%": "the name of the metric experiment.steps_to_90",
    "reaching 90% held-out resolve": "the threshold that defines steps-to-90%",
    "Steps to 90%": "the column of that metric",
    "(Qual. >= 0.5)": "Ground's threshold (metrics.py)",
    "bootstrap 95%": "the level of a bootstrap interval",
}


def figures(text: str) -> list[str]:
    """The measured figures in a text, once definitions and section numbers are taken out."""
    for phrase in DEFINITIONS:
        text = text.replace(phrase, "")
    return [m.group() for m in FIGURE.finditer(NUMBERED.sub("", text))]


def git_history_here() -> bool:
    try:
        top = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--show-toplevel"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return False
    return Path(top).resolve() == ROOT


def test_the_figure_detector_tells_results_from_settings():
    """The detector finds what results look like and leaves settings, counts, sections and
    versions."""
    assert figures(
        "resolve 99.6 ± 0.4, 65% of 20 secrets, 61-229 min, about an hour, 3.02x faster"
    ) == ["99.6", "± 0", "65%", "229 min", "an hour", "3.02x"]
    assert (
        figures(
            "Theorem 3.2 (ii), §5.1, Qwen2.5-1.5B, `torch==2.13.0`, G = 8, 200 steps, lr 5e-6, "
            "1..200"
        )
        == []
    )


@pytest.fixture(scope="module")
def rendered():
    """The report rendered once from bench/results (a render reads every file): the
    README it was given, what it writes, and the result files it read or named."""
    readme = (ROOT / "README.md").read_text()
    written = report_results.render(readme, RESULTS)
    return readme, written, set(report_tables.READ)


@pytest.mark.skipif(
    not git_history_here(), reason="the code-changed marks need this repository's git history"
)
def test_results_md_lab_md_and_the_readme_summary_regenerate_from_the_files(rendered):
    """RESULTS.md, bench/LAB.md and the README's summary are exactly what
    bench/report_results.py writes from bench/results and git's HEAD: no figure in them was typed,
    none is stale, and every result whose code has changed says so."""
    readme, (results, lab, summary), _ = rendered
    assert results == (ROOT / "RESULTS.md").read_text(), (
        "RESULTS.md is out of date: run python bench/report_results.py"
    )
    assert lab == (ROOT / "bench" / "LAB.md").read_text(), (
        "bench/LAB.md is out of date: run python bench/report_results.py"
    )
    assert summary == readme, (
        "the README's summary is out of date: run python bench/report_results.py"
    )


def test_the_readme_summary_is_short(rendered):
    """The README's results summary, as the files write it, is at most 2,600 characters (nine
    claims and the line that sends the reader to RESULTS.md), one line per claim (a line of over
    400 characters is a paragraph, not a claim)."""
    _, (_, _, readme), _ = rendered
    start, end = report_results.SUMMARY
    body = readme.split(start, 1)[1].split(end, 1)[0].strip("\n")
    assert len(body) <= 2600, f"the README's summary is {len(body)} characters"
    assert all(len(line) <= 400 for line in body.splitlines()), "a summary line runs past 400"


def test_the_report_types_no_figure():
    """No string literal of bench/report_*.py (docstrings aside) holds a measured figure: every
    figure the report writes is read from a file."""
    found = []
    for path in sorted((ROOT / "bench").glob("report_*.py")):
        tree = ast.parse(path.read_text())
        docs = {
            id(n.body[0].value)
            for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef))
            and ast.get_docstring(n) is not None
        }
        found += [
            (path.name, n.lineno, f)
            for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs
            for f in figures(n.value)
        ]
    for path in sorted(report_tables.TEMPLATES.glob("*.md")):  # the sentences, less what fills them
        text = re.sub(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", " ", path.read_text(), flags=re.S)
        found += [(path.name, f) for f in figures(text)]
    assert found == []


def test_prose_is_wrapped_without_starting_a_block_and_joins_again():
    """report_tables.wrapped cuts a long paragraph into lines of at most 100 characters, none
    opening with what markdown reads as a list, a heading or a table; paragraphs() joins them back
    into the paragraph; a table row is left whole."""
    words = "ECHO minus GRPO is - 3.0 points, # 2 of them, | a bar, 1. a number and + more"
    line = " ".join([words] * 8)
    lines = report_tables.wrapped(line)
    assert len(lines) > 1 and all(len(w) <= report_tables.WIDTH for w in lines)
    assert not any(report_tables.BLOCK_START.match(w) for w in lines[1:])
    assert report_tables.paragraphs("\n".join(lines)) == [line]
    row = "| " + " | ".join(["a cell"] * 40) + " |"
    assert report_tables.wrapped(row) == [row]
    item = report_tables.wrapped("- " + line)
    assert all(w.startswith("  ") for w in item[1:])
    assert report_tables.paragraphs("\n".join(item)) == ["- " + line]


def test_no_results_md_prose_line_runs_past_400_characters():
    """Outside its tables, RESULTS.md and bench/LAB.md hold no line longer than 400 characters."""
    for name in ("RESULTS.md", "bench/LAB.md"):
        long = [n for n in (ROOT / name).read_text().splitlines() if len(n) > 400 and n[0] != "|"]
        assert long == [], name


def test_the_readme_prose_holds_no_figure():
    """Outside its generated results summary, code blocks and inline code, the README states no
    measured figure: a result there would have no file behind it."""
    text = (ROOT / "README.md").read_text()
    start, end = report_results.SUMMARY
    assert text.count(start) == 1 and text.count(end) == 1
    prose = text.split(start)[0] + text.split(end)[1]
    prose = re.sub(r"`[^`\n]*`", "", re.sub(r"```.*?```", "", prose, flags=re.S))
    assert figures(prose) == []


def test_every_result_file_is_read_or_named(rendered):
    """Each file in bench/results is read by the report or named in it (figures, source files, the
    turns a figure was computed from): no file sits there that no table accounts for."""
    *_, read = rendered
    on_disk = {p.name for p in Path(RESULTS).iterdir()} - {"provenance.json"}
    assert on_disk - read == set()


@pytest.mark.skipif(not git_history_here(), reason="needs this repository's git history")
def test_every_result_kind_lists_the_code_it_measured():
    """Each result file has a commit (its own or provenance.json's), and every source file its kind
    lists is a file at that commit or now (one added since counts as changed): no dependency is
    misspelt. A kind with no list is an error; sealed.json, a split drawn and no measurement,
    depends on no code."""
    report_tables.use(RESULTS)
    assert report_tables.depends_on("sealed.json") == []
    for path in sorted(Path(RESULTS).glob("*.json")):
        if path.name == "provenance.json" or not report_tables.depends_on(path.name):
            continue
        commit = report_tables.meta(path.name, json.loads(path.read_text())).get("commit")
        assert commit, path.name
        for f in report_tables.depends_on(path.name):

            def at(rev):
                found = subprocess.run(["git", "-C", str(ROOT), "cat-file", "-e", f"{rev}:{f}"])
                return found.returncode == 0

            assert at(commit) or at("HEAD") or (ROOT / f).is_file(), (path.name, f)
    with pytest.raises(KeyError):
        report_tables.depends_on("a_new_kind_of_result.json")


def test_means_are_not_rounded_onto_0_or_100():
    """99.6 +- 0.4 over seeds is not written 100 +- 0: digits are added until neither the mean
    nor its SEM rounds onto 0 or 100% without being it; exact values keep the digits asked for."""
    assert report_tables.ms([0.988, 1.0, 1.0], 0) == "99.6 ± 0.4"
    assert report_tables.ms([1.0, 1.0, 1.0], 0) == "100 ± 0"
    assert report_tables.ms([0.0, 0.0, 0.0003], 1) == "0.01 ± 0.01"
    assert report_tables.ms([0.6, 0.7], 0) == "65 ± 5"


def commit_all(repo: Path, message: str) -> str:
    def run(*a):
        return subprocess.run(
            ["git", "-C", str(repo), *a], capture_output=True, text=True, check=True
        )

    run("add", "-A")
    run("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", message)
    return run("rev-parse", "HEAD").stdout.strip()


def scratch_repository(tmp_path: Path, name: str) -> Path:
    """A git repository holding every source file `name`'s kind depends on (one line each),
    committed."""
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    for f in report_tables.depends_on(name):
        (repo / f).parent.mkdir(parents=True, exist_ok=True)
        (repo / f).write_text(f"# {f}\n")
    commit_all(repo, "code")
    return repo


def generalization_file(version: dict) -> dict:
    row = {
        "question_set": "paper",
        "estimator": "echo",
        "seed": 0,
        "split_seed": 5,
        "steps": 40,
        "kept_step": 40,
        "changed": {},
        "train_seconds": 60.0,
        "threads": 1,
        "samples": 4,
        "heldout_greedy": 1.0,
        "heldout_sampled": 0.9,
        "gen200_greedy": 0.5,
        "gen200_sampled": 0.6,
        "gen200_redundant_rate_greedy": 0.1,
        "gen200_redundant_rate_sampled": 0.05,
        "gen200_eliminated_fraction_greedy": 0.4,
        "gen200_threshold_median_corr_greedy": float("nan"),
        "gen200_threshold_median_corr_sampled": float("nan"),
    }
    return {
        "command": "python bench/generalization.py",
        "machine": "2 CPU cores",
        "date": "2026-01-01",
        **version,
        "runs": [row],
        "references": [
            {
                "question_set": "paper",
                "policy": "bayes",
                "split_seed": 5,
                "heldout": 1.0,
                "gen200": 1.0,
            }
        ],
        "paired": {"paper": {}},
    }


def scratch_generalization(tmp_path):
    """A scratch repository, a results folder holding generalization.json measured at its HEAD,
    and report_results' flags for both: (repo, results, flags)."""
    repo = scratch_repository(tmp_path, "generalization.json")
    results = tmp_path / "results"
    results.mkdir()
    (results / "generalization.json").write_text(
        json.dumps(generalization_file(code_version(str(repo))))
    )
    return repo, results, scratch_flags(tmp_path, results, repo)


def test_check_fails_when_a_results_code_changes_and_the_text_does_not_say_so(tmp_path, capsys):
    """In a scratch repository: a result measured at one commit is up to date; once a file it
    depends on is changed and committed, --check fails and names the result and the file; written
    again, the text names the change and --check passes."""
    repo, results, flags = scratch_generalization(tmp_path)
    try:
        report_results.main(flags)
        report_results.main(flags + ["--check"])
        flat = lambda name: " ".join((tmp_path / name).read_text().split())  # noqa: E731
        assert "changed since: nothing." in flat("RESULTS.md")
        (repo / "env.py").write_text("N_MAX = 200\n")
        commit_all(repo, "change the game")
        capsys.readouterr()
        with pytest.raises(SystemExit) as stop:
            report_results.main(flags + ["--check"])
        assert stop.value.code == 1
        err = capsys.readouterr().err
        assert "has changed since" in err and "generalization.json" in err and "env.py" in err
        report_results.main(flags)
        report_results.main(flags + ["--check"])
        assert "| the Bayes policy (bisection on the binary set) | paper |" in flat("RESULTS.md")
        assert "changed since: `env.py`." in flat("RESULTS.md")
        assert "changed since: `env.py`." in flat("LAB.md")
    finally:
        report_tables.use(RESULTS)


def scratch_flags(tmp_path: Path, results: Path, repo: Path) -> list[str]:
    """report_results' flags for a scratch run: every file it writes under tmp_path."""
    (tmp_path / "README.md").write_text(
        f"# x\n\n{report_results.SUMMARY[0]}\n{report_results.SUMMARY[1]}\n"
    )
    return [
        "--results",
        str(results),
        "--repo",
        str(repo),
        "--out",
        str(tmp_path / "RESULTS.md"),
        "--lab",
        str(tmp_path / "LAB.md"),
        "--readme",
        str(tmp_path / "README.md"),
    ]


def test_check_fails_when_lab_md_is_stale(tmp_path, capsys):
    """bench/LAB.md is written with RESULTS.md and held to the same bytes: an edit of it fails
    --check, which names it; written again, --check passes."""
    repo, results, flags = scratch_generalization(tmp_path)
    try:
        report_results.main(flags)
        report_results.main(flags + ["--check"])
        lab = tmp_path / "LAB.md"
        assert "## Every scored run" in lab.read_text()
        lab.write_text(lab.read_text().replace("100.0", "99.0"))
        capsys.readouterr()
        with pytest.raises(SystemExit) as stop:
            report_results.main(flags + ["--check"])
        assert stop.value.code == 1 and "LAB.md: out of date" in capsys.readouterr().err
        report_results.main(flags)
        report_results.main(flags + ["--check"])
    finally:
        report_tables.use(RESULTS)


def test_a_file_measured_uncommitted_is_compared_by_its_bytes(tmp_path):
    """A result measured while env.py held uncommitted changes is of those bytes: unchanged once
    exactly they are committed, changed if env.py is committed otherwise."""
    repo = scratch_repository(tmp_path, "generalization.json")
    (repo / "env.py").write_text("N_MAX = 150\n")
    version = code_version(str(repo))
    assert list(version["uncommitted"]) == ["env.py"]
    data = generalization_file(version)
    try:
        with report_tables.reading(str(tmp_path), str(repo)):
            assert report_tables.code_changes("generalization.json", data) == ["env.py"]
        commit_all(repo, "the edit as measured")
        with report_tables.reading(str(tmp_path), str(repo)):
            assert report_tables.code_changes("generalization.json", data) == []
        (repo / "env.py").write_text("N_MAX = 200\n")
        commit_all(repo, "another edit")
        with report_tables.reading(str(tmp_path), str(repo)):
            assert report_tables.code_changes("generalization.json", data) == ["env.py"]
    finally:
        report_tables.use(RESULTS)


def test_comments_docstrings_and_layout_are_not_a_change_of_code(tmp_path):
    """A Python file edited only in its comments, docstrings or layout runs what it ran: the result
    stays unmarked; an edit of what it runs marks it."""
    repo = scratch_repository(tmp_path, "generalization.json")
    (repo / "env.py").write_text(
        '"""The game."""\ndef size(n):\n    """Its size."""\n    return n + 1\n'
    )
    commit_all(repo, "code")
    data = generalization_file(code_version(str(repo)))
    (repo / "env.py").write_text(
        '"""The game, as the paper has it."""\n\n\ndef size(n):  # why\n    return (n\n'
        "            + 1)\n"
    )
    commit_all(repo, "words and layout")
    try:
        with report_tables.reading(str(tmp_path), str(repo)):
            assert report_tables.code_changes("generalization.json", data) == []
        (repo / "env.py").write_text(
            '"""The game."""\ndef size(n):\n    """Its size."""\n    return n + 2\n'
        )
        commit_all(repo, "what it runs")
        with report_tables.reading(str(tmp_path), str(repo)):
            assert report_tables.code_changes("generalization.json", data) == ["env.py"]
    finally:
        report_tables.use(RESULTS)


def test_a_flags_help_text_is_not_a_change_of_code_its_default_is(tmp_path):
    """An edit of a flag's help (cli.arg's second argument, a Preset's first) runs what it ran;
    an edit of the flag's default, or of a preset's values, marks the result."""
    repo = scratch_repository(tmp_path, "generalization.json")

    def write(help_text, default, preset_help, value):
        (repo / "env.py").write_text(
            f"x = arg({default!r}, {help_text!r}, at_least=0)\n"
            f"P = Preset({preset_help!r}, lambda c: True, dict(y={value}))\n"
        )

    write("a step", "echo", "on a CPU", 4)
    commit_all(repo, "code")
    data = generalization_file(code_version(str(repo)))
    try:
        for words in [("steps, said better", "echo", "on 2 CPU cores", 4)]:
            write(*words)
            commit_all(repo, "help")
            with report_tables.reading(str(tmp_path), str(repo)):
                assert report_tables.code_changes("generalization.json", data) == []
        for behaviour in [("a step", "grpo", "on a CPU", 4), ("a step", "echo", "on a CPU", 8)]:
            write(*behaviour)
            commit_all(repo, "behaviour")
            with report_tables.reading(str(tmp_path), str(repo)):
                assert report_tables.code_changes("generalization.json", data) == ["env.py"]
    finally:
        report_tables.use(RESULTS)
