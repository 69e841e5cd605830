"""claims.json: one reader for both spellings, and the committed reports' files load through it."""

import json
import math
from pathlib import Path

import pytest

from depthscale.derivations.claims.stored import claims_json, load_claims
from depthscale.derivations.claims.verdicts import ClaimResult
from depthscale.derivations.report.context import ReportContext
from depthscale.derivations.report.render import render_report

DOCS = Path(__file__).resolve().parents[2] / "docs"
COMMITTED = sorted(DOCS.glob("*-report/claims.json"))


def test_a_result_survives_writing_and_reading():
    rows = [
        ClaimResult("a", "interval", (0.8, 1.2), 0.97, 0.05, "2 s.e.", "pass", "why", note="(x)"),
        ClaimResult("b", "floor", 1.5, float("nan"), None, "3%", "indicative", "r", expected_error=0.01),
        ClaimResult("c", "nothing", None, None, None, "", "not run", "no runs"),
    ]
    back = load_claims(claims_json(rows).decode())
    assert back[0] == rows[0] and back[2] == rows[2]
    assert back[1].measured is None and back[1].expected_error == 0.01  # nan is stored as null
    assert "theory" not in json.loads(claims_json(rows)) and "detail" not in json.loads(claims_json(rows))[0]


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: p.parent.name)
def test_committed_claims_json_loads_with_its_verdicts_and_reasons(path, tmp_path):
    raw = json.loads(path.read_text())
    claims = load_claims(path)
    assert [(c.id, c.verdict) for c in claims] == [(r["id"], r["verdict"]) for r in raw]
    old = "detail" in raw[0]  # written before expected/reason named these everywhere
    for c, r in zip(claims, raw):
        assert c.reason == ((r["detail"] if old else r["reason"]) or "")
        exp = r["theory"] if old else r["expected"]
        assert c.expected == (tuple(exp) if isinstance(exp, list) else exp)
    # and a report shows them
    texts = render_report(ReportContext(title="stored", claims=claims))
    assert all(c.id.replace("|", "\\|") in texts["md"] for c in claims)
    again = load_claims(claims_json(claims))
    assert [(c.id, c.verdict, c.reason) for c in again] == [(c.id, c.verdict, c.reason) for c in claims]
    assert all(math.isfinite(c.measured) for c in again if c.measured is not None)


def test_committed_reports_are_present():
    assert len(COMMITTED) >= 1
