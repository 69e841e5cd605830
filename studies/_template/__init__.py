"""A study template: copy this folder to start a study (docs/architecture.md, "Starting a study").

A study is one package: this ``__init__.py`` declares its :class:`Study` record; ``claims.py`` holds
its claims, ``sections.py`` its tables, figures and story, ``presets/`` its sweep grids; a study
with theory numbers adds ``theory.py`` (a ``theory(inputs)`` callable, see
:class:`depthscale.derivations.study.Study`) and one that reads files adds ``data/``.

This folder has no registry line, so it is no registered study: the copy gets one, in the
``[project.entry-points."depthscale.studies"]`` table of its distribution's pyproject.toml::

    my-study = "my_package.my_study:STUDY"

What to change in the copy: the name and question below, the preset (rename
``presets/my-study.toml`` with the study), the claim in ``claims.py`` and the section in
``sections.py``. A study imports depthscale only through ``depthscale.derivations.study`` and the
public ``depthscale.theory`` and ``depthscale.sims`` modules, never another study.
"""

from depthscale.derivations.study import Study

from . import claims, sections

CLAIMS = claims.CLAIMS

STUDY = Study(
    name="my-study",  # CHANGE: lower case letters, digits and hyphens; the registry line's name
    question="Does the loss of trained linear attention fall with depth on the easy task?",  # CHANGE
    package=__name__,  # keep: where the presets are found
    presets=("my-study",),  # CHANGE with the file name of presets/my-study.toml (the first is the default)
    claims=CLAIMS,
    sections=sections.sections,
    story=sections.story,
)
