"""The generic claims, one row per curve (a condition: its task, model, map, engine and protocol).

- ``generic-depth-helps``: the deepest depth ends below the shallowest, as the depth gain
  ``(R_first - R_last) / R_first`` paired per seed (one seed's runs share its data stream); pass when
  its whole 95 % interval is above 0, fail when wholly below.
- ``generic-inverse-depth``: ``R_L = R_inf + c L^-alpha`` with alpha in [0.8, 1.2], the paper's
  softmax law, by the one inverse-depth rule (:func:`inverse_depth_verdict`: the fitted alpha's
  interval, or lack of fit over the band as the second route to fail). Every curve but trained linear
  attention's, whose law is the spectrum's power law (study ``core``).

Both go through ``claim.decided``: a curve decides only on decisive runs (three seeds, five depths
spanning x32, converged, enough evaluation contexts); otherwise the row is indicative and says what
it would be.
"""

from __future__ import annotations

import math

import numpy as np

from depthscale.derivations.study import (
    INVERSE_DEPTH,
    Claim,
    ClaimResult,
    Estimate,
    claim,
    in_range,
    inverse_depth_verdict,
)
from depthscale.derivations.study import format_estimate as est

NO_CURVES = "no curve with runs at two depths or more"


def _multi_depth(ev) -> list:
    return [c for c in ev.curves if len(c.depths) >= 2]


def law_curves(ev) -> list:
    """The curves ``generic-inverse-depth`` fits: three depths or more, any map or model but trained
    linear attention (whose law is the spectrum's power law, study ``core``)."""
    return [c for c in ev.curves if c.model != "linear" and len(c.depths) >= 3]


@claim(
    "generic-depth-helps",
    "Depth lowers the loss: the depth gain (R_first - R_last)/R_first is above 0",
    tolerance="> 0, t-test over seeds, 95 %",
    expected="> 0",
    missing=NO_CURVES,
    family="generic",
)
def depth_helps(claim: Claim, ev) -> list[ClaimResult]:
    """Per curve, the seeds' depth gains between its shallowest and deepest depth (a seed is left out
    when either loss is not finite or its shallowest loss is not positive)."""
    out = []
    for c in _multi_depth(ev):
        first, last = c.loss[:, 0], c.loss[:, -1]
        keep = np.isfinite(first) & np.isfinite(last) & (first > 0)
        gains = (first[keep] - last[keep]) / first[keep]
        L0, L1 = int(c.depths[0]), int(c.depths[-1])
        if not gains.size:
            out.append(claim.not_run(f"no seed has finite losses at L = {L0} and L = {L1}", c.label, "> 0"))
            continue
        gain = Estimate.from_seeds(gains)
        detail = f"(R_{L0} - R_{L1})/R_{L0} = {est(gain.value, gain.se)} [{gain.test}]"
        verdict = in_range(gain, 0.0, math.inf)
        out.append(claim.decided(c.label, verdict, [c], detail, "> 0", gain, None, band=(0.0, math.inf)))
    return out


@claim(
    "generic-inverse-depth",
    f"The loss falls as R_inf + c L^-alpha with alpha in [{INVERSE_DEPTH[0]:g}, {INVERSE_DEPTH[1]:g}] (the paper's 1/L)",
    tolerance="t-test, 95 %; lack of fit at 5 %",
    expected=INVERSE_DEPTH,
    missing="no curve of attention other than linear with runs at three depths or more",
    family="generic",
)
def inverse_depth(claim: Claim, ev) -> list[ClaimResult]:
    """Per curve of a softmax-family map or a user's model (not trained linear attention), the fit of
    ``R_inf + c L^-alpha`` over all its depths, decided by :func:`inverse_depth_verdict`."""
    out = []
    for c in law_curves(ev):
        f = c.fit("offset")
        if f.failure:
            out.append(claim.not_run(f.failure, c.label, INVERSE_DEPTH))
            continue
        v = inverse_depth_verdict(c, f, INVERSE_DEPTH)
        out.append(claim.decided(c.label, v.ok, [c], v.detail, INVERSE_DEPTH, v.alpha, None, p=v.p, test=v.test))
    return out


CLAIMS = (depth_helps, inverse_depth)  # in report order


__all__ = ["CLAIMS", "depth_helps", "inverse_depth", "law_curves"]
