"""The paper's figures that the report sets beside echo's, each with where it comes from: its line
in the TeX (../shared/paper/echo-paper.tex; tests/test_paper_figures.py finds each figure on its
line where the TeX is there), or the paper's released code (csu-signal/echo-edp, commit 16d13b0,
as config.py's table gives it) where the TeX states none. bench/report_*.py read them from here,
so no figure of the paper is typed in the report's code.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class PaperFigure:
    value: float | int | str
    tex_line: int | None  # the TeX line that states it; None: the TeX states none
    code: float | int | str | None = None  # the released code's value, where the TeX is silent
    text: str = ""  # how the TeX writes it on that line, where it differs from str(value)

    def cell(self) -> str:
        """The value as the departures table gives it: the TeX's, else "not in the TeX; its
        code: X"."""
        if self.tex_line is None:
            return f"not in the TeX; its code: {self.code}"
        return f"{self.value} (l. {self.tex_line})"


# Table 1 (tab:csg_main_results): Resolve %, mean ± SEM over 3 runs of Qwen2.5-1.5B-Instruct.
TABLE1_RESOLVE = {
    "echo": (PaperFigure(45.3, 623, text=r"\ms{45.3}{1.5}"), 1.5),
    "grpo": (PaperFigure(14.7, 594, text=r"\ms{14.7}{1.5}"), 1.5),
    "rloo": (PaperFigure(13.8, 603, text=r"\ms{13.8}{1.6}"), 1.6),
}

# The settings echo's paper-set defaults depart from (bench/report_screens.DEPARTURES). The TeX
# describes no random opening questions and no refusals (its oracle answers every routed question,
# App. B, l. 1178), so their paper value is 0 with no line to cite; App. B's prompt lists the
# candidates (l. 1173).
SETTINGS = {
    "prefix_turns": PaperFigure(0, None, code=0),
    "refusal_rate": PaperFigure(0, None, code=0),
    "candidate_format": PaperFigure("list", 1173, text="the remaining candidate list"),
    "secrets_per_step": PaperFigure(16, None, code=16),
    "steps": PaperFigure(350, None, code=350),
    "ppo_epochs": PaperFigure(1, None, code=1),
    "top_p": PaperFigure(0.9, None, code=0.9),
}
