"""Claims that check the measurement itself: the exact ensemble identity, null controls and temperature-only baselines."""

from __future__ import annotations

import numpy as np

from depthscale.derivations.claims.evidence import _select
from depthscale.derivations.claims.verdicts import ClaimResult, decide, not_run
from depthscale.derivations.formatting import format_estimate as est

IDENTITY_TOL = 1e-10
CONTROL_GAIN_MAX = 0.01


def identity(ev):
    """The exact ensemble identity R_L = C_L + (A_L - C_L)/L on evaluation data."""
    res = [
        r.get("identity_residual") for c in ev.curves for r in c.runs.values() if r.get("identity_residual") is not None
    ]
    res = [x for x in res if np.isfinite(x)]
    statement = "R_L = C_L + (A_L - C_L)/L holds exactly on evaluation data"
    tol = f"<= {IDENTITY_TOL:g}"
    if not res:
        return [not_run("clt-identity", statement, "no runs with L >= 2", 0.0, tol)]
    worst = max(res)
    return [
        ClaimResult(
            "clt-identity",
            statement,
            0.0,
            worst,
            None,
            tol,
            "pass" if worst <= IDENTITY_TOL else "fail",
            f"largest relative residual over {len(res)} runs",
        )
    ]


def controls(ev):
    """Controls without layer diversity (tied layers, temperature-only) gain nothing from depth."""
    statement = "Controls without layer diversity (tied layers, temperature-only) show no inverse-depth gain"
    tol = f"<= {CONTROL_GAIN_MAX}"
    cs = [
        c
        for c in ev.curves
        if c.model == "softmax" and c.task == "topk" and c.variant in ("tied", "temperature") and len(c.depths) >= 2
    ]
    if not cs:
        return [not_run("controls-no-depth-gain", statement, "no control runs", "no gain", tol)]
    out = []
    for c in cs:
        gain = (c.mean[0] - c.mean[-1]) / c.mean[0]
        v, det = decide(
            gain <= CONTROL_GAIN_MAX, [c], f"relative loss decrease from L={int(c.depths[0])} to L={int(c.depths[-1])}"
        )
        out.append(ClaimResult(f"controls-no-depth-gain {c.label}", statement, "no gain", gain, None, tol, v, det))
    return out


def baselines(ev):
    """The deepest model beats the best single temperature head (and, to matter, the best two-temperature mixture)."""
    out = []
    for c in _select(ev, "softmax", ("topk",)):
        for name, what in (("single", "best single temperature-only head"), ("pair", "best two-temperature mixture")):
            b = c.baseline(name)
            if b is None:
                continue
            ok = b.diff < -2 * b.diff_se
            regime = (
                "depth beats it"
                if ok
                else ("no better than it" if -2 * b.diff_se < b.diff < 2 * b.diff_se else "worse than it")
            )
            v, det = decide(
                ok,
                [c],
                f"paired difference R_L - baseline = {est(b.diff, b.diff_se)} at L={b.depth} "
                f"(same evaluation contexts); {regime}",
            )
            # expected column: the baseline's loss (the reference); measured: the deepest model's loss
            out.append(
                ClaimResult(
                    f"depth-beats-{name} {c.label}",
                    f"The deepest trained model beats the {what}",
                    b.loss,
                    b.loss + b.diff,
                    None,
                    "R_L - baseline < -2 paired s.e.",
                    v,
                    det,
                )
            )
    return out or [
        not_run(
            "depth-beats-baselines",
            "Depth beats the best single temperature head and two-temperature mixture",
            "no softmax top-k runs with baselines",
        )
    ]
