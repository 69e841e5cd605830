"""Figures of a depth-scaling report, drawn with matplotlib's Agg canvas and returned as PNG bytes.

Every public figure function takes plain data (run records or rows of dicts), never writes a file
and returns the PNG as ``bytes``, or ``None`` when there is nothing to draw. :func:`figure_entry`
wraps a figure function into the ``{"name", "caption", "png", "why_missing"}`` entry that
:mod:`depthscale.derivations.report.render` expects, carrying the reason whenever a figure is not drawn.

Runs are grouped into series exactly as claims group them: by
:func:`depthscale.derivations.analysis.curve_key` (the whole configuration except depth), whose
first entries are ``(model, variant, task, k, a, b, d, P)``. Fits can be attached to a series by
its full key or by selectors on those first eight entries; a fit that is not identified is not drawn.

Examples
--------
>>> rows = [{"a": 2, "b": 1, "alpha": 1.4, "alpha_se": 0.05, "series": "linear easy"}]
>>> png = exponents_vs_zeta(rows)
>>> png[:4] == b"\\x89PNG"
True
>>> exponents_vs_zeta([]) is None
True
"""

from __future__ import annotations

from collections.abc import Callable

from matplotlib.figure import Figure

from ...theory._validate import bad_argument
from .figure_drawings import (
    NoFigure,
    draw_decomposition,
    draw_excess_vs_depth,
    draw_exponents_vs_zeta,
    draw_floors,
    draw_mode_curves,
    draw_optimum_vs_depth,
    draw_overview,
    draw_room_for_depth,
    to_png,
)

__all__ = [
    "FIGURES",
    "build",
    "figure_entry",
    "overview",
    "exponents_vs_zeta",
    "mode_curves",
    "decomposition",
    "floors",
    "room_for_depth",
    "optimum_vs_depth",
]

FIGURES: dict[str, tuple[Callable[..., Figure], str]] = {
    "overview": (
        draw_overview,
        "Loss against depth for linear and softmax attention on the easy and difficult tasks, "
        "log-log, mean over seeds with one-s.e. error bars, coloured by spectrum (a,b); fitted laws dashed.",
    ),
    "exponents_vs_zeta": (
        draw_exponents_vs_zeta,
        "Fitted depth exponents against zeta = (a+b-1)/a with the lines zeta "
        "and 2 zeta; crosses are the paper's trained exponents of linear attention on the easy task "
        "(derivations/reference_values.py).",
    ),
    "mode_curves": (
        draw_mode_curves,
        "Per-mode loss normalised by lambda_k omega_k (the zero predictor's loss on the easy "
        "task) against depth: linear attention learns modes one after another, softmax in parallel.",
    ),
    "decomposition": (
        draw_decomposition,
        "Cross-layer error covariance C_L (mean E[e_l e_m] over pairs of layers; negative "
        "when layer errors cancel, as in linear attention) and layer disagreement A_L - C_L against "
        "depth (R_L = C_L + (A_L - C_L)/L).",
    ),
    "floors": (
        draw_floors,
        "Measured loss floors against reference or theory values, with error bars; the line is equality.",
    ),
    "room_for_depth": (
        draw_room_for_depth,
        "Fitted floor L0 against two reference floors, the best single temperature-only head and the best "
        "two-temperature mixture, per spectrum; right: differences with paired standard errors.",
    ),
    "optimum_vs_depth": (
        draw_optimum_vs_depth,
        "Linear attention on the easy task, per spectrum: trained R_L of each seed (open symbols), the best "
        "depth-L polynomial in S = X^T X / P at the runs' own (d, P) with its band (in-sample bound to "
        "+2 s.e.), and the population laws (optimal equal step, free continuum), log-log.",
    ),
    "excess_vs_depth": (
        draw_excess_vs_depth,
        "The excess R_L - R_inf over each curve's fitted plateau against depth, log-log, one panel per "
        "task, one colour per series; dotted lines are L^-1 through each curve's first point.",
    ),
    "signed_excess_vs_depth": (
        lambda rows: draw_excess_vs_depth(
            rows, "R_L - single head (paired)", "no curve with stored errors and a single-head floor", signed=True
        ),
        "R_L minus the best single temperature head on the same contexts against depth, log-log "
        "(symmetric-log, linear near 0, when some depth is at or below the head), one colour per series; "
        "dotted lines are L^-1 through each curve's first point.",
    ),
}


