"""The paper-curves study's report pieces: the depth law at training checkpoints and the excess over
the single head against depth (:func:`sections`)."""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, cast

import numpy as np

from depthscale.derivations.study import (
    Finding,
    Sections,
    Story,
    Table,
    answer_word,
    calibration_table,
    curves,
    figure_entry,
    in_these_settings,
    number_word,
    plan_table,
    protocol_curves,
    protocol_rows,
    quote,
    results_of,
    row_label,
    short_tally,
    strongest,
    study,
    task_label,
    verdict_phrase,
)
from depthscale.derivations.study import format_estimate as est

from .objections import long_curves, objections_section

if TYPE_CHECKING:
    from depthscale.sims.records import RunRecord

CAPTION = (
    "Paper-curves study: R_L minus the best single temperature head on the same contexts against depth, "
    "log-log (symmetric-log, linear near 0, when some depth is at or below the head), one colour per "
    "setting; dotted: c/L through each curve's first point, as if the head were the plateau "
    "(docs/studies/paper-curves.md)."
)
LOOK_AT = "Look at whether the one-layer points start above zero and fall along their dotted 1/L guides."


def checkpoint_table(ev) -> Table | None:
    """The depth law at each training checkpoint: ``R_L = R_inf + c L^-alpha`` fitted to the losses the
    runs had after s steps (all depths, seed means), with the mean disagreement ``A_L - C_L``."""
    body = []
    for r in protocol_rows(ev):
        recs = [rec for rec in r.curve.runs.values() if rec.get("checkpoints")]
        steps = sorted({c["step"] for rec in recs for c in rec["checkpoints"]})
        for s in steps:
            at = []
            for rec in recs:
                c = next((c for c in rec["checkpoints"] if c["step"] == s), None)
                if c is not None:
                    rc = copy.deepcopy({k: v for k, v in rec.items() if k != "checkpoints"})
                    rc.update({k: c[k] for k in ("final_loss", "final_loss_se", "A_L", "C_L", "gap")})
                    at.append(cast("RunRecord", rc))  # the run's record as measured at this checkpoint
            (cv,) = curves(at) or (None,)
            if cv is None or len(cv.depths) < 4:
                continue
            f = cv.fit("offset")
            ok = not f.failure and f.identified
            gap = cv.field_mean("gap")[cv.depths >= 2]
            body.append(
                [
                    r.protocol.name,
                    task_label(r.curve),
                    s,
                    f"{int(cv.depths[0])}..{int(cv.depths[-1])}",
                    est(f.params["alpha"], f.se["alpha"]) if ok else "not identified",
                    est(f.params["L0"], f.se["L0"]) if ok else "not identified",
                    float(cv.mean[0]),
                    float(np.nanmean(gap)) if np.any(np.isfinite(gap)) else float("nan"),
                ]
            )
    if not body:
        return None
    return Table(
        "Depth law at training checkpoints: R_L = R_inf + c L^-alpha after s steps",
        ["protocol", "task", "step", "depths", "alpha", "R_inf", "R_1", "mean A_L - C_L"],
        body,
    )


def single_excess_rows(ev) -> list[dict]:
    """Per setting: ``R_L`` minus the best single temperature head (paired, seed-pooled) against L."""
    out = []
    for r in protocol_rows(ev):
        Ls = sorted(L for L in r.excess if "single" in r.excess[L])
        if Ls:
            out.append(
                {
                    "series": r.protocol.name,
                    "task": task_label(r.curve),
                    "depths": Ls,
                    "excess": [r.excess[L]["single"].value for L in Ls],
                    "se": [r.excess[L]["single"].se for L in Ls],
                }
            )
    return out


# a synthetic curve costs one fit with its profile interval and lack-of-fit scan (about 0.15 CPU-s):
# the claim's target and the two negative controls, 50 curves each (a rate's s.e. <= 0.071)
ALPHAS, REPLICATES = (0.5, 1.0, 2.0), 50


def law_error_rates(ev) -> tuple[Table, ...]:
    """The calibration and planner tables of ``protocol-inverse-depth`` on each protocol curve with an
    identified fit (a measured alpha) and two seeds or more: how often the verdict would pass, fail or
    stay indicative at the curve's own effect size, and the seeds a decision takes. The curves the
    objections' claim already calibrates (:func:`~.objections.long_curves`) are left to it."""
    inverse_depth = next(c for c in study("protocols").claims if c.id == "protocol-inverse-depth")
    judged = {id(c) for _, c in long_curves(ev)}
    rows = [
        (row_label(r), r.curve)
        for r in protocol_rows(ev)
        if r.fit.identified and len(r.curve.seeds) >= 2 and id(r.curve) not in judged
    ]
    tables = (
        calibration_table(inverse_depth, ev, rows, ALPHAS, REPLICATES),
        plan_table(inverse_depth, ev, rows, replicates=REPLICATES),
    )
    return tuple(t for t in tables if t is not None)


