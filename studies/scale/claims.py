"""The scale study's trend claims: the d = 16 answer against d, on the curves that differ only in d (and P = 8d).

Each claim fits one quantity of each curve against ``log2 d`` (:func:`~depthscale.derivations.study.fit_trend`:
a weighted line, each rung weighted by its own error; the slope is the change per doubling of d)
and decides on the slope with the verdict helpers, through ``claim.decided`` (so the runs behind it
must be decisive: seeds, five depths spanning x32, converged, evaluation contexts):

- ``scale-depth-gain-holds``: the depth gain ``(R_1 - R_Lmax) / R_1`` holds (slope within
  ``GAIN_TOL`` per doubling, :func:`within`);
- ``scale-depth-helps-at-largest-d``: at the largest d run the gain is still above 0 (its seeds'
  t-test, :func:`below_zero`; not a trend: a fail says the answer has turned);
- ``scale-shallow-rises-above-single``: the one-layer model climbs above the best single temperature
  head as d grows, as the paper's did at d = 128 (slope of ``(R_1 - H)/H`` above 0, :func:`below_zero`);
- ``scale-disagreement-exponent-holds``: the exponent of the layers' disagreement term holds (slope
  in ``[-EXPONENT_TOL, EXPONENT_TOL]`` per doubling, :func:`in_range`).

Every row also states the line's value at the paper's d = 128, labelled an extrapolation while no
rung has run there. A line through fewer than ``MIN_RUNGS`` values of d decides nothing (indicative,
with the verdict it points to).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from depthscale.derivations.study import (
    REFERENCE_D,
    Claim,
    ClaimResult,
    Condition,
    Curve,
    Estimate,
    Trend,
    TrendPoint,
    below_zero,
    claim,
    comparable_groups,
    estimate_text,
    fit_trend,
    in_range,
    trend_points,
    within,
)

TARGET_D = REFERENCE_D  # the paper's d = 128: where each trend is extrapolated to (until that rung runs)
MIN_RUNGS = 3  # values of d a trend is decided on: two make a line but cannot show it is one
GAIN_TOL = 0.01  # "the depth gain holds": it moves by at most one point of R_1 per doubling of d
EXPONENT_TOL = 0.1  # "the exponent holds": it moves by at most 0.1 per doubling (a quarter of [0.8, 1.2]'s width)
QUANTITY_TEXT = {
    "depth_gain": "depth gain (R_1 - R_Lmax)/R_1",
    "r1_vs_single": "(R_1 - single head)/single head",
    "exponent": "disagreement exponent alpha",
}
NO_LADDER = "no softmax curves at two or more values of d with P = 8d and N = d under one protocol"


@dataclass(frozen=True)
class Ladder:
    """Curves that differ only in d (P = 8d, N = d), measured and fitted: the label of the claim rows,
    the curves (by d), their :class:`TrendPoint` records, and per quantity its :class:`Trend` or the
    reason there is none."""

    label: str
    condition: Condition
    curves: tuple[Curve, ...]
    points: tuple[TrendPoint, ...]
    trends: dict[str, Trend] = field(default_factory=dict)
    missing: dict[str, str] = field(default_factory=dict)


def scale_curves(curves) -> list[Curve]:
    """The softmax curves of the ladder's shape: P = 8d and width N = d."""
    return [
        c
        for c in curves
        if c.model == "softmax" and c.task == "topk" and c.P == 8 * c.d and c.key.width in (None, 0, c.d) and c.runs
    ]


def _protocol(c: Curve) -> str:
    t = dict(c.key.train)
    return (
        f"{t.get('schedule', 'cosine')} lr {t.get('lr', 0):g}, {t.get('steps', 0):,} steps, batch {t.get('batch', 0)}"
    )


