"""The :class:`Claim` record and the skeleton every claim shares, written once.

A claim is declared, not written out: its id, statement, tolerance and family are fields of a
:class:`Claim`, and its ``evaluate(claim, ev)`` only picks the curves it needs, measures and says
whether the measurement agrees (``ok``: True, False, or None when too imprecise to say). The record
builds every :class:`~depthscale.derivations.claims.verdicts.ClaimResult`: its ``claim_id`` is
``claim.id`` and its typed ``condition`` is made from a label, a
:class:`~depthscale.derivations.claims.verdicts.Condition` or a curve; a fit that cannot be used
gives ``not run`` or ``indicative`` (:meth:`Claim.without_fit`), the verdict rule is
:func:`~depthscale.derivations.claims.verdicts.decision`
(:meth:`Claim.decided`), and a claim with nothing to test gives one ``not run`` row.

Examples
--------
>>> from depthscale.derivations.claims.evidence import Evidence
>>> @claim("demo", "Some curve exists", tolerance="none", missing="no curves", family="demo")
... def demo(c, ev):
...     return [c.result("", 1, len(ev.curves), None, "pass", "counted")] if ev.curves else []
>>> [(r.id, r.verdict, r.reason) for r in demo(Evidence([], {}))]
[('demo', 'not run', 'no curves')]
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from ...theory._validate import check_choice
from ..analysis.estimate import Estimate
from .evidence import Evidence
from .verdicts import ClaimResult, Condition, apply_holm, decision, decision_p, unidentified

_UNSET: object = object()
KINDS = ("simulation", "theory")


@dataclass(frozen=True)
class Claim:
    """One claim of docs/claims.md.

    Attributes
    ----------
    id : str
        The claim's id (each result's ``claim_id``).
    statement : str
        What is claimed (the ``claim`` column).
    tolerance : str
        How close the measurement must be (the ``tolerance`` column; docs/claims.md lists the same text).
    family : str
        The group the claim is listed under (its study's family name, e.g. ``"softmax"``), given explicitly.
    evaluate : callable
        ``evaluate(claim, ev) -> list[ClaimResult]``: one result per condition tested.
    expected : object
        The ``expected`` cell of the ``not run`` row.
    missing : str or None
        The reason of the ``not run`` row given when ``evaluate`` returns nothing; None: no row then
        (claims on theory numbers that a report may leave out).
    kind : str
        ``"simulation"`` (tested on trained runs) or ``"theory"`` (decided by theory numbers alone;
        a report states these after the others).
    """

    id: str
    statement: str
    tolerance: str
    family: str
    evaluate: Callable[[Claim, Evidence], list[ClaimResult]]
    expected: object = None
    missing: str | None = ""
    kind: str = "simulation"

    def __post_init__(self) -> None:
        check_choice("kind", self.kind, KINDS)

    def __call__(self, ev: Evidence) -> list[ClaimResult]:
        rows = list(self.evaluate(self, ev))
        if not rows and self.missing is not None:
            rows = [self.not_run(self.missing)]
        # one claim across its conditions is a family: Holm keeps its family-wise error at 5 %
        return apply_holm(rows) if self.kind == "simulation" else rows

    @property
    def __name__(self) -> str:  # the evaluate function's name, as the family module spells it
        return self.evaluate.__name__

    def row_id(self, label="") -> str:
        """The id of the result on one condition: ``"<id> <label>"`` (the id alone without a label)."""
        label = Condition.of(label).label
        return f"{self.id} {label}" if label else self.id

    def result(
        self,
        label,
        expected,
        measured: float | Estimate | None,
        error: float | None,
        verdict: str,
        reason: str,
        *,
        note: str = "",
        expected_error: float | None = None,
        would_be: str | None = None,
        test: str = "",
    ) -> ClaimResult:
        """A result of this claim on the condition ``label`` (a label, a ``Condition`` or a curve).

        ``measured`` may be an :class:`~depthscale.derivations.analysis.estimate.Estimate`: its value,
        error and test (``error`` must then be None); ``test`` names a test that decided without one
        (a lack-of-fit F test)."""
        if isinstance(measured, Estimate):
            if error is not None:
                raise TypeError(f"error={error!r}: must be None when measured is an Estimate (it carries its error)")
            error, test = measured.se, test or measured.test
            measured = measured.value
        return ClaimResult(
            self.id,
            self.statement,
            expected,
            measured,
            error,
            self.tolerance,
            verdict,
            reason,
            note=note,
            expected_error=expected_error,
            condition=Condition.of(label),
            would_be=would_be,
            test=test,
        )

    def not_run(self, reason: str, label="", expected=_UNSET, measured=None, error=None) -> ClaimResult:
        """No data (or no fit) to test this claim on ``label``."""
        exp = self.expected if expected is _UNSET else expected
        return self.result(label, exp, measured, error, "not run", reason)

    def indicative(self, label, expected, reason: str) -> ClaimResult:
        """Undecided, with nothing measured: the data are there but say nothing (a fit not identified)."""
        return self.result(label, expected, None, None, "indicative", reason)

    def without_fit(self, label, expected, fits: dict, no_fit: str = "", note: str = "") -> ClaimResult | None:
        """The unusable-fit rule: ``not run`` when there is no fit (``no_fit`` says why, or a fit's
        ``failure``), ``indicative`` when a fit is not identified (its reason, then ``note``), else None.

        ``fits`` maps a fit's name (the law, as the reason shows it) to its ``FitResult``.
        """
        no_fit = no_fit or next((f.failure for f in fits.values() if f.failure), "")
        if no_fit:
            return self.not_run(no_fit + note, label, expected)
        why = unidentified(fits)
        return self.indicative(label, expected, why + note) if why else None

    def decided(
        self,
        label,
        ok: bool | None,
        curves: Iterable,
        detail: str,
        expected,
        measured: float | Estimate | None,
        error: float | None,
        *,
        note: str = "",
        expected_error: float | None = None,
        budget_stopped: Iterable = (),
        p: float | None = None,
        band: tuple[float, float] | None = None,
        test: str = "",
    ) -> ClaimResult:
        """The verdict rule (:func:`~depthscale.derivations.claims.verdicts.decision`) on these curves and the result.

        ``p`` is the decision's p-value for Holm's rule within the claim's family; without it, it is
        :func:`~depthscale.derivations.claims.verdicts.decision_p` of ``measured`` (an Estimate) on
        ``band``, or on ``expected`` when that is a ``(lo, hi)`` band."""
        curves = list(curves)
        v, det, would = decision(ok, curves, detail, budget_stopped)
        if band is None and isinstance(expected, tuple) and len(expected) == 2:
            band = expected
        if p is None and ok is not None and band is not None and isinstance(measured, Estimate):
            p = decision_p(measured, *band)
        row = self.result(
            label,
            expected,
            measured,
            error,
            v,
            det,
            note=note,
            expected_error=expected_error,
            would_be=would,
            test=test,
        )
        return replace(row, p=p, curves=tuple(curves))


def claim(
    id: str,
    statement: str | None = None,
    *,
    tolerance: str,
    expected=None,
    missing: str | None = "",
    family: str,
    kind: str = "simulation",
) -> Callable[[Callable[[Claim, Evidence], list[ClaimResult]]], Claim]:
    """Declare a claim: decorates its ``evaluate(claim, ev)`` and returns the :class:`Claim` record.

    The statement is, unless given, the first paragraph of ``evaluate``'s docstring (so it is written
    once). ``family`` groups the claim in tables and ``claims(family=...)``: an explicit field, never
    read from a module's file name.

    >>> @claim("two", tolerance="none", family="demo")
    ... def two(c, ev):
    ...     '''Two curves
    ...     exist
    ...
    ...     How they are counted.'''
    ...     return []
    >>> two.statement
    'Two curves exist'
    >>> claim("three", tolerance="none", family="demo")(lambda c, ev: [])
    Traceback (most recent call last):
    ...
    ValueError: claim 'three': no statement and no docstring to take it from
    """

    def wrap(evaluate):
        said = statement
        if said is None:
            said = " ".join((evaluate.__doc__ or "").strip().split("\n\n")[0].split())
            if not said:
                raise ValueError(f"claim {id!r}: no statement and no docstring to take it from")
        return Claim(id, said, tolerance, family, evaluate, expected, missing, kind)

    return wrap


def evaluated_with(evaluate: Callable[..., list[ClaimResult]], name: str, /, **params) -> Callable:
    """``evaluate(claim, ev, **params)`` as the ``evaluate(claim, ev)`` of one claim, named ``name`` in
    ``evaluate``'s module: one evaluation declared as several claims that differ in ``params``.

    >>> def count(c, ev, least):
    ...     return [c.result("", least, len(ev.curves), None, "pass", "counted")] if len(ev.curves) >= least else []
    >>> declare = claim("two", "Two curves exist", tolerance="none", missing="fewer", family="demo")
    >>> two = declare(evaluated_with(count, "two", least=2))
    >>> from depthscale.derivations.claims.evidence import Evidence
    >>> two.__name__, [r.verdict for r in two(Evidence([], {}))]
    ('two', ['not run'])
    """

    def bound(claim: Claim, ev: Evidence) -> list[ClaimResult]:
        return evaluate(claim, ev, **params)

    bound.__name__ = bound.__qualname__ = name
    bound.__module__ = evaluate.__module__
    bound.__doc__ = evaluate.__doc__
    return bound


__all__ = ["Claim", "claim", "evaluated_with"]