def sections(ev) -> Sections:
    """The checkpoint table, the law's error rates on the protocol curves, the objections and the
    excess-over-the-single-head figure (each left out without data)."""
    t = checkpoint_table(ev)
    above = single_excess_rows(ev)
    fig = figure_entry("signed_excess_vs_depth", above, name="single_excess", caption=CAPTION, look_at=LOOK_AT)
    o_tables, o_figures = objections_section(ev)
    tables = (() if t is None else (t,)) + law_error_rates(ev) + o_tables
    return Sections(tables=tables, figures=((fig,) if above else ()) + o_figures)


CONTROL = "ensemble-control"  # the positive control's protocol: inverse depth must be found there


def story(results, ev) -> Story:
    """The answer: whether real training gives inverse depth (the tally over its settings, in the study's
    settings, with the clearest pass and fail), what the positive control gives, whether the one-layer
    model starts above the single head as the paper's did, and the top-16 signed floor."""
    inv = results_of(results, "protocol-inverse-depth")
    if not inv:
        return Story(answer=("No paper-curves run is in this store.",))
    control = [r for r in inv if r.condition.label.startswith(CONTROL + " ")]
    trained = [r for r in inv if r not in control]
    rows = [(p, c) for p, c in protocol_curves(ev.curves) if p.name != CONTROL]
    names = list(dict.fromkeys(p.name for p, _ in rows))
    more = f"{number_word(len(names))} ways of training" if len(names) > 1 else ""
    if len(names) == 1:
        more = f"one way of training ({names[0]})"
    where = in_these_settings([c for _, c in rows], trained or inv, training=False, more=more)
    lo, hi = inv[0].expected
    first = f"{answer_word(trained)}: {where}, inverse depth (alpha in [{lo:g}, {hi:g}]) under real training "
    first += verdict_phrase(trained, "settings")
    shown = [f"clearest {v}, {quote(r, 'alpha')}" for v in ("pass", "fail") if (r := strongest(trained, v)) is not None]
    answer = [first + (f"; {'; '.join(shown)}." if shown else ".")]
    more_text = []
    if control:
        text = "The positive control, L independently trained one-layer models averaged, " + verdict_phrase(
            control, "settings"
        )
        if r := strongest(control, "pass") or strongest(control, "fail"):
            text += f"; clearest, {quote(r, 'alpha')}"
        more_text.append(text + ".")
    if shallow := results_of(
        results, "protocol-shallow-above-single", lambda r: not r.condition.label.startswith(CONTROL)
    ):
        more_text.append(
            f"Does the one-layer model start above the best single temperature head, as the paper's did? {short_tally(shallow)}."
        )
    for r in results_of(results, "top16-signed-floor"):
        more_text.append(
            f"On top-16 the deep model's excess over the signed floor, relative to it: {quote(r, label='')}."
        )
    # the objections and the 20,000-step headline: what is decided first, then what is open
    mechanism = [r for r in results_of(results, "objections-mechanism") if r.verdict != "not run"]
    on_head = [r for r in results_of(results, "objections-one-layer-on-head") if r.verdict != "not run"]
    if objected := [r for r in results_of(results, "objections-inverse-depth") if r.verdict != "not run"]:
        text = (
            "Under the obvious objections (top-2 (0.5,0.5): the best of three learning rates per depth, width 2d, "
            "20,000 steps; top-2 (0,0) at 20,000 steps where run)"
        )
        decided = []
        if mechanism:
            r = strongest(mechanism, "fail") or strongest(mechanism, "pass")
            decided.append(
                f"the central-limit mechanism (A_L - C_L flat, per seed): {short_tally(mechanism)}"
                + (f", clearest {quote(r, 'alpha')}" if r is not None else "")
            )
        if on_head:
            decided.append(f"the one-layer model on the single head within 1 %: {short_tally(on_head)}")
        if decided:
            text += ", decided first: " + "; ".join(decided) + "; and then"
        # what is decided leads the answer; the protocol tally over every setting follows
        answer.insert(0, f"{text} inverse depth itself: {short_tally(objected)}.")
    if more_text:
        answer.append(" ".join(more_text))
    findings = (
        Finding(
            "Excess over the single head against depth",
            "R_L minus the best single temperature head on the same contexts, per setting: the paper's curve "
            "would start well above it and fall as 1/L.",
            "single_excess",
            ("protocol-shallow-above-single", "top16-signed-floor"),
        ),
        Finding(
            "Excess over the plateau against depth",
            "R_L - R_inf per setting with L^-1 guides: the control runs parallel to them, real training flattens.",
            "protocol_excess",
            ("protocol-inverse-depth",),
        ),
        Finding(
            "The objections: other learning rates, twice the width, 20,000 steps",
            "R_L against depth under each objection, and the best of three learning rates per depth with its "
            "1/L guide.",
            "objections",
            ("objections-inverse-depth", "objections-mechanism", "objections-one-layer-on-head"),
        ),
    )
    return Story(answer=tuple(answer), findings=findings)
