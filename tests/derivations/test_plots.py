"""Plot helpers draw on the Axes they are given, return it, and plot the theory's own values."""

import numpy as np
import pytest
from matplotlib.figure import Figure
from synthetic import curve

from depthscale.derivations.analysis.curve import curves
from depthscale.derivations.report.plots import plot_curve, plot_linear_laws
from depthscale.theory.equal_step import r_con
from depthscale.theory.free_poly import free_discrete
from depthscale.theory.spectra import PowerLawSpectrum


def test_linear_laws_are_the_theory_values_on_log_log_axes():
    spec = PowerLawSpectrum(a=2.0, b=1.0, d=500)
    depths = [1, 2, 4, 8, 16]
    ax = Figure().subplots()
    assert plot_linear_laws(spec, depths, ax=ax) is ax
    lines = {line.get_gid(): line for line in ax.lines if line.get_gid()}
    L = np.asarray(depths, dtype=float)
    # the theory functions called directly, not through linear_law_columns
    assert lines["constrained"].get_xdata() == pytest.approx(L)
    assert lines["constrained"].get_ydata() == pytest.approx(np.asarray(r_con(spec, L)), rel=1e-12)
    assert lines["free_discrete"].get_ydata() == pytest.approx(np.asarray(free_discrete(spec, L)), rel=1e-12)
    assert "gamma_opt" not in lines  # a step size, not a loss
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    # the slope guides have the slopes -zeta and -2 zeta
    guides = [line for line in ax.lines if line.get_label().startswith("slope")]
    slopes = sorted(np.polyfit(np.log(g.get_xdata()), np.log(g.get_ydata()), 1)[0] for g in guides)
    assert slopes == pytest.approx([-2 * spec.zeta, -spec.zeta])


def test_linear_laws_choice_and_bad_input():
    spec = PowerLawSpectrum(a=2.0, b=1.0, d=500)
    ax = plot_linear_laws(spec, [1, 2, 4], ax=Figure().subplots(), laws=["free_discrete"], slopes=False)
    assert [line.get_gid() for line in ax.lines] == ["free_discrete"]
    with pytest.raises(ValueError, match=r"^laws='gamma_opt': must be one of constrained, "):
        plot_linear_laws(spec, [1, 2], ax=Figure().subplots(), laws=["gamma_opt"])
    with pytest.raises(ValueError, match=r"^ax=3: must be a matplotlib Axes or None"):
        plot_linear_laws(spec, [1, 2], ax=3)


def test_a_curve_is_drawn_with_its_fit():
    (c,) = curves(curve(lambda L: 0.5 + 0.4 / L, seeds=(0, 1, 2), noise=0.01))
    ax = Figure().subplots()
    assert plot_curve(c, ax=ax) is ax
    fit_line = ax.lines[-1]
    x = fit_line.get_xdata()
    p = c.fit("offset", n_boot=0).params
    assert fit_line.get_ydata() == pytest.approx(p["L0"] + p["c"] * x ** -p["alpha"], rel=1e-12)
    assert fit_line.get_linestyle() == "-"  # identified: a solid line
    # the error-bar points are the seed means, computed here from the losses
    points = ax.containers[0].lines[0]
    assert points.get_ydata() == pytest.approx(c.loss.mean(axis=0))
    assert x.min() == pytest.approx(1) and x.max() == pytest.approx(64)


def _tick_texts(ax, axis="y"):
    ax.figure.canvas.draw()  # the formatters run when the figure is drawn
    get = ax.yaxis if axis == "y" else ax.xaxis
    return [t.get_text() for t in get.get_ticklabels(minor=False) + get.get_ticklabels(minor=True) if t.get_text()]


def test_a_narrow_log_axis_is_labelled_with_plain_numbers():
    # losses from 1.98 to 2.06: less than a decade, where matplotlib wrote "2.02x10^0"
    (c,) = curves(curve(lambda L: 1.98 + 0.08 / L, seeds=(0, 1, 2), depths=(1, 2, 4, 8, 16), noise=0.001))
    ax = plot_curve(c, ax=Figure().subplots())
    texts = _tick_texts(ax)
    assert texts and all("times" not in t and "^" not in t and "$" not in t for t in texts), texts
    for minor in (False, True):  # each label is the value at its tick, to 3 significant digits
        ticks = ax.yaxis.get_minor_ticks() if minor else ax.yaxis.get_major_ticks()
        for tick in ticks:
            if tick.label1.get_text():
                assert float(tick.label1.get_text()) == pytest.approx(tick.get_loc(), rel=5e-3)
    lo, hi = ax.get_ylim()
    assert sum(lo <= float(t) <= hi for t in texts) >= 2  # an axis of less than a decade still has labels
    lo, hi = ax.get_xlim()
    assert [t for t in _tick_texts(ax, "x") if lo <= float(t) <= hi] == ["1", "2", "4", "8", "16"]


def test_linear_law_legends_are_words_not_column_names():
    ax = plot_linear_laws(PowerLawSpectrum(a=2.0, b=1.0, d=500), [1, 2, 4, 8], ax=Figure().subplots())
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels and not [t for t in labels if "_" in t]
    assert "free steps: finite spectrum" in labels and "equal steps, best step" in labels
