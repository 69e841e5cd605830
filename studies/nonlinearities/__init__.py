"""Does inverse depth need softmax? The base attention model with five nonlinearities
(docs/studies/nonlinearities.md, preset ``nonlinearities``).

:mod:`.rows` (the study's curves and each nonlinearity's own reference floors), :mod:`.claims`
(what it decides), :mod:`.sections` (its figures, table and answer).
"""

from depthscale.derivations.study import Study

from . import claims, rows, sections

CLAIMS = claims.CLAIMS

STUDY = Study(
    name=rows.NAME,
    question="Does the loss of trained attention fall as 1/L with depth under sparse (sparsemax, 1.5-entmax) "
    "or unnormalised (sigmoid, ReLU) attention, where it does not under softmax?",
    package=__name__,
    presets=("nonlinearities",),
    claims=CLAIMS,
    theory=rows.theory_numbers,
    sections=sections.sections,
    story=sections.story,
)
