"""Notebook displays of fits and curves: small HTML tables with intervals and whether a fit is
identified (what :meth:`FitResult._repr_html_` and :meth:`Curve._repr_html_` return), their short
text reprs and their lmfit-style text reports (:func:`fit_report`, :func:`curve_report`)."""

from __future__ import annotations

import html
import math

from ...theory.display import html_grid, html_table
from ..formatting import format_estimate, format_interval, format_value


def window_text(lo: float, hi: float) -> str:
    """A depth window in words: ``"L <= 8"``, ``"4 <= L <= 32"``, ``"L >= 2"``, ``"all depths"``.

    >>> window_text(-math.inf, 8.0), window_text(4.0, 32.0), window_text(2.0, math.inf), window_text(0.5, 0.868)
    ('L <= 8', '4 <= L <= 32', 'L >= 2', '0.5 <= L <= 0.868')
    """
    if math.isfinite(lo) and math.isfinite(hi):
        return f"{lo:.3g} <= L <= {hi:.3g}"
    if math.isfinite(lo):
        return f"L >= {lo:.3g}"
    return f"L <= {hi:.3g}" if math.isfinite(hi) else "all depths"


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


def _points_text(fit) -> str:
    """``"9 points at 3 depths"`` when some depths repeat (seed-level points), else ``"5 points"``."""
    if fit.data is not None:
        distinct = len({float(x) for x in fit.data[0]})
        if distinct < fit.n:
            return f"{fit.n} points at {distinct} depths"
    return f"{fit.n} points"


def depths_text(fit) -> str:
    """The depths a curve's fit used and its window: ``"L = 1, 2, 4, 8 (window L <= 8)"``; ``""`` for a
    fit to bare arrays.

    >>> from depthscale.derivations.analysis.fits import FitResult
    >>> depths_text(FitResult.missing("power_law", "none")), depths_text(FitResult("power_law", {}, {}, 1.0, 0.0,
    ...     0.0, 3, 1, depths=(1, 2, 4), window=(-math.inf, 4.0)))
    ('', 'L = 1, 2, 4 (window L <= 4)')
    """
    text = f"L = {', '.join(str(int(x)) for x in fit.depths)}" if fit.depths else ""
    if fit.window is not None:
        text += f"{' ' if text else ''}(window {window_text(*fit.window)})"
    return text


def fit_repr(fit) -> str:
    """A few lines: the law, the points, whether identified (or why not), the parameters ± s.e.

    Examples
    --------
    >>> import numpy as np
    >>> from depthscale.derivations.analysis.fits import fit_power_law
    >>> print(fit_repr(fit_power_law(2.0 ** np.arange(5), 3.0 * 2.0 ** -np.arange(5) * [1, 1.01, 0.99, 1, 1.02])))
    <FitResult power_law: c L^-alpha, 5 points, dof 3, identified
      c = 2.994 ± 0.028, alpha = 0.9957 ± 0.0054; R^2 of log R = 0.9999>
    """
    if fit.failure:
        return f"<FitResult {fit.kind}: {fit.law}, no fit ({fit.failure})>"
    ok, why = fit.identification()
    params = ", ".join(f"{k} = {format_estimate(v, fit.se.get(k))}" for k, v in fit.params.items())
    params += "".join(f", {k} = {format_value(v)} (fixed)" for k, v in fit.fixed.items())
    where = f" at {depths_text(fit)}" if fit.depths else ""
    return (
        f"<FitResult {fit.kind}: {fit.law}, {_points_text(fit)}{where}, dof {fit.dof}, "
        f"{'identified' if ok else 'not identified: ' + why}\n  {params}; R^2 of log R = {format_value(fit.r2)}>"
    )


def fit_report(fit, min_correl: float = 0.1) -> str:
    """An lmfit-style text report: the law, the fit statistics, the variables (value ± s.e., relative
    error, 95 % interval clipped to the range, profile and bootstrap intervals, range), whether the
    fit is identified or why not, and the correlations of the parameters above ``min_correl``.

    Examples
    --------
    >>> import numpy as np
    >>> from depthscale.derivations.analysis.fits import fit_offset_power
    >>> L = 2.0 ** np.arange(6)
    >>> f = fit_offset_power(L, (0.5 + 2.0 / L) * np.exp(0.01 * np.array([1, -1, 1, -1, 1, -1])))
    >>> text = fit_report(f)
    >>> print(text.splitlines()[0])
    [[Model]] L0 + c L^-alpha (offset_power)
    >>> "[[Correlations]]" in text and "C(L0, alpha)" in text
    True
    """
    lines = [f"[[Model]] {fit.law} ({fit.kind})"]
    if fit.failure:
        return "\n".join([*lines, f"    no fit: {fit.failure}"])
    ok, why = fit.identification()
    lines += [
        "[[Fit Statistics]]",
        f"    data points        = {_points_text(fit)}",
        *([f"    depths fitted      = {depths_text(fit)}"] if fit.depths or fit.window is not None else []),
        f"    free parameters    = {len(fit.names)}",
        f"    degrees of freedom = {fit.dof}",
        f"    SSR of log R       = {format_value(fit.ssr)}",
        f"    R^2 of log R       = {format_value(fit.r2)}",
        f"    AIC                = {format_value(fit.aic)}",
    ]
    if math.isfinite(fit.delta_aic_alpha_one):
        lines.append(f"    dAIC(alpha=1-free) = {format_value(fit.delta_aic_alpha_one)}")
    if fit.huber is not None:
        lines.append(f"    Huber scale        = {format_value(fit.huber)}")
    lines += ["[[Identified]]", f"    {'yes' if ok else 'no: ' + why}", "[[Variables]]"]
    boot = fit.bootstrap.intervals if fit.bootstrap is not None else {}
    width = max((len(k) for k in [*fit.params, *fit.fixed]), default=1)
    for k, v in fit.params.items():
        se = fit.se.get(k, math.nan)
        rel = f" ({100 * se / abs(v):.2f}%)" if math.isfinite(se) and v != 0 else ""
        lo, hi = fit.interval(k)
        parts = [f"    {k:<{width}}: {format_estimate(v, se)}{rel}"]
        parts.append(f"95%: {format_interval(lo, hi) if math.isfinite(lo) else '—'}")
        plo, phi = fit.profile_interval(k) if k == "alpha" else (math.nan, math.nan)
        if math.isfinite(plo):
            parts.append(f"profile 95%: {format_interval(plo, phi)}")
        if k in boot:
            parts.append(f"bootstrap 95%: {format_interval(*boot[k])}")
        parts.append(f"range {_range_text(*fit.param_range(k))}")
        lines.append(", ".join(parts))
    lines.extend(f"    {k:<{width}}: {format_value(v)} (fixed)" for k, v in fit.fixed.items())
    if fit.bootstrap is not None:
        b = fit.bootstrap
        lines.append(f"    (bootstrap: {b.n_ok} of {b.n_boot} resamples of {b.n_seeds} seeds)")
    elif fit.bootstrap_refused:
        lines.append(f"    ({fit.bootstrap_refused})")
    corr = correlations(fit)
    shown = sorted(((a, b, r) for (a, b), r in corr.items() if abs(r) > min_correl), key=lambda t: -abs(t[2]))
    if shown:
        lines.append(f"[[Correlations]] (unreported correlations are < {min_correl:g})")
        lines.extend(f"    C({a}, {b}) = {r:+.4f}" for a, b, r in shown)
    return "\n".join(lines)


