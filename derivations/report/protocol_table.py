"""The protocol study's report pieces: its table and the rows of its excess-over-plateau figure."""

from __future__ import annotations

from depthscale.derivations.analysis.protocols import FLOOR_NAMES, task_label
from depthscale.derivations.claims.protocol_study import rows
from depthscale.derivations.formatting import format_estimate as est


# ------------------------------------------------------------------------------------------------ report pieces
def table(ev) -> dict | None:
    """The study's table: per protocol and task, (alpha, R_inf, c) with errors, the floors and diagnostics."""
    rs = rows(ev)
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
    return {
        "title": "Protocol study: R_L = R_inf + c L^-alpha per training protocol, reference floors and diagnostics",
        "columns": [
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
        "rows": body,
    }


def figure_rows(ev) -> list[dict]:
    """Per curve: depths, excess R_L - R_inf (fitted) with seed errors, for the log-log figure."""
    out = []
    for r in rows(ev):
        if not r.identified:
            continue
        c = r.curve
        out.append(
            {
                "protocol": r.protocol.name,
                "task": task_label(c),
                "depths": c.depths.tolist(),
                "excess": (c.mean - r.fit.params["L0"]).tolist(),
                "se": c.error_bar.tolist(),
                "alpha": r.fit.params["alpha"],
            }
        )
    return out
