"""The protocol study's report pieces: its table, the rows of its excess-over-plateau figure, and the
paper-curves study's depth law at training checkpoints and excess over the single head."""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, cast

import numpy as np

from ..analysis.curve import curves
from ..analysis.protocols import FLOOR_NAMES, task_label
from ..claims.protocol_study import rows
from ..formatting import format_estimate as est

if TYPE_CHECKING:
    from ...sims.records import RunRecord


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


def checkpoint_table(ev) -> dict | None:
    """The depth law at each training checkpoint: ``R_L = R_inf + c L^-alpha`` fitted to the losses the
    runs had after s steps (all depths, seed means), with the mean disagreement ``A_L - C_L``."""
    body = []
    for r in rows(ev):
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
    return {
        "title": "Depth law at training checkpoints: R_L = R_inf + c L^-alpha after s steps",
        "columns": ["protocol", "task", "step", "depths", "alpha", "R_inf", "R_1", "mean A_L - C_L"],
        "rows": body,
    }


def single_excess_rows(ev) -> list[dict]:
    """Per setting: ``R_L`` minus the best single temperature head (paired, seed-pooled) against L."""
    out = []
    for r in rows(ev):
        Ls = sorted(L for L in r.excess if "single" in r.excess[L])
        if Ls:
            out.append(
                {
                    "protocol": r.protocol.name,
                    "task": task_label(r.curve),
                    "depths": Ls,
                    "excess": [r.excess[L]["single"][0] for L in Ls],
                    "se": [r.excess[L]["single"][1] for L in Ls],
                }
            )
    return out