def correlations(fit) -> dict:
    """``{(a, b): r}``: the correlation of each pair of free parameters, from the fit's covariance.

    Examples
    --------
    >>> import numpy as np
    >>> from depthscale.derivations.analysis.fits import fit_power_law
    >>> L = 2.0 ** np.arange(5)
    >>> r = correlations(fit_power_law(L, 3.0 * L ** -1.0 * [1, 1.01, 0.99, 1, 1.02]))
    >>> list(r), round(r["c", "alpha"], 4)  # log L is centred at 1.386: c and alpha move together
    ([('c', 'alpha')], 0.8165)
    """
    names, cov = fit.names, fit.cov
    out = {}
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            denom = math.sqrt(cov[i][i] * cov[j][j]) if cov[i][i] > 0 and cov[j][j] > 0 else math.nan
            out[(names[i], names[j])] = cov[i][j] / denom if math.isfinite(denom) and denom > 0 else math.nan
    return out


def fit_html(fit) -> str:
    """A :class:`~depthscale.derivations.analysis.fits.FitResult` as a caption (law, identified
    or why not) and its parameter table; a fit that could not be made shows its reason only."""
    law = fit.law
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


def curve_repr(curve) -> str:
    """A few lines: the condition, its size (depths x seeds, runs, unconverged) and the seed-mean
    loss at each depth (the first and last three when there are many).

    Examples
    --------
    >>> from depthscale.derivations.analysis.curve import curves
    >>> rec = lambda L, s: {"status": "ok", "seed": s, "converged": True, "final_loss": 0.5 + 0.4 / L,
    ...     "config": {"task": {"task": "topk", "k": 2, "a": 0.0, "b": 0.0, "d": 8, "P": 32},
    ...                "model": {"model": "softmax", "depth": L}, "train": {"steps": 10}}}
    >>> print(repr(curves([rec(L, s) for L in (1, 2, 4) for s in (0, 1)])[0]))
    <Curve softmax top-2 (a,b)=(0,0) d=8 P=32: 3 depths x 2 seeds, 6 runs, all converged
      R_L (seed mean): L=1 0.9 ± 0, L=2 0.7 ± 0, L=4 0.6 ± 0>
    """
    n_runs = len(curve.runs)
    conv = "all converged" if curve.all_converged else f"{curve.n_unconverged} unconverged"
    cells = [f"L={int(L)} {format_estimate(m, e)}" for L, m, e in zip(curve.depths, curve.mean, curve.error_bar)]
    if len(cells) > 6:
        cells = [*cells[:3], "...", *cells[-3:]]

    def count(n, word):
        return f"{n} {word}{'' if n == 1 else 's'}"

    size = f"{count(len(curve.depths), 'depth')} x {count(len(curve.seeds), 'seed')}, {count(n_runs, 'run')}"
    return f"<Curve {curve.label}: {size}, {conv}\n  R_L (seed mean): {', '.join(cells)}>"


def curve_report(curve, kind=None, points: str = "auto", *, L_min=None, L_max=None) -> str:
    """The curve's losses by depth and the :func:`fit_report` of its fit ``kind`` (default: the law
    the claims test) in the depth window ``L_min <= L <= L_max``, without a bootstrap."""
    kind = curve.default_kind if kind is None else kind
    fit = curve.fit(kind, n_boot=0, points=points, L_min=L_min, L_max=L_max)
    head = [f"[[Curve]] {curve.label}", f"    {len(curve.depths)} depths x {len(curve.seeds)} seeds"]
    head += [f"    L = {L:<4d} R_L = {a}  ({n} seeds, {u} unconverged)" for L, a, n, u in curve_rows(curve)]
    return "\n".join(head) + "\n" + fit_report(fit)


__all__ = [
    "depths_text",
    "fit_rows",
    "fit_html",
    "fit_repr",
    "fit_report",
    "correlations",
    "curve_rows",
    "curve_html",
    "curve_repr",
    "curve_report",
]
