"""The main job decides: the smoke preset's report holds at least one claim passed and one failed by
the t-test on decisive evidence, and its answer names the preset that decides the rest."""

import json

import pytest

from depthscale.derivations.cli.app import main


@pytest.mark.slow  # the whole smoke preset: about two minutes on 2 cores (the README's main job)
def test_the_smoke_report_decides_a_pass_and_a_fail(tmp_path):
    out = tmp_path / "report"
    assert main(["reproduce", "--preset", "smoke", "--out", str(out), "--quiet"]) == 0
    rows = json.loads((out / "claims.json").read_text(encoding="utf-8"))
    simulated = [r for r in rows if r.get("test", "").startswith(("seeds", "fit"))]
    verdicts = {r["verdict"] for r in simulated}
    assert {"pass", "fail"} <= verdicts, sorted((r["id"], r["verdict"]) for r in simulated)
    decided_ensemble = [r for r in simulated if "ensemble-control" in r["id"] and r["verdict"] in ("pass", "fail")]
    assert decided_ensemble
    assert "the cpu preset decides them" in (out / "report.md").read_text(encoding="utf-8")
