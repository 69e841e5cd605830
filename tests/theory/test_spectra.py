import math

import numpy as np
import pytest

from depthscale.theory.spectra import PowerLawSpectrum, as_depths


def test_arrays_follow_the_power_laws():
    s = PowerLawSpectrum(1.5, 0.5, 5, c_lambda=2.0, c_omega=3.0)
    k = np.arange(1, 6)
    for i in range(5):
        assert s.lam[i] == pytest.approx(2.0 / k[i] ** 1.5, rel=1e-15)
        assert s.omega[i] == pytest.approx(3.0 / k[i] ** 0.5, rel=1e-15)
        assert s.weights[i] == pytest.approx(6.0 / k[i] ** 2.0, rel=1e-15)
    assert s.lam1 == 2.0
    assert s.zeta == pytest.approx(1.0 / 1.5)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(a=-0.1, b=1, d=3), "a"),
        (dict(a=1, b=-1, d=3), "b"),
        (dict(a=1, b=1, d=0), "d"),
        (dict(a=1, b=1, d=2.5), "d"),
        (dict(a=1, b=1, d=10**8), "d"),
        (dict(a=1, b=1, d=3, c_lambda=0), "c_lambda"),
        (dict(a=1, b=1, d=3, c_omega=-2), "c_omega"),
        (dict(a=math.nan, b=1, d=3), "a"),
    ],
)
def test_bad_construction_names_the_parameter(kwargs, name):
    with pytest.raises(ValueError, match=rf"^{name}="):
        PowerLawSpectrum(**kwargs)


def test_finite_sums_accept_any_nonnegative_exponents_but_asymptotics_need_zeta():
    flat = PowerLawSpectrum(0.0, 0.0, 4)
    assert np.all(flat.lam == 1.0) and math.isnan(flat.zeta) and not flat.asymptotic
    with pytest.raises(ValueError, match="need a > 0 and a \\+ b > 1"):
        flat.require_asymptotic()
    with pytest.raises(ValueError, match="need a > 0 and a \\+ b > 1"):
        PowerLawSpectrum(0.5, 0.5, 4).require_asymptotic()
    PowerLawSpectrum(0.5, 0.75, 4).require_asymptotic()  # a + b > 1: fine


def test_large_d_is_allowed():
    s = PowerLawSpectrum(2.0, 1.0, 10**7)
    assert s.lam.shape == (10**7,) and s.lam[-1] == pytest.approx(1e-14)


def test_as_depths():
    assert as_depths(5) == (np.array([5]), True)
    with pytest.raises(ValueError, match="^L="):
        as_depths([1, 0])
    with pytest.raises(ValueError, match="^L="):
        as_depths([])
