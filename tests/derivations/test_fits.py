"""Scaling-law fits on synthetic data from known laws: recovery, interval coverage, profile, AIC, bootstrap."""

import json
import math

import numpy as np
import pytest
from scipy import stats

from depthscale.derivations.analysis.bootstrap import bootstrap_over_seeds
from depthscale.derivations.analysis.fits import (
    FitResult,
    additive_predict,
    compare_alpha_one,
    fit_additive,
    fit_gap,
    fit_offset_power,
    fit_power_law,
    profile_alpha,
)

L = 2.0 ** np.arange(8)  # 1 .. 128: two decades of depth
TRUTH = {"L0": 0.5, "c": 2.0, "alpha": 1.0}


def law(L, L0=0.5, c=2.0, alpha=1.0):
    return L0 + c * L ** (-alpha)


def test_exact_recovery_offset_power():
    for L0, c, alpha in [(0.5, 2.0, 1.0), (0.0, 3.0, 0.7), (1.3, 0.4, 2.2), (0.05, 10.0, 0.3)]:
        f = fit_offset_power(L, law(L, L0, c, alpha))
        assert f.params["L0"] == pytest.approx(L0, abs=1e-7)
        assert f.params["c"] == pytest.approx(c, rel=1e-7)
        assert f.params["alpha"] == pytest.approx(alpha, rel=1e-7)
        assert f.ssr < 1e-12 and f.r2 == pytest.approx(1.0) and f.dof == 5


def test_statistics_against_independent_formulas():
    g = np.random.default_rng(5)
    R = law(L) * np.exp(0.02 * g.standard_normal(L.size))
    f = fit_offset_power(L, R)
    p = f.params
    r = np.log(R) - np.log(law(L, p["L0"], p["c"], p["alpha"]))
    ssr = float(r @ r)
    assert f.ssr == pytest.approx(ssr, rel=1e-9)
    lr = np.log(R)
    assert f.r2 == pytest.approx(1 - ssr / np.sum((lr - lr.mean()) ** 2), rel=1e-9)
    assert f.aic == pytest.approx(L.size * math.log(ssr / L.size) + 6, rel=1e-9)
    # standard errors from a finite-difference Jacobian of log(model) in (L0, c, alpha)
    theta = np.array([p["L0"], p["c"], p["alpha"]])
    J = np.empty((L.size, 3))
    for j in range(3):
        h = 1e-6 * max(1.0, abs(theta[j]))
        tp, tm = theta.copy(), theta.copy()
        tp[j] += h
        tm[j] -= h
        J[:, j] = (np.log(law(L, *tp)) - np.log(law(L, *tm))) / (2 * h)
    se = np.sqrt(np.diag(ssr / (L.size - 3) * np.linalg.inv(J.T @ J)))
    assert [f.se[k] for k in ("L0", "c", "alpha")] == pytest.approx(se, rel=1e-5)
    # the optimum is a stationary point: no direction lowers the residual sum
    grad = J.T @ r
    assert np.all(np.abs(grad) < 1e-7)
    lo, hi = f.interval("alpha")
    q = stats.t.ppf(0.975, 5)
    assert (lo, hi) == pytest.approx((p["alpha"] - q * f.se["alpha"], p["alpha"] + q * f.se["alpha"]))
    d = f.to_dict()
    assert d["ci95"]["alpha"] == pytest.approx([lo, hi]) and d["params"] == p


def test_jacobian_intervals_cover_at_stated_rate():
    """200 synthetic curves with 1 % log-normal noise: the 95 % intervals cover the truth 88-99 % of the time."""
    g = np.random.default_rng(2024)
    n = 200
    hits = dict.fromkeys(TRUTH, 0)
    alphas, ses = [], []
    for _ in range(n):
        R = law(L) * np.exp(0.01 * g.standard_normal(L.size))
        f = fit_offset_power(L, R)
        for k, v in TRUTH.items():
            lo, hi = f.interval(k)
            hits[k] += lo <= v <= hi
        alphas.append(f.params["alpha"])
        ses.append(f.se["alpha"])
    for k in TRUTH:
        assert 0.88 <= hits[k] / n <= 0.99, (k, hits[k] / n)
    # the reported standard error matches the Monte Carlo spread of the estimates (within 20 %)
    assert np.std(alphas, ddof=1) == pytest.approx(np.sqrt(np.mean(np.square(ses))), rel=0.2)
    assert np.mean(alphas) == pytest.approx(1.0, abs=3 * np.std(alphas) / np.sqrt(n))


