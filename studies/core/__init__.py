"""The paper's core claims: the depth laws of linear and softmax attention that the ``smoke``,
``cpu`` and ``paper`` presets decide (docs/claims.md)."""

from depthscale.derivations.claims import controls, linear, softmax, theory_checks
from depthscale.derivations.study import Study

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
    report_studies=("core", "protocols", "paper-curves", "linear-start"),
    contexts={"smoke": (500, 300)},
)
