"""The linear laws as a DataFrame indexed by L: the same numbers as the columns, one row per depth."""

import sys

import numpy as np
import pytest

from depthscale.theory.equal_step import r_con
from depthscale.theory.linear_laws import LINEAR_LAWS, linear_law_columns, linear_laws_frame
from depthscale.theory.spectra import PowerLawSpectrum


def test_the_laws_are_indexed_by_depth():
    pytest.importorskip("pandas")
    spec, depths = PowerLawSpectrum(2.0, 1.0, 1000), [4, 1, 2, 16]
    df = linear_laws_frame(spec, depths)
    assert df.index.name == "L" and df.index.tolist() == [4, 1, 2, 16]
    assert list(df.columns) == [k for k in LINEAR_LAWS if k in linear_law_columns(spec, depths)]
    assert df.loc[2, "constrained"] == pytest.approx(float(r_con(spec, np.array([2]))[0]), rel=1e-14)
    assert df.attrs == {"a": 2.0, "b": 1.0, "d": 1000, "zeta": spec.zeta}


def test_without_pandas_the_error_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match=r'^pandas is not installed: pip install "depthscale\[pandas\]"$'):
        linear_laws_frame(PowerLawSpectrum(2.0, 1.0, 100), [1, 2])