def test_power_law_recovery_and_coverage():
    f = fit_power_law(L, 3.0 * L**-1.5)
    assert (f.params["c"], f.params["alpha"]) == pytest.approx((3.0, 1.5), rel=1e-12)
    g = np.random.default_rng(7)
    n, hits = 400, 0
    for _ in range(n):
        f = fit_power_law(L, 3.0 * L**-1.5 * np.exp(0.05 * g.standard_normal(L.size)))
        lo, hi = f.interval("alpha")
        hits += lo <= 1.5 <= hi
    assert 0.92 <= hits / n <= 0.98  # exact t intervals for a linear model: 95 % +- 2.5 binomial s.e.
    # independent check of the regression: scipy's linregress on the logs
    R = 3.0 * L**-1.5 * np.exp(0.05 * g.standard_normal(L.size))
    lr = stats.linregress(np.log(L), np.log(R))
    f = fit_power_law(L, R)
    assert f.params["alpha"] == pytest.approx(-lr.slope) and f.se["alpha"] == pytest.approx(lr.stderr)
    assert f.params["c"] == pytest.approx(math.exp(lr.intercept))


def test_gap_fit():
    Ls = 2.0 ** np.arange(1, 8)
    C = 1.2 - 0.4 * Ls**-0.98
    f = fit_gap(Ls, 1.2 - C, 1.2)
    assert f.params["alpha"] == pytest.approx(0.98, rel=1e-10) and f.params["c"] == pytest.approx(0.4, rel=1e-10)
    assert f.fixed == {"L0": 1.2} and f.kind == "gap"
    g = np.random.default_rng(3)
    f = fit_gap(Ls, 0.4 * Ls**-0.98 * np.exp(0.02 * g.standard_normal(Ls.size)))
    lo, hi = f.interval("alpha")
    assert lo < 0.98 < hi
    with pytest.raises(ValueError, match="gap_values=.*must be > 0"):
        fit_gap(Ls, 1.0 - C)


def test_additive_law_recovery():
    m, l, D = (x.ravel() for x in np.meshgrid(2.0 ** np.arange(4), 2.0 ** np.arange(5), 10.0 ** np.arange(3)))
    truth = {"L0": 0.2, "c_m": 1.5, "a_m": 0.98, "c_l": 0.8, "a_l": 1.2, "c_D": 3.0, "a_D": 0.3}

    def model(p):
        return p["L0"] + p["c_m"] * m ** -p["a_m"] + p["c_l"] * l ** -p["a_l"] + p["c_D"] * D ** -p["a_D"]

    f = fit_additive({"m": m, "l": l, "D": D}, model(truth))
    for k, v in truth.items():
        assert f.params[k] == pytest.approx(v, rel=1e-6, abs=1e-8), k
    assert additive_predict(f, {"m": m, "l": l, "D": D}) == pytest.approx(model(truth), rel=1e-8)
    g = np.random.default_rng(11)
    f = fit_additive({"m": m, "l": l, "D": D}, model(truth) * np.exp(0.01 * g.standard_normal(m.size)))
    for k, v in truth.items():  # each parameter within 3.5 standard errors (all 7 at once: ~0.3 % to fail)
        assert abs(f.params[k] - v) < 3.5 * f.se[k], (k, f.params[k], f.se[k])


def test_profile_minimum_is_at_fitted_alpha():
    g = np.random.default_rng(8)
    R = law(L, 0.3, 1.5, 0.9) * np.exp(0.02 * g.standard_normal(L.size))
    f = fit_offset_power(L, R)
    grid = np.linspace(0.6, 1.2, 121)
    prof = profile_alpha(L, R, grid)
    step = grid[1] - grid[0]
    assert abs(prof.best_alpha - f.params["alpha"]) <= step
    assert np.all(prof.ssr >= f.ssr - 1e-12)  # the free fit is the global minimum of the profile
    i = int(np.argmin(np.abs(grid - f.params["alpha"])))
    assert prof.L0[i] == pytest.approx(f.params["L0"], rel=0.05, abs=1e-3)
    # the profile curvature matches the Jacobian error of alpha: SSR rises by s^2 at one s.e.
    s2 = f.ssr / f.dof
    prof2 = profile_alpha(L, R, [f.params["alpha"] - f.se["alpha"], f.params["alpha"] + f.se["alpha"]])
    assert np.mean(prof2.ssr) - f.ssr == pytest.approx(s2, rel=0.25)


def test_compare_alpha_one():
    g = np.random.default_rng(9)
    noise = np.exp(0.01 * g.standard_normal(L.size))
    cmp1 = compare_alpha_one(L, law(L, alpha=1.0) * noise)
    assert cmp1.fixed.fixed == {"alpha": 1.0} and cmp1.delta_aic < 2
    assert cmp1.delta_aic == pytest.approx(cmp1.fixed.aic - cmp1.free.aic)
    cmp2 = compare_alpha_one(L, law(L, alpha=0.5) * noise)
    assert cmp2.delta_aic > 10
    assert cmp2.to_dict()["delta_aic"] == pytest.approx(cmp2.delta_aic)


