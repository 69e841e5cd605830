"""`report` and `reproduce`: bad input is refused before anything is written."""

import pytest

from depthscale.derivations.cli.app import main
from depthscale.derivations.cli.commands.report import preset_path
from depthscale.derivations.study import study
from depthscale.sims.grid import load_grid


def run_cli(argv, capsys):
    code = main(argv)
    err = capsys.readouterr().err.strip()
    return code, err


@pytest.mark.parametrize(
    "argv, name",
    [
        (["reproduce", "--preset", "huge"], "preset"),
        (["reproduce", "--preset", "smoke", "--executor", "mpi"], "executor"),
        (["reproduce", "--preset", "smoke", "--workers", "0"], "workers"),
        (["reproduce", "--preset", "smoke", "--floor-contexts", "1"], "floor-contexts"),
        (["report", "--store", "missing.sqlite"], "store"),
    ],
)
def test_bad_input_writes_nothing(tmp_path, capsys, argv, name):
    out = tmp_path / "out"
    code, err = run_cli(argv + ["--out", str(out)], capsys)
    assert code == 2 and name in err and len(err.splitlines()) == 1
    assert not out.exists()


def test_report_refuses_an_unknown_preset_and_writes_nothing(tmp_path, capsys):
    from depthscale.sims.store import Store

    with Store(tmp_path / "s.sqlite", mode="write"):
        pass
    out = tmp_path / "out"
    code, err = run_cli(
        ["report", "--store", str(tmp_path / "s.sqlite"), "--preset", "huge", "--out", str(out)], capsys
    )
    assert code == 2 and err.startswith("depthscale: error: preset='huge'") and len(err.splitlines()) == 1
    assert not out.exists()


def test_out_must_not_be_a_file(tmp_path, capsys):
    f = tmp_path / "file"
    f.write_text("keep me")
    code, err = run_cli(["reproduce", "--preset", "smoke", "--out", str(f)], capsys)
    assert code == 2 and "out" in err and f.read_text() == "keep me"


@pytest.mark.parametrize("preset", study("core").presets)  # the other studies' presets: their own tests
def test_presets_are_valid_grids(preset):
    runs = load_grid(str(preset_path(preset)))
    models = {c.model.model for c, _ in runs}
    tasks = {c.task.task for c, _ in runs}
    assert models == {"linear", "softmax"} and {"topk", "easy-exact"} <= tasks
    # every claim family has data: controls, top-16 and both linear tasks are in every preset
    assert any(c.model.qk == "temperature" for c, _ in runs) and any(c.model.qk == "tied" for c, _ in runs)
    assert any(c.task.task == "topk" and c.task.k > 2 for c, _ in runs)
    assert any(c.model.model == "linear" and c.task.task == "topk" for c, _ in runs)
