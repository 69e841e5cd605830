"""A depth law against the seeds' own scatter: the lack-of-fit F test of ``R_inf + c L^-alpha``.

A free fit of ``R_inf + c L^-alpha`` can fail to identify its parameters on a curve that plainly
has no such law (one that stops falling after L = 2). With two or more seeds at every depth, the
seeds' scatter says how far depth means may stray from a true law, and this test says whether
they stray further.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from ...theory._validate import check_real
from .fits import FitResult, as_vector, fit_offset_fixed_alpha

LOF_LEVEL = 0.05  # a law fails when its least-rejected alpha in the range has lack-of-fit p below this


@dataclass(frozen=True)
class LackOfFit:
    """The lack-of-fit F test of ``R_inf + c L^-alpha`` (alpha fixed) against the seeds' own scatter.

    ``F = (SS_lof / dof_lof) / (SS_pe / dof_pe)``: the depth means' squared distance from the best
    law, against the pure error (the seed-by-depth interaction of log R); ``p`` is its upper tail
    under the F distribution. A small ``p``: the law cannot describe these depth means.
    """

    alpha: float
    F: float
    dof_lof: int
    dof_pe: int
    p: float
    fit: FitResult  # the law at this alpha, fitted to the depth means of log R


def lack_of_fit(L, losses, alpha: float = 1.0) -> LackOfFit:
    """Can ``R_inf + c L^-alpha`` (alpha fixed) describe these curves, given their seed-to-seed scatter?

    ``losses`` is ``(n_seeds, n_depths)``, every seed at every depth. Seeds are blocks: a seed
    shares its evaluation contexts (and often its data stream) across depths, so a seed that is
    better at one depth tends to be better at all. The model is ``log R_sj = s_s + log m(L_j) + e``;
    the pure error is the seed-by-depth interaction (``(S - 1)(J - 1)`` degrees of freedom), and
    the lack of fit is the depth means' weighted distance from the law fitted to them (``J - 2``).

    Examples
    --------
    >>> import numpy as np
    >>> L = 2.0 ** np.arange(6)
    >>> noise = np.array([[0.01, -0.01, 0.0, 0.01, -0.01, 0.0], [-0.01, 0.01, 0.0, -0.01, 0.01, 0.0]])
    >>> lack_of_fit(L, (0.5 + 2.0 / L) * np.exp(noise)).p > 0.5
    True
    >>> lack_of_fit(L, (0.5 + 2.0 * L**-0.3) * np.exp(noise)).p < 1e-3
    True
    """
    L = as_vector("L", L, True)
    Y = np.log(_positive_matrix("losses", losses, L.size))
    S, J = Y.shape
    if S < 2 or J < 3:
        raise ValueError(f"losses has shape {Y.shape}: must have at least 2 seeds and 3 depths")
    alpha = check_real("alpha", alpha, lo=0, lo_open=True)
    ybar = Y.mean(axis=0)
    inter = Y - Y.mean(axis=1, keepdims=True) - ybar + Y.mean()
    dof_lof, dof_pe = J - 2, (S - 1) * (J - 1)
    fit = fit_offset_fixed_alpha(
        L, np.exp(ybar), np.full(J, float(S)), alpha, None, model="offset_power_alpha", cap=False
    )
    pure = float(np.sum(inter**2)) / dof_pe
    F = (fit.ssr / dof_lof) / pure if pure > 0 else math.inf
    return LackOfFit(alpha, F, dof_lof, dof_pe, float(stats.f.sf(F, dof_lof, dof_pe)), fit)


def _positive_matrix(name: str, x, n_cols: int) -> np.ndarray:
    a = np.asarray(x, dtype=float)
    if a.ndim != 2 or a.shape[1] != n_cols or not np.all(np.isfinite(a)) or np.any(a <= 0):
        raise ValueError(f"{name}: must be a (seeds, {n_cols}) array of finite positive losses")
    return a


def least_rejected_law(curve, alpha_range: tuple[float, float]) -> LackOfFit | None:
    """The least-rejected law ``R_inf + c L^-alpha`` with alpha in ``alpha_range`` on a curve's seeds:
    the lack-of-fit test (:func:`lack_of_fit`) at nine alphas across the range, with the largest p.
    The range is rejected only if each alpha is, so the test keeps its level. The table must be
    complete: the seeds that reached every depth, or, with fewer than 2 such seeds, the depths every
    seed reached. None with fewer than 2 seeds or 3 depths left. ``curve``: a
    :class:`~depthscale.derivations.analysis.curve.Curve` (its ``loss`` by seed and depth, ``depths``)."""
    ok = np.isfinite(curve.loss)
    seeds, depths = ok.all(axis=1), ok.all(axis=0)
    Y, L = (curve.loss[seeds], curve.depths) if seeds.sum() >= 2 else (curve.loss[:, depths], curve.depths[depths])
    if Y.shape[0] < 2 or L.size < 3:
        return None
    return max((lack_of_fit(L, Y, float(a)) for a in np.linspace(alpha_range[0], alpha_range[1], 9)), key=lambda t: t.p)


def law_rejected(curve, alpha_range: tuple[float, float], level: float = LOF_LEVEL) -> tuple[bool, LackOfFit | None]:
    """Whether the seeds' own scatter rejects ``R_inf + c L^-alpha`` for every alpha in ``alpha_range``
    (:func:`least_rejected_law` below ``level``), and that least-rejected test (None: too few seeds or
    depths to test, never a rejection). The rule the studies share for "this curve has no such law"."""
    law = least_rejected_law(curve, alpha_range)
    return law is not None and law.p < level, law


__all__ = ["LOF_LEVEL", "LackOfFit", "lack_of_fit", "law_rejected", "least_rejected_law"]
