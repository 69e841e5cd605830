"""Hostile inputs (issue 32): every case a user could hit gives one clear error naming what is wrong, on
the Python API (``TypeError``/``ValueError`` naming the parameter, never an error from sqlite3, pathlib,
NumPy or numba) and on the command line (one line on stderr, exit 2, nothing created or changed).

One table per boundary; each row was a broken case of the issue."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from depthscale.derivations.cli.app import main
from depthscale.sims.store import Store

ROOT = Path(__file__).resolve().parents[1]


def _record(key, seed, depth, a=0.0, loss=0.5):
    return {
        "key": key,
        "seed": seed,
        "status": "ok",
        "reason": None,
        "converged": True,
        "final_loss": loss,
        "config": {
            "task": {"task": "topk", "k": 2, "a": a, "b": 0.0, "d": 4, "P": 16},
            "model": {"model": "softmax", "depth": depth},
            "train": {"steps": 10},
        },
        "arrays": {"sq_err": np.linspace(0.0, 1.0, 2000)},
    }


def _store(path, n=6):
    with Store(path, mode="write") as st:
        for i in range(n):
            st.put(_record(f"h{i % 2}-{i}", i, 1 + i % 3, a=0.5 * (i % 2)))
    return path


def _closed_store(tmp_path):
    st = Store(_store(tmp_path / "s.sqlite"))
    st.close()
    return st


def _curve():
    from depthscale.derivations.analysis.curve import curves

    recs = [_record(f"c-{L}-{s}", s, L, loss=0.5 + 0.4 / L + 0.01 * s) for L in (1, 2, 4, 8) for s in (0, 1, 2)]
    return curves(recs)[0]


def _dangling(path):
    path.symlink_to(path.parent / "nothing-here")
    return path


def _write_report(out):
    from depthscale.derivations.report.render import ReportContext, write_report

    return write_report(ReportContext(title="t"), out)


# -- the Python API: (call, exception, text the message must hold) ----------------------------------
def _api_cases():
    from depthscale.derivations.analysis.curve import curves
    from depthscale.derivations.claims import ClaimTable, Evidence, evaluate_claims
    from depthscale.derivations.report.plots import plot_curve
    from depthscale.derivations.study import Study, all_claims, find_preset, report_studies
    from depthscale.sims.config import TaskConfig, TrainConfig
    from depthscale.sims.runner import run
    from depthscale.sims.store import compact_store
    from depthscale.theory.derivation import build_derivation
    from depthscale.theory.linear_laws import linear_law_columns
    from depthscale.theory.spectra import PowerLawSpectrum

    return {
        "TaskConfig(a='2')": (lambda p: TaskConfig(a="2"), ValueError, "a='2'"),
        "TaskConfig(a=np.bool_(True))": (lambda p: TaskConfig(a=np.bool_(True)), ValueError, "a=np.True_"),
        "TrainConfig(window=10**12)": (lambda p: TrainConfig(window=10**12), ValueError, "window=1000000000000"),
        "run({'task': {}}, 0)": (lambda p: run({"task": {}}, 0), TypeError, "config="),
        "Store(123)": (lambda p: Store(123), TypeError, "store=123"),
        "Store(None)": (lambda p: Store(None), TypeError, "store=None"),
        "Store(timeout=-1)": (lambda p: Store(_store(p / "t.sqlite"), timeout=-1), ValueError, "timeout=-1"),
        "Store.put on a read store": (
            lambda p: Store(_store(p / "r.sqlite")).put(_record("x-0", 0, 1)),
            ValueError,
            "open for reading",
        ),
        "Store.record(['a'])": (lambda p: Store(_store(p / "k.sqlite")).record(["a"]), TypeError, "key=['a']"),
        "closed Store.record": (lambda p: _closed_store(p).record("h0-0"), ValueError, "is closed"),
        "len(closed Store)": (lambda p: len(_closed_store(p)), ValueError, "is closed"),
        "curves(None)": (lambda p: curves(None), TypeError, "records=None"),
        "curves('abc')": (lambda p: curves("abc"), TypeError, "records='abc'"),
        "curves([{'status': 'ok'}])": (lambda p: curves([{"status": "ok"}]), ValueError, "records[0]"),
        "Curve.fit(n_boot=-5)": (lambda p: _curve().fit(n_boot=-5), ValueError, "n_boot=-5"),
        "Curve.fit(n_boot=2.7)": (lambda p: _curve().fit(n_boot=2.7), ValueError, "n_boot=2.7"),
        "Curve.fit(n_boot=10**8)": (lambda p: _curve().fit(n_boot=10**8), ValueError, "n_boot=100000000"),
        "write_report into /proc/x": (lambda p: _write_report("/proc/x"), ValueError, "out='/proc/x'"),
        "ClaimTable(None)": (lambda p: ClaimTable(None), TypeError, "results=None"),
        "ClaimTable('pass')": (lambda p: ClaimTable("pass"), TypeError, "results='pass'"),
        "evaluate_claims(None)": (lambda p: evaluate_claims(None), TypeError, "ev=NoneType"),
        "evaluate_claims(list of curves)": (lambda p: evaluate_claims([_curve()]), TypeError, "ev=list"),
        "evaluate_claims(claims=['x'])": (lambda p: evaluate_claims(Evidence(), ["x"]), TypeError, "claims[0]='x'"),
        "Evidence(None)": (lambda p: Evidence(None), TypeError, "curves=None"),
        "Evidence([1])": (lambda p: Evidence([1]), TypeError, "curves[0]=1"),
        "plot_curve(None)": (lambda p: plot_curve(None), TypeError, "curve=None"),
        # the audit of this round's additions (study layout, nonlinearities, notebook API)
        "ClaimTable['no-such-claim']": (lambda p: ClaimTable()["x"], KeyError, "claim_id='x'"),
        "ClaimTable.where('passed')": (lambda p: ClaimTable().where("passed"), ValueError, "verdict='passed'"),
        "evaluate_claims(not_run='no')": (
            lambda p: evaluate_claims(Evidence(), not_run="no"),
            TypeError,
            "not_run='no'",
        ),
        "Evidence(load_arrays=3)": (lambda p: Evidence([], load_arrays=3), TypeError, "load_arrays=3"),
        "Curve.fit(seed=None)": (lambda p: _curve().fit(n_boot=0, seed=None), ValueError, "seed=None"),
        "Curve.fit(seed=-1)": (lambda p: _curve().fit(n_boot=5, seed=-1), ValueError, "seed=-1"),
        "Curve.fit(seed=2**70)": (lambda p: _curve().fit(n_boot=0, seed=2**70), ValueError, "seed="),
        "Curve.records_at('1')": (lambda p: _curve().records_at("1"), ValueError, "depth='1'"),
        "Curve.field_mean(None)": (lambda p: _curve().field_mean(None), TypeError, "name=None"),
        "FitResult.predict(None)": (lambda p: _curve().fit("power", n_boot=0).predict(None), ValueError, "L="),
        "FitResult.predict([0])": (lambda p: _curve().fit("power", n_boot=0).predict([0]), ValueError, "L=[0.0]"),
        "FitResult.predict('abc')": (lambda p: _curve().fit("power", n_boot=0).predict("abc"), ValueError, "L='abc'"),
        "linear_laws_frame(spec, 10**7 depths)": (
            lambda p: linear_law_columns(PowerLawSpectrum(a=2.0, b=1.0, d=100), range(1, 10**7)),
            ValueError,
            "at most 10,000",
        ),
        "linear_law_columns(None, [1, 2])": (lambda p: linear_law_columns(None, [1, 2]), TypeError, "spec=None"),
        "Derivation.to_latex(fragment='yes')": (
            lambda p: build_derivation("linear").to_latex(fragment="yes"),
            TypeError,
            "fragment='yes'",
        ),
        "Store.export_csv(None)": (lambda p: Store(_store(p / "e.sqlite")).export_csv(None), TypeError, "path=None"),
        "Store.export_csv(a folder)": (lambda p: Store(_store(p / "e.sqlite")).export_csv(p), ValueError, "directory"),
        "Store.export_csv(no folder)": (
            lambda p: Store(_store(p / "e.sqlite")).export_csv(p / "nope" / "x.csv"),
            ValueError,
            "does not exist",
        ),
        "Store.export_csv('/proc/x.csv')": (
            lambda p: Store(_store(p / "e.sqlite")).export_csv("/proc/x.csv"),
            ValueError,
            "path='/proc/x.csv': cannot write",
        ),
        "Store.export_json(arrays='yes')": (
            lambda p: Store(_store(p / "e.sqlite")).export_json(p / "x.json", arrays="yes"),
            TypeError,
            "arrays='yes'",
        ),
        "compact_store(dst a dangling link)": (
            lambda p: compact_store(_store(p / "c.sqlite"), _dangling(p / "link")),
            ValueError,
            "link to nothing",
        ),
        "compact_store(dst in /proc)": (
            lambda p: compact_store(_store(p / "c.sqlite"), "/proc/out.sqlite"),
            ValueError,
            "dst='/proc/out.sqlite': cannot write",
        ),
        "Study(presets='smoke')": (lambda p: Study("x", "Why?", "x", presets="smoke"), ValueError, "presets='smoke'"),
        "Study(claims=None)": (lambda p: Study("x", "Why?", "x", claims=None), ValueError, "claims=None"),
        "Study(package=None)": (lambda p: Study("x", "Why?", None), ValueError, "package=None"),
        "Study(theory=3)": (lambda p: Study("x", "Why?", "x", theory=3), ValueError, "theory=3"),
        "Study(contexts={'a': 5})": (
            lambda p: Study("x", "Why?", "x", presets=("a",), contexts={"a": 5}),
            ValueError,
            "contexts['a']=5",
        ),
        "Study(presets=('a', 'a'))": (lambda p: Study("x", "Why?", "x", presets=("a", "a")), ValueError, "distinct"),
        "find_preset(['smoke'])": (lambda p: find_preset(["smoke"]), TypeError, "preset=['smoke']"),
        "report_studies('core')": (lambda p: report_studies("core"), TypeError, "s='core'"),
        "all_claims('core')": (lambda p: all_claims("core"), TypeError, "of='core'"),
    }


@pytest.mark.parametrize("case", list(_api_cases()))
def test_python_api_refuses_with_the_parameter_named(tmp_path, case):
    call, exc, text = _api_cases()[case]
    with pytest.raises(exc) as info:
        call(tmp_path)
    # KeyError only for a lookup by key (ClaimTable["id"]), as a dict or a DataFrame raises
    assert type(info.value) in (TypeError, ValueError, KeyError) and text in str(info.value), str(info.value)


# -- stores that are damaged, not regular files, or left by a killed writer -------------------------
def _corrupt(path):
    """A store whose pages after the first are partly overwritten (the schema page stays readable)."""
    _store(path, n=12)
    con = sqlite3.connect(path)
    con.execute("PRAGMA journal_mode=DELETE")  # one file, no -wal
    page = con.execute("PRAGMA page_size").fetchone()[0]
    con.close()
    with open(path, "r+b") as fh:
        fh.seek(2 * page)
        fh.write(b"\xa5" * (3 * page))
    return path


def _fifo(path):
    os.mkfifo(path)
    return path


def _digest(folder: Path) -> dict:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.iterdir() if p.is_file()}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("kind,text", [("corrupt", "damaged"), ("fifo", "not a regular file")])
def test_bad_store_files_are_one_error_naming_the_file(tmp_path, capsys, kind, text):
    pytest.importorskip("pandas")
    from depthscale.sims.frames import to_frame

    path = (_corrupt if kind == "corrupt" else _fifo)(tmp_path / "bad.sqlite")
    before = _digest(tmp_path)
    for call in (lambda: Store(path), lambda: to_frame(path), lambda: Store(path, mode="write")):
        with pytest.raises(ValueError, match=text) as info:
            call()
        assert str(path) in str(info.value)
    grid = tmp_path / "g.toml"
    grid.write_text("seeds = [0]\n")
    for argv in (
        ["fit", "--store", str(path), "--json"],
        ["report", "--store", str(path), "--out", str(tmp_path / "rep")],
        ["sweep", str(grid), "--store", str(path), "--executor", "serial"],
    ):
        code = main(argv)
        out, err = capsys.readouterr()
        assert code == 2 and out == "" and err.count("\n") == 1 and text in err, (argv, err)
    grid.unlink()
    assert _digest(tmp_path) == before and not (tmp_path / "rep").exists()


def _killed_writer_files(tmp_path, with_shm: bool) -> Path:
    """The files a writer killed mid-sweep leaves: the store, its -wal (runs only it holds) and, as a
    kill -9 leaves it, the -shm; copied while the writer was connected and idle."""
    live, dead = tmp_path / "live", tmp_path / "dead"
    live.mkdir()
    dead.mkdir()
    with Store(live / "s.sqlite", mode="write") as st:
        for i in range(3):
            st.put(_record(f"h-{i}", i, 1 + i))
        for suffix in ("", "-wal", "-shm") if with_shm else ("", "-wal"):
            shutil.copyfile(live / f"s.sqlite{suffix}", dead / f"s.sqlite{suffix}")
    return dead / "s.sqlite"


@pytest.mark.parametrize("with_shm", [True, False], ids=["wal+shm", "wal-only"])
def test_readers_of_a_killed_writers_files_change_nothing(tmp_path, capsys, with_shm):
    pytest.importorskip("pandas")
    from depthscale.sims.frames import to_frame

    path = _killed_writer_files(tmp_path, with_shm)
    before = _digest(path.parent)
    with Store(path) as st:
        assert st.keys() == ["h-0", "h-1", "h-2"]
    assert list(to_frame(path)["key"]) == ["h-0", "h-1", "h-2"]
    code = main(["fit", "--store", str(path), "--json"])
    capsys.readouterr()
    assert code in (0, 1)
    assert _digest(path.parent) == before  # not a byte of the store, -wal or -shm changed, nothing created


# -- tables from anything ---------------------------------------------------------------------------
def test_to_frame_takes_records_a_store_or_a_path_sorted_by_condition_depth_seed(tmp_path):
    pytest.importorskip("pandas")
    from depthscale.sims.frames import to_frame

    recs = [
        _record(f"k{i}", seed, depth, a=a)
        for i, (a, depth, seed) in enumerate(
            [(0.5, 4, 0), (0.0, 4, 1), (0.0, 1, 1), (0.5, 1, 0), (0.0, 4, 0), (0.0, 2, 0)]
        )
    ]
    expected = sorted(recs, key=lambda r: (r["config"]["task"]["a"], r["config"]["model"]["depth"], r["seed"]))
    path = tmp_path / "s.sqlite"
    with Store(path, mode="write") as st:
        for rec in recs:
            st.put(rec)
    with Store(path) as st:
        frames = [to_frame(recs), to_frame(path), to_frame(st), st.to_frame()]
        assert repr(st) == f"Store({str(path)!r}, mode='read', runs=6)"
    for df in frames:
        assert list(df["key"]) == [r["key"] for r in expected]
    assert list(to_frame(recs[0])["key"]) == ["k0"]  # one record
    with pytest.raises(TypeError, match="source=42"):
        to_frame(42)
    with pytest.raises(TypeError, match=r"source\[1\]"):
        to_frame([recs[0], "x"])


# -- the command line: impossible sizes and nonsense refused before any work -------------------------
def _cli_cases(tmp_path):
    return {
        "simulate context update P=1e5": (
            ["simulate", "--variant", "context-update", "--d", "8", "--P", "100000", "--depth", "2", "--batch", "1"],
            "memory",
        ),
        "softmax-floor 1e6 contexts": (
            ["predict", "softmax-floor", "--task", "topk", "--a", "0", "--b", "0", "--d", "16", "--P", "1000"]
            + ["--seed", "0", "--contexts", "1000000"],
            "memory",
        ),
        "infer-scale 1e6 contexts": (
            ["infer-scale", "--floors", "example", "--d", "4", "--P", "1000", "--contexts", "1000000"],
            "memory",
        ),
        "softmax-floor kappa 1e-320..1e308": (
            ["predict", "softmax-floor", "--task", "topk", "--a", "0", "--b", "0", "--d", "4", "--P", "8"]
            + ["--seed", "0", "--contexts", "100", "--kappa-min", "1e-320", "--kappa-max", "1e308"],
            "kappa_min=1e-320",
        ),
        "report floor-contexts 1e12": (
            ["report", "--store", str(ROOT / "results" / "cpu.sqlite"), "--out", str(tmp_path / "new")]
            + ["--floor-contexts", "1000000000000"],
            "floor-contexts=1000000000000",
        ),
        "reproduce floor-contexts 1e12": (
            ["reproduce", "--preset", "smoke", "--out", str(tmp_path / "new"), "--floor-contexts", "1000000000000"],
            "floor-contexts=1000000000000",
        ),
        "reproduce store in an unwritable folder": (
            ["reproduce", "--preset", "smoke", "--out", str(tmp_path / "new"), "--store", "/proc/new.sqlite"],
            "store='/proc/new.sqlite'",
        ),
    }


@pytest.mark.parametrize("case", list(_cli_cases(Path("."))))
def test_cli_refuses_before_any_work(tmp_path, capsys, case):
    argv, text = _cli_cases(tmp_path)[case]
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and err.count("\n") == 1 and text in err, err
    assert not (tmp_path / "new").exists()  # no output folder, no store created


def test_linear_laws_outside_their_domain_say_so(capsys):
    import json

    code = main(["predict", "linear", "--a", "0", "--b", "0", "--d", "8", "--depths", "1,2", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["zeta"] is None and "a + b > 1" in out["note"]
    assert main(["predict", "linear", "--a", "0", "--b", "0", "--d", "8", "--depths", "1"]) == 0
    assert "do not apply" in capsys.readouterr().out


# -- CSV input --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text,error",
    [
        ("\ufefftask,k,a,b,L0\ntopk,2,0,0,1.9\n", None),  # a spreadsheet's byte-order mark
        ("task,k,a,b,L0\n# note\ntopk,2,0,0,1.9,7\n", "line 3: has 6 fields, the header 5; extra field(s) after L0"),
        ("task,k,a,b,L0\ntopk,2,0,0,1.9\ntopk,2,0,0\n", "line 3: has 4 fields, the header 5; missing field(s): no L0"),
    ],
    ids=["bom", "extra-field", "missing-field"],
)
def test_floors_csv_rows(text, error):
    from depthscale.derivations.analysis.scale_match import read_floors

    if error is None:
        assert read_floors(text) == [{"task": "topk", "k": 2, "a": 0.0, "b": 0.0, "L0": 1.9}]
    else:
        with pytest.raises(ValueError, match=r"^floors " + error.replace("(", r"\(").replace(")", r"\)")):
            read_floors(text)


# -- training: a run that starts huge and stays huge is not converged -------------------------------
def test_a_run_far_above_the_targets_scale_is_diverged():
    from depthscale.sims.config import ModelConfig, RunConfig, TaskConfig, TrainConfig
    from depthscale.sims.runner import run

    train = TrainConfig(steps=200, batch=16, window=40, eval_contexts=64)
    task = TaskConfig(task="topk", d=8, P=16)
    huge = run(RunConfig(task, ModelConfig(model="linear", depth=2, init_scale=5.0), train), 0)
    assert huge["status"] == "diverged" and "target's scale" in huge["reason"]
    sane = run(RunConfig(task, ModelConfig(model="linear", depth=2), train), 0)
    assert sane["status"] == "ok"
    assert sane["final_loss"] < 1e3 * sane["target_power"]  # the rule's own bound, on an ordinary run


# -- the numba cache never goes into the installed package -----------------------------------------
def _package_cache_files() -> set:
    sims = ROOT / "sims" / "__pycache__"
    return {p.name for p in sims.glob("*.nb*")} if sims.is_dir() else set()


KERNEL = """
import sys
from depthscale.sims import jit


