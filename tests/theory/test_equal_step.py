import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.integrate import quad
from scipy.special import gamma as gamma_fn

from depthscale.theory.equal_step import beta_form, gamma_asymptote, gamma_opt, local_slope, r_con
from depthscale.theory.spectra import PowerLawSpectrum

PAIRS = [(2.0, 0.5), (2.0, 1.0), (2.0, 2.0), (1.0, 2.0), (1.5, 2.0)]


def brute_r_con(a, b, d, L, gamma=None, c_l=1.0, c_o=1.0, dps=50):
    """Extended-precision reference for the finite sum."""
    mp.mp.dps = dps
    g = mp.mpf(L) / c_l if gamma is None else mp.mpf(gamma)
    total = mp.mpf(0)
    for k in range(1, d + 1):
        lam = c_l * mp.mpf(k) ** -a
        om = c_o * mp.mpf(k) ** -b
        total += lam * om * (1 - g * lam / L) ** (2 * L)
    return total


@pytest.mark.parametrize("a,b", [(2.0, 1.0), (0.5, 0.25), (0.0, 0.0), (1.0, 2.0), (3.0, 0.0)])
@pytest.mark.parametrize("L", [1, 3, 17, 1000])
def test_r_con_matches_mpmath_sum_at_reference_step(a, b, L):
    d = 9
    got = r_con(PowerLawSpectrum(a, b, d, 1.7, 0.6), L)
    ref = brute_r_con(a, b, d, L, c_l=1.7, c_o=0.6)
    # abs: a flat spectrum at L = 1 is exactly 0 (the reference keeps 1e-100 of rounding)
    assert got == pytest.approx(float(ref), rel=1e-12, abs=1e-90)


@pytest.mark.parametrize(
    "frac", [0.1, 0.9, 1.3, 1.99]
)  # gamma = frac L / lambda_1; > 1 flips the sign of the top factor
def test_r_con_matches_mpmath_sum_off_reference(frac):
    spec = PowerLawSpectrum(1.0, 1.0, 7, c_lambda=2.0)
    for L in (2, 11):
        g = frac * L / 2.0
        assert r_con(spec, L, g) == pytest.approx(float(brute_r_con(1.0, 1.0, 7, L, g, c_l=2.0)), rel=1e-12)


def test_r_con_is_stable_for_huge_depth_and_dimension():
    spec = PowerLawSpectrum(2.0, 1.0, 5)
    assert r_con(spec, 10**6) == pytest.approx(float(brute_r_con(2.0, 1.0, 5, 10**6)), rel=1e-9)
    big = r_con(PowerLawSpectrum(2.0, 1.0, 10**7), [4, 10**5])
    assert np.all(np.isfinite(big)) and np.all(big > 0)


@pytest.mark.parametrize("gamma", [0.0, -1.0, 16.0, 20.0])
def test_gamma_outside_stable_range_is_rejected(gamma):
    with pytest.raises(ValueError, match="^gamma="):
        r_con(PowerLawSpectrum(1.0, 1.0, 5), 8, gamma)  # stable range (0, 2 L / lambda_1) = (0, 16)


@settings(deadline=None, max_examples=40)
@given(a=st.floats(0, 3), b=st.floats(0, 3), d=st.integers(1, 40), L=st.integers(1, 300), frac=st.floats(0.01, 1.99))
def test_r_con_equals_direct_power_sum(a, b, d, L, frac):
    k = np.arange(1, d + 1, dtype=float)
    lam, w = k**-a, k ** -(a + b)
    g = frac * L
    direct = np.sum(w * (1 - g * lam / L) ** (2 * L))
    assert r_con(PowerLawSpectrum(a, b, d), L, g) == pytest.approx(direct, rel=1e-9, abs=1e-290)


def test_gamma_opt_is_a_minimum():
    spec = PowerLawSpectrum(2.0, 1.0, 2000)
    Ls = [1, 4, 32, 128]
    g, r = gamma_opt(spec, Ls)
    for gi, ri, L in zip(g, r, Ls):
        assert 0 < gi < 2 * L / spec.lam1
        assert ri == pytest.approx(r_con(spec, L, gi), rel=1e-12)
        for f in (1 - 1e-3, 1 + 1e-3):
            assert r_con(spec, L, gi * f) >= ri
        # an independent dense grid search over the stable range never beats it
        s = np.linspace(1e-4, 2 - 1e-4, 4001)
        grid = [np.sum(spec.weights * (1 - si * spec.lam) ** (2 * L)) for si in s]
        assert ri <= min(grid) * (1 + 1e-12)
        assert ri <= r_con(spec, L)


