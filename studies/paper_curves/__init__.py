"""The paper-curves study: does the paper's inverse depth appear, and what does it take?
(docs/studies/paper-curves.md, preset ``curves``).

It builds on the protocol study (whose per-protocol claims decide every setting here too):
:mod:`.claims` holds the claims it adds, :mod:`.objections` the claim of the ``objections`` preset
(the negative result under the obvious objections), :mod:`.sections` its checkpoint table and figure.
"""

from depthscale.derivations.study import Study
from depthscale.studies import PROTOCOL_CURVES

from . import claims, objections, sections

CLAIMS = claims.CLAIMS + objections.CLAIMS

STUDY = Study(
    name="paper-curves",
    question="Does the paper's inverse-depth curve appear in trained softmax attention, and what does it take?",
    package=__name__,
    presets=("curves", "objections", "headline"),
    claims=CLAIMS,
    primary=(
        "objections-inverse-depth",
        "objections-mechanism",
        "objections-one-layer-on-head",
        "protocol-shallow-above-single",
    ),
    sections=sections.sections,
    story=sections.story,
    report_studies=PROTOCOL_CURVES[::-1],
)
