"""Assemble a report from run records: curves and their fits, theory numbers, claims, figures, tables.

The path is one typed flow: records -> :func:`~depthscale.derivations.analysis.curves` (each
curve owns its :class:`~depthscale.derivations.analysis.fits.FitResult` objects) -> theory numbers ->
:func:`~depthscale.derivations.claims.evaluate_claims` (``ClaimResult`` objects) -> figures and
tables -> :class:`~depthscale.derivations.report.render.ReportContext`. Numbers become text only in
:mod:`depthscale.derivations.report.render`.
"""

from __future__ import annotations

import datetime as _dt
import time
from dataclasses import replace

import numpy as np

from ..analysis import reference_values, theory_numbers
from ..analysis.curve import Curve, curves
from ..analysis.theory_numbers import TheoryNumbers
from ..claims.registry import Evidence, evaluate_claims, registered_claims, study_order
from ..claims.verdicts import MIN_DEPTHS, MIN_EVAL, MIN_SEEDS, MIN_SPAN, VERDICTS, below_zero
from ..formatting import MISSING, format_estimate, format_interval
from ..study import TheoryInputs, report_studies
from . import figures
from .findings import claim_findings, default_answer, simulation_first

DEFAULT_LINEAR_SPECTRA = [(2.0, 1.0), (1.0, 2.0), (1.5, 2.0)]  # linear-law tables when no linear easy runs
# the reference floors (theory/_choices.py FLOOR_NAMES) the room-for-depth table and figure compare
# with: the best single temperature head, and the best two-temperature mixture beyond it
ROOM_FLOORS = ("single", "mixture")


def gather_theory(cs: list[Curve], floor_contexts: int, reference_contexts: int) -> tuple[TheoryNumbers, list, list]:
    """Theory numbers for the conditions of these curves: (evidence numbers, derivation objects, tables)."""
    derivs, checks = theory_numbers.derivation_checks()
    lin_spectra = sorted({(c.a, c.b) for c in cs if c.model == "linear" and c.easy}) or DEFAULT_LINEAR_SPECTRA
    topk = sorted({(c.a, c.b, c.k, c.d, c.P) for c in cs if c.task == "topk"})
    theory = TheoryNumbers(
        derivations=checks,
        slopes=theory_numbers.slopes(lin_spectra),
        floor=theory_numbers.floors(topk, floor_contexts) if topk else {},
        # the floor of the class a trained model has at its P: polynomials in its context covariance
        floor_context=theory_numbers.floors(topk, floor_contexts, covariance="context") if topk else {},
        floor_reference=theory_numbers.floor_reference(reference_contexts) if reference_contexts else {},
    )
    d_lin = max([c.d for c in cs if c.model == "linear"] or [128])
    tables = theory_numbers.linear_table(lin_spectra, d_lin)
    tables.append(theory_numbers.clt_table())
    if theory.floor:
        tables.append(
            {
                "title": f"Linear floor T - h^T G^+ h (Monte Carlo, {floor_contexts} contexts, degree 4): "
                "features Sigma^r q (population, the paper's) and S^r q with S = X^T X / P (context)",
                "columns": ["(a,b)", "k", "d", "P", "population", "s.e.", "context", "s.e."],
                "rows": [
                    [f"({a:g},{b:g})", k, d, P, v, s, *theory.floor_context[(a, b, k, d, P)]]
                    for (a, b, k, d, P), (v, s) in theory.floor.items()
                ],
            }
        )
    if theory.floor_reference:
        tables.append(
            {
                "title": f"Paper's top-2 floors recomputed (d=128, P=1024, {reference_contexts} contexts)",
                "columns": ["(a,b)", "this toolkit", "s.e.", "paper"],
                "rows": [[f"({a:g},{b:g})", v, s, ref] for (a, b), (v, s, ref) in theory.floor_reference.items()],
            }
        )
    return theory, derivs, tables


def _fit_row(c: Curve) -> list:
    f = c.default_fit()
    law = "L0 + c L^-alpha" if f.kind == "offset_power" else "c L^-alpha"
    if not f.identified:
        return [c.label, law, "not identified", MISSING, MISSING, MISSING, MISSING, MISSING, f.reason]
    p, se = f.params, f.se
    boot = f.bootstrap.intervals.get("alpha") if f.bootstrap is not None else None
    return [
        c.label,
        law,
        format_estimate(p["L0"], se["L0"]) if "L0" in p else 0.0,
        format_estimate(p["c"], se["c"]),
        format_estimate(p["alpha"], se["alpha"]),
        f.r2,
        format_interval(*boot) if boot else MISSING,
        f.delta_aic_alpha_one,
        "",
    ]


