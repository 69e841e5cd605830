import mpmath as mp
import numpy as np
import pytest
from scipy.special import eval_legendre, roots_jacobi

from depthscale.theory.equal_step import gamma_opt
from depthscale.theory.free_poly import (
    check_jacobi_steps,
    free_asymptote,
    free_continuum,
    free_discrete,
    jacobi_residual,
    jacobi_steps,
)
from depthscale.theory.spectra import PowerLawSpectrum


def continuum_rule(zeta, n=80):
    """Gauss rule for x^(zeta-1) dx on (0, 1): Gauss-Jacobi in t = 2x - 1, weight (1+t)^(zeta-1)."""
    t, w = roots_jacobi(n, 0.0, zeta - 1.0)
    return (1 + t) / 2, w / 2**zeta


def quadrature_optimum(zeta, L):
    """Least squares on the quadrature: r = sum_i c_i P_i(1 - 2x), r(0) = sum_i c_i = 1 (P_i(1) = 1)."""
    x, w = continuum_rule(zeta)
    B = np.stack([eval_legendre(i, 1 - 2 * x) for i in range(L + 1)], axis=1)
    G = B.T @ (w[:, None] * B)
    u = np.linalg.solve(G, np.ones(L + 1))
    value = 1.0 / u.sum()
    coef = u * value
    return value, lambda lam: np.stack([eval_legendre(i, 1 - 2 * np.asarray(lam)) for i in range(L + 1)], -1) @ coef


@pytest.mark.parametrize("a,b", [(2.0, 0.5), (2.0, 1.0), (1.0, 2.0), (0.5, 2.0), (1.5, 2.0), (4.0, 0.5)])
@pytest.mark.parametrize("L", [0, 1, 2, 5, 9, 14])
def test_free_continuum_equals_quadrature_minimum(a, b, L):
    spec = PowerLawSpectrum(a, b, 3, c_lambda=1.4, c_omega=0.8)
    value, _ = quadrature_optimum(spec.zeta, L)
    assert free_continuum(spec, L) == pytest.approx(spec.prefactor * value, rel=1e-8)


@pytest.mark.parametrize("zeta", [0.6, 1.0, 2.5])
def test_jacobi_residual_is_the_quadrature_minimiser(zeta):
    L = 7
    _, r = quadrature_optimum(zeta, L)
    lam = np.linspace(0, 1, 41)
    np.testing.assert_allclose(jacobi_residual(zeta, L, lam), r(lam), atol=1e-8)
    # in lambda units the same polynomial with lam1 scaling
    np.testing.assert_allclose(jacobi_residual(zeta, L, 3 * lam, 3.0), r(lam), atol=1e-8)
    assert jacobi_residual(zeta, L, 0.0) == pytest.approx(1.0, rel=1e-14)


@pytest.mark.parametrize("zeta,L", [(0.75, 1), (1.0, 5), (2.0, 16), (3.0, 40), (1.5, 100)])
def test_jacobi_steps_realise_the_free_optimum(zeta, L):
    lam1 = 2.0
    js = jacobi_steps(zeta, L, lam1)
    assert js.rho.shape == (L,) and np.all((js.rho > 0) & (js.rho < lam1))
    np.testing.assert_allclose(js.gamma, L / js.rho, rtol=1e-15)
    assert check_jacobi_steps(zeta, L, lam1) < 1e-9
    # the product of the layer factors, integrated on the continuum measure, attains the closed form
    x, w = continuum_rule(zeta, n=L + 20)
    loss = np.sum(w * js.residual(lam1 * x) ** 2)
    a = 1.0
    spec = PowerLawSpectrum(a, zeta, 3)  # zeta = (a + b - 1)/a = b for a = 1
    assert loss == pytest.approx(free_continuum(spec, L), rel=1e-8)


def test_free_continuum_large_depth_no_overflow_and_asymptote():
    spec = PowerLawSpectrum(2.0, 2.0, 3)
    z = spec.zeta
    mp.mp.dps = 40
    for L in (10**3, 10**6):
        ref = (
            spec.prefactor * mp.gamma(z) * mp.gamma(z + 1) * mp.exp(2 * mp.loggamma(L + 1) - 2 * mp.loggamma(L + z + 1))
        )
        assert free_continuum(spec, L) == pytest.approx(float(ref), rel=1e-9)
    ratio = free_continuum(spec, 10**6) / free_asymptote(spec, 10**6)
    assert ratio == pytest.approx(1.0, abs=1e-5)
    assert free_asymptote(spec, 10.0) == pytest.approx(0.5 * z * float(mp.gamma(z)) ** 2 * 10.0 ** (-2 * z), rel=1e-13)


def normal_equations_minimum(a, b, d, L, dps=60):
    """min_c sum_k w_k (1 + sum_i c_i x_k^i)^2 from mpmath Hankel normal equations (small problems only)."""
    mp.mp.dps = dps
    x = [mp.mpf(k) ** -a for k in range(1, d + 1)]
    w = [mp.mpf(k) ** -(a + b) for k in range(1, d + 1)]
    mom = [mp.fsum(wk * xk**i for wk, xk in zip(w, x)) for i in range(2 * L + 1)]
    if L == 0:
        return mom[0]
    G = mp.matrix(L, L)
    g = mp.matrix(L, 1)
    for i in range(L):
        g[i] = mom[i + 1]
        for j in range(L):
            G[i, j] = mom[i + j + 2]
    return mom[0] - (g.T * mp.lu_solve(G, g))[0]


