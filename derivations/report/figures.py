"""The library's figure kinds for reports: :func:`figure_entry` makes the
:class:`~depthscale.derivations.report.entries.FigureEntry` of one (drawn later, once, by the report
builder), :func:`build` draws one as a matplotlib ``Figure`` for inspection, and :func:`overview`,
:func:`mode_curves` and :func:`decomposition` return PNG bytes, or ``None`` when there is nothing
to draw. A study's own figures are entries it makes with its own drawing functions.

Runs are grouped into series exactly as claims group them: by
:func:`depthscale.derivations.analysis.curve_key` (the whole configuration except depth), whose
first entries are ``(model, variant, task, k, a, b, d, P)``. Fits can be attached to a series by
its full key or by selectors on those first eight entries; a fit that is not identified is not drawn.

Examples
--------
>>> from depthscale.derivations.report.entries import draw_entry
>>> rec = lambda L: {"config": {"task": {"task": "topk", "k": 2, "a": 0, "b": 0, "d": 16, "P": 128},
...     "model": {"model": "softmax", "depth": L}}, "status": "ok", "final_loss": 1.5 + 1 / L,
...     "A_L": 2.5 + 0.1 / L, "C_L": 1.5 + 0.1 / L}
>>> e = figure_entry("decomposition", [rec(L) for L in (2, 4, 8)])
>>> e.name, draw_entry(e).png[:4]
('decomposition', b'\\x89PNG')
>>> draw_entry(figure_entry("decomposition", [])).why_missing
'no runs of depth >= 2 with finite A_L and C_L'
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from matplotlib.figure import Figure

from ...theory._validate import bad_argument
from .entries import FigureEntry, NoFigure
from .figure_drawings import draw_decomposition, draw_excess_vs_depth, draw_mode_curves, draw_overview, to_png

__all__ = ["FIGURES", "build", "figure_entry", "overview", "mode_curves", "decomposition"]

FIGURES: dict[str, tuple[Callable[..., Figure], str]] = {
    "overview": (
        draw_overview,
        "Loss against depth for linear and softmax attention on the easy and difficult tasks, "
        "log-log, mean over seeds with one-s.e. error bars, coloured by spectrum (a,b); fitted laws dashed.",
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
    >>> fig, why = build("decomposition", [])
    >>> fig is None, why
    (True, 'no runs of depth >= 2 with finite A_L and C_L')
    """
    if name not in FIGURES:
        bad_argument("name", name, "one of " + ", ".join(FIGURES))
    try:
        return FIGURES[name][0](*args, **kwargs), ""
    except NoFigure as exc:
        return None, str(exc)


def figure_entry(
    kind: str,
    *args,
    caption: str | None = None,
    name: str | None = None,
    look_at: str = "",
    finding: str = "",
    **kwargs,
) -> FigureEntry:
    """The :class:`~depthscale.derivations.report.entries.FigureEntry` of one of the :data:`FIGURES`
    kinds drawn from ``args`` and ``kwargs`` (``name``: its file name, default the kind; ``caption``:
    default the kind's); the report builder draws it.

    Examples
    --------
    >>> from depthscale.derivations.report.entries import draw_entry
    >>> e = figure_entry("excess_vs_depth", [], name="my_excess")
    >>> e.name, draw_entry(e).why_missing
    ('my_excess', 'no curve with an identified fit')
    """
    if kind not in FIGURES:
        bad_argument("kind", kind, "one of " + ", ".join(FIGURES))
    return FigureEntry(
        name or kind,
        partial(FIGURES[kind][0], *args, **kwargs),
        FIGURES[kind][1] if caption is None else caption,
        look_at,
        finding,
    )


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
