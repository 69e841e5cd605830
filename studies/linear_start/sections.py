"""The linear-optimum study's report pieces: the optimum's tables and the figure of trained runs
against the optimum and the population laws (:func:`sections`)."""

from __future__ import annotations

from functools import partial

import numpy as np

from depthscale.derivations.study import (
    EASY_TASKS,
    OPTIMUM_RTOL,
    REFERENCE_D,
    REFERENCE_P,
    FigureEntry,
    Finding,
    OptimumNumbers,
    Sections,
    Story,
    Table,
    answer_word,
    in_these_settings,
    joint_answer,
    optimum_numbers_of,
    optimum_of,
    quote,
    results_of,
    short_tally,
    strongest,
    verdict_phrase,
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


def _where(r) -> str:
    """``(2,1) at L = 8``: a linear-optimum condition in a few words."""
    c = r.condition
    return f"({c.a:g},{c.b:g}) at L = {c.depth}" if c.a is not None and c.depth is not None else c.label


def _starts(cs) -> str:
    """How the curves' runs started: the small start (the paper's model) or the Jacobi steps."""
    names = {"base": "the small start", "jacobi-init": "the Jacobi start"}
    got = list(dict.fromkeys(names.get(c.variant, c.variant) for c in cs))
    return " or ".join(got)


def story(results, ev) -> Story:
    """The answer to both halves of the question, in the study's settings: whether trained linear attention
    reaches the optimum of its class (the tally over depths and spectra, its clearest pass and fail) and
    whether the optimum has the paper's exponent (its tally, or why it is not in the report)."""
    opt = results_of(results, "linear-optimum")
    exp = results_of(results, "linear-exponent-finite")
    if not opt and not exp:
        return Story(answer=("No linear easy-task run and no reference optimum are in this report.",))
    answer = []
    word = joint_answer(answer_word(opt) if opt else None, answer_word(exp) if exp else None)
    if opt:
        cs = [
            c
            for c in ev.curves
            if c.model == "linear" and c.task in EASY_TASKS and c.variant in ("base", "jacobi-init")
        ]
        start = f" from {_starts(cs)}" if cs else ""
        first = (
            f"{word}: {in_these_settings(cs, opt)}, whether trained linear attention{start} comes within "
            f"{OPTIMUM_RTOL * 100:g} % of the best depth-L predictor of its class "
            f"{verdict_phrase(opt, 'depths and spectra')}."
        )
        shown = []
        for side, what in (("pass", "clearest pass"), ("fail", "clearest fail")):
            r = strongest(opt, side)
            if r is None and (r := strongest(opt, "indicative", side)) is not None:
                what = "nearest would-be pass" if side == "pass" else "farthest would-be fail"
            if r is not None:
                shown.append(f"{what}, {quote(r, f'R_{r.condition.depth}', _where(r), against=True)}")
        if shown:
            text = "; ".join(shown)
            first += f" {text[0].upper()}{text[1:]}."
        answer.append(first)
    exponent = "The optimum's exponent at the paper's scale against the paper's"
    if exp:
        text = f"{exponent}: {short_tally(exp)}"
        if (r := strongest(exp, "fail") or strongest(exp, "pass")) is not None:
            text += f"; clearest, {quote(r, 'alpha', against=True)}"
        answer.append(text + ".")
    elif skipped := [r for r in results if r.claim_id == "linear-exponent-finite"]:
        answer.append(f"{exponent} is not in this report ({skipped[0].reason}).")
    findings = (
        Finding(
            "Trained runs against the optimum",
            "Each seed's R_L beside the optimum at the runs' own (d, P) and the population laws.",
            "linear_optimum",
            ("linear-optimum",),
        ),
    )
    return Story(answer=tuple(answer), findings=findings)
