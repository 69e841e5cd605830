"""A claim whose code raises gets the verdict `error` (not `not run`), and every report format shows it."""

from depthscale.derivations.claims.claim import claim
from depthscale.derivations.claims.registry import Evidence, evaluate_claims
from depthscale.derivations.claims.verdicts import ClaimResult
from depthscale.derivations.report.context import ReportContext
from depthscale.derivations.report.render import render_report


@claim("broken", "A claim with a bug.", tolerance="", family="test")
def broken(c, ev):
    return [1 / len(ev.curves)]  # ZeroDivisionError on an empty sweep


@claim("empty", "nothing", tolerance="", family="test", missing="no runs")
def empty(c, ev):
    return []


def test_a_claim_that_raises_is_an_error_and_the_others_still_run():
    rows = evaluate_claims(Evidence([], {}), (broken, empty))
    assert [(r.id, r.verdict) for r in rows] == [("broken", "error"), ("empty", "not run")]
    assert rows[0].claim == "A claim with a bug."
    assert "ZeroDivisionError" in rows[0].reason


def test_every_format_shows_an_error_and_counts_it():
    ok = ClaimResult("fine", "c", 1.0, 1.0, 0.1, "2 s.e.", "pass", "")
    bad = ClaimResult("broken", "c", None, None, None, "", "error", "evaluation error: KeyError: 'x'")
    texts = render_report(ReportContext(title="t", claims=[ok, bad]))
    assert "| **error** |" in texts["md"] and "KeyError" in texts["md"]
    assert 'class="v-error"' in texts["html"]
    assert r"\verdict{verror}{error}" in texts["tex"] and r"\definecolor{verror}" in texts["tex"]
    for fmt in ("md", "html", "tex"):
        assert "1 pass, 0 fail, 0 indicative, 0 not run, 1 error" in texts[fmt]


def test_a_report_without_errors_counts_only_the_four_verdicts():
    texts = render_report(ReportContext(title="t", claims=[ClaimResult("x", "c", 1.0, 1.0, 0.1, "", "pass", "")]))
    assert "1 pass, 0 fail, 0 indicative, 0 not run" in texts["md"] and "not run, 0 error" not in texts["md"]
