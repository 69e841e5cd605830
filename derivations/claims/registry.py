"""The claims registry: every claim of docs/claims.md, in report order, and their evaluation.

A claim is a function ``claim(ev: Evidence) -> list[ClaimResult]`` listed in :data:`REGISTRY`; it
returns one result per condition it tests, or one ``not run`` result when the sweep has nothing
for it. Claims live in one module per family (``linear``, ``softmax``, ``controls``,
``theory_checks``, ``protocol_study``), each with its tolerances as module constants; the rules
that turn evidence into verdicts live in :mod:`depthscale.derivations.claims.verdicts`. Adding a
claim: write the function in its family's module, append it to :data:`REGISTRY`, describe it in
docs/claims.md and test it in tests/derivations/test_claims.py.
"""

from __future__ import annotations

from depthscale.derivations.claims import linear_optimum, paper_curves, protocol_study
from depthscale.derivations.claims.controls import baselines, controls, identity
from depthscale.derivations.claims.evidence import Evidence
from depthscale.derivations.claims.linear import linear_exponent, linear_floor, mode_learning
from depthscale.derivations.claims.softmax import (
    clt_convergence,
    exponent_spread,
    softmax_below_linear,
    softmax_easy,
    softmax_exponent,
    topk_slower,
)
from depthscale.derivations.claims.theory_checks import theory_claims
from depthscale.derivations.claims.verdicts import ClaimResult, errored

REGISTRY = (
    theory_claims,
    linear_exponent,
    mode_learning,
    linear_floor,
    softmax_easy,
    softmax_exponent,
    exponent_spread,
    topk_slower,
    identity,
    clt_convergence,
    softmax_below_linear,
    controls,
    baselines,
    *protocol_study.CLAIMS,
    *paper_curves.CLAIMS,
    *linear_optimum.CLAIMS,
)


def evaluate_claims(ev: Evidence) -> list[ClaimResult]:
    """Every claim's results, in registry order; a claim that raises gets the verdict ``error``."""
    rows = []
    for claim in REGISTRY:
        try:
            rows.extend(claim(ev))
        except Exception as exc:  # a broken claim must show in the report, not vanish
            rows.append(errored(claim.__name__, (claim.__doc__ or claim.__name__).strip(), exc))
    return rows


__all__ = ["Evidence", "REGISTRY", "evaluate_claims"] + [f.__name__ for f in REGISTRY]
