"""The protocol study's report pieces: its table and its excess-over-plateau figure (:func:`sections`)."""

from __future__ import annotations

from depthscale.derivations.study import (
    Finding,
    Sections,
    Story,
    Table,
    brief,
    figure_entry,
    protocol_rows,
    results_of,
    tally,
    task_label,
)
from depthscale.derivations.study import format_estimate as est
from depthscale.sims.reference_floors import FLOOR_NAMES

CAPTION = (
    "Protocol study: the excess R_L - R_inf over each curve's fitted plateau against depth, log-log, one "
    "panel per task, one colour per training protocol; dotted: c/L through each curve's first point, the "
    "excess of R_inf + c/L with the fitted R_inf (docs/studies/protocols.md)."
)
LOOK_AT = "Look at whether any protocol's points run parallel to its dotted 1/L guide; flattening means no 1/L law."


# ------------------------------------------------------------------------------------------------ report pieces
def table(ev) -> Table | None:
    """The study's table: per protocol and task, (alpha, R_inf, c) with errors, the floors and diagnostics."""
    rs = protocol_rows(ev)
    if not rs:
        return None
    body = []
    for r in rs:
        f = r.fit
        ok = r.identified
        body.append(
            [
                r.protocol.name,
                task_label(r.curve),
                est(f.params["alpha"], f.se["alpha"]) if ok else "not identified",
                est(f.params["L0"], f.se["L0"]) if ok else "not identified",
                est(f.params["c"], f.se["c"]) if ok else "not identified",
                *(est(*r.floors[n]) if n in r.floors else "—" for n in FLOOR_NAMES),
                r.r1,
                r.layer_loss,
                r.disagreement,
                r.similarity,
            ]
        )
    return Table(
        "Protocol study: R_L = R_inf + c L^-alpha per training protocol, reference floors and diagnostics",
        [
            "protocol",
            "task",
            "alpha",
            "R_inf",
            "c",
            "single floor",
            "convex floor",
            "mixture floor",
            "R_1",
            "mean A_L",
            "mean A_L - C_L",
            "q-k similarity (deepest)",
        ],
        body,
    )


def figure_rows(ev) -> list[dict]:
    """Per curve: depths, excess R_L - R_inf (fitted) with seed errors, for the log-log figure."""
    out = []
    for r in protocol_rows(ev):
        if not r.identified:
            continue
        c = r.curve
        out.append(
            {
                "series": r.protocol.name,
                "task": task_label(c),
                "depths": c.depths.tolist(),
                "excess": (c.mean - r.fit.params["L0"]).tolist(),
                "se": c.error_bar.tolist(),
                "alpha": r.fit.params["alpha"],
            }
        )
    return out


def sections(ev) -> Sections:
    """The study's table and figure (none when the evidence holds no study curve)."""
    t = table(ev)
    if t is None:
        return Sections()
    fig = figure_entry("excess_vs_depth", figure_rows(ev), name="protocol_excess", caption=CAPTION, look_at=LOOK_AT)
    return Sections(tables=(t,), figures=(fig,))


def story(results, ev) -> Story:
    """The answer from the decided claims: inverse depth per protocol, the disagreement's growth, the
    convex floor and the reference floor approached, each with its numbers."""
    inv = results_of(results, "protocol-inverse-depth")
    if not inv:
        return Story(answer=("No protocol-study run is in this store.",))
    passes = [r for r in inv if r.verdict == "pass"]
    answer = [
        "R_L - R_inf falls as L^-alpha with alpha in [0.8, 1.2] "
        + (
            f"under {len(passes)} protocol-task pair(s) ({'; '.join(brief(r) for r in passes[:3])})"
            if passes
            else "under no protocol"
        )
        + f" of {len(inv)} tested ({tally(inv)})."
    ]
    if dis := [r for r in results_of(results, "protocol-disagreement") if r.measured is not None]:
        growth = [1 - r.measured for r in dis]
        answer.append(
            f"The layers' disagreement A_L - C_L grows with depth as L^{min(growth):.2f} to L^{max(growth):.2f} "
            f"over {len(dis)} curves ({tally(dis)} for 'flat'), where the central-limit mechanism needs it flat."
        )
    if beats := results_of(results, "protocol-beats-convex"):
        answer.append(f"At L >= 32 the trained model beats the convex temperature floor: {tally(beats)} (paired).")
    if cos := results_of(results, "protocol-cosine-not-inverse"):
        answer.append(f"Cosine-decayed training is not inverse depth: {'; '.join(brief(r) for r in cos[:3])}.")
    findings = (
        Finding(
            "Excess over the plateau against depth",
            "R_L - R_inf per protocol and task, log-log, with L^-1 guides: inverse depth would run parallel to them.",
            "protocol_excess",
            ("protocol-inverse-depth", "protocol-cosine-not-inverse", "protocol-disagreement"),
        ),
    )
    return Story(answer=tuple(answer[:5]), findings=findings)
