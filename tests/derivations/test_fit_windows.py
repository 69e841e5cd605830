"""Depth windows on a curve's fits: ``Curve.fit(L_min=, L_max=)``, recorded in the fit, shown in its
report and in ``depthscale fit``; a window that leaves out a bending tail recovers the exponent."""

import json
import math

import numpy as np
import pytest
from synthetic import curve as synthetic_curve

from depthscale.derivations.analysis.curve import Curve, curves
from depthscale.derivations.analysis.fits import fit_power_law
from depthscale.derivations.cli.app import main
from depthscale.sims.store import Store

ALPHA = 0.7
BEND = 8  # beyond this depth the loss flattens to L^-0.2


def bent(L):
    """``2 L^-0.7`` up to L = 8, then a tail that falls only as ``L^-0.2`` (continuous at 8)."""
    return 2.0 * L**-ALPHA if L <= BEND else 2.0 * BEND**-ALPHA * (L / BEND) ** -0.2


@pytest.fixture(scope="module")
def records():
    return synthetic_curve(bent, seeds=(0, 1, 2), model="linear", task="easy-fresh", a=1.5, b=0.5, d=64, P=256)


@pytest.fixture()
def curve(records):
    (c,) = curves(records)
    return c


def test_a_window_that_leaves_out_the_tail_recovers_the_exponent(curve):
    full, window = curve.fit("power", n_boot=0), curve.fit("power", n_boot=0, L_max=BEND)
    lo, hi = window.interval("alpha")
    assert window.identified and lo <= ALPHA <= hi  # control that must pass: the known exponent inside
    flo, fhi = full.interval("alpha")
    assert full.identified and not (flo <= ALPHA <= fhi)  # control that must fail: the tail bends it
    assert full.params["alpha"] < ALPHA - 0.1
    # independently: the same fit by hand on the seed means of the depths in the window
    keep = curve.depths <= BEND
    by_hand = fit_power_law(curve.depths[keep].astype(float), curve.mean[keep])
    assert window.params == pytest.approx(by_hand.params, rel=1e-9)


def test_the_fit_records_its_depths_and_window(curve):
    window = curve.fit("power", n_boot=0, L_min=2, L_max=BEND)
    assert window.depths == (2, 4, 8) and window.window == (2.0, 8.0)
    full = curve.fit("power", n_boot=0)
    assert full.depths == tuple(int(L) for L in curve.depths) and full.window is None
    d = window.to_dict()
    assert d["depths"] == [2, 4, 8] and d["window"] == [2.0, 8.0]
    assert curve.fit("power", n_boot=0, L_max=BEND).to_dict()["window"] == [None, 8.0]  # open end: None


def test_the_report_shows_the_window(curve):
    text = curve.fit("power", n_boot=0, L_max=BEND).fit_report()
    assert "depths fitted      = L = 1, 2, 4, 8 (window L <= 8)" in text
    assert "window" not in curve.fit("power", n_boot=0).fit_report()
    assert "(window L <= 8)" in repr(curve.fit("power", n_boot=0, L_max=BEND))
    assert "(window L <= 8)" in curve.fit_report("power", L_max=BEND)


def test_the_cache_is_keyed_by_the_window(curve):
    a = curve.fit("power", n_boot=0, L_max=BEND)
    assert curve.fit("power", n_boot=0, L_max=BEND) is a
    assert curve.fit("power", n_boot=0) is not a
    assert curve.fit("power", n_boot=0, L_max=16) is not a
    assert curve.fit("power", n_boot=0, L_max=16).depths == (1, 2, 4, 8, 16)


def test_a_window_with_too_few_depths_says_so(curve):
    f = curve.fit("offset", n_boot=0, L_max=2)
    assert f.failure and "in the window L <= 2" in f.failure and not f.identified
    empty = curve.fit("power", n_boot=0, L_max=0.5)
    assert "in the window L <= 0.5" in empty.failure


@pytest.mark.parametrize(
    "kw, text",
    [
        ({"L_min": 8, "L_max": 4}, "L_min=8: must be <= L_max (4)"),
        ({"L_max": 0}, "L_max=0: must be"),
        ({"L_max": "8"}, "L_max='8': must be a real number"),
        ({"L_min": math.nan}, "L_min=nan: must be"),
    ],
)
def test_bad_windows_are_one_line_errors(curve, kw, text):
    with pytest.raises(ValueError) as exc:
        curve.fit("power", n_boot=0, **kw)
    assert text in str(exc.value) and "\n" not in str(exc.value)


def test_window_of_a_curve_keeps_its_condition(curve):
    w = curve.window(L_min=4)
    assert w.key == curve.key and w.label == curve.label and w.depths.tolist() == [4, 8, 16, 32, 64]
    assert w.loss.shape == (3, 5) and {L for L, _ in w.runs} == {4, 8, 16, 32, 64}


def test_curve_from_arrays(curve):
    c = Curve.from_arrays(curve.depths, curve.loss, label="by hand")
    assert c.fit("power", n_boot=0, L_max=BEND).params == pytest.approx(
        curve.fit("power", n_boot=0, L_max=BEND).params, rel=1e-12
    )
    assert c.eval_contexts == math.inf and Curve.from_arrays([1, 2], [1.0, 0.5], contexts=512).eval_contexts == 512
    with pytest.raises(ValueError, match=r"^depths=\[2.0, 1.0\]: must be increasing"):
        Curve.from_arrays([2, 1], [1.0, 0.5])
    with pytest.raises(ValueError, match="^loss="):
        Curve.from_arrays([1, 2, 4], [[1.0, 0.5]])


def test_fit_command_takes_a_window_and_where_filters(tmp_path, capsys, records):
    store = tmp_path / "s.sqlite"
    other = synthetic_curve(bent, seeds=(0, 1), model="linear", task="easy-fresh", a=1.5, b=0.5, d=32, P=256)
    with Store(store, mode="write") as st:
        for r in records + other:
            st.put(r)
    argv = ["fit", "--store", str(store), "--kind", "power", "--n-boot", "0", "--where", "task.d=64"]
    assert main([*argv, "--L-max", "8", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [c["d"] for c in out["curves"]] == [64]  # the d = 32 curve left out by --where
    fit = out["curves"][0]["fits"]["power"]
    assert fit["depths"] == [1, 2, 4, 8] and fit["window"] == [None, 8.0]
    (c,) = curves(records)
    assert fit["params"]["alpha"] == pytest.approx(c.fit("power", n_boot=0, L_max=8).params["alpha"], rel=1e-12)
    assert main([*argv, "--L-max", "8"]) == 0
    assert "L = 1, 2, 4, 8 (window L <= 8)" in capsys.readouterr().out
    assert main([*argv, "--L-min", "8", "--L-max", "4"]) == 2
    assert capsys.readouterr().err.strip().endswith("L-min=8.0: must be <= L-max (4.0)")
    assert main(["fit", "--store", str(store), "--where", "task.d"]) == 2
    assert "must be PATH=VALUE" in capsys.readouterr().err
    assert main(["fit", "--store", str(store), "--where", "task.dd=3"]) == 2
    assert "where key 'task.dd'" in capsys.readouterr().err
    assert np.isfinite(fit["params"]["alpha"])
