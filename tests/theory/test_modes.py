import math

import mpmath as mp
import numpy as np
import pytest

from depthscale.theory.modes import mode_depth, mode_loss
from depthscale.theory.spectra import PowerLawSpectrum


def test_mode_loss_is_the_per_mode_factor():
    spec = PowerLawSpectrum(1.5, 0.5, 20, c_lambda=3.0)
    Ls = [1, 4, 50]
    got = mode_loss(spec, Ls)
    assert got.shape == (3, 20)
    k = np.arange(1, 21)
    for i, L in enumerate(Ls):
        np.testing.assert_allclose(got[i], (1 - k**-1.5) ** (2 * L), rtol=1e-12, atol=1e-300)
    # chosen modes and an explicit step: (1 - gamma lambda_k / L)^(2L)
    sub = mode_loss(spec, [10], gamma=4.0, modes=[2, 7])
    lam = 3.0 * np.array([2.0, 7.0]) ** -1.5
    np.testing.assert_allclose(sub[0], (1 - 4.0 * lam / 10) ** 20, rtol=1e-12)


def test_weighted_mode_losses_sum_to_the_loss():
    """sum_k lambda_k omega_k (mode loss) is the mpmath brute-force loss."""
    spec = PowerLawSpectrum(2.0, 1.0, 15)
    mp.mp.dps = 40
    for L in (3, 30):
        ref = mp.fsum(mp.mpf(k) ** -3 * (1 - mp.mpf(k) ** -2) ** (2 * L) for k in range(1, 16))
        assert float(spec.weights @ mode_loss(spec, L)[0]) == pytest.approx(float(ref), rel=1e-12)


def first_depth_below(x, eps):
    """Search with mpmath (bisection on the monotone predicate): smallest L with (1 - x)^(2L) < eps."""
    mp.mp.dps = 30

    def below(L):
        return (1 - mp.mpf(x)) ** (2 * L) < eps

    lo, hi = 0, 1
    while not below(hi):
        lo, hi = hi, 2 * hi
    while hi - lo > 1:  # below(lo) is False (or lo = 0), below(hi) is True
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if below(mid) else (mid, hi)
    return hi


@pytest.mark.parametrize("a", [0.5, 1.0, 2.0])
@pytest.mark.parametrize("eps", [0.3, 1e-3, 1e-8])
def test_mode_depth_exact_by_search(a, eps):
    spec = PowerLawSpectrum(a, 1.0, 40, c_lambda=5.0)  # c_lambda cancels in lambda_k / lambda_1
    ks = [1, 2, 3, 7, 40]
    md = mode_depth(spec, ks, eps)
    ref = [first_depth_below(float(k) ** -a, eps) for k in ks]
    assert md.exact.tolist() == ref


def test_mode_depth_approximation_for_weak_modes():
    spec = PowerLawSpectrum(1.0, 1.0, 10**5)
    md = mode_depth(spec, [1000, 10**5], 1e-4)
    np.testing.assert_allclose(md.tau, [500.0, 5e4])
    np.testing.assert_allclose(md.approx, md.tau * math.log(1e4))
    # exact depth = ln(1/eps) / (-2 ln(1 - 1/k)) = tau ln(1/eps) (1 - 1/(2k) + ...): relative gap ~ 1/(2k)
    np.testing.assert_allclose(md.exact / md.approx, 1.0, rtol=1e-3)
    assert md.exact[0] == first_depth_below(1e-3, 1e-4)


def test_sequential_learning_depth_grows_like_k_to_the_a():
    spec = PowerLawSpectrum(2.0, 0.0, 1000)
    md = mode_depth(spec, [10, 100, 1000], 1e-2)
    ratios = md.exact[1:] / md.exact[:-1]
    np.testing.assert_allclose(ratios, 100.0, rtol=0.02)


def test_bad_arguments():
    spec = PowerLawSpectrum(1.0, 1.0, 10)
    for k in (0, 11, [1, 2.5]):
        with pytest.raises(ValueError, match="^k="):
            mode_depth(spec, k, 0.1)
    for eps in (0.0, 1.0, -1.0):
        with pytest.raises(ValueError, match="^eps="):
            mode_depth(spec, 2, eps)
    with pytest.raises(ValueError, match="^gamma="):
        mode_loss(spec, 4, gamma=8.0)
    with pytest.raises(ValueError, match="^L="):
        mode_loss(spec, 0)
