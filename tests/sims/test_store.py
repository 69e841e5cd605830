"""Results store: round trip, filters, exports, bad input, and a writer killed with SIGKILL."""

import csv
import json
import signal
import sqlite3
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from subprocs import integrity, sigkill_after

from depthscale.sims.store import Store, flatten


def make_record(key="h1-0", depth=2, seed=0, status="ok", loss=0.5, model="softmax", task="topk", a=0.25):
    rec = {
        "key": key,
        "config": {"task": {"task": task, "a": a, "d": 4}, "model": {"model": model, "depth": depth}},
        "seed": seed,
        "status": status,
        "reason": None if status != "failed" else "boom",
        "converged": True,
        "final_loss": loss,
        "layer_losses": [loss] * depth,
        "floors": {"single": {"loss": 0.7, "diff": loss - 0.7}},
        "nan_field": float("nan"),
    }
    if status == "ok":
        rec["arrays"] = {"sq_err": np.linspace(0, 1, 50, dtype=np.float32)}
    return rec


def test_round_trip(tmp_path):
    path = tmp_path / "s.sqlite"
    rec = make_record()
    with Store(path, mode="write") as st:
        st.put(rec)
    with Store(path, mode="write") as st:  # a fresh connection: the data is on disk
        assert st.journal_mode == "wal"
        got = st.get("h1-0")
        assert st.has("h1-0") and "h1-0" in st and len(st) == 1
        assert st.get("nope") is None and not st.has("nope")
    arr = got.pop("arrays")["sq_err"]
    assert arr.dtype == np.float32 and np.array_equal(arr, rec["arrays"]["sq_err"])
    expect = {k: v for k, v in rec.items() if k != "arrays"}
    # NaN is not JSON: the store writes null, which reads back as None (a missing value)
    assert got.pop("nan_field") is None and np.isnan(expect.pop("nan_field"))
    assert got == expect
    con = sqlite3.connect(path)
    (text,) = con.execute("SELECT record FROM runs").fetchone()
    assert con.execute("SELECT json_extract(record, '$.nan_field') IS NULL FROM runs").fetchone()[0] == 1
    con.close()

    def refuse(c):
        raise ValueError(f"non-standard JSON constant {c}")

    json.loads(text, parse_constant=refuse)  # strict JSON, as any other reader demands


def test_arrays_lazy_and_numpy_scalars(tmp_path):
    with Store(tmp_path / "s.sqlite", mode="write") as st:
        rec = make_record()
        rec["final_loss"] = np.float64(0.25)
        rec["layer_losses"] = np.array([0.1, 0.2])
        st.put(rec)
        (r,) = list(st.records())
        assert "arrays" not in r and r["final_loss"] == 0.25 and r["layer_losses"] == [0.1, 0.2]
        (r,) = list(st.records(arrays=True))
        assert r["arrays"]["sq_err"].shape == (50,)
        assert st.load_arrays("h1-0")["sq_err"][-1] == 1.0


def test_status_filters_replace_and_failed(tmp_path):
    with Store(tmp_path / "s.sqlite", mode="write") as st:
        st.put(make_record("h1-0", status="failed"))
        st.put(make_record("h1-1", seed=1))
        st.put(make_record("h2-0", model="linear", task="easy-exact", depth=4))
        assert st.keys() == ["h1-0", "h1-1", "h2-0"]
        assert st.keys("failed") == ["h1-0"]
        assert st.failed() == [{"key": "h1-0", "config": make_record()["config"], "seed": 0, "reason": "boom"}]
        assert st.status("h1-0") == "failed" and st.has("h1-0", "failed") and not st.has("h1-0", "ok")
        # a successful rerun replaces the failed row
        st.put(make_record("h1-0"))
        assert st.keys("failed") == [] and st.status("h1-0") == "ok"
        assert [r["key"] for r in st.records(model="linear")] == ["h2-0"]
        assert [r["key"] for r in st.records(task="topk")] == ["h1-0", "h1-1"]
        assert [r["key"] for r in st.records(where={"model.depth": [4, 8]})] == ["h2-0"]
        assert [r["key"] for r in st.records(where={"task.a": 0.25, "model.depth": 2})] == ["h1-0", "h1-1"]
        with pytest.raises(ValueError, match=r"^where key 'no.such': must be a config path, one of task.task, "):
            st.records(where={"no.such": 1})
        st.delete("h2-0")
        assert st.keys() == ["h1-0", "h1-1"] and st.load_arrays("h2-0") is None
        with pytest.raises(ValueError, match="status='done'"):
            st.keys("done")


