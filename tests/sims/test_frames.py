"""Stores as DataFrames: against the records written, and against a plain sqlite3 + json reading."""

import hashlib
import json
import sqlite3
import sys
from pathlib import Path

import pytest

pd = pytest.importorskip("pandas")

from depthscale.sims.frames import to_frame  # noqa: E402
from depthscale.sims.store import Store  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = [ROOT / "results" / "cpu.sqlite", ROOT / "results" / "protocol.sqlite"]


def _record(key, seed, depth, **fields):
    rec = {"key": key, "seed": seed, "status": "ok", "reason": None, "config": {"model": {"depth": depth}}}
    return {**rec, **fields}


RECORDS = [
    _record(
        "b-1",
        1,
        2,
        final_loss=0.25,
        C_L=None,
        layer_losses=[1.5, 0.5],
        mode_losses=[0.1, 0.2, 0.3],
        train_curve=[[0, 2.0], [40, 1.0]],
        floors={"single": {"loss": 0.75}},
    ),
    _record("a-0", 0, 1, final_loss=0.5, layer_losses=[2.0], mode_losses=None, train_curve=[[0, 3.0]]),
]


@pytest.fixture
def store(tmp_path):
    path = tmp_path / "runs.sqlite"
    with Store(path, mode="write") as s:
        for rec in RECORDS:
            s.put(rec)
    return path


def test_runs_one_row_per_run_with_config_and_nested_scalars(store):
    df = to_frame(store)
    assert list(df["key"]) == ["a-0", "b-1"]
    assert list(df.columns[:4]) == ["key", "seed", "status", "reason"]
    assert list(df["config.model.depth"]) == [1, 2]
    assert list(df["final_loss"]) == [0.5, 0.25]
    assert df.loc[1, "floors.single.loss"] == 0.75
    assert pd.isna(df.loc[0, "floors.single.loss"]) and pd.isna(df.loc[1, "C_L"])
    assert not {"layer_losses", "mode_losses", "train_curve"} & set(df.columns)


def test_long_tables_hold_every_list_entry(store):
    runs = {"key": ["a-0", "b-1", "b-1"], "seed": [0, 1, 1]}  # one entry of run a-0, two of b-1
    layers = to_frame(store, "layer_losses")
    assert layers.to_dict("list") == {**runs, "layer": [1, 1, 2], "loss": [2.0, 1.5, 0.5]}
    modes = to_frame(store, "mode_losses")
    assert modes.to_dict("list") == {"key": ["b-1"] * 3, "seed": [1] * 3, "mode": [1, 2, 3], "loss": [0.1, 0.2, 0.3]}
    curve = to_frame(store, "train_curve")
    assert curve.to_dict("list") == {**runs, "step": [0, 0, 40], "loss": [3.0, 2.0, 1.0]}


def test_a_store_object_and_an_open_writer_are_read_through(tmp_path):
    path = tmp_path / "live.sqlite"
    with Store(path, mode="write") as s:
        s.put(RECORDS[1])
        assert Path(f"{path}-wal").exists()  # a writer is connected: the last run lives in the WAL
        assert list(to_frame(s)["key"]) == ["a-0"]
        s.put(RECORDS[0])
        assert list(to_frame(path)["key"]) == ["a-0", "b-1"]


def _plain_reading(path):
    con = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
    try:
        return {k: json.loads(r) for k, r in con.execute("SELECT key, record FROM runs")}
    finally:
        con.close()


def _digest(folder: Path) -> dict:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.iterdir() if p.is_file()}


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: p.name)
def test_committed_stores_against_a_plain_reading_and_unchanged(path):
    before = _digest(path.parent)
    records = _plain_reading(path)
    runs = to_frame(path).set_index("key")
    assert sorted(runs.index) == sorted(records) and runs.index.is_unique
    for key, rec in records.items():
        row = runs.loc[key]
        assert (row["seed"], row["status"]) == (rec["seed"], rec["status"])
        assert row["config.model.depth"] == rec["config"]["model"]["depth"]
        assert row["config.task.a"] == rec["config"]["task"]["a"]
        assert row["final_loss"] == rec["final_loss"] and row["A_L"] == rec["A_L"]
    for kind, index in (("layer_losses", "layer"), ("mode_losses", "mode"), ("train_curve", "step")):
        long = to_frame(path, kind)
        assert len(long) == sum(len(r.get(kind) or ()) for r in records.values()), kind
        for key, group in long.groupby("key"):
            values = records[key][kind]
            if kind == "train_curve":
                assert group["step"].tolist() == [v[0] for v in values]
                values = [v[1] for v in values]
            else:
                assert group[index].tolist() == list(range(1, len(values) + 1))
            assert group["loss"].tolist() == values, (kind, key)
    assert _digest(path.parent) == before  # not a byte changed, no file created beside the stores


def test_bad_kind_and_a_foreign_file_are_refused(tmp_path, store):
    with pytest.raises(ValueError, match="kind='layers'"):
        to_frame(store, "layers")
    other = tmp_path / "notes.txt"
    other.write_text("hello")
    with pytest.raises(ValueError, match="not a depthscale results store"):
        to_frame(other)
    assert other.read_text() == "hello"


def test_without_pandas_the_message_says_how_to_install_it(store, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas now raises ImportError
    with pytest.raises(ImportError, match=r'pip install "depthscale\[pandas\]"'):
        to_frame(store)
