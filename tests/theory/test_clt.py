"""Tests of depthscale.theory.clt against brute-force sums and Monte Carlo with its own errors."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from depthscale.theory.clt import (
    clt_loss,
    decompose,
    inverse_variance_loss,
    maurey_bound,
    optimal_weight_loss,
    powerlaw_asymptote,
    shrinking_noise_exponent,
    shrinking_noise_loss,
    stable_median_scaling,
    symmetric_stable_rvs,
    unequal_variance_loss,
)

# ---------------------------------------------------------------- M0 decomposition


def _brute_A_C(f, y):
    n, L = f.shape
    M = [[sum((f[i, l] - y[i]) * (f[i, m] - y[i]) for i in range(n)) / n for m in range(L)] for l in range(L)]
    A = sum(M[l][l] for l in range(L)) / L
    C = sum(M[l][m] for l in range(L) for m in range(L) if l != m) / (L * (L - 1)) if L > 1 else math.nan
    return A, C


@settings(deadline=None, max_examples=60)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 40), L=st.integers(2, 12), spread=st.floats(1e-3, 1e3))
def test_identity_on_random_predictions(seed, n, L, spread):
    rng = np.random.default_rng(seed)
    y = rng.normal(0, 3, n)
    # layers with their own bias and noise scale, plus a shared error
    shared = rng.normal(0, 1, n)
    f = (
        y[:, None]
        + shared[:, None]
        + rng.normal(0, 1, L) * spread
        + rng.normal(0, 1, (n, L)) * rng.uniform(0, spread, L)
    )
    dec = decompose(f, y)
    R = np.mean((f.mean(axis=1) - y) ** 2)
    A, C = _brute_A_C(f, y)
    assert dec.R_L == pytest.approx(R, rel=1e-12)
    assert dec.A_L == pytest.approx(A, rel=1e-10)
    assert abs(dec.C_L - C) <= 1e-10 * max(abs(C), A)
    assert abs(R - (C + (A - C) / L)) <= 1e-10 * R
    assert dec.identity_residual <= 1e-10
    disagreement = sum(np.mean((f[:, l] - f.mean(axis=1)) ** 2) for l in range(L)) / (L - 1)
    assert dec.gap == pytest.approx(disagreement, rel=1e-9, abs=1e-12 * A)
    assert dec.gap >= -1e-12 * A
    # yhat - y cancels when the error is small: the rounding error scales with the data, not the result
    np.testing.assert_allclose(dec.sq_err, (f.mean(axis=1) - y) ** 2, rtol=1e-12, atol=1e-14 * np.max(f**2))


@settings(deadline=None, max_examples=60)
@given(
    f=hnp.arrays(
        float, hnp.array_shapes(min_dims=2, max_dims=2, min_side=2, max_side=8), elements=st.floats(-1e3, 1e3)
    ),
    data=st.data(),
)
def test_gap_is_disagreement_and_nonnegative_on_arbitrary_floats(f, data):
    y = data.draw(hnp.arrays(float, f.shape[0], elements=st.floats(-1e3, 1e3)))
    dec = decompose(f, y)
    scale = max(dec.A_L, 1e-300)
    assert dec.gap >= -1e-12 * scale
    # f_l - yhat = e_l - mean_l e_l; written with the errors so rounding is relative to them
    e = f - y[:, None]
    disagreement = sum(np.mean((e[:, l] - e.mean(axis=1)) ** 2) for l in range(f.shape[1])) / (f.shape[1] - 1)
    assert abs(dec.gap - disagreement) <= 1e-10 * scale
    assert abs(dec.R_L - (dec.C_L + dec.gap / dec.L)) <= 1e-10 * scale


def test_single_layer_and_validation():
    dec = decompose([[1.0], [3.0]], [0.0, 1.0])
    assert dec.L == 1 and dec.R_L == dec.A_L == 2.5
    assert math.isnan(dec.C_L) and math.isnan(dec.gap) and math.isnan(dec.disagreement)
    assert dec.identity_residual == 0.0
    with pytest.raises(ValueError, match="target"):
        decompose(np.zeros((3, 2)), np.zeros(4))
    with pytest.raises(ValueError, match="f"):
        decompose(np.zeros(3), np.zeros(3))
    with pytest.raises(ValueError, match="finite"):
        decompose([[np.nan, 1.0]], [0.0])


# ---------------------------------------------------------------- optimal weights


def _random_psd(rng, L, rank=None):
    B = rng.normal(size=(L, rank or L)) * rng.uniform(0.1, 3, size=rank or L)
    return B @ B.T + rng.uniform(-1, 1) ** 2


@settings(deadline=None, max_examples=60)
@given(seed=st.integers(0, 2**32 - 1), L=st.integers(1, 10))
def test_optimal_weights_beat_equal_weights(seed, L):
    rng = np.random.default_rng(seed)
    M = _random_psd(rng, L)
    loss, w = optimal_weight_loss(M)
    assert w.sum() == pytest.approx(1.0, abs=1e-9)
    equal = M.sum() / L**2
    assert loss <= equal * (1 + 1e-9) + 1e-12
    # no other affine combination does better
    for _ in range(20):
        v = rng.normal(size=L)
        v = v - v.mean() + 1.0 / L
        assert loss <= v @ M @ v * (1 + 1e-9) + 1e-12
    # closed form 1 / (1^T M^-1 1) in 40-digit arithmetic
    mp.mp.dps = 40
    Minv = mp.matrix(M.tolist()) ** -1
    ref = 1 / sum(Minv[i, j] for i in range(L) for j in range(L))
    assert loss == pytest.approx(float(ref), rel=1e-7)


def test_optimal_weights_singular():
    loss, w = optimal_weight_loss([[1.0, 0.0], [0.0, 0.0]])
    assert loss == pytest.approx(0.0, abs=1e-14) and w == pytest.approx([0.0, 1.0])
    loss, w = optimal_weight_loss(np.full((3, 3), 2.0))  # identical layers: every weighting gives 2
    assert loss == pytest.approx(2.0)
    with pytest.raises(ValueError, match="symmetric"):
        optimal_weight_loss([[1.0, 0.5], [0.0, 1.0]])
    with pytest.raises(ValueError, match="semi-definite"):
        optimal_weight_loss([[1.0, 2.0], [2.0, 1.0]])


# ---------------------------------------------------------------- M1, M2, M4 by Monte Carlo


def _mc_loss(corr, sigma2, shared, n, rng):
    """Loss of the mean of correlated Gaussian layer errors plus a shared error; (mean, se)."""
    L = corr.shape[0]
    chol = np.linalg.cholesky(corr * sigma2 + 1e-15 * np.eye(L))
    noise = rng.standard_normal((n, L)) @ chol.T
    s = rng.normal(0, np.sqrt(shared), n)
    sq = (s + noise.mean(axis=1)) ** 2
    return sq.mean(), sq.std(ddof=1) / np.sqrt(n)


@pytest.mark.parametrize(
    "model,param,corr_fn",
    [
        ("iid", {}, lambda lag: (lag == 0).astype(float)),
        ("equicorrelated", {"rho": 0.3}, lambda lag: np.where(lag == 0, 1.0, 0.3)),
        ("equicorrelated", {"rho": -0.1}, lambda lag: np.where(lag == 0, 1.0, -0.1)),
        ("ar1", {"r": 0.7}, lambda lag: 0.7**lag),
        ("ar1", {"r": -0.5}, lambda lag: (-0.5) ** lag),
        ("powerlaw", {"g": 0.4}, lambda lag: (1.0 + lag) ** -0.4),
    ],
)
def test_clt_loss_matches_monte_carlo(model, param, corr_fn):
    rng = np.random.default_rng(7)
    depths = [1, 3, 8]
    sigma2, shared = 1.7, 0.4
    pred = clt_loss(model, depths, sigma2, shared, **param)
    for L, p in zip(depths, pred):
        lag = np.abs(np.subtract.outer(np.arange(L), np.arange(L)))
        mc, se = _mc_loss(corr_fn(lag), sigma2, shared, 200_000, rng)
        assert abs(mc - p) < 4 * se, (L, mc, p, se)


@pytest.mark.parametrize("g", [0.1, 0.5, 0.9, 1.5])
def test_powerlaw_matches_brute_force_double_sum(g):
    depths = [1, 2, 5, 17, 64, 300]
    pred = clt_loss("powerlaw", depths, sigma2=2.0, shared=0.25, g=g)
    for L, p in zip(depths, pred):
        lag = np.abs(np.subtract.outer(np.arange(L), np.arange(L)))
        total = math.fsum(((1.0 + lag) ** (-g)).ravel())  # the full L x L double sum
        assert p == pytest.approx(0.25 + 2.0 * total / L**2, rel=1e-12)


@pytest.mark.parametrize("g", [0.3, 0.5, 0.8])
def test_powerlaw_asymptote_is_approached(g):
    depths = np.array([10**2, 10**3, 10**4, 10**5, 10**6])
    exact = clt_loss("powerlaw", depths, sigma2=1.0, shared=0.0, g=g)
    rel = np.abs(exact / powerlaw_asymptote(depths, 1.0, g) - 1.0)
    assert np.all(np.diff(rel) < 0)
    # corrections are of relative order L^(g-1)
    assert np.all(rel < 3.0 * depths ** (g - 1.0))
    # the asymptote falls like L^-g exactly
    a = powerlaw_asymptote(np.array([10.0, 1000.0]), 1.0, g)
    assert np.log(a[0] / a[1]) / np.log(100.0) == pytest.approx(g, rel=1e-12)


def test_simple_closed_forms():
    assert clt_loss("iid", [1, 4], 2.0, 0.5).tolist() == [2.5, 1.0]
    np.testing.assert_allclose(clt_loss("equicorrelated", [1, 2, 1000], 1.0, 0.0, rho=1.0), [1.0, 1.0, 1.0])
    # r = 0 is the i.i.d. case
    np.testing.assert_allclose(clt_loss("ar1", [1, 2, 9], 1.0, 0.0, r=0.0), [1.0, 0.5, 1 / 9])
    assert isinstance(clt_loss("iid", 3, 1.0, 0.0), float)


@pytest.mark.parametrize(
    "args,kwargs,match",
    [
        (("equicorrelated", [1, 5], 1.0, 0.0), {"rho": -0.3}, "rho"),
        (("equicorrelated", [2], 1.0, 0.0), {"rho": 1.2}, "rho"),
        (("equicorrelated", [2], 1.0, 0.0), {}, "rho"),
        (("ar1", [2], 1.0, 0.0), {"r": 1.0}, "r="),
        (("ar1", [2], 1.0, 0.0), {"r": -1.0}, "r="),
        (("iid", [2], 1.0, 0.0), {"g": 0.5}, "g="),
        (("powerlaw", [2], 1.0, 0.0), {"g": -0.1}, "g="),
        (("nope", [2], 1.0, 0.0), {}, "model"),
        (("iid", [0, 2], 1.0, 0.0), {}, "depths"),
        (("iid", [2], -1.0, 0.0), {}, "sigma2"),
        (("iid", [2], 1.0, -0.1), {}, "shared"),
    ],
)
def test_clt_loss_rejects_bad_input(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        clt_loss(*args, **kwargs)


def test_asymptote_rejects_g_outside_unit_interval():
    for g in (0.0, 1.0, 1.5):
        with pytest.raises(ValueError, match="g="):
            powerlaw_asymptote(10, 1.0, g)


# ---------------------------------------------------------------- M3 unequal variances


def test_unequal_and_inverse_variance_monte_carlo():
    rng = np.random.default_rng(3)
    sig2 = np.array([0.2, 1.0, 4.0, 9.0])
    shared, n = 0.3, 400_000
    noise = rng.standard_normal((n, sig2.size)) * np.sqrt(sig2)
    s = rng.normal(0, np.sqrt(shared), n)
    for weights, fn in [
        (np.full(sig2.size, 1 / sig2.size), unequal_variance_loss),
        ((1 / sig2) / np.sum(1 / sig2), inverse_variance_loss),
    ]:
        sq = (s + noise @ weights) ** 2
        assert abs(sq.mean() - fn(shared, sig2)) < 4 * sq.std(ddof=1) / np.sqrt(n)
    assert inverse_variance_loss(shared, sig2) <= unequal_variance_loss(shared, sig2)
    with pytest.raises(ValueError, match="sigma2_l"):
        inverse_variance_loss(0.0, [1.0, 0.0])


def test_shrinking_noise_exponent_from_log_slope():
    for eta in (0.0, 0.5, 1.3):
        loss = shrinking_noise_loss([8, 64], shared=0.0, sigma2=2.0, eta=eta)
        # equals the unequal-variance loss with every variance sigma2 L^-eta
        assert loss[1] == pytest.approx(unequal_variance_loss(0.0, np.full(64, 2.0 * 64.0**-eta)), rel=1e-12)
        assert -np.log(loss[1] / loss[0]) / np.log(8.0) == pytest.approx(shrinking_noise_exponent(eta), rel=1e-12)
    with pytest.raises(ValueError, match="eta"):
        shrinking_noise_exponent(-0.5)


# ---------------------------------------------------------------- M5 heavy tails


@pytest.mark.parametrize("s", [0.6, 1.0, 1.5, 2.0])
def test_stable_sampler_characteristic_function(s):
    rng = np.random.default_rng(11)
    x = symmetric_stable_rvs(s, 400_000, rng)
    for t in (0.3, 1.0, 2.0):
        c = np.cos(t * x)
        se = c.std(ddof=1) / np.sqrt(c.size)
        assert abs(c.mean() - np.exp(-(t**s))) < 4 * se


def test_stable_median_exponent():
    depths = 2 ** np.arange(0, 9)
    res = stable_median_scaling(1.5, depths, n=20_000, seed=5)
    # tolerance set by the simulation's own error; the check has teeth (se well below 2 - 2/s)
    assert res.exponent_se < 0.02
    assert abs(res.exponent - (2 - 2 / 1.5)) < 4 * res.exponent_se
    assert res.theory == pytest.approx(2 / 3)
    # s = 1 (Cauchy): averaging does not help
    cauchy = stable_median_scaling(1.0, depths, n=20_000, seed=6)
    assert abs(cauchy.exponent) < 4 * cauchy.exponent_se


def test_stable_median_rejects_bad_input():
    for kwargs, match in [
        (dict(s=0.0), "s="),
        (dict(s=2.5), "s="),
        (dict(depths=[4, 4]), "depths"),
        (dict(n=10), "n="),
    ]:
        args = dict(s=1.5, depths=[1, 2], n=500, seed=0)
        args.update(kwargs)
        with pytest.raises(ValueError, match=match):
            stable_median_scaling(**args)


# ---------------------------------------------------------------- M6 Maurey


def test_maurey_bound_monte_carlo():
    """Draw L predictors theta x, theta ~ N(1, 0.5^2), around f_inf(x) = x; y = x + 0.2 eps."""
    rng = np.random.default_rng(9)
    n = 300_000
    R_inf, var = 0.04, 0.25
    for L in (1, 4, 16):
        x = rng.standard_normal(n)
        y = x + 0.2 * rng.standard_normal(n)
        theta_bar = 1.0 + 0.5 * rng.standard_normal(n) / np.sqrt(L)  # mean of L i.i.d. thetas
        sq = (theta_bar * x - y) ** 2
        se = sq.std(ddof=1) / np.sqrt(n)
        assert abs(sq.mean() - maurey_bound(R_inf, var, L)) < 4 * se
    with pytest.raises(ValueError, match="var"):
        maurey_bound(0.0, -1.0, 3)


def test_identity_residual_is_rounding_at_the_scale_of_the_layer_losses():
    # two layers whose large errors cancel in their mean (A_L / R_L ~ 1e14): the sums behind A_L and
    # C_L round at A_L's scale, so the residual relative to R_L alone would be ~1e-2 of pure rounding
    from depthscale.theory.clt import decompose, identity_residual

    rng = np.random.default_rng(0)
    s, u = rng.standard_normal(4096), rng.standard_normal(4096)
    y = rng.standard_normal(4096)
    f = np.stack([y + s + 1e7 * u, y + s - 1e7 * u], axis=1)
    dec = decompose(f, y)
    assert dec.A_L / dec.R_L > 1e13
    assert dec.identity_residual < 1e-12
    assert dec.identity_residual == identity_residual(dec.R_L, dec.A_L, dec.C_L, 2)
    # a real violation still shows: R_L off by 1 % of A_L
    assert identity_residual(dec.R_L + 0.01 * dec.A_L, dec.A_L, dec.C_L, 2) > 1e-3
