"""Rules that hold for any curve, shared by the studies' claims and by ``check_prediction``'s generic claims.

Each is the measurement behind a claim, written once: the inverse-depth range of the exponent, the fit
of the layer disagreement's averaged-away term ``(A_L - C_L)/L``, the residuals of the exact
central-limit identity ``R_L = C_L + (A_L - C_L)/L``, and whether a fitted floor is a reference floor.
The verdicts stay with the claims (:mod:`~depthscale.derivations.claims.verdicts`).

Examples
--------
>>> from depthscale.derivations.analysis.estimate import Estimate
>>> ok, rel, p = floor_agreement(Estimate(0.101, 0.0005, 4, "fit", 7), 0.1)   # within 3 %, measured precisely
>>> ok, round(rel, 6)
(True, 0.01)
>>> floor_agreement(Estimate(0.2, 0.001, 4, "fit", 7), 0.1)[0]    # twice the floor
False
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...theory.clt import identity_residual
from ..analysis import fits
from ..analysis.estimate import Estimate
from ..analysis.goodness_of_fit import LOF_LEVEL, LackOfFit, lack_of_fit, least_rejected_law
from ..formatting import format_estimate
from .verdicts import decision_p, in_range, log_ratio

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


def identity_result(claim, label, curves):
    """The central-limit identity claim on these curves' runs: exact arithmetic, so the largest
    relative residual decides (at most :data:`IDENTITY_TOL`); None when no run stores the three terms."""
    res = identity_residuals(curves)
    if not res:
        return None
    worst = max(res)
    verdict = "pass" if worst <= IDENTITY_TOL else "fail"
    why = f"largest relative residual over {len(res)} runs"
    return claim.result(label, 0.0, worst, None, verdict, why, test="exact (an identity of each run)")


@dataclass(frozen=True)
class LawVerdict:
    """The inverse-depth rule on one curve (:func:`inverse_depth_verdict`).

    ``ok`` is the decision (None: undecided); ``alpha`` the fitted exponent (None when the fit is not
    identified, and then only lack of fit can decide); ``p`` the decision's p-value (the interval
    rule's :func:`~depthscale.derivations.claims.verdicts.decision_p`, or the lack-of-fit p when that
    decided), for Holm's rule within a family; ``detail`` says what was measured and what decided.
    """

    ok: bool | None
    alpha: Estimate | None
    p: float | None
    detail: str
    law: LackOfFit | None  # the least-rejected law with alpha in the band
    at_target: LackOfFit | None  # the lack-of-fit test at the claim's own target alpha

    @property
    def test(self) -> str:
        """The lack-of-fit test's name when it decided without an alpha estimate, else ``""``."""
        if self.ok is None or self.alpha is not None or self.law is None:
            return ""
        return f"lack of fit F({self.law.dof_lof}, {self.law.dof_pe}), p = {self.law.p:.2g}"


def inverse_depth_verdict(curve, fit, band: tuple[float, float] = INVERSE_DEPTH, target: float = 1.0) -> LawVerdict:
    """The one rule for "``R_L - R_inf`` falls as ``L^-alpha`` with alpha in ``band``" on ``curve``, given
    its fit of ``R_inf + c L^-alpha``: pass when the whole 95 % interval of the fitted alpha lies inside
    ``band``; fail when it lies wholly outside, or (the second route, at :data:`LOF_LEVEL`) when the
    seeds' own scatter rejects the law for every alpha in the band (a curve that stops falling after
    L = 2 has no identified alpha, yet is no inverse-depth curve); else undecided. The detail quotes
    the lack-of-fit p at the claim's own ``target`` (1), and the largest p over the band, which is
    what decides.
    """
    law = least_rejected_law(curve, band)
    rejected = law is not None and law.p < LOF_LEVEL
    at = _lack_of_fit_at(curve, target)
    note = _law_note(law, at, band, target)
    if fit.failure or not fit.identified:
        return LawVerdict(
            False if rejected else None,
            None,
            law.p if rejected and law is not None else None,
            f"fit not identified ({fit.failure or fit.reason}); {note}",
            law,
            at,
        )
    alpha = Estimate.from_fit(fit, "alpha")
    ok, p = in_range(alpha, *band), decision_p(alpha, *band)
    detail = f"alpha = {format_estimate(alpha.value, alpha.se)} [{alpha.test}]"
    if ok is None and rejected and law is not None:
        ok, p = False, law.p
    elif ok is None:
        lo, hi = alpha.value - alpha.margin, alpha.value + alpha.margin
        detail += f"; its 95 % interval [{lo:.3g}, {hi:.3g}] crosses an edge of {list(band)}"
    return LawVerdict(ok, alpha, p, f"{detail}; {note}", law, at)


def _lack_of_fit_at(curve, alpha: float) -> LackOfFit | None:
    ok = np.isfinite(curve.loss)
    Y = curve.loss[ok.all(axis=1)]
    if Y.shape[0] < 2 or curve.depths.size < 3:
        return None
    return lack_of_fit(curve.depths, Y, alpha)


def _law_note(law: LackOfFit | None, at: LackOfFit | None, band, target: float) -> str:
    if law is None:
        return "lack of fit not tested (needs 2 seeds at 3 depths)"
    word = "rejected" if law.p < LOF_LEVEL else "not rejected"
    head = f"lack of fit at alpha = {target:g}: p = {at.p:.2g}; " if at is not None else ""
    return (
        f"{head}alpha in {list(band)} {word} at {LOF_LEVEL:.0%} by the seeds' scatter "
        f"(largest p over the band {law.p:.2g}, at alpha = {law.alpha:.2f})"
    )


def floor_agreement(
    L0: Estimate, floor: float, rtol: float = FLOOR_RTOL, floor_se: float = 0.0
) -> tuple[bool | None, float, float | None]:
    """``(ok, relative difference, p)``: whether the fitted floor ``L0`` is the reference ``floor``
    (with its own independent error ``floor_se``, a Monte Carlo's) within the ratio ``1 ± rtol``, by
    the interval rule on the log-ratio ``log(L0 / floor)``
    (:func:`~depthscale.derivations.claims.verdicts.log_ratio`): True when its whole 95 % interval lies
    inside ``[log(1 - rtol), log(1 + rtol)]``, False when wholly outside, else None; ``p`` is that
    decision's p-value. A non-positive ``L0`` is below any floor: False when its interval says so."""
    rel = L0.value / floor - 1
    if L0.value <= 0:
        return (False if L0.value + L0.margin < 0 else None), rel, None
    band = (math.log1p(-rtol), math.log1p(rtol))
    r = log_ratio(L0, floor, floor_se)
    return in_range(r, *band), rel, decision_p(r, *band)


__all__ = [
    "INVERSE_DEPTH",
    "FLOOR_RTOL",
    "IDENTITY_TOL",
    "DISAGREEMENT_LAW",
    "DISAGREEMENT_TOO_FEW",
    "disagreement_fit",
    "identity_residuals",
    "floor_agreement",
    "LawVerdict",
    "inverse_depth_verdict",
]
