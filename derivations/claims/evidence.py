"""What claims are tested on (:class:`Evidence`) and the selection of curves shared by the claim families."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..analysis.curve import Curve


@dataclass
class Evidence:
    """What claims are tested on: the curves of a sweep, precomputed theory numbers, and the runs' arrays.

    ``theory`` holds ``{"floor": {(a, b, k, d, P): (value, se)}, "floor_context": (the same keys; floors of
    polynomials in the context covariance), "derivations": {name: [(step, passed)]},
    "slopes": {(a, b): (slope, zeta)}, "floor_reference": {(a, b): (value, se, paper)},
    "protocol_floors": {curve key: {"floors", "excess"}}}`` (any may be absent).
    ``load_arrays(key)`` (``Store.load_arrays``) gives a run's stored arrays: the per-context errors the
    protocol study pairs with the reference floors (:meth:`protocol_floors`); without it, and without
    ``theory["protocol_floors"]``, those comparisons are left out.

    Examples
    --------
    >>> Evidence([], {}).protocol_floors()
    {}
    """

    curves: list
    theory: dict
    load_arrays: Callable[[str], dict | None] | None = None

    def protocol_floors(self) -> dict:
        """The reference floors of the protocol-study curves, paired with their runs (computed once from
        ``load_arrays`` and kept in ``theory["protocol_floors"]``, where the report's tables find them)."""
        if "protocol_floors" not in self.theory:
            from ..analysis import protocols

            if self.load_arrays is None or not protocols.study_curves(self.curves):
                return {}
            self.theory["protocol_floors"] = protocols.gather_floors(self.curves, self.load_arrays)
        return self.theory["protocol_floors"]


def _select(ev: Evidence, model, tasks, variant="base", k=None) -> list[Curve]:
    return [
        c
        for c in ev.curves
        if c.model == model and c.task in tasks and c.variant == variant and (k is None or c.k == k)
    ]
