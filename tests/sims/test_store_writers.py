"""Hostile cases of issue 50 around writing a store, each with its reproduction:

- two writers at once: a second ``Store(mode="write")`` (so a second ``sweep``, ``depthscale sweep``
  or ``reproduce``) on a store another live process writes is refused at once, naming the store; a
  writer killed with SIGKILL leaves no stale lock; read-only opens are unaffected;
- a sweep's input whose name is one of the new store's side files (``-wal``, ``-journal``, ``-shm``,
  ``-lock``, ``.snapshots/``), or a stray journal beside a new store, is refused before anything is
  written (SQLite replayed or deleted it);
- a run function returning a field that is not JSON-able is a failed run naming the field, not a
  traceback;
- a stored arrays blob naming an unknown dtype, or unpacking far beyond its stored size (a crafted
  "bomb"), is one ``ValueError`` naming the store and the run, with bounded memory;
- a broken process pool never loses a run from the sweep's summary.
"""

from __future__ import annotations

import concurrent.futures as cf
import io
import json
import lzma
import signal
import sqlite3
import subprocess
import sys
import textwrap
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from test_sweeps import dying_run, fake_run

from depthscale.derivations.cli.app import main
from depthscale.sims import store as store_module
from depthscale.sims.grid import load_grid, run_key
from depthscale.sims.store import ARRAYS_MAGIC, Store, compact_store
from depthscale.sims.sweeps import SerialExecutor, sweep

GRID_TEXT = "seeds = [0]\n[task]\nd = 4\nP = 16\n[model]\ndepth = [1, 2]\n[train]\nsteps = 2\neval_contexts = 8\n"


def _record(key, **extra):
    return {"key": key, "config": {"model": {"depth": 1}}, "seed": 0, "status": "ok", "final_loss": 0.5, **extra}


def _listing(folder: Path) -> dict:
    return {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.iterdir()}


# -- one writer at a time ------------------------------------------------------------------------
HOLDER = textwrap.dedent(
    """
    import sys, time
    from depthscale.sims.store import Store
    st = Store(sys.argv[1], mode="write")
    print("writing", flush=True)
    time.sleep(600)
    """
)


@pytest.fixture
def held_store(tmp_path):
    """A store another live process holds open for writing; yields (path, process)."""
    path = tmp_path / "s.sqlite"
    with Store(path, mode="write") as st:
        st.put(_record("done-0"))
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "writing"
        yield path, proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)


