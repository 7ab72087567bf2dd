"""Reading and formatting the result files for bench/report_results.py and bench/report_binary.py:
where the files are (`use`), each file's command, machine and date, numbers as text, markdown
tables, and the reproduction tables of bench/reproduce.py's files (mean +- SEM over seeds, paired
t-tests: stats.mean_sem, stats.paired_t_test). No number is typed here: each is read from a file.
"""
import json
import math
from contextlib import contextmanager
from pathlib import Path

from bench.common import RESULTS
from stats import mean_sem, paired_t_test

DIR, PROVENANCE = Path(RESULTS), {}     # the folder read, and its provenance.json (set by `use`)


def use(results: str) -> None:
    """Read the result files from this folder (and its provenance.json) from now on."""
    global DIR, PROVENANCE
    DIR = Path(results)
    PROVENANCE = (load("provenance.json") or {}).get("files", {})


@contextmanager
def reading(results: str):
    """Read the result files from this folder inside the block, from bench/results again after it."""
    use(results)
    try:
        yield
    finally:
        use(RESULTS)


def names(pattern: str) -> list[str]:
    """The result files whose names match the glob pattern, sorted."""
    return sorted(p.name for p in DIR.glob(pattern))


def load(name: str):
    path = DIR / name
    return json.loads(path.read_text()) if path.exists() else None


def meta(name: str, data) -> dict:
    """command, machine, date (and checkpoint) of a file: its own, else provenance.json's."""
    own = {k: data[k] for k in ("command", "machine", "date", "checkpoint", "source")
           if isinstance(data, dict) and k in data}
    return {**PROVENANCE.get(name, {}), **own}


def machine_text(m) -> str:
    if isinstance(m, dict):
        gpu = f", {m['gpu']}" if m.get("gpu") else ""
        return f"{m['cpus']} CPU cores ({m['machine']}){gpu}, torch {m['torch']}"
    return m or "not recorded"


def provenance_line(name: str, data) -> str:
    m = meta(name, data)
    source = f", converted from `{m['source']}`" if "source" in m else ""
    note = f" *Note:* {data['note']}." if isinstance(data, dict) and data.get("note") else ""
    return (f"*Command:* `{m.get('command', 'not recorded')}`. *Machine:* {machine_text(m.get('machine'))}. "
            f"*Date:* {m.get('date', 'not recorded')}. *File:* `bench/results/{name}`{source}.{note}")


def missing(name: str, command: str) -> list[str]:
    return [f"*Not measured yet:* `bench/results/{name}` does not exist; `{command}` writes it.", ""]


def nan(x) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def num(x, digits=2, scale=1.0) -> str:
    return "n/a" if nan(x) else f"{x * scale:.{digits}f}"


def ms(values, digits=1, scale=100.0) -> str:
    """mean +- SEM over seeds of per-seed values."""
    mean, sem = mean_sem([v for v in values if not nan(v)])
    return "n/a" if nan(mean) else num(mean, digits, scale) + ("" if nan(sem) else f" ± {num(sem, digits, scale)}")


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
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)] + \
           ["| " + " | ".join(str(c) for c in r) + " |" for r in rows] + [""]


def per_seed(runs: list, key: str) -> list:
    """One run per seed: its held-out evaluation of `key` (None where it has none)."""
    return [(r.get("final_eval") or {}).get(key) for r in runs]


def seeds_text(seeds) -> str:
    return ", ".join(str(s) for s in seeds)



# ---------------------------------------------------------------- reproductions
COLUMNS = [("eval/resolve_rate", "Resolve greedy", 1, 100), ("eval/sampled_resolve_rate", "Resolve sampled", 1, 100),
           ("eval/zero_rate", "Zero", 1, 100), ("eval/eliminated_mean", "Elim./turn", 2, 1),
           ("eval/episode_length", "Ep. length", 2, 1)]
FINAL_WINDOW = [("clue/reward", "Reward mean", 1), ("clue/normalized_reward", "Normalized reward", 1),
                ("clue/episode_resolve_rate", "Episode resolve rate (%)", 100),
                ("clue/eliminated_mean", "Mean eliminated candidates", 1),
                ("clue/redundancy_rate", "Redundancy rate (%)", 100), ("clue/episode_length", "Mean episode length", 1),
                ("clue/turn_resolve_rate", "Turn resolve rate (%)", 100), ("clue/turns_saved", "Turns saved", 1),
                ("train/entropy", "Entropy", 1)]
