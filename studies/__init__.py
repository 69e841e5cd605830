"""The studies of this distribution, one package per study (installed as ``depthscale.studies``).

Each subpackage exports ``STUDY``, a :class:`~depthscale.derivations.study.Study` record (its
question, its presets in ``presets/``, its claims, the theory numbers it needs and its report
sections), and is registered by one line of ``[project.entry-points."depthscale.studies"]`` in
pyproject.toml; :func:`depthscale.derivations.study.studies` lists them. How a study declares
itself: the docstring of :mod:`depthscale.derivations.study`.
"""

# the paper's four studies, whose claims docs/claims.md documents (a study added later documents its
# claims on its own page)
PAPER_STUDIES = ("core", "protocols", "paper-curves", "linear-start")

# A report holds its own study's claims, and those of a study whose claims judge its runs (issue 47):
# - protocols and paper-curves judge the same kind of curve (trained softmax R_L against depth, with
#   floors) with each other's claims: the paper-curves answer rests on the protocol claims on its
#   curves, the protocols' on the shallow-above-single claim;
# - the core presets' runs include the other studies' designs: the linear runs are linear-start's
#   plain-initialised half (its Jacobi-initialised half is its own preset), and the ensemble control
#   and the cosine curves are protocols the protocol claims judge (the smoke preset decides the
#   control): the core report holds those studies' claims too.
PROTOCOL_CURVES = ("protocols", "paper-curves")
CORE_REPORT = ("core", "linear-start", "protocols")
