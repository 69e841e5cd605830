"""The paper-curves study: does the paper's inverse depth appear, and what does it take?

The ``curves`` preset (docs/studies/paper-curves.md) adds to the protocol study (whose per-protocol
claims decide every setting here too, on the same rows:
:func:`~depthscale.derivations.study.protocol_rows`) a positive control (an ensemble of
independently trained one-layer models), the paper's likely model (framework-default init, constant
Adam, widths 16 and 64, measured at training checkpoints), depth to 256, and top-16 variants. This
module holds the claims the study adds: where the one-layer model sits against the single head, and
whether any variant reaches the signed two-temperature floor on top-16 (its report pieces are in
:mod:`depthscale.studies.paper_curves.sections`).
"""

from __future__ import annotations

import math

from depthscale.derivations.study import (
    FLOOR_RTOL,
    Claim,
    ClaimResult,
    Estimate,
    ProtocolRow,
    below_zero,
    budget_decided,
    budget_note,
    claim,
    protocol_rows,
    row_label,
)
from depthscale.derivations.study import format_estimate as est

DEEP_DEPTH = 16  # "the deep model" of a variant on top-16: its deepest run at or beyond this depth


@claim(
    "protocol-shallow-above-single",
    tolerance="t-test, 95 %",
    missing="no protocol-study runs at L = 1 with stored errors",
    family="paper_curves",
)
def shallow_above_single(claim: Claim, ev) -> list[ClaimResult]:
    """The one-layer model's loss R_1 lies above the best single temperature head (paired)

    The paper's top-2 floors coincide with that head, so its shallow models must have sat well above it
    (docs/studies/paper-curves.md); a setting whose one-layer model already reaches the head cannot show the
    paper's curve from above.
    """
    out = []
    for r in protocol_rows(ev):
        if 1 not in r.excess or "single" not in r.excess[1]:
            continue
        diff = r.excess[1]["single"]
        floor = r.floors["single"][0]
        ok = below_zero(-diff)  # above the head by t s.e., below it by t s.e., or undecided
        det = f"R_1 - single head = {est(diff.value, diff.se)} ({diff.value / floor:+.1%} of the head {floor:.4g})"
        out.append(
            budget_decided(claim, row_label(r), ok, [r], det + budget_note(r), "> 0", diff, None, band=(0.0, math.inf))
        )
    return out


@claim(
    "top16-signed-floor",
    f"Top-16: a variant's deep model (L >= {DEEP_DEPTH}) reaches within {FLOOR_RTOL:.0%} of the signed "
    "two-temperature floor",
    tolerance="t-test, 95 %",
    missing=f"no top-16 study runs at L >= {DEEP_DEPTH} with stored errors",
    family="paper_curves",
)
def top16_signed_floor(claim: Claim, ev) -> list[ClaimResult]:
    """Top-16: some variant's deep model (L >= 16) reaches within 3 % of the signed two-temperature floor
    (the ``mixture`` reference floor, which the base model with one shared value map cannot represent),
    or none does; the closest is named. "None does" needs every variant run deep (under any of its
    protocols): a variant run only at shallower depths leaves the claim indicative, with its deepest
    run's distance named."""
    # (distance above the floor relative to it; depth; study row)
    cands: list[tuple[Estimate, int, ProtocolRow]] = []
    shallow: list[tuple[Estimate, int, ProtocolRow]] = []
    for r in protocol_rows(ev):
        measured = [L for L in r.excess if "mixture" in r.excess[L]]
        if r.curve.k != 16 or not measured or "mixture" not in r.floors:
            continue
        L = max(measured)
        floor = r.floors["mixture"][0]
        (cands if L >= DEEP_DEPTH else shallow).append((r.excess[L]["mixture"].scaled(1 / floor), L, r))
    if not cands:
        return []
    # a variant is run deep when any of its protocols is: its shallow rows then leave nothing open
    shallow = [c for c in shallow if c[2].protocol.variant not in {d[2].protocol.variant for d in cands}]
    rel, L, best = min(cands, key=lambda c: c[0].value)
    # within 3 % (above or below) by t s.e., or further above it by t s.e. for every variant
    if abs(rel.value) + rel.margin <= FLOOR_RTOL:
        ok: bool | None = True
    elif all(c[0].value - c[0].margin > FLOOR_RTOL for c in cands) and not shallow:
        ok = False
    else:
        ok = None
    det = (
        f"closest: {best.protocol.name} ({best.curve.variant}) at L = {L}, R_L - signed floor = "
        f"{rel.value:+.1%} ± {rel.se:.1%} of it; others: "
        + ", ".join(f"{c[2].protocol.name} L={c[1]} {c[0].value:+.1%}" for c in cands if c[2] is not best)
    )
    if shallow and ok is None:
        det += "; not run at L >= 16: " + ", ".join(
            f"{c[2].protocol.name} (at L = {c[1]}: {c[0].value:+.1%} ± {c[0].se:.1%})" for c in shallow
        )
    return [budget_decided(claim, "", ok, [c[2] for c in cands], det, f"<= {FLOOR_RTOL:.0%}", rel, None)]


CLAIMS = (shallow_above_single, top16_signed_floor)


__all__ = ["CLAIMS", "shallow_above_single", "top16_signed_floor"]
