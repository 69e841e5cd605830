"""Assemble a report from run records: curves and their fits, theory numbers, claims, figures, tables.

The path is one typed flow: records -> :func:`~depthscale.derivations.analysis.curves` (each
curve owns its :class:`~depthscale.derivations.analysis.fits.FitResult` objects) -> each reported
study's theory numbers -> :func:`~depthscale.derivations.claims.evaluate_claims` (``ClaimResult``
objects) -> each reported study's sections (:class:`~depthscale.derivations.study.Sections`: its
derivations, tables and figure entries, the figures drawn here, once) ->
:class:`~depthscale.derivations.report.render.ReportContext`. The builder names no study and adds no
table or figure of its own. Numbers become text only in :mod:`depthscale.derivations.report.render`.
"""

from __future__ import annotations

import datetime as _dt
import time
from dataclasses import replace

from ..claims.registry import evaluate_claims, report_evidence
from .entries import draw_entry
from .findings import claim_findings, default_answer, simulation_first


def studies_with_runs(reported, claims):
    """``(studies, claims, names left out)``: the studies with at least one simulation claim that ran
    on these runs (not ``not run``), and their claims; all of them when none ran (an empty store)."""
    ran = {r.claim_id for r in claims if r.verdict != "not run"}
    kept = [s for s in reported if any(c.kind != "theory" and c.id in ran for c in s.claims)]
    if not kept:
        return list(reported), claims, []
    ids = {c.id for s in kept for c in s.claims}
    return kept, [r for r in claims if r.claim_id in ids], [s.name for s in reported if s not in kept]


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
    # one evidence for the claims, the tables and the figures: what a study derives from it is computed once
    rep = report_evidence(
        records, study, floor_contexts=floor_contexts, reference_contexts=reference_contexts, load_arrays=load_arrays
    )
    ev, reported, asked = rep.evidence, rep.studies, rep.claims
    claims = evaluate_claims(ev, asked)
    if study is None:  # a store of one's own: the studies that judge its runs, not every study's "not run"
        reported, claims, left_out = studies_with_runs(reported, claims)
        if left_out:
            notes = [*notes, f"Left out: the claims of {', '.join(left_out)}, which judge no run of this store."]
    theory_only = [c.id for c in asked if c.kind == "theory"]
    sections = [s.sections(ev) for s in reported if s.sections is not None]
    entries = [f for sec in sections for f in sec.figures]
    drawn = [draw_entry(f) for f in entries]  # each figure drawn once, here
    # the answer and the findings: the study's own story, else its question and how its claims fell
    told = study.story(claims, ev) if study is not None and study.story is not None else None
    # a finding shows the figure it names, or the figure that names it (the renderer leaves out a
    # finding whose figure was not drawn)
    names = {e.name for e in entries}
    story = []
    for f in told.findings if told else ():
        name = f.figure or next((e.name for e in entries if e.finding and e.finding == f.title), "")
        story.append(replace(f, figure=name if name in names else ""))
    answer = list(told.answer) if told is not None else ([] if study is None else default_answer(claims, study))
    if study is not None and preset in study.presets and (about := study.preset_description(preset)):
        answer.append(about)
    n_ok = sum(r.get("status") == "ok" for r in records)
    n_conv = sum(bool(r.get("converged")) for r in records)
    failed = [r for r in records if r.get("status") != "ok"]
    # the claims' tally is the claims section's first line; the summary counts the runs
    summary = [
        f"{len(records)} runs in the store: {n_ok} finished, {n_conv} converged, {len(failed)} failed or diverged."
    ]
    notes = list(notes) + [f"Run {r.get('key')}: {r.get('status')} — {r.get('reason')}" for r in failed]
    return ReportContext(
        title=title,
        subtitle="Depth scaling in attention: theory against simulation",
        preset=preset,
        created=_dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        runtime_seconds=(runtime_seconds or 0.0) + (time.perf_counter() - t0),
        summary=summary,
        derivations=[d for sec in sections for d in sec.derivations],
        theory_tables=[t for sec in sections for t in sec.tables],
        results_tables=[t for sec in sections for t in sec.results],
        figures=drawn,
        claims=simulation_first(claims, theory_only),
        notes=notes,
        findings=claim_findings(claims, theory_only),
        answer=answer,
        story=story,
        primary=list(study.primary) if study is not None else [],
    )
