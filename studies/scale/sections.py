"""The scale study's report pieces: the rungs and the trends as tables, one figure per quantity against d,
and the answer in one sentence (whether the d = 16 answer holds, weakens or turns as d grows)."""

from __future__ import annotations

from functools import partial

from depthscale.derivations.study import (
    FigureEntry,
    Finding,
    NoFigure,
    Sections,
    Story,
    Table,
    estimate_text,
    in_these_settings,
    new_figure,
    palette,
    plot_trend,
    quote,
    results_of,
    short_tally,
)

from .claims import MIN_RUNGS, QUANTITY_TEXT, TARGET_D, ladders, scale_curves

GAIN, HELPS = "scale-depth-gain-holds", "scale-depth-helps-at-largest-d"
SINGLE, EXPONENT = "scale-shallow-rises-above-single", "scale-disagreement-exponent-holds"
FIGURES = {  # quantity -> (figure name, caption, what to look at, the claim it shows)
    "depth_gain": (
        "scale_depth_gain",
        "The depth gain (R_1 - R_Lmax)/R_1 of trained softmax attention on top-2 (0,0) against d (P = 8d, N = d; "
        "log2 axis), seed mean ± one standard error over seeds; the line is the weighted fit in log2 d with its "
        f"95 % band, and the open point its value at d = {TARGET_D}, an extrapolation while no rung ran there.",
        "Look at whether the points stay level (the d = 16 answer holds), climb or fall toward zero as d doubles.",
        GAIN,
    ),
    "r1_vs_single": (
        "scale_shallow_vs_single",
        "The one-layer model against the best single temperature head on the same contexts, (R_1 - H)/H, "
        "against d (P = 8d, N = d), paired and pooled over seeds (± one standard error); the line is the "
        f"weighted fit in log2 d with its 95 % band, the open point its value at d = {TARGET_D} (an extrapolation).",
        "Look at whether the points climb above zero as d grows, toward the paper's shallow models well above the head.",
        SINGLE,
    ),
    "exponent": (
        "scale_disagreement_exponent",
        "The exponent alpha of the layers' disagreement term (A_L - C_L)/L = c L^-alpha against d (P = 8d, N = d), "
        "± the fit's standard error; alpha = 1: the disagreement is flat in depth, alpha < 1: it grows; the line is "
        f"the weighted fit in log2 d with its 95 % band, the open point its value at d = {TARGET_D} (an extrapolation).",
        "Look at whether alpha stays where it is at d = 16 or rises toward 1 (the disagreement stops growing).",
        EXPONENT,
    ),
}

FINDINGS = {  # quantity -> (title, sentence) of the finding beside its figure
    "depth_gain": (
        "The depth gain against d",
        "What depth buys at each rung, (R_1 - R_Lmax)/R_1, and the line through the rungs in log2 d.",
    ),
    "r1_vs_single": (
        "The one-layer model against the single head",
        "Where the one-layer model sits against the best single temperature head at each rung.",
    ),
    "exponent": (
        "The disagreement exponent against d",
        "How the layers' disagreement grows with depth at each rung (alpha = 1: flat).",
    ),
}


def _cell(e) -> str | None:
    return None if e is None else estimate_text(e.value, e.se)


