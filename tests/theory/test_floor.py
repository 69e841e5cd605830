"""Tests of depthscale.theory.floor against independent computations."""

from __future__ import annotations

import mpmath as mp
import numpy as np
import pytest
from scipy import stats

from depthscale.theory.floor import (
    feature_gram,
    floor_leading_order,
    gamma_pk,
    linear_floor,
    sample_context_floor_moments,
    sample_floor_moments,
)

# ---------------------------------------------------------------- gamma_pk


def _gamma_mpmath(P, k, breaks):
    """Mean of the k largest of P normals by summing the order-statistic densities (mpmath)."""
    mp.mp.dps = 30
    total = mp.mpf(0)
    for j in range(1, k + 1):  # j-th largest
        logc = mp.loggamma(P + 1) - mp.loggamma(j) - mp.loggamma(P - j + 1)

        def dens(x, j=j, logc=logc):
            cdf = mp.ncdf(x)
            return x * mp.exp(logc + (j - 1) * mp.log(1 - cdf) + (P - j) * mp.log(cdf) - x * x / 2) / mp.sqrt(2 * mp.pi)

        total += mp.quad(dens, breaks)
    return float(total / k)


@pytest.mark.parametrize(
    "P,k,breaks",
    [
        (2, 1, [-12, 0, 12]),
        (3, 2, [-12, 0, 12]),
        (10, 3, [-12, 0, 2, 12]),
        (1024, 2, [-6, 1, 2.5, 3, 3.5, 4, 6, 12]),
        (10**6, 2, [0, 3, 4, 4.5, 5, 5.5, 6, 8, 12]),
        (10**6, 1, [0, 3, 4, 4.5, 5, 5.5, 6, 8, 12]),
    ],
)
def test_gamma_pk_matches_order_statistic_quadrature(P, k, breaks):
    assert gamma_pk(P, k) == pytest.approx(_gamma_mpmath(P, k, breaks), rel=1e-12)


def test_gamma_pk_nearly_all():
    # sum of the top P-1 = sum of all - min, and E sum of all = 0, E min = -E max
    assert gamma_pk(50, 49) == pytest.approx(_gamma_mpmath(50, 1, [-12, 0, 2, 12]) / 49, rel=1e-12)


def test_gamma_pk_closed_forms_and_broadcasting():
    # E max of 2 and of 3 standard normals: 1/sqrt(pi) and 3/(2 sqrt(pi))
    out = gamma_pk(np.array([2, 3]), 1)
    np.testing.assert_allclose(out, [1 / np.sqrt(np.pi), 1.5 / np.sqrt(np.pi)], rtol=1e-12)
    assert gamma_pk(7, 7) == 0.0  # mean of all
    assert gamma_pk([[8], [16]], [1, 2, 4]).shape == (2, 3)


def test_gamma_pk_monte_carlo_large_k():
    rng = np.random.default_rng(5)
    Z = rng.standard_normal((4000, 300))
    top = -np.sort(-Z, axis=1)[:, :40].mean(axis=1)
    se = top.std(ddof=1) / np.sqrt(top.size)
    assert abs(gamma_pk(300, 40) - top.mean()) < 4 * se


@pytest.mark.parametrize("P,k", [(4, 5), (4, 0), (0, 1), (2.5, 1), ("3", 1)])
def test_gamma_pk_rejects_bad_input(P, k):
    with pytest.raises(ValueError, match="must be"):
        gamma_pk(P, k)


# ---------------------------------------------------------------- linear floor: brute force


