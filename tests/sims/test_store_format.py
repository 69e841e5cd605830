"""The stored form of a run's arrays: schema 2 packs byte planes in LZMA2, schema 1 (.npz) is still read
and still written into schema-1 stores, and either comes back bit for bit."""

import io
import sqlite3

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from depthscale.sims.store import ARRAYS_MAGIC, PAGE_SIZE, Store, _pack_arrays, _unpack_arrays, compact_store

_DTYPES = st.sampled_from(["<f2", "<f4", "<f8", ">f8", "<i4", "<u8", "|b1", "<c16", "|u1"])
_ARRAYS = _DTYPES.flatmap(
    lambda dt: hnp.arrays(np.dtype(dt), hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5))
)


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@settings(deadline=None, max_examples=150)
@given(st.dictionaries(st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,7}", fullmatch=True), _ARRAYS, min_size=1, max_size=3))
def test_packed_arrays_come_back_bit_for_bit(arrays):
    for schema in (1, 2):
        back = _unpack_arrays(_pack_arrays(arrays, schema))
        assert sorted(back) == sorted(arrays)
        assert all(_same_bits(back[k], np.asarray(v)) for k, v in arrays.items())  # NaN payloads and -0 too


def test_schema_2_packs_per_context_errors_smaller_than_npz():
    rng = np.random.default_rng(0)
    errors = {"sq_err": np.exp(rng.normal(-3.0, 2.0, 10240)).astype(np.float16)}
    npz, planes = _pack_arrays(errors, 1), _pack_arrays(errors, 2)
    assert npz[:2] == b"PK" and planes.startswith(ARRAYS_MAGIC)
    assert len(planes) < 0.95 * len(npz)


def test_strings_keep_numpys_container():
    blob = _pack_arrays({"names": np.array(["a", "bc"])}, 2)
    assert blob[:2] == b"PK" and list(_unpack_arrays(blob)["names"]) == ["a", "bc"]


@pytest.mark.parametrize(
    "cut, match", [(lambda b: b[:-40], "damaged"), (lambda b: ARRAYS_MAGIC + b"\x00garbage", "damaged")]
)
def test_a_damaged_blob_is_named(tmp_path, cut, match):
    path = tmp_path / "s.sqlite"
    with Store(path, mode="write") as s:
        s.put({"key": "a-0", "config": {}, "seed": 0, "status": "ok", "arrays": {"sq_err": np.arange(200.0)}})
    con = sqlite3.connect(path)
    (blob,) = con.execute("SELECT data FROM arrays").fetchone()
    con.execute("UPDATE arrays SET data=?", (cut(bytes(blob)),))
    con.commit()
    con.close()
    with Store(path) as s, pytest.raises(ValueError, match=rf"store=.*s.sqlite.*run 'a-0'.*{match}"):
        s.load_arrays("a-0")


def _schema_1_store(path, n=3):
    """A store as schema 1 left it: made, then marked version 1 before any run, so its writer packs .npz."""
    with Store(path, mode="write"):
        pass
    con = sqlite3.connect(path)
    con.execute("UPDATE meta SET value='1' WHERE name='schema_version'")
    con.commit()
    con.close()
    rng = np.random.default_rng(1)
    errors = {}
    with Store(path, mode="write") as s:
        assert s.schema_version == 1
        for i in range(n):
            errors[f"r{i}-0"] = np.exp(rng.normal(-3.0, 2.0, 4096)).astype(np.float16)
            s.put({"key": f"r{i}-0", "config": {}, "seed": 0, "status": "ok", "arrays": {"sq_err": errors[f"r{i}-0"]}})
    return errors


def test_a_schema_1_store_is_read_continued_and_compacted_to_schema_2(tmp_path):
    old, new = tmp_path / "old.sqlite", tmp_path / "new.sqlite"
    errors = _schema_1_store(old)
    blobs = [bytes(b) for (b,) in sqlite3.connect(old).execute("SELECT data FROM arrays")]
    assert all(b[:2] == b"PK" for b in blobs)  # older code can still read every run it wrote
    with np.load(io.BytesIO(blobs[0])) as z:  # and they are numpy's own files
        assert z.files == ["sq_err"]
    out = compact_store(old, new)
    assert out["bytes_after"] < out["bytes_before"]
    con = sqlite3.connect(new)
    assert con.execute("SELECT value FROM meta WHERE name='schema_version'").fetchone() == ("2",)
    assert con.execute("PRAGMA page_size").fetchone() == (PAGE_SIZE,)
    assert all(bytes(b).startswith(ARRAYS_MAGIC) for (b,) in con.execute("SELECT data FROM arrays"))
    con.close()
    with Store(old) as a, Store(new) as b:
        for key, e in errors.items():
            assert a.get(key, arrays=False) == b.get(key, arrays=False)
            assert _same_bits(b.load_arrays(key)["sq_err"], e)


def test_a_new_store_has_small_pages_and_schema_2(tmp_path):
    path = tmp_path / "s.sqlite"
    with Store(path, mode="write") as s:
        assert s.schema_version == 2
        s.put({"key": "a-0", "config": {}, "seed": 0, "status": "ok", "arrays": {"sq_err": np.ones(3, np.float16)}})
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA page_size").fetchone() == (PAGE_SIZE,)
    assert bytes(con.execute("SELECT data FROM arrays").fetchone()[0]).startswith(ARRAYS_MAGIC)
