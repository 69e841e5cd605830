"""The protocol study's report pieces: its table and its excess-over-plateau figure (:func:`sections`)."""

from __future__ import annotations

from collections import Counter

from depthscale.derivations.study import (
    Finding,
    Sections,
    Story,
    Table,
    answer_word,
    figure_entry,
    in_these_settings,
    number_word,
    protocol_curves,
    protocol_rows,
    quote,
    results_of,
    short_label,
    short_tally,
    strongest,
    task_label,
    verdict_phrase,
)
from depthscale.derivations.study import format_estimate as est
from depthscale.sims.reference_floors import FLOOR_NAMES

DECOMPOSITION_CAPTION = (
    "The exact decomposition R_L = C_L + (A_L - C_L)/L of every protocol curve: the shared error C_L and the "
    "layers' disagreement A_L - C_L against depth, one colour per curve."
)
DECOMPOSITION_LOOK_AT = "Look at whether the disagreement A_L - C_L stays flat with depth, as the 1/L law needs."

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
    # the mechanism's own picture: whether the layers' disagreement stays flat, curve by curve
    records = [r for _, c in protocol_curves(ev.curves) for L in c.depths for r in c.records_at(int(L))]
    decomposition = figure_entry(
        "decomposition",
        records,
        name="protocol_decomposition",
        caption=DECOMPOSITION_CAPTION,
        look_at=DECOMPOSITION_LOOK_AT,
    )
    return Sections(tables=(t,), figures=(fig, decomposition))


def story(results, ev) -> Story:
    """The answer from the decided claims: whether any protocol gives inverse depth (the tally over its
    protocol-task curves, in the study's settings, with the clearest pass and fail), then the premise
    behind it, the layers' disagreement, by its tally and clearest result."""
    inv = results_of(results, "protocol-inverse-depth")
    if not inv:
        return Story(answer=("No protocol-study run is in this store.",))
    rows = protocol_curves(ev.curves)
    names = list(dict.fromkeys(p.name for p, _ in rows))
    protocols = f"{number_word(len(names))} protocols ({', '.join(names)})" if names else ""
    where = in_these_settings([c for _, c in rows], inv, training=False, more=protocols)
    lo, hi = inv[0].expected
    passing = list(dict.fromkeys(short_label(r) for r in inv if r.verdict == "pass"))
    first = (
        f"{answer_word(inv)}: {where}, inverse depth (alpha in [{lo:g}, {hi:g}]) "
        f"{verdict_phrase(inv, 'protocol-task curves')}" + (f"; it holds under {', '.join(passing)}" if passing else "")
    )
    shown = [f"clearest {v}, {quote(r, 'alpha')}" for v in ("pass", "fail") if (r := strongest(inv, v)) is not None]
    answer = [first + (f"; {'; '.join(shown)}." if shown else ".")]
    if dis := results_of(results, "protocol-disagreement"):
        text = (
            "Does the disagreement term (A_L - C_L)/L fall as 1/L, as the central-limit mechanism needs? "
            + short_tally(dis)
        )
        c = Counter(r.verdict for r in dis)
        if r := strongest(dis, "fail" if c["fail"] > c["pass"] else "pass"):
            text += f"; clearest, {quote(r, 'alpha')}"
        answer.append(text + ".")
    findings = (
        Finding(
            "Excess over the plateau against depth",
            "R_L - R_inf per protocol and task, log-log, with L^-1 guides: inverse depth would run parallel to them.",
            "protocol_excess",
            ("protocol-inverse-depth", "protocol-cosine-not-inverse", "protocol-disagreement"),
        ),
    )
    return Story(answer=tuple(answer[:5]), findings=findings)