def _brute_force_floor(a, b, k, d, P, degree, n, seed, covariance="population"):
    """Rotated-basis Monte Carlo: Haar O, explicit beta, Cholesky inputs, full least squares.

    Minimises the sample mean of (beta^T t - sum_r c_r beta^T M^r q)^2 over c, with M = Sigma or
    (``covariance="context"``) the explicit matrix X^T X / P of each context; returns the minimum
    and its standard error (the O(degree/n) effect of fitting c is far below it).
    """
    rng = np.random.default_rng(seed)
    lam = np.arange(1, d + 1, dtype=float) ** (-a)
    om = np.arange(1, d + 1, dtype=float) ** (-b)
    Q, R = np.linalg.qr(rng.standard_normal((n, d, d)))
    O = Q * np.sign(np.diagonal(R, axis1=1, axis2=2))[:, None, :]
    Sigma = (O * lam) @ np.swapaxes(O, 1, 2)
    Omega = (O * om) @ np.swapaxes(O, 1, 2)
    Ls = np.linalg.cholesky(Sigma)
    Lo = np.linalg.cholesky(Omega)
    X = np.einsum("nij,npj->npi", Ls, rng.standard_normal((n, P, d)))
    q = np.einsum("nij,nj->ni", Ls, rng.standard_normal((n, d)))
    beta = np.einsum("nij,nj->ni", Lo, rng.standard_normal((n, d)))
    cos = np.einsum("npi,ni->np", X, q) / np.linalg.norm(X, axis=2) / np.linalg.norm(q, axis=1)[:, None]
    sel = np.argsort(-cos, axis=1)[:, :k]
    t = X[np.arange(n)[:, None], sel].mean(axis=1)
    target = np.einsum("ni,ni->n", beta, t)
    M = Sigma if covariance == "population" else np.einsum("npi,npj->nij", X, X) / P
    feats = np.empty((n, degree))
    for r in range(degree):
        v = np.einsum("nij,nj->ni", np.linalg.matrix_power(M, r + 1), q)
        feats[:, r] = np.einsum("ni,ni->n", beta, v)
    coef = np.linalg.lstsq(feats, target, rcond=None)[0]
    res2 = (target - feats @ coef) ** 2
    return res2.mean(), res2.std(ddof=1) / np.sqrt(n)


@pytest.mark.parametrize("covariance", ["population", "context"])
@pytest.mark.parametrize("a,b,k,degree", [(0.5, 0.5, 2, 2), (1.0, 0.25, 3, 3)])
def test_linear_floor_matches_rotated_brute_force(a, b, k, degree, covariance):
    d, P = 8, 32
    bf, bf_se = _brute_force_floor(a, b, k, d, P, degree, n=60_000, seed=11, covariance=covariance)
    res = linear_floor(a, b, k, d, P, contexts=1500, seed=3, degree=degree, covariance=covariance)
    combined = np.hypot(bf_se, res.stderr)
    assert abs(res.floor - bf) < 4 * combined, (res.floor, bf, combined)
    assert combined < 0.03 * bf  # the comparison has teeth


def test_feature_gram_is_exact_trace():
    rng = np.random.default_rng(0)
    lam, om = rng.uniform(0.1, 1, 5), rng.uniform(0.1, 1, 5)
    O = np.linalg.qr(rng.standard_normal((5, 5)))[0]
    S, W = (O * lam) @ O.T, (O * om) @ O.T
    G = feature_gram(lam, om, 3)
    for r in range(1, 4):
        for s in range(1, 4):
            assert G[r - 1, s - 1] == pytest.approx(np.trace(W @ np.linalg.matrix_power(S, r + s + 1)), rel=1e-12)


@pytest.mark.parametrize("covariance", ["population", "context"])
def test_linear_floor_stderr_is_honest(covariance):
    """Spread of independent replicate estimates matches the reported jackknife error."""
    reps = 30
    vals, ses = [], []
    for seed in range(reps):
        r = linear_floor(1.0, 1.0, 2, 8, 32, contexts=150, seed=100 + seed, degree=3, queries=4, covariance=covariance)
        vals.append(r.floor)
        ses.append(r.stderr)
    ratio2 = np.var(vals, ddof=1) / np.mean(np.square(ses))
    lo, hi = stats.chi2.ppf([0.001, 0.999], reps - 1) / (reps - 1)
    assert lo < ratio2 < hi, ratio2


def test_linear_floor_is_deterministic_and_chunk_independent():
    kw = dict(degree=2, queries=3)
    m1 = sample_floor_moments(0.5, 1.0, 2, 8, 32, 37, seed=4, chunk=5, **kw)
    m2 = sample_floor_moments(0.5, 1.0, 2, 8, 32, 37, seed=4, chunk=16, **kw)
    for key in m1:
        np.testing.assert_array_equal(m1[key], m2[key])
    r1 = linear_floor(0.5, 1.0, 2, 8, 32, 37, seed=4)
    r2 = linear_floor(0.5, 1.0, 2, 8, 32, 37, seed=4)
    assert r1.floor == r2.floor and r1.stderr == r2.stderr


