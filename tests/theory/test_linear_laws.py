"""The one linear-law table: columns, which laws apply, and agreement with the laws computed one by one."""

import numpy as np
import pytest

from depthscale.theory.equal_step import beta_form, gamma_opt, r_con
from depthscale.theory.free_poly import free_continuum, free_discrete
from depthscale.theory.linear_laws import ASYMPTOTIC_LAWS, LINEAR_LAWS, linear_law_columns
from depthscale.theory.spectra import PowerLawSpectrum


def test_columns_and_values():
    spec = PowerLawSpectrum(2.0, 1.0, 5000, 1.2, 0.9)
    Ls = [1, 4, 32]
    cols = linear_law_columns(spec, Ls)
    assert list(cols) == list(LINEAR_LAWS)
    g, r = gamma_opt(spec, Ls)
    np.testing.assert_array_equal(cols["constrained"], r_con(spec, Ls))
    np.testing.assert_array_equal(cols["gamma_opt"], g)
    np.testing.assert_array_equal(cols["constrained_opt"], r)
    np.testing.assert_array_equal(cols["beta_form"], beta_form(spec, Ls))
    np.testing.assert_array_equal(cols["free_continuum"], free_continuum(spec, Ls))
    np.testing.assert_array_equal(cols["free_discrete"], free_discrete(spec, Ls))
    # optimal equal step <= reference step, free optimum <= optimal equal step
    assert np.all(cols["constrained_opt"] <= cols["constrained"] * (1 + 1e-12))
    assert np.all(cols["free_discrete"] <= cols["constrained_opt"] * (1 + 1e-12))


@pytest.mark.parametrize("a,b", [(0.5, 0.25), (0.0, 1.0)])
def test_asymptotic_laws_absent_outside_their_range(a, b):
    cols = linear_law_columns(PowerLawSpectrum(a, b, 100), [2, 8])
    assert not set(ASYMPTOTIC_LAWS) & set(cols)
    assert list(cols) == [k for k in LINEAR_LAWS if k not in ASYMPTOTIC_LAWS]


def test_bad_depths():
    with pytest.raises(ValueError, match="^depths="):
        linear_law_columns(PowerLawSpectrum(1.0, 1.0, 10), [0, 2])