def results_tables(cs: list[Curve]) -> list:
    """The per-run table, the fits table and the room-for-depth table (the deepest model against the
    reference floors of ``ROOM_FLOORS``)."""
    rows = []
    for c in cs:
        A, C = c.field_mean("A_L"), c.field_mean("C_L")
        for j, L in enumerate(c.depths):
            recs = c.records_at(int(L))
            conv = sum(bool(r.get("converged")) for r in recs)
            top1 = np.mean([m[0] for r in recs if (m := r.get("top1_mass"))] or [np.nan])
            rows.append([c.label, int(L), len(recs), conv, format_estimate(c.mean[j], c.se[j]), A[j], C[j], top1])
    out = [
        {
            "title": "Loss against depth (mean ± s.e. over seeds, fresh evaluation contexts)",
            "columns": [
                "condition",
                "L",
                "seeds",
                "converged",
                "R_L",
                "A_L",
                "C_L (cross-layer covariance)",
                "top-1 mass (layer 1)",
            ],
            "rows": rows,
            "note": "A_L is the mean of the layers' own losses and C_L the mean covariance E[e_l e_m] (l ≠ m) of two "
            "layers' errors, so R_L = C_L + (A_L - C_L)/L. C_L is negative when layer errors cancel, as in "
            "linear attention, where each layer corrects what the previous ones left.",
        }
    ]
    out.append(
        {
            "title": "Fits: R_L = L0 + c L^-alpha (softmax, linear top-k) and R_L = c L^-alpha (linear easy)",
            "columns": [
                "condition",
                "law",
                "L0",
                "c",
                "alpha",
                "R^2",
                "alpha 95% (bootstrap over seeds)",
                "delta AIC (alpha = 1)",
                "not identified because",
            ],
            "rows": [_fit_row(c) for c in cs],
        }
    )
    brows = []
    for c in cs:
        if c.model != "softmax" or c.task != "topk":
            continue
        found = {n: c.floor(n) for n in ROOM_FLOORS}
        b = {n: v for n, v in found.items() if v is not None}
        if len(b) < len(ROOM_FLOORS):
            continue
        beats = {n: below_zero(b[n].diff) is True for n in ROOM_FLOORS}
        regime = (
            "depth beats both"
            if beats["mixture"]
            else "depth beats one temperature only"
            if beats["single"]
            else "no room used by depth"
        )
        j = len(c.depths) - 1
        brows.append(
            [
                c.label,
                int(c.depths[j]),
                format_estimate(c.mean[j], c.se[j]),
                b["single"].loss,
                format_estimate(b["single"].diff.value, b["single"].diff.se),
                b["mixture"].loss,
                format_estimate(b["mixture"].diff.value, b["mixture"].diff.se),
                regime,
            ]
        )
    out.append(
        {
            "title": "Room for depth: deepest model against the best temperature-only heads (paired on the same contexts)",
            "columns": [
                "condition",
                "L",
                "R_L",
                "single head",
                "R_L - single",
                "two temperatures",
                "R_L - two",
                "regime",
            ],
            "rows": brows,
        }
    )
    return out


def figure_entries(records, cs: list[Curve], theory: TheoryNumbers) -> list:
    """Every figure of the report, the overview first."""
    fits = {c.key: fit for c in cs if (fit := c.default_fit()).identified}
    exp_rows = [
        {
            "a": c.a,
            "b": c.b,
            "alpha": f.params["alpha"],
            "alpha_se": f.se["alpha"],
            "series": f"{c.model} {'easy' if c.easy else f'top-{c.k}'} d={c.d}",
        }
        for c in cs
        if (f := fits.get(c.key)) is not None and c.variant == "base"
    ]
    reference = [(a, b, alpha) for (a, b), alpha in reference_values.LINEAR_EASY_EXPONENTS.items()]
    floor_rows = []
    for c in cs:
        key = (c.a, c.b, c.k, c.d, c.P)
        if c.model == "linear" and c.task == "topk" and key in theory.floor_context:
            v, s = theory.floor_context[key]
            floor_rows.append(
                {
                    "label": f"({c.a:g},{c.b:g}) d={c.d}",
                    "measured": c.mean[-1],
                    "measured_se": c.se[-1],
                    "reference": v,
                    "reference_se": s,
                    "group": "trained linear vs context floor",
                }
            )
    for (a, b), (v, s, ref) in theory.floor_reference.items():
        floor_rows.append(
            {
                "label": f"({a:g},{b:g})",
                "measured": v,
                "measured_se": s,
                "reference": ref,
                "group": "theory MC vs paper",
            }
        )
    base_rows = []
    for c in cs:
        if c.model != "softmax" or c.task != "topk" or c.variant != "base":
            continue
        bs = {n: c.floor(n) for n in ROOM_FLOORS}
        if all(v is None for v in bs.values()):
            continue
        f = fits.get(c.key)
        row = {
            "spectrum": f"({c.a:g},{c.b:g}) top-{c.k} d={c.d}",
            "L0": f.params["L0"] if f is not None else np.nan,
            "L0_se": f.se["L0"] if f is not None else np.nan,
        }
        for n, fl in bs.items():
            if fl is not None:
                row[n], row[n + "_se"] = fl.loss, fl.loss_se
        base_rows.append(row)
    return [
        figures.figure_entry("overview", cs, fits),
        figures.figure_entry("exponents_vs_zeta", exp_rows, reference),
        figures.figure_entry("mode_curves", records),
        figures.figure_entry("decomposition", records),
        figures.figure_entry("floors", floor_rows),
        figures.figure_entry("room_for_depth", base_rows),
    ]


