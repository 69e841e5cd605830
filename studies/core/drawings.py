"""The core study's own drawings: fitted exponents against zeta, floors against their references,
and the room for depth (fitted floor against the temperature-only heads). Each returns a matplotlib
Figure or raises ``NoFigure`` saying why there is nothing to draw."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping

import numpy as np
from matplotlib.figure import Figure

from depthscale.derivations.study import (
    NoFigure,
    as_list,
    error_bars,
    finite_or_nan,
    legend_below,
    mappings,
    new_figure,
    panel_grid,
)
from depthscale.theory.spectra import PowerLawSpectrum


def _zeta(a: float, b: float) -> float:
    """zeta of the spectrum (a, b) where the linear depth law applies, else nan."""
    if not (math.isfinite(a) and math.isfinite(b) and a >= 0 and b >= 0):
        return math.nan
    spec = PowerLawSpectrum(a, b, 1)
    return spec.zeta if spec.asymptotic else math.nan


def draw_exponents_vs_zeta(rows, reference=None) -> Figure:
    """Fitted exponents against ``zeta = (a + b - 1)/a`` with the lines zeta and 2 zeta.

    ``rows``: dicts with ``a``, ``b``, ``alpha`` and optional ``alpha_se``, ``series`` (legend group)
    and ``reference`` (the paper's exponent). ``reference``: extra paper points as ``(a, b, alpha)``
    triples or dicts. Rows where zeta is undefined are skipped.
    """
    rows = mappings("rows", rows, "a, b, alpha")
    reference = as_list("reference", reference, "(a, b, alpha) triples or dicts")
    pts = defaultdict(list)
    for i, r in enumerate(rows):
        a, b, alpha = finite_or_nan(r.get("a")), finite_or_nan(r.get("b")), finite_or_nan(r.get("alpha"))
        z = _zeta(a, b)
        if not (math.isfinite(z) and math.isfinite(alpha)):
            continue  # zeta undefined (a = 0 or a + b <= 1) or no exponent
        pts[str(r.get("series", "fitted"))].append((z, alpha, finite_or_nan(r.get("alpha_se")), (a, b)))
        if math.isfinite(finite_or_nan(r.get("reference"))):
            pts["paper"].append((z, finite_or_nan(r["reference"]), math.nan, (a, b)))
    for i, r in enumerate(reference):
        a, b, alpha = (r.get("a"), r.get("b"), r.get("alpha")) if isinstance(r, Mapping) else tuple(r)[:3]
        a, b, alpha = finite_or_nan(a), finite_or_nan(b), finite_or_nan(alpha)
        z = _zeta(a, b)
        if math.isfinite(z) and math.isfinite(alpha):
            pts["paper"].append((z, alpha, math.nan, (a, b)))
    if not any(name != "paper" for name in pts):
        raise NoFigure("no fitted exponents with a defined zeta = (a + b - 1)/a (needs a > 0 and a + b > 1)")
    fig, axes = new_figure(6.4, 4.8)
    ax = axes[0, 0]
    z_all = [p[0] for v in pts.values() for p in v]
    zs = np.linspace(0, max(z_all) * 1.1, 50)
    ax.plot(zs, zs, color="0.3", ls="-", lw=1, label=r"$\zeta$ (equal steps)")
    ax.plot(zs, 2 * zs, color="0.3", ls="--", lw=1, label=r"$2\zeta$ (free polynomial)")
    shapes = "osD^vP*X"
    for i, (name, p) in enumerate(sorted(pts.items(), key=lambda kv: kv[0] == "paper")):
        zs, al, se = (np.array([q[j] for q in p]) for j in range(3))
        if name == "paper":
            ax.plot(zs, al, ls="none", marker="x", color="k", ms=7, label="paper (linear, easy task)")
        else:
            ax.errorbar(
                zs, al, yerr=error_bars(se), ls="none", marker=shapes[i % len(shapes)], ms=5, capsize=2, label=name
            )
    ax.set_xlabel(r"$\zeta = (a + b - 1)/a$")
    ax.set_ylabel(r"fitted depth exponent $\alpha$")
    ax.set_xlim(0, None)
    ax.set_ylim(0, None)
    ax.grid(True, alpha=0.25)
    legend_below(fig)
    ax.set_title("Depth exponents against the spectrum")
    return fig


def draw_floors(rows) -> Figure:
    """Measured floors against reference or theory values with error bars; the line is equality.

    ``rows``: dicts with ``label``, ``measured``, ``reference`` (or ``theory``) and optional
    ``measured_se``, ``reference_se`` and ``group`` (legend entry).
    """
    rows = mappings("rows", rows, "label, measured, reference")
    pts = defaultdict(list)
    for i, r in enumerate(rows):
        m, ref = finite_or_nan(r.get("measured")), finite_or_nan(r.get("reference", r.get("theory")))
        if math.isfinite(m) and math.isfinite(ref):
            pts[str(r.get("group", "measured"))].append(
                (
                    ref,
                    m,
                    finite_or_nan(r.get("reference_se")),
                    finite_or_nan(r.get("measured_se")),
                    str(r.get("label", i)),
                )
            )
    if not pts:
        raise NoFigure("no floor with both a measured and a reference value")
    fig, axes = new_figure(6.4, 5.2)
    ax = axes[0, 0]
    allv = np.array([v for p in pts.values() for q in p for v in q[:2]])
    positive = bool(np.all(allv > 0))
    lo, hi = allv.min(), allv.max()
    span = (
        np.geomspace(lo / 1.5, hi * 1.5, 10)
        if positive
        else np.linspace(lo - 0.1 * abs(lo) - 1e-9, hi + 0.1 * abs(hi) + 1e-9, 10)
    )
    ax.plot(span, span, color="0.4", lw=1, label="measured = reference")
    shapes = "osD^vP*X"
    for n, (name, p) in enumerate(sorted(pts.items())):
        x, y, xe, ye = (np.array([q[j] for q in p]) for j in range(4))
        ax.errorbar(
            x,
            y,
            xerr=error_bars(xe),
            yerr=error_bars(ye),
            ls="none",
            marker=shapes[n % len(shapes)],
            ms=5,
            capsize=2,
            label=name,
        )
        for q in p:
            ax.annotate(q[4], (q[0], q[1]), textcoords="offset points", xytext=(4, -9), fontsize=7)
    if positive:
        ax.set_xscale("log")
        ax.set_yscale("log")
    ax.set_xlabel("reference / theory floor")
    ax.set_ylabel("measured floor")
    ax.grid(True, which="both", alpha=0.25)
    legend_below(fig)
    ax.set_title("Loss floors against the reference values")
    return fig


SINGLE, MIXTURE = "best single temperature", "best two temperatures"
# one colour per floor: a reference floor and L0's difference from it share it across the two panels
_ROOM_COLOURS = {"fitted floor $L_0$": "C0", SINGLE: "C1", MIXTURE: "C2"}


def draw_room_for_depth(rows) -> Figure:
    """Fitted floor ``L0`` against the reference floors ``single`` and ``mixture`` per spectrum, and
    their differences.

    ``rows``: dicts with ``spectrum`` (label), ``L0``, ``single``, ``mixture`` and their ``*_se``;
    the paired differences ``single_diff``, ``single_diff_se``, ``mixture_diff``, ``mixture_diff_se``
    (``L0`` minus the reference floor on the same evaluation contexts) are drawn when given, otherwise
    the difference is computed with independent errors and the panel says so.
    """
    rows = mappings("rows", rows, "spectrum, L0, single, mixture")
    good = []
    for i, r in enumerate(rows):
        if math.isfinite(finite_or_nan(r.get("L0"))) and (
            math.isfinite(finite_or_nan(r.get("single"))) or math.isfinite(finite_or_nan(r.get("mixture")))
        ):
            good.append(r)
    if not good:
        raise NoFigure("no spectrum with a fitted floor L0 and a reference floor")
    # stacked: the spectra's names under each panel need the column's whole width
    fig, axes = panel_grid(2, 6.4, 3.1, max_cols=1)
    names = [str(r.get("spectrum", r.get("label", i))) for i, r in enumerate(good)]
    losses = [
        (
            off,
            label,
            marker,
            [finite_or_nan(r.get(field)) for r in good],
            [finite_or_nan(r.get(field + "_se")) for r in good],
        )
        for off, field, label, marker in (
            (-0.15, "L0", "fitted floor $L_0$", "o"),
            (0.0, "single", SINGLE, "s"),
            (0.15, "mixture", MIXTURE, "D"),
        )
    ]
    vals = [finite_or_nan(r.get(f)) for r in good for f in ("L0", "single", "mixture")]
    log = all(v > 0 for v in vals if math.isfinite(v))  # spectra differ by orders of magnitude
    _spectrum_panel(axes[0], names, losses, "loss", "fitted and reference floors", log=log)
    unpaired = False
    diffs = []
    for off, field, label, marker in ((-0.1, "single", SINGLE, "s"), (0.1, "mixture", MIXTURE, "D")):
        ys, ses = [], []
        for r in good:
            diff, dse = finite_or_nan(r.get(field + "_diff")), finite_or_nan(r.get(field + "_diff_se"))
            if not math.isfinite(diff):
                # No paired difference given: fall back to independent errors, and say so in the legend.
                diff = finite_or_nan(r.get("L0")) - finite_or_nan(r.get(field))
                dse = math.hypot(finite_or_nan(r.get("L0_se")), finite_or_nan(r.get(field + "_se")))
                unpaired |= math.isfinite(diff)
            ys.append(diff)
            ses.append(dse)
        diffs.append((off, label, marker, ys, ses))
    title = "$L_0$ minus each reference floor, paired" + (" (some unpaired: independent s.e.)" if unpaired else "")
    _spectrum_panel(axes[1], names, diffs, "$L_0$ - floor (< 0: depth wins)", title)
    axes[1].axhline(0, color="0.3", lw=1)
    legend_below(fig)
    fig.suptitle("Room for depth: fitted floor against temperature-only heads", fontsize=10)
    return fig


def _spectrum_panel(ax, names, series, ylabel: str, title: str, log: bool = False) -> None:
    """One point per spectrum (x axis, offset a little per series) for each ``(offset, label, marker,
    values, s.e.)`` of ``series``; values that are not finite are left out."""
    x = np.arange(len(names))
    for off, label, marker, y, se in series:
        y, se = np.array(y), np.array(se)
        ok = np.isfinite(y)
        ax.errorbar(
            x[ok] + off, y[ok], yerr=error_bars(se[ok]), ls="none", marker=marker, ms=5, capsize=3,
            color=_ROOM_COLOURS[label], label=label,
        )  # fmt: skip
    ax.set_xticks(x, names, rotation=15, fontsize=8)
    if log:
        ax.set_yscale("log")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9)
    ax.grid(True, axis="y", alpha=0.25)
