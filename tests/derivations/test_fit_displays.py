"""Notebook displays of fits, curves and claims: well-formed HTML that shows the object's numbers."""

import numpy as np
import pytest
from synthetic import curve

from depthscale.derivations.analysis.curve import curves
from depthscale.derivations.analysis.fits import fit_offset_power, fit_power_law
from depthscale.derivations.claims.display import ClaimTable
from depthscale.derivations.claims.verdicts import ClaimResult

L = 2.0 ** np.arange(7)


def _cells(texts):
    return set(texts)


def test_a_fit_shows_its_parameters_intervals_and_whether_identified(parse_html):
    g = np.random.default_rng(3)
    f = fit_offset_power(L, (0.5 + 2.0 / L) * np.exp(0.01 * g.standard_normal(L.size)))
    tags, texts = parse_html(f._repr_html_())
    assert tags.count("table") == 2 and tags.count("tr") >= 4
    cells = _cells(texts)
    for k in ("L0", "c", "alpha"):
        assert f"{f.params[k]:.4g} ± {f.se[k]:.2g}" in cells
        lo, hi = f.interval(k)
        assert f"[{lo:.4g}, {hi:.4g}]" in cells
    assert any(t.endswith("identified") and "not" not in t for t in texts)
    assert f"{f.r2:.4g}" in cells and f"{f.n}, {f.dof}" in cells


def test_an_unidentified_fit_says_why_and_a_missing_one_shows_its_reason(parse_html):
    f = fit_offset_power(L[:4], (0.5 + 1.0 / L[:4]) * np.exp(0.2 * np.random.default_rng(0).standard_normal(4)))
    assert not f.identified
    _, texts = parse_html(f._repr_html_())
    assert any(f"not identified: {f.reason}" in t for t in texts)
    (c,) = curves(curve(lambda L: 0.5 + 0.4 / L, depths=(1, 2, 4)))
    missing = c.fit("offset", n_boot=0)
    _, texts = parse_html(missing._repr_html_())
    assert any(missing.failure in t for t in texts)


def test_a_power_fit_with_a_refused_bootstrap_says_so(parse_html):
    (c,) = curves(curve(lambda L: 0.4 * L**-1.0, seeds=(0, 1), noise=0.01))
    f = c.fit("power", n_boot=20)
    _, texts = parse_html(f._repr_html_())
    assert f.bootstrap_refused in texts and f"{f.params['alpha']:.4g} ± {f.se['alpha']:.2g}" in texts


def test_a_curve_shows_its_losses_by_depth_and_its_fit(parse_html):
    (c,) = curves(curve(lambda L: 0.5 + 0.4 / L, seeds=(0, 1, 2), noise=0.02))
    tags, texts = parse_html(c._repr_html_())
    assert c.label in texts
    cells = _cells(texts)
    for j, L_ in enumerate(c.depths):
        vals = c.loss[:, j]
        mean, se = vals.mean(), vals.std(ddof=1) / np.sqrt(vals.size)  # by hand, not through the Curve
        assert str(int(L_)) in cells and f"{mean:.4g} ± {se:.2g}" in cells
    f = fit_offset_power(c.depths.astype(float), c.loss.mean(axis=0))
    assert f"{f.params['alpha']:.4g} ± {f.se['alpha']:.2g}" in cells


def test_claims_show_as_a_table_with_their_counts(parse_html):
    rs = [
        ClaimResult("softmax-top2-exponent d=8", "alpha near 1", 1.0, 0.27, 0.07, "± 0.2", "fail", "too low"),
        ClaimResult("linear-floor d=8", "the floor", (0.5, 0.7), 0.61, 0.01, "2 s.e.", "pass", ""),
        ClaimResult("clt-identity", "identity", None, None, None, "", "not run", "no runs"),
    ]
    table = ClaimTable(rs)
    tags, texts = parse_html(table._repr_html_())
    assert tags.count("tr") == 4  # header and one row per claim
    assert "3 claim(s): 1 pass, 1 fail, 1 not run" in texts
    assert {"0.27 ± 0.07", "[0.5, 0.7]", "0.61 ± 0.01", "no runs", "softmax-top2-exponent d=8"} <= set(texts)
    one = ClaimTable(rs[0])
    assert len(one) == 1 and "1 claim(s): 1 fail" in parse_html(one._repr_html_())[1]
    # a single result shows itself as that one-row table
    tags, texts = parse_html(rs[0]._repr_html_())
    assert tags.count("tr") == 2 and "0.27 ± 0.07" in texts and "too low" in texts
    with pytest.raises(ValueError, match=r"^results\[0\]=.*: must be a ClaimResult"):
        ClaimTable([{"id": "x"}])


def test_power_law_fit_range_is_shown_open(parse_html):
    f = fit_power_law(L, 3.0 * L**-1.5 * np.exp(0.01 * np.random.default_rng(1).standard_normal(L.size)))
    _, texts = parse_html(f._repr_html_())
    assert "any" in texts and "[0, ∞)" in texts  # alpha of a pure power law is unbounded, c positive