def test_a_failure_never_replaces_a_finished_run(tmp_path):
    # two sweeps on one store: the later one's failure record must not erase the run the other finished
    with Store(tmp_path / "s.sqlite", mode="write") as st:
        st.put(make_record("h1-0", loss=0.5))
        for status in ("failed", "diverged"):
            with pytest.warns(UserWarning, match=rf"run h1-0 is already finished; its {status} record is not stored"):
                st.put(make_record("h1-0", status=status))
        assert st.status("h1-0") == "ok" and st.get("h1-0")["final_loss"] == 0.5
        assert st.load_arrays("h1-0")["sq_err"].shape == (50,)
        # a failure may replace a failure, and an ok replaces either
        st.put(make_record("h1-1", status="failed"))
        st.put(make_record("h1-1", status="diverged"))
        assert st.status("h1-1") == "diverged"


def test_exports(tmp_path):
    with Store(tmp_path / "s.sqlite", mode="write") as st:
        st.put(make_record("h1-0", loss=0.5))
        st.put(make_record("h1-1", seed=1, loss=0.25, status="failed"))
        assert st.export_csv(tmp_path / "r.csv") == 2
        assert st.export_json(tmp_path / "r.json") == 2
        assert st.export_json(tmp_path / "ra.json", arrays=True) == 2
    with open(tmp_path / "r.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["key"] for r in rows] == ["h1-0", "h1-1"]
    assert rows[0]["status"] == "ok" and float(rows[0]["final_loss"]) == 0.5
    assert rows[1]["reason"] == "boom" and float(rows[1]["final_loss"]) == 0.25
    assert rows[0]["config.model.depth"] == "2" and rows[0]["config.task.task"] == "topk"
    assert float(rows[0]["floors.single.diff"]) == pytest.approx(-0.2)
    assert "layer_losses" not in rows[0]  # lists are not flat scalars
    data = json.loads((tmp_path / "r.json").read_text())
    assert [d["key"] for d in data] == ["h1-0", "h1-1"] and "arrays" not in data[0]
    data = json.loads((tmp_path / "ra.json").read_text())
    assert len(data[0]["arrays"]["sq_err"]) == 50


def test_flatten():
    assert flatten({"a": {"b": {"c": 1}}, "x": [1], "y": None, "z": np.float32(2)}) == {"a.b.c": 1, "y": None, "z": 2.0}


@pytest.mark.parametrize(
    "bad, match",
    [
        ({"config": {}, "seed": 0, "status": "ok"}, "key"),
        ({"key": "", "config": {}, "seed": 0, "status": "ok"}, "key"),
        ({"key": "k-0", "config": 3, "seed": 0, "status": "ok"}, "config"),
        ({"key": "k-0", "config": {}, "seed": 0, "status": "great"}, "status"),
        ({"key": "k-0", "config": {}, "seed": 0, "status": "ok", "obj": object()}, "serialisable"),
        ({"key": "k-0", "config": {}, "seed": 0, "status": "ok", "arrays": [1]}, "arrays"),
    ],
)
def test_bad_records_write_nothing(tmp_path, bad, match):
    with Store(tmp_path / "s.sqlite", mode="write") as st:
        with pytest.raises((ValueError, TypeError), match=match):
            st.put(bad)
        assert len(st) == 0


def test_bad_paths(tmp_path):
    with pytest.raises(ValueError, match="existing directory"):
        Store(tmp_path / "missing" / "s.sqlite", mode="write")
    with pytest.raises(ValueError, match="not a directory"):
        Store(tmp_path, mode="write")
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(ValueError, match="not an SQLite file"):
        Store(junk, mode="write")


def test_reader_sees_committed_runs_while_writer_open(tmp_path):
    path = tmp_path / "s.sqlite"
    writer = Store(path, mode="write")
    reader = Store(path)  # a second writer is refused (one writer at a time): read-only opens are not
    writer.put(make_record("h1-0"))
    assert reader.keys() == ["h1-0"]
    writer.put(make_record("h1-1", seed=1))
    assert reader.keys() == ["h1-0", "h1-1"]
    writer.close()
    reader.close()


WRITER = textwrap.dedent(
    """
    import sys, numpy as np
    from depthscale.sims.store import Store
    st = Store(sys.argv[1], mode="write")
    i = 0
    while True:
        rng = np.random.default_rng(i)
        st.put({"key": f"k-{i}", "config": {"i": i}, "seed": i, "status": "ok", "reason": None,
                "final_loss": float(i), "arrays": {"sq_err": rng.standard_normal(20000).astype(np.float32)}})
        print(i, flush=True)
        i += 1
    """
)


def test_sigkill_writer_leaves_readable_store(tmp_path):
    path = tmp_path / "s.sqlite"
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    proc = subprocess.Popen([sys.executable, str(script), str(path)], stdout=subprocess.PIPE, text=True)
    with sigkill_after(proc):
        for _ in range(30):  # let it commit a few runs, then kill it mid-stream
            proc.stdout.readline()
    assert proc.returncode == -signal.SIGKILL
    assert integrity(path) == "ok"
    with Store(path, mode="write") as st:
        keys = st.keys()
        assert len(keys) >= 30
        ids = sorted(int(k.split("-")[1]) for k in keys)
        assert ids == list(range(len(ids)))  # a prefix of the writes, no holes
        for i in ids:  # every committed run complete: record and arrays consistent with its index
            rec = st.get(f"k-{i}")
            assert rec["final_loss"] == float(i)
            expect = np.random.default_rng(i).standard_normal(20000).astype(np.float32)
            assert np.array_equal(rec["arrays"]["sq_err"], expect)
        st.put({"key": "after-0", "config": {}, "seed": 0, "status": "ok"})  # and writable again
        assert st.has("after-0")


# -- opening modes: never touch what is not ours ------------------------------------------------
def _foreign_sqlite(path):
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")
    con.execute("INSERT INTO notes (text) VALUES ('keep me')")
    con.commit()
    con.close()


def _snapshot(directory):
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


@pytest.mark.parametrize("kind", ["foreign-sqlite", "empty", "text", "missing"])
@pytest.mark.parametrize("mode", ["read", "write"])
def test_refuses_what_is_not_a_store_and_leaves_it_untouched(tmp_path, kind, mode):
    path = tmp_path / "x.sqlite"
    if kind == "foreign-sqlite":
        _foreign_sqlite(path)
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "text":
        path.write_text("name,value\na,1\n")
    before = _snapshot(tmp_path)
    creatable = mode == "write" and kind in ("empty", "missing")
    if creatable:  # only a path that does not exist or an empty file becomes a new store
        with Store(path, mode=mode) as st:
            assert len(st) == 0
        return
    with pytest.raises(ValueError, match=r"^store='.*x\.sqlite'"):
        Store(path, mode=mode)
    assert _snapshot(tmp_path) == before
    if kind == "foreign-sqlite":
        con = sqlite3.connect(path)
        assert con.execute("PRAGMA journal_mode").fetchone()[0] == "delete"  # not switched to WAL
        con.close()


def test_read_mode_reads_without_writing(tmp_path):
    path = tmp_path / "s.sqlite"
    with Store(path, mode="write") as st:
        st.put(make_record())
    before = _snapshot(tmp_path)
    assert list(before) == ["s.sqlite"]  # the writer cleaned up its -wal and -shm files
    with Store(path, mode="read") as st:
        assert st.keys() == ["h1-0"] and st.get("h1-0")["final_loss"] == 0.5
        with pytest.raises(ValueError, match="open for reading"):
            st.put(make_record(key="h1-1", seed=1))
    assert _snapshot(tmp_path) == before  # no bytes changed, no -wal/-shm files left behind


def test_read_mode_sees_a_running_writer(tmp_path):
    path = tmp_path / "s.sqlite"
    with Store(path, mode="write") as writer:
        writer.put(make_record())
        with Store(path, mode="read") as reader:
            assert reader.keys() == ["h1-0"]
            writer.put(make_record(key="h1-1", seed=1))
            assert reader.keys() == ["h1-0", "h1-1"]


@pytest.mark.parametrize("meta", [("schema_version", "999"), ("contexts_version", "1")])
def test_a_store_of_other_versions_is_refused_before_anything_changes(tmp_path, capsys, meta):
    # The refusal must come before the journal switch: a committed store (rollback journal) stays
    # byte for byte what it was, for the library and for the command line.
    from depthscale.derivations.cli.app import main
    from depthscale.sims.config import CONTEXTS_VERSION

    path = tmp_path / "s.sqlite"
    with Store(path, mode="write") as st:
        st.put(make_record())
    con = sqlite3.connect(path)
    con.execute("PRAGMA journal_mode=DELETE")
    con.execute("UPDATE meta SET value = ? WHERE name = ?", (meta[1], meta[0]))
    con.commit()
    con.close()
    grid = tmp_path / "g.toml"
    grid.write_text("seeds = [0]\n")
    before = _snapshot(tmp_path)
    match = "schema version 999" if meta[0] == "schema_version" else "version-1 contexts"
    with pytest.raises(ValueError, match=match):
        Store(path, contexts=CONTEXTS_VERSION, mode="write")
    assert main(["sweep", str(grid), "--store", str(path), "--executor", "serial"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and match in err
    assert _snapshot(tmp_path) == before
    if meta[0] == "contexts_version":  # reading it, or writing runs of a custom run function, is still allowed
        with Store(path, mode="read") as st:
            assert st.contexts_version == 1 and len(st) == 1


# -- reading never creates or changes a file beside the store (issue 21) ------------------------
def _committed_style(path):
    """A store as committed to a repository: rollback journal, no -wal or -shm beside it."""
    with Store(path, mode="write") as st:
        st.put(make_record())
        st.put(make_record(key="h1-1", seed=1, loss=0.25))
    con = sqlite3.connect(path)
    con.execute("PRAGMA journal_mode=DELETE")
    con.close()


def test_store_opens_read_only_unless_writing_is_asked_for(tmp_path):
    path = tmp_path / "s.sqlite"
    _committed_style(path)
    before = _snapshot(tmp_path)
    assert list(before) == ["s.sqlite"]
    with Store(path) as st:
        assert st.keys() == ["h1-0", "h1-1"] and st.get("h1-1")["final_loss"] == 0.25
        with pytest.raises(ValueError, match="open for reading"):
            st.put(make_record(key="h1-2", seed=2))
    assert _snapshot(tmp_path) == before  # same bytes (still a rollback journal), nothing beside it


def _wal_without_shm(directory):
    """The pair a writer killed before its first checkpoint leaves: every run lives only in the -wal."""
    live = directory / "live"
    live.mkdir()
    path = live / "s.sqlite"
    with Store(path, mode="write") as writer:
        writer.put(make_record())
        writer.put(make_record(key="h1-1", seed=1, loss=0.25))
        # copied while the writer is connected and idle: a consistent pair, no checkpoint yet
        store = directory / "st"
        store.mkdir()
        for suffix in ("", "-wal"):
            (store / ("s.sqlite" + suffix)).write_bytes((live / ("s.sqlite" + suffix)).read_bytes())
    assert len((store / "s.sqlite-wal").read_bytes()) > 0
    return store / "s.sqlite"


def test_reading_a_store_with_a_wal_and_no_shm_creates_nothing(tmp_path):
    path = _wal_without_shm(tmp_path)
    before = _snapshot(path.parent)
    with Store(path) as st:
        assert st.keys() == ["h1-0", "h1-1"]  # the runs only the -wal holds
        assert st.load_arrays("h1-0")["sq_err"].shape == (50,)
    from depthscale.sims.store import check_store_file

    assert check_store_file(path) is True
    assert _snapshot(path.parent) == before  # no -shm created, no byte changed


READER = textwrap.dedent(
    """
    import os, sys
    from depthscale.sims.store import Store
    if os.getuid() == 0:  # root writes anywhere: read as nobody, for whom the directory is read-only
        os.setgid(65534)
        os.setuid(65534)
    try:
        open(os.path.join(os.path.dirname(sys.argv[1]), "probe"), "w")
        print("writable")
    except OSError:
        with Store(sys.argv[1]) as st:
            print(",".join(st.keys()))
    """
)


def test_reading_a_store_with_a_wal_and_no_shm_on_read_only_media(tmp_path):
    # Read-only media: a directory without write permission, read by a user that permission binds
    # (nobody, when the tests run as root, who would write through any permission).
    import os
    import shutil
    import tempfile

    base = tempfile.mkdtemp()  # not under pytest's private (0700) temporary root: nobody must reach it
    try:
        path = _wal_without_shm(tmp_path)
        ro = os.path.join(base, "media")
        shutil.copytree(path.parent, ro)
        os.chmod(base, 0o755)
        for name in os.listdir(ro):
            os.chmod(os.path.join(ro, name), 0o444)
        os.chmod(ro, 0o555)
        script = tmp_path / "reader.py"
        script.write_text(READER)
        os.chmod(tmp_path, 0o755)
        os.chmod(script, 0o644)
        env = dict(os.environ, HOME=base, NUMBA_CACHE_DIR=base)
        out = subprocess.run(
            [sys.executable, str(script), os.path.join(ro, "s.sqlite")], capture_output=True, text=True, env=env
        )
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == "h1-0,h1-1"
        assert sorted(os.listdir(ro)) == ["s.sqlite", "s.sqlite-wal"]
    finally:
        os.chmod(base, 0o755)
        if os.path.isdir(os.path.join(base, "media")):
            os.chmod(os.path.join(base, "media"), 0o755)
        shutil.rmtree(base, ignore_errors=True)


def _store_with_raw_record(path, rec: dict) -> None:
    """A store holding ``rec`` exactly as given (JSON text written past ``Store.put``)."""
    import json
    import sqlite3

    from depthscale.sims.store import Store

    with Store(path, mode="write") as st:
        st.put({"key": rec["key"], "config": {}, "seed": 0, "status": "ok"})
    con = sqlite3.connect(path)
    con.execute("UPDATE runs SET record=? WHERE key=?", (json.dumps(rec), rec["key"]))
    con.commit()
    con.close()


def test_records_written_with_the_old_pair_name_read_as_mixture(tmp_path):
    # stores written before 0.2 call the two-temperature signed mixture "pair" (and the field "baseline")
    from depthscale.sims.store import Store

    old = {"single": {"loss": 1.0}, "pair": {"loss": 0.5}}
    _store_with_raw_record(
        tmp_path / "old.sqlite", {"key": "k-0", "config": {}, "seed": 0, "status": "ok", "baseline": old}
    )
    got = Store(tmp_path / "old.sqlite").get("k-0")
    assert got["floors"] == {"single": {"loss": 1.0}, "mixture": {"loss": 0.5}}


def test_records_written_with_the_old_baseline_field_read_as_floors(tmp_path):
    # stores written before the vocabulary settled on "reference floor" name the field "baseline"
    from depthscale.sims.frames import to_frame
    from depthscale.sims.store import Store

    floors = {"single": {"loss": 1.0, "diff": -0.25}, "mixture": {"loss": 0.75, "diff": 0.0}}
    rec = {"key": "k-0", "config": {}, "seed": 0, "status": "ok", "final_loss": 0.75, "baseline": floors}
    _store_with_raw_record(tmp_path / "old.sqlite", rec)
    with Store(tmp_path / "old.sqlite") as st:
        for got in (st.get("k-0"), next(st.records()), st.record("k-0")):
            assert "baseline" not in got and got["floors"] == floors
    frame = to_frame(tmp_path / "old.sqlite")  # the read-only reader of frames, past Store
    assert frame.loc[0, "floors.single.diff"] == -0.25 and not any(c.startswith("baseline") for c in frame.columns)


def test_an_interrupt_just_after_commit_keeps_the_run_and_raises_it(tmp_path):
    # Ctrl-C can land after SQLite has committed but before put returns: the run is stored, and
    # the interrupt (not a "cannot rollback" error) reaches the sweep
    class InterruptAfterCommit:
        def __init__(self, con):
            self.con = con

        def execute(self, sql, *args):
            out = self.con.execute(sql, *args)
            if sql == "COMMIT":
                raise KeyboardInterrupt
            return out

        @property
        def in_transaction(self):
            return self.con.in_transaction

    path = tmp_path / "s.sqlite"
    with Store(path, mode="write") as st:
        real = st._conn
        st._conn = InterruptAfterCommit(real)
        with pytest.raises(KeyboardInterrupt):
            st.put(make_record())
        st._conn = real
    with Store(path) as st:
        assert st.has("h1-0")
