"""Does inverse depth need softmax? The base attention model with five nonlinearities
(docs/studies/nonlinearities.md, preset ``nonlinearities``).

:mod:`.theory` (the study's curves and each nonlinearity's own reference floors), :mod:`.claims`
(what it decides), :mod:`.sections` (its figures, table and answer).
"""

from depthscale.derivations.study import Study

from . import claims, sections, theory

CLAIMS = claims.CLAIMS

STUDY = Study(
    name=theory.NAME,
    question="Does the loss of trained attention fall as 1/L with depth under sparse (sparsemax, 1.5-entmax) "
    "or unnormalised (sigmoid, ReLU) attention, where it does not under softmax?",
    package=__name__,
    presets=("nonlinearities",),
    claims=CLAIMS,
    primary=("nonlin-inverse-depth", "nonlin-disagreement", "nonlin-depth-gains-more"),
    theory=theory.theory_numbers,
    sections=sections.sections,
    story=sections.story,
)
