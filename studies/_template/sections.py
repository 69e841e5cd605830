"""The template study's report pieces: one table, one figure and the story that places the figure
beside its finding.

CHANGE: ``sections(ev)`` returns the study's tables (``Table`` records) and figures (``FigureEntry``
records: a name, a drawing function the report calls once, a caption and what to look at), a table
left out and a figure's drawing raising ``NoFigure`` (saying why) when the sweep has no data for it;
``story(results, ev)`` returns the answer (its first sentence answers the question with the tally
behind it and says "in these settings"; under about 120 words) and one finding per figure.
"""

from __future__ import annotations

from functools import partial

from depthscale.derivations.study import (
    EASY_TASKS,
    FigureEntry,
    Finding,
    NoFigure,
    Sections,
    Story,
    Table,
    answer_word,
    depth_axis,
    in_these_settings,
    inverse_depth_guide,
    legend_below,
    new_figure,
    quote,
    results_of,
    select_curves,
    strongest,
    verdict_phrase,
)
from depthscale.derivations.study import format_estimate as est

FIGURE = "template_loss"  # CHANGE: the figure's name (a finding refers to it)
CAPTION = (
    "Trained linear attention on the easy task: the loss R_L against depth L (seed mean, error bars: one "
    "standard error over seeds), log-log, one colour per spectrum; dotted: R_inf + c/L through each "
    "curve's first and last points."
)
LOOK_AT = "Look at whether each line falls, and how it bends against its dotted 1/L guide."  # CHANGE


def table(ev) -> Table | None:
    """Per linear easy-task curve and depth: the seed-mean loss with its error and the seed count."""
    body = [
        [c.label, int(L), est(c.estimate(j).value, c.estimate(j).se), c.estimate(j).n]
        for c in select_curves(ev, "linear", EASY_TASKS)
        for j, L in enumerate(c.depths)
    ]
    if not body:
        return None
    return Table("Template study: loss against depth", ["curve", "L", "R_L", "seeds"], body)


def draw_loss(cs):
    """R_L against depth, one line per curve, with its 1/L guide (a figure of its own from ``new_figure``,
    never pyplot's, so a report does not touch a notebook's figures)."""
    if not cs:
        raise NoFigure("no linear easy-task runs in this sweep")
    fig, axes = new_figure(6.4, 4.2)
    ax = axes[0, 0]
    ax.set_yscale("log")
    for i, c in enumerate(cs):
        ax.errorbar(c.depths, c.mean, yerr=c.error_bar, marker="o", ms=4, capsize=3, color=f"C{i}", label=c.label)
        inverse_depth_guide(ax, c.depths, c.mean, f"C{i}")
    depth_axis(ax, [int(L) for c in cs for L in c.depths])
    ax.set_ylabel("loss R_L")
    legend_below(fig)  # under the panel: a legend never covers the data
    return fig


def loss_figure(ev) -> FigureEntry:
    """The figure's record: drawn later, once, by the report."""
    return FigureEntry(FIGURE, partial(draw_loss, select_curves(ev, "linear", EASY_TASKS)), CAPTION, LOOK_AT)


def sections(ev) -> Sections:
    """The table (left out without runs) and the figure (its drawing says why when it has no data)."""
    t = table(ev)
    return Sections(tables=(t,) if t else (), figures=(loss_figure(ev),))


def story(results, ev) -> Story:
    """The answer to the study's question in its first sentence: yes, no or partly with the tally of
    the verdicts behind it, in the settings of its curves, then the clearest pass and fail with their
    numbers (the claims table lists every condition); then the finding the figure shows."""
    deeper = results_of(results, "template-deeper-is-lower")
    if not deeper:
        return Story(answer=("No linear easy-task runs are in this store.",))
    where = in_these_settings(select_curves(ev, "linear", EASY_TASKS), deeper)
    tally = verdict_phrase(deeper, "spectra")
    first = f"{answer_word(deeper)}: {where}, whether the deepest model beats the one-layer model {tally}"
    shown = [f"clearest {v}, {quote(r, 'R_L - R_1')}" for v in ("pass", "fail") if (r := strongest(deeper, v))]
    answer = (first + (f"; {'; '.join(shown)}." if shown else "."),)
    finding = Finding(
        "Loss against depth",
        "R_L of each spectrum against depth, with the seeds' error bars.",
        FIGURE,
        ("template-deeper-is-lower",),
    )
    return Story(answer=answer, findings=(finding,))


__all__ = ["sections", "story", "table", "loss_figure"]
