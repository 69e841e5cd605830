"""The linear-start study's drawing: trained runs against the depth-L optimum and the population
laws, one panel per spectrum."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from matplotlib.figure import Figure

from depthscale.derivations.study import NoFigure, as_list, inverse_depth_guide, legend_below, panel_grid

CAPTION = (
    "Linear attention on the easy task, one panel per spectrum: trained R_L of each seed (open circles), the "
    "best depth-L polynomial in S = X^T X / P at the runs' own (d, P) with its band (in-sample bound to "
    "+2 s.e.), the population laws (optimal equal step, free continuum), log-log; dotted: R_inf + c/L "
    "through the seed mean's first and last points."
)
LOOK_AT = "Look at how far the open circles sit above the red optimum at each depth, and whether that gap grows with L."


def draw_optimum_vs_depth(rows) -> Figure:
    """Trained R_L (each seed), the depth-L optimum with its band and the population laws per spectrum.

    ``rows``: dicts with ``label``, ``depths``, ``seeds`` (``{seed: losses at depths}``), ``optimum``
    (``{L: (loss, se, in_sample[, equal steps])}``) and ``laws`` (``{name: (depths, losses)}``), as
    :func:`~.sections.figure_rows` makes them.
    """
    rows = as_list("rows", rows, "dicts with label, seeds, optimum, laws")
    rows = [r for r in rows if isinstance(r, Mapping) and (r.get("seeds") or r.get("optimum"))]
    if not rows:
        raise NoFigure("no linear easy-task curve with trained losses or an optimum")
    fig, axes = panel_grid(len(rows), 3.8, 3.2)
    for ax, r in zip(axes, rows):
        ax.set_xscale("log")
        ax.set_yscale("log")
        depths = np.asarray(r.get("depths", []), dtype=float)
        seeds = sorted((r.get("seeds") or {}).items())
        for seed, loss in seeds:
            y = np.asarray(loss, dtype=float)
            ok = np.isfinite(y) & (y > 0)
            ax.plot(depths[ok], y[ok], "o", ms=5, mfc="none", color="C0", label="trained (each seed)")
        if seeds:
            per_seed = np.array([np.asarray(loss, dtype=float) for _, loss in seeds])
            with np.errstate(all="ignore"):
                mean = np.nanmean(np.where(per_seed > 0, per_seed, np.nan), axis=0)
            inverse_depth_guide(ax, depths, mean, "C0")
        opt = r.get("optimum") or {}
        if opt:
            L = np.array(sorted(opt), dtype=float)
            v, se, ins = (np.array([opt[int(x)][j] for x in L], dtype=float) for j in range(3))
            # lower edge: the in-sample bound, or 2 s.e. below when that is lower and still positive
            lo = np.where(v - 2 * se > 0, np.minimum(ins, v - 2 * se), ins)
            lo = np.where(lo > 0, lo, v)
            ax.fill_between(L, lo, v + 2 * se, color="C3", alpha=0.2, lw=0)
            ax.plot(L, v, "-", color="C3", marker=".", label="optimum at this (d, P) (band: in-sample to +2 s.e.)")
            if all(len(opt[int(x)]) >= 4 for x in L):  # the best equal-step predictor, where computed
                eq = np.array([opt[int(x)][3] for x in L], dtype=float)
                ax.plot(L, eq, "-.", color="C2", marker=".", label="equal steps at this (d, P)")
        for j, (name, (Lg, val)) in enumerate(sorted((r.get("laws") or {}).items())):
            # dashed and long-dashed: dotted is the 1/L guide's
            ax.plot(Lg, val, ls=("--", (0, (8, 3)))[j % 2], color=("0.35", "0.6")[j % 2], lw=1, label=name)
        ax.set_xlabel("depth L")
        ax.set_ylabel("loss R_L")
        ax.set_title(str(r.get("label", "")), fontsize=9)
        ax.grid(True, which="both", alpha=0.25)
    legend_below(fig)
    return fig
