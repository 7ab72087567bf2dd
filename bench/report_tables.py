"""Reading and formatting the result files for bench/report_*.py: where the files are (`use`),
each file's command, machine and date, whether the code it depends on has changed since it was
measured (`code_changes`) and the one line per file that says so (`cite`, `provenance`), train.py's
defaults in the code a file measured, as it records them (`defaults_then`), numbers as text
(mean +- SEM over seeds: stats.mean_sem), markdown tables, and the templates that hold the
documents' sentences (`rendered`, bench/templates/). No number is typed here: each is read from a
file.
"""

import ast
import fnmatch
import json
import math
import re
import subprocess
import textwrap
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

import jinja2

from bench.common import RESULTS, ROOT
from tools.stats import mean_sem

DIR, PROVENANCE = Path(RESULTS), {}  # the folder read, and its provenance.json (set by `use`)
REPO = Path(ROOT)  # the git checkout whose HEAD is "the code as it is now" (set by `use`)
READ: set = set()  # the result files the report has read or named (`load`, `named`)
IGNORE_CHANGES = False  # render as if no code had changed (report_results.render)


def use(results: str, repo: str | None = None) -> None:
    """Read the result files from this folder (and its provenance.json) from now on, and compare
    their code with this git checkout's HEAD (default: this repository)."""
    global DIR, PROVENANCE, REPO
    DIR, REPO = Path(results), Path(repo or ROOT)
    READ.clear()
    CITED.clear()
    for cached in (changed_since, moved_since, tree_blobs):
        cached.cache_clear()
    PROVENANCE = (load("provenance.json") or {}).get("files", {})


@contextmanager
def reading(results: str, repo: str | None = None):
    """Read the result files from this folder inside the block, from bench/results again
    after it."""
    use(results, repo)
    try:
        yield
    finally:
        use(RESULTS)


def names(pattern: str) -> list[str]:
    """The result files whose names match the glob pattern, sorted."""
    return sorted(p.name for p in DIR.glob(pattern))


def load(name: str):
    path = DIR / name
    if not path.exists():
        return None
    READ.add(name)
    return json.loads(path.read_text())


def named(name: str) -> str:
    """A companion file (a figure, the data a result was computed from) that the report names
    without reading: `bench/results/NAME` in backticks."""
    READ.add(name)
    return f"`bench/results/{name}`"


PROVENANCE_KEYS = "command machine date checkpoint source commit uncommitted note".split()
PROVENANCE_KEYS += ["train_defaults", "llm_preset"]  # train.py's config in the code measured


def meta(name: str, data) -> dict:
    """command, machine, date, commit (and checkpoint, source, note) of a file: its own, else
    provenance.json's."""
    own = {k: data[k] for k in PROVENANCE_KEYS if isinstance(data, dict) and k in data}
    return {**PROVENANCE.get(name, {}), **own}