def test_context_floor_when_the_target_is_the_context_mean():
    # k = P: t is the mean of the context, uncorrelated with S^r q (odd in q), so the floor is
    # E[t^T Omega t] = tr(Omega Sigma) / P exactly
    d, P = 6, 12
    r = linear_floor(0.5, 1.0, P, d, P, contexts=4000, seed=5, degree=2, covariance="context")
    exact = np.sum(np.arange(1, d + 1) ** -1.5) / P
    assert abs(r.floor - exact) < 4 * r.stderr and r.stderr < 0.03 * exact


def test_context_gram_matches_the_wishart_moment():
    # E[(S q)^T Omega (S q)] = (1 + 1/P) sum lam^3 omega + tr(Sigma^2) tr(Omega Sigma) / P for
    # S = X^T X / P of Gaussian inputs; the sampler reports it for S / s (its documented scale)
    d, P, n = 6, 10, 20_000
    lam, om = np.arange(1, d + 1) ** -0.7, np.arange(1, d + 1) ** -0.4
    g00 = sample_context_floor_moments(0.7, 0.4, 2, d, P, contexts=n, seed=8, degree=2, queries=8, chunk=500)["G"][
        :, 0, 0
    ]
    s = (np.sqrt(lam[0]) + np.sqrt(lam.sum() / P)) ** 2
    exact = ((1 + 1 / P) * np.sum(lam**3 * om) + np.sum(lam**2) * np.sum(om * lam) / P) / s**2
    assert abs(g00.mean() - exact) < 4 * g00.std(ddof=1) / np.sqrt(n) < 0.05 * exact


def test_context_floor_keeps_high_powers_finite():
    # |S| is about d at P = 1: unscaled, S^64 overflows in G (400^128 > 1e308)
    r = linear_floor(0.0, 0.0, 1, 400, 1, contexts=3, seed=0, degree=64, covariance="context")
    assert np.isfinite(r.floor) and np.isfinite(r.stderr)


def test_context_floor_is_below_population_floor_at_small_P():
    # S q weights each token by its similarity to the query: at P = 32 that beats Sigma q clearly
    pop = linear_floor(0.0, 0.0, 2, 8, 32, contexts=800, seed=6, degree=2)
    ctx = linear_floor(0.0, 0.0, 2, 8, 32, contexts=800, seed=6, degree=2, covariance="context")
    assert ctx.floor < pop.floor - 4 * np.hypot(ctx.stderr, pop.stderr)


def test_flat_spectrum_rank_deficient_gram():
    # a = 0: all powers of Sigma coincide, G has rank one; the floor must not depend on degree.
    r1 = linear_floor(0.0, 0.0, 2, 16, 64, contexts=400, seed=2, degree=1)
    r4 = linear_floor(0.0, 0.0, 2, 16, 64, contexts=400, seed=2, degree=4)
    assert r4.floor == pytest.approx(r1.floor, rel=1e-9)


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(a=-1),
        dict(k=0),
        dict(k=40),
        dict(contexts=1),
        dict(degree=0),
        dict(queries=0),
        dict(seed=-3),
        dict(rcond=1.5),
        dict(c_lambda=0),
        dict(d=0),
        dict(covariance="sample"),
        dict(covariance="context", rcond=-1),
    ],
)
def test_linear_floor_rejects_bad_input(kwargs):
    args = dict(a=0.5, b=0.5, k=2, d=8, P=32, contexts=10, seed=0)
    args.update(kwargs)
    name = [k for k in kwargs if k != "covariance"][0] if len(kwargs) > 1 else next(iter(kwargs))
    with pytest.raises(ValueError, match=f"^{name}=.*must be"):
        linear_floor(**args)


# ---------------------------------------------------------------- paper values and leading order


def test_leading_order_flat_spectrum_matches_paper():
    # the paper's value (docs/sources.md): (a, b) = (0, 0), top-2, d = 128, P = 1024 -> 59.37
    lo = floor_leading_order(0, 0, 2, 128, 1024)
    assert lo.floor == pytest.approx(59.37, rel=0.01)
    assert lo.d_eff == pytest.approx(128)
    assert lo.T - lo.floor == pytest.approx(lo.explained)


@pytest.mark.slow
@pytest.mark.parametrize(
    "a,b,ref", [(0, 0, 59.37), (0.25, 0.25, 9.700), (0.5, 0.5, 2.272), (1, 0.25, 1.225), (1, 1, 0.498)]
)
def test_linear_floor_reproduces_paper(a, b, ref):
    res = linear_floor(a, b, 2, 128, 1024, contexts=3000, seed=2026)
    assert res.stderr < 0.01 * ref
    assert res.floor == pytest.approx(ref, rel=0.03)
