"""Claims on softmax attention: the easy task, the top-k exponent near 1, its spread across spectra, the gap law."""

from __future__ import annotations

import numpy as np

from depthscale.derivations.study import (
    EASY_TASKS,
    MIN_EVAL,
    MIN_SEEDS,
    Claim,
    ClaimResult,
    Curve,
    Estimate,
    below_zero,
    claim,
    decision_p,
    fit_offset_power,
    format_interval,
    in_range,
    inverse_depth_verdict,
    log_ratio,
    select_curves,
    unidentified,
    within,
)
from depthscale.derivations.study import format_estimate as est
from depthscale.derivations.study import format_value as num

from .theory import numbers

SOFTMAX_ALPHA_TOL = 0.2  # |alpha - 1|
SPREAD_TOL = 0.3  # max - min of softmax exponents across spectra
LINEAR_SPREAD_MIN = 2.0
GAP_ALPHA_RANGE = (0.7, 1.3)


# ---------------------------------------------------------------- claims on softmax attention


@claim(
    "softmax-easy-one-layer",
    tolerance="both bounds",
    expected="exact retrieval",
    missing="no one-layer softmax easy-exact runs",
    family="softmax",
)
def softmax_easy(claim: Claim, ev) -> list[ClaimResult]:
    """One softmax layer solves the easy task (MSE <= 1e-3 E[y*^2], top-1 mass >= 0.99)"""
    recs = [r for c in select_curves(ev, "softmax", ("easy-exact",)) for r in c.records_at(1)]
    if not recs:
        return []
    # Both bounds on the seeds' 95 % intervals (the one rule): pass when both are met by the whole
    # interval, fail when either is missed by the whole interval.
    rel = Estimate.from_seeds([r["final_loss"] / r["target_power"] for r in recs])
    top1 = Estimate.from_seeds([m[0] for r in recs if (m := r.get("top1_mass"))])
    sides = (in_range(rel, -np.inf, 1e-3), in_range(top1, 0.99, np.inf))
    ok = False if False in sides else (True if all(sides) else None)
    why = []
    if len(recs) < MIN_SEEDS:
        why.append(f"{len(recs)} seed(s) < {MIN_SEEDS}")
    if not all(r.get("converged") for r in recs):
        why.append("some runs did not converge")
    if min(r["config"]["train"]["eval_contexts"] for r in recs) < MIN_EVAL:
        why.append(f"fewer than {MIN_EVAL} evaluation contexts")
    would = {True: "pass", False: "fail", None: None}[ok]
    v = (would or "indicative") if not why else "indicative"
    det = f"{len(recs)} seed(s); MSE/E[y*^2] {est(rel.value, rel.se)}, top-1 mass {est(top1.value, top1.se)}"
    if why:
        det += (f"; would be {would}, but " if would else "; ") + "; ".join(why)
    elif ok is None:
        det += "; an interval crosses its bound"
    expected = "MSE/E[y*^2] <= 1e-3, top-1 >= 0.99"
    return [claim.result("", expected, rel, None, v, det, would_be=would if why else None)]


def _softmax_top2(ev) -> list[Curve]:
    return select_curves(ev, "softmax", ("topk",), k=2)


@claim(
    "softmax-top2-exponent",
    tolerance=f"± {SOFTMAX_ALPHA_TOL}",
    expected=1.0,
    missing="no softmax top-2 runs",
    family="softmax",
)
def softmax_exponent(claim: Claim, ev) -> list[ClaimResult]:
    """Softmax attention, top-2: R_L = L0 + c L^-alpha with alpha near 1 on every spectrum"""
    out = []
    for c in _softmax_top2(ev):
        f = c.fit("offset")
        no_fit = f.failure and f"too few depths to fit L0 + c L^-alpha ({f.failure})"
        if unusable := claim.without_fit(c.label, 1.0, {"L0 + c L^-alpha": f}, no_fit):
            out.append(unusable)
            continue
        v = inverse_depth_verdict(c, f, (1 - SOFTMAX_ALPHA_TOL, 1 + SOFTMAX_ALPHA_TOL))
        det = f"L0 = {est(f.params['L0'], f.se['L0'])}; {v.detail}"
        if np.isfinite(f.delta_aic_alpha_one):
            det += f"; delta AIC (alpha=1 minus free) = {num(f.delta_aic_alpha_one)}"
        if f.bootstrap is not None:
            lo, hi = f.bootstrap.intervals["alpha"]
            det += f"; bootstrap 95% over {len(c.seeds)} seeds {format_interval(lo, hi)}"
        elif (spread := _per_seed_alphas(c)) is not None:
            det += f"; range of per-seed fits {format_interval(*spread)} (no bootstrap below 5 seeds)"
        out.append(claim.decided(c.label, v.ok, [c], det, 1.0, v.alpha, None, p=v.p, test=v.test))
    return out


