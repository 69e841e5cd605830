"""The main job decides: the smoke preset's report holds at least one claim passed and one failed by
the t-test on decisive evidence, and its answer names the preset that decides the rest; and
``report --preset smoke`` rebuilds from its store the report ``reproduce`` wrote, byte for byte but
for the time stamps and running times. The preset runs once for the module."""

import json
import re
from pathlib import Path

import pytest

from depthscale.derivations.cli.app import main


@pytest.fixture(scope="module")
def smoke(tmp_path_factory) -> Path:
    """The folder ``reproduce --preset smoke`` wrote (its store inside)."""
    out = tmp_path_factory.mktemp("smoke") / "report"
    assert main(["reproduce", "--preset", "smoke", "--out", str(out), "--quiet"]) == 0
    return out


@pytest.mark.slow  # the whole smoke preset: about two minutes on 2 cores (the README's main job)
def test_the_smoke_report_decides_a_pass_and_a_fail(smoke):
    out = smoke
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
    # written outside the docs site, the report carries the glossary and theory pages it links
    anchors = re.findall(r"\]\(glossary\.md#([a-z_-]+)\)", md)
    assert len(anchors) == len(set(anchors)) >= 5
    assert md.count("](theory/") == 4 and "Step 1." not in md
    # a one-seed comparison says so (it read "contexts n=0, t(inf) = 1.96")
    assert "n=0" not in md and "one seed: no error estimate" in md
    answer = (out / "answer.md").read_text(encoding="utf-8")
    assert md.split("## Answer\n\n", 1)[1].startswith(answer) and "the cpu preset decides them" in answer


# what may differ between two writings of one report: when it was made and how long it took
_STAMPS = [
    re.compile(r"(?i)created:? \d{4}-\d\d-\d\d \d\d:\d\d(?::\d\d)? UTC"),  # md, html and tex
    re.compile(r"(?: · Running time: |; running time )[^·<}\n]*"),
]


def _unstamped(data: bytes) -> bytes:
    text = data.decode("utf-8")
    for pattern in _STAMPS:
        text = pattern.sub("", text)
    return text.encode("utf-8")


@pytest.mark.slow  # the smoke preset once (shared with the test above), then its report again
def test_report_of_the_store_rebuilds_the_report_reproduce_wrote(smoke, tmp_path):
    again = tmp_path / "again"
    assert main(["report", "--store", str(smoke / "store.sqlite"), "--preset", "smoke", "--out", str(again)]) == 0
    written = sorted(p.relative_to(smoke).as_posix() for p in smoke.rglob("*") if p.is_file())
    rebuilt = sorted(p.relative_to(again).as_posix() for p in again.rglob("*") if p.is_file())
    assert rebuilt == [p for p in written if not p.startswith("store.sqlite")]  # the store and its side files
    for name in rebuilt:
        a, b = (smoke / name).read_bytes(), (again / name).read_bytes()
        if name.endswith(".png"):
            assert a == b, name
        else:
            assert _unstamped(a) == _unstamped(b), name
