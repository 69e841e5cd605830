"""Rules that hold for any curve, shared by the studies' claims and by ``check_prediction``'s generic claims.

Each is the measurement behind a claim, written once: the inverse-depth range of the exponent, the fit
of the layer disagreement's averaged-away term ``(A_L - C_L)/L``, the residuals of the exact
central-limit identity ``R_L = C_L + (A_L - C_L)/L``, and whether a fitted floor is a reference floor.
The verdicts stay with the claims (:mod:`~depthscale.derivations.claims.verdicts`).

Examples
--------
>>> from depthscale.derivations.analysis.estimate import Estimate
>>> ok, rel = floor_agreement(Estimate(0.101, 0.0005, 4, "fit", 7), 0.1)   # within 3 %, measured precisely
>>> ok, round(rel, 6)
(True, 0.01)
>>> floor_agreement(Estimate(0.2, 0.001, 4, "fit", 7), 0.1)[0]    # twice the floor
False
"""

from __future__ import annotations

import math

import numpy as np

from ...theory.clt import identity_residual
from ..analysis import fits
from ..analysis.estimate import Estimate

INVERSE_DEPTH = (0.8, 1.2)  # "inverse depth": a term falls as L^-alpha with alpha in this range
FLOOR_RTOL = 0.03  # a fitted floor "is" a reference floor when within 3 % of it
IDENTITY_TOL = 1e-10  # the central-limit identity is exact arithmetic: relative residual at most this
DISAGREEMENT_LAW = "(A_L - C_L)/L = c L^-alpha"


def disagreement_fit(curve, L_min: float | None = None, L_max: float | None = None):
    """``(fit, L, D)``: the pure power law ``c L^-alpha`` fitted to the averaged-away term ``D / L`` of
    ``R_L = C_L + (A_L - C_L)/L``, where ``D = A_L - C_L`` (the record field ``gap``, seed means) at the
    depths ``L >= 2`` in the window (at L = 1 there is no pair of layers) with ``D > 0``.

    ``alpha = 1``: the disagreement is flat in depth, as the central-limit mechanism assumes;
    ``alpha < 1``: it grows. ``fit`` is None, with ``L`` and ``D`` the depths that were usable, when
    fewer than 3 are (:data:`DISAGREEMENT_TOO_FEW` says so).
    """
    lo = 2.0 if L_min is None else max(2.0, float(L_min))
    hi = math.inf if L_max is None else float(L_max)
    L, D = curve.depths.astype(float), curve.field_mean("gap")
    keep = (L >= lo) & (L <= hi) & np.isfinite(D) & (D > 0)
    if keep.sum() < 3:
        return None, L[keep], D[keep]
    return fits.fit_power_law(L[keep], D[keep] / L[keep]), L[keep], D[keep]


DISAGREEMENT_TOO_FEW = "fewer than 3 depths >= 2 with A_L - C_L > 0"


def identity_residuals(curves) -> list[float]:
    """The relative residuals of ``R_L = C_L + (A_L - C_L)/L`` of every run of these curves, recomputed
    from the stored ``R_L``, ``A_L`` and ``C_L`` (:func:`~depthscale.theory.clt.identity_residual`), or
    the run's stored ``identity_residual`` when those are missing; the finite ones only."""
    res = [
        identity_residual(r["final_loss"], r["A_L"], math.nan if r.get("C_L") is None else r["C_L"], L)
        if r.get("final_loss") is not None and r.get("A_L") is not None
        else r.get("identity_residual")
        for c in curves
        for (L, _), r in c.runs.items()
    ]
    return [float(x) for x in res if x is not None and np.isfinite(x)]


def floor_agreement(L0: Estimate, floor: float, rtol: float = FLOOR_RTOL) -> tuple[bool | None, float]:
    """``(ok, relative difference)``: whether the fitted floor ``L0`` is the reference ``floor`` within
    ``rtol``. True only when ``L0`` is measured precisely enough to tell an ``rtol`` difference
    (``t s.e. <= rtol floor``) and lies within it; False when it is further than ``rtol`` by ``t s.e.``;
    else None (too imprecise)."""
    rel = L0.value / floor - 1
    precise = L0.margin <= rtol * floor
    far = abs(rel) - L0.margin / floor > rtol
    ok = False if far else (abs(rel) <= rtol if precise else None)
    return ok, rel


__all__ = [
    "INVERSE_DEPTH",
    "FLOOR_RTOL",
    "IDENTITY_TOL",
    "DISAGREEMENT_LAW",
    "DISAGREEMENT_TOO_FEW",
    "disagreement_fit",
    "identity_residuals",
    "floor_agreement",
]
