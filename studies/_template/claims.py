"""The template study's claim: deeper linear attention ends below the one-layer model.

CHANGE: each claim is a function ``evaluate(claim, ev) -> list[ClaimResult]`` declared with
``@claim`` (its id, unique across studies; its tolerance; what "not run" means; its family). Its
statement is the first paragraph of the docstring. ``ev`` holds the sweep's curves
(``ev.curves``, one :class:`~depthscale.derivations.study.Curve` per condition, with every depth
and seed); ``claim.decided`` applies the verdict rule (pass or fail only on decisive evidence,
else indicative with the would-be verdict).
"""

from __future__ import annotations

import math

from depthscale.derivations.study import EASY_TASKS, Claim, ClaimResult, below_zero, claim, select_curves
from depthscale.derivations.study import format_estimate as est


@claim(
    "template-deeper-is-lower",  # CHANGE: a new id
    tolerance="< 0, t-test",
    expected="< 0",
    missing="no linear easy-task runs at two depths",
    family="template",  # CHANGE: groups the claim in tables (an explicit field, never a file name)
)
def deeper_is_lower(claim: Claim, ev) -> list[ClaimResult]:
    """Trained linear attention at its deepest depth ends below the one-layer model (R_L - R_1 < 0)

    Per linear easy-task curve: the difference of the seed means at the deepest depth and at the
    first, its error from the seeds' scatter at each depth added in quadrature (conservative: a
    seed's runs at the two depths share their data), by the t-test.
    """
    out = []
    for c in select_curves(ev, "linear", EASY_TASKS):
        if len(c.depths) < 2:
            continue
        diff = c.estimate(len(c.depths) - 1).minus(c.estimate(0))
        detail = f"R_{int(c.depths[-1])} - R_{int(c.depths[0])} = {est(diff.value, diff.se)}"
        out.append(claim.decided(c.label, below_zero(diff), [c], detail, "< 0", diff, None, band=(-math.inf, 0.0)))
    return out


CLAIMS = (deeper_is_lower,)  # in report order


__all__ = ["CLAIMS", "deeper_is_lower"]
