"""Compact stores: what is dropped, how far the kept per-context errors move, and the command."""

import hashlib
import json
import subprocess
import sys

import numpy as np
import pytest

from depthscale.sims.grid import load_grid, run_key
from depthscale.sims.store import Store, compact_arrays, compact_store, narrow_errors
from depthscale.sims.sweeps import sweep
from depthscale.sims.temperature_heads import paired_difference


def _round_to_bits(x: np.ndarray, bits: int) -> np.ndarray:
    """Round each value to ``bits`` significant binary digits (half to even), by brute force with frexp:
    the float16 rounding of values in its normal range, computed without float16."""
    m, e = np.frexp(x)  # x = m 2^e, 0.5 <= |m| < 1
    return np.ldexp(np.round(m * 2.0**bits) / 2.0**bits, e)


def _float16_reference(x: np.ndarray) -> np.ndarray:
    """float16 rounding by hand: 11 significant bits in the normal range, steps of 2^-24 below it."""
    x = np.asarray(x, np.float64)
    return np.where(np.abs(x) >= 2.0**-14, _round_to_bits(x, 11), np.round(x * 2.0**24) / 2.0**24)


def _errors(n, seed=0):
    rng = np.random.default_rng(seed)
    return np.minimum(np.exp(rng.normal(-3.0, 4.0, n)), 6e4).astype(np.float32)  # 1e-12 to float16's top


def test_narrow_errors_is_float16_rounding_within_its_bound():
    x = _errors(200_000)
    q = narrow_errors(x)
    assert q.dtype == np.float16
    xd, qd = x.astype(np.float64), q.astype(np.float64)
    normal = np.abs(xd) >= 2.0**-14
    assert normal.sum() > 1000 and (~normal).sum() > 1000
    # normal range: 11 significant bits, the same as rounding by hand; relative error <= 2^-11
    np.testing.assert_array_equal(qd[normal], _round_to_bits(xd[normal], 11))
    assert np.all(np.abs(qd[normal] - xd[normal]) <= 2.0**-11 * np.abs(xd[normal]))
    # below it: steps of 2^-24, so an absolute error of at most 2^-25
    np.testing.assert_array_equal(qd[~normal], _float16_reference(xd[~normal]))
    assert np.all(np.abs(qd[~normal] - xd[~normal]) <= 2.0**-25)


def test_narrow_errors_keeps_what_float16_cannot_hold():
    big = np.array([1.0, 7e4], np.float32)  # beyond float16's 65504
    assert narrow_errors(big).dtype == np.float32 and np.array_equal(narrow_errors(big), big)
    huge = np.array([1.0, 1e40])  # beyond float32 too
    assert narrow_errors(huge).dtype == np.float64 and np.array_equal(narrow_errors(huge), huge)
    odd = np.array([np.inf, np.nan, 0.5], np.float32)  # non-finite values stay, the range is the finite one's
    out = narrow_errors(odd)
    assert out.dtype == np.float16 and np.isposinf(out[0]) and np.isnan(out[1]) and out[2] == 0.5
    with pytest.raises(TypeError, match="values dtype=int64"):
        narrow_errors(np.arange(3))


def test_paired_differences_move_by_far_less_than_their_standard_error():
    # a run's and a floor's per-context errors on the same contexts, correlated as trained models
    # and floors are; the floor's errors are recomputed in full precision by the reader
    rng = np.random.default_rng(1)
    n = 10_240
    floor = rng.gamma(0.5, 0.4, n)
    run = (floor * np.exp(rng.normal(0.02, 0.1, n))).astype(np.float32)
    m, se = paired_difference(run, floor)
    m16, se16 = paired_difference(narrow_errors(run), floor)
    # rounding errors are unbiased with variance ulp^2 / 12 each: the mean moves by about
    # sqrt(sum ulp^2 / 12) / n; allow 5 such standard deviations
    ulp = np.spacing(narrow_errors(run)).astype(np.float64)
    sd = np.sqrt(np.sum(ulp**2) / 12) / n
    assert abs(m16 - m) <= 5 * sd
    assert sd < 0.005 * se  # a spread under half a percent of the paired standard error
    # and never more than the deterministic bound, 2^-11 of the mean error plus 2^-25
    assert abs(m16 - m) <= 2.0**-11 * np.mean(run.astype(np.float64)) + 2.0**-25
    assert se16 == pytest.approx(se, rel=1e-2)


def test_compact_arrays_drops_the_parameters_only():
    sq = np.linspace(0.01, 2.0, 50, dtype=np.float32)
    extra = np.arange(4.0)
    out = compact_arrays({"sq_err": sq, "theta": np.ones(1000), "extra": extra})
    assert sorted(out) == ["extra", "sq_err"]
    assert np.array_equal(out["extra"], extra) and out["extra"].dtype == np.float64
    np.testing.assert_array_equal(out["sq_err"].astype(np.float64), _float16_reference(sq))
    assert compact_arrays({"theta": np.ones(3)}) is None and compact_arrays(None) is None
    with pytest.raises(TypeError, match="arrays=list"):
        compact_arrays([1, 2])


def _sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _full_store(path):
    rng = np.random.default_rng(3)
    sq = {k: rng.gamma(0.5, 0.4, 300).astype(np.float32) for k in ("a-0", "a-1")}
    with Store(path, mode="write") as st:
        for key in ("a-0", "a-1"):
            st.put(
                {
                    "key": key,
                    "config": {"model": {"depth": 2}},
                    "seed": int(key[-1]),
                    "status": "ok",
                    "reason": None,
                    "final_loss": float(np.mean(sq[key], dtype=np.float64)),
                    "arrays": {"sq_err": sq[key], "theta": rng.standard_normal(5000)},
                }
            )
        st.put({"key": "b-0", "config": {}, "seed": 0, "status": "failed", "reason": "boom"})
        st.put({"key": "c-0", "config": {}, "seed": 0, "status": "ok", "arrays": {"theta": np.ones(10)}})
    return sq