# ---------------------------------------------------------------- has the code changed since?
# What each kind of result depends on: the source files whose change could change its figures
# (the bench script, and the modules its figures run through). The first pattern that matches a
# result file's name gives its list. A result file no pattern matches is an error (`depends_on`):
# a new kind of result gets its own line here.
GROUPS = {  # the modules many kinds of result run through, by one name each
    "GAME": "env.py game/properties.py game/grammar.py game/questions.py game/prompts.py oracle.py",
    "POLICY": "policy.py lm/models.py lm/tinylm.py lm/warmup.py",
    "TRAINING": "train.py config.py experiment.py episodes.py rollouts.py echo.py baselines.py "
    "update.py tools/cli.py",
    "PLAYED": "bench/bisection_behaviour.py reference.py evaluate.py metrics.py",
    "TRAINED": "TRAINING GAME POLICY",  # a policy trained and played
}
DEPENDS = {
    "reproduce_*.json": "bench/reproduce.py metrics.py tools/stats.py TRAINED",
    "fidelity_floor.json": "bench/fidelity_floor.py fidelity.py",
    "credit_grid.json": "bench/credit_grid.py fidelity.py TRAINED",
    "fidelity_tiny-before-rl.json": "fidelity.py echo.py baselines.py GAME POLICY",
    "fidelity_*.json": "fidelity.py TRAINED",  # a trained checkpoint's
    "eval_paper_model_summary.json": "evaluate.py metrics.py reference.py tools/report.py TRAINED",
    "binary_final.json": "bench/binary_final.py tools/stats.py PLAYED TRAINED",
    "binary_scores_*.json": "bench/binary_final.py tools/stats.py PLAYED TRAINED",
    "binary_defaults.json": "bench/binary_defaults.py TRAINED",
    "bisection_behaviour_*.json": "PLAYED TRAINED",
    "capacity_check_*.json": "bench/capacity_check.py PLAYED GAME POLICY",
    "generalization.json": "bench/generalization.py bench/reproduce.py tools/stats.py "
    "PLAYED TRAINED",
    "screens.json": "bench/screen.py bench/generalization.py PLAYED TRAINED",
    "splits.json": "bench/splits.py env.py train.py",
    "smollm2_learning.json": "bench/smollm2_learning.py TRAINED",
    "smollm2_step*.json": "bench/smollm2_step.py evaluate.py TRAINED",
    "cpu_precision.json": "bench/cpu_precision.py bench/smollm2_step.py TRAINED",
    "bf16_kernels.json": "bench/bf16_kernels.py bench/cpu_precision.py lm/bf16.py TRAINED",
    "first_run_*.json": "bench/first_run.py evaluate.py TRAINED",
    "table1.json": "bench/table1.py evaluate.py metrics.py PLAYED TRAINED",
    "train_speed*.json": "bench/train_speed.py TRAINED",
    "env_speed.json": "bench/env_speed.py reference.py GAME",
    "eval_speed.json": "bench/eval_speed.py evaluate.py metrics.py reference.py tools/report.py "
    "GAME POLICY",
    "rollouts*.json": "bench/rollouts.py GAME POLICY",
    "threads.json": "bench/threads.py TRAINED",
    "profile_step*.json": "bench/profile_step.py TRAINED",
    "ranks_speed*.json": "bench/ranks_speed.py tools/ranks.py lm/engine.py TRAINED",
    "gpu_step*.json": "bench/gpu_step.py bench/rollouts.py lm/engine.py TRAINED",
    "train_gpu*.json": "bench/device_runs.py lm/engine.py TRAINED",
    "smollm2_gpu.json": "bench/smollm2_gpu.py evaluate.py lm/engine.py TRAINED",
    "smollm2_study.json": "bench/smollm2_study.py bench/bisection_behaviour.py evaluate.py TRAINED",
    "sealed.json": "",  # a split drawn before any run played it: no code measured
}


def expanded(words: str) -> set:
    """The files a DEPENDS entry names, its groups' names replaced by their files."""
    return {f for w in words.split() for f in (expanded(GROUPS[w]) if w in GROUPS else {w})}


def depends_on(name: str) -> list[str]:
    """The source files a result file's figures depend on (DEPENDS)."""
    for pattern, files in DEPENDS.items():
        if fnmatch.fnmatch(name, pattern):
            return sorted(expanded(files))
    raise KeyError(
        f"bench/report_tables.py: DEPENDS has no line for {name}: add the source files its figures "
        "depend on"
    )


