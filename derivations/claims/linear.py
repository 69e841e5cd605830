"""Claims on linear attention: the easy-task exponent between zeta and 2 zeta, sequential mode learning, the floor."""

from __future__ import annotations

import numpy as np

from depthscale.derivations.analysis.curve import EASY_TASKS, Curve
from depthscale.derivations.claims import linear_optimum
from depthscale.derivations.claims.evidence import _select
from depthscale.derivations.claims.verdicts import ClaimResult, decide, not_run, unidentified
from depthscale.derivations.formatting import format_estimate as est
from depthscale.derivations.formatting import format_percent as pct
from depthscale.derivations.formatting import format_value as num

FLOOR_RTOL = 0.05
SATURATION_RTOL = 0.02
SEQUENTIAL_RHO = 0.7
PARALLEL_RHO = 0.5


# ---------------------------------------------------------------- claims on linear attention
def linear_exponent(ev):
    """Linear attention, easy task: the trained depth exponent lies between zeta and 2 zeta."""
    claim = "Linear easy-task exponent between zeta and 2 zeta"
    cs = _select(ev, "linear", EASY_TASKS)
    if not cs:
        return [
            not_run(
                "linear-exponent",
                "Linear attention, easy task: trained depth exponent lies between zeta and 2 zeta",
                "no linear easy-task runs in this sweep",
                "zeta <= alpha <= 2 zeta",
                "2 s.e.",
            )
        ]
    out = []
    for c in cs:
        cid = f"linear-exponent {c.label}"
        spec = c.spectrum
        fit = c.fit("power")
        if not spec.asymptotic:
            out.append(
                ClaimResult(
                    cid,
                    claim,
                    "needs a > 0, a + b > 1",
                    fit.params.get("alpha"),
                    None,
                    "2 s.e.",
                    "not run",
                    "law does not apply",
                )
            )
            continue
        z = spec.zeta
        band = (z, 2 * z)
        if fit.failure:
            out.append(ClaimResult(cid, claim, band, None, None, "2 s.e.", "not run", f"no fit: {fit.failure}"))
            continue
        a, se = fit.params["alpha"], fit.se["alpha"]
        detail = f"pure power-law fit over L={list(map(int, c.depths))}"
        # beside it, the fit with a floor: at finite P the loss levels off near a P-dependent floor,
        # which bends a pure power law at large L (diagnostic only: the claim is about L0 = 0)
        off = c.fit("offset")
        if off.identified:
            detail += (
                f"; with a floor L0 + c L^-alpha: alpha = {est(off.params['alpha'], off.se['alpha'])}, "
                f"L0 = {num(off.params['L0'])}"
            )
        elif not off.failure:
            detail += f"; with a floor L0 + c L^-alpha: not identified ({off.reason})"
        detail += linear_optimum.limit_note(ev, c)  # which limits the trained runs: the optimum or training
        why = unidentified({"c L^-alpha": fit})
        if why:
            v, det = "indicative", f"{detail}; {why}"
        else:
            s = 2 * se
            v, det = decide(band[0] - s <= a <= band[1] + s, [c], detail)
        out.append(ClaimResult(cid, claim, band, a, se, "2 s.e.", v, det))
    return out


def _mode_order(c: Curve):
    """Spearman correlation between mode index and the mode's loss at the deepest depth relative to the shallowest."""
    from scipy.stats import spearmanr

    lo = [r.get("mode_losses") for r in c.records_at(int(c.depths[0]))]
    hi = [r.get("mode_losses") for r in c.records_at(int(c.depths[-1]))]
    if not lo or not hi or any(m is None for m in lo + hi) or len(c.depths) < 2:
        return None
    ratio = np.mean(hi, axis=0) / np.maximum(np.mean(lo, axis=0), 1e-300)
    if np.ptp(ratio) == 0:  # every mode changed alike: no ordering to measure
        return None
    return float(spearmanr(np.arange(len(ratio)), ratio).statistic)


