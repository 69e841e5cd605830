"""Held-out lossless cases and one-line hostile cases of issue 50, each with its reproduction:

- a run of a task this version does not know is never pooled with another value of its k (the key
  kept k only for top-k), and curves that only a field some runs lack tells apart are labelled so;
- ``check_bool`` takes NumPy's booleans (``np.False_`` is ``numpy.bool`` in NumPy 2);
- ``check --figure`` and ``Store.export_csv/json`` refuse an output that is a pipe or a device (the
  rename that writes them would replace it with a regular file);
- ``predict linear --a 400`` is one line and exit 2, not an OverflowError traceback;
- ``check --param`` given twice is refused (the second silently replaced the first);
- a fit's ``params`` cannot be changed under a curve's cache by one caller for every later one;
- a run stored before a config field existed matches that field's default under ``where`` (a
  failure record never replacing a finished run is tested with the store, tests/sims/test_store.py);
- a grid nested deeper than tomllib can parse is one line and exit 2, not a RecursionError;
- a [[grid]] block giving one exponent where the top level gives spectra is refused (it reset the other);
- `fit` names the depths whose loss is zero or negative, which its fits leave out;
- no output (an export, `derive --out`) overwrites a results store, also through a link.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from depthscale.derivations.analysis.curve import curves
from depthscale.derivations.cli.app import main
from depthscale.sims.store import Store

sys.path.insert(0, str(Path(__file__).parent))
from test_hostile_records import DEPTHS, SEEDS, _record, _store  # noqa: E402


def _fit_json(path, capsys) -> tuple[int, dict, str]:
    code = main(["fit", "--store", str(path), "--json", "--n-boot", "0"])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out else {}), err


# -- 6. held-out lossless cases ------------------------------------------------------------------
def test_runs_of_an_unknown_task_are_not_pooled_across_their_k(tmp_path, capsys):
    # a newer version's task "topk-soft" with k = 2 and k = 4: two conditions, as two top-k tasks are
    newer = []
    for k in (2, 4):
        for L in DEPTHS:
            rec = _record(f"soft{k}-{L}-0", 0, L, loss=1.0 + k + 1.0 / L)
            rec["config"]["task"].update(task="topk-soft", k=k)
            newer.append(rec)
    store = _store(tmp_path / "s.sqlite", newer)
    code, out, _ = _fit_json(store, capsys)
    assert code == 0
    soft = sorted(c["label"] for c in out["curves"] if "topk-soft" in c["label"])
    assert soft == ["softmax topk-soft k=2 (a,b)=(0,0) d=4 P=16", "softmax topk-soft k=4 (a,b)=(0,0) d=4 P=16"]
    for c in out["curves"]:  # each curve one k: its losses are one law's
        assert len(c["depths"]) == len(DEPTHS) and c["n_seeds"] == (1 if "topk-soft" in c["label"] else len(SEEDS))
    # the easy tasks ignore k: their runs of any k are one condition (here one seed each)
    easy = [_record(f"e{k}-{L}", k // 2 - 1, L) for k in (2, 4) for L in DEPTHS]
    for rec, k in zip(easy, [2] * len(DEPTHS) + [4] * len(DEPTHS)):
        rec["config"]["task"].update(task="easy-exact", k=k)
        rec["key"] = f"easy-k{k}-{rec['config']['model']['depth']}"
    (one,) = curves(easy)
    assert one.seeds == [0, 1]
    # at one seed the two k's are two runs in each cell, which one curve cannot hold: refused
    for rec in easy:
        rec["seed"] = 0
    with pytest.raises(ValueError, match=r"^records: 4 \(curve, depth, seed\) cell\(s\) hold two runs"):
        curves(easy)


def test_an_unknown_field_at_null_tells_its_curve_apart_in_the_label(tmp_path):
    newer = []
    for L in DEPTHS:
        rec = _record(f"null{L}-0", 0, L, loss=3.0)
        rec["config"]["task"]["noise"] = None
        newer.append(rec)
    store = _store(tmp_path / "s.sqlite", newer)
    with Store(store) as st, pytest.warns(Warning):
        labels = sorted(c.label for c in curves(list(st.records())))
    assert len(set(labels)) == 2, labels
    assert any(lab.endswith("[task.noise=None]") for lab in labels)
    assert any(lab.endswith("[task.noise absent]") for lab in labels)


def test_check_bool_takes_numpy_booleans():
    from depthscale.theory._validate import check_bool

    assert check_bool("flag", np.False_) is False and check_bool("flag", np.True_) is True
    assert check_bool("flag", np.bool_(1)) is True
    for bad in (np.int64(0), 0, "no", None):
        with pytest.raises(TypeError, match="flag="):
            check_bool("flag", bad)


# -- 7. hostile cases -----------------------------------------------------------------------------
def _special(tmp_path) -> list[Path]:
    """A pipe and a link to /dev/null: outputs that are not regular files."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    null = tmp_path / "null"
    null.symlink_to(os.devnull)
    return [fifo, null]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_exports_refuse_a_special_file_and_leave_it(tmp_path):
    store = _store(tmp_path / "s.sqlite")
    with Store(store) as st:
        for target in _special(tmp_path):
            kind = target.lstat().st_mode
            for export in (st.export_csv, st.export_json):
                with pytest.raises(ValueError, match=r"path=.*not a special file"):
                    export(target)
            assert target.lstat().st_mode == kind  # still the pipe, still the link
    assert Path(os.devnull).exists() and not Path(os.devnull).is_file()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_check_figure_refuses_a_special_file_before_any_work(tmp_path, capsys):
    store = _store(tmp_path / "s.sqlite")
    for target in _special(tmp_path):
        argv = ["check", "--store", str(store), "--param", "alpha=0.5,1.5", "--figure", str(target)]
        assert main(argv) == 2
        out, err = capsys.readouterr()
        assert out == "" and err.count("\n") == 1 and "figure=" in err and "special file" in err, err
        assert not target.is_file()


