"""Claims that check the measurement itself: the exact ensemble identity, null controls and the reference floors."""

from __future__ import annotations

import numpy as np

from depthscale.derivations.study import (
    IDENTITY_TOL,
    Claim,
    ClaimResult,
    Estimate,
    below_zero,
    claim,
    decision_p,
    evaluated_with,
    identity_result,
    select_curves,
)
from depthscale.derivations.study import format_estimate as est

CONTROL_GAIN_MAX = 0.01


@claim("clt-identity", tolerance=f"<= {IDENTITY_TOL:g}", expected=0.0, missing="no runs with L >= 2", family="controls")
def identity(claim: Claim, ev) -> list[ClaimResult]:
    """R_L = C_L + (A_L - C_L)/L holds exactly on evaluation data"""
    # recomputed from the stored R_L, A_L, C_L (the exact floats the measurement compared), so every
    # store is judged by one definition, the rule any curve is checked by (check_prediction's too)
    row = identity_result(claim, "", ev.curves)
    return [row] if row is not None else []


@claim(
    "controls-no-depth-gain",
    tolerance=f"<= {CONTROL_GAIN_MAX}",
    expected="no gain",
    missing="no control runs",
    family="controls",
)
def controls(claim: Claim, ev) -> list[ClaimResult]:
    """Controls without layer diversity (tied layers, temperature-only) show no inverse-depth gain"""
    cs = [
        c
        for c in ev.curves
        if c.model == "softmax" and c.task == "topk" and c.variant in ("tied", "temperature") and len(c.depths) >= 2
    ]
    out = []
    for c in cs:
        # per seed, paired: each seed's deepest model against its own one-layer model
        gain = Estimate.from_seeds((c.loss[:, 0] - c.loss[:, -1]) / c.loss[:, 0])
        det = f"relative loss decrease from L={int(c.depths[0])} to L={int(c.depths[-1])}"
        # one seed has no error to test with: undecided, whatever its value
        ok = below_zero(gain, CONTROL_GAIN_MAX) if gain.n >= 2 else None
        measured = gain if gain.n >= 2 else gain.value
        out.append(claim.decided(c.label, ok, [c], det, "no gain", measured, None, band=(-np.inf, CONTROL_GAIN_MAX)))
    return out


def _beats(claim: Claim, ev, name: str) -> list[ClaimResult]:
    """The deepest model against the reference floor ``name``, paired on the same evaluation contexts."""
    out = []
    for c in select_curves(ev, "softmax", ("topk",)):
        b = c.floor(name)
        if b is None:
            continue
        ok = below_zero(b.diff)
        regime = {True: "depth beats it", None: "within the t quantile of it: undecided", False: "worse than it"}[ok]
        det = (
            f"paired difference R_L - floor = {est(b.diff.value, b.diff.se)} at L={b.depth} "
            f"(same evaluation contexts; {b.diff.test}); {regime}"
        )
        # expected column: the floor's loss (the reference); measured: the deepest model's loss, with the
        # paired difference's error and test (what the comparison with the floor rests on)
        deep = Estimate(b.loss + b.diff.value, b.diff.se, b.diff.dof, b.diff.basis, b.diff.n)
        out.append(claim.decided(c.label, ok, [c], det, b.loss, deep, None, p=decision_p(b.diff, -np.inf, 0.0)))
    return out


# one evaluation, one claim per reference floor: the single head, then the two-temperature mixture
# (to matter, depth must beat it too)
depth_beats_single, depth_beats_pair = (
    claim(
        f"depth-beats-{short}",
        f"The deepest trained model beats the best {what}",
        tolerance="R_L - floor < 0, paired t-test",
        missing="no softmax top-k runs with reference floors",
        family="controls",
    )(evaluated_with(_beats, f"depth_beats_{short}", name=name))
    for short, name, what in (
        ("single", "single", "single temperature-only head"),
        ("pair", "mixture", "two-temperature mixture"),
    )
)


CLAIMS = (identity, controls, depth_beats_single, depth_beats_pair)
