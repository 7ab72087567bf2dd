"""The paper's figures the report sets beside echo's (bench/paper_figures.py) are on the TeX lines
they cite, where the TeX is there (../shared/paper/echo-paper.tex)."""

import re
from pathlib import Path

import pytest

from bench import paper_figures

TEX = Path(__file__).resolve().parent.parent.parent / "shared" / "paper" / "echo-paper.tex"
FIGURES = [f for f, _ in paper_figures.TABLE1_RESOLVE.values()]
FIGURES += list(paper_figures.SETTINGS.values())


@pytest.mark.skipif(not TEX.exists(), reason="needs the paper's TeX beside the repository")
@pytest.mark.parametrize("figure", [f for f in FIGURES if f.tex_line], ids=repr)
def test_each_cited_figure_is_on_its_tex_line(figure):
    line = TEX.read_text().splitlines()[figure.tex_line - 1]
    assert (figure.text or str(figure.value)) in line


def test_a_figure_the_tex_does_not_state_says_so_and_gives_the_code_value():
    silent = [f for f in FIGURES if f.tex_line is None]
    assert silent and all(f.code is not None for f in silent)
    assert all(f.cell().startswith("not in the TeX; its code: ") for f in silent)
    assert paper_figures.SETTINGS["candidate_format"].cell() == "list (l. 1173)"


CITATION = re.compile(r"paper, l\. (\d+): ([^;)\"\n]+)")


def cited_values() -> list[tuple[str, int, str]]:
    """Every "(paper, l. N: X)" of the project's Python (help strings, docstrings, comments)."""
    root = Path(__file__).resolve().parent.parent
    found = []
    for path in sorted(root.rglob("*.py")):
        if {".venv", ".ci"} & set(path.relative_to(root).parts):
            continue
        for m in CITATION.finditer(path.read_text()):
            found.append((str(path.relative_to(root)), int(m[1]), m[2].strip()))
    return found


def key_token(value: str) -> str:
    """What of a cited value the TeX must hold: its first token with a digit (a number, a model's
    name), else its longest word."""
    tokens = re.findall(r"[\w.-]+", value)
    with_digit = [t.rstrip(".") for t in tokens if re.search(r"\d", t)]
    return with_digit[0] if with_digit else max(tokens, key=len)


@pytest.mark.skipif(not TEX.exists(), reason="needs the paper's TeX beside the repository")
def test_each_paper_line_the_code_cites_holds_its_value():
    """A "(paper, l. N: X)" in the code names a TeX line (or the two after it, where a sentence
    wraps) that holds X's number or name: a wrong line number or value fails."""
    lines = TEX.read_text().splitlines()
    cited = cited_values()
    assert len(cited) >= 10  # config.py, env.py, evaluate.py, oracle.py, theory/ cite the TeX
    wrong = [
        (where, n, value)
        for where, n, value in cited
        if key_token(value) not in " ".join(lines[n - 1 : n + 2])
    ]
    assert not wrong
