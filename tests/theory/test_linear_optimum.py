"""Tests of depthscale.theory.linear_optimum against independent computations."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import ortho_group

from depthscale.theory.free_poly import free_discrete
from depthscale.theory.linear_optimum import linear_optimum, optimum_memory_bytes
from depthscale.theory.spectra import PowerLawSpectrum


def test_population_limit_is_the_exact_discrete_free_optimum():
    # P -> infinity: S -> Sigma, and the loss becomes sum_k lam_k omega_k (1 - p(lam_k))^2. The
    # finite-P excess is O(1/P), well below the Monte Carlo error at P = 10^6.
    exact = free_discrete(PowerLawSpectrum(1.0, 1.0, 4), [1, 2])
    res = linear_optimum(1.0, 1.0, d=4, P=10**6, depths=[1, 2], contexts=16, seed=1, chunk=1)
    assert np.all(res.se < 2e-3 * exact)
    assert np.all(np.abs(res.loss - exact) < 4 * res.se)


def _one_step(lam, omega, P):
    """L = 1, fresh query: min_a E tr(Omega (I - a S) Sigma (I - a S)) from the Wishart moment
    E[S Sigma S] = (1 + 1/P) Sigma^3 + tr(Sigma^2) Sigma / P (eigenbasis)."""
    t1 = np.sum(omega * lam)
    t2 = np.sum(omega * lam**2)
    t3 = (1 + 1 / P) * np.sum(omega * lam**3) + np.sum(lam**2) * t1 / P
    return t1 - t2**2 / t3


@pytest.mark.parametrize("a,b,d,P", [(1.0, 1.0, 8, 32), (2.0, 0.5, 16, 16), (0.0, 0.0, 6, 40)])
def test_one_layer_matches_the_wishart_closed_form(a, b, d, P):
    k = np.arange(1, d + 1.0)
    exact = _one_step(k**-a, k**-b, P)
    res = linear_optimum(a, b, d, P, [1], contexts=3000, seed=3)
    assert abs(res.loss[0] - exact) < 4 * res.se[0]
    assert res.se[0] < 0.01 * exact


def _brute_force(a, b, d, P, L, task, n, seed):
    """Direct least squares over monomials: explicit Haar rotations, teachers, labels and queries,
    features beta^T S^r x_test, fitted on n samples and evaluated on n others (loss, se)."""
    rng = np.random.default_rng(seed)
    k = np.arange(1, d + 1.0)
    lam, omega = k**-a, k**-b

    def draw(m):
        O = ortho_group.rvs(d, size=m, random_state=rng)
        Sig_half = O * np.sqrt(lam)  # O diag(sqrt lam)
        X = rng.standard_normal((m, P, d)) @ np.swapaxes(Sig_half, 1, 2)
        beta = np.einsum("mij,mj->mi", O * np.sqrt(omega), rng.standard_normal((m, d)))
        if task == "easy-fresh":
            xq = np.einsum("mij,mj->mi", Sig_half, rng.standard_normal((m, d)))
        else:
            xq = X[np.arange(m), rng.integers(0, P, m)]
        S = np.swapaxes(X, 1, 2) @ X / P
        feats, v = [], xq
        for _ in range(L):
            v = np.einsum("mij,mj->mi", S, v)
            feats.append(np.einsum("mi,mi->m", beta, v))
        return np.stack(feats, axis=1), np.einsum("mi,mi->m", beta, xq)

    F, y = draw(n)
    coef = np.linalg.lstsq(F, y, rcond=None)[0]
    Fe, ye = draw(n)
    sq = (Fe @ coef - ye) ** 2
    return sq.mean(), sq.std(ddof=1) / np.sqrt(n)


@pytest.mark.parametrize("task", ["easy-fresh", "easy-exact"])
def test_matches_brute_force_least_squares(task):
    a, b, d, P = 1.0, 0.5, 4, 12
    res = linear_optimum(a, b, d, P, [1, 2, 3], contexts=4000, seed=5, task=task)
    for i, L in enumerate([1, 2, 3]):
        bf, bf_se = _brute_force(a, b, d, P, L, task, 200_000, seed=10 + L)
        assert abs(res.loss[i] - bf) < 4 * np.hypot(res.se[i], bf_se), (L, res.loss[i], bf, bf_se)


def test_deep_polynomials_stay_stable():
    # degree 48 on d = 16: monomials would be hopeless; the losses must keep falling (within errors)
    res = linear_optimum(1.0, 2.0, 16, 64, [8, 16, 48], contexts=1500, seed=2)
    assert np.all(np.isfinite(res.loss)) and np.all(res.loss > 0)
    assert res.loss[1] < res.loss[0] and res.loss[2] < res.loss[1] + 2 * res.se[2]
    assert np.all(res.in_sample <= res.loss + 2 * res.se)


@pytest.mark.slow
def test_standard_error_matches_the_spread_over_seeds():
    # spread over independent seeds (fitting and evaluation contexts both redrawn) against the se
    losses, ses = [], []
    for seed in range(30):
        r = linear_optimum(1.5, 1.0, 8, 32, [2, 6], contexts=300, seed=100 + seed)
        losses.append(r.loss)
        ses.append(r.se)
    ratio = np.std(losses, axis=0, ddof=1) / np.sqrt(np.mean(np.square(ses), axis=0))
    assert np.all((ratio > 0.6) & (ratio < 1.5)), ratio


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"depths": [0]}, "depths=0"),
        ({"depths": [65]}, "depths=65"),
        ({"depths": []}, "depths"),
        ({"contexts": 1}, "contexts=1"),
        ({"task": "topk"}, "task='topk'"),
        ({"d": 0}, "d=0"),
        ({"P": 0}, "P=0"),
        ({"a": -1}, "a=-1"),
    ],
)
def test_bad_input_names_the_parameter(kwargs, match):
    args = {"a": 1.0, "b": 1.0, "d": 4, "P": 8, "depths": [1], "contexts": 4, "seed": 0}
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        linear_optimum(**args)


def test_memory_is_checked_before_drawing():
    assert optimum_memory_bytes(100_000, 1_000_000, 64) > 2**40
    with pytest.raises(ValueError, match="memory"):
        linear_optimum(1.0, 1.0, d=100_000, P=1_000_000, depths=[1], contexts=4, seed=0)


def _jacobi_loss(a, b, d, P, L, edge, n, seed):
    """E tr(Omega R Sigma R) for the fixed residual R = prod_l (I - gamma_l S / L), gamma_l the Jacobi
    steps of the continuum optimum on [0, edge], by explicit matrix products (mean, se)."""
    from depthscale.theory.free_poly import jacobi_steps

    k = np.arange(1, d + 1.0)
    lam, omega = k**-a, k**-b
    gamma = jacobi_steps(PowerLawSpectrum(a, b, d).zeta, L, lam1=edge).gamma
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, P, d)) * np.sqrt(lam)
    S = np.swapaxes(X, 1, 2) @ X / P
    R = np.broadcast_to(np.eye(d), S.shape)
    for g in gamma:
        R = R - (g / L) * R @ S
    vals = np.einsum("nij,i,nij,j->n", R, omega, R, lam)
    return vals.mean(), vals.std(ddof=1) / np.sqrt(n)


def test_deep_optimum_is_below_a_known_good_polynomial():
    # the Jacobi residual stretched over S's spectrum is one polynomial of the class: the optimum,
    # even estimated on held-out contexts, cannot be above it (a basis orthonormal for the pooled
    # diagonal measure put it 2 times above at L = 32)
    jac, jac_se = _jacobi_loss(2.0, 1.0, 32, 256, 32, edge=1.4, n=2000, seed=9)
    res = linear_optimum(2.0, 1.0, 32, 256, [32], contexts=2000, seed=4)
    assert res.loss[0] < jac + 2 * np.hypot(jac_se, res.se[0]), (res.loss[0], jac)
    assert res.in_sample[0] < jac


def test_jacobi_start_is_the_jacobi_residual_stretched_past_the_pilot_spectrum():
    from depthscale.theory.free_poly import jacobi_residual
    from depthscale.theory.linear_optimum import START_MARGIN, jacobi_start

    d, P, L = 16, 64, 12
    js = jacobi_start(1.5, 1.0, d, P, L, seed=2)
    assert js.zeta == pytest.approx((1.5 + 1.0 - 1.0) / 1.5)
    # the steps realise the residual (every root used once, in some order)
    lam = np.linspace(0.0, js.lam1, 301)
    np.testing.assert_allclose(js.residual(lam), jacobi_residual(js.zeta, L, lam, js.lam1), atol=1e-10)
    np.testing.assert_allclose(js.gamma, L / js.rho)
    # the edge: START_MARGIN x the largest top eigenvalue of 256 contexts; an independent draw of
    # 256 contexts has its largest top eigenvalue within the spread of such maxima (a few %)
    rng = np.random.default_rng(11)
    sq = np.sqrt(np.arange(1, d + 1.0) ** -1.5)
    tops = [np.linalg.eigvalsh((X := rng.standard_normal((P, d)) * sq).T @ X / P)[-1] for _ in range(256)]
    assert js.lam1 / START_MARGIN == pytest.approx(max(tops), rel=0.15)


@pytest.mark.parametrize(
    "kw, name", [({"a": 0.0}, "a="), ({"a": 0.5, "b": 0.5}, "a \\+ b > 1"), ({"L": 65}, "L="), ({"seed": -1}, "seed=")]
)
def test_jacobi_start_refuses_bad_input(kw, name):
    from depthscale.theory.linear_optimum import jacobi_start

    args = {"a": 2.0, "b": 1.0, "d": 8, "P": 32, "L": 4} | kw
    with pytest.raises(ValueError, match=name):
        jacobi_start(**args)


def test_equal_step_matches_brute_force_and_bounds_the_optimum():
    # independent: contexts drawn here in the input basis, the loss tr(Omega R Sigma R) with
    # R = (I - gamma S / L)^L, minimised over gamma by a bounded scalar search
    from scipy.optimize import minimize_scalar

    d, P, n = 4, 16, 3000
    lam = np.arange(1, d + 1.0) ** -1.0
    omega = np.arange(1, d + 1.0) ** -0.5
    rng = np.random.default_rng(5)
    S = [(X := rng.standard_normal((P, d)) * np.sqrt(lam)).T @ X / P for _ in range(n)]

    def loss(gamma, L):
        out = 0.0
        for s in S:
            R = np.linalg.matrix_power(np.eye(d) - gamma * s / L, L)
            out += np.trace(np.diag(omega) @ R @ np.diag(lam) @ R)
        return out / n

    res = linear_optimum(1.0, 0.5, d, P, [1, 2, 3], contexts=3000, seed=1)
    for i, L in enumerate((1, 2, 3)):
        brute = minimize_scalar(lambda g: loss(g, L), bounds=(0.05, 3.0 * L), method="bounded").fun
        assert res.equal_step[i] == pytest.approx(brute, abs=4 * res.equal_step_se[i] + 0.01 * brute)
        # the best polynomial can only do better than equal steps (up to the estimates' errors)
        assert res.loss[i] <= res.equal_step[i] + 3 * np.hypot(res.se[i], res.equal_step_se[i])
    # one layer: equal steps are the whole class
    assert res.equal_step[0] == pytest.approx(res.loss[0], abs=3 * np.hypot(res.se[0], res.equal_step_se[0]))