def _per_seed_alphas(c: Curve) -> tuple[float, float] | None:
    """The smallest and largest alpha of the seeds' own fits (identified ones), or None with fewer than 2."""
    alphas = []
    for row in c.loss:
        ok = np.isfinite(row) & (row > 0)
        if ok.sum() >= 4:
            f = fit_offset_power(c.depths[ok].astype(float), row[ok])
            if f.identified:
                alphas.append(f.params["alpha"])
    return (min(alphas), max(alphas)) if len(alphas) >= 2 else None


@claim(
    "exponent-spread",
    tolerance="both bounds",
    expected=f"softmax <= {SPREAD_TOL}, linear >= {LINEAR_SPREAD_MIN}",
    missing="fewer than two softmax top-2 spectra fitted",
    family="softmax",
)
def exponent_spread(claim: Claim, ev) -> list[ClaimResult]:
    """Softmax exponents vary little across spectra while linear exponents spread by >= 2"""
    soft = [(c, c.fit("offset")) for c in _softmax_top2(ev)]
    soft = [(c, f) for c, f in soft if not f.failure]
    skipped = [c.label for c, f in soft if not f.identified]
    soft = [(c, f) for c, f in soft if f.identified]
    lin = [(c, c.fit("power")) for c in select_curves(ev, "linear", EASY_TASKS)]
    lin_skipped = [c.label for c, f in lin if not f.failure and not f.identified]
    lin = [(c, f) for c, f in lin if f.identified]
    if len(soft) < 2:
        if len(soft) + len(skipped) >= 2:  # the data are there, but their fits say nothing
            why = f"undecided: fewer than two softmax top-2 spectra with an identified fit (not identified: {', '.join(skipped)})"
            return [claim.indicative("", claim.expected, why)]
        return []
    # the spread as the difference of the largest and smallest exponent (independent fits: Welch's
    # degrees of freedom), tested like any estimate: softmax's inside [-0.3, 0.3], linear's >= 2
    spread = _spread(soft)
    lin_spread = _spread(lin) if len(lin) >= 2 else None
    ok_soft = within(spread, 0.0, SPREAD_TOL)
    ok_lin = True if lin_spread is None else in_range(lin_spread, LINEAR_SPREAD_MIN, np.inf)
    ok = False if False in (ok_soft, ok_lin) else (None if None in (ok_soft, ok_lin) else True)
    p = max(
        decision_p(spread, -SPREAD_TOL, SPREAD_TOL),
        0.0 if lin_spread is None else decision_p(lin_spread, LINEAR_SPREAD_MIN, np.inf),
    )
    # both sides decide: unconverged or single-seed linear curves make the verdict indicative too
    used = [c for c, _ in soft] + ([c for c, _ in lin] if lin_spread is not None else [])
    detail = (
        f"softmax: largest minus smallest alpha over {len(soft)} spectra {est(spread.value, spread.se)} ({spread.test}); linear: "
        + (
            f"{est(lin_spread.value, lin_spread.se)} over {len(lin)} spectra ({lin_spread.test})"
            if lin_spread is not None
            else "not measured"
        )
    )
    if skipped or lin_skipped:
        detail += f"; left out, fit not identified: {', '.join(skipped + lin_skipped)}"
    note = f"(linear {num(lin_spread.value)})" if lin_spread is not None else ""
    r = claim.decided("", ok, used, detail, claim.expected, spread, None, note=note, p=p)
    if lin_spread is None and r.verdict == "pass":
        r = claim.result(
            "", claim.expected, spread, None, "indicative", r.reason + "; the linear side was not run", note=note
        )
    return [r]


def _spread(fitted: list) -> Estimate:
    """The largest minus the smallest fitted alpha of ``(curve, fit)`` pairs, as a Welch difference."""
    es = sorted((Estimate.from_fit(f, "alpha") for _, f in fitted), key=lambda e: e.value)
    return es[-1].minus(es[0])


