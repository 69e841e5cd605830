"""The claims registry: every claim of docs/claims.md, in report order, and their evaluation.

A claim is a :class:`~depthscale.derivations.claims.claim.Claim` record (id, statement, tolerance,
family, evaluate) declared in its family's module (``theory_checks``, ``linear``, ``softmax``,
``controls``, ``protocol_study``, ``paper_curves``, ``linear_optimum``), each of which lists its
claims in ``CLAIMS``; the record builds every result, so ids and tolerances are written once.
:data:`REGISTRY` orders them for the report. Adding a claim: declare it in its family's module with
``@claim(...)``, add it to the family's ``CLAIMS`` (and a new family here), describe it in
docs/claims.md (tests/derivations/test_claims_doc.py compares ids and tolerances) and test it in
tests/derivations/test_claims.py.
"""

from __future__ import annotations

from . import controls, linear, linear_optimum, paper_curves, protocol_study, softmax, theory_checks
from .claim import Claim
from .evidence import Evidence
from .verdicts import ClaimResult, errored

REGISTRY: tuple[Claim, ...] = (
    *theory_checks.CLAIMS,
    *linear.CLAIMS,
    *softmax.CLAIMS[:4],
    controls.identity,
    *softmax.CLAIMS[4:],
    *controls.CLAIMS[1:],
    *protocol_study.CLAIMS,
    *paper_curves.CLAIMS,
    *linear_optimum.CLAIMS,
)

CLAIMS_BY_ID = {c.id: c for c in REGISTRY}


def evaluate_claims(ev: Evidence) -> list[ClaimResult]:
    """Every claim's results, in registry order; a claim that raises gets the verdict ``error``.

    The evidence's protocol floors come from ``ev.load_arrays`` when the theory numbers lack them
    (:meth:`Evidence.protocol_floors`), so this and a report decide the same claims from one store.
    """
    rows = []
    for claim in REGISTRY:
        try:
            rows.extend(claim(ev))
        except Exception as exc:  # a broken claim must show in the report, not vanish
            rows.append(errored(claim.id, claim.statement, exc))
    return rows


__all__ = ["Claim", "Evidence", "REGISTRY", "CLAIMS_BY_ID", "evaluate_claims"]