def mode_learning(ev):
    """Linear attention learns spectral modes one after another with depth, softmax in parallel."""
    out = []
    for model, tasks, want, name in (
        ("linear", EASY_TASKS, "sequential", "linear-sequential-modes"),
        ("softmax", ("topk",), "parallel", "softmax-parallel-modes"),
    ):
        cs = [c for c in _select(ev, model, tasks) if len(c.depths) >= 2]
        statement = f"{model.capitalize()} attention learns spectral modes {want}ly with depth"
        sequential = want == "sequential"
        crit = f"Spearman(k, mode loss ratio) {'>=' if sequential else '<='} {SEQUENTIAL_RHO if sequential else PARALLEL_RHO}"
        rhos = [(c, _mode_order(c)) for c in cs]
        rhos = [(c, r) for c, r in rhos if r is not None and np.isfinite(r)]
        if not rhos:
            out.append(not_run(name, statement, f"no {model} runs with mode losses at two or more depths", want, crit))
            continue
        for c, rho in rhos:
            ok = rho >= SEQUENTIAL_RHO if sequential else rho <= PARALLEL_RHO
            v, det = decide(
                ok, [c], f"Spearman rho of the loss ratio L={int(c.depths[-1])} vs L={int(c.depths[0])} per mode"
            )
            out.append(ClaimResult(f"{name} {c.label}", statement, want, rho, None, crit, v, det))
    return out


def linear_floor(ev):
    """Linear attention on the difficult task: the deep loss equals the floor T - h^T G^+ h and saturates.

    The floor compared is that of the model's own class at its context length: polynomials in the
    context covariance S = X^T X / P. The paper's population floor (features Sigma^r q, its
    P -> infinity limit) is stated beside it.
    """
    claim = "Linear floor on the difficult task equals T - h^T G^+ h of polynomials in S = X^T X / P"
    tol = f"{FLOOR_RTOL:.0%} + 2 s.e."
    cs = _select(ev, "linear", ("topk",))
    if not cs:
        return [not_run("linear-floor", claim, "no linear top-k runs", "T - h^T G^+ h", tol)]
    out = []
    for c in cs:
        key = (c.a, c.b, c.k, c.d, c.P)
        th = ev.theory.get("floor_context", {}).get(key)
        j = int(np.nanargmax(c.depths))
        m, se = c.mean[j], c.se[j]
        if th is None:
            out.append(
                ClaimResult(
                    f"linear-floor {c.label}",
                    claim,
                    "not computed",
                    m,
                    se,
                    "",
                    "not run",
                    "theory floor not computed for this scale",
                )
            )
            continue
        val, tse = th
        bound = FLOOR_RTOL * val + 2 * np.sqrt(tse**2 + (se if np.isfinite(se) else 0) ** 2)
        pop = ev.theory.get("floor", {}).get(key)
        beside = f"; population floor {num(pop[0])}, trained {pct((m - pop[0]) / pop[0])} from it" if pop else ""
        v, det = decide(
            abs(m - val) <= bound,
            [c],
            f"deepest run L={int(c.depths[j])}; relative difference {pct((m - val) / val)}{beside}",
        )
        out.append(ClaimResult(f"linear-floor {c.label}", claim, val, m, se, tol, v, det, expected_error=tse))
        # saturation: little left to gain between L_max/4 (or the previous depth) and L_max
        i = max(int(np.searchsorted(c.depths, c.depths[j] / 4)), 0)
        if i < j:
            rel = (c.mean[i] - m) / c.mean[i]
            v, det = decide(
                rel <= SATURATION_RTOL, [c], f"relative loss change from L={int(c.depths[i])} to L={int(c.depths[j])}"
            )
            out.append(
                ClaimResult(
                    f"linear-saturation {c.label}",
                    "Linear attention saturates on the difficult task",
                    "no gain with depth",
                    rel,
                    None,
                    f"<= {SATURATION_RTOL}",
                    v,
                    det,
                )
            )
    return out
