"""The generic study's report pieces: the error rates of ``generic-inverse-depth`` at each curve's own
effect size, so a user's verdict comes with the controls that say how often it would be right."""

from __future__ import annotations

from depthscale.derivations.study import Sections, calibration_table

from .claims import inverse_depth, law_curves

# each synthetic curve costs one fit with its profile interval and lack-of-fit scan (about 0.15 CPU-s
# on one core): the true law and the two negative controls, 50 curves each (a rate's s.e. <= 0.071),
# keep a report of a user's store at about 20 CPU-seconds per curve
ALPHAS, REPLICATES = (0.5, 1.0, 2.0), 50


def sections(ev) -> Sections:
    """The calibration table of every curve ``generic-inverse-depth`` judges with two seeds or more."""
    table = calibration_table(inverse_depth, ev, [(c.label, c) for c in law_curves(ev)], ALPHAS, REPLICATES)
    return Sections(results=(table,) if table is not None else ())