def rungs_table(ev) -> Table | None:
    """Per ladder and rung: the runs behind it and the four measured quantities, with the recorded cost."""
    body = []
    for lad in ladders(ev):
        for c, p in zip(lad.curves, lad.points):
            n_conv = sum(bool(r.get("converged")) for r in c.runs.values())
            body.append(
                [
                    lad.label,
                    p.value,
                    c.P,
                    ", ".join(str(L) for L in p.depths),
                    p.n_seeds,
                    f"{n_conv}/{len(c.runs)}",
                    _cell(p.r1),
                    f"{p.first}..{p.last}",
                    _cell(p.depth_gain),
                    _cell(p.r1_vs_single),
                    _cell(p.exponent),
                    round(p.core_hours, 2),
                ]
            )
    if not body:
        return None
    return Table(
        "Scale study, per rung: R_1, the depth gain, the one-layer model against the single head and the "
        "disagreement exponent (mean ± s.e. over seeds; alpha ± the fit's s.e.)",
        [
            "ladder",
            "d",
            "P",
            "depths",
            "seeds",
            "converged",
            "R_1",
            "gain over L",
            "depth gain",
            "(R_1 - H)/H",
            "alpha",
            "core-hours",
        ],
        body,
        note="depth gain: (R_first - R_last)/R_first between the depths of 'gain over L', paired per seed. H: the best "
        "single temperature head on each run's evaluation contexts (paired). core-hours: the runs' recorded wall time, "
        "one core each.",
    )


def trends_table(ev) -> Table | None:
    """Per ladder and quantity: the slope per doubling of d with its test, and the line's value at d = 128."""
    body = []
    for lad in ladders(ev):
        for q, text in QUANTITY_TEXT.items():
            t = lad.trends.get(q)
            if t is None:
                body.append([lad.label, text, None, None, None, lad.missing.get(q, "")])
                continue
            at = _cell(t.extrapolated)
            where = "an extrapolation" if t.extrapolation else "interpolated"
            fit = (
                f"chi2 = {t.chi2:.2g} on {t.fit_dof}" + (" (errors scaled)" if t.inflated else "")
                if t.fit_dof
                else "two rungs"
            )
            body.append([lad.label, text, _cell(t.slope), t.slope.test, f"{at} ({where})", fit])
    if not body:
        return None
    return Table(
        f"Scale study, trends against d: the slope per doubling of d of each quantity (weighted line in log2 d) and "
        f"the line's value at d = {TARGET_D}",
        ["ladder", "quantity", "slope per doubling", "test", f"at d = {TARGET_D}", "line"],
        body,
        note="A value at a d beyond the rungs run is an extrapolation of the line, not a measurement.",
    )


def draw_quantity(quantity: str, lads) -> object:
    """One quantity against d, one colour per ladder (``NoFigure`` without a fitted trend)."""
    shown = [lad for lad in lads if lad.trends.get(quantity) is not None]
    if not shown:
        raise NoFigure(f"no {QUANTITY_TEXT[quantity]} at two or more values of d in this store")
    fig, axes = new_figure(6.4, 4.2)
    ax = axes[0, 0]
    for lad, colour in zip(shown, palette(len(shown))):
        label = lad.label if len(shown) > 1 else None
        plot_trend(lad.points, quantity, ax=ax, trend=lad.trends[quantity], color=colour, label=label)
    ax.set_title("softmax, P = 8d, N = d", fontsize=9)
    return fig


def figures(ev) -> tuple[FigureEntry, ...]:
    """The three figures' records (each drawing says why when it has no data)."""
    lads = ladders(ev)
    return tuple(
        FigureEntry(name, partial(draw_quantity, q, lads), caption, look)
        for q, (name, caption, look, _) in FIGURES.items()
    )


def sections(ev) -> Sections:
    """The rung and trend tables (left out without runs) and a figure per quantity against d."""
    tables = tuple(t for t in (rungs_table(ev), trends_table(ev)) if t is not None)
    return Sections(results=tables, figures=figures(ev))


NOT_RUN = (
    "Not decided: no scale-study runs are in this store. The CPU rungs (preset scale: d = 8, 16, 32 with "
    "P = 8d, 4,000 steps, about 7 core-hours by the cost model) and the accelerator rungs (preset scale-gpu: "
    "d = 64 and 128) have not been run, so whether the d = 16 answer holds, weakens or turns as d grows is open."
)


