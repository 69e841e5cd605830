"""The linear-optimum study's report pieces: the optimum's tables and the figure of trained runs
against the optimum and the population laws (:func:`sections`)."""

from __future__ import annotations

from functools import partial

import numpy as np

from depthscale.derivations.study import (
    EASY_TASKS,
    REFERENCE_D,
    REFERENCE_P,
    FigureEntry,
    Finding,
    OptimumNumbers,
    Sections,
    Story,
    Table,
    brief,
    optimum_numbers_of,
    optimum_of,
    results_of,
    tally,
)

from .drawings import CAPTION, LOOK_AT, draw_optimum_vs_depth
from .theory import REFERENCE_DEPTHS


def theory_tables(numbers: OptimumNumbers) -> list[Table]:
    """The optimum at the runs' scale and the exponents at d = 128, P = 1024, as report tables."""
    out = []
    rows = [
        [f"({a:g},{b:g})", task, d, P, L, *vals]
        for (a, b, d, P, task), per in sorted(numbers.at_runs.items())
        for L, vals in sorted(per.items())
    ]
    if rows:
        out.append(
            Table(
                f"Best depth-L polynomial in S = X^T X / P on the easy task (Monte Carlo, {numbers.contexts} fitting + "
                f"{numbers.contexts} evaluation contexts): held-out loss and in-sample bound, and the best equal-step predictor",
                ["(a,b)", "task", "d", "P", "L", "optimum", "s.e.", "in-sample", "equal steps", "s.e."],
                rows,
            )
        )
    ref = numbers.reference
    if ref:
        out.append(
            Table(
                f"Exponent of the optimum at d={REFERENCE_D}, P={REFERENCE_P}, c L^-alpha over "
                f"L={list(REFERENCE_DEPTHS)}, against the paper's Table 2",
                ["(a,b)", "zeta", "optimum alpha", "s.e.", "in-sample alpha", "paper"],
                [[f"({a:g},{b:g})", (a + b - 1) / a, al, se, ai, p] for (a, b), (al, se, ai, p, _) in ref.items()],
            )
        )
    return out


def figure_rows(cs, numbers: OptimumNumbers) -> list:
    """One row per linear easy-task curve for the ``linear_optimum`` figure (trained seeds, optimum, laws)."""
    from depthscale.theory.equal_step import gamma_opt
    from depthscale.theory.free_poly import free_continuum

    rows = []
    for c in cs:
        # the paper's model from the small start or from the Jacobi steps (as the linear-optimum claim)
        if c.model != "linear" or c.task not in EASY_TASKS or c.variant not in ("base", "jacobi-init"):
            continue
        opt = optimum_of(numbers, c)
        Lgrid = np.unique(np.geomspace(1, max(int(c.depths[-1]), 2), 40).round().astype(int))
        spec = c.spectrum
        laws = {"equal step (optimal step)": gamma_opt(spec, Lgrid)[1]}
        if spec.asymptotic:
            laws["free continuum"] = free_continuum(spec, Lgrid)
        rows.append(
            {
                "label": f"({c.a:g},{c.b:g}) d={c.d} P={c.P}" + ("" if c.variant == "base" else f" [{c.variant}]"),
                "depths": [int(L) for L in c.depths],
                "seeds": {str(s): [float(v) for v in c.loss[i]] for i, s in enumerate(c.seeds)},
                "optimum": {int(L): opt[L] for L in sorted(opt)},
                "laws": {k: (Lgrid.tolist(), np.asarray(v, dtype=float).tolist()) for k, v in laws.items()},
            }
        )
    return rows


def sections(ev) -> Sections:
    """The optimum's tables and the figure of trained runs against it (left out without linear easy runs)."""
    numbers = optimum_numbers_of(ev)
    rows = figure_rows(ev.curves, numbers)
    fig = FigureEntry("linear_optimum", partial(draw_optimum_vs_depth, rows), CAPTION, LOOK_AT)
    return Sections(tables=tuple(theory_tables(numbers)), figures=(fig,) if rows else ())


def story(results, ev) -> Story:
    """The answer: how close trained linear attention comes to the best depth-L predictor of its class,
    and whether that optimum has the paper's exponent, with the numbers."""
    answer = []
    if opt := results_of(results, "linear-optimum"):
        ratios = [r.measured / r.expected for r in opt if r.measured is not None and isinstance(r.expected, float)]
        spread = f"; trained / optimum from {min(ratios):.3g} to {max(ratios):.3g}" if ratios else ""
        answer.append(
            f"Trained linear attention against the best depth-L polynomial in S at its own (d, P, L): {tally(opt)} "
            f"over {len(opt)} depths and spectra{spread}."
        )
    if exp := results_of(results, "linear-exponent-finite"):
        shown = "; ".join(brief(r) for r in exp[:3])
        answer.append(f"The optimum's own exponent at d = 128, P = 1024 against the paper's: {tally(exp)} ({shown}).")
    if not answer:
        return Story(answer=("No linear easy-task run and no reference optimum are in this report.",))
    findings = (
        Finding(
            "Trained runs against the optimum",
            "Each seed's R_L beside the optimum at the runs' own (d, P) and the population laws.",
            "linear_optimum",
            ("linear-optimum",),
        ),
    )
    return Story(answer=tuple(answer), findings=findings)
