"""A study started from the template folder (studies/_template/, docs/architecture.md): copied as a
package of its own, registered as a plugin's entry point would register it, it runs its preset and
its report through the command line with no edit outside the copy."""

import json
import shutil
import sys
from importlib import metadata
from pathlib import Path

import pytest

import depthscale.derivations.study as study_registry
from depthscale.derivations.cli.app import main

TEMPLATE = Path(__file__).resolve().parents[1] / "studies" / "_template"


@pytest.fixture
def my_study(tmp_path, monkeypatch):
    """The template copied to ``tmp_path/my_study`` (a top-level package) and registered through the
    entry-point loader, as ``my-study = "my_study:STUDY"`` in a distribution's pyproject.toml would."""
    shutil.copytree(TEMPLATE, tmp_path / "my_study", ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.syspath_prepend(str(tmp_path))
    installed = study_registry._entry_points
    line = metadata.EntryPoint(name="my-study", value="my_study:STUDY", group=study_registry.ENTRY_POINT_GROUP)
    monkeypatch.setattr(study_registry, "_entry_points", lambda: [*installed(), line])
    study_registry.reload_studies()
    yield tmp_path / "my_study"
    monkeypatch.undo()
    study_registry.reload_studies()
    sys.modules.pop("my_study", None)
    for name in [m for m in sys.modules if m.startswith("my_study.")]:
        del sys.modules[name]


def test_the_template_itself_is_no_registered_study():
    assert "my-study" not in study_registry.studies() and "my-study" not in study_registry.preset_names()


def test_a_copied_template_runs_its_preset_and_report(my_study, tmp_path, capsys):
    before = {p.relative_to(my_study): p.read_bytes() for p in my_study.rglob("*") if p.is_file()}
    assert study_registry.study("my-study").presets == ("my-study",)
    out = tmp_path / "report"
    rc = main(["reproduce", "--preset", "my-study", "--out", str(out), "--executor", "serial", "--quiet"])
    capsys.readouterr()
    assert rc == 0
    claims = json.loads((out / "claims.json").read_text())
    mine = [c for c in claims if c["claim_id"] == "template-deeper-is-lower"]
    assert len(mine) == 1 and mine[0]["verdict"] in ("pass", "fail", "indicative")
    assert "R_4 - R_1 = " in mine[0]["reason"]  # decided on the preset's runs, L = 1 against L = 4
    # its one figure and one table reached the report
    assert (out / "figures" / "template_loss.png").read_bytes()[:4] == b"\x89PNG"
    assert "Template study: loss against depth" in (out / "report.md").read_text()
    # and nothing in the copied folder was edited by running it (caches aside)
    after = {p.relative_to(my_study): p.read_bytes() for p in my_study.rglob("*") if p.is_file()}
    assert {k: v for k, v in after.items() if "__pycache__" not in k.parts} == before
