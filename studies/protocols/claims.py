"""The training-protocol study's claims: where inverse-depth scaling of softmax attention comes from.

The ``protocol`` preset trains the softmax model under five training protocols that differ in
where the layers' diversity comes from (the table :data:`depthscale.sims.protocols.PROTOCOLS`). Its
claims read one row per (protocol, task) curve (:func:`~depthscale.derivations.study.protocol_rows`:
the curve's protocol recognised from its configuration, its runs paired with the infinite-depth
reference floors of its task on the same evaluation contexts) and are listed in the study's record
(:data:`CLAIMS`; definitions in docs/claims.md, the study in docs/studies/protocols.md).

Per protocol curve: the fit ``R_L = R_inf + c L^-alpha``, the layer disagreement ``A_L - C_L``
(the part of the layers' errors that averages away), the mean single-layer loss ``A_L``, ``R_1``, the mean
query-key similarity of the layers, and ``R_L`` minus each reference floor with paired errors.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import spearmanr

from depthscale.derivations.study import (
    DISAGREEMENT_TOO_FEW,
    FLOOR_RTOL,
    INVERSE_DEPTH,
    Claim,
    ClaimResult,
    Curve,
    Estimate,
    LackOfFit,
    below_zero,
    budget_decided,
    budget_note,
    claim,
    disagreement_fit,
    floor_agreement,
    growth_text,
    in_range,
    inverse_depth_verdict,
    least_rejected_law,
    protocol_rows,
    row_label,
    task_label,
    unidentified,
)
from depthscale.derivations.study import format_estimate as est


def pct(x: float) -> str:
    return f"{x:+.1%}"


ALPHA_RANGE = INVERSE_DEPTH  # "inverse depth": the excess over R_inf falls like L^-alpha, alpha in this range
# FLOOR_RTOL (derivations.claims.generic): R_inf "is" a reference floor when within 3 % of it
FLAT_BAND = f"alpha in [{ALPHA_RANGE[0]:g}, {ALPHA_RANGE[1]:g}]"  # A_L - C_L "flat": (A_L - C_L)/L ~ L^-alpha
BEAT_DEPTH = 32  # "depth beats the convex floor" is tested at this depth or deeper
RHO_PASS, RHO_FAIL = 0.8, 0.5  # Spearman correlation across protocols: follows / does not follow


# ------------------------------------------------------------------------------------------------ claims
NO_RUNS = "no protocol-study runs in this sweep"
FIT = "R_inf + c L^-alpha"


@claim(
    "protocol-inverse-depth",
    f"R_L - R_inf falls as L^-alpha with alpha in [{ALPHA_RANGE[0]:g}, {ALPHA_RANGE[1]:g}]",
    tolerance="t-test, 95 %",
    expected=ALPHA_RANGE,
    missing=NO_RUNS,
    family="protocol_study",
)
def inverse_depth(claim: Claim, ev) -> list[ClaimResult]:
    """Per protocol: the excess R_L - R_inf falls as L^-alpha with alpha in [0.8, 1.2] (the law alone;
    which reference floor R_inf approaches is :func:`floor_reached`, since a law can hold above every floor,
    as in the ensemble control, whose R_inf is its members' error covariance).

    Decided by the fitted alpha when the fit is identified and precise. Otherwise it fails when the
    law is rejected for every alpha in the range by the seeds' own scatter (:func:`law_test`; at 5 %): a
    curve that stops falling after L = 2 has no identified alpha, yet is no inverse-depth curve.
    """
    out = []
    for r in protocol_rows(ev):
        label, f = row_label(r), r.fit
        if f.failure:
            out.append(claim.not_run(f.failure + budget_note(r), label, ALPHA_RANGE))
            continue
        v = inverse_depth_verdict(r.curve, f, ALPHA_RANGE)
        det = v.detail
        if v.alpha is not None:
            det = f"R_inf = {est(f.params['L0'], f.se['L0'])}"
            if (near := r.nearest_floor(f.params["L0"])) is not None:
                det += f", nearest floor {near[0]} ({pct(near[1])})"
            det += f"; c = {est(f.params['c'], f.se['c'])}; depths {_depth_span(r.curve)}; {v.detail}"
        out.append(
            budget_decided(
                claim, label, v.ok, [r], det + budget_note(r), ALPHA_RANGE, v.alpha, None, p=v.p, test=v.test
            )
        )
    return out


def law_test(c: Curve) -> LackOfFit | None:
    """The least-rejected law with alpha in ALPHA_RANGE (:func:`~depthscale.derivations.study.least_rejected_law`)."""
    return least_rejected_law(c, ALPHA_RANGE)


def _depth_span(c: Curve) -> str:
    return f"L = {int(c.depths[0])}..{int(c.depths[-1])}"


@claim(
    "protocol-amplitude",
    tolerance=f"rho >= {RHO_PASS} and > rho(c, A_L)",
    expected=RHO_PASS,
    missing=NO_RUNS,
    family="protocol_study",
)
def amplitude_follows_disagreement(claim: Claim, ev) -> list[ClaimResult]:
    """Across protocols, the amplitude c follows the layer disagreement A_L - C_L, not the mean single-layer loss A_L

    Per task, by Spearman rank correlations over the protocols with identified fits.
    """
    by_task: dict = {}
    for r in protocol_rows(ev):
        by_task.setdefault(task_label(r.curve), []).append(r)
    out = []
    for label, rs in sorted(by_task.items()):
        good = [r for r in rs if r.identified and np.isfinite(r.disagreement) and np.isfinite(r.layer_loss)]
        if len(good) < 4:
            why = f"{len(good)} protocol(s) with an identified fit and A_L - C_L (need 4)"
            out.append(claim.indicative(label, RHO_PASS, why) if good else claim.not_run(why, label))
            continue
        c = [r.fit.params["c"] for r in good]
        rho_gap = float(spearmanr(c, [r.disagreement for r in good]).statistic)
        rho_a = float(spearmanr(c, [r.layer_loss for r in good]).statistic)
        ratios = ", ".join(
            f"{r.protocol.name} {r.fit.params['c'] / r.disagreement:.2g}" for r in good if r.disagreement > 0
        )
        det = (
            f"Spearman rho(c, A_L - C_L) = {rho_gap:.2f}, rho(c, A_L) = {rho_a:.2f} over {len(good)} protocols; "
            f"c / (A_L - C_L): {ratios}"
        )
        # a rank correlation over four to six protocols has no test that could decide at 5 % short of
        # rho = 1: the row describes, it does not decide
        points = "points to pass" if rho_gap >= RHO_PASS and rho_gap > rho_a else "points to fail"
        if RHO_FAIL <= rho_gap < RHO_PASS and rho_gap > rho_a:
            points = "between the thresholds"
        det += f"; descriptive ({points}): {len(good)} protocols leave no test at 5 %"
        out.append(
            budget_decided(claim, label, None, good, det, RHO_PASS, rho_gap, None, note=f"(rho with A_L: {rho_a:.2f})")
        )
    return out


@claim(
    "protocol-disagreement",
    f"The disagreement term (A_L - C_L)/L falls as L^-alpha with alpha in [{ALPHA_RANGE[0]:g}, {ALPHA_RANGE[1]:g}] "
    "(A_L - C_L flat in depth, as the central-limit mechanism assumes)",
    tolerance="t-test, 95 %",
    expected=ALPHA_RANGE,
    missing=NO_RUNS,
    family="protocol_study",
)
def disagreement_term(claim: Claim, ev) -> list[ClaimResult]:
    """Per protocol: the averaged-away term ``(A_L - C_L) / L`` of ``R_L = C_L + (A_L - C_L) / L`` falls as
    ``L^-alpha`` with alpha in [0.8, 1.2], the central-limit premise that the disagreement A_L - C_L does not
    grow with depth. Fitted over L >= 2 (at L = 1 there is no pair of layers) as a pure power law, which is
    identified whenever three or more depths are finite."""
    out = []
    for r in protocol_rows(ev):
        label = row_label(r)
        f, L, D = disagreement_fit(r.curve)  # the rule any curve is checked by (check_prediction's too)
        if f is None:
            out.append(claim.not_run(DISAGREEMENT_TOO_FEW, label))
            continue
        if (missing := claim.without_fit(label, ALPHA_RANGE, {FIT: f})) is not None:
            out.append(missing)
            continue
        a = Estimate.from_fit(f, "alpha")
        ok = in_range(a, *ALPHA_RANGE)
        grows = Estimate(1 - a.value, a.se, a.dof, a.basis, a.n)  # A_L - C_L ~ L^(1 - alpha)
        det = (
            f"alpha = {est(a.value, a.se)}: {growth_text('A_L - C_L', grows, ok, FLAT_BAND)} "
            f"({D[0]:.3g} at L = {L[0]:g} to {D[-1]:.3g} at L = {L[-1]:g})"
        )
        out.append(budget_decided(claim, label, ok, [r], det + budget_note(r), ALPHA_RANGE, a, None))
    return out


@claim(
    "protocol-cosine-not-inverse",
    tolerance="outside, t-test",
    expected=ALPHA_RANGE,
    missing="no cosine-protocol runs",
    family="protocol_study",
)
def cosine_not_inverse(claim: Claim, ev) -> list[ClaimResult]:
    """Cosine-decayed training does not give inverse depth (alpha outside [0.8, 1.2])

    Decided when alpha + t s.e. lies below 0.8 or alpha - t s.e. above 1.2, or, when the fit does
    not decide, when every alpha in the range is rejected (:func:`law_test`).
    """
    out = []
    for r in (r for r in protocol_rows(ev) if r.protocol.name == "cosine"):
        label, f = task_label(r.curve), r.fit
        if f.failure:
            out.append(claim.not_run(f.failure + budget_note(r), label, ALPHA_RANGE))
            continue
        v = inverse_depth_verdict(r.curve, f, ALPHA_RANGE)  # this claim is its negation
        ok = None if v.ok is None else not v.ok
        outside = f"outside [{ALPHA_RANGE[0]:g}, {ALPHA_RANGE[1]:g}]"
        out.append(
            budget_decided(claim, label, ok, [r], v.detail + budget_note(r), outside, v.alpha, None, p=v.p, test=v.test)
        )
    return out


@claim(
    "protocol-beats-convex",
    f"At L >= {BEAT_DEPTH} the trained model beats the convex temperature floor (paired)",
    tolerance="< 0, paired t-test",
    missing=f"no protocol-study runs at L >= {BEAT_DEPTH} with stored errors",
    family="protocol_study",
)
def beats_convex(claim: Claim, ev) -> list[ClaimResult]:
    """Depth beats the convex floor at L >= 32 (paired): trained layers do something no mixture of
    temperature heads can."""
    out = []
    for r in protocol_rows(ev):
        deep = [L for L in r.excess if L >= BEAT_DEPTH and "convex" in r.excess[L]]
        if not deep:
            continue
        L = max(deep)
        diff = r.excess[L]["convex"]
        det = (
            f"R_L - convex floor = {est(diff.value, diff.se)} at L={L} (same evaluation contexts); "
            f"convex floor {est(*r.floors['convex'])}"
        )
        out.append(
            budget_decided(
                claim, row_label(r), below_zero(diff), [r], det + budget_note(r), "< 0", diff, None, band=(-np.inf, 0.0)
            )
        )
    return out


@claim(
    "protocol-floor",
    f"R_inf lies within {FLOOR_RTOL:.0%} of a reference floor (which one is reported)",
    tolerance=f"{FLOOR_RTOL:.0%}",
    missing="no protocol-study runs",
    family="protocol_study",
)
def floor_reached(claim: Claim, ev) -> list[ClaimResult]:
    """Which reference floor the deep models approach (R_inf within 3 % of it), per protocol and task."""
    out = []
    for r in protocol_rows(ev):
        label, f = row_label(r), r.fit
        if f.failure or not f.identified or not r.floors:
            why = f.failure or unidentified({FIT: f}) or "no reference floors"
            out.append(claim.indicative(label, None, why))
            continue
        name, rel = r.nearest_floor(f.params["L0"])
        floor, floor_se = r.floors[name]
        # within 3 %: decided only when the fitted floor is precise enough to tell a 3 % difference;
        # not within: decided whenever R_inf is further than 3 % from every floor by t s.e.
        L0 = Estimate.from_fit(f, "L0")
        ok, _, p = floor_agreement(L0, floor, FLOOR_RTOL, floor_se)  # the rule any curve is checked by
        det = (
            f"R_inf = {est(f.params['L0'], f.se['L0'])}; nearest: {name} {est(floor, floor_se)} ({pct(rel)}); "
            + ", ".join(f"{n} {est(*v)}" for n, v in r.floors.items())
        )
        if ok is None:
            det += f"; the 95 % interval of R_inf / floor crosses 1 ± {FLOOR_RTOL:.0%}"
        out.append(
            budget_decided(claim, label, ok, [r], det + budget_note(r), floor, L0, None, expected_error=floor_se, p=p)
        )
    return out


CLAIMS = (
    inverse_depth,
    disagreement_term,
    amplitude_follows_disagreement,
    cosine_not_inverse,
    beats_convex,
    floor_reached,
)


__all__ = [
    "ALPHA_RANGE",
    "CLAIMS",
    "inverse_depth",
    "disagreement_term",
    "amplitude_follows_disagreement",
    "cosine_not_inverse",
    "beats_convex",
    "floor_reached",
    "law_test",
]
