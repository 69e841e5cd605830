"""The training-protocol study: where inverse-depth scaling of softmax attention comes from
(docs/studies/protocols.md, preset ``protocol``).

:mod:`.claims` (its claims), :mod:`.theory` (its theory numbers: the reference floors of its
runs), :mod:`.sections` (its table and figure). The protocols themselves are configuration
(:mod:`depthscale.sims.protocols`), and the rows its claims read are the library's
(``protocol_rows`` of :mod:`depthscale.derivations.study`), shared with the studies that decide
claims per protocol.
"""

from depthscale.derivations.study import Study
from depthscale.studies import PROTOCOL_CURVES

from . import claims, sections, theory

CLAIMS = claims.CLAIMS

STUDY = Study(
    name=theory.NAME,
    question="Which training protocol, if any, makes the loss of trained softmax attention fall as 1/L with depth?",
    package=__name__,
    presets=("protocol",),
    claims=CLAIMS,
    primary=("protocol-inverse-depth", "protocol-disagreement", "protocol-beats-convex"),
    theory=theory.theory_numbers,
    sections=sections.sections,
    story=sections.story,
    report_studies=PROTOCOL_CURVES,
)