def test_a_second_writer_is_refused_while_another_process_writes(held_store, tmp_path, capsys):
    path, proc = held_store
    before = _listing(tmp_path)
    with pytest.raises(ValueError, match=rf"^store='{path}': another sweep is writing it \(process {proc.pid} holds"):
        Store(path, mode="write")
    grid = tmp_path / "g.toml"
    grid.write_text(GRID_TEXT, encoding="utf-8")
    before = _listing(tmp_path)
    assert main(["sweep", str(grid), "--store", str(path), "--run-fn", "test_sweeps:fake_run"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and f"store='{path}'" in err and "another sweep is writing it" in err
    assert _listing(tmp_path) == before  # nothing written, created or changed
    with Store(path) as st:  # reading is unaffected
        assert st.keys() == ["done-0"]


def test_a_killed_writer_leaves_no_stale_lock(held_store):
    path, proc = held_store
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    with Store(path, mode="write") as st:  # at once: the kernel released the dead writer's lock
        st.put(_record("after-0"))
    assert not Path(str(path) + "-lock").exists()  # the lock file goes with the writer that closes


def test_two_writers_in_one_process_and_the_lock_file(tmp_path):
    path = tmp_path / "s.sqlite"
    first = Store(path, mode="write")
    with pytest.raises(ValueError, match="another sweep is writing it"):
        Store(path, mode="write")
    with Store(path) as reader:
        assert len(reader) == 0
    first.close()
    with Store(path, mode="write") as again:
        again.put(_record("k-0"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.sqlite"]


def test_a_lock_path_that_is_not_a_lock_is_left_alone(tmp_path):
    path = tmp_path / "s.sqlite"
    mine = Path(str(path) + "-lock")
    mine.write_text("my notes\n", encoding="utf-8")
    with pytest.raises(ValueError, match="is not a depthscale lock file"):
        Store(path, mode="write")
    assert mine.read_text(encoding="utf-8") == "my notes\n" and not path.exists()
    mine.unlink()
    mine.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(ValueError, match="lock file .* is not a regular file"):
        Store(path, mode="write")
    assert not (tmp_path / "elsewhere").exists() and not path.exists()


# -- side files ----------------------------------------------------------------------------------
@pytest.mark.parametrize("side", ["-wal", "-journal", "-shm", "-lock", ".snapshots/g.toml"])
def test_a_grid_named_like_a_side_file_of_the_store_is_refused(tmp_path, capsys, side):
    store = tmp_path / "s.sqlite"
    grid = Path(str(store) + side)
    grid.parent.mkdir(exist_ok=True)
    grid.write_text(GRID_TEXT, encoding="utf-8")
    before = _listing(grid.parent)
    assert main(["sweep", str(grid), "--store", str(store), "--run-fn", "test_sweeps:fake_run"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "store=" in err and "side files are not inputs" in err, err
    assert grid.read_text(encoding="utf-8") == GRID_TEXT and _listing(grid.parent) == before
    assert not store.exists()


def test_a_stray_journal_beside_a_new_store_is_refused(tmp_path):
    store = tmp_path / "s.sqlite"
    for suffix in ("-wal", "-journal"):
        stray = Path(str(store) + suffix)
        stray.write_bytes(b"someone else's bytes")
        with pytest.raises(ValueError, match=rf"a new store, but '{stray}' exists beside it"):
            Store(store, mode="write")
        assert stray.read_bytes() == b"someone else's bytes" and not store.exists()
        stray.unlink()


# -- what a run function returns -----------------------------------------------------------------
def test_a_record_field_that_is_not_json_is_a_failed_run(tmp_path, monkeypatch, capsys):
    (tmp_path / "oddrun.py").write_text(
        "def run(config, seed):\n    return {'status': 'ok', 'final_loss': 1.0, 'when': {1, 2}}\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    grid = tmp_path / "g.toml"
    grid.write_text(GRID_TEXT, encoding="utf-8")
    store = tmp_path / "s.sqlite"
    argv = ["sweep", str(grid), "--store", str(store), "--run-fn", "oddrun:run", "--executor", "serial", "--json"]
    assert main(argv) == 1  # failed runs, as any failure of a run function
    out, err = capsys.readouterr()
    assert "Traceback" not in err and json.loads(out)["failed"] == 2
    with Store(store) as st:
        reasons = [f["reason"] for f in st.failed()]
    assert len(reasons) == 2 and all("record['when'] is not JSON-able" in r for r in reasons), reasons


# -- stored arrays -------------------------------------------------------------------------------
def _with_blob(path: Path, blob: bytes, key: str = "k-0") -> Path:
    with Store(path, mode="write") as st:
        st.put(_record(key, arrays={"sq_err": np.array([0.5, 0.25])}))
    con = sqlite3.connect(path)
    with con:
        con.execute("UPDATE arrays SET data=? WHERE key=?", (blob, key))
    con.close()
    return path


def _lzma_blob(header: list, data: bytes) -> bytes:
    text = json.dumps(header).encode()
    payload = len(text).to_bytes(4, "little") + text + data
    # preset 1: quick to make; the format's raw LZMA2 with its 1 MiB dictionary reads it
    filters = [{"id": lzma.FILTER_LZMA2, "preset": 1, "dict_size": 1 << 20}]
    return ARRAYS_MAGIC + lzma.compress(payload, format=lzma.FORMAT_RAW, filters=filters)


def test_an_unknown_dtype_is_one_line_naming_the_store_and_run(tmp_path, capsys):
    path = _with_blob(tmp_path / "s.sqlite", _lzma_blob([["sq_err", "<zz9", [2]]], b"\0" * 16))
    with Store(path) as st, pytest.raises(ValueError, match=rf"^store='{path}': the arrays of run 'k-0' are damaged"):
        st.load_arrays("k-0")
    assert main(["store", "compact", str(path), str(tmp_path / "c.sqlite")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown dtype '<zz9'" in err and "'k-0'" in err
    assert not (tmp_path / "c.sqlite").exists()


def test_arrays_that_would_unpack_far_beyond_their_size_are_refused(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(store_module, "ARRAYS_FLOOR", 1 << 20)  # the cap at test size: 1 MiB or 64 x stored
    # an honest header over 8 MiB of zeros: a few KB stored
    path = _with_blob(tmp_path / "s.sqlite", _lzma_blob([["sq_err", "<f8", [1 << 20]]], bytes(8 << 20)))
    with Store(path) as st, pytest.raises(ValueError, match=r"the arrays of run 'k-0' are damaged \(they would unpack"):
        st.load_arrays("k-0")
    assert main(["store", "compact", str(path), str(tmp_path / "c.sqlite")]) == 2
    assert "over the cap" in capsys.readouterr().err and not (tmp_path / "c.sqlite").exists()
    # a lying header over 32 MiB of zeros: refused holding no more than the cap in memory
    path = _with_blob(tmp_path / "t.sqlite", _lzma_blob([["sq_err", "<f8", [2]]], bytes(32 << 20)))
    with Store(path) as st:
        tracemalloc.start()
        try:
            with pytest.raises(ValueError, match="would unpack"):
                st.load_arrays("k-0")
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert peak < 4 << 20, peak
    # schema 1's .npz (deflate) is capped too
    buf = io.BytesIO()
    np.savez_compressed(buf, sq_err=np.zeros(1 << 20))
    path = _with_blob(tmp_path / "u.sqlite", buf.getvalue())
    with Store(path) as st, pytest.raises(ValueError, match="would unpack"):
        st.load_arrays("k-0")


def test_compact_still_reads_real_arrays(tmp_path):
    path = tmp_path / "s.sqlite"
    rng = np.random.default_rng(0)
    with Store(path, mode="write") as st:
        st.put(_record("k-0", arrays={"sq_err": rng.standard_normal(4096) ** 2, "theta": np.zeros(100_000)}))
    out = compact_store(path, tmp_path / "c.sqlite")
    assert out["runs"] == 1 and out["dropped"] == {"theta": 1}


# -- a broken pool -------------------------------------------------------------------------------
class BrokenAtOnce(SerialExecutor):
    """Every job's future ends with the pool broken, as a process pool's do once a worker died."""

    def submit(self, fn, /, *args, **kwargs):
        fut: cf.Future = cf.Future()
        fut.set_exception(cf.BrokenExecutor("a worker died"))
        return fut


def _accounted(res) -> int:
    return res.skipped + res.skipped_failed + res.done + res.failed + res.lost + res.not_started


def test_a_broken_pool_loses_no_run_from_the_summary(tmp_path):
    runs = load_grid({"seeds": [0, 1, 2], "task": {"d": 4, "P": 16}, "model": {"depth": [1, 2, 4, 8]}})
    with Store(tmp_path / "s.sqlite", mode="write") as st:
        res = sweep(runs, st, run_fn=fake_run, executor=BrokenAtOnce(), max_in_flight=3, quiet=True)
        assert res.broken and _accounted(res) == res.total == 12, res
        assert res.failed == 3 and len(st.failed()) == 3  # each job in flight stored as failed
        res = sweep(runs, st, run_fn=dying_run, executor="process", workers=2, quiet=True, retry_failed=True)
        assert res.broken and _accounted(res) == res.total, res
        stored = st.statuses()
    assert all(stored.get(run_key(c, s)) != "ok" for c, s in runs if s == 2)
