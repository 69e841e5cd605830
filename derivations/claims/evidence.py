"""What claims are tested on (:class:`Evidence`) and the selection of curves shared by the claim families."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

from ...theory._validate import bad_argument
from ..analysis.curve import Curve
from ..analysis.theory_numbers import TheoryNumbers


@dataclass
class Evidence:
    """What claims are tested on: the curves of a sweep, precomputed theory numbers, and the runs' arrays.

    ``theory`` is a :class:`~depthscale.derivations.analysis.theory_numbers.TheoryNumbers` (floors,
    slopes, derivation checks, ...; an empty field: not computed); a mapping keyed by its field names
    is converted, a key that names no field refused. ``load_arrays(key)`` (``Store.load_arrays``)
    gives a run's stored arrays: the per-context errors the protocol study pairs with the reference
    floors (:meth:`protocol_floors`); without it, and without ``theory.protocol_floors``, those
    comparisons are left out.

    Examples
    --------
    >>> Evidence([]).protocol_floors()
    {}
    >>> Evidence([], {"slopes": {(2.0, 1.0): (-0.99, 1.0)}}).theory.slopes
    {(2.0, 1.0): (-0.99, 1.0)}
    """

    curves: list
    theory: TheoryNumbers = field(default_factory=TheoryNumbers)
    load_arrays: Callable[[str], dict | None] | None = None

    def __post_init__(self) -> None:
        if isinstance(self.theory, Mapping):  # the untyped form of earlier versions
            self.theory = TheoryNumbers.from_mapping(self.theory)
        elif not isinstance(self.theory, TheoryNumbers):
            bad_argument("theory", self.theory, "a TheoryNumbers or a mapping of its field names")

    def protocol_floors(self) -> dict:
        """The reference floors of the protocol-study curves, paired with their runs (computed once from
        ``load_arrays`` and kept in this evidence's ``theory.protocol_floors``, where the report's tables
        and figures find them)."""
        floors = self.theory.protocol_floors
        if floors is None:
            from ..analysis import protocols

            if self.load_arrays is None or not protocols.study_curves(self.curves):
                return {}
            floors = protocols.gather_floors(self.curves, self.load_arrays)
            self.theory = replace(self.theory, protocol_floors=floors)
        return floors


def _select(ev: Evidence, model, tasks, variant="base", k=None) -> list[Curve]:
    return [
        c
        for c in ev.curves
        if c.model == model and c.task in tasks and c.variant == variant and (k is None or c.k == k)
    ]
