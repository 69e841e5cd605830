"""The report's findings: one paragraph per claim with the numbers of its conditions."""

from depthscale.derivations.claims.verdicts import ClaimResult
from depthscale.derivations.report.findings import SHOWN, claim_findings, claim_paragraph, simulation_first


def _r(cid, measured, verdict, reason="", error=0.05, expected=1.0):
    return ClaimResult(cid, "alpha near 1", expected, measured, error, "± 0.2", verdict, reason)


def test_a_paragraph_tallies_verdicts_and_quotes_each_condition():
    rs = [
        _r("exp d=8", 0.27, "fail"),
        _r("exp d=16", 0.91, "indicative", "alpha = 0.91; would be pass, but 1 seed(s) < 2"),
        _r("exp d=32", None, "indicative", "undecided: fit not identified (alpha at a bound)", error=None),
    ]
    text = claim_paragraph("exp", rs)
    assert text.startswith("alpha near 1. 3 conditions: 1 fail, 2 indicative. ")
    assert "d=8: measured 0.27 ± 0.05 against 1 (± 0.2), fail" in text
    assert "d=16: measured 0.91 ± 0.05 against 1 (± 0.2), indicative (would be pass)" in text
    assert "d=32: measured — against 1 (± 0.2), indicative (fit not identified)" in text


def test_long_families_are_cut_with_a_count():
    rs = [_r(f"exp c{i}", 1.0 + i / 100, "pass") for i in range(SHOWN + 2)]
    text = claim_paragraph("exp", rs)
    assert f"c{SHOWN - 1}: measured" in text and f"c{SHOWN}:" not in text
    assert text.endswith("; and 2 more condition(s).")


def test_order_simulation_then_not_run_then_theory():
    rs = [
        ClaimResult("equal-step-slope (a,b)=(2,1)", "slope", 1.0, 1.0, None, "1%", "pass", ""),
        _r("softmax-top2-exponent d=8", 0.27, "fail"),
        ClaimResult("protocol-floor", "floor", None, None, None, "3%", "not run", "no protocol-study runs"),
        _r("linear-exponent d=8", 1.1, "pass"),
    ]
    assert [f for f, _ in claim_findings(rs)] == [
        "softmax-top2-exponent",
        "linear-exponent",
        "not run",
        "equal-step-slope",
    ]
    assert [r.id.split()[0] for r in simulation_first(rs)] == [
        "softmax-top2-exponent",
        "protocol-floor",
        "linear-exponent",
        "equal-step-slope",
    ]
