"""Claim declarations: a claim's family is a field it is declared with (each study's claims keep the
family names of their modules), also for claims declared from one evaluation with several parameter
sets (claim.evaluated_with)."""

import importlib

import pytest

from depthscale.derivations.claims.claim import claim, evaluated_with
from depthscale.derivations.claims.evidence import Evidence
from depthscale.derivations.claims.registry import REGISTRY

# each family module, in the study that declares it
FAMILIES = {
    "controls": "depthscale.studies.core.controls",
    "linear": "depthscale.studies.core.linear",
    "softmax": "depthscale.studies.core.softmax",
    "theory_checks": "depthscale.studies.core.theory_checks",
    "linear_optimum": "depthscale.studies.linear_start.claims",
    "paper_curves": "depthscale.studies.paper_curves.claims",
    "protocol_study": "depthscale.studies.protocols.claims",
}


@pytest.mark.parametrize("family", FAMILIES)
def test_every_claim_of_a_family_module_names_that_module(family):
    module = importlib.import_module(FAMILIES[family])
    assert {c.family for c in module.CLAIMS} == {family}
    # and the module binds each claim under its evaluate's name (what notebooks look claims up by)
    assert all(getattr(module, c.__name__) is c for c in module.CLAIMS)


def test_the_registry_holds_every_family_claim_once():
    declared = [c for m in FAMILIES.values() for c in importlib.import_module(m).CLAIMS]
    assert sorted(c.id for c in declared) == sorted(c.id for c in REGISTRY if c.id in {d.id for d in declared})
    assert len({c.id for c in REGISTRY}) == len(REGISTRY)  # each once, whichever study declares it


def test_one_evaluation_declared_twice_keeps_its_parameters_apart():
    def count_at_least(c, ev, least):
        n = len(ev.study_numbers("counts"))
        return [c.result("", least, n, None, "pass" if n >= least else "fail", f"{n} entries")]

    one = claim("one", "At least one entry", tolerance=">= 1", family="counts")(
        evaluated_with(count_at_least, "one", least=1)
    )
    two = claim("two", "At least two entries", tolerance=">= 2", family="counts")(
        evaluated_with(count_at_least, "two", least=2)
    )
    ev = Evidence([], {"studies": {"counts": [(2.0, 1.0)]}})
    assert [r.verdict for r in one(ev)] == ["pass"] and [r.verdict for r in two(ev)] == ["fail"]
    assert (one.__name__, one.family, two.family) == ("one", "counts", "counts")


def test_a_claim_names_its_family_explicitly():
    # never read from a file name: moving a claim to another module leaves its family alone
    with pytest.raises(TypeError, match="family"):
        claim("nameless", "No family", tolerance="none")
