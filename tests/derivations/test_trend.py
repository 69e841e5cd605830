"""Curves compared across a parameter (derivations/analysis/trend.py), against independent computations:
the per-curve quantities recomputed by hand from the records, the weighted line against NumPy's least
squares (errors as given) and SciPy's curve_fit (errors scaled by the scatter), its Welch degrees of
freedom from the explicit weights, and the interval's coverage by Monte Carlo with its own error."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize, stats

from depthscale.derivations.analysis.curve import curves
from depthscale.derivations.analysis.estimate import Estimate
from depthscale.derivations.analysis.trend import TrendPoint, comparable_groups, fit_trend, trend_points
from depthscale.sims.config import ModelConfig, RunConfig, TaskConfig, TrainConfig, run_key

DEPTHS = (1, 2, 4, 8, 16, 32)


def rec(d, L, seed, loss, *, gap=None, single=None, lr=3e-3, engine="numba", attention="softmax", P=None):
    cfg = RunConfig(
        TaskConfig(task="topk", k=2, a=0.0, b=0.0, d=d, P=8 * d if P is None else P),
        ModelConfig(depth=L, engine=engine, attention=attention),
        TrainConfig(schedule="cosine", lr=lr, batch=1024, steps=900, window=112, eval_contexts=10240),
    )
    r = {
        "key": run_key(cfg, seed),
        "config": cfg.to_dict(),
        "seed": seed,
        "status": "ok",
        "converged": True,
        "final_loss": float(loss),
        "final_loss_se": 1e-3,
        "wall_seconds": 36.0,
    }
    if gap is not None:
        r["gap"] = float(gap)
    if single is not None:
        H, diff_se = single
        r["floors"] = {"single": {"loss": H, "se": 1e-3, "diff": loss - H, "diff_se": diff_se, "attention": attention}}
    return r


def ladder(ds=(16, 32, 64), seeds=(0, 1, 2), gain=lambda d: 0.04, seed_noise=1e-3, rng_seed=0):
    """Records of softmax top-2 (0,0) at each d with P = 8d: R_L = 2 (1 - G(d) log2(L) / 5) times seed noise,
    a disagreement D = 0.5 L^0.3 times noise, the single head 1 % below R_1."""
    rng = np.random.default_rng(rng_seed)
    out = []
    for d in ds:
        for s in seeds:
            for L in DEPTHS:
                R = 2.0 * (1 - gain(d) * math.log2(L) / 5) * (1 + seed_noise * rng.standard_normal())
                D = 0.5 * L**0.3 * math.exp(0.02 * rng.standard_normal())
                out.append(rec(d, L, s, R, gap=D, single=(R / 1.01, 2e-4)))
    return out


# ---------------------------------------------------------------------------------------------- points
def test_each_point_is_the_curves_own_numbers_recomputed_by_hand():
    records = ladder()
    points = trend_points(curves(records), "d", also=("P",))
    assert [p.value for p in points] == [16, 32, 64] and all((p.first, p.last) == (1, 32) for p in points)
    for p in points:
        mine = [r for r in records if r["config"]["task"]["d"] == p.value]

        def loss(L, s):
            return next(r["final_loss"] for r in mine if r["config"]["model"]["depth"] == L and r["seed"] == s)

        gains = np.array([(loss(1, s) - loss(32, s)) / loss(1, s) for s in (0, 1, 2)])
        assert p.depth_gain.value == pytest.approx(gains.mean(), rel=1e-12)
        assert p.depth_gain.se == pytest.approx(gains.std(ddof=1) / math.sqrt(3), rel=1e-10)
        assert p.depth_gain.dof == 2
        r1 = np.array([loss(1, s) for s in (0, 1, 2)])
        assert p.r1.value == pytest.approx(r1.mean(), rel=1e-12)
        # (R_1 - H)/H per seed, pooled: the mean, and the larger of the evaluation and the seeds' errors
        rel = np.array([0.01] * 3)
        eval_se = math.sqrt(sum((2e-4 * 1.01 / r) ** 2 for r in r1)) / 3
        assert p.r1_vs_single.value == pytest.approx(rel.mean(), rel=1e-9)
        assert p.r1_vs_single.se == pytest.approx(max(eval_se, rel.std(ddof=1) / math.sqrt(3)), rel=1e-6)
        # the disagreement exponent: least squares of log(D / L) on log L over L = 2..32 (seed means of D)
        Ls = np.array(DEPTHS[1:], float)
        D = np.array([np.mean([r["gap"] for r in mine if r["config"]["model"]["depth"] == L]) for L in Ls])
        slope = np.polyfit(np.log(Ls), np.log(D / Ls), 1)[0]
        assert p.exponent.value == pytest.approx(-slope, rel=1e-9)
        assert p.core_hours == pytest.approx(18 * 36.0 / 3600)


def test_first_and_last_default_to_the_depths_every_curve_shares():
    recs = [rec(16, L, s, 2.0 / L**0.1) for L in (1, 2, 4, 8) for s in (0, 1)]
    recs += [rec(32, L, s, 2.0 / L**0.1) for L in (2, 4, 8, 16) for s in (0, 1)]
    points = trend_points(curves(recs), "d", also=("P",))
    assert {(p.first, p.last) for p in points} == {(2, 8)}
    assert points[0].r1 is not None and points[1].r1 is None and "no one-layer runs" in points[1].notes[0]
    with pytest.raises(ValueError, match=r"first, last"):
        trend_points(curves(recs), "d", also=("P",), first=8, last=8)


def test_a_jax_rung_joins_the_numba_rungs_but_another_protocol_does_not():
    recs = [rec(d, L, 0, 1.0 + 1 / L) for d in (16, 32) for L in (1, 4)]
    recs += [rec(128, L, 0, 1.0 + 1 / L, engine="jax") for L in (1, 4)]
    recs += [rec(16, L, 0, 1.0 + 1 / L, lr=1e-2) for L in (1, 4)]
    groups = comparable_groups(curves(recs), "d", also=("P",))
    assert sorted([c.d for c in g] for g in groups) == [[16], [16, 32, 128]]
    (three,) = [g for g in groups if len(g) == 3]
    assert three[-1].variant == "jax" and [p.value for p in trend_points(three, "d", also=("P",))] == [16, 32, 128]


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: trend_points(curves([rec(16, L, 0, 1.0, lr=lr) for L in (1, 2) for lr in (3e-3, 1e-2)]), "d"),
         "one curve per value of d"),
        (lambda: trend_points(curves([rec(d, L, 0, 1.0, lr=1e-3 * d) for d in (16, 32) for L in (1, 2)]), "d",
                              also=("P",)), "differ in train"),
        (lambda: trend_points(curves([rec(d, L, 0, 1.0) for d in (16, 32) for L in (1, 2)]), "d"), "differ in P"),
        (lambda: trend_points(curves([rec(16, 1, 0, 1.0)]), "width"), "parameter='width'"),
        (lambda: trend_points([], "d"), "curves"),
    ],
)  # fmt: skip
def test_curves_that_differ_in_more_than_the_parameter_are_refused(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_points_across_attention_maps_are_named_and_take_no_line():
    recs = [rec(16, L, s, 1.0 + (0.1 + 0.01 * s) / L, attention=a) for a in ("softmax", "sparsemax") for L in (1, 4)
            for s in (0, 1)]  # fmt: skip
    points = trend_points(curves(recs), "attention")
    assert [p.value for p in points] == ["softmax", "sparsemax"]
    with pytest.raises(ValueError, match="numeric parameter"):
        fit_trend(points, "depth_gain")


# ---------------------------------------------------------------------------------------------- the line
def points_of(ds, values, ses, dofs=(2, 2, 2), basis="seeds", quantity="depth_gain"):
    return [
        TrendPoint("d", d, f"d={d}", (1, 32), 3, 1, 32, **{quantity: Estimate(v, s, f, basis, 3)})
        for d, v, s, f in zip(ds, values, ses, dofs)
    ]


def test_the_line_and_its_errors_are_numpys_weighted_least_squares_with_absolute_errors():
    ds, y, se = (16, 32, 64), np.array([0.031, 0.040, 0.052]), np.array([0.004, 0.006, 0.009])
    t = fit_trend(points_of(ds, y, se), "depth_gain", at=128)
    x = np.log2(np.array(ds) / 16)
    (b, a), pcov = np.polyfit(x, y, 1, w=1 / se, cov="unscaled")  # LAPACK least squares, errors as given
    popt, pcov = np.array([a, b]), pcov[::-1, ::-1]
    chi2 = float(np.sum(((y - popt[0] - popt[1] * x) / se) ** 2))
    assert chi2 < 1 and not t.inflated  # the points lie within their errors: no scaling
    assert t.slope.value == pytest.approx(popt[1], rel=1e-9) and t.intercept.value == pytest.approx(popt[0], rel=1e-9)
    assert t.slope.se == pytest.approx(math.sqrt(pcov[1, 1]), rel=1e-9)
    J = np.array([1.0, 3.0])  # d = 128 is three doublings above 16
    assert t.extrapolated.value == pytest.approx(J @ popt, rel=1e-9)
    assert t.extrapolated.se == pytest.approx(math.sqrt(J @ pcov @ J), rel=1e-9)
    assert t.extrapolation and t.chi2 == pytest.approx(chi2, rel=1e-9)
    assert t.fit_p == pytest.approx(stats.chi2.sf(chi2, 1), rel=1e-9)
    # Welch-Satterthwaite degrees of freedom of the slope, from its explicit weights
    w = 1 / se**2
    xb = np.sum(w * x) / np.sum(w)
    c = w * (x - xb) / np.sum(w * (x - xb) ** 2)
    parts = (c * se) ** 2
    assert t.slope.dof == pytest.approx(parts.sum() ** 2 / np.sum(parts**2 / 2), rel=1e-9)
    assert (
        t.predict(32).value == pytest.approx(popt[0] + popt[1], rel=1e-9)
        and not fit_trend(points_of(ds, y, se), "depth_gain", at=32).extrapolation
    )


def test_a_line_through_two_values_is_read_between_them_and_never_beyond():
    ds, y, se = (8, 16), np.array([0.006, 0.038]), np.array([0.0008, 0.0004])
    beyond = fit_trend(points_of(ds, y, se), "depth_gain", at=128)
    assert beyond.fit_dof == 0 and beyond.extrapolation and beyond.extrapolated is None
    assert "at d = 128" not in beyond.describe()
    inside = fit_trend(points_of(ds, y, se), "depth_gain", at=11.3137)  # between the two: the line's value
    assert inside.extrapolated.value == pytest.approx(0.022, abs=1e-4)  # halfway in log2 d


def test_points_scattered_beyond_their_errors_scale_the_errors_as_scipys_relative_fit():
    ds, y, se = (16, 32, 64, 128), np.array([0.03, 0.06, 0.035, 0.07]), np.array([0.002, 0.002, 0.003, 0.002])
    t = fit_trend(points_of(ds, y, se, dofs=(2, 2, 2, 2)), "depth_gain", at=256)
    x = np.log2(np.array(ds) / 16)
    popt, pcov = optimize.curve_fit(lambda x, a, b: a + b * x, x, y, sigma=se, absolute_sigma=False)
    assert t.inflated and t.fit_dof == 2 and t.slope.dof == 2 and t.slope.basis == "fit"
    assert t.slope.value == pytest.approx(popt[1], rel=1e-6)  # curve_fit iterates to about 1e-8
    assert t.slope.se == pytest.approx(math.sqrt(pcov[1, 1]), rel=1e-6)
    J = np.array([1.0, 4.0])
    assert t.extrapolated.se == pytest.approx(math.sqrt(J @ pcov @ J), rel=1e-6)


def test_the_slopes_95_percent_interval_covers_the_true_slope_as_often_as_it_says():
    # three rungs of three seeds each, true gain 0.04 + 0.01 log2(d/16), seed scatter growing with d
    rng = np.random.default_rng(7)
    n, hits, ds = 1500, 0, (16, 32, 64)
    for _ in range(n):
        pts = []
        for j, d in enumerate(ds):
            e = Estimate.from_seeds(0.04 + 0.01 * j + (0.002 + 0.002 * j) * rng.standard_normal(3))
            pts.append(TrendPoint("d", d, "", (1, 32), 3, 1, 32, depth_gain=e))
        s = fit_trend(pts, "depth_gain").slope
        hits += abs(s.value - 0.01) <= s.margin
    cover, err = hits / n, math.sqrt(0.95 * 0.05 / n)
    assert cover >= 0.95 - 4 * err and cover <= 0.999, cover  # never anti-conservative beyond the Monte Carlo error


def test_a_line_needs_two_points_with_errors_and_says_which_it_left_out():
    pts = points_of((16, 32, 64), (0.03, 0.04, 0.05), (0.01, float("nan"), 0.01))
    t = fit_trend(pts, "depth_gain")
    assert t.values == (16.0, 64.0) and t.fit_dof == 0 and math.isnan(t.fit_p) and "d = 32" in t.dropped[0]
    with pytest.raises(ValueError, match="two or more values of d"):
        fit_trend(pts[:2], "depth_gain")
    with pytest.raises(ValueError, match="quantity"):
        fit_trend(pts, "loss")
    with pytest.raises(ValueError, match="at="):
        fit_trend(pts, "depth_gain", at=-1)


def test_plot_trend_draws_points_line_band_and_the_labelled_extrapolation():
    from matplotlib.figure import Figure

    from depthscale.derivations.report.plots import plot_trend

    pts = points_of((16, 32, 64), (0.03, 0.04, 0.05), (0.004, 0.004, 0.004), quantity="exponent", basis="fit")
    t = fit_trend(pts, "exponent", at=128)
    ax = plot_trend(pts, "exponent", ax=Figure().subplots(), trend=t)
    labels = [x.get_text() for x in ax.get_legend().get_texts()]
    assert "d = 128: an extrapolation" in labels and ax.get_xscale() == "log"
    assert [tk.get_text() for tk in ax.get_xticklabels()] == ["16", "32", "64", "128"]
    with pytest.raises(ValueError, match="trend"):
        plot_trend(pts, "depth_gain", ax=Figure().subplots(), trend=t)
