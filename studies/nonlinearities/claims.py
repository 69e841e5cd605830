"""The nonlinearity study's claims: does inverse depth need softmax?

Per (nonlinearity, protocol, task) curve: the depth law, the layers' disagreement, the one-layer
model against its own single head, and the deep model against its own convex and signed floors.
Across nonlinearities, per protocol and task (each map against softmax trained the same way): whether
a sparse map lowers the shared error ``C_64`` below softmax's, and whether depth gains more than under
softmax. The verdict rules are the protocol study's (inverse depth with its lack-of-fit test where the
fit does not decide; paired floor differences by the t-test either way), so the softmax rows here and
there agree.
"""

from __future__ import annotations

import numpy as np

from depthscale.derivations.study import (
    INVERSE_DEPTH,
    Claim,
    ClaimResult,
    Estimate,
    below_zero,
    claim,
    fit_power_law,
    growth_text,
    in_range,
    inverse_depth_verdict,
)
from depthscale.derivations.study import format_estimate as est

from .theory import DEEP, Row, paired_across, rows

NO_RUNS = "no nonlinearity-study runs in this sweep"
FIT = "R_inf + c L^-alpha"
SPARSE = ("sparsemax", "entmax15")
ALPHA_RANGE = INVERSE_DEPTH  # "inverse depth", as the protocol study tests it (the same library rule)
SIGNED_RTOL = 0.03  # "reaches the signed floor": within 3 % of it


def _deepest(r: Row, name: str) -> int | None:
    """The deepest depth with a paired excess over the floor ``name``."""
    deep = [L for L in r.excess if name in r.excess[L]]
    return max(deep) if deep else None


@claim(
    "nonlin-inverse-depth",
    f"R_L - R_inf falls as L^-alpha with alpha in [{ALPHA_RANGE[0]:g}, {ALPHA_RANGE[1]:g}] under this nonlinearity",
    tolerance="t-test, 95 %",
    expected=ALPHA_RANGE,
    missing=NO_RUNS,
    family="nonlinearities",
)
def inverse_depth(claim: Claim, ev) -> list[ClaimResult]:
    """Decided by the fitted alpha when the fit is identified and precise; otherwise it fails when the
    seeds' own scatter rejects the law for every alpha in the range (the protocol study's rule)."""
    out = []
    for r in rows(ev):
        f = r.fit
        if f.failure:
            out.append(claim.not_run(f.failure, r.condition(), ALPHA_RANGE))
            continue
        v = inverse_depth_verdict(r.curve, f, ALPHA_RANGE)
        det = v.detail if v.alpha is None else f"R_inf = {est(f.params['L0'], f.se['L0'])}; {v.detail}"
        out.append(claim.decided(r.condition(), v.ok, [r.curve], det, ALPHA_RANGE, v.alpha, None, p=v.p, test=v.test))
    return out


@claim(
    "nonlin-disagreement",
    f"The disagreement term (A_L - C_L)/L falls as L^-alpha with alpha in [{ALPHA_RANGE[0]:g}, {ALPHA_RANGE[1]:g}] "
    "(A_L - C_L flat in depth, as the central-limit mechanism needs)",
    tolerance="t-test, 95 %",
    expected=ALPHA_RANGE,
    missing=NO_RUNS,
    family="nonlinearities",
)
def disagreement(claim: Claim, ev) -> list[ClaimResult]:
    """Fitted over L >= 2 as a pure power law; the detail gives the disagreement's own exponent
    ``1 - alpha`` (0: flat; positive: growing with depth)."""
    out = []
    for r in rows(ev):
        L, D = r.curve.depths.astype(float), r.curve.field_mean("gap")
        keep = (L >= 2) & np.isfinite(D) & (D > 0)
        if keep.sum() < 3:
            out.append(claim.not_run("fewer than 3 depths >= 2 with A_L - C_L > 0", r.condition()))
            continue
        f = fit_power_law(L[keep], D[keep] / L[keep])
        if (missing := claim.without_fit(r.condition(), ALPHA_RANGE, {"(A_L - C_L)/L = c L^-alpha": f})) is not None:
            out.append(missing)
            continue
        a = Estimate.from_fit(f, "alpha")
        ok = in_range(a, *ALPHA_RANGE)
        grows = Estimate(1 - a.value, a.se, a.dof, a.basis, a.n)  # A_L - C_L ~ L^(1 - alpha)
        det = (
            f"{growth_text('A_L - C_L', grows, ok, f'alpha in [{ALPHA_RANGE[0]:g}, {ALPHA_RANGE[1]:g}]')} "
            f"({D[keep][0]:.3g} at L = {L[keep][0]:g} to {D[keep][-1]:.3g} at L = {L[keep][-1]:g})"
        )
        out.append(claim.decided(r.condition(), ok, [r.curve], det, ALPHA_RANGE, a, None))
    return out


def _floor_claim(claim: Claim, ev, name: str, depth_of) -> list[ClaimResult]:
    out = []
    for r in rows(ev):
        L = depth_of(r, name)
        if L is None or name not in r.floors:
            continue
        diff = r.excess[L][name]
        floor = r.floors[name]
        det = f"R_L - {name} floor = {est(diff.value, diff.se)} at L = {L} (paired, same contexts); floor {est(*floor)}"
        out.append(
            claim.decided(r.condition(), below_zero(diff), [r.curve], det, "< 0", diff, None, band=(-np.inf, 0.0))
        )
    return out


