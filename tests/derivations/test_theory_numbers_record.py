"""The typed theory numbers claims read (``Evidence.theory``): a misspelled kind is refused, never
silently read as "not computed"; the evidence is immutable, and what a study derives from it (the
protocol floors) is computed once."""

import dataclasses

import pytest
from synthetic import curve

from depthscale.derivations.analysis.curve import curves
from depthscale.derivations.analysis.theory_numbers import TheoryNumbers
from depthscale.derivations.claims import protocol_rows
from depthscale.derivations.claims.protocol_rows import ProtocolFloors
from depthscale.derivations.claims.registry import Evidence, evaluate_claims
from depthscale.studies.core.theory import CoreTheory

KEY = (0.5, 0.5, 2, 8, 32)  # (a, b, k, d, P) of the synthetic linear top-2 curve
(CURVE,) = curves(curve(lambda L: 1.0, model="linear", k=2, a=0.5, b=0.5, depths=(1, 2)))  # any one curve


def _linear_floor_verdict(theory):
    recs = curve(lambda L: 1.0, model="linear", k=2, a=0.5, b=0.5, depths=(1, 2, 4, 16, 64))
    rows = evaluate_claims(Evidence(curves(recs), theory))
    return next(r.verdict for r in rows if r.id.startswith("linear-floor"))


def _core(**numbers):
    """The core study's theory numbers, as a report keeps them."""
    return TheoryNumbers(studies={"core": CoreTheory(**numbers)})


def test_the_typed_numbers_and_their_mapping_decide_the_same_claim():
    # the runs sit at loss 1.0: a floor of 1.0 passes, 1.3 fails, none leaves the claim not run
    assert _linear_floor_verdict(_core(floor_context={KEY: (1.0, 0.001)})) == "pass"
    assert _linear_floor_verdict({"studies": {"core": CoreTheory(floor_context={KEY: (1.0, 0.001)})}}) == "pass"
    assert _linear_floor_verdict(_core(floor_context={KEY: (1.3, 0.001)})) == "fail"
    assert _linear_floor_verdict(_core()) == "not run"
    assert _linear_floor_verdict(TheoryNumbers()) == "not run"  # the core study's numbers not computed


def test_a_misspelled_kind_of_number_is_refused_not_read_as_missing():
    # an untyped dict with "floor_contxt" left the linear-floor claim "not run" without a word
    with pytest.raises(ValueError, match=r"^theory=\['floor_contxt'\]: must be keys among studies$"):
        Evidence([], {"floor_contxt": {KEY: (1.0, 0.001)}})
    with pytest.raises(TypeError, match="floor_contxt"):
        TheoryNumbers(floor_contxt={KEY: (1.0, 0.001)})  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="floor_contxt"):
        CoreTheory(floor_contxt={KEY: (1.0, 0.001)})  # type: ignore[call-arg]


def test_theory_that_is_no_mapping_is_refused_in_one_line():
    with pytest.raises(ValueError, match=r"^theory=None: must be a TheoryNumbers or a mapping of its field names$"):
        Evidence([], None)


def test_protocol_floors_are_gathered_once_and_the_evidence_never_changes(monkeypatch):
    gathered = ProtocolFloors({"run-key": {"floors": {"single": (1.0, 0.01)}, "excess": {}}})
    calls = []
    monkeypatch.setattr(protocol_rows, "protocol_curves", lambda cs: [("protocol", c) for c in cs])
    monkeypatch.setattr(protocol_rows, "gather_protocol_floors", lambda cs, load: calls.append(len(cs)) or gathered)
    theory = TheoryNumbers(studies={"other": (1.0, 0.1)})
    ev = Evidence([CURVE], theory, load_arrays=lambda key: None)
    assert protocol_rows.protocol_floors(ev) is gathered and protocol_rows.protocol_floors(ev) is gathered
    assert calls == [1]  # the second call (a table, a figure) reads what the first derived
    # the evidence's own fields are what it was built with: no cache rewrites them
    assert ev.theory is theory and theory.studies == {"other": (1.0, 0.1)}
    with pytest.raises(dataclasses.FrozenInstanceError):
        ev.theory = TheoryNumbers()  # type: ignore[misc]
    # numbers a report computed (a study's theory numbers, whichever study's) are read, not gathered again
    given = Evidence([CURVE], TheoryNumbers(studies={"any-study": gathered}))
    assert protocol_rows.protocol_floors(given) is gathered and calls == [1]
