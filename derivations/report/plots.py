"""Plot helpers for notebooks: each draws on the Axes it is given (``ax=``) and returns it.

:func:`plot_curve` draws a curve's losses against depth with its fitted law; :func:`plot_linear_laws`
draws the linear-attention depth laws of one spectrum (``depthscale.theory``) on log-log axes;
:func:`plot_trend` draws one quantity of curves compared across a parameter against it, with the
fitted trend and its extrapolation. The
report's own figures (PNG bytes) are in :mod:`depthscale.derivations.report.figures`.
"""

from __future__ import annotations

import numpy as np

from ...theory._validate import bad_argument
from ...theory.linear_laws import LINEAR_LAWS, linear_law_columns
from ..formatting import format_estimate

# the laws that are losses (gamma_opt is a step size)
LOSS_LAWS = tuple(k for k in LINEAR_LAWS if k != "gamma_opt")
# what a legend says for each law (each line keeps the column name as its ``gid``)
LAW_LABELS = {
    "constrained": "equal steps, reference step L/λ₁",
    "constrained_opt": "equal steps, best step",
    "beta_form": "equal steps: Beta-function form",
    "gamma_asymptote": "equal steps: large-L asymptote",
    "free_continuum": "free steps: continuum limit",
    "free_discrete": "free steps: finite spectrum",
}


def plain_log_ticks(axis, integers: bool = False) -> None:
    """Label a log axis with plain numbers (``2``, ``0.25``, ``1.5``), major and minor ticks alike:
    matplotlib's default writes ``2.02x10^0`` on an axis that spans less than a decade.

    ``integers``: depths, labelled only at powers of two.
    """
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    if integers:
        axis.set_major_locator(LogLocator(base=2))
        axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.0f}" if v >= 1 else f"{v:g}"))
        axis.set_minor_formatter(NullFormatter())
        return
    fmt = FuncFormatter(lambda v, _: f"{v:.3g}")
    axis.set_major_formatter(fmt)
    lo, hi = sorted(axis.get_view_interval())
    narrow = lo > 0 and hi / lo < 10  # less than a decade: the minor ticks carry the labels
    axis.set_minor_formatter(fmt if narrow else NullFormatter())


# The site's content column is 690 px wide and report figures are rendered at 100 dpi: a figure at most
# 7.6 in wide shrinks by at most 10 %, so 8-pt legend text stays at least 10 px tall there.
COLUMN_PX = 690
MIN_LEGEND_PT = 8.0
GUIDE_GID = "inverse-depth-guide"
GUIDE_LABEL = "1/L guide (dotted)"


def inverse_depth_guide(ax, depths, values, color, r_inf: float | None = None):
    """Draw the dotted guide ``R_inf + c/L`` over a curve's depths and return it (None when it cannot
    be drawn: fewer than two finite points).

    ``r_inf`` None: ``R_inf`` and ``c`` put the guide through the curve's first and last finite points;
    given (a fitted plateau): the guide has that asymptote and passes through the
    first point. A guide is drawn with ``gid`` :data:`GUIDE_GID`, so that :func:`legend_below` names it
    once, and a test can find it. Set the axis scales first (a log axis drops values at or below 0).

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> ax = Figure().subplots()
    >>> line = inverse_depth_guide(ax, [1, 2, 4, 8], [2.0, 1.4, 1.2, 1.1], "k")
    >>> x, y = line.get_data()
    >>> bool(np.allclose([y[0], y[-1]], [2.0, 1.1])), line.get_gid() == GUIDE_GID
    (True, True)
    """
    L = np.asarray(depths, dtype=float)
    y = np.asarray(values, dtype=float)
    ok = np.isfinite(L) & np.isfinite(y) & (L > 0)
    if ax.get_yscale() == "log":
        ok &= y > 0
    L, y = L[ok], y[ok]
    if len(L) < 2 or L[0] == L[-1]:
        return None
    if r_inf is None:
        c = (y[0] - y[-1]) / (1 / L[0] - 1 / L[-1])
        base = y[-1] - c / L[-1]
    else:
        base = float(r_inf)
        c = (y[0] - base) * L[0]
    grid = np.geomspace(L[0], L[-1], 60)
    guide = base + c / grid
    keep = guide > 0 if ax.get_yscale() == "log" else np.isfinite(guide)
    (line,) = ax.plot(grid[keep], guide[keep], ls=":", lw=1.0, color=color, label="_guide", gid=GUIDE_GID)
    return line


