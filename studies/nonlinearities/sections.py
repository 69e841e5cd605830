"""The nonlinearity study's report pieces: its two figures, its table and its story (the answer first)."""

from __future__ import annotations

from collections import Counter, defaultdict
from functools import partial

from matplotlib.lines import Line2D

from depthscale.derivations.study import (
    FigureEntry,
    Finding,
    NoFigure,
    Sections,
    Story,
    Table,
    answer_word,
    in_these_settings,
    inverse_depth_guide,
    legend_below,
    panel_grid,
    plain_log_ticks,
    quote,
    results_of,
    short_tally,
    strongest,
    verdict_phrase,
)
from depthscale.derivations.study import format_estimate as est
from depthscale.sims.attention_maps import ATTENTIONS

from .theory import DEEP, FLOOR_NAMES, rows, study_curves

FLOOR_COLUMNS = ("single", "convex", "signed mixture")
COLOURS = dict(zip(ATTENTIONS, ("black", "tab:blue", "tab:green", "tab:orange", "tab:red")))
OTHER_COLOUR = "tab:purple"  # a user's map


def _colour(r) -> str:
    """The row's colour: its map's (a user's map: one other colour; the engine is in the label)."""
    return COLOURS.get(r.map, OTHER_COLOUR)


LOSS_CAPTION = (
    "R_L against depth under the cosine protocol, one panel per task, one colour per nonlinearity (seed "
    "mean, error bars over seeds); the dashed line of the same colour is that nonlinearity's convex "
    "floor, the best non-negative mixture of its temperature heads; the dotted line is R_inf + c/L "
    "through the curve's first and last points."
)
LOSS_LOOK = "Look at whether any line follows its dotted 1/L guide, and where each ends against its own dashed floor."
SHARED_CAPTION = (
    "The two terms of R_L = C_L + (A_L - C_L)/L under the cosine protocol, one row per task: left the "
    "shared error C_L, right the layers' disagreement A_L - C_L (log scale), one colour per nonlinearity."
)
SHARED_LOOK = "Look at the slopes in the right-hand panels: the central-limit mechanism needs them flat."


def _by_task(ev):
    """The cosine-protocol rows by task, top-2 tasks first (the order of the study's page)."""
    out = defaultdict(list)
    for r in rows(ev):
        if r.protocol == "cosine":
            out[(r.curve.key.k, r.curve.key.a, r.task)].append(r)
    return {key[-1]: rs for key, rs in sorted(out.items())}


def _log_axes(ax, log_y: bool) -> None:
    """Depth on a log-2 axis labelled 1, 2, 4, ...; a log y axis labelled with plain numbers."""
    ax.set_xscale("log", base=2)
    plain_log_ticks(ax.xaxis, integers=True)
    if log_y:
        ax.set_yscale("log")
        plain_log_ticks(ax.yaxis)


def _task_title(task: str, rs) -> str:
    """A panel's title: the task and the maps it holds (not one map's name)."""
    return f"{task}: {len(rs)} map{'s' if len(rs) > 1 else ''}"


def draw_loss(tasks: dict):
    """``R_L`` against L per task (two panels to a row), one colour per nonlinearity, its own convex
    floor dashed, a dotted 1/L guide through each curve's first and last points."""
    if not tasks:
        raise NoFigure("no cosine-protocol runs of the study")
    fig, axes = panel_grid(len(tasks), 3.8, 3.1)
    for ax, (task, rs) in zip(axes, tasks.items()):
        _log_axes(ax, log_y=True)
        for r in rs:
            c, col = r.curve, _colour(r)
            ax.errorbar(c.depths, c.mean, yerr=c.error_bar, color=col, marker="o", ms=3, lw=1.2, label=r.attention)
            inverse_depth_guide(ax, c.depths, c.mean, col)
            if "convex" in r.floors:
                ax.axhline(r.floors["convex"][0], color=col, ls="--", lw=0.8)
        plain_log_ticks(ax.yaxis)
        ax.set_title(_task_title(task, rs), fontsize=9)
        ax.set_xlabel("depth L")
        ax.set_ylabel("test loss R_L")
    legend_below(fig, extra=[(Line2D([], [], ls="--", lw=0.8, color="0.3"), "own convex floor (dashed)")])
    return fig


def draw_terms(tasks: dict):
    """``C_L`` (left) and ``A_L - C_L`` (right) against L, one row per task, one colour per nonlinearity."""
    if not tasks:
        raise NoFigure("no cosine-protocol runs of the study")
    fig, axes = panel_grid(2 * len(tasks), 3.8, 2.7)
    for j, (task, rs) in enumerate(tasks.items()):
        left, right = axes[2 * j], axes[2 * j + 1]
        _log_axes(left, log_y=False)
        _log_axes(right, log_y=True)
        for r in rs:
            c, col = r.curve, _colour(r)
            keep = c.depths >= 2
            left.plot(c.depths[keep], c.field_mean("C_L")[keep], color=col, marker="o", ms=3, label=r.attention)
            gap = c.field_mean("gap")[keep]
            pos = gap > 0
            right.plot(c.depths[keep][pos], gap[pos], color=col, marker="o", ms=3, label=r.attention)
        plain_log_ticks(right.yaxis)
        left.set_title(f"{task}: shared error", fontsize=9)
        right.set_title(f"{task}: disagreement", fontsize=9)
        left.set_ylabel("C_L")
        right.set_ylabel("A_L - C_L")
        for ax in (left, right):
            ax.set_xlabel("depth L")
    legend_below(fig)
    return fig