def build_context(
    records,
    *,
    title: str,
    preset: str = "",
    floor_contexts: int = 3000,
    reference_contexts: int = 3000,
    runtime_seconds: float | None = None,
    notes=(),
    load_arrays=None,
    study=None,
):
    """Everything a report shows, from a list of run records.

    ``study`` (a :class:`~depthscale.derivations.study.Study`): the report holds the claims, theory
    numbers and sections of its ``report_studies``; None: of every registered study. ``load_arrays(key)``
    (``Store.load_arrays``) gives the runs' per-context errors, which a study may pair with reference
    floors; without it those comparisons are left out.
    """
    from .context import ReportContext

    t0 = time.perf_counter()
    records = list(records)
    cs = curves(records)
    reported = study_order() if study is None else report_studies(study)
    theory, derivs, theory_tables = gather_theory(cs, floor_contexts, reference_contexts)
    inputs = TheoryInputs(cs, floor_contexts, reference_contexts, load_arrays)
    theory = replace(theory, studies={s.name: s.theory(inputs) for s in reported if s.theory is not None})
    # one evidence for the claims, the tables and the figures: what a study derives from it is computed once
    ev = Evidence(cs, theory, load_arrays)
    asked = registered_claims(reported)
    claims = evaluate_claims(ev, asked)
    theory_only = [c.id for c in asked if c.kind == "theory"]
    sections = [s.sections(ev) for s in reported if s.sections is not None]
    theory_tables += [t for sec in sections for t in sec.tables]
    # the answer and the findings: the study's own story, else its question and how its claims fell
    told = study.story(claims, ev) if study is not None and study.story is not None else None
    figure_entries_ = figure_entries(records, cs, ev.theory) + [f for sec in sections for f in sec.figures]
    drawn = {f["name"] for f in figure_entries_ if f.get("png") is not None}
    # a finding whose figure was not drawn (no data) keeps its sentence and shows no empty panel
    story = [f if not f.figure or f.figure in drawn else replace(f, figure="") for f in (told.findings if told else ())]
    answer = list(told.answer) if told is not None else ([] if study is None else default_answer(claims, study))
    if study is not None and preset in study.presets and (about := study.preset_description(preset)):
        answer.append(about)
    n_ok = sum(r.get("status") == "ok" for r in records)
    n_conv = sum(bool(r.get("converged")) for r in records)
    failed = [r for r in records if r.get("status") != "ok"]
    counts = {v: sum(c.verdict == v for c in claims) for v in VERDICTS}
    summary = [
        f"{len(records)} runs in the store: {n_ok} finished, {n_conv} converged, {len(failed)} failed or diverged.",
        "Claims: " + ", ".join(f"{n} {v}" for v, n in counts.items() if v != "error" or n) + ".",
        f"Verdicts are pass/fail only when the evidence is decisive (at least {MIN_SEEDS} seeds at every depth, "
        f"{MIN_DEPTHS} depths spanning a factor {MIN_SPAN}, converged runs, {MIN_EVAL:,} evaluation contexts) and the fit "
        "behind them is identified; "
        "otherwise indicative, with the would-be verdict stated when there is one.",
    ]
    notes = list(notes) + [f"Run {r.get('key')}: {r.get('status')} — {r.get('reason')}" for r in failed]
    return ReportContext(
        title=title,
        subtitle="Depth scaling in attention: theory against simulation",
        preset=preset,
        created=_dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        runtime_seconds=(runtime_seconds or 0.0) + (time.perf_counter() - t0),
        summary=summary,
        derivations=derivs,
        theory_tables=theory_tables,
        results_tables=results_tables(cs),
        figures=figure_entries_,
        claims=simulation_first(claims, theory_only),
        notes=notes,
        findings=claim_findings(claims, theory_only),
        answer=answer,
        story=story,
    )
