"""Notebook displays of fits and curves: small HTML tables with intervals and whether a fit is
identified (what :meth:`FitResult._repr_html_` and :meth:`Curve._repr_html_` return)."""

from __future__ import annotations

import html
import math

from ...theory.display import html_grid, html_table
from ..formatting import format_estimate, format_interval, format_value

LAWS = {"offset_power": "L0 + c L^-alpha", "power_law": "c L^-alpha", "gap": "L0 - C_L = c L^-alpha"}


def _range_text(lo: float, hi: float) -> str:
    if not math.isfinite(lo) and not math.isfinite(hi):
        return "any"
    return (
        f"{'[' if math.isfinite(lo) else '('}{format_value(lo)}, {format_value(hi)}{']' if math.isfinite(hi) else ')'}"
    )


def fit_rows(fit) -> list:
    """One row per parameter: name, value ± s.e., 95 % interval (clipped to the range), bootstrap
    interval, range; fixed parameters last with "fixed".

    Examples
    --------
    >>> import numpy as np
    >>> from depthscale.derivations.analysis.fits import fit_power_law
    >>> f = fit_power_law(2.0 ** np.arange(5), 3.0 * 2.0 ** -np.arange(5) * [1, 1.01, 0.99, 1, 1.02])
    >>> [row[0] for row in fit_rows(f)], fit_rows(f)[1][4]
    (['c', 'alpha'], 'any')
    """
    boot = fit.bootstrap.intervals if fit.bootstrap is not None else {}
    rows = []
    for k in fit.params:
        lo, hi = fit.interval(k)
        ci = format_interval(lo, hi) if math.isfinite(lo) else "—"
        b = format_interval(*boot[k]) if k in boot else "—"
        rows.append((k, format_estimate(fit.params[k], fit.se.get(k)), ci, b, _range_text(*fit.param_range(k))))
    rows.extend((k, format_value(v), "fixed", "—", "—") for k, v in fit.fixed.items())
    return rows


def fit_html(fit) -> str:
    """A :class:`~depthscale.derivations.analysis.fit_results.FitResult` as a caption (law, identified
    or why not) and its parameter table; a fit that could not be made shows its reason only."""
    law = LAWS.get(fit.kind.split("_alpha")[0].replace("_fixed", ""), fit.kind)
    if fit.failure:
        return f"<p><b>{html.escape(law)}</b>: no fit ({html.escape(fit.failure)})</p>"
    ok, why = fit.identification()
    status = "identified" if ok else f"not identified: {why}"
    caption = f"{law} ({fit.kind}): {status}"
    table = html_grid(
        ["parameter", "value ± s.e.", "95% interval (clipped)", "bootstrap 95%", "range"], fit_rows(fit), caption
    )
    stats = [
        ("R² of log R", format_value(fit.r2)),
        ("points, dof", f"{fit.n}, {fit.dof}"),
        ("AIC", format_value(fit.aic)),
    ]
    if math.isfinite(fit.delta_aic_alpha_one):
        stats.append(("ΔAIC(α = 1 − free)", format_value(fit.delta_aic_alpha_one)))
    if fit.bootstrap is not None:
        b = fit.bootstrap
        stats.append(("bootstrap", f"{b.n_ok} of {b.n_boot} resamples of {b.n_seeds} seeds"))
    elif fit.bootstrap_refused:
        stats.append(("bootstrap", fit.bootstrap_refused))
    return f"<div>{table}{html_table(stats)}</div>"


def curve_rows(curve) -> list:
    """One row per depth: depth, seed-mean loss ± s.e., seeds with a run, unconverged runs.

    Examples
    --------
    >>> from depthscale.derivations.analysis.curve import curves
    >>> rec = lambda L, s: {"status": "ok", "seed": s, "converged": True, "final_loss": 0.5 + 0.4 / L,
    ...     "config": {"task": {"task": "topk", "k": 2, "a": 0.0, "b": 0.0, "d": 8, "P": 32},
    ...                "model": {"model": "softmax", "depth": L}, "train": {"steps": 10}}}
    >>> (c,) = curves([rec(L, s) for L in (1, 2) for s in (0, 1)])
    >>> curve_rows(c)[0]
    (1, '0.9 ± 0', 2, 0)
    """
    rows = []
    for j, L in enumerate(curve.depths):
        recs = curve.records_at(int(L))
        unconverged = sum(not r.get("converged", False) for r in recs)
        rows.append((int(L), format_estimate(curve.mean[j], curve.error_bar[j]), len(recs), unconverged))
    return rows


def curve_html(curve) -> str:
    """A :class:`~depthscale.derivations.analysis.curve.Curve` as its label, its losses by depth and
    its default fit (no bootstrap: a display never starts hundreds of fits)."""
    losses = html_grid(["L", "R_L (seed mean ± s.e.)", "seeds", "unconverged"], curve_rows(curve), curve.label)
    return f"<div>{losses}{fit_html(curve.fit(curve.default_kind, n_boot=0))}</div>"


__all__ = ["fit_rows", "fit_html", "curve_rows", "curve_html"]
