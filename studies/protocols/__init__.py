"""The training-protocol study: where inverse-depth scaling of softmax attention comes from
(docs/studies/protocols.md, preset ``protocol``).

:mod:`.protocols` (the protocols and the reference floors of their runs, the study's theory
numbers), :mod:`.protocol_study` (its claims), :mod:`.sections` (its table and figure).
"""

from depthscale.derivations.study import Study
from depthscale.studies import REPORTED_TOGETHER

from . import protocol_study, protocols, sections

CLAIMS = protocol_study.CLAIMS

STUDY = Study(
    name=protocols.NAME,
    question="Which training protocol, if any, makes the loss of trained softmax attention fall as 1/L with depth?",
    package=__name__,
    presets=("protocol",),
    claims=CLAIMS,
    theory=protocols.theory_numbers,
    sections=sections.sections,
    story=sections.story,
    report_studies=REPORTED_TOGETHER,
)
