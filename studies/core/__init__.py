"""The paper's core claims: the depth laws of linear and softmax attention that the ``smoke``,
``cpu`` and ``paper`` presets decide (docs/claims.md).

Claim families: :mod:`.theory_checks` (theory alone), :mod:`.linear`, :mod:`.softmax` and
:mod:`.controls`. Their theory numbers (derivation checks, equal-step slopes, linear floors) are the
library's own (``derivations.report.reporting.gather_theory``); its tables and figures are the
report's standard ones.
"""

from depthscale.derivations.study import Study
from depthscale.studies import REPORTED_TOGETHER

from . import controls, linear, softmax, story, theory_checks

CLAIMS = (
    *theory_checks.CLAIMS,
    *linear.CLAIMS,
    *softmax.CLAIMS[:4],
    controls.identity,
    *softmax.CLAIMS[4:],
    *controls.CLAIMS[1:],
)

STUDY = Study(
    name="core",
    question="Do linear and softmax attention follow the paper's depth laws at a scale one machine can train?",
    package=__name__,
    presets=("smoke", "cpu", "paper"),
    claims=CLAIMS,
    report_studies=REPORTED_TOGETHER,
    story=story.story,
    contexts={"smoke": (500, 300)},
)