def direction(gain, helps=None) -> str:
    """What the depth gain does as d grows, from the results of ``scale-depth-gain-holds`` (``gain``) and
    ``scale-depth-helps-at-largest-d`` (``helps``, or None) on one ladder: ``turns`` (the largest rung's
    gain is below zero, decided), ``holds`` (the trend passes), ``strengthens`` or ``weakens`` (it fails, by the
    slope's sign: the gain grows or shrinks), else ``is undecided`` with where it points.

    >>> from depthscale.derivations.study import ClaimResult
    >>> r = lambda v, m, w=None: ClaimResult("x", "c", (-0.01, 0.01), m, 0.001, "", v, "", would_be=w)
    >>> direction(r("pass", 0.002)), direction(r("fail", -0.03)), direction(r("indicative", 0.03, "fail"))
    ('holds', 'weakens', 'is undecided (it points to: strengthens)')
    >>> direction(r("fail", -0.03), helps=r("fail", -0.02))
    'turns'
    """
    if helps is not None and helps.verdict == "fail":
        return "turns"
    moved = "strengthens" if (gain.measured or 0.0) > 0 else "weakens"
    if gain.verdict == "pass":
        return "holds"
    if gain.verdict == "fail":
        return moved
    if gain.would_be == "pass":
        return "is undecided (it points to holding)"
    if gain.would_be == "fail":
        return f"is undecided (it points to: {moved})"
    return "is undecided"


def _same(results, label: str):
    """The result on the condition ``label``, else the first (None without any)."""
    return next((r for r in results if r.condition.label == label), results[0] if results else None)


def story(results, ev) -> Story:
    """The answer in one sentence, from the claims' results (what the depth gain does as d grows, with the
    slope per doubling and its extrapolation to d = 128), then the one-layer model against the single head
    and the disagreement exponent; one finding per figure."""
    gain = [r for r in results_of(results, GAIN) if r.verdict != "not run"]
    if not gain:
        found = scale_curves(ev.curves)
        if not found:
            return Story(answer=(NOT_RUN,))
        ds = ", ".join(str(d) for d in sorted({c.d for c in found}))
        return Story(
            answer=(
                f"Not decided: this store holds softmax curves with P = 8d at d = {ds} only, never two values of d "
                f"under one protocol, and a trend against d needs two ({MIN_RUNGS} to be decided); the CPU rungs "
                "(preset scale) and the accelerator rungs (preset scale-gpu) give five.",
            )
        )
    r = gain[0]
    helped = [x for x in results_of(results, HELPS) if x.verdict != "not run"]
    helps = _same(helped, r.condition.label)
    lad = next((x for x in ladders(ev) if x.label == r.condition.label), None)
    # from the claims alone, the largest d is the one the last rung's result names
    where = in_these_settings(list(lad.curves) if lad else [], gain + helped)
    first = (
        f"As d grows {where}, the d = 16 answer {direction(r, helps)}: the depth gain's slope per doubling of d is "
        f"{quote(r, label='')}{', ' + r.note.strip('()') if r.note else ''}"
    )
    if helps is not None and helps.measured is not None:
        first += f", and at the largest d it is {quote(helps, label='')}"
    answer = [first + "."]
    more = []
    for cid, what in ((SINGLE, "The one-layer model against the single head as d grows"),
                      (EXPONENT, "The disagreement exponent as d grows")):  # fmt: skip
        rs = [x for x in results_of(results, cid) if x.verdict != "not run"]
        if (x := _same(rs, r.condition.label)) is not None:
            more.append(f"{what}: slope {quote(x, label='')} ({short_tally(rs)}).")
    if more:
        answer.append(" ".join(more))
    findings = tuple(
        Finding(title, sentence, FIGURES[q][0], (FIGURES[q][3],) + ((HELPS,) if q == "depth_gain" else ()))
        for q, (title, sentence) in FINDINGS.items()
    )
    return Story(answer=tuple(answer), findings=findings)


__all__ = ["FIGURES", "direction", "draw_quantity", "figures", "rungs_table", "sections", "story", "trends_table"]
