"""The main job decides: the smoke preset's report holds at least one claim passed and one failed by
the t-test on decisive evidence, and its answer names the preset that decides the rest."""

import json
import re

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
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "the cpu preset decides them" in md
    # a reader's report: no heading without content, figures numbered as they are met, each glossary
    # term linked once, the derivations linked rather than typeset, the answer also in answer.md
    lines = [ln for ln in md.splitlines() if ln.strip()]
    for ln, nxt in zip(lines, lines[1:] + ["# end"]):
        if m := re.match(r"(#+) ", ln):
            assert not re.match(rf"#{{1,{len(m.group(1))}}} ", nxt), ln
    numbers = [int(n) for n in re.findall(r"\*Figure (\d+) ", md)]
    assert numbers == list(range(1, len(numbers) + 1)) and len(numbers) >= 4
    anchors = re.findall(r"\]\(\.\./glossary\.md#([a-z_-]+)\)", md)
    assert len(anchors) == len(set(anchors)) >= 5
    assert md.count("](../theory/") == 4 and "Step 1." not in md
    answer = (out / "answer.md").read_text(encoding="utf-8")
    assert md.split("## Answer\n\n", 1)[1].startswith(answer) and "the cpu preset decides them" in answer
