"""The core study's theory numbers (:class:`CoreTheory`): the machine-checked derivations, the
equal-step local slopes, the linear floors at the sweep's top-k conditions and the paper's top-2
floors recomputed; and the theory tables its report shows."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from depthscale.derivations.study import (
    Table,
    TheoryInputs,
    clt_table,
    derivation_checks,
    floor_reference,
    floors,
    linear_table,
    slopes,
)

NAME = "core"  # the study's name: its numbers are TheoryNumbers.studies[NAME]
# the spectra of the linear-law tables and slopes when the sweep has no linear easy-task runs
DEFAULT_LINEAR_SPECTRA = ((2.0, 1.0), (1.0, 2.0), (1.5, 2.0))
DEFAULT_LINEAR_D = 128

Spectrum = tuple[float, float]  # (a, b)
FloorKey = tuple[float, float, int, int, int]  # (a, b, k, d, P)


@dataclass(frozen=True)
class CoreTheory:
    """The theory numbers the core study's claims and sections read; an empty field means "not
    computed" and its claims say so.

    Attributes
    ----------
    derivations : ``{name: [(step title, passed)]}``; ``None``: not checked (no
        ``derivations-checked`` row), ``{}``: no derivations.
    slopes : ``{(a, b): (slope, zeta)}``, the equal-step law's local slope over L in [16, 256].
    floor : ``{(a, b, k, d, P): (value, se)}``, the population floor ``T - h^T G^+ h``.
    floor_context : the same keys: floors of polynomials in the context covariance, the class a
        trained model has at its P.
    floor_reference : ``{(a, b): (value, se, paper)}``, the paper's top-2 floors recomputed.
    shown : the derivation objects the report typesets.
    spectra, d_linear : the spectra and dimension of the linear-law tables.
    floor_contexts, reference_contexts : the Monte Carlo sizes behind ``floor`` and ``floor_reference``.
    """

    derivations: dict[str, list[tuple[str, bool]]] | None = None
    slopes: dict[Spectrum, tuple[float, float]] = field(default_factory=dict)
    floor: dict[FloorKey, tuple[float, float]] = field(default_factory=dict)
    floor_context: dict[FloorKey, tuple[float, float]] = field(default_factory=dict)
    floor_reference: dict[Spectrum, tuple[float, float, float]] = field(default_factory=dict)
    shown: tuple[Any, ...] = field(default=(), compare=False, repr=False)
    spectra: tuple[Spectrum, ...] = DEFAULT_LINEAR_SPECTRA
    d_linear: int = DEFAULT_LINEAR_D
    floor_contexts: int = 0
    reference_contexts: int = 0


def theory_numbers(inputs: TheoryInputs) -> CoreTheory:
    """The core numbers for the conditions of the sweep's curves (the Monte Carlo sizes of the report)."""
    cs = inputs.curves
    shown, checks = derivation_checks()
    spectra = tuple(sorted({(c.a, c.b) for c in cs if c.model == "linear" and c.easy})) or DEFAULT_LINEAR_SPECTRA
    topk = sorted({(c.a, c.b, c.k, c.d, c.P) for c in cs if c.task == "topk"})
    n, m = inputs.floor_contexts, inputs.reference_contexts
    return CoreTheory(
        derivations=checks,
        slopes=slopes(spectra),
        floor=floors(topk, n) if topk else {},
        # the floor of the class a trained model has at its P: polynomials in its context covariance
        floor_context=floors(topk, n, covariance="context") if topk else {},
        floor_reference=floor_reference(m) if m else {},
        shown=tuple(shown),
        spectra=spectra,
        d_linear=max([c.d for c in cs if c.model == "linear"] or [DEFAULT_LINEAR_D]),
        floor_contexts=n,
        reference_contexts=m,
    )


def numbers(ev) -> CoreTheory:
    """The core numbers of the report (``ev.theory.studies["core"]``), or none computed."""
    got = ev.study_numbers(NAME)
    return got if got is not None else CoreTheory()


def tables(th: CoreTheory) -> list[Table]:
    """The linear-law tables, the aggregation models, the linear floors and the paper's floors."""
    out = [Table(**t) for t in linear_table(th.spectra, th.d_linear)]
    out.append(Table(**clt_table()))
    if th.floor:
        out.append(
            Table(
                f"Linear floor T - h^T G^+ h (Monte Carlo, {th.floor_contexts} contexts, degree 4): "
                "features Sigma^r q (population, the paper's) and S^r q with S = X^T X / P (context)",
                ["(a,b)", "k", "d", "P", "population", "s.e.", "context", "s.e."],
                [
                    [f"({a:g},{b:g})", k, d, P, v, s, *th.floor_context[(a, b, k, d, P)]]
                    for (a, b, k, d, P), (v, s) in th.floor.items()
                ],
            )
        )
    if th.floor_reference:
        out.append(
            Table(
                f"Paper's top-2 floors recomputed (d=128, P=1024, {th.reference_contexts} contexts)",
                ["(a,b)", "this toolkit", "s.e.", "paper"],
                [[f"({a:g},{b:g})", v, s, ref] for (a, b), (v, s, ref) in th.floor_reference.items()],
            )
        )
    return out