def test_predict_linear_with_a_huge_exponent_is_one_line(capsys):
    assert main(["predict", "linear", "--a", "400", "--b", "1", "--d", "1000", "--depths", "8,32"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "a=400" in err and "Traceback" not in err, err


def test_check_param_twice_is_refused(tmp_path, capsys):
    store = _store(tmp_path / "s.sqlite")
    argv = ["check", "--store", str(store), "--param", "alpha=0.5,1.5", "--param", "L0=0,1"]
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "param=" in err and "once" in err, err


def test_a_fits_parameters_are_not_changed_by_a_caller(tmp_path):
    store = _store(tmp_path / "s.sqlite")
    with Store(store) as st:
        (c,) = curves(list(st.records()))
    f = c.fit("power", n_boot=0)
    alpha = f.params["alpha"]
    with pytest.raises(TypeError, match="read-only"):
        f.params["alpha"] = 99.0
    with pytest.raises(TypeError, match="read-only"):
        f.se.update(alpha=0.0)
    mine = dict(f.params)
    mine["alpha"] = 99.0  # a copy is the caller's own
    again = c.fit("power", n_boot=0)
    assert again.params["alpha"] == alpha and json.loads(json.dumps(again.to_dict()))["params"]["alpha"] == alpha


def test_a_run_stored_before_a_field_existed_matches_that_fields_default(tmp_path):
    # `fit --where model.engine=numba` kept 2 of 13 curves of results/cpu.sqlite: its older runs have no
    # `engine` field, and a field a run lacks is the default it was trained with
    path = _store(tmp_path / "s.sqlite", extra_runs=[_record("jax1-0", 0, 1, {"engine": "jax"})])
    with Store(path) as st:
        keys = {r["key"] for r in st.records(where={"model.engine": "numba"})}
        assert len(keys) == len(DEPTHS) * len(SEEDS) and "jax1-0" not in keys
        assert [r["key"] for r in st.records(where={"model.engine": "jax"})] == ["jax1-0"]
        assert {r["key"] for r in st.records(where={"model.ensemble": False})} == keys | {"jax1-0"}


def test_a_grid_nested_too_deep_is_one_line_and_writes_nothing(tmp_path, capsys):
    grid = tmp_path / "deep.toml"
    grid.write_text("a = " + "[" * 5000 + "]" * 5000 + "\n", encoding="utf-8")  # RecursionError in tomllib
    store = tmp_path / "s.sqlite"
    assert main(["sweep", str(grid), "--store", str(store)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nested too deep" in err and str(grid) in err
    assert not store.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["deep.toml"]


def test_a_block_setting_one_exponent_under_top_level_spectra_is_refused():
    # it replaced the top level's (a, b) pairs by its one exponent and the other's default, silently
    from depthscale.sims.grid import parse_grid

    grid = {
        "task": {"task": "topk", "k": 2, "spectra": [[0.5, 0.5]], "d": 4, "P": 16},
        "model": {"model": "softmax", "depth": 1},
        "seeds": [0],
        "grid": [{"name": "x", "task": {"a": 1.0}}],
    }
    with pytest.raises(ValueError, match=r"^grid: grid\[1\]\.task\.a=1\.0: the top level sets task\.spectra"):
        parse_grid(grid)
    grid["grid"] = [{"name": "x", "task": {"a": 1.0, "b": 0.25}}]  # both: the block's own pair
    ((cfg, _),) = parse_grid(grid)
    assert (cfg.task.a, cfg.task.b) == (1.0, 0.25)


def test_fit_names_the_depths_whose_loss_is_not_positive(tmp_path, capsys):
    # a hand-edited row with a zero or negative loss was fitted silently
    edit = ("base4-0", json.dumps(_record("base4-0", 0, 4, loss=-0.1)))
    path = _store(tmp_path / "s.sqlite", edits=[edit])
    assert main(["fit", "--store", str(path), "--n-boot", "0"]) == 0
    assert "loss <= 0 at depth(s) 4: left out of the fits" in capsys.readouterr().out
    code, data, _ = _fit_json(path, capsys)
    assert code == 0 and [c["depths_left_out"] for c in data["curves"]] == [[4]]


def test_no_output_overwrites_a_results_store_also_through_a_link(tmp_path, capsys):
    store = _store(tmp_path / "s.sqlite")  # another store than the one exported (that one has its own test)
    before = store.read_bytes()
    link = tmp_path / "out.json"
    link.symlink_to(store)
    with Store(_store(tmp_path / "other.sqlite")) as st:
        for target in (store, link):
            with pytest.raises(ValueError, match="is a results store"):
                st.export_json(target)
            with pytest.raises(ValueError, match="is a results store"):
                st.export_csv(target)
    assert main(["derive", "linear", "--out", str(link)]) == 2
    assert "is a results store" in capsys.readouterr().err
    assert store.read_bytes() == before