def continuum_integral(spec, L):
    """(c_l c_o / a) int_0^1 x^(zeta-1) (1-x)^(2L) dx by quadrature in t = -log x.

    The integrand exp(-zeta t) (1 - e^-t)^(2L) is smooth with a unit-width peak near t = log(2L/zeta).
    """
    z = spec.zeta

    def f(t):
        return np.exp(-z * t + 2 * L * np.log1p(-np.exp(-t))) if t > 0 else 0.0

    t_peak = np.log(2 * L / z + 1)
    parts = [(0, t_peak), (t_peak, t_peak + 5), (t_peak + 5, np.inf)]
    val = sum(quad(f, lo, hi, epsabs=0, epsrel=1e-13, limit=500)[0] for lo, hi in parts)
    return spec.prefactor * val


@pytest.mark.parametrize("a,b", PAIRS + [(0.5, 2.0), (1.0, 0.5)])
@pytest.mark.parametrize("L", [1, 8, 100, 2000])
def test_beta_form_is_the_continuum_integral(a, b, L):
    spec = PowerLawSpectrum(a, b, 10, c_lambda=1.3, c_omega=0.7)
    assert beta_form(spec, L) == pytest.approx(continuum_integral(spec, L), rel=1e-8)


def test_gamma_asymptote_and_its_limit():
    spec = PowerLawSpectrum(2.0, 2.0, 10, c_lambda=2.0)
    z = spec.zeta
    assert gamma_asymptote(spec, 3.0) == pytest.approx(2.0 / 2.0 * gamma_fn(z) * 6.0**-z, rel=1e-13)
    mp.mp.dps = 40
    for L in (10**3, 10**6):
        ref = mp.beta(mp.mpf(z), 2 * L + 1)
        assert beta_form(spec, L) == pytest.approx(float(ref), rel=1e-10)
    # B(zeta, 2L+1) (2L)^zeta / Gamma(zeta) -> 1 with a 1/L correction
    assert beta_form(spec, 10**6) / gamma_asymptote(spec, 10**6) == pytest.approx(1.0, abs=1e-5)


@pytest.mark.parametrize("a,b", PAIRS)
def test_beta_form_matches_finite_sum_when_d_to_the_a_exceeds_100_L(a, b):
    d = 100_000
    Ls = np.array([8, 16, 32, 64, 128, 256])
    assert np.all(float(d) ** a >= 100 * Ls)
    spec = PowerLawSpectrum(a, b, d)
    np.testing.assert_allclose(beta_form(spec, Ls), r_con(spec, Ls), rtol=5e-3)


def test_asymptotic_laws_refuse_zeta_outside_their_range():
    for a, b in [(0.0, 2.0), (0.5, 0.5)]:
        with pytest.raises(ValueError, match="need a > 0"):
            beta_form(PowerLawSpectrum(a, b, 5), 8)
        with pytest.raises(ValueError, match="need a > 0"):
            gamma_asymptote(PowerLawSpectrum(a, b, 5), 8)


@pytest.mark.parametrize("a,b", PAIRS)
def test_depth_exponent_is_zeta(a, b):
    """Finite sum at d = 10^6: log-log slope over L in [16, 256] is -zeta within 0.05.

    The least-squares slope over the range and the pointwise local slopes for L >= 32 both pass;
    at L = 16 the pointwise slope differs by up to 0.09 for zeta = 2: the Beta form itself carries
    a relative correction of about (zeta + 1) / (4 L).
    """
    spec = PowerLawSpectrum(a, b, 10**6)
    Ls = np.array([16, 23, 32, 45, 64, 91, 128, 181, 256])
    R = r_con(spec, Ls)
    fitted = np.polyfit(np.log(Ls), np.log(R), 1)[0]
    assert fitted == pytest.approx(-spec.zeta, abs=0.05)
    pointwise = local_slope(lambda L: r_con(spec, L), [32, 64, 128, 256])
    np.testing.assert_allclose(pointwise, -spec.zeta, atol=0.05)


def test_local_slope_on_known_functions():
    Ls = np.geomspace(2, 1000, 30)
    f = 3.0 * Ls**-0.7
    np.testing.assert_allclose(local_slope(f, Ls), -0.7, rtol=1e-12)
    # callable: integer neighbours, exact for a pure power law
    assert local_slope(lambda L: 5.0 * np.asarray(L, float) ** -2.5, [2, 50]) == pytest.approx([-2.5, -2.5], rel=1e-12)
    # L0 + c L^-1 has local slope -c L^-1 / (L0 + c L^-1); finite differences converge
    assert local_slope(lambda L: 1.0 + 1.0 / np.asarray(L, float), 100) == pytest.approx(-1 / 101, rel=1e-3)
    with pytest.raises(ValueError, match="depths >= 2"):
        local_slope(lambda L: L, 1)
    with pytest.raises(ValueError, match="^f"):
        local_slope([1.0, -1.0], [1, 2])


