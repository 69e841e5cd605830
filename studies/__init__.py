"""The studies of this distribution, one package per study (installed as ``depthscale.studies``).

Each subpackage exports ``STUDY``, a :class:`~depthscale.derivations.study.Study` record (its
question, its presets in ``presets/``, its claims, the theory numbers it needs and its report
sections), and is registered by one line of ``[project.entry-points."depthscale.studies"]`` in
pyproject.toml; :func:`depthscale.derivations.study.studies` lists them. How a study declares
itself: the docstring of :mod:`depthscale.derivations.study`.
"""

# the studies whose claims a report of any of these four studies' presets decides, in report order
# (each decides some claims on the others' runs: the cpu preset's cosine runs are a protocol)
REPORTED_TOGETHER = ("core", "protocols", "paper-curves", "linear-start")
