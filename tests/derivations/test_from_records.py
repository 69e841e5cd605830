"""A report and its claims.json from run records, through the library call the CLI makes (no argparse)."""

import json

from synthetic import cheap_calibration, curve

from depthscale.derivations.analysis import theory_numbers
from depthscale.derivations.report.from_records import report_from_records


def test_report_from_records_writes_claims_json_matching_the_verdicts(tmp_path, monkeypatch):
    cheap_calibration(monkeypatch)
    # the derivations' sympy checks are tested in tests/theory; here they would only cost time
    monkeypatch.setattr(theory_numbers, "derivation_checks", lambda: ([], {"fake": [("a step", True)]}))
    # softmax top-2 whose excess falls exactly like 1/L: the alpha-near-1 claim must pass
    records = curve(lambda L: 0.5 + 0.4 / L)
    out = report_from_records(records, tmp_path / "r", "t", floor_contexts=10, reference_contexts=0)
    rows = json.loads((tmp_path / "r" / "claims.json").read_text())
    assert [r["id"] for r in rows] == [c["id"] for c in out["claims"]]
    for r, c in zip(rows, out["claims"]):
        assert (r["verdict"], r["expected"], r["reason"], r["measured"]) == (
            c["verdict"],
            c["expected"],
            c["reason"],
            c["measured"],
        )
    exponent = [r for r in rows if r["id"].startswith("softmax-top2-exponent")]
    assert len(exponent) == 1 and exponent[0]["verdict"] == "pass"
    assert abs(exponent[0]["measured"] - 1.0) < 0.05
    assert set(out["paths"]) == {"md", "html", "tex", "claims"}
    assert all((tmp_path / "r" / name).is_file() for name in ("report.md", "report.html", "report.tex"))
