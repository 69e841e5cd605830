"""The paper's core claims: the depth laws of linear and softmax attention that the ``smoke``,
``cpu`` and ``paper`` presets decide (docs/claims.md).

Its claims are in :mod:`.claims` (families: theory checks, linear, softmax, controls), its theory
numbers (derivation checks, equal-step slopes, linear floors, the paper's floors recomputed) in
:mod:`.theory`, its tables, figures and story in :mod:`.sections` (its own drawings in
:mod:`.drawings`).
"""

from depthscale.derivations.study import Study
from depthscale.studies import CORE_REPORT

from . import sections, theory
from .claims import CLAIMS

STUDY = Study(
    name="core",
    question="Do linear and softmax attention follow the paper's depth laws at a scale one machine can train?",
    package=__name__,
    presets=("smoke", "cpu", "paper"),
    claims=CLAIMS,
    primary=(
        "softmax-top2-exponent",
        "linear-exponent",
        "clt-identity",
        "controls-no-depth-gain",
        "depth-beats-single",
    ),
    theory=theory.theory_numbers,
    sections=sections.sections,
    story=sections.story,
    contexts={"smoke": (500, 300)},
    report_studies=CORE_REPORT,
)
