"""Text in a notebook: short reprs of curves, fits and run records, lmfit-style fit reports with
correlations, and curves as DataFrames and DataArrays."""

import math
import sys

import numpy as np
import pytest
from synthetic import curve

from depthscale.derivations.analysis.curve import curves
from depthscale.derivations.analysis.fits import fit_offset_power
from depthscale.sims.display import RecordView

L = 2.0 ** np.arange(7)


def _noisy(seed=3):
    g = np.random.default_rng(seed)
    return (0.5 + 2.0 / L) * np.exp(0.01 * g.standard_normal(L.size))


def test_a_curve_repr_is_a_few_lines_with_its_size_and_losses():
    recs = curve(lambda L: 0.5 + 0.4 / L, seeds=(0, 1, 2), depths=(1, 2, 4, 8))
    for r in recs:
        r["train_curve"] = list(np.linspace(3.0, 0.5, 301))  # what flooded print(curve)
    (c,) = curves(recs)
    text = repr(c)
    assert len(text.splitlines()) <= 4 and len(text) < 400
    assert c.label in text and "4 depths x 3 seeds, 12 runs, all converged" in text
    for j, depth in enumerate(c.depths):
        seed_mean = np.mean([r["final_loss"] for r in recs if r["config"]["model"]["depth"] == depth])
        assert f"L={depth} {seed_mean:.4g}" in text
    assert str(c) == text


def test_a_fit_repr_names_the_law_points_and_verdict():
    f = fit_offset_power(L, _noisy())
    text = repr(f)
    assert text.startswith("<FitResult offset_power: L0 + c L^-alpha, 7 points, dof 4, identified")
    assert len(text.splitlines()) == 2
    assert f"alpha = {f.params['alpha']:.4g} ± {f.se['alpha']:.2g}" in text
    bad = fit_offset_power(L[:4], (0.5 + 1.0 / L[:4]) * np.exp(0.2 * np.random.default_rng(0).standard_normal(4)))
    assert f"not identified: {bad.reason}" in repr(bad)


def _correlation_by_finite_differences(f, x, y):
    """Correlations from s^2 (J^T J)^-1 with J the central-difference derivative of log(L0 + c L^-alpha)."""
    names = ("L0", "c", "alpha")
    p = np.array([f.params[k] for k in names])

    def logm(q):
        return np.log(q[0] + q[1] * x ** -q[2])

    J = np.empty((x.size, 3))
    for i in range(3):
        h = 1e-6 * max(abs(p[i]), 1e-3)
        up, dn = p.copy(), p.copy()
        up[i] += h
        dn[i] -= h
        J[:, i] = (logm(up) - logm(dn)) / (2 * h)
    s2 = np.sum((np.log(y) - logm(p)) ** 2) / (x.size - 3)
    cov = s2 * np.linalg.inv(J.T @ J)
    sd = np.sqrt(np.diag(cov))
    return {(names[i], names[j]): cov[i, j] / (sd[i] * sd[j]) for i in range(3) for j in range(i + 1, 3)}


def test_fit_report_has_lmfit_sections_and_the_right_correlations():
    y = _noisy()
    f = fit_offset_power(L, y)
    report = f.fit_report()
    for section in ("[[Model]]", "[[Fit Statistics]]", "[[Identified]]", "[[Variables]]", "[[Correlations]]"):
        assert section in report
    assert "L0 + c L^-alpha" in report and "degrees of freedom = 4" in report
    expected = _correlation_by_finite_differences(f, L, y)
    got = f.correlations()
    assert set(got) == set(expected)
    for pair, r in expected.items():
        assert got[pair] == pytest.approx(r, abs=1e-5)
        # shown when above the default threshold 0.1
        assert (f"C({pair[0]}, {pair[1]}) = {got[pair]:+.4f}" in report) == (abs(r) > 0.1)
    assert any(abs(r) > 0.1 for r in expected.values()) and any(abs(r) < 0.1 for r in expected.values())
    for k in f.names:  # each variable with value ± s.e., its 95 % interval and range
        lo, hi = f.interval(k)
        line = next(
            ln for ln in report.splitlines() if ln.strip().startswith(f"{k} ") or ln.strip().startswith(f"{k}:")
        )
        assert f"{f.params[k]:.4g} ± {f.se[k]:.2g}" in line and f"[{lo:.4g}, {hi:.4g}]" in line and "range" in line
    plo, phi = f.profile_interval("alpha")
    assert f"profile 95%: [{plo:.4g}, {phi:.4g}]" in report
    # correlations below the threshold are left out
    assert "[[Correlations]]" not in f.fit_report(min_correl=1.0)
    with pytest.raises(ValueError, match=r"^min_correl=2"):
        f.fit_report(min_correl=2)