def test_huber_resists_an_outlier():
    R = law(L) * np.exp(0.005 * np.random.default_rng(4).standard_normal(L.size))
    R[3] *= 1.6
    plain = fit_offset_power(L, R)
    robust = fit_offset_power(L, R, huber=0.01)
    assert abs(robust.params["alpha"] - 1) < abs(plain.params["alpha"] - 1)
    assert abs(robust.params["alpha"] - 1) < 0.05


def test_weights_zero_drop_points():
    R = law(L)
    R_bad = R.copy()
    R_bad[-1] *= 5
    w = np.ones(L.size)
    w[-1] = 0
    f = fit_offset_power(L, R_bad, weights=w)
    assert f.params["alpha"] == pytest.approx(1.0, rel=1e-6)


def test_bootstrap_resamples_seeds_not_points():
    """Each seed an exact power law with its own c: resampled seed means keep alpha exactly."""
    cs = np.array([1.0, 1.5, 2.0, 2.5, 3.0])
    Y = cs[:, None] * L**-1.3
    b = bootstrap_over_seeds(L, Y, fit_power_law, n_boot=300, rng=np.random.default_rng(0))
    assert b.intervals["alpha"] == pytest.approx((1.3, 1.3), rel=1e-9)
    lo, hi = b.intervals["c"]
    assert cs.min() <= lo < 2.0 < hi <= cs.max()
    assert b.n_ok == 300 and b.n_seeds == 5 and b.params["c"] == pytest.approx(2.0)
    d = b.to_dict()
    assert d["intervals"]["c"] == [lo, hi] and "point" in d


def test_bootstrap_reproducible_and_handles_missing():
    g = np.random.default_rng(1)
    Y = law(L) * np.exp(0.03 * g.standard_normal((6, L.size)))
    Y[0, 3] = np.nan
    b1 = bootstrap_over_seeds(L, Y, n_boot=15, rng=np.random.default_rng(3))
    b2 = bootstrap_over_seeds(L, Y, n_boot=15, rng=np.random.default_rng(3))
    assert b1.intervals == b2.intervals and b1.n_ok == 15


@pytest.mark.slow
@pytest.mark.parametrize("fit_fn, n, n_boot", [(fit_power_law, 200, 200), (fit_offset_power, 100, 100)])
def test_bootstrap_coverage_over_seeds(fit_fn, n, n_boot):
    """Synthetic sweeps of 10 seeds (per-seed and per-point noise): percentile 95 % intervals of alpha."""
    g = np.random.default_rng(99)
    hits = 0
    for _ in range(n):
        noise = np.exp(0.03 * g.standard_normal((10, L.size)) + 0.03 * g.standard_normal((10, 1)))
        Y = (law(L) if fit_fn is fit_offset_power else 2.0 * L**-1.0) * noise
        b = bootstrap_over_seeds(L, Y, fit_fn, n_boot=n_boot, rng=g)
        lo, hi = b.intervals["alpha"]
        hits += lo <= 1.0 <= hi
    print(f"bootstrap coverage of alpha ({fit_fn.__name__}): {hits / n:.3f}")
    assert 0.85 <= hits / n <= 0.99  # percentile intervals from 10 seeds run a little narrow


@pytest.mark.slow
def test_additive_coverage():
    m, l = (x.ravel() for x in np.meshgrid(2.0 ** np.arange(5), 2.0 ** np.arange(6)))
    truth = {"L0": 0.2, "c_m": 1.5, "a_m": 0.98, "c_l": 0.8, "a_l": 1.2}
    mean = truth["L0"] + truth["c_m"] * m ** -truth["a_m"] + truth["c_l"] * l ** -truth["a_l"]
    g = np.random.default_rng(12)
    n = 200
    hits = dict.fromkeys(truth, 0)
    for _ in range(n):
        f = fit_additive({"m": m, "l": l}, mean * np.exp(0.01 * g.standard_normal(m.size)))
        for k, v in truth.items():
            lo, hi = f.interval(k)
            hits[k] += lo <= v <= hi
    print("additive coverage:", {k: v / n for k, v in hits.items()})
    for k in truth:
        assert 0.88 <= hits[k] / n <= 0.99, k


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: fit_offset_power([1, 2, 0], [1, 1, 1]), r"L=.*must be > 0"),
        (lambda: fit_offset_power([1, 2, 3], [1, -1, 1]), r"R=.*must be > 0"),
        (lambda: fit_offset_power([1, 2, 3], [1, 1]), "must match L"),
        (lambda: fit_offset_power([1, 2], [1, 1]), "at least 3"),
        (lambda: fit_offset_power([1, 2, 4], [1, np.nan, 1]), "must be finite"),
        (lambda: fit_offset_power([1, 2, 4], [3, 2, 1], weights=[1, -1, 1]), "weights="),
        (lambda: fit_offset_power([1, 2, 4], [3, 2, 1], huber=0), "huber=0"),
        (lambda: fit_power_law([[1, 2]], [1, 2]), "1-D"),
        (lambda: fit_additive({}, [1, 2]), "xs="),
        (lambda: fit_additive({"m": [1, 2, 3, 4]}, [1, 2, 3]), "must match R"),
        (lambda: bootstrap_over_seeds([1, 2, 4], [[1, 2, 3]]), "at least 5"),
        (lambda: bootstrap_over_seeds([1, 2, 4], [[1, 2], [1, 2]]), "must be"),
        # five seeds, so that n_boot (not the seeds' number) is what is refused
        (lambda: bootstrap_over_seeds([1, 2, 4], [[3, 2, 1]] * 5, n_boot=0), "n_boot=0"),
        (lambda: fit_power_law([1, 2, 4], [3, 2, 1]).interval("L0"), "name='L0'"),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# ------------------------------------------------------------------ predict and identification