def loss_figure(ev) -> FigureEntry:
    """``R_L`` against L per task, one line per nonlinearity, its own convex floor dashed."""
    return FigureEntry("nonlinearities_loss", partial(draw_loss, _by_task(ev)), LOSS_CAPTION, LOSS_LOOK)


def shared_figure(ev) -> FigureEntry:
    """``C_L`` and ``A_L - C_L`` against L per task, one line per nonlinearity."""
    return FigureEntry("nonlinearities_terms", partial(draw_terms, _by_task(ev)), SHARED_CAPTION, SHARED_LOOK)


def table(ev) -> Table | None:
    """Per nonlinearity, protocol and task: alpha, R_1, R_deepest, C_deepest, its floors."""
    rs = rows(ev)
    if not rs:
        return None
    body = []
    for r in rs:
        c, f = r.curve, r.fit
        ok = not f.failure and f.identified
        deep = int(c.depths[-1])
        body.append(
            [
                r.attention,
                r.protocol,
                r.task,
                est(f.params["alpha"], f.se["alpha"]) if ok else "not identified",
                f"{c.mean[0]:.4g}" if c.depths[0] == 1 else "—",
                f"{c.mean[-1]:.4g} (L = {deep})",
                f"{c.field_mean('C_L')[-1]:.4g}",
                *(est(*r.floors[n]) if n in r.floors else "—" for n in FLOOR_NAMES),
            ]
        )
    return Table(
        "Nonlinearity study: fit, losses and each nonlinearity's own reference floors",
        ["attention", "protocol", "task", "alpha", "R_1", "R_deepest", "C_deepest", *FLOOR_COLUMNS],
        body,
    )


def sections(ev) -> Sections:
    t = table(ev)
    return Sections(tables=(t,) if t else (), figures=(loss_figure(ev), shared_figure(ev)))


def story(results, ev) -> Story:
    """The answer from the decided claims: whether any nonlinearity gives inverse depth (the tally over
    every curve, in the study's settings), its clearest fail and best candidate, then whether a sparse
    map lowers the shared error and whether depth gains more than under softmax, each by its
    clearest result. The claims table lists every comparison."""
    inv = results_of(results, "nonlin-inverse-depth")
    if not inv:
        return Story(answer=("No run of the nonlinearity study is in this store yet.",))
    where = in_these_settings([c for _, _, c in study_curves(ev.curves)], inv)
    passing = list(dict.fromkeys(r.condition.variant for r in inv if r.verdict == "pass"))
    lo, hi = inv[0].expected
    first = (
        f"{answer_word(inv)}: {where}, inverse depth (alpha in [{lo:g}, {hi:g}]) "
        f"{verdict_phrase(inv, 'curves')}" + (f"; it holds under {', '.join(passing)}" if passing else "") + "."
    )
    undecided = [r for r in inv if r.verdict == "indicative"]
    if unfitted := sum(r.measured is None for r in undecided):
        first = first[:-1] + f"; {unfitted} of the {len(undecided)} undecided have no identified fit."
    shown = []
    if (best := strongest(inv, "pass")) is not None:
        shown.append(f"clearest pass, {quote(best, 'alpha')}")
    if (worst := strongest(inv, "fail")) is not None:
        shown.append(f"clearest fail, {quote(worst, 'alpha')}")
    if shown:
        text = "; ".join(shown)
        first += f" {text[0].upper()}{text[1:]}."
    answer = [first]
    why = []
    for cid, question in (
        ("nonlin-sparse-shared-error", f"Does a sparse map lower the shared error C_{DEEP} below softmax's?"),
        ("nonlin-depth-gains-more", f"Does depth gain more (R_1 - R_{DEEP}) than under softmax?"),
    ):
        if rs := results_of(results, cid):
            text = f"{question} {short_tally(rs)}"
            c = Counter(r.verdict for r in rs)  # the clearest result of the more frequent decided verdict
            if r := strongest(rs, "fail" if c["fail"] > c["pass"] else "pass"):
                text += f"; clearest, {quote(r)}"
            why.append(text + ".")
    if why:
        answer.append(" ".join(why))
    findings = (
        Finding(
            "Loss against depth, per nonlinearity",
            "Each nonlinearity's R_L against L and its own convex floor.",
            "nonlinearities_loss",
            ("nonlin-inverse-depth", "nonlin-beats-convex", "nonlin-signed-floor"),
        ),
        Finding(
            "Shared error and disagreement",
            "The two terms of the central-limit decomposition per nonlinearity.",
            "nonlinearities_terms",
            ("nonlin-disagreement", "nonlin-sparse-shared-error"),
        ),
    )
    return Story(answer=tuple(answer), findings=findings)
