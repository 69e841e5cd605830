"""What claims are tested on (:class:`Evidence`) and the selection of curves the claims share."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ...theory._validate import bad_argument
from ..analysis.curve import Curve
from ..analysis.theory_numbers import TheoryNumbers

T = TypeVar("T")


@dataclass(frozen=True)
class Evidence:
    """What claims are tested on: the curves of a sweep, precomputed theory numbers, and the runs' arrays.

    Immutable: its fields never change once built. ``theory`` is a
    :class:`~depthscale.derivations.analysis.theory_numbers.TheoryNumbers` (an empty field: not
    computed); a mapping keyed by its field names is converted, a key that names no field refused.
    ``load_arrays(key)`` (``Store.load_arrays``) gives a run's stored arrays (its per-context
    errors), from which a study may derive numbers the theory numbers lack (:meth:`derived`).

    Examples
    --------
    >>> ev = Evidence([], {"studies": {"demo": {(2.0, 1.0): -0.99}}})
    >>> ev.study_numbers("demo"), ev.curves
    ({(2.0, 1.0): -0.99}, ())
    >>> ev.derived("count", lambda e: len(e.curves))
    0
    """

    curves: Sequence[Curve] = ()  # kept as a tuple
    theory: TheoryNumbers = field(default_factory=TheoryNumbers)
    load_arrays: Callable[[str], dict | None] | None = None
    _derived: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # normalised once, on construction: a list of curves is kept as a tuple, a mapping as TheoryNumbers
        if isinstance(self.curves, str | Curve) or not isinstance(self.curves, Iterable):
            raise TypeError(
                f"curves={self.curves!r}: must be a sequence of Curve (from depthscale.derivations.analysis.curve)"
            )
        object.__setattr__(self, "curves", tuple(self.curves))
        for i, c in enumerate(self.curves):
            if not isinstance(c, Curve):
                raise TypeError(f"curves[{i}]={c!r}: must be a Curve (from depthscale.derivations.analysis.curve)")
        if self.load_arrays is not None and not callable(self.load_arrays):
            raise TypeError(
                f"load_arrays={self.load_arrays!r}: must be None or a function key -> arrays (Store.load_arrays)"
            )
        if isinstance(self.theory, Mapping):  # the untyped form of earlier versions
            object.__setattr__(self, "theory", TheoryNumbers.from_mapping(self.theory))
        elif not isinstance(self.theory, TheoryNumbers):
            bad_argument("theory", self.theory, "a TheoryNumbers or a mapping of its field names")

    def derived(self, name: str, compute: Callable[[Evidence], T]) -> T:
        """``compute(self)``, computed on the first call for ``name`` and returned again after (the
        evidence does not change, so neither does what is derived from it; the claims, tables and
        figures that ask for it share one computation, in any order)."""
        if name not in self._derived:
            self._derived[name] = compute(self)
        return self._derived[name]

    def study_numbers(self, study: str, compute: Callable[[Evidence], Any] | None = None) -> Any:
        """The theory numbers of ``study`` (``theory.studies[study]``), or, when the report did not
        compute them, ``compute(self)`` (once; None without ``compute``)."""
        if study in self.theory.studies:
            return self.theory.studies[study]
        return None if compute is None else self.derived(f"study:{study}", compute)


def select_curves(ev: Evidence, model, tasks, variant="base", k=None) -> list[Curve]:
    """The curves of ``model`` on ``tasks`` (of ``variant``; of top-``k`` when given), whichever
    engine computed them: the engine is no part of what a claim selects on (``variant`` is the curve's
    :attr:`~depthscale.derivations.analysis.curve.Curve.claim_variant`), and curves of different
    engines stay apart (each its own curve and label).

    >>> from depthscale.derivations.analysis.curve import curves
    >>> def rec(L, engine):
    ...     return {"status": "ok", "seed": 0, "final_loss": 1.0 / L,
    ...             "config": {"task": {"task": "topk", "k": 2, "a": 0.0, "b": 0.0, "d": 8, "P": 32},
    ...                        "model": {"model": "softmax", "depth": L, "engine": engine}}}
    >>> ev = Evidence(curves([rec(L, e) for L in (1, 2) for e in ("numba", "jax")]))
    >>> [c.label for c in select_curves(ev, "softmax", ("topk",))]
    ['softmax top-2 (a,b)=(0,0) d=8 P=32', 'softmax[jax] top-2 (a,b)=(0,0) d=8 P=32']
    """
    return [
        c
        for c in ev.curves
        if c.model == model and c.task in tasks and c.claim_variant == variant and (k is None or c.k == k)
    ]


__all__ = ["Evidence", "select_curves"]