def legend_below(fig, ncol: int | None = None, fontsize: float = MIN_LEGEND_PT, extra=()) -> None:
    """One legend for every panel of ``fig``, under them, so that it covers no data (a label drawn in
    several panels is named once, labels starting with ``_`` are left out; ``ncol`` defaults to as many
    columns as the figure's width holds). A figure with 1/L guides (:func:`inverse_depth_guide`) gets
    one entry for them. ``extra``: more ``(handle, label)`` pairs. The figure needs ``layout="constrained"``.
    """
    from matplotlib.lines import Line2D

    if fontsize < MIN_LEGEND_PT:
        bad_argument("fontsize", fontsize, f"at least {MIN_LEGEND_PT:g} pt (readable in the site's column)")
    seen: dict = {}
    guides = False
    for ax in fig.axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(label, handle)
        guides |= any(ln.get_gid() == GUIDE_GID for ln in ax.lines)
    for handle, label in extra:
        seen.setdefault(label, handle)
    if guides:
        seen.setdefault(GUIDE_LABEL, Line2D([], [], ls=":", lw=1.0, color="0.3"))
    if not seen:
        return
    if ncol is None:  # as many columns as fit: about 0.6 em per character, plus the handle
        width_pt = fig.get_figwidth() * 72
        per = max(len(label) for label in seen) * 0.6 * fontsize + 3.5 * fontsize
        ncol = max(1, min(len(seen), int(width_pt // per)))
    # the legend takes room under the panels: grow the figure by its rows, so that the panels keep theirs
    rows = -(-len(seen) // ncol)
    fig.set_figheight(fig.get_figheight() + rows * fontsize * 1.45 / 72 + 0.1)
    fig.legend(list(seen.values()), list(seen), loc="outside lower center", ncol=ncol, fontsize=fontsize, frameon=False)


def _axes(ax):
    if ax is None:
        import matplotlib.pyplot as plt  # only without an Axes: pyplot picks the notebook's backend

        _, ax = plt.subplots()
    elif not hasattr(ax, "plot") or not hasattr(ax, "set_xscale"):
        raise ValueError(f"ax={ax!r}: must be a matplotlib Axes or None")
    return ax


def plot_curve(curve, ax=None, kind: str | None = None, n_boot: int = 0):
    """A curve's seed-mean losses R_L against depth L (± one standard error) with its fitted law.

    Parameters
    ----------
    curve : Curve
        From :func:`~depthscale.derivations.analysis.curve.curves`.
    ax : matplotlib.axes.Axes, optional
        Where to draw (default: a new figure's Axes).
    kind : {"offset", "power"}, optional
        The law to draw (default: the curve's :attr:`~Curve.default_kind`).
    n_boot : int
        Bootstrap replicates of the fit (0: Jacobian errors only).

    Returns
    -------
    matplotlib.axes.Axes
        ``ax``, on log-log scales; the fit is dashed when it is not identified, absent when there is none.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> from depthscale.derivations.analysis.curve import curves
    >>> rec = lambda L, s: {"status": "ok", "seed": s, "converged": True, "final_loss": 0.5 + 0.4 / L,
    ...     "config": {"task": {"task": "topk", "k": 2, "a": 0.0, "b": 0.0, "d": 8, "P": 32},
    ...                "model": {"model": "softmax", "depth": L}, "train": {"steps": 10}}}
    >>> (c,) = curves([rec(L, s) for L in (1, 2, 4, 8, 16) for s in (0, 1)])
    >>> ax = Figure().subplots()
    >>> plot_curve(c, ax=ax) is ax, len(ax.lines) >= 2
    (True, True)
    """
    from ..analysis.curve import Curve

    if not isinstance(curve, Curve):
        raise TypeError(f"curve={curve!r}: must be a Curve (from depthscale.derivations.analysis.curve)")
    ax = _axes(ax)
    kind = curve.default_kind if kind is None else kind
    L = curve.depths.astype(float)
    ax.errorbar(
        L, curve.mean, yerr=curve.error_bar, fmt="o", ms=4, capsize=3, label=f"runs ({len(curve.seeds)} seed(s))"
    )
    fit = curve.fit(kind, n_boot=n_boot)
    if not fit.failure:
        grid = np.geomspace(L.min(), L.max(), 100)
        a = fit.params.get("alpha", fit.fixed.get("alpha"))
        text = f"fit {kind}: alpha = {format_estimate(a, fit.se.get('alpha'))}"
        style = "-" if fit.identified else "--"
        ax.plot(grid, fit.predict(grid), style, lw=1.2, label=text if fit.identified else f"{text} (not identified)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("depth L")
    ax.set_ylabel("loss R_L")
    ax.set_title(curve.label, fontsize=9)
    ax.legend(fontsize=8)
    plain_log_ticks(ax.xaxis, integers=True)
    plain_log_ticks(ax.yaxis)
    return ax


def plot_linear_laws(spectrum, depths, ax=None, laws=None, slopes: bool = True):
    """The linear-attention depth laws of ``spectrum`` at ``depths``, loss against L on log-log axes.

    Parameters
    ----------
    spectrum : PowerLawSpectrum
    depths : sequence of int
        Depths >= 1.
    ax : matplotlib.axes.Axes, optional
        Where to draw (default: a new figure's Axes).
    laws : sequence of str, optional
        Which of :data:`LOSS_LAWS` to draw (default: all that apply to the spectrum).
    slopes : bool
        Also draw dotted guides of slope ``-zeta`` and ``-2 zeta`` through the last points of the
        equal-step and free laws (asymptotic spectra only).

    Returns
    -------
    matplotlib.axes.Axes
        ``ax``; each law is one line labelled in words (:data:`LAW_LABELS`) with the law's column
        name as its ``gid``, its points the theory's values.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> from depthscale.theory.spectra import PowerLawSpectrum
    >>> ax = plot_linear_laws(PowerLawSpectrum(2.0, 1.0, 1000), [1, 2, 4, 8], ax=Figure().subplots())
    >>> [line.get_gid() for line in ax.lines][:2], ax.lines[0].get_label()
    (['constrained', 'constrained_opt'], 'equal steps, reference step L/λ₁')
    """
    ax = _axes(ax)
    cols = linear_law_columns(spectrum, depths)
    available = [k for k in LOSS_LAWS if k in cols]
    if laws is None:
        chosen = available
    else:
        chosen = list(laws) if not isinstance(laws, str) else [laws]
        for law in chosen:
            if law not in available:
                bad_argument("laws", law, f"one of {', '.join(available)} for this spectrum")
    L = np.asarray(depths, dtype=float)
    for law in chosen:
        ax.plot(L, cols[law], marker="o", ms=3, label=LAW_LABELS[law], gid=law)
    if slopes and spectrum.asymptotic:
        zeta = spectrum.zeta
        for power, anchor, text in ((zeta, "constrained", "L^-ζ"), (2 * zeta, "free_discrete", "L^-2ζ")):
            ax.plot(L, cols[anchor][-1] * (L / L[-1]) ** -power, "k:", lw=1, label=f"slope {text} (ζ = {zeta:g})")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("depth L")
    ax.set_ylabel("loss")
    ax.set_title(f"linear attention, (a, b) = ({spectrum.a:g}, {spectrum.b:g}), d = {spectrum.d}", fontsize=9)
    ax.legend(fontsize=7, ncol=2)
    plain_log_ticks(ax.yaxis)
    return ax


def plot_trend(points, quantity: str, ax=None, trend=None, *, color: str = "C0", label: str | None = None):
    """One quantity of curves compared across a parameter against that parameter: each point ± one
    standard error, and, with ``trend``, its fitted line with the line's 95 % band and the value it
    was extrapolated to, drawn open and labelled an extrapolation.

    Parameters
    ----------
    points : sequence of TrendPoint
        From :func:`~depthscale.derivations.analysis.trend.trend_points`.
    quantity : str
        A key of :data:`~depthscale.derivations.analysis.trend.QUANTITIES`.
    ax : matplotlib.axes.Axes, optional
        Where to draw (default: a new figure's Axes).
    trend : Trend, optional
        :func:`~depthscale.derivations.analysis.trend.fit_trend` of the same points and quantity.
    color, label : str, optional
        The series' colour and legend label (default: the quantity).

    Returns
    -------
    matplotlib.axes.Axes
        ``ax``; the parameter's axis in log2 when the trend's axis is (or without a trend, for a
        positive numeric parameter).

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> from depthscale.derivations.analysis.estimate import Estimate
    >>> from depthscale.derivations.analysis.trend import TrendPoint, fit_trend
    >>> pts = [TrendPoint("d", d, "", (1, 2), 3, 1, 2, depth_gain=Estimate(g, 0.01, 2, "seeds", 3))
    ...        for d, g in ((16, 0.03), (32, 0.04), (64, 0.05))]
    >>> ax = plot_trend(pts, "depth_gain", ax=Figure().subplots(), trend=fit_trend(pts, "depth_gain", at=128))
    >>> ax.get_xscale(), ax.get_xlabel(), "d = 128: an extrapolation" in [t.get_text() for t in ax.get_legend().get_texts()]
    ('log', 'd', True)
    """
    from ..analysis.trend import QUANTITIES, Trend, TrendPoint

    if quantity not in QUANTITIES:
        bad_argument("quantity", quantity, f"one of {', '.join(QUANTITIES)}")
    pts = list(points) if not isinstance(points, TrendPoint) else [points]
    if not pts or not all(isinstance(p, TrendPoint) for p in pts):
        bad_argument("points", points, "a non-empty sequence of TrendPoint (trend_points)")
    if trend is not None and (not isinstance(trend, Trend) or trend.quantity != quantity):
        bad_argument("trend", trend, f"None or a Trend of {quantity!r} (fit_trend)")
    ax = _axes(ax)
    parameter = pts[0].parameter
    shown = [(p.value, e) for p in pts if (e := p.get(quantity)) is not None and np.isfinite(e.value)]
    numeric = all(not isinstance(v, str) for v, _ in shown)
    xs = [v for v, _ in shown] if numeric else list(range(len(shown)))
    ys = [e.value for _, e in shown]
    se = [e.se if np.isfinite(e.se) else 0.0 for _, e in shown]
    ax.errorbar(xs, ys, yerr=se, fmt="o", ms=5, capsize=3, color=color, label=label or QUANTITIES[quantity], zorder=3)
    if trend is not None:
        hi = max(trend.values + ((trend.at,) if trend.at is not None else ()))
        lo = min(trend.values + ((trend.at,) if trend.at is not None else ()))
        grid = np.geomspace(lo, hi, 60) if trend.axis == "log2" else np.linspace(lo, hi, 60)
        v, b_lo, b_hi = trend.band(grid)
        ax.plot(grid, v, "-", lw=1.2, color=color, label=f"weighted fit in {trend.axis} {parameter}")
        ax.fill_between(grid, b_lo, b_hi, color=color, alpha=0.15, lw=0, label="95 % interval of the fit")
        if trend.extrapolated is not None and trend.at is not None:
            e = trend.extrapolated
            what = "an extrapolation" if trend.extrapolation else "interpolated"
            ax.errorbar(
                [trend.at], [e.value], yerr=[e.margin if np.isfinite(e.margin) else 0.0], fmt="o", ms=6,
                mfc="white", capsize=3, color=color, label=f"{parameter} = {trend.at:g}: {what}", zorder=3,
            )  # fmt: skip
    if numeric and (trend.axis == "log2" if trend is not None else all(float(v) > 0 for v in xs)):
        ax.set_xscale("log", base=2)
        ticks = sorted({float(v) for v in xs} | ({float(trend.at)} if trend is not None and trend.at else set()))
        ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
        ax.xaxis.set_minor_formatter(_null_formatter())
    elif not numeric:
        ax.set_xticks(xs, [str(v) for v, _ in shown])
    if ys and min(ys) < 0 < max(ys):  # a quantity that changes sign: its zero drawn
        ax.axhline(0.0, color="0.6", lw=0.8, zorder=0)
    ax.set_xlabel(parameter)
    ax.set_ylabel(QUANTITIES[quantity])
    ax.legend(fontsize=8)
    return ax


def _null_formatter():
    from matplotlib.ticker import NullFormatter

    return NullFormatter()


__all__ = [
    "LOSS_LAWS",
    "LAW_LABELS",
    "COLUMN_PX",
    "GUIDE_GID",
    "plot_curve",
    "plot_linear_laws",
    "plot_trend",
    "plain_log_ticks",
    "legend_below",
    "inverse_depth_guide",
]
