"""The paper's figures the report sets beside echo's (bench/paper_figures.py) are on the TeX lines
they cite, where the TeX is there (../shared/paper/echo-paper.tex)."""

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
