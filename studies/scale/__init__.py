"""The scale study: does the d = 16 answer hold, weaken or turn as d grows toward the paper's size?
(docs/studies/scale.md, presets ``scale`` and ``scale-gpu``).

Trained softmax attention on top-2 (0,0) at d = 8, 16, 32 (the CPU rungs) and d = 64, 128 (the
accelerator rungs, JAX engine) with P = 8d and N = d, under one protocol. :mod:`.claims` holds its
trend claims (the depth gain, the one-layer model against the single head and the disagreement
exponent, each against d), :mod:`.sections` its tables, figures and answer, :mod:`.cost` the cost
model's estimate of each rung.
"""

from depthscale.derivations.study import Study

from . import claims, sections

CLAIMS = claims.CLAIMS

STUDY = Study(
    name="scale",
    question=(
        "Does the d = 16 answer (a depth gain of a few per cent, the one-layer model near the best single "
        "temperature head, a layer disagreement that grows with depth) hold, weaken or turn as d grows toward "
        "the paper's d = 128, P = 1,024?"
    ),
    package=__name__,
    presets=("scale", "scale-gpu"),
    claims=CLAIMS,
    sections=sections.sections,
    story=sections.story,
)