def git(*args) -> str | None:
    """git's output in REPO, or None where git or the objects asked for are not there."""
    try:
        return subprocess.run(
            ["git", "-C", str(REPO), *args], capture_output=True, text=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None


def is_ancestor(older: str, newer: str) -> bool:
    """Whether commit `older` is in the history of `newer` (False where git cannot tell)."""
    return git("merge-base", "--is-ancestor", older, newer) is not None


def first_commit_with(text: str, path: str) -> str | None:
    """The commit that first put `text` in the file `path` (git's pickaxe, following the file
    back through its moves), or None."""
    out = git("log", "--follow", "--format=%H", "-S", text, "--", path)
    return out.split()[-1] if out and out.split() else None


def last_commit_of(name: str) -> str | None:
    """The last commit that changed the result file `name`, where the results folder is in REPO."""
    try:
        path = (DIR / name).resolve().relative_to(REPO.resolve())
    except ValueError:
        return None
    out = git("log", "-1", "--format=%H", "--", str(path))
    return (out.strip() or None) if out else None


@lru_cache(maxsize=None)
def changed_since(repo: Path, commit: str) -> frozenset | None:
    """The files that differ between `commit` and HEAD (None: not a commit of this checkout)."""
    out = git("diff", "--name-only", commit, "HEAD")
    return None if out is None else frozenset(out.split())


@lru_cache(maxsize=None)
def moved_since(repo: Path, commit: str) -> dict:
    """{path at HEAD: its path at `commit`} for every file moved since (a file moved into a folder,
    its imports edited to match): the moves git's rename detection finds in each commit between
    the two, followed from HEAD back, so a file edited much since it moved is still followed."""
    out = git("log", "-M", "--diff-filter=R", "--name-status", "--format=", f"{commit}..HEAD")
    moved = {}  # newest commits first: a later move is met before the one that came before it
    for line in (out or "").splitlines():
        row = line.split("\t")
        if len(row) == 3 and row[0].startswith("R"):
            older, newer = row[1], row[2]
            for now, then in list(moved.items()):
                if then == newer:
                    moved[now] = older
            moved.setdefault(newer, older)
    return moved


@lru_cache(maxsize=None)
def tree_blobs(repo: Path, rev: str) -> dict | None:
    """{path: blob} of every file at the commit `rev` (None: not a commit of this checkout)."""
    out = git("ls-tree", "-r", rev)
    return (
        None
        if out is None
        else {line.split("\t", 1)[1]: line.split()[2] for line in out.splitlines()}
    )


def head_blobs(repo: Path) -> dict | None:
    """{path: blob} of every file at HEAD."""
    return tree_blobs(repo, "HEAD")


def blob_of(repo: Path, obj: str) -> str | None:
    """The blob a git object names: `REV:path` looked up in REV's tree (one git call per commit,
    however many of its files are asked for), or a blob's hash as it is."""
    if ":" not in obj:
        return obj
    rev, path = obj.split(":", 1)
    return (tree_blobs(repo, rev) or {}).get(path)


CODE: dict = {}  # {blob: code_of's text}: a blob's hash names the same bytes in any checkout


def code_of(blob: str) -> str | None:
    """What a Python file with this blob runs: its syntax tree without docstrings and flags'
    help text, so comments, docstrings, help and layout are not in it. None where git cannot
    show the blob or it does not parse. Keyed by blob, not by `REV:path`: the results name some
    thousand (commit, file) pairs that hold a few hundred distinct files, each parsed once a
    process."""
    if blob in CODE:
        return CODE[blob]
    text = git("cat-file", "-p", blob)
    if text is None:
        return None  # not kept: another checkout may hold the blob
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    # One walk: ast.walk queues a node's children before it hands the node over, and each change
    # below replaces only what the node in hand holds (a docstring, a help string, its imports).
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(body, list)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            node.body = body = body[1:] or [ast.Pass()]
        words = HELP_ARGUMENT.get(getattr(getattr(node, "func", None), "id", None))
        if isinstance(node, ast.Call) and words is not None and len(node.args) > words:
            if isinstance(node.args[words], ast.Constant):  # a flag's help (cli.arg, cli.Preset)
                node.args[words] = ast.Constant("")
        if isinstance(body, list) and any(isinstance(n, IMPORTS) for n in body):
            kept = [n for n in body if not isinstance(n, IMPORTS)]
            node.body = [ast.Constant(imported(body))] + kept
    CODE[blob] = ast.dump(tree)
    return CODE[blob]


IMPORTS = (ast.Import, ast.ImportFrom)
# Calls whose argument at this place is help text, words for --help that no figure depends on:
# tools.cli.arg(default, help, ...) and tools.cli.Preset(help, applies, values).
HELP_ARGUMENT = {"arg": 1, "Preset": 0}
FOLDERS = ("game", "lm", "tools")  # the project's folders of modules (a move into one is no change)


def imported(body: list) -> str:
    """What a block's import statements bind, in one order and whatever the folder a project
    module lives in: `from lm import models` and `import models`, or `from game.prompts import x`
    and `from prompts import x`, are the same import (a file moved, and the sort of its imports,
    change no figure)."""
    atoms = set()
    for node in body:
        if isinstance(node, ast.Import):
            atoms |= {("import", a.name, a.asname) for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            parts = (node.module or "").split(".")
            if parts[0] in FOLDERS and len(parts) == 1:  # from lm import models: a module
                atoms |= {("import", a.name, a.asname) for a in node.names}
                continue
            module = ".".join(parts[1:] if parts[0] in FOLDERS else parts)
            atoms |= {("from", module, a.name, a.asname, node.level) for a in node.names}
    return repr(sorted(atoms, key=repr))


def same_code(before: str | None, path: str) -> bool:
    """Whether `path` at HEAD runs what it ran at the git object `before` (a Python file whose
    edits since touched only comments, docstrings or layout can change no figure)."""
    now = (head_blobs(REPO) or {}).get(
        path
    )  # a blob, as `before` is or names: neither changes with HEAD
    before = None if before is None else blob_of(REPO, before)
    if before is None or now is None or not path.endswith(".py"):
        return False
    old = code_of(before)
    return old is not None and old == code_of(now)


def code_changes(name: str, data) -> list[str] | None:
    """The files this result depends on whose code differs now (at HEAD) from the code it
    measured: since its recorded commit, or, for a file uncommitted when it was measured, from the
    bytes it had then; a Python file edited only in comments, docstrings or layout is the same code
    (`same_code`). None where that cannot be told (no commit recorded, or no git history here)."""
    m = meta(name, data)
    since, blobs = (
        (changed_since(REPO, m["commit"]), head_blobs(REPO)) if m.get("commit") else (None, None)
    )
    if since is None or blobs is None:
        return None
    if IGNORE_CHANGES:
        return []
    uncommitted = m.get("uncommitted") or {}
    moved = moved_since(REPO, m["commit"])  # {path now: its path when it was measured}
    changed = []
    for f in depends_on(name):
        then = moved.get(f, f)
        if then in uncommitted:  # measured on bytes no commit holds: compare with those
            before = uncommitted[then]
            differs = blobs.get(f) != before
        else:
            before = f"{m['commit']}:{then}"
            differs = f in since
        if differs and not same_code(before, f):
            changed.append(f)
    return changed


# ---------------------------------------------------------------- one line per file
REFERENCE_NAMES = {  # the reference policies (reference.py) by their result files' names
    "bayes": "the Bayes policy",
    "fixed_sequence": "the best fixed sequence",
    "greedy_oracle": "the greedy oracle",
    "random": "random questions",
}
CITED: dict = {}  # {result file: its provenance line}, in the order a document first cites them


def cite(name: str, data) -> str:
    """A result file's name as a section gives it (`bench/results/NAME`), its provenance line kept
    for the document's list of files (`provenance`)."""
    CITED.setdefault(name, provenance_line(name, data))
    return named(name)


def since_text(changed, name: str | None = None) -> str:
    """What has changed since a result was measured, among the files its figures depend on (those
    of the result file `name`): by name where they are few, else as all but those that have not."""
    if changed is None:
        return "not known (no commit recorded)"
    every = depends_on(name) if name else []
    if len(changed) > 3 and len(changed) > len(every) / 2:
        kept = [f"`{f}`" for f in every if f not in changed]
        return f"{len(changed)} of its {len(every)} source files" + (
            f", all but {', '.join(kept)}" if kept else ", all of them"
        )
    return ", ".join(removed(f"`{f}`", f) for f in changed) or "nothing"


def measured_text(m: dict) -> str:
    commit = f"`{m['commit'][:7]}`" if m.get("commit") else "a commit not recorded"
    extra = " (with uncommitted edits it records)" if m.get("uncommitted") else ""
    return f"measured at {commit}{extra} on {m.get('date', 'a date not recorded')}"


def row_groups(data) -> dict:
    """{(question set, split): the rows' "measured" records} for a file whose rows record the code
    that trained and scored them (generalization.json, screens.json)."""
    groups = {}
    for r in (data.get("runs") or []) if isinstance(data, dict) else []:
        if isinstance(r, dict) and r.get("measured"):
            key = (r.get("question_set", "paper"), r.get("split_seed"))
            groups.setdefault(key, []).append(r["measured"])
    return groups


def rows_line(name: str, key: tuple, measured: list) -> str:
    """A group of a file's rows: how many, the commits and dates that trained them, and what has
    changed since any of them was measured."""
    code = [m.get("trained") or m["scored"] for m in measured]
    known = [c for c in (code_changes(name, c) for c in code) if c is not None]
    commits = {c.get("commit") for c in code}
    dates = sorted(m["date"] for m in measured)
    span = dates[0] if dates[0] == dates[-1] else f"{dates[0]} to {dates[-1]}"
    at = f"`{next(iter(commits))[:7]}`" if len(commits) == 1 else f"{len(commits)} commits"
    changed = sorted(set().union(*known)) if known else None
    return (
        f"- `{name}`, {key[0]} set, split {key[1]} ({len(measured)} runs): trained at {at}, "
        f"{span}; changed since: {since_text(changed, name)}."
    )


COMMAND_SHOWN = 120  # a longer command is the file's to give, not the list's


def provenance_line(name: str, data) -> str:
    """A file's line (a file whose rows record their own code: a line per question set and split):
    the code and date it measured, its machine, its command where short, and what has changed
    since among the files its figures depend on (a help string, a docstring, a comment or a move
    of a file is no change: `same_code`)."""
    groups = row_groups(data)
    if groups:
        return "\n".join(rows_line(name, k, ms_) for k, ms_ in sorted(groups.items(), key=repr))
    m = meta(name, data)
    if not depends_on(name):  # a draw (sealed.json), not a measurement
        written = measured_text(m).replace("measured", "written", 1)
        return f"- `{name}`: {written}; it measures no code."
    source = f", converted from {named(m['source'].rsplit('/', 1)[-1])}" if "source" in m else ""
    command = m.get("command") or ""
    by = f", `{command}`" if command and len(command) <= COMMAND_SHOWN else ""
    return (
        f"- `{name}`{source}: {measured_text(m)}, "
        f"{machine_text(m.get('machine'), short=True)}{by}; "
        f"changed since: {since_text(code_changes(name, data), name)}."
    )


def provenance(document: str) -> list[str]:
    """The section that ends a document: one line per result file it cites."""
    return rendered("files.md", document=document, lines=list(CITED.values()))


# ---------------------------------------------------------------- train.py's defaults then
def defaults_then(name: str, data, preset: str | None = None) -> dict | None:
    """train.py's defaults (with the llm preset's settings over them where `preset` is "llm") in
    the code a result file measured, as the file (or provenance.json) records them; None where
    neither does."""
    m = meta(name, data)
    then = m.get("train_defaults")
    if then is None:
        return None
    return then | ((m.get("llm_preset") or {}) if preset == "llm" else {})


def moved_defaults(name: str, data, keys) -> list[str] | None:
    """The settings among `keys` whose train.py default in the code a file measured differs from
    today's, as flags (`--top-p 1.0`), and those that code did not have yet (`no --refusal-rate`);
    None where that code cannot be read."""
    import config

    then, today = defaults_then(name, data), vars(config.TrainConfig())
    if then is None:
        return None
    flag = lambda k: f"--{k.replace('_', '-')}"  # noqa: E731
    return [f"`{flag(k)} {then[k]}`" for k in keys if k in then and then[k] != today[k]] + [
        f"no `{flag(k)}` yet" for k in keys if k not in then and k in today
    ]


def removed(text: str, path: str | None = None) -> str:
    """A changed file's name (as `text`), "(removed)" after it where HEAD no longer has it."""
    return text + ("" if (path or text) in (head_blobs(REPO) or {}) else " (removed)")


def machine_text(m, short: bool = False) -> str:
    """A result's machine; `short`: its cores or GPU alone."""
    if isinstance(m, dict):
        gpu = f", {m['gpu']}" if m.get("gpu") else ""
        if short:
            return m["gpu"] if m.get("gpu") else f"{m['cpus']} CPU cores"
        vector = f", {m['cpu_capability']}" if m.get("cpu_capability") else ""
        bf16 = {True: " with bf16", False: " without bf16"}.get(m.get("cpu_bf16"), "")
        return f"{m['cpus']} CPU cores ({m['machine']}{vector}{bf16}){gpu}, torch {m['torch']}"
    if short and m:
        gpu = re.search(r"NVIDIA [^,(]+?(?= GPU|,|\(|$)", m)
        return gpu[0].strip() if gpu else m.split(",")[0]
    return m or "not recorded"


def missing(name: str, command: str) -> list[str]:
    return [
        f"*Not measured yet:* `bench/results/{name}` does not exist; `{command}` writes it.",
        "",
    ]


def nan(x) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def num(x, digits=2, scale=1.0) -> str:
    return "n/a" if nan(x) else f"{x * scale:.{digits}f}"


def ms(values, digits=1, scale=100.0) -> str:
    """mean +- SEM over seeds of per-seed values, with as many more digits (up to 3) as it takes
    for neither to round onto 0 or onto the scale's top (100%) when it is not exactly that:
    99.6 +- 0.4 is not written 100 +- 0."""
    mean, sem = mean_sem([v for v in values if not nan(v)])
    if nan(mean):
        return "n/a"
    while digits < 3 and any(misleads(x * scale, digits, scale) for x in (mean, sem) if not nan(x)):
        digits += 1
    return num(mean, digits, scale) + ("" if nan(sem) else f" ± {num(sem, digits, scale)}")


def misleads(x: float, digits: int, top: float) -> bool:
    """Whether x, rounded to `digits`, reads as 0 or as `top` without being it."""
    shown = round(x, digits)
    return any(shown == edge != x for edge in (0.0, top))


def pval(p) -> str:
    return "n/a" if nan(p) else f"{p:.2g}"


def t_test_text(t, p) -> str:
    """A paired t-test's cell; where every seed differs by the same amount the test is undefined."""
    if nan(t) and p == 1.0:
        return "no difference on any seed"
    if isinstance(t, float) and math.isinf(t):
        return "the same difference on every seed (no spread: t undefined)"
    return f"t = {num(t)}, p = {pval(p)}"


def table(header: list, rows: list) -> list[str]:
    """A markdown table; a `|` inside a cell is escaped, so it does not split the cell."""

    def cells(row):
        return " | ".join(str(c).replace("|", "\\|") for c in row)

    return (
        ["| " + cells(header) + " |", "|" + "---|" * len(header)]
        + ["| " + cells(r) + " |" for r in rows]
        + [""]
    )


def seeds_text(seeds) -> str:
    return ", ".join(str(s) for s in seeds)


def seed_range(seeds) -> str:
    """Seeds as a range where they run without a gap (0-5), else one by one."""
    seeds = list(seeds)
    consecutive = len(seeds) > 2 and seeds == list(range(seeds[0], seeds[0] + len(seeds)))
    return f"{seeds[0]}-{seeds[-1]}" if consecutive else seeds_text(seeds)


# ---------------------------------------------------------------- the templates
TEMPLATES = Path(__file__).resolve().parent / "templates"  # the sentences of every document
BLOCK_START = re.compile(r"([-+*>#|=]|\d+[.)])(\s|$)")  # what must not open a wrapped line
WIDTH = 100  # prose is wrapped to this many characters; markdown joins the lines again


@lru_cache(maxsize=None)
def templates() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        undefined=jinja2.StrictUndefined,  # a figure the template names and no function gives
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,  # markdown, not HTML
    )
    env.filters |= {"num": num, "ms": ms, "pval": pval, "seeds": seed_range}
    env.filters["table"] = lambda rows, header: "\n".join(table(header, rows)).rstrip("\n")
    env.filters["oneline"] = oneline
    env.globals |= {"cite": cite, "named": named, "t_test": t_test_text}
    return env


def rendered(template: str, **figures) -> list[str]:
    """A template's text, fed these figures, as lines whose paragraphs are one line each (a
    template writes a sentence across lines as it reads best; `document` wraps them again)."""
    return paragraphs(templates().get_template(template).render(**figures))


def in_words(macro: str, *args) -> str:
    """A file's figure in words, one line: a macro of templates/timing_figures.md."""
    return oneline(getattr(templates().get_template("timing_figures.md").module, macro)(*args))


def oneline(text) -> str:
    """A macro's text as one line (a table cell, a figure in words): its lines, stripped, joined
    by spaces."""
    return " ".join(line.strip() for line in str(text).splitlines() if line.strip())


def paragraphs(text: str) -> list[str]:
    """Lines with each paragraph and list item joined into one; headings, table rows, figures and
    blank lines as they are."""
    out: list[str] = []
    for line in text.splitlines():
        if not line.strip() and (not out or not out[-1].strip()):
            continue  # one blank line between blocks, none at the top
        alone = not line.strip() or line.startswith(("|", "#", "![", "<!--", "- "))
        if alone or not out or not out[-1].strip() or out[-1].startswith(("|", "#", "![")):
            out.append(line if alone else line.strip())
        else:
            out[-1] += " " + line.strip()
    return out


def wrapped(line: str) -> list[str]:
    """A line of prose (or a list item) as lines of at most WIDTH characters; a table row, a
    heading or a figure as it is."""
    if len(line) <= WIDTH or line.startswith(("|", "#", "![", "<!--")):
        return [line]
    indent = "  " if line.startswith("- ") else ""
    out = textwrap.wrap(
        line, WIDTH, subsequent_indent=indent, break_long_words=False, break_on_hyphens=False
    )
    for i in range(len(out) - 1, 0, -1):  # a line that markdown would read as a list or heading
        while BLOCK_START.match(out[i].strip()) and " " in out[i].strip():
            word, rest = out[i].strip().split(" ", 1)
            out[i - 1], out[i] = f"{out[i - 1]} {word}", indent + rest
    return out


def document(lines: list[str]) -> str:
    """A document's text: its lines with the prose wrapped, one newline at the end."""
    return "\n".join(w for line in lines for w in wrapped(line)).rstrip("\n") + "\n"