def _ladders(ev) -> list[Ladder]:
    groups = [g for g in comparable_groups(scale_curves(ev.curves), "d", also=("P",)) if len(g) >= 2]
    labels = [f"top-{g[0].k} (a,b)=({g[0].a:g},{g[0].b:g}) d={g[0].d} to d={g[-1].d}, P=8d" for g in groups]
    out = []
    for g, label in zip(groups, labels):
        if labels.count(label) > 1:  # the same task under several protocols: each row names its own
            label += f" [{_protocol(g[0])}]"
        cond = Condition(label, model="softmax", variant=g[0].variant, task="topk", k=int(g[0].k), a=g[0].a, b=g[0].b)
        try:
            points = trend_points(g, "d", also=("P",))
        except ValueError as exc:
            out.append(Ladder(label, cond, g, (), {}, dict.fromkeys(QUANTITY_TEXT, str(exc))))
            continue
        trends, missing = {}, {}
        for q in QUANTITY_TEXT:
            try:
                trends[q] = fit_trend(points, q, at=TARGET_D)
            except ValueError as exc:
                why = "; ".join(n for p in points for n in p.notes if n.startswith(_NOTE_PREFIX[q]))
                missing[q] = f"{exc}" + (f" ({why})" if why else "")
        out.append(Ladder(label, cond, g, points, trends, missing))
    return out


_NOTE_PREFIX = {"depth_gain": "depth gain", "r1_vs_single": "R_1 against", "exponent": "exponent"}


def ladders(ev) -> list[Ladder]:
    """The ladders of the evidence, measured and fitted once (shared by the claims, tables and figures)."""
    return ev.derived("scale ladders", _ladders)


def _rungs_text(points, quantity: str) -> str:
    parts = []
    for p in points:
        e = p.get(quantity)
        parts.append(f"d={p.value}: " + ("none" if e is None else _est(e)))
    return ", ".join(parts)


def _est(e: Estimate) -> str:
    return estimate_text(e.value, e.se)


def _extrapolation_note(t: Trend) -> str:
    if t.extrapolated is None:
        return ""
    where = "an extrapolation" if t.extrapolation else "interpolated"
    return f"(at d = {t.at:g}: {_est(t.extrapolated)}, {where})"


def trend_rows(
    claim: Claim, ev, quantity: str, decide: Callable[[Estimate], bool | None], expected
) -> list[ClaimResult]:
    """One result per ladder: ``decide(slope)`` by the verdict rule on the ladder's curves, the rungs'
    values and the trend in the reason, the extrapolation to d = 128 after the measured slope."""
    out = []
    for lad in ladders(ev):
        t = lad.trends.get(quantity)
        if t is None:
            out.append(claim.indicative(lad.condition, expected, f"no trend: {lad.missing.get(quantity, '')}"))
            continue
        ok = decide(t.slope)
        det = f"{QUANTITY_TEXT[quantity]} {_rungs_text(lad.points, quantity)}; {t.describe()}"
        if t.dropped:
            det += "; left out: " + "; ".join(t.dropped)
        note = _extrapolation_note(t)
        if len(t.values) < MIN_RUNGS:
            would = None if ok is None else ("pass" if ok else "fail")
            reason = f"{det}; {len(t.values)} values of d: a trend is decided on {MIN_RUNGS} or more"
            if would:
                reason += f", would be {would}"
            out.append(
                claim.result(lad.condition, expected, t.slope, None, "indicative", reason, note=note, would_be=would)
            )
            continue
        out.append(claim.decided(lad.condition, ok, lad.curves, det, expected, t.slope, None, note=note))
    return out


@claim(
    "scale-depth-gain-holds",
    tolerance=f"slope within ± {GAIN_TOL:g} per doubling of d, t-test, 95 %",
    expected=(-GAIN_TOL, GAIN_TOL),
    missing=NO_LADDER,
    family="scale",
)
def depth_gain_holds(claim: Claim, ev) -> list[ClaimResult]:
    """The depth gain (R_1 - R_Lmax)/R_1 holds as d grows (P = 8d, N = d): its slope against log2 d lies
    within ± 0.01 per doubling of d

    Per curve the gain is paired per seed (the seeds' runs share their evaluation contexts), between the
    shallowest and the deepest depth every rung has; the slope is the weighted line's (each rung by its
    seeds' error). A fail says the gain moves with d, its sign which way: above 0 it grows, below it weakens.
    """
    return trend_rows(claim, ev, "depth_gain", lambda s: within(s, 0.0, GAIN_TOL), (-GAIN_TOL, GAIN_TOL))