def test_predict_evaluates_each_kind_of_law():
    L = 2.0 ** np.arange(1, 8)
    off = fit_offset_power(L, 0.5 + 2.0 / L)
    np.testing.assert_allclose(off.predict([3.0, 100.0]), [0.5 + 2.0 / 3.0, 0.5 + 2.0 / 100.0], rtol=1e-6)
    pw = fit_power_law(L, 3.0 * L**-1.5)
    np.testing.assert_allclose(pw.predict([3.0]), [3.0 * 3.0**-1.5], rtol=1e-9)
    # a gap fit's law is the gap L0 - C_L = c L^-alpha itself, not L0 plus it
    gap = fit_gap(L, 0.4 * L**-0.98, L0=1.2)
    np.testing.assert_allclose(gap.predict([5.0]), [0.4 * 5.0**-0.98], rtol=1e-9)
    with pytest.raises(ValueError, match="no fit"):
        FitResult.missing("offset_power", "too few depths").predict([1.0])


def test_clean_law_is_identified_and_strict_json():
    L = 2.0 ** np.arange(8)
    R = (0.5 + 2.0 / L) * (1 + 0.01 * np.random.default_rng(0).standard_normal(L.size))
    f = fit_offset_power(L, R)
    assert f.identified and f.reason == ""
    d = f.to_dict()
    assert d["identified"] is True
    json.dumps(d, allow_nan=False)


def test_flat_curve_is_not_identified():
    L = 2.0 ** np.arange(8)
    f = fit_offset_power(L, np.full(L.size, 0.7))
    assert not f.identified and f.reason
    d = f.to_dict()
    assert d["identified"] is False
    json.dumps(d, allow_nan=False)  # nan statistics are written as null


def test_each_identification_rule():
    base = dict(
        kind="offset_power",
        r2=0.99,
        aic=0.0,
        ssr=0.0,
        n=8,
        dof=5,
        names=("L0", "c", "alpha"),
        bounds={"L0": (0.0, 0.6), "alpha": (1e-8, 20.0)},
    )
    ok = FitResult(params={"L0": 0.5, "c": 2.0, "alpha": 1.0}, se={"L0": 0.01, "c": 0.1, "alpha": 0.05}, **base)
    assert ok.identified
    at_bound = FitResult(params={"L0": 0.5, "c": 2.0, "alpha": 1e-8}, se={"L0": 0.01, "c": 0.1, "alpha": 0.05}, **base)
    assert not at_bound.identified and "bound" in at_bound.reason
    zero_se = FitResult(params={"L0": 0.5, "c": 2.0, "alpha": 1.0}, se={"L0": 0.01, "c": 0.0, "alpha": 0.05}, **base)
    assert not zero_se.identified and "standard error" in zero_se.reason
    nan_se = FitResult(params={"L0": 0.5, "c": 2.0, "alpha": 1.0}, se={"L0": 0.01, "c": 0.1, "alpha": math.nan}, **base)
    assert not nan_se.identified and "standard error" in nan_se.reason
    # L0 = 0.3 +- 0.2 over 5 dof: the 95 % interval (2 x 2.571 x 0.2 = 1.03 wide) exceeds L0's range [0, 0.6]
    wide = FitResult(params={"L0": 0.3, "c": 2.0, "alpha": 1.0}, se={"L0": 0.2, "c": 0.1, "alpha": 0.05}, **base)
    assert not wide.identified and "wider than its range" in wide.reason
    bad_r2 = FitResult(
        params={"L0": 0.5, "c": 2.0, "alpha": 1.0}, se={"L0": 0.01, "c": 0.1, "alpha": 0.05}, **{**base, "r2": -3.6e-13}
    )
    assert not bad_r2.identified and "R^2" in bad_r2.reason
    missing = FitResult.missing("offset_power", "2 depth(s) < 4")
    assert not missing.identified and missing.reason == "2 depth(s) < 4"
