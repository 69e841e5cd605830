"""The report's findings: one paragraph per claim with the numbers of its conditions, read from the
typed fields of the results (claim id, condition, verdict, would-be verdict), never from their reasons."""

from depthscale.derivations.claims.verdicts import ClaimResult
from depthscale.derivations.report.findings import SHOWN, claim_findings, claim_paragraph, simulation_first


def _r(cid, where, measured, verdict, reason="", error=0.05, expected=1.0, would_be=None):
    return ClaimResult(
        cid, "alpha near 1", expected, measured, error, "± 0.2", verdict, reason, condition=where, would_be=would_be
    )


def test_a_paragraph_tallies_verdicts_and_quotes_each_condition():
    rs = [
        _r("exp", "d=8", 0.27, "fail"),
        _r("exp", "d=16", 0.91, "indicative", "1 seed", would_be="pass"),
        _r("exp", "d=32", None, "indicative", "fit not identified", error=None),
    ]
    text = claim_paragraph("exp", rs)
    assert text.startswith("alpha near 1. 3 conditions: 1 fail, 2 indicative. ")
    assert "d=8: measured 0.27 ± 0.05 against 1 (± 0.2), fail" in text
    assert "d=16: measured 0.91 ± 0.05 against 1 (± 0.2), indicative (would be pass)" in text
    assert "d=32: measured — against 1 (± 0.2), indicative (undecided)" in text


def test_the_would_be_verdict_is_the_typed_field_not_the_reason_text():
    # a reason that reads like a would-be verdict says nothing: only would_be does
    said = _r("exp", "d=8", 0.9, "indicative", "alpha = 0.9; would be pass, but 1 seed(s) < 2")
    assert "would be" not in claim_paragraph("exp", [said])
    typed = _r("exp", "d=8", 0.9, "indicative", "no words about it", would_be="fail")
    assert "indicative (would be fail)" in claim_paragraph("exp", [typed])


def test_long_families_are_cut_with_a_count():
    rs = [_r("exp", f"c{i}", 1.0 + i / 100, "pass") for i in range(SHOWN + 2)]
    text = claim_paragraph("exp", rs)
    assert f"c{SHOWN - 1}: measured" in text and f"c{SHOWN}:" not in text
    assert text.endswith("; and 2 more condition(s).")


def test_order_simulation_then_not_run_then_theory():
    rs = [
        ClaimResult("equal-step-slope", "slope", 1.0, 1.0, None, "1%", "pass", "", condition="(a,b)=(2,1)"),
        _r("softmax-top2-exponent", "d=8", 0.27, "fail"),
        ClaimResult("protocol-floor", "floor", None, None, None, "3%", "not run", "no protocol-study runs"),
        _r("linear-exponent", "d=8", 1.1, "pass"),
    ]
    theory = ["equal-step-slope"]
    assert [f for f, _ in claim_findings(rs, theory)] == [
        "softmax-top2-exponent",
        "linear-exponent",
        "not run",
        "equal-step-slope",
    ]
    assert [r.claim_id for r in simulation_first(rs, theory)] == [
        "softmax-top2-exponent",
        "protocol-floor",
        "linear-exponent",
        "equal-step-slope",
    ]
