"""bench/credit_grid.py: the numbers its figure draws, read back from the JSON written beside the
PNG, are each estimator's credit (echo.echo_advantages, baselines' GRPO and RLOO) and A_B
(fidelity.bayesian_advantages) on the batch it played; a turn a rollout did not play is drawn
grey; the committed figure is what its JSON draws."""

import copy
import io
import json
from dataclasses import asdict
from pathlib import Path

import pytest
import torch
from matplotlib.colors import to_hex

import fidelity
from baselines import ESTIMATORS, EstimatorContext, credit_from_batch
from bench import credit_grid, report_credit_grid
from bench.common import RESULTS
from echo import echo_advantages

SMALL = ["--group-size", "2", "--branches", "2", "--alternatives", "1", "--threads", "2"]


@pytest.fixture(scope="module")
def drawn(tmp_path_factory):
    """The command on the warm-up policy with a small budget: (its JSON, read back, and the PNG)."""
    out = tmp_path_factory.mktemp("credit_grid")
    credit_grid.main(SMALL + ["--out", str(out)])
    return json.loads((out / "credit_grid.json").read_text()), out / "credit_grid.png"


def test_the_numbers_drawn_are_each_estimators_credit_and_a_b_of_the_batch(drawn):
    """Played again with the JSON's secret and seed, the batch has the JSON's rewards and cells;
    on it, Eq. 1 (echo_advantages), GRPO, RLOO and A_B by branching (fidelity, with the command's
    K, M and random streams) give exactly the numbers the JSON holds, None where no turn was
    played."""
    result, png = drawn
    assert png.exists()
    (panel,) = result["panels"]
    cfg = credit_grid.CreditGridConfig(**result["config"])
    policy, game, _, _ = credit_grid.loaded("tiny", credit_grid.config_from_flags([]))
    assert panel["game"] == asdict(game)  # the game it played is the one recorded
    batch = credit_grid.play(policy, game, result["secret"], cfg.group_size, result["seed"])
    credit = credit_from_batch(batch, game.n_max)
    active = credit.active[0]  # (G, T)
    assert panel["active"] == active.tolist()

    def grid(key):  # the JSON's (G, T) grid, 0 where None, and where it holds None
        values = torch.tensor([[0.0 if v is None else v for v in row] for row in panel[key]])
        return values.double(), torch.tensor([[v is None for v in row] for row in panel[key]])

    for key in ("reward", "echo", "grpo", "rloo", "a_b"):
        assert torch.equal(grid(key)[1], ~active), key
    assert torch.allclose(grid("reward")[0], credit.rewards[0])
    want = {
        "echo": echo_advantages(credit.rewards, credit.active)[0],
        "grpo": ESTIMATORS["grpo"].advantages(credit, EstimatorContext())[0],
        "rloo": ESTIMATORS["rloo"].advantages(credit, EstimatorContext())[0],
    }
    for key, values in want.items():
        assert torch.allclose(grid(key)[0], values.double(), atol=1e-6), key
    rng, generator = credit_grid.branching_streams(result["seed"])
    truth = fidelity.bayesian_advantages(
        batch,
        list(range(len(batch.records))),
        policy,
        fidelity.lm_actor(policy, generator),
        game,
        cfg.branches,
        cfg.alternatives,
        rng,
        generator,
    )
    a_b = batch.to_grid(torch.tensor([x["a_b"] for x in truth], dtype=torch.float64))[0]
    se = batch.to_grid(torch.tensor([x["a_b_se"] for x in truth], dtype=torch.float64))[0]
    assert torch.allclose(grid("a_b")[0], a_b) and torch.allclose(grid("a_b_se")[0], se)
    assert panel["returns"] == pytest.approx(credit.rewards[0].sum(-1).tolist())


def grey_cells(result: dict) -> set:
    """(panel, g, t) of every cell the figure draws in the ended colour, every row of it grey."""
    fig = credit_grid.draw(result)
    colours = {}
    for ax in fig.axes:
        for patch in ax.patches:
            if patch.get_gid():
                p, g, t, row = patch.get_gid().split("-")
                key = (int(p[1:]), int(g[1:]), int(t[1:]))
                colours.setdefault(key, set()).add(to_hex(patch.get_facecolor()))
    return {key for key, seen in colours.items() if seen == {credit_grid.ENDED}}


def test_a_finished_rollouts_turns_are_drawn_ended(drawn):
    """Every cell the figure draws grey is a turn its rollout did not play, and every such turn
    within the panel's columns is grey: on the command's result, and with a rollout cut short
    after its first turn, as a rollout that found the secret at turn 0 is."""
    result, _ = drawn
    unplayed = (
        lambda r: {  # noqa: E731
            (n, g, t)
            for n, p in enumerate(r["panels"])
            for g, row in enumerate(p["active"])
            for t, played in enumerate(row[: credit_grid.columns(p)])
            if not played
        }
    )
    assert grey_cells(result) == unplayed(result)
    cut = copy.deepcopy(result)
    panel = cut["panels"][0]
    panel["active"][0] = [t == 0 for t in range(len(panel["active"][0]))]
    for key in ("question", "candidates_before", "candidates_after", "reward", "resolved"):
        panel[key][0][1:] = [None] * (len(panel[key][0]) - 1)
    for key, _ in credit_grid.ROWS + (("a_b_se", ""),):
        panel[key][0][1:] = [None] * (len(panel[key][0]) - 1)
    panel["resolved"][0][0] = True
    assert {(0, 0, t) for t in range(1, credit_grid.columns(panel))} <= grey_cells(cut)
    assert grey_cells(cut) == unplayed(cut)


def test_the_console_table_prints_every_turn_played(drawn, capsys):
    """The table has a line per turn played, with that turn's question and ECHO credit."""
    result, _ = drawn
    lines = credit_grid.table(result).splitlines()
    (panel,) = result["panels"]
    for g, row in enumerate(panel["active"]):
        for t, played in enumerate(row):
            start = f"{g + 1:2d} {t:2d}  {panel['question'][g][t]}"
            match = [line for line in lines if line.startswith(start)]
            assert len(match) == (1 if played else 0), (g, t)
            if played:
                assert f"{panel['echo'][g][t]:+6.2f}" in match[0]


def test_the_committed_figure_is_what_its_json_draws():
    """bench/results/credit_grid.png holds the bytes bench/report_results.py draws from
    credit_grid.json (its --check fails otherwise)."""
    data = json.loads((Path(RESULTS) / report_credit_grid.FILE).read_text())
    png = io.BytesIO()
    credit_grid.save(data, png)
    assert (Path(RESULTS) / report_credit_grid.FIGURE).read_bytes() == png.getvalue()


def test_a_policy_that_is_no_directory_is_one_sentence(tmp_path, capsys):
    """A checkpoint that does not exist stops before anything is played: exit status 2, one line."""
    with pytest.raises(SystemExit) as stop:
        credit_grid.main(["--policies", str(tmp_path / "nowhere"), "--out", str(tmp_path)])
    assert stop.value.code == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
    assert not (tmp_path / "credit_grid.json").exists()
