"""Claims on the theory alone: machine-checked derivations, equal-step local slopes, the paper's top-2 floors."""

from __future__ import annotations

from depthscale.derivations.claims.verdicts import ClaimResult
from depthscale.derivations.formatting import format_percent as pct

SLOPE_TOL = 0.05  # equal-step local slope against -zeta
FLOOR_REFERENCE_RTOL = 0.03


# ---------------------------------------------------------------- theory-only claims
def theory_claims(ev):
    """Machine-checked derivations, the equal-step slope and the paper's five top-2 floors."""
    out = []
    d = ev.theory.get("derivations")
    if d is not None:
        bad = [f"{name}: {step}" for name, steps in d.items() for step, ok in steps if not ok]
        n = sum(len(s) for s in d.values())
        out.append(
            ClaimResult(
                "derivations-checked",
                "Every derivation step is machine-checked",
                float(n),
                float(n - len(bad)),
                None,
                "all steps",
                "pass" if not bad else "fail",
                "; ".join(bad) or "steps verified by sympy simplification or mpmath checks",
            )
        )
    for key, (slope, zeta) in sorted(ev.theory.get("slopes", {}).items()):
        out.append(
            ClaimResult(
                f"equal-step-slope (a,b)={key}",
                "Equal-step depth law has local slope -zeta over L in [16, 256]",
                -zeta,
                slope,
                None,
                f"± {SLOPE_TOL}",
                "pass" if abs(slope + zeta) <= SLOPE_TOL else "fail",
                "finite sum at d = 10^6",
            )
        )
    for key, (val, se, ref) in sorted(ev.theory.get("floor_reference", {}).items()):
        rel = (val - ref) / ref
        out.append(
            ClaimResult(
                f"floor-reference (a,b)={key}",
                "Monte Carlo T - h^T G^+ h reproduces the paper's top-2 floors (d=128, P=1024)",
                ref,
                val,
                se,
                f"{FLOOR_REFERENCE_RTOL:.0%}",
                "pass" if abs(rel) <= FLOOR_REFERENCE_RTOL else "fail",
                f"relative difference {pct(rel)}",
            )
        )
    return out