@claim(
    "topk-slower",
    tolerance="alpha(top-k) < alpha(top-2), t-test",
    expected="alpha(top-k) < alpha(top-2)",
    missing="no matching top-k (k > 2) and top-2 softmax curves",
    family="softmax",
)
def topk_slower(claim: Claim, ev) -> list[ClaimResult]:
    """Top-16 scales more slowly with depth than top-2

    Any k > 2 against top-2, on the same spectrum and scale.
    """
    two = {(c.a, c.b, c.d, c.P): c for c in _softmax_top2(ev)}
    pairs = [
        (c, two[(c.a, c.b, c.d, c.P)])
        for c in select_curves(ev, "softmax", ("topk",))
        if c.k != 2 and (c.a, c.b, c.d, c.P) in two
    ]
    out = []
    expected = "< alpha(top-2)"
    for ck, c2 in pairs:
        fk, f2 = ck.fit("offset"), c2.fit("offset")
        no_fit = "fit failed or too few depths" if fk.failure or f2.failure else ""
        if unusable := claim.without_fit(ck.label, expected, {f"top-{ck.k}": fk, "top-2": f2}, no_fit):
            out.append(unusable)
            continue
        a, a2 = Estimate.from_fit(fk, "alpha"), Estimate.from_fit(f2, "alpha")
        diff = a.minus(a2)  # independent fits: Welch-Satterthwaite degrees of freedom
        note = f"vs top-2 {est(a2.value, a2.se)}"
        det = f"alpha of top-{ck.k} against top-2: difference {est(diff.value, diff.se)} ({diff.test})"
        p = decision_p(diff, -np.inf, 0.0)
        out.append(claim.decided(ck.label, below_zero(diff), [ck, c2], det, expected, a.value, a.se, note=note, p=p))
    return out


@claim(
    "clt-convergence",
    tolerance=f"in {GAP_ALPHA_RANGE}, t-test",
    expected=1.0,
    missing="no softmax top-2 curve with >= 4 depths",
    family="softmax",
)
def clt_convergence(claim: Claim, ev) -> list[ClaimResult]:
    """C_L and A_L - C_L converge with depth and the gap L0 - C_L decays near 1/L"""
    from depthscale.derivations.study import fit_gap

    out = []
    for c in (c for c in _softmax_top2(ev) if len(c.depths) >= 4):
        f = c.fit("offset")
        C = c.field_mean("C_L")
        no_fit = "no offset fit or too few C_L values" if f.failure or np.sum(np.isfinite(C)) < 3 else ""
        if unusable := claim.without_fit(c.label, 1.0, {"L0 + c L^-alpha": f}, no_fit, "; L0 is needed for the gap"):
            out.append(unusable)
            continue
        L0 = f.params["L0"]
        ok_idx = np.isfinite(C) & (L0 - C > 0)
        try:
            g = fit_gap(c.depths[ok_idx].astype(float), (L0 - C)[ok_idx], L0)
        except (ValueError, RuntimeError, np.linalg.LinAlgError) as exc:
            out.append(claim.indicative(c.label, 1.0, f"gap fit failed: {exc}"))
            continue
        if why := unidentified({"gap c L^-alpha": g}):
            out.append(claim.indicative(c.label, 1.0, why))
            continue
        ga = Estimate.from_fit(g, "alpha")
        det = f"C_L over depth {', '.join(num(x) for x in C)}; {int(ok_idx.sum())} depths with C_L < L0"
        out.append(claim.decided(c.label, in_range(ga, *GAP_ALPHA_RANGE), [c], det, 1.0, ga, None))
    return out


@claim(
    "softmax-below-linear",
    tolerance="ratio < 1 (paper: 0.03-0.17)",
    missing="no softmax top-k curve with a linear floor at the same scale",
    family="softmax",
)
def softmax_below_linear(claim: Claim, ev) -> list[ClaimResult]:
    """The softmax floor lies below the linear floor on the same spectrum

    Compared on the same spectrum and scale (d, P).
    """
    lin = {(c.a, c.b, c.k, c.d, c.P): c for c in select_curves(ev, "linear", ("topk",))}
    theory = numbers(ev).floor_context
    out = []
    for c in select_curves(ev, "softmax", ("topk",)):
        key = (c.a, c.b, c.k, c.d, c.P)
        cl = lin.get(key)
        if cl is not None:
            deep = cl.estimate(len(cl.depths) - 1)
            ref, ref_se, src = deep.value, deep.se, f"trained linear L={int(cl.depths[-1])}"
        elif key in theory:
            ref, ref_se, src = *theory[key], "theory (context covariance) T - h^T G^+ h"
        else:
            continue
        f = c.fit("offset")
        if f.identified:
            s, what = Estimate.from_fit(f, "L0"), "fitted L0"
        else:  # the deepest loss bounds the floor from above; an unidentified L0 says nothing
            s = c.estimate(len(c.depths) - 1)
            what = f"loss at L={int(c.depths[-1])}" + ("" if f.failure else " (L0 fit not identified)")
        # a ratio, tested on the log scale: log(softmax / linear) < 0
        ok = below_zero(r := log_ratio(s, ref, ref_se if np.isfinite(ref_se) else 0.0)) if s.value > 0 else None
        det = f"softmax {what} against the {src} floor {num(ref)}; ratio {num(s.value / ref)}"
        p = decision_p(r, -np.inf, 0.0) if s.value > 0 else None
        out.append(claim.decided(c.label, ok, [c] + ([cl] if cl is not None else []), det, ref, s, None, p=p))
    return out


CLAIMS = (softmax_easy, softmax_exponent, exponent_spread, topk_slower, clt_convergence, softmax_below_linear)
