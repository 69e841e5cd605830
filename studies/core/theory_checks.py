"""Claims on the theory alone: machine-checked derivations, equal-step local slopes, the paper's top-2 floors."""

from __future__ import annotations

import math
from functools import partial

from depthscale.derivations.study import Claim, ClaimResult, Estimate, claim, within
from depthscale.derivations.study import format_percent as pct

from .theory import numbers

SLOPE_TOL = 0.05  # equal-step local slope against -zeta
FLOOR_REFERENCE_RTOL = 0.03


# ---------------------------------------------------------------- theory-only claims
# claims on theory numbers a report may leave out: no "not run" row without them
theory_claim = partial(claim, missing=None, kind="theory")


@theory_claim(
    "derivations-checked", "Every derivation step is machine-checked", tolerance="all steps", family="theory_checks"
)
def derivations_checked(claim: Claim, ev) -> list[ClaimResult]:
    """Every step of the derivations is verified by sympy simplification or an mpmath check."""
    d = numbers(ev).derivations
    if d is None:
        return []
    bad = [f"{name}: {step}" for name, steps in d.items() for step, ok in steps if not ok]
    n = sum(len(s) for s in d.values())
    reason = "; ".join(bad) or "steps verified by sympy simplification or mpmath checks"
    verdict = "pass" if not bad else "fail"
    return [claim.result("", float(n), float(n - len(bad)), None, verdict, reason, test="exact (symbolic)")]


@theory_claim(
    "equal-step-slope",
    "Equal-step depth law has local slope -zeta over L in [16, 256]",
    tolerance=f"± {SLOPE_TOL}",
    family="theory_checks",
)
def equal_step_slope(claim: Claim, ev) -> list[ClaimResult]:
    """The equal-step law's local slope against -zeta (a finite sum, exact: decided by theory alone)."""
    return [
        claim.result(
            f"(a,b)={key}",
            -zeta,
            slope,
            None,
            "pass" if abs(slope + zeta) <= SLOPE_TOL else "fail",
            "finite sum at d = 10^6",
            test="exact (finite sum)",
        )
        for key, (slope, zeta) in sorted(numbers(ev).slopes.items())
    ]


@theory_claim(
    "floor-reference",
    "Monte Carlo T - h^T G^+ h reproduces the paper's top-2 floors (d=128, P=1024)",
    tolerance=f"{FLOOR_REFERENCE_RTOL:.0%}",
    family="theory_checks",
)
def floor_reference(claim: Claim, ev) -> list[ClaimResult]:
    """The paper's five top-2 floors recomputed by Monte Carlo."""
    th = numbers(ev)
    out = []
    for key, (val, se, ref) in sorted(th.floor_reference.items()):
        # the Monte Carlo mean's 95 % interval, relative to the paper's value, inside the tolerance
        rel = Estimate((val - ref) / ref, se / ref, math.inf, "Monte Carlo", th.reference_contexts)
        ok = within(rel, 0.0, FLOOR_REFERENCE_RTOL)
        verdict = {True: "pass", False: "fail", None: "indicative"}[ok]
        why = f"relative difference {pct(rel.value)} ± {pct(rel.margin)}"
        out.append(claim.result(f"(a,b)={key}", ref, val, se, verdict, why, test=rel.test))
    return out


CLAIMS = (derivations_checked, equal_step_slope, floor_reference)
