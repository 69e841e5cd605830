"""Claims on linear attention: the easy-task exponent between zeta and 2 zeta, sequential mode learning, the floor."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from depthscale.derivations.study import (
    EASY_TASKS,
    Claim,
    ClaimResult,
    Curve,
    Estimate,
    below_zero,
    claim,
    decision_p,
    evaluated_with,
    in_range,
    optimum_limit_note,
    select_curves,
    within,
)
from depthscale.derivations.study import format_estimate as est
from depthscale.derivations.study import format_percent as pct
from depthscale.derivations.study import format_value as num

from .theory import numbers

FLOOR_RTOL = 0.05
SATURATION_RTOL = 0.02
SEQUENTIAL_RHO = 0.7
PARALLEL_RHO = 0.5


# ---------------------------------------------------------------- claims on linear attention


@claim(
    "linear-exponent",
    tolerance="t-test, 95 %",
    expected="zeta <= alpha <= 2 zeta",
    missing="no linear easy-task runs in this sweep",
    family="linear",
)
def linear_exponent(claim: Claim, ev) -> list[ClaimResult]:
    """Linear easy-task exponent between zeta and 2 zeta"""
    out = []
    for c in select_curves(ev, "linear", EASY_TASKS):
        spec = c.spectrum
        fit = c.fit("power")
        if not spec.asymptotic:
            out.append(claim.not_run("law does not apply", c.label, "needs a > 0, a + b > 1", fit.params.get("alpha")))
            continue
        z = spec.zeta
        band = (z, 2 * z)
        no_fit = f"no fit: {fit.failure}" if fit.failure else ""
        if unusable := claim.without_fit(c.label, band, {"c L^-alpha": fit}, no_fit):
            unusable = _with_detail(unusable, c, ev)
            out.append(unusable)
            continue
        a = Estimate.from_fit(fit, "alpha")  # the interval rule: the whole 95 % interval inside [zeta, 2 zeta]
        out.append(claim.decided(c.label, in_range(a, *band), [c], _exponent_detail(c, ev), band, a, None))
    return out


def _exponent_detail(c: Curve, ev) -> str:
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
    return detail + optimum_limit_note(ev, c)  # which limits the trained runs: the optimum or training


def _with_detail(r: ClaimResult, c: Curve, ev) -> ClaimResult:
    """An unidentified pure power law still shows the diagnostics (the fit with a floor, the optimum)."""
    if r.verdict != "indicative":
        return r
    return replace(r, reason=f"{_exponent_detail(c, ev)}; {r.reason}")


def _mode_order(c: Curve) -> list[float]:
    """Per seed, the Spearman correlation between mode index and the mode's loss at the deepest depth
    relative to the shallowest (seeds with mode losses at both; a seed whose modes all changed alike
    has no ordering and is left out)."""
    from scipy.stats import spearmanr

    lo_L, hi_L = int(c.depths[0]), int(c.depths[-1])
    rhos = []
    for s in c.seeds:
        lo, hi = (r.get("mode_losses") if (r := c.runs.get((L, s))) is not None else None for L in (lo_L, hi_L))
        if lo is None or hi is None or lo_L == hi_L:
            continue
        ratio = np.asarray(hi, dtype=float) / np.maximum(np.asarray(lo, dtype=float), 1e-300)
        if np.ptp(ratio) > 0:
            rhos.append(float(spearmanr(np.arange(len(ratio)), ratio).statistic))
    return rhos


def _modes(claim: Claim, ev, model: str, tasks, op: str, rho_bound: float) -> list[ClaimResult]:
    """Mode-learning order of each curve with mode losses at two or more depths: the mean of the
    seeds' own rank correlations, tested against ``op rho_bound`` by the interval rule (one seed:
    no error, decides nothing)."""
    out = []
    band = (rho_bound, 1.0) if op == ">=" else (-1.0, rho_bound)
    for c in (c for c in select_curves(ev, model, tasks) if len(c.depths) >= 2):
        rhos = _mode_order(c)
        if not rhos:
            continue
        det = f"Spearman rho of the loss ratio L={int(c.depths[-1])} vs L={int(c.depths[0])} per mode, per seed"
        if len(rhos) < 2:
            out.append(claim.decided(c.label, None, [c], det + "; one seed: no error", claim.expected, rhos[0], None))
            continue
        e = Estimate.from_seeds(rhos)
        out.append(claim.decided(c.label, in_range(e, *band), [c], det, claim.expected, e, None, band=band))
    return out


# one evaluation, one claim per model: linear attention learns the modes one after another with
# depth, softmax attention in parallel
linear_sequential_modes, softmax_parallel_modes = (
    claim(
        f"{model}-{order}-modes",
        f"{model.capitalize()} attention learns spectral modes {order}ly with depth",
        tolerance=f"Spearman(k, mode loss ratio) {op} {rho_bound}",
        expected=order,
        missing=f"no {model} runs with mode losses at two or more depths",
        family="linear",
    )(evaluated_with(_modes, f"{model}_{order}_modes", model=model, tasks=tasks, op=op, rho_bound=rho_bound))
    for model, order, tasks, op, rho_bound in (
        ("linear", "sequential", EASY_TASKS, ">=", SEQUENTIAL_RHO),
        ("softmax", "parallel", ("topk",), "<=", PARALLEL_RHO),
    )
)


@claim(
    "linear-floor",
    tolerance=f"{FLOOR_RTOL:.0%}, t-test",
    expected="T - h^T G^+ h",
    missing="no linear top-k runs",
    family="linear",
)
def linear_floor(claim: Claim, ev) -> list[ClaimResult]:
    """Linear floor on the difficult task equals T - h^T G^+ h of polynomials in S = X^T X / P

    The floor compared is that of the model's own class at its context length: polynomials in the
    context covariance S = X^T X / P. The paper's population floor (features Sigma^r q, its
    P -> infinity limit) is stated beside it.
    """
    out = []
    for c in select_curves(ev, "linear", ("topk",)):
        key = (c.a, c.b, c.k, c.d, c.P)
        th = numbers(ev).floor_context.get(key)
        j = int(np.nanargmax(c.depths))
        m = c.estimate(j)
        if th is None:
            out.append(
                claim.not_run("theory floor not computed for this scale", c.label, "not computed", m.value, m.se)
            )
            continue
        val, tse = th
        # the trained loss against the Monte Carlo floor: within 5 % plus the t margin of their difference
        diff = m.minus(Estimate(val, tse, math.inf, "Monte Carlo"))
        pop = numbers(ev).floor.get(key)
        beside = f"; population floor {num(pop[0])}, trained {pct((m.value - pop[0]) / pop[0])} from it" if pop else ""
        det = f"deepest run L={int(c.depths[j])}; relative difference {pct(diff.value / val)}{beside}"
        # one seed has no error to test with: undecided, whatever its value
        ok = within(diff, 0.0, FLOOR_RTOL * val) if m.n >= 2 else None
        band = (-FLOOR_RTOL * val, FLOOR_RTOL * val)
        p = decision_p(diff, *band) if m.n >= 2 else None
        out.append(claim.decided(c.label, ok, [c], det, val, m if m.n >= 2 else m.value, None, expected_error=tse, p=p))
    return out


# missing=None: the floor claim says when there are no runs
@claim(
    "linear-saturation", tolerance=f"<= {SATURATION_RTOL}", expected="no gain with depth", missing=None, family="linear"
)
def linear_saturation(claim: Claim, ev) -> list[ClaimResult]:
    """Linear attention saturates on the difficult task

    Compared: the deep loss at L_max against L_max/4 (or the previous depth).
    """
    out = []
    for c in select_curves(ev, "linear", ("topk",)):
        if (c.a, c.b, c.k, c.d, c.P) not in numbers(ev).floor_context:
            continue  # decided beside the floor, as the floor's companion
        j = int(np.nanargmax(c.depths))
        i = max(int(np.searchsorted(c.depths, c.depths[j] / 4)), 0)
        if i < j:
            # per seed, paired: the relative gain of each seed's deep model over its shallower one
            rel = Estimate.from_seeds((c.loss[:, i] - c.loss[:, j]) / c.loss[:, i])
            det = f"relative loss change from L={int(c.depths[i])} to L={int(c.depths[j])}, per seed"
            ok = below_zero(rel, SATURATION_RTOL) if rel.n >= 2 else None
            band = (-np.inf, SATURATION_RTOL)
            measured = rel if rel.n >= 2 else rel.value
            out.append(claim.decided(c.label, ok, [c], det, claim.expected, measured, None, band=band))
    return out


CLAIMS = (linear_exponent, linear_sequential_modes, softmax_parallel_modes, linear_floor, linear_saturation)
