"""The Study record and the registry of studies: declared through entry points, every preset
reachable by name, claims looked up by id, and each study's story told from its claims."""

from importlib import metadata
from pathlib import Path

import pytest

from depthscale.derivations import study as study_mod
from depthscale.derivations.claims.claim import claim
from depthscale.derivations.claims.evidence import Evidence
from depthscale.derivations.claims.registry import claims, evaluate_claims, registered_claims
from depthscale.derivations.claims.stored import load_claims
from depthscale.derivations.study import (
    Study,
    find_preset,
    preset_names,
    quick_names,
    reload_studies,
    report_studies,
    studies,
)
from depthscale.sims.grid import load_grid

ROOT = Path(__file__).resolve().parents[2]


@claim("demo-claim", "A demo", tolerance="none", missing="no runs", family="demo")
def demo(c, ev):
    return []


def _registry(monkeypatch, *entries):
    """Replace the entry points by ``(name, object)`` pairs (the registry's cache cleared around it)."""
    eps = [
        metadata.EntryPoint(name, f"tests_fake:{name.replace('-', '_')}", study_mod.ENTRY_POINT_GROUP)
        for name, _ in entries
    ]
    objs = {ep.value: obj for ep, (_, obj) in zip(eps, entries)}
    monkeypatch.setattr(metadata.EntryPoint, "load", lambda self: objs[self.value])
    monkeypatch.setattr(study_mod, "_entry_points", lambda: eps)
    reload_studies()
    return eps


@pytest.fixture(autouse=True)
def _fresh_registry():
    reload_studies()
    yield
    reload_studies()


def test_a_study_is_validated_on_construction():
    with pytest.raises(ValueError, match=r"^name='My Study': must be lower case"):
        Study(name="My Study", question="Why?", package=__name__)
    with pytest.raises(ValueError, match=r"^question='': must be one sentence"):
        Study(name="x", question="", package=__name__)
    with pytest.raises(ValueError, match=r"^claims\[0\]='no claim': must be a Claim record"):
        Study(name="x", question="Why?", package=__name__, claims=("no claim",))
    with pytest.raises(ValueError, match=r"^contexts=\['other'\]: must be presets of the study \(x\)"):
        Study(name="x", question="Why?", package=__name__, presets=("x",), contexts={"other": (1, 1)})


def test_every_registered_study_and_preset_is_reachable_by_name():
    found = studies()
    assert {"core", "protocols", "paper-curves", "linear-start"} <= set(found)
    assert {"smoke", "cpu", "paper", "protocol", "curves", "linear-start"} <= set(preset_names())
    for s in found.values():
        for preset in s.presets:
            assert find_preset(preset) == (s, preset)
            path = Path(str(s.preset_path(preset)))  # package data of the study, beside its __init__.py
            assert path.is_file() and path.parent.parent == Path(__import__(s.package, fromlist=["x"]).__file__).parent
            assert load_grid(str(path))  # a valid grid
        if s.presets:
            assert find_preset(s.name) == (s, s.presets[0])  # a study's name: its first preset
    with pytest.raises(ValueError, match=r"^preset='huge': must be a registered study or preset: .*linear-start"):
        find_preset("huge")
    # the names read from the preset folders without importing a study are the names loaded here
    named = set(preset_names()) | {n for n, s in found.items() if s.presets}
    assert quick_names() == named | {n for n, s in found.items() if not s.presets}


def test_a_new_study_is_one_entry_point(monkeypatch):
    new = Study(
        name="my-study", question="Is it so?", package="depthscale.studies.core", presets=("smoke",), claims=(demo,)
    )
    _registry(monkeypatch, ("my-study", new))
    assert list(studies()) == ["my-study"] and find_preset("my-study") == (new, "smoke")
    assert [c.id for c in registered_claims()] == ["demo-claim"]
    rows = evaluate_claims(Evidence([], {}))
    assert [(r.claim_id, r.verdict) for r in rows] == [("demo-claim", "not run")]
    assert evaluate_claims(Evidence([], {}), not_run=False) == []  # "not run" rows only when asked


def test_bad_registry_lines_are_left_out_naming_them(monkeypatch, capsys):
    # each bad line costs one warning and is refused when asked for (tests/test_hostile_plugins.py has more)
    _registry(monkeypatch, ("thing", object()))
    assert studies() == {}
    assert "study plugin thing = 'tests_fake:thing'" in capsys.readouterr().err
    with pytest.raises(ValueError, match=r"^study='thing': .*names a object, not a Study record"):
        study_mod.study("thing")
    one = Study(name="one", question="Q?", package=__name__, claims=(demo,))
    _registry(monkeypatch, ("two", one))
    with pytest.raises(ValueError, match=r"names the study 'one'"):
        study_mod.study("two")
    twin = Study(name="twin", question="Q?", package=__name__, claims=(demo,))
    _registry(monkeypatch, ("one", one), ("twin", twin))
    assert list(studies()) == ["one"]
    with pytest.raises(ValueError, match=r"claim 'demo-claim' of study 'twin': already a claim of study 'one'"):
        study_mod.study("twin")


def test_claims_are_looked_up_by_id_and_family():
    got = claims(ids=["top16-signed-floor", "clt-identity"])
    assert [c.id for c in got] == ["top16-signed-floor", "clt-identity"]
    assert {c.family for c in claims(family="protocol_study")} == {"protocol_study"}
    assert [c.id for c in claims(ids="linear-floor", family="linear")] == ["linear-floor"]
    with pytest.raises(ValueError, match=r"^ids=\['no-such-claim'\]: must be ids of registered claims"):
        claims(ids=["no-such-claim"])
    with pytest.raises(ValueError, match=r"^family='nope': must be a claim family"):
        claims(family="nope")


def test_each_study_reports_its_own_claims_and_those_that_judge_its_runs():
    also = {"protocols": ["paper-curves"], "paper-curves": ["protocols"], "core": ["linear-start", "protocols"]}
    for name, s in studies().items():
        assert [t.name for t in report_studies(s)] == [name, *also.get(name, [])]


@pytest.mark.parametrize(
    "report, study, needles",
    [
        ("protocol-report", "protocols", ["inverse depth (alpha in [0.8, 1.2])", "Does the disagreement term"]),
        ("curves-report", "paper-curves", ["The positive control", "under real training"]),
        ("linear-start-report", "linear-start", ["best depth-L predictor of its class"]),
        ("cpu-report", "core", ["linear attention's exponent", "softmax's top-2 exponent"]),
    ],
)
def test_each_study_answers_from_its_stored_claims(report, study, needles):
    # the committed claims.json of the study's report (written before ids were typed: read by its id)
    results = load_claims(ROOT / "docs" / report / "claims.json")
    told = studies()[study].story(results, Evidence([], {}))
    assert 1 <= len(told.answer) <= 5
    text = " ".join(told.answer)
    assert all(n in text for n in needles), text
    # each finding names its figure and the claims it rests on
    assert all(f.figure and f.claim_ids for f in told.findings)