@pytest.mark.parametrize("a,b,d", [(2.0, 1.0, 12), (0.5, 0.5, 12), (1.0, 0.25, 10), (3.0, 0.0, 8), (1.0, 2.0, 11)])
def test_free_discrete_matches_high_precision_normal_equations(a, b, d):
    spec = PowerLawSpectrum(a, b, d)
    got = free_discrete(spec, list(range(d)))
    ref = [float(normal_equations_minimum(a, b, d, L, dps=100)) for L in range(d)]
    np.testing.assert_allclose(got, ref, rtol=1e-10)
    # degree >= d: a residual with a root on every eigenvalue exists
    assert np.all(free_discrete(spec, [d, d + 5]) == 0.0)


def test_free_discrete_head_tail_reduction_is_exact():
    """Force the Gauss-rule compression of the tail (head = 32 of d = 1200 modes)."""
    spec = PowerLawSpectrum(2.0, 1.0, 1200, c_lambda=2.0, c_omega=0.5)
    Ls = list(range(0, 9))
    got = free_discrete(spec, Ls, head=32)
    ref = [float(normal_equations_minimum(2.0, 1.0, 1200, L, dps=60)) for L in Ls]
    np.testing.assert_allclose(got, np.array(ref) * 2.0 * 0.5, rtol=1e-9)


def test_free_discrete_flat_spectrum_and_single_mode():
    flat = free_discrete(PowerLawSpectrum(0.0, 0.0, 7), [0, 1, 4])
    assert flat[0] == pytest.approx(7.0, rel=1e-14) and flat[1] == 0.0 and flat[2] == 0.0
    assert free_discrete(PowerLawSpectrum(1.0, 1.0, 1), 0) == pytest.approx(1.0)
    assert free_discrete(PowerLawSpectrum(1.0, 1.0, 1), 1) == 0.0


@pytest.mark.parametrize("a,b", [(2.0, 1.0), (1.0, 2.0)])
def test_free_discrete_at_one_layer_is_the_optimal_equal_step(a, b):
    """L = 1: both optimise one step; Lanczos and a scalar line search are independent algorithms."""
    spec = PowerLawSpectrum(a, b, 50_000)
    _, r_opt = gamma_opt(spec, 1)
    assert free_discrete(spec, 1) == pytest.approx(r_opt, rel=1e-9)
    # and the free optimum never exceeds the constrained one
    Ls = [2, 8, 32]
    assert np.all(free_discrete(spec, Ls) <= gamma_opt(spec, Ls)[1])


def test_free_discrete_large_d_is_monotone_and_below_continuum():
    spec = PowerLawSpectrum(2.0, 1.0, 10**6)
    vals = free_discrete(spec, [8, 32, 128])
    assert np.all(np.diff(vals) < 0) and np.all(vals > 0)
    # the discrete optimum falls faster than the continuum 2 zeta law (docs/theory/free.md)
    assert vals[2] < free_continuum(spec, 128)


def test_bad_arguments():
    with pytest.raises(ValueError, match="^zeta="):
        jacobi_residual(0.0, 3, 0.5)
    with pytest.raises(ValueError, match="^L="):
        jacobi_steps(1.0, 0)
    with pytest.raises(ValueError, match="^L="):
        free_discrete(PowerLawSpectrum(1, 1, 4), [1.5])
    with pytest.raises(ValueError, match="need a > 0"):
        free_continuum(PowerLawSpectrum(0.5, 0.5, 4), 3)


@pytest.mark.parametrize("a,b", [(2.0, 1.0), (1.0, 0.25), (3.0, 0.0), (1.5, 2.0)])
def test_free_discrete_tail_compression_matches_the_full_spectrum(a, b):
    """d = 10^5, depths to 64: the compressed tail (block Gauss rules) against Lanczos on all d modes."""
    from depthscale.theory.free_poly import _min_curve

    spec = PowerLawSpectrum(a, b, 100_000, c_lambda=1.5, c_omega=0.8)
    Ls = np.arange(0, 65)
    w = spec.weights
    full = w.sum() * _min_curve(spec.lam / spec.lam1, w / w.sum(), 64, 4096)
    np.testing.assert_allclose(free_discrete(spec, Ls), full, rtol=1e-10)


def test_leja_order_is_the_greedy_farthest_point_order():
    # brute force: each next root maximises the product of distances to the roots already taken
    from depthscale.theory.free_poly import leja_order

    rho = np.random.default_rng(3).uniform(0.01, 2.0, size=9)
    order = leja_order(rho)
    assert sorted(order.tolist()) == list(range(9)) and order[0] == np.argmax(rho)
    for m in range(1, 9):
        rest = [i for i in range(9) if i not in order[:m]]
        score = {i: np.prod([abs(rho[i] - rho[j]) for j in order[:m]]) for i in rest}
        assert score[order[m]] == max(score.values())


def test_leja_order_keeps_the_layers_partial_products_moderate():
    # a perturbation entering after layer m is multiplied by the head product at one eigenvalue and
    # the tail product at another: their largest product over [0, lam1] and over m
    from depthscale.theory.free_poly import leja_order

    x = np.linspace(0.0, 1.0, 4001)

    def amplification(rho):
        F = 1.0 - x[:, None] / rho[None, :]
        return max(np.abs(F[:, :m].prod(1)).max() * np.abs(F[:, m:].prod(1)).max() for m in range(rho.size + 1))

    for L, bound in ((16, 50.0), (32, 200.0)):
        rho = jacobi_steps(1.0, L, 1.0).rho  # decreasing
        assert amplification(rho[leja_order(rho)]) < bound
        assert amplification(rho) > 1e4 * bound and amplification(rho[::-1]) > 1e4 * bound


@pytest.mark.parametrize("bad", [[], [[1.0, 2.0]], [1.0, np.nan]])
def test_leja_order_refuses_bad_roots(bad):
    from depthscale.theory.free_poly import leja_order

    with pytest.raises(ValueError, match="rho="):
        leja_order(bad)
