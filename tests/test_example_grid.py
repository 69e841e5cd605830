"""The example grid the docs point to (issue 50, "Your own grid"): examples/grid.toml is shipped, is
the grid the user guide shows, and `depthscale sweep` takes it as written."""

import re
import tomllib
from pathlib import Path

from depthscale.derivations.cli.app import main
from depthscale.sims.grid import load_grid
from depthscale.sims.store import Store

ROOT = Path(__file__).resolve().parents[1]
GRID = ROOT / "examples" / "grid.toml"


def test_the_user_guide_shows_the_shipped_grid_and_sweeps_it_by_its_path():
    guide = (ROOT / "docs" / "user-guide.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```toml\n(.*?)```", guide, flags=re.S)
    assert GRID.read_text(encoding="utf-8") in blocks
    sweeps = re.findall(r"^depthscale sweep (\S+)", guide, flags=re.M)
    assert "examples/grid.toml" in sweeps and "grid.toml" not in sweeps  # no grid that is not shipped
    assert 'load_grid("examples/grid.toml")' in (ROOT / "docs" / "index.md").read_text(encoding="utf-8")


def test_the_example_grid_is_what_its_header_says():
    runs = load_grid(str(GRID))
    # seeds x spectra x depths, counted from the file's own lists
    data = tomllib.loads(GRID.read_text(encoding="utf-8"))
    (block,) = data["grid"]
    assert len(runs) == len(data["seeds"]) * len(block["task"]["spectra"]) * len(block["model"]["depth"]) == 30
    assert {c.model.model for c, _ in runs} == {"softmax"} and {c.train.steps for c, _ in runs} == {8000}


def test_sweep_takes_the_example_grid_as_written(tmp_path, capsys):
    # the documented command, with a budget too short to start a run: the grid is read, validated and
    # planned, the store made, nothing trained
    store = tmp_path / "runs.sqlite"
    assert main(["sweep", str(GRID), "--store", str(store), "--budget", "1s"]) == 0
    out = capsys.readouterr().out
    assert "30 runs in the grid" in out and "give --budget of at least" in out, out
    with Store(store) as st:
        assert list(st.records()) == []


def test_the_example_grid_runs_at_a_tiny_size(tmp_path, capsys):
    # the same file with its sizes cut down (steps, depths, seeds, d, P): every run finishes and fits
    text = GRID.read_text(encoding="utf-8")
    for old, new in (
        ("steps = 8000", "steps = 5\nbatch = 8\neval_contexts = 64"),
        ("seeds = [0, 1, 2]", "seeds = [0]"),
        ("depth = [1, 2, 4, 16, 64]", "depth = [1, 2]"),
        ("d = 16", "d = 4"),
        ("P = 128", "P = 8"),
    ):
        assert old in text, old
        text = text.replace(old, new)
    tiny = tmp_path / "grid.toml"
    tiny.write_text(text, encoding="utf-8")
    store = tmp_path / "runs.sqlite"
    assert main(["sweep", str(tiny), "--store", str(store), "--executor", "serial", "--quiet"]) == 0
    assert "4 runs in the grid: 4 done now" in capsys.readouterr().out
    assert main(["fit", "--store", str(store), "--n-boot", "0"]) == 0