# ----------------------------------------------------------------------------------------------
# public API


def build(name: str, *args, **kwargs) -> tuple[Figure | None, str]:
    """Build the named figure as a matplotlib ``Figure`` (for inspection) and the reason if it is not drawn.

    Returns ``(figure, "")`` or ``(None, why)``. Bad input raises ``ValueError``.

    Examples
    --------
    >>> fig, why = build("floors", [])
    >>> fig is None, why
    (True, 'no floor with both a measured and a reference value')
    """
    if name not in FIGURES:
        bad_argument("name", name, "one of " + ", ".join(FIGURES))
    try:
        return FIGURES[name][0](*args, **kwargs), ""
    except NoFigure as exc:
        return None, str(exc)


def figure_entry(kind: str, *args, caption: str | None = None, name: str | None = None, **kwargs) -> dict:
    """Draw a figure of one of the :data:`FIGURES` kinds into the entry a report expects:
    ``{"name", "caption", "png", "why_missing"}`` (``name``: the figure's file name, default the
    kind; ``caption``: default the kind's).

    Examples
    --------
    >>> e = figure_entry("room_for_depth", [])
    >>> e["png"] is None, e["why_missing"]
    (True, 'no spectrum with a fitted floor L0 and a reference floor')
    """
    fig, why = build(kind, *args, **kwargs)
    return {
        "name": name or kind,
        "caption": caption if caption is not None else FIGURES[kind][1],
        "png": None if fig is None else to_png(fig),
        "why_missing": why,
    }


def _png_or_none(name, *args, **kwargs) -> bytes | None:
    fig, _ = build(name, *args, **kwargs)
    return None if fig is None else to_png(fig)


def overview(records, fits=None, converged_only: bool = False) -> bytes | None:
    """Four panels (linear/softmax x easy/difficult) of loss against depth, log-log, as PNG bytes.

    Parameters
    ----------
    records : list of run-record dicts (docs/engine-contract.md; only ``status == "ok"`` runs enter),
        or of :class:`~depthscale.derivations.analysis.Curve` objects.
    fits : optional; a dict ``{curve key or a prefix of its first eight entries: fit}`` or a list of dicts holding
        selectors (``model``, ``variant``, ``task`` or ``kind`` in {"easy", "difficult"}, ``k``, ``a``,
        ``b``, ``d``, ``P``) and ``fit``. A fit is a ``FitResult`` (drawn only when identified), a dict
        with ``params``, or ``{"L0", "c", "alpha"}`` (``L0`` absent means a pure power law). Drawn dashed.
    converged_only : drop runs that did not converge.

    Returns
    -------
    PNG bytes, or None when no run has a positive final loss.

    Examples
    --------
    >>> rec = lambda L, s: {"config": {"task": {"task": "topk", "k": 2, "a": 0.5, "b": 0.5, "d": 16, "P": 128},
    ...     "model": {"model": "softmax", "depth": L}}, "seed": s, "status": "ok", "final_loss": 1 + 1 / L}
    >>> png = overview([rec(L, s) for L in (1, 2, 4) for s in (0, 1)], {("softmax",): {"L0": 1, "c": 1, "alpha": 1}})
    >>> png.startswith(b"\\x89PNG")
    True
    """
    return _png_or_none("overview", records, fits, converged_only=converged_only)


def exponents_vs_zeta(rows, reference=None) -> bytes | None:
    """Fitted exponents against ``zeta = (a + b - 1)/a`` with the lines zeta and 2 zeta, as PNG bytes.

    ``rows``: dicts with ``a``, ``b``, ``alpha`` and optional ``alpha_se``, ``series`` (legend group)
    and ``reference`` (the paper's exponent). ``reference``: extra paper points as ``(a, b, alpha)``
    triples or dicts, e.g. from ``reference_values.LINEAR_EASY_EXPONENTS``. Rows where zeta is
    undefined are skipped.

    Examples
    --------
    >>> exponents_vs_zeta([{"a": 1, "b": 2, "alpha": 2.5}], [(2.0, 1.0, 1.485)])[:4]
    b'\\x89PNG'
    """
    return _png_or_none("exponents_vs_zeta", rows, reference)