@claim(
    "nonlin-one-layer-head",
    "The one-layer model beats its own best single temperature-only head (paired)",
    tolerance="< 0, paired t-test",
    missing="no one-layer runs with stored errors and floors",
    family="nonlinearities",
)
def one_layer_head(claim: Claim, ev) -> list[ClaimResult]:
    """R_1 minus the single head of the same nonlinearity on the same evaluation contexts: pass below
    it by t s.e., fail above it by t s.e., indicative at it."""
    return _floor_claim(claim, ev, "single", lambda r, n: 1 if 1 in r.excess and n in r.excess[1] else None)


@claim(
    "nonlin-beats-convex",
    "The deepest model beats its own nonlinearity's convex floor, the best non-negative mixture of "
    "temperature heads (paired)",
    tolerance="< 0, paired t-test",
    missing="no deep runs with stored errors and floors",
    family="nonlinearities",
)
def beats_convex(claim: Claim, ev) -> list[ClaimResult]:
    """At the deepest depth trained: pass below the floor by t s.e., fail above it by t s.e."""
    return _floor_claim(claim, ev, "convex", _deepest)


@claim(
    "nonlin-signed-floor",
    f"The deepest model reaches its own nonlinearity's signed floor (within {SIGNED_RTOL:.0%}, paired)",
    tolerance=f"{SIGNED_RTOL:.0%}, t-test",
    missing="no deep runs with stored errors and floors",
    family="nonlinearities",
)
def signed_floor(claim: Claim, ev) -> list[ClaimResult]:
    """``R_L - signed`` relative to the floor: pass when below 3 % by t s.e., fail when above it by t s.e."""
    out = []
    for r in rows(ev):
        L = _deepest(r, "mixture")
        if L is None or "mixture" not in r.floors:
            continue
        rel = r.excess[L]["mixture"].scaled(1 / r.floors["mixture"][0])
        det = (
            f"R_L - signed mixture floor = {rel.value:+.1%} ± {rel.se:.1%} of {est(*r.floors['mixture'])} "
            f"at L = {L} (paired)"
        )
        out.append(
            claim.decided(
                r.condition(),
                below_zero(rel, SIGNED_RTOL),
                [r.curve],
                det,
                f"< {SIGNED_RTOL:.0%}",
                rel,
                None,
                band=(-np.inf, SIGNED_RTOL),
            )
        )
    return out


def _pairs_with_softmax(ev, attentions) -> list[tuple[Row, Row]]:
    """``(row, softmax row)`` of the same protocol and task, for each of ``attentions``: the constant-rate
    protocol's runs converge where some cosine ones do not, so its pairs can decide on their own."""
    rs = rows(ev)
    soft = {(r.protocol, r.task): r for r in rs if r.attention == "softmax"}
    return [(r, soft[r.protocol, r.task]) for r in rs if r.attention in attentions and (r.protocol, r.task) in soft]


def _pair_label(r: Row):
    return r.condition(f"{r.attention} vs softmax {r.protocol} {r.task}")


@claim(
    "nonlin-sparse-shared-error",
    f"A sparse nonlinearity lowers the shared error C_{DEEP} below softmax's (same tasks, seeds and contexts)",
    tolerance="< 0, t-test",
    missing=f"no sparsemax or entmax15 runs at L = {DEEP} beside softmax ones",
    family="nonlinearities",
)
def sparse_shared_error(claim: Claim, ev) -> list[ClaimResult]:
    """Per protocol and task, ``C_64(sparse) - C_64(softmax)`` per seed, pooled over the
    seeds by their scatter (``C_L`` is stored without a per-context error, so n seeds give n - 1
    degrees of freedom): pass below 0 by t s.e., fail above 0 by t s.e., else indicative."""
    out = []
    for r, s in _pairs_with_softmax(ev, SPARSE):
        a, b = r.seed_values("C_L", DEEP), s.seed_values("C_L", DEEP)
        diffs = [a[k] - b[k] for k in sorted(a.keys() & b.keys())]
        label = _pair_label(r)
        if len(diffs) < 2:
            out.append(claim.not_run(f"fewer than 2 seeds with both runs at L = {DEEP}", label))
            continue
        m = Estimate.from_seeds(diffs)
        det = (
            f"C_{DEEP} = {np.mean(list(a.values())):.4g} against softmax's {np.mean(list(b.values())):.4g}; "
            f"difference {est(m.value, m.se)} over {len(diffs)} seeds"
        )
        out.append(claim.decided(label, below_zero(m), [r.curve, s.curve], det, "< 0", m, None, band=(-np.inf, 0.0)))
    return out


@claim(
    "nonlin-depth-gains-more",
    f"Depth gains more than under softmax: R_1 - R_{DEEP} is larger (paired, same contexts)",
    tolerance="> 0, paired t-test",
    missing=f"no runs at L = 1 and {DEEP} beside softmax ones",
    family="nonlinearities",
)
def depth_gains_more(claim: Claim, ev) -> list[ClaimResult]:
    """Per nonlinearity, protocol and task: ``(R_1 - R_64) - (R_1 - R_64)_softmax`` from
    the per-context errors of the four runs of each seed, pooled over the seeds: pass above 0 by
    t s.e., fail below 0 by t s.e., else indicative."""
    out = []
    others = [a for a in ("sparsemax", "entmax15", "sigmoid", "relu")]
    for r, s in _pairs_with_softmax(ev, others):
        got = paired_across(r, s, 1, 1, minus=(DEEP, DEEP))
        label = _pair_label(r)
        if got is None:
            continue
        det = f"(R_1 - R_{DEEP}) minus softmax's = {est(got.value, got.se)} (paired over the seeds' shared contexts)"
        out.append(
            claim.decided(label, below_zero(-got), [r.curve, s.curve], det, "> 0", got, None, band=(0.0, np.inf))
        )
    return out


CLAIMS = (
    inverse_depth,
    disagreement,
    one_layer_head,
    beats_convex,
    signed_floor,
    sparse_shared_error,
    depth_gains_more,
)
