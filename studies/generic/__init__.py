"""The generic study: claims that judge any curve by what it is, whatever its map, model, task or engine.

A user's own map, model or task trained through ``sweep`` has no study of its own; a report of its
store without a preset holds these claims (and those of every study whose runs the store holds), so
the user's curves get verdicts by the same rule as the paper's: does depth lower the loss, and does
the loss fall as ``R_inf + c/L``? No presets: the user's own grid is the design.
"""

from depthscale.derivations.study import Study

from . import claims, sections

STUDY = Study(
    name="generic",
    question="On each curve of a store, whatever its map, model, task or engine: does depth lower the loss, and as 1/L?",
    package=__name__,
    claims=claims.CLAIMS,
    primary=tuple(c.id for c in claims.CLAIMS),
    sections=sections.sections,
)
