"""The template study's report pieces: one table, one figure and the story that places the figure
beside its finding.

CHANGE: ``sections(ev)`` returns the study's tables (``{"title", "columns", "rows"}``) and figures
(``{"name", "caption", "png", "why_missing"}``: a figure the study draws itself, a PNG from
``to_png``), each left out or explained when the sweep has no data for it; ``story(results, ev)``
returns the answer (three to five sentences, each with its number) and one finding per figure.
"""

from __future__ import annotations

from depthscale.derivations.study import (
    EASY_TASKS,
    Finding,
    Sections,
    Story,
    brief,
    results_of,
    select_curves,
    tally,
    to_png,
)
from depthscale.derivations.study import format_estimate as est

FIGURE = "template_loss"  # CHANGE: the figure's name (a finding refers to it)
CAPTION = (
    "Trained linear attention on the easy task: the loss R_L against depth L (seed mean, error bars: one "
    "standard error over seeds), log-log, one line per spectrum. Look at whether each line falls."
)


def table(ev) -> dict | None:
    """Per linear easy-task curve and depth: the seed-mean loss with its error and the seed count."""
    body = [
        [c.label, int(L), est(c.estimate(j).value, c.estimate(j).se), c.estimate(j).n]
        for c in select_curves(ev, "linear", EASY_TASKS)
        for j, L in enumerate(c.depths)
    ]
    if not body:
        return None
    return {"title": "Template study: loss against depth", "columns": ["curve", "L", "R_L", "seeds"], "rows": body}


def loss_figure(ev) -> dict:
    """R_L against depth, one line per curve (a figure of its own: never pyplot's, so a report does
    not touch a notebook's figures)."""
    entry: dict = {"name": FIGURE, "caption": CAPTION, "png": None, "why_missing": ""}
    cs = select_curves(ev, "linear", EASY_TASKS)
    if not cs:
        entry["why_missing"] = "no linear easy-task runs in this sweep"
        return entry
    from matplotlib.figure import Figure

    fig = Figure(figsize=(5.0, 3.6))
    ax = fig.add_subplot()
    for c in cs:
        ax.errorbar(c.depths, c.mean, yerr=c.error_bar, marker="o", capsize=3, label=c.label)
    ax.set(xscale="log", yscale="log", xlabel="depth L", ylabel="R_L")
    ax.legend(fontsize="small")
    fig.tight_layout()
    entry["png"] = to_png(fig)
    return entry


def sections(ev) -> Sections:
    """The table (left out without runs) and the figure (its entry says why when it has no data)."""
    t = table(ev)
    return Sections(tables=(t,) if t else (), figures=(loss_figure(ev),))


def story(results, ev) -> Story:
    """The answer from the decided claim, then the finding the figure shows."""
    deeper = results_of(results, "template-deeper-is-lower")
    if not deeper:
        return Story(answer=("No linear easy-task runs are in this store.",))
    answer = (
        f"The deepest model against the one-layer model, R_L - R_1 per spectrum ({tally(deeper)}): "
        + "; ".join(brief(r) for r in deeper)
        + ".",
    )
    finding = Finding(
        "Loss against depth",
        "R_L of each spectrum against depth, with the seeds' error bars.",
        FIGURE,
        ("template-deeper-is-lower",),
    )
    return Story(answer=answer, findings=(finding,))


__all__ = ["sections", "story", "table", "loss_figure"]