def test_compact_store_keeps_every_run_and_drops_the_parameters(tmp_path):
    src, dst = tmp_path / "full.sqlite", tmp_path / "compact.sqlite"
    sq = _full_store(src)
    before = _sha(src)
    out = compact_store(src, dst)
    assert _sha(src) == before  # only read
    assert out["runs"] == 4 and out["arrays"] == 2 and out["dropped"] == {"theta": 3}
    assert out["bytes_after"] == dst.stat().st_size < out["bytes_before"] == src.stat().st_size
    assert sorted(p.name for p in tmp_path.iterdir()) == ["compact.sqlite", "full.sqlite"]  # no temporary left
    (tmp_path / "plain").write_bytes(b"")
    assert dst.stat().st_mode == (tmp_path / "plain").stat().st_mode  # permissions of any new file
    (tmp_path / "plain").unlink()
    with Store(src) as a, Store(dst) as b:
        assert a.keys() == b.keys() and a.statuses() == b.statuses()
        assert a.contexts_version == b.contexts_version
        for key in a.keys():
            assert a.get(key, arrays=False) == b.get(key, arrays=False)
        for key, errors in sq.items():
            got = b.load_arrays(key)
            assert sorted(got) == ["sq_err"] and got["sq_err"].dtype == np.float16
            np.testing.assert_array_equal(got["sq_err"].astype(np.float64), _float16_reference(errors))
        assert b.load_arrays("b-0") is None and b.load_arrays("c-0") is None
        meta = dict(b._conn.execute("SELECT name, value FROM meta"))
        assert "theta" in meta["compacted"] and meta["schema_version"] == "2"
    with Store(dst, mode="write") as st:  # a compact store is an ordinary store: a sweep can continue it
        st.put({"key": "d-0", "config": {}, "seed": 0, "status": "ok"})
        assert len(st) == 5


def test_compact_store_refuses_bad_paths_untouched(tmp_path):
    src = tmp_path / "full.sqlite"
    _full_store(src)
    before = _sha(src)
    with pytest.raises(ValueError, match="dst=.*full.sqlite.*must be a new file"):
        compact_store(src, src)
    other = tmp_path / "other.sqlite"
    other.write_bytes(b"x")
    with pytest.raises(ValueError, match="dst=.*other.sqlite.*must be a new file"):
        compact_store(src, other)
    with pytest.raises(ValueError, match="dst=.*does not exist"):
        compact_store(src, tmp_path / "no" / "such.sqlite")
    with pytest.raises(ValueError, match="src: store=.*missing.sqlite"):
        compact_store(tmp_path / "missing.sqlite", tmp_path / "new.sqlite")
    assert _sha(src) == before and other.read_bytes() == b"x"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["full.sqlite", "other.sqlite"]


def _fake_run(config, seed):
    rng = np.random.default_rng([config.model.depth, seed])
    return {"status": "ok", "final_loss": 0.5, "arrays": {"sq_err": rng.random(64), "theta": rng.random(100)}}


@pytest.mark.parametrize("keep", [False, True])
def test_sweeps_store_compact_records_unless_asked_to_keep_the_parameters(tmp_path, keep):
    runs = load_grid({"seeds": [0, 1], "model": {"depth": [1, 2]}})
    with Store(tmp_path / "s.sqlite", mode="write") as st:
        res = sweep(runs, st, run_fn=_fake_run, executor="serial", quiet=True, keep_parameters=keep)
        assert res.done == 4
        for config, seed in runs:
            rec = st.get(run_key(config, seed))
            want = _fake_run(config, seed)["arrays"]
            if keep:
                assert sorted(rec["arrays"]) == ["sq_err", "theta"]
                assert np.array_equal(rec["arrays"]["theta"], want["theta"])
                assert np.array_equal(rec["arrays"]["sq_err"], want["sq_err"])
            else:
                assert sorted(rec["arrays"]) == ["sq_err"] and rec["arrays"]["sq_err"].dtype == np.float16
                np.testing.assert_array_equal(
                    rec["arrays"]["sq_err"].astype(np.float64), _float16_reference(want["sq_err"])
                )


CLI = [sys.executable, "-m", "depthscale.derivations.cli.app"]


def _cli(*argv, cwd):
    return subprocess.run([*CLI, *argv], cwd=cwd, capture_output=True, text=True, timeout=120)


def test_store_compact_command(tmp_path):
    _full_store(tmp_path / "full.sqlite")
    proc = _cli("store", "compact", "full.sqlite", "compact.sqlite", "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["runs"] == 4 and out["dropped"] == {"theta": 3} and (tmp_path / "compact.sqlite").exists()
    again = _cli("store", "compact", "full.sqlite", "compact.sqlite", cwd=tmp_path)
    assert again.returncode == 2 and again.stdout == ""
    assert again.stderr.count("\n") == 1 and "dst='compact.sqlite': must be a new file" in again.stderr
    missing = _cli("store", "compact", "nothing.sqlite", "new.sqlite", cwd=tmp_path)
    assert missing.returncode == 2 and "nothing.sqlite" in missing.stderr and not (tmp_path / "new.sqlite").exists()