@claim(
    "scale-depth-helps-at-largest-d", tolerance="> 0, t-test, 95 %", expected="> 0", missing=NO_LADDER, family="scale"
)
def depth_helps_at_largest_d(claim: Claim, ev) -> list[ClaimResult]:
    """Depth still helps at the largest d run: the depth gain (R_1 - R_Lmax)/R_1 of the largest rung is above 0

    The gain paired per seed at the ladder's largest d, by the t-test on its seeds' scatter; a fail there says
    the d = 16 answer has turned (depth hurts) by the largest rung, whatever the trend.
    """
    out = []
    for lad in ladders(ev):
        if not lad.points:
            out.append(claim.indicative(lad.condition, "> 0", f"no rungs: {lad.missing.get('depth_gain', '')}"))
            continue
        p, c = lad.points[-1], lad.curves[-1]
        g = p.depth_gain
        if g is None:
            out.append(claim.indicative(lad.condition, "> 0", "; ".join(p.notes) or "no depth gain"))
            continue
        det = f"d = {p.value}: (R_{p.first} - R_{p.last})/R_{p.first} = {_est(g)} (paired per seed, {g.test})"
        where = Condition.of(lad.condition, d=int(p.value))  # the rung it is measured on
        out.append(claim.decided(where, below_zero(-g), [c], det, "> 0", g, None, band=(0.0, math.inf)))
    return out


@claim(
    "scale-shallow-rises-above-single",
    tolerance="slope > 0, t-test, 95 %",
    expected="> 0",
    missing=NO_LADDER,
    family="scale",
)
def shallow_rises_above_single(claim: Claim, ev) -> list[ClaimResult]:
    """The one-layer model rises above the best single temperature head as d grows: the slope of
    (R_1 - H)/H against log2 d is above 0

    H is the best single temperature head on each run's own evaluation contexts (the runs' stored reference
    floors, paired); the paper's shallow models sat well above H at d = 128, where its top-2 floors coincide
    with it, so a slope above 0 is the paper's setting approached, one at or below 0 says the one-layer
    model does not move off the head as d grows.
    """
    return trend_rows(claim, ev, "r1_vs_single", lambda s: below_zero(-s), "> 0")


@claim(
    "scale-disagreement-exponent-holds",
    tolerance=f"slope in [-{EXPONENT_TOL:g}, {EXPONENT_TOL:g}] per doubling of d, t-test, 95 %",
    expected=(-EXPONENT_TOL, EXPONENT_TOL),
    missing=NO_LADDER,
    family="scale",
)
def disagreement_exponent_holds(claim: Claim, ev) -> list[ClaimResult]:
    """The layers' disagreement exponent holds as d grows: the slope of alpha, fitted to
    (A_L - C_L)/L = c L^-alpha, against log2 d lies in [-0.1, 0.1] per doubling of d

    alpha = 1: the disagreement is flat in depth (the central-limit mechanism); alpha < 1: it grows. A fail
    above the range says the disagreement grows less with depth as d grows (alpha rises toward 1), below it
    more. Each rung's alpha is fitted over its depths from 2 to the deepest depth every rung has.
    """
    return trend_rows(
        claim, ev, "exponent", lambda s: in_range(s, -EXPONENT_TOL, EXPONENT_TOL), (-EXPONENT_TOL, EXPONENT_TOL)
    )


CLAIMS = (depth_gain_holds, depth_helps_at_largest_d, shallow_rises_above_single, disagreement_exponent_holds)


__all__ = [
    "CLAIMS",
    "EXPONENT_TOL",
    "GAIN_TOL",
    "Ladder",
    "MIN_RUNGS",
    "TARGET_D",
    "depth_gain_holds",
    "depth_helps_at_largest_d",
    "disagreement_exponent_holds",
    "ladders",
    "scale_curves",
    "shallow_rises_above_single",
    "trend_rows",
]
