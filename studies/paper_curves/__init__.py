"""The paper-curves study: does the paper's inverse depth appear, and what does it take?
(docs/paper-curves.md, preset ``curves``)."""

from depthscale.derivations.claims import paper_curves
from depthscale.derivations.study import Study

CLAIMS = paper_curves.CLAIMS

STUDY = Study(
    name="paper-curves",
    question="Does the paper's inverse-depth curve appear in trained softmax attention, and what does it take?",
    package=__name__,
    presets=("curves",),
    claims=CLAIMS,
    report_studies=("core", "protocols", "paper-curves", "linear-start"),
)
