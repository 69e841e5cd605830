"""What claims are tested on (:class:`Evidence`) and the selection of curves shared by the claim families."""

from __future__ import annotations

from dataclasses import dataclass

from depthscale.derivations.analysis.curve import Curve


@dataclass
class Evidence:
    """What claims are tested on: the curves of a sweep and precomputed theory numbers.

    ``theory`` holds ``{"floor": {(a, b, k, d, P): (value, se)}, "floor_context": (the same keys; floors of
    polynomials in the context covariance), "derivations": {name: [(step, passed)]},
    "slopes": {(a, b): (slope, zeta)}, "floor_reference": {(a, b): (value, se, paper)}}`` (any may be absent).
    """

    curves: list
    theory: dict


def _select(ev: Evidence, model, tasks, variant="base", k=None) -> list[Curve]:
    return [
        c
        for c in ev.curves
        if c.model == model and c.task in tasks and c.variant == variant and (k is None or c.k == k)
    ]