def mode_curves(records, converged_only: bool = False) -> bytes | None:
    """Per-mode normalised loss against depth, linear beside softmax, as PNG bytes.

    Uses each record's ``mode_losses`` divided by ``lambda_k omega_k`` from its task config; per
    model it draws the series with the most depths (preferring the easy task) and up to six modes.

    Examples
    --------
    >>> rec = lambda L: {"config": {"task": {"task": "easy-exact", "a": 1, "b": 1, "d": 8, "P": 64},
    ...     "model": {"model": "linear", "depth": L}}, "status": "ok",
    ...     "mode_losses": [k ** -2.0 * (1 - 1 / k) ** (2 * L) for k in range(1, 9)]}
    >>> mode_curves([rec(L) for L in (1, 2, 4, 8)])[:4]
    b'\\x89PNG'
    """
    return _png_or_none("mode_curves", records, converged_only=converged_only)


def decomposition(records, converged_only: bool = False) -> bytes | None:
    """``C_L`` and ``A_L - C_L`` against depth (runs of depth >= 2), as PNG bytes.

    Examples
    --------
    >>> rec = lambda L: {"config": {"task": {"task": "topk", "k": 2, "a": 0, "b": 0, "d": 16, "P": 128},
    ...     "model": {"model": "softmax", "depth": L}}, "status": "ok", "final_loss": 1.5 + 1 / L,
    ...     "A_L": 2.5 + 0.1 / L, "C_L": 1.5 + 0.1 / L}
    >>> decomposition([rec(L) for L in (2, 4, 8)])[:4]
    b'\\x89PNG'
    """
    return _png_or_none("decomposition", records, converged_only=converged_only)


def floors(rows) -> bytes | None:
    """Measured floors against reference/theory values with error bars, as PNG bytes.

    ``rows``: dicts with ``label``, ``measured``, ``reference`` (or ``theory``) and optional
    ``measured_se``, ``reference_se`` and ``group`` (legend entry).

    Examples
    --------
    >>> floors([{"label": "(1,1)", "measured": 0.504, "measured_se": 0.003, "reference": 0.498}])[:4]
    b'\\x89PNG'
    """
    return _png_or_none("floors", rows)


def room_for_depth(rows) -> bytes | None:
    """Fitted floor ``L0`` against the reference floors ``single`` and ``mixture`` (the best single and
    two-temperature heads) per spectrum, as PNG bytes.

    ``rows``: dicts with ``spectrum`` (label), ``L0``, ``single``, ``mixture`` and their ``*_se``;
    the paired differences ``single_diff``, ``single_diff_se``, ``mixture_diff``, ``mixture_diff_se``
    (``L0`` minus the reference floor on the same evaluation contexts) are drawn when given, otherwise the
    difference is computed with independent errors and the panel says so.

    Examples
    --------
    >>> room_for_depth([{"spectrum": "(0,0)", "L0": 1.90, "L0_se": 0.01, "single": 1.978, "single_se": 0.01,
    ...             "mixture": 1.932, "mixture_se": 0.01, "single_diff": -0.07, "single_diff_se": 0.009}])[:4]
    b'\\x89PNG'
    """
    return _png_or_none("room_for_depth", rows)


def optimum_vs_depth(rows) -> bytes | None:
    """Trained R_L (each seed), the depth-L optimum with its band and the population laws per spectrum, as PNG bytes.

    ``rows``: dicts with ``label``, ``depths``, ``seeds`` (``{seed: losses at depths}``), ``optimum``
    (``{L: (loss, se, in_sample)}``) and ``laws`` (``{name: (depths, losses)}``), as made by
    a study's sections.

    Examples
    --------
    >>> row = {"label": "(2,1)", "depths": [1, 2, 4], "seeds": {"0": [0.15, 0.08, 0.03]},
    ...        "optimum": {1: (0.14, 0.001, 0.14), 4: (0.026, 0.001, 0.025)}, "laws": {"free": ([1, 4], [0.1, 0.01])}}
    >>> optimum_vs_depth([row])[:4]
    b'\\x89PNG'
    """
    return _png_or_none("optimum_vs_depth", rows)
