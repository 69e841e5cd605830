"""Claims on the best depth-L linear-attention predictor at finite (d, P) (issue 22, docs/claims.md).

- ``linear-optimum``: per linear easy-task curve and depth, the trained loss against the optimum
  of its own class at its own (d, P, L): the best polynomial ``sum_{r<=L} a_r S^r`` of the context
  covariance (:mod:`depthscale.theory.linear_optimum`), within 10 % plus the t margin of their
  difference (the seeds' scatter on n - 1 degrees of freedom, the optimum's Monte Carlo error)
- ``linear-exponent-finite``: the optimum's own depth exponent at the paper's scale (d = 128,
  P = 1024), fitted as the paper fits (``c L^-alpha``, eq. 16 with L0 = 0, log-log least squares)
  over L = 1..64, against the paper's Table 2 exponents, within 10 %.
The numbers they read are the study's theory numbers (:mod:`.theory`), an
:class:`~depthscale.derivations.study.OptimumNumbers` record; the rule "at the optimum"
(``near_optimum``) and the note on what limits a trained curve (``optimum_limit_note``, which the
``linear-exponent`` row shows too) are the library's.
"""

from __future__ import annotations

import math

from depthscale.derivations.study import (
    EASY_TASKS,
    OPTIMUM_RTOL,
    Claim,
    ClaimResult,
    Condition,
    Estimate,
    claim,
    near_optimum,
    optimum_numbers_of,
    optimum_of,
)
from depthscale.derivations.study import format_estimate as est
from depthscale.derivations.study import format_percent as pct
from depthscale.derivations.study import format_value as num
from depthscale.theory.linear_optimum import DEPTH_LIMIT

from .theory import REFERENCE_DEPTHS, REFERENCE_FILE

EXPONENT_RTOL = 0.10  # the optimum's exponent at d = 128, P = 1024 against the paper's


@claim(
    "linear-optimum",
    tolerance=f"{OPTIMUM_RTOL:.0%}, t-test",
    expected="the optimum",
    missing="no linear easy-task runs",
    family="linear_optimum",
)
def linear_optimum_claim(claim: Claim, ev) -> list[ClaimResult]:
    """Trained linear loss equals the best polynomial sum_{r<=L} a_r S^r (S = X^T X / P) at its (d, P, L)"""
    # the paper's model, from the small start or from the Jacobi steps (ModelConfig init="jacobi")
    cs = [c for c in ev.curves if c.model == "linear" and c.task in EASY_TASKS and c.variant in ("base", "jacobi-init")]
    out = []
    for c in cs:
        opt = optimum_of(optimum_numbers_of(ev), c)
        for j, L in enumerate(c.depths):
            label = Condition.of(c, label=f"{c.label} L={int(L)}", depth=int(L))
            m = c.estimate(j)
            if int(L) not in opt:
                why = "optimum not computed" + (" (L > 64)" if L > DEPTH_LIMIT else "")
                out.append(claim.not_run(why, label, None, m.value, m.se))
                continue
            val, vse, ins, *equal = opt[int(L)]
            ok = near_optimum(m, val, vse)
            seeds = [r.get("final_loss") for r in c.records_at(int(L))]
            per_seed = ", ".join(num(s / val) for s in seeds if s is not None)
            det = (
                f"trained / optimum = {num(m.value / val)} (per seed {per_seed}); optimum {est(val, vse)}, "
                f"in-sample bound {num(ins)}"
            )
            if equal:  # what layers that all take one step reach at this (d, P)
                det += f"; equal steps {est(equal[0], equal[1])} (trained / equal steps = {num(m.value / equal[0])})"
            out.append(claim.decided(label, ok, [c], det, val, m if m.n >= 2 else m.value, None, expected_error=vse))
    return out


@claim(
    "linear-exponent-finite",
    tolerance=f"{EXPONENT_RTOL:.0%}",
    expected="paper's exponent",
    missing="reference optimum not loaded",
    family="linear_optimum",
)
def linear_exponent_finite(claim: Claim, ev) -> list[ClaimResult]:
    """Exponent of the best depth-L polynomial in S at d=128, P=1024 equals the paper's trained exponent

    The paper's exponents are its Table 2's, of trained models.
    """
    out = []
    for (a, b), (alpha, se, alpha_in, paper, n) in sorted(optimum_numbers_of(ev).reference.items()):
        rel = (alpha - paper) / paper
        # a Monte Carlo number on thousands of contexts, no training: decided whenever its margin
        # (the normal quantile) clears the bound either way
        e = Estimate(alpha, se, math.inf, "Monte Carlo", n)
        margin = e.margin / paper
        ok = True if abs(rel) + margin <= EXPONENT_RTOL else (False if abs(rel) - margin > EXPONENT_RTOL else None)
        v = "indicative" if ok is None else ("pass" if ok else "fail")
        zeta = (a + b - 1) / a
        det = (
            f"c L^-alpha over L={list(REFERENCE_DEPTHS)} (the paper's grid went to 256); relative difference "
            f"{pct(rel)}; in-sample bound gives alpha = {num(alpha_in)}; zeta = {num(zeta)}, 2 zeta = {num(2 * zeta)}; "
            f"{n} fitting + {n} evaluation contexts (cached, data/{REFERENCE_FILE})"
        )
        if v == "indicative":
            det += f"; the Monte Carlo error ({e.t:.2f} s.e. = {num(e.margin)}) straddles the {claim.tolerance} bound"
        out.append(claim.result(f"(a,b)=({a:g},{b:g})", paper, e, None, v, det))
    return out


CLAIMS = (linear_optimum_claim, linear_exponent_finite)


__all__ = ["CLAIMS", "EXPONENT_RTOL", "linear_optimum_claim", "linear_exponent_finite"]