@jit.njit(cache=True)
def twice(x):
    return 2 * x


print(jit.cache_usable(), twice(21))
"""


def _run_with_unwritable_cache(tmp_path, fallback, script):
    """Run ``script`` with NUMBA_CACHE_DIR unwritable and the temporary folder ``tmp_path`` (or none)."""
    temp = "/proc/no-such-folder" if fallback == "none" else str(tmp_path / "tmp")
    os.makedirs(tmp_path / "tmp", exist_ok=True)
    env = dict(os.environ, NUMBA_CACHE_DIR="/proc/no-such-folder/numba", TMPDIR=temp)
    code = f"import tempfile\ntempfile.tempdir = {temp!r}\n" + script
    path = tmp_path / "kernel.py"
    path.write_text(code)
    out = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr
    warnings = [ln for ln in out.stderr.splitlines() if "depthscale: warning" in ln]
    assert len(warnings) == 1 and "NUMBA_CACHE_DIR='/proc/no-such-folder/numba'" in warnings[0], out.stderr
    return out.stdout.strip()


@pytest.mark.parametrize("fallback", ["temporary", "none"])
def test_an_unwritable_numba_cache_falls_back_with_one_warning(tmp_path, fallback):
    assert _run_with_unwritable_cache(tmp_path, fallback, KERNEL) == f"{fallback == 'temporary'} 42"
    cached = list((tmp_path / "tmp").glob("depthscale-*/*/numba/**/*.nbi"))
    assert bool(cached) == (fallback == "temporary")  # in the fallback folder, or nowhere
    assert not (tmp_path / "__pycache__").exists() or not list((tmp_path / "__pycache__").glob("*.nb*"))


@pytest.mark.slow
def test_the_packages_kernels_never_cache_into_the_package(tmp_path):
    script = (
        "import numpy as np\n"
        "from depthscale.sims.config import TaskConfig\n"
        "from depthscale.sims.tasks import make_batch\n"
        "print(make_batch(TaskConfig(d=4, P=8), 2, np.random.default_rng(0)).X.shape)\n"
    )
    before = _package_cache_files()
    assert _run_with_unwritable_cache(tmp_path, "temporary", script) == "(2, 8, 4)"
    assert _package_cache_files() == before