def test_a_curve_reports_its_losses_and_its_fit():
    (c,) = curves(curve(lambda L: 0.5 + 0.4 / L, seeds=(0, 1, 2), depths=(1, 2, 4)))
    text = c.fit_report()
    assert text.startswith(f"[[Curve]] {c.label}\n    3 depths x 3 seeds")
    assert "data points        = 9 points at 3 depths" in text  # seed-level points: 3 depths < 4
    assert c.fit_report(points="mean").endswith("no fit: 3 depth(s) with a positive loss < 4")
    with pytest.raises(ValueError, match=r"^kind='cubic': must be one of offset, power"):
        c.fit_report("cubic")


def test_a_run_record_repr_never_shows_its_curves():
    rec = curve(lambda L: 0.5, seeds=(0,), depths=(4,))[0]
    rec["train_curve"] = list(np.linspace(3.0, 0.5, 301))
    text = repr(RecordView(rec))
    assert len(text.splitlines()) == 2 and len(text) < 400
    assert text.startswith(f"<run record {rec['key']}: ok, softmax depth 4, top-2") and "seed 0" in text
    assert f"final loss {rec['final_loss']:.6g} ± {rec['final_loss_se']:.2g}, converged, 100 steps" in text
    assert "train_curve" in text and "3.0" not in text


def test_curve_to_frame_is_indexed_by_depth_and_seed():
    pd = pytest.importorskip("pandas")
    recs = curve(lambda L: 0.5 + 0.4 / L, seeds=(2, 0, 1), depths=(4, 1, 2))
    (c,) = curves(recs)
    df = c.to_frame()
    assert isinstance(df, pd.DataFrame) and list(df.index.names) == ["depth", "seed"]
    assert df.index.tolist() == sorted((r["config"]["model"]["depth"], r["seed"]) for r in recs)
    for r in recs:
        row = df.loc[(r["config"]["model"]["depth"], r["seed"])]
        assert row["final_loss"] == r["final_loss"] and row["final_loss_se"] == r["final_loss_se"]
        assert bool(row["converged"]) and row["steps"] == 100
    assert df.attrs["label"] == c.label


def test_curve_to_xarray_has_depth_and_seed_dimensions():
    pytest.importorskip("xarray")
    recs = curve(lambda L: 0.5 + 0.4 / L, seeds=(0, 1), depths=(1, 2, 4))
    recs = [r for r in recs if not (r["seed"] == 1 and r["config"]["model"]["depth"] == 4)]  # one run missing
    (c,) = curves(recs)
    da = c.to_xarray()
    assert da.dims == ("depth", "seed") and da.name == "final_loss"
    assert da["depth"].values.tolist() == [1, 2, 4] and da["seed"].values.tolist() == [0, 1]
    for r in recs:
        assert float(da.sel(depth=r["config"]["model"]["depth"], seed=r["seed"])) == r["final_loss"]
    assert math.isnan(float(da.sel(depth=4, seed=1)))
    assert float(da.mean("seed").sel(depth=1)) == pytest.approx(
        np.mean([r["final_loss"] for r in recs[:1] + recs[3:4]])
    )


def test_to_xarray_without_xarray_names_the_extra(monkeypatch):
    (c,) = curves(curve(lambda L: 0.5 + 0.4 / L, seeds=(0,), depths=(1, 2)))
    monkeypatch.setitem(sys.modules, "xarray", None)  # import xarray now raises ImportError
    with pytest.raises(ImportError, match=r'^xarray is not installed: pip install "depthscale\[xarray\]"$'):
        c.to_xarray()


def test_claim_results_and_tables_have_short_reprs():
    from depthscale.derivations.claims.display import ClaimTable
    from depthscale.derivations.claims.verdicts import ClaimResult

    long_reason = "x" * 300
    r = ClaimResult("c1", "alpha near 1", (0.8, 1.2), 0.97, 0.01, "2 s.e.", "indicative", long_reason, would_be="pass")
    text = repr(r)
    assert text.splitlines()[0] == "<ClaimResult c1: indicative (would be pass)"
    assert "measured 0.97 ± 0.01 vs expected [0.8, 1.2] (2 s.e.)" in text and len(text) < 250
    rows = [ClaimResult(f"c{i}", "s", 1.0, 1.0, None, "3%", v, "") for i, v in enumerate(["pass"] * 9 + ["fail"] * 4)]
    table = repr(ClaimTable(rows))
    assert table.startswith("<ClaimTable 13 claim(s): 9 pass, 4 fail") and table.endswith("... 3 more>")
    assert len(table.splitlines()) == 12
