"""``depthscale sweep`` and ``depthscale fit`` end to end with a stand-in run function."""

import json
import sqlite3

import numpy as np
import pytest

from depthscale.derivations.analysis.fits import fit_offset_power, fit_power_law
from depthscale.derivations.cli.app import main
from depthscale.sims.grid import load_grid

# five seeds: the fewest a bootstrap over seeds takes (MIN_BOOT_SEEDS)
GRID = """
seeds = [0, 1, 2, 3, 4]
[task]
task = "topk"
spectra = [[0.25, 0.25], [0.5, 0.5]]
d = 4
P = 16
[model]
model = "softmax"
depth = [1, 2, 4, 8, 16, 32, 64]
"""

TRUE_ALPHA = {0.25: 1.0, 0.5: 0.8}


def fake_run(config, seed):
    """Loss L0 + c L^-alpha with alpha set by the spectrum, 1 % seed-level and point noise."""
    L, a = config.model.depth, config.task.a
    g = np.random.default_rng([seed, L, int(100 * a)])
    noise = np.exp(0.01 * np.random.default_rng(seed).standard_normal() + 0.01 * g.standard_normal())
    return {"status": "ok", "converged": True, "final_loss": (0.5 + 2.0 * L ** -TRUE_ALPHA.get(a, 1.0)) * noise}


def failing_run(config, seed):
    raise RuntimeError("engine missing")


RUN_FN = f"{__name__}:fake_run"


def run_cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_sweep_then_fit(tmp_path, capsys):
    grid = tmp_path / "g.toml"
    grid.write_text(GRID)
    store = tmp_path / "s.sqlite"
    code, out, err = run_cli(
        capsys, "sweep", str(grid), "--store", str(store), "--executor", "serial", "--run-fn", RUN_FN, "--json"
    )
    assert code == 0, err
    res = json.loads(out)
    assert (res["total"], res["done"], res["skipped"], res["failed"]) == (70, 70, 0, 0)
    code, out, _ = run_cli(
        capsys, "sweep", str(grid), "--store", str(store), "--executor", "serial", "--run-fn", RUN_FN, "--json"
    )
    assert code == 0 and json.loads(out)["skipped"] == 70 and json.loads(out)["done"] == 0
    code, out, err = run_cli(capsys, "fit", "--store", str(store), "--n-boot", "20", "--json")
    assert code == 0, err
    curves = json.loads(out, parse_constant=lambda name: pytest.fail(f"{name} is not JSON"))["curves"]
    assert len(curves) == 2
    # the command groups by spectrum and averages seeds: redo that here from the stand-in itself
    runs = load_grid(tmp_path / "g.toml")
    depths = np.array([1, 2, 4, 8, 16, 32, 64], dtype=float)
    for c in curves:
        assert c["depths"] == depths.tolist() and c["n_seeds"] == 5
        mean = np.array(
            [
                np.mean(
                    [fake_run(cfg, s)["final_loss"] for cfg, s in runs if cfg.task.a == c["a"] and cfg.model.depth == L]
                )
                for L in depths
            ]
        )
        assert c["mean_loss"] == pytest.approx(mean.tolist(), rel=1e-12)
        off = c["fits"]["offset"]
        assert off["params"] == pytest.approx(fit_offset_power(depths, mean).params, rel=1e-9)
        assert c["fits"]["power"]["params"] == pytest.approx(fit_power_law(depths, mean).params, rel=1e-9)
        assert off["params"]["alpha"] == pytest.approx(TRUE_ALPHA[c["a"]], abs=0.05)
        assert off["params"]["L0"] == pytest.approx(0.5, abs=0.05)
        assert "delta_aic_alpha_one" in off and "bootstrap" in off and "bootstrap" in c["fits"]["power"]
        assert off["identified"] is True and c["fits"]["power"]["identified"] is True
        assert c["fits"]["power"]["params"]["alpha"] < TRUE_ALPHA[c["a"]]  # a pure power law ignores the floor
    code, out, _ = run_cli(capsys, "fit", "--store", str(store), "--model", "linear")
    assert code == 0 and "no finished runs match" in out
    code, out, _ = run_cli(capsys, "fit", "--store", str(store), "--kind", "offset", "--n-boot", "0")
    assert code == 0 and "L0 + c L^-alpha: L0 = " in out and "\n  c L^-alpha:" not in out and "bootstrap" not in out


def test_failed_runs_exit_1_and_retry(tmp_path, capsys):
    grid = tmp_path / "g.toml"
    grid.write_text("seeds = [0]\n[model]\ndepth = [1, 2]\n")
    store = tmp_path / "s.sqlite"
    code, out, _ = run_cli(
        capsys, "sweep", str(grid), "--store", str(store), "--executor", "serial", "--run-fn", f"{__name__}:failing_run"
    )
    assert code == 1 and "2 failed now" in out
    code, out, _ = run_cli(
        capsys, "sweep", str(grid), "--store", str(store), "--executor", "serial", "--run-fn", RUN_FN
    )
    assert code == 0 and "2 failed earlier (rerun with --retry-failed)" in out
    code, out, _ = run_cli(
        capsys,
        "sweep",
        str(grid),
        "--store",
        str(store),
        "--executor",
        "serial",
        "--run-fn",
        RUN_FN,
        "--retry-failed",
        "--json",
    )
    assert code == 0 and json.loads(out)["done"] == 2 and json.loads(out)["failed_in_store"] == 0


