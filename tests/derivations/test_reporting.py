"""Report assembly from records: every claim reaches every format, figures are drawn."""

import numpy as np
import pytest

from depthscale.derivations import theory_numbers
from depthscale.derivations.render import write_report
from depthscale.derivations.reporting import build_context

from synthetic import curve


@pytest.fixture
def records():
    rng = np.random.default_rng(0)
    recs = curve(lambda L: 0.5 + 0.4 / L, rng=rng, a=0.0, b=0.0)
    recs += curve(lambda L: 0.3 * L**-1.4, rng=rng, model="linear", task="easy-fresh", a=2.0, b=1.0)
    recs += curve(lambda L: 0.9, rng=rng, model="linear", a=0.0, b=0.0, depths=(1, 4, 16))
    for r in recs:
        r.update(A_L=r["final_loss"] * 1.2, C_L=r["final_loss"] * 0.9, gap=r["final_loss"] * 0.3,
                 mode_losses=list(np.full(8, r["final_loss"] / 8)))
    return recs


def test_report_has_every_claim_in_every_format(records, tmp_path, monkeypatch):
    monkeypatch.setattr(theory_numbers, "derivation_checks", lambda: ([], {"fake": [("a step", True)]}))
    ctx = build_context(records, title="t", floor_contexts=50, reference_contexts=0)
    ids = [c["id"] for c in ctx.claims]
    assert len(ids) == len(set(ids)) > 10
    drawn = [f for f in ctx.figures if f["png"] is not None]
    assert {f["name"] for f in drawn} >= {"overview", "exponents_vs_zeta", "decomposition"}
    paths = write_report(ctx, tmp_path / "out")
    md = paths["md"].read_text() if hasattr(paths["md"], "read_text") else open(paths["md"]).read()
    html = open(paths["html"]).read()
    tex = open(paths["tex"]).read()
    for c in ctx.claims:
        assert c["id"].split(" ")[0] in md and c["verdict"] in md
    assert html.count("data:image/png;base64") >= len(drawn)
    assert "\\begin{document}" in tex and tex.rstrip().endswith("\\end{document}")
    # the softmax curve follows 0.5 + 0.4/L: its fitted exponent must be near 1
    fit_row = next(r for r in ctx.results_tables[1]["rows"] if r[0].startswith("softmax"))
    assert fit_row[4].startswith("0.9") or fit_row[4].startswith("1.0")
