"""The training-protocol study: where inverse-depth scaling of softmax attention comes from
(docs/protocol-study.md, preset ``protocol``)."""

from depthscale.derivations.claims import protocol_study
from depthscale.derivations.study import Study

CLAIMS = protocol_study.CLAIMS

STUDY = Study(
    name="protocols",
    question="Which training protocol, if any, makes the loss of trained softmax attention fall as 1/L with depth?",
    package=__name__,
    presets=("protocol",),
    claims=CLAIMS,
    report_studies=("core", "protocols", "paper-curves", "linear-start"),
)