RESOLVE = ("eval/resolve_rate", "eval/sampled_resolve_rate")


def played(resolved: dict) -> str:
    """Which checkpoint of each run the held-out figures are of, and how it was chosen."""
    n = resolved.get("validation_secrets", 0)
    if not n:
        return "each run's last checkpoint (no choice made on any secrets)"
    w = resolved.get("validation_window", 1)
    rule = "its best single evaluation" if w == 1 else f"the best mean of {w} evaluations in a row"
    return f"each run's kept checkpoint, chosen on {n} validation secrets carved from the training secrets ({rule})"


def protocol(data: dict, chosen: str) -> str:
    r = data["train_config"].get("resolved", {})
    sampled = f" and sampled at T = 1 ({r['eval_samples']} episodes per secret)" if r.get("eval_samples") else " and sampled"
    return (f"*Protocol:* settings: {chosen}. Reported: {played(r)}, played on the {r.get('n_heldout', 'held-out')} "
            f"held-out secrets greedily{sampled}; the held-out secrets only report. Mean ± SEM over seeds "
            f"{seeds_text(data['seeds'])}, rates in %.")


def reproduction_table(data: dict) -> list[str]:
    """Mean +- SEM over seeds of what every run has; per-seed steps; paired t-tests of the first
    estimator against each other."""
    runs, first = data["runs"], data["estimators"][0]
    every = lambda ok: all(ok(r) for rs in runs.values() for r in rs)  # noqa: E731
    listed = lambda rs, f: ", ".join(str(f(r)) for r in rs)  # noqa: E731
    cols = [c for c in COLUMNS if every(lambda r: (r.get("final_eval") or {}).get(c[0]) is not None)]
    extra = [(label, cell) for label, ok, cell in [
        ("Kept step (per seed)", every(lambda r: (r.get("kept") or {}).get("dir") == "best"),
         lambda rs: listed(rs, lambda r: r["kept"]["step"])),
        ("Steps run (per seed)", every(lambda r: r.get("steps")), lambda rs: listed(rs, lambda r: r["steps"])),
        ("Steps to 90% sampled (per seed)", every(lambda r: "steps_to_90" in r),
         lambda rs: listed(rs, lambda r: r["steps_to_90"] or "never")),
        ("Train time (s)", every(lambda r: r.get("train_seconds")),
         lambda rs: ms([r["train_seconds"] for r in rs], 0, 1))] if ok]
    rows = [[est] + [ms(per_seed(rs, key), d, s) for key, _, d, s in cols] + [cell(rs) for _, cell in extra]
            for est, rs in runs.items()]
    lines = table(["Estimator"] + [c[1] for c in cols] + [label for label, _ in extra], rows)
    seeds = "; ".join(f"{est} " + ", ".join(f"{num(g, 1, 100)} / {num(s, 1, 100)}" for g, s in
                                            zip(*(per_seed(rs, k) for k in RESOLVE))) for est, rs in runs.items())
    lines += [f"Per seed, held-out resolve greedy / sampled (%): {seeds}.", ""]
    tests = [[f"{first} vs {other}"] + [t_test_text(t, p) for t, p in
                                        (paired_t_test(per_seed(runs[first], k), per_seed(runs[other], k)) for k in RESOLVE)]
             for other in data["estimators"][1:]]
    return lines + (table(["Paired t-test over seeds", "greedy resolve", "sampled resolve"], tests) if tests else [])


def final_window(data: dict, first: str, second: str) -> list[str]:
    """tab:echo_grpo_final_window_stats: per seed the mean of each training metric over the last
    `window` steps (from the JSON), then mean +- SEM over seeds, the difference, a paired t-test."""
    rows = []
    for key, label, scale in FINAL_WINDOW:
        a, b = ([r["final_window"][key] for r in data["runs"][e]] for e in (first, second))
        rows.append([label, ms(a, 3, scale), ms(b, 3, scale), num(mean_sem(a)[0] - mean_sem(b)[0], 3, scale),
                     pval(paired_t_test(a, b)[1])])
    return [f"Final window (tab:echo_grpo_final_window_stats): per seed the mean of each training metric over the last "
            f"{data['window']} of {data['runs'][first][0].get('steps')} steps (sampled training batches), then mean ± "
            "SEM over seeds; paired t-test over seeds.", ""] + \
        table(["Metric", first, second, "Difference", "Paired t-test p"], rows)
