"""The claims registry: the claims of every registered study, looked up by id, and their evaluation.

A claim is a :class:`~depthscale.derivations.claims.claim.Claim` record (id, statement, tolerance,
family, evaluate) declared in a study's package; a study lists its claims in its
:class:`~depthscale.derivations.study.Study` record, and the studies are found through the
``depthscale.studies`` entry points (:mod:`depthscale.derivations.study`). This module names no
study: :func:`registered_claims` is the union of theirs, in registry order (each study's ``report_studies``
first, as its reports list them, then the others by name).

``REGISTRY`` (every claim) and ``CLAIMS_BY_ID`` (``{id: Claim}``) are computed on first use.
Adding a claim: declare it with ``@claim(...)`` in its study, list it in the study's ``claims``,
describe it in docs/claims.md (tests/derivations/test_claims_doc.py compares ids and tolerances)
and test it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ...theory._validate import bad_argument, check_bool
from .claim import Claim
from .evidence import Evidence
from .verdicts import ClaimResult, errored


def study_order() -> list:
    """The registered studies in registry order: each study's ``report_studies`` (by name order of the
    studies that list them), then every study not listed yet."""
    from ..study import report_studies, studies

    order: dict[str, object] = {}
    for s in studies().values():
        for t in report_studies(s):
            order.setdefault(t.name, t)
    return list(order.values())


def registered_claims(studies: Iterable | None = None) -> tuple[Claim, ...]:
    """The claims of these studies (every registered study by default, in :func:`study_order`)."""
    return tuple(c for s in (study_order() if studies is None else studies) for c in s.claims)


def claims(ids: Iterable[str] | str | None = None, family: str | None = None) -> tuple[Claim, ...]:
    """Claims looked up by id (in the order asked) and/or by family (the module that declares them).

    An id that names no registered claim raises ``ValueError`` naming it and the known ids.
    """
    every = registered_claims()
    by_id = {c.id: c for c in every}
    if isinstance(ids, str):
        ids = [ids]
    if ids is None:
        chosen = list(every)
    else:
        ids = list(ids)
        unknown = [i for i in ids if i not in by_id]
        if unknown:
            bad_argument("ids", unknown, "ids of registered claims: " + ", ".join(by_id))
        chosen = [by_id[i] for i in ids]
    if family is not None:
        families = sorted({c.family for c in every})
        if family not in families:
            bad_argument("family", family, "a claim family: " + ", ".join(families))
        chosen = [c for c in chosen if c.family == family]
    return tuple(chosen)


def evaluate_claims(ev: Evidence, claims: Sequence[Claim] | None = None, *, not_run: bool = True) -> list[ClaimResult]:
    """Every claim's results, in registry order; a claim that raises gets the verdict ``error``.

    ``claims``: the claims to evaluate (default: :func:`registered_claims`). ``not_run=False`` leaves the
    ``not run`` rows out (a claim with nothing to test). A study's reports evaluate the claims of its
    ``report_studies`` (:func:`depthscale.derivations.study.report_studies`).
    """
    if not isinstance(ev, Evidence):
        raise TypeError(f"ev={type(ev).__name__}: must be an Evidence, such as Evidence(curves(records))")
    not_run = check_bool("not_run", not_run)
    if claims is not None:
        claims = list(claims) if isinstance(claims, Iterable) and not isinstance(claims, str) else [claims]
        for i, c in enumerate(claims):
            if not isinstance(c, Claim):
                raise TypeError(f"claims[{i}]={c!r}: must be a Claim (from depthscale.derivations.study import claim)")
    rows = []
    for claim in registered_claims() if claims is None else claims:
        try:
            rows.extend(claim(ev))
        except Exception as exc:  # a broken claim must show in the report, not vanish
            rows.append(errored(claim.id, claim.statement, exc))
    return rows if not_run else [r for r in rows if r.verdict != "not run"]


@dataclass(frozen=True)
class ReportEvidence:
    """What a report decides on: the studies it reports (in report order), the evidence built from
    the store's records and the claims of those studies (:func:`report_evidence`)."""

    studies: tuple
    evidence: Evidence
    claims: tuple[Claim, ...]


def report_evidence(
    records: Iterable,
    study=None,
    *,
    floor_contexts: int = 3000,
    reference_contexts: int = 3000,
    load_arrays=None,
    theory: Iterable[str] | None = None,
) -> ReportEvidence:
    """The evidence and claims a report of ``study``'s presets decides on (every registered study's
    without one): the records grouped into curves, each reported study's theory numbers at these Monte
    Carlo sizes, and ``load_arrays`` (``Store.load_arrays``) for the runs' stored arrays. The one path
    from records to an :class:`Evidence`: the report builder and the commands that re-decide one claim
    (``depthscale calibrate``, ``depthscale plan``) take it alike.

    ``theory``: the names of the studies whose theory numbers are computed (None: every reported
    study's, as a report does). A study left out computes its numbers when its claims ask for them,
    where it can (``Evidence.study_numbers``), or its claims say they were not computed: a command
    that decides one claim computes only its own study's numbers (a report's Monte Carlo floors can
    take minutes).

    >>> rep = report_evidence([], theory=())   # no theory numbers: nothing to compute them for
    >>> rep.evidence.curves, len(rep.claims) == len(registered_claims())
    ((), True)
    """
    from ..analysis.curve import curves
    from ..analysis.theory_numbers import TheoryNumbers
    from ..study import TheoryInputs, report_studies

    reported = tuple(study_order() if study is None else report_studies(study))
    wanted = None if theory is None else set(theory)
    cs = curves(records)
    inputs = TheoryInputs(cs, floor_contexts, reference_contexts, load_arrays)
    numbers = {
        s.name: s.theory(inputs) for s in reported if s.theory is not None and (wanted is None or s.name in wanted)
    }
    ev = Evidence(cs, TheoryNumbers(studies=numbers), load_arrays)
    return ReportEvidence(reported, ev, registered_claims(reported))


_KEPT: dict = {}  # REGISTRY and CLAIMS_BY_ID, kept while the registry of studies is the same


def __getattr__(name: str):
    if name in ("REGISTRY", "CLAIMS_BY_ID"):
        from ..study import studies

        found = tuple(map(id, studies().values()))
        if _KEPT.get("studies") != found:  # computed once per registry (a test may swap it)
            every = registered_claims()
            _KEPT.update(studies=found, REGISTRY=every, CLAIMS_BY_ID={c.id: c for c in every})
        return _KEPT[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Claim",
    "Evidence",
    "ReportEvidence",
    "registered_claims",
    "claims",
    "study_order",
    "evaluate_claims",
    "report_evidence",
]