# --------------------------------------------------------------------------- large d: head-plus-tail sums
def plain_loss(spec, L, s):
    """``sum_k lambda_k omega_k (1 - s lambda_k / lambda_1)^(2L)`` over all d modes with plain powers."""
    x = spec.lam / spec.lam1
    return math.fsum(spec.weights * (1.0 - s * x) ** (2 * L))


def plain_slope(spec, L, s):
    """``d/ds`` of :func:`plain_loss` over all modes."""
    x = spec.lam / spec.lam1
    return -2 * L * math.fsum(spec.weights * x * (1.0 - s * x) ** (2 * L - 1))


def plain_argmin(spec, L):
    """Minimiser of the convex plain loss on [0, 2] by bisection on the plain slope (to the last bit)."""
    if plain_slope(spec, L, 2.0) <= 0:
        return 2.0
    lo, hi = 0.0, 2.0
    while True:
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            return mid
        if plain_slope(spec, L, mid) < 0:
            lo = mid
        else:
            hi = mid


LARGE = [
    (2.0, 1.0, 1.0, 1.0),
    (0.5, 0.5, 1.3, 0.7),
    (0.5, 0.0, 1.0, 1.0),
    (1.0, 0.25, 2.0, 0.5),
    (3.0, 0.0, 1.0, 1.0),
    (0.0, 0.0, 1.0, 1.0),
]


@pytest.mark.parametrize("d", [10**4, 10**5])
@pytest.mark.parametrize("a,b,c_l,c_o", LARGE)
def test_r_con_matches_plain_sum_at_large_d(d, a, b, c_l, c_o):
    spec = PowerLawSpectrum(a, b, d, c_l, c_o)
    Ls = np.array([1, 2, 7, 64, 300, 4096])
    ref = [plain_loss(spec, L, 1.0) for L in Ls]
    np.testing.assert_allclose(r_con(spec, Ls), ref, rtol=1e-10, atol=1e-300)
    for frac in (0.05, 0.7, 1.5, 1.98):  # gamma = frac L / lambda_1
        ref = [plain_loss(spec, L, frac) for L in Ls]
        np.testing.assert_allclose(r_con(spec, Ls, frac * Ls / c_l), ref, rtol=1e-10, atol=1e-300)


@pytest.mark.parametrize("d", [10**4, pytest.param(10**5, marks=pytest.mark.slow)])
@pytest.mark.parametrize("a,b,c_l,c_o", LARGE[:5])
def test_gamma_opt_matches_plain_bisection_at_large_d(d, a, b, c_l, c_o):
    """Optimal step and loss against bisection on the plain derivative sum (an independent algorithm)."""
    spec = PowerLawSpectrum(a, b, d, c_l, c_o)
    Ls = [1, 3, 16, 64, 200]
    g, r = gamma_opt(spec, Ls)
    for gi, ri, L in zip(g, r, Ls):
        s_ref = plain_argmin(spec, L)
        assert gi * c_l / L == pytest.approx(s_ref, rel=1e-10)
        assert ri == pytest.approx(plain_loss(spec, L, s_ref), rel=1e-10)
        if s_ref < 2.0:  # the reference step never beats the optimum
            assert ri <= r_con(spec, L) * (1 + 1e-12)


def test_gamma_opt_at_the_edge_of_the_stable_range():
    """Slow decay at one layer: the loss still falls at s = 2, so the edge step 2L/lambda_1 is returned."""
    spec = PowerLawSpectrum(0.5, 0.0, 10**5)
    assert plain_slope(spec, 1, 2.0) < 0
    g, r = gamma_opt(spec, 1)
    assert g == 2.0 and r == pytest.approx(plain_loss(spec, 1, 2.0), rel=1e-12)


@settings(deadline=None, max_examples=25)
@given(
    a=st.floats(0.3, 3),
    b=st.floats(0, 2),
    d=st.integers(2000, 20000),
    L=st.integers(1, 400),
    frac=st.floats(0.01, 1.99),
)
def test_r_con_and_gamma_opt_property_against_plain_sums(a, b, d, L, frac):
    spec = PowerLawSpectrum(a, b, d)
    assert r_con(spec, L, frac * L) == pytest.approx(plain_loss(spec, L, frac), rel=1e-10, abs=1e-300)
    g, r = gamma_opt(spec, L)
    assert r <= plain_loss(spec, L, frac) * (1 + 1e-12)
    assert r == pytest.approx(plain_loss(spec, L, g / L), rel=1e-10)
