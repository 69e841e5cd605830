"""The linear optimum: trained linear attention against the best depth-L predictor of its class at
its own (d, P) (docs/studies/linear-start.md, preset ``linear-start``).

:mod:`.theory` (its theory numbers), :mod:`.claims` (its claims), :mod:`.sections` (its
tables and figure).
"""

from depthscale.derivations.study import Study

from . import claims, sections, theory

CLAIMS = claims.CLAIMS

STUDY = Study(
    name=theory.NAME,
    question="Does trained linear attention reach the best depth-L predictor of its class, and has that optimum "
    "the paper's exponent?",
    package=__name__,
    presets=("linear-start",),
    claims=CLAIMS,
    primary=("linear-optimum", "linear-exponent-finite"),
    theory=theory.theory_numbers,
    sections=sections.sections,
    story=sections.story,
)