def _rows(path):
    con = sqlite3.connect(path)
    try:
        return con.execute("SELECT key, status, record FROM runs ORDER BY key").fetchall()
    finally:
        con.close()


@pytest.mark.parametrize(
    "grid_text, extra, match",
    [
        ("seeds = [0\n", [], "invalid TOML"),
        ("seeds = [0]\n[model]\ndeepth = 3\n", [], "model.deepth=3: unknown key"),
        ("seeds = [0]\n[task]\nP = 0\n", [], "task.P=0"),
        ("seeds = [0]\n", ["--workers", "0"], "workers=0"),
        ("seeds = [0]\n", ["--executor", "threads"], "executor='threads'"),
        ("seeds = [0]\n", ["--executor", "dask"], "scheduler=None"),
        ("seeds = [0]\n", ["--executor", "serial", "--scheduler", "tcp://x:1"], "scheduler='tcp://x:1'"),
        ("seeds = [0]\n", ["--run-fn", "nomodule"], "run-fn='nomodule'"),
        ("seeds = [0]\n", ["--run-fn", "json:nothing_here"], "run-fn='json:nothing_here'"),
    ],
)
def test_bad_input_one_line_exit_2_store_untouched(tmp_path, capsys, grid_text, extra, match):
    good = tmp_path / "good.toml"
    good.write_text("seeds = [0]\n[model]\ndepth = [1, 2]\n")
    store = tmp_path / "s.sqlite"
    assert (
        run_cli(capsys, "sweep", str(good), "--store", str(store), "--executor", "serial", "--run-fn", RUN_FN)[0] == 0
    )
    before = _rows(store)
    fresh = tmp_path / "fresh.sqlite"
    bad = tmp_path / "bad.toml"
    bad.write_text(grid_text)
    for target in (store, fresh):
        code, out, err = run_cli(capsys, "sweep", str(bad), "--store", str(target), *extra)
        assert code == 2 and out == ""
        assert err.count("\n") == 1 and err.startswith("depthscale: error:") and match in err
    assert _rows(store) == before
    assert not fresh.exists()


def test_bad_store_paths(tmp_path, capsys):
    good = tmp_path / "good.toml"
    good.write_text("seeds = [0]\n")
    code, _, err = run_cli(capsys, "sweep", str(good), "--store", str(tmp_path / "no" / "s.sqlite"))
    assert code == 2 and "existing directory" in err
    code, _, err = run_cli(capsys, "sweep", str(good), "--store", str(tmp_path))
    assert code == 2 and "not a directory" in err
    code, _, err = run_cli(capsys, "fit", "--store", str(tmp_path / "missing.sqlite"))
    assert code == 2 and "must be an existing results store" in err
    from depthscale.sims.store import Store

    with Store(tmp_path / "ok.sqlite", mode="write"):  # an empty store: the fit kind is checked once the store is good
        pass
    # a model is checked against the registered ones and those the store holds: once the store is good
    code, _, err = run_cli(capsys, "fit", "--store", str(tmp_path / "ok.sqlite"), "--model", "rnn")
    assert code == 2 and "model='rnn'" in err
    code, _, err = run_cli(capsys, "fit", "--store", str(tmp_path / "ok.sqlite"), "--kind", "spline")
    assert code == 2 and "kind='spline'" in err


@pytest.mark.parametrize(
    "model, expected",
    [
        ({"model": "softmax", "attention": "sparsemax", "depth": 4}, "sparsemax topk k=2 (a,b)=(0,0) d=16 P=128 L=4 |"),
        # records written before the attention option: softmax
        ({"model": "softmax", "depth": 4}, "softmax topk k=2 (a,b)=(0,0) d=16 P=128 L=4 |"),
        ({"model": "linear", "depth": 4}, "linear topk k=2 (a,b)=(0,0) d=16 P=128 L=4 |"),
        ({"model": "linear", "depth": 4, "task": "easy"}, "linear easy (a,b)=(0,0) d=16 P=128 L=4 |"),  # k is top-k's
    ],
)
def test_progress_line_names_the_attention_map(capsys, model, expected):
    from depthscale.sims.progress import RunLines

    task = {"task": model.pop("task", "topk"), "k": 2, "d": 16, "P": 128}
    RunLines(3).finished({"status": "ok", "seed": 1, "config": {"task": task, "model": model}})
    assert f"run 1/3 ok: {expected} " in capsys.readouterr().err
