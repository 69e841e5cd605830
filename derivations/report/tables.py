"""The library's tables of simulation results, one :class:`~depthscale.derivations.report.entries.Table`
each: the loss of every curve at every depth (:func:`runs_table`), each curve's fitted depth law
(:func:`fits_table`), and a law claim's error rates at each row's effect size and the seeds that would
decide it (:func:`calibration_table`, :func:`plan_table`). A study puts them among its sections'
tables when its report shows them."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..analysis.curve import Curve
from ..formatting import MISSING, format_estimate, format_interval
from .entries import Table


def runs_table(cs: Sequence[Curve]) -> Table:
    """Loss against depth, one row per curve and depth: seeds, converged runs, R_L, A_L, C_L and the
    first layer's top-1 attention mass."""
    rows = []
    for c in cs:
        A, C = c.field_mean("A_L"), c.field_mean("C_L")
        for j, L in enumerate(c.depths):
            recs = c.records_at(int(L))
            conv = sum(bool(r.get("converged")) for r in recs)
            top1 = np.mean([m[0] for r in recs if (m := r.get("top1_mass"))] or [np.nan])
            rows.append([c.label, int(L), len(recs), conv, format_estimate(c.mean[j], c.se[j]), A[j], C[j], top1])
    return Table(
        "Loss against depth (mean ± s.e. over seeds, fresh evaluation contexts)",
        ["condition", "L", "seeds", "converged", "R_L", "A_L", "C_L (cross-layer covariance)", "top-1 mass (layer 1)"],
        rows,
        "A_L is the mean of the layers' own losses and C_L the mean covariance E[e_l e_m] (l ≠ m) of two "
        "layers' errors, so R_L = C_L + (A_L - C_L)/L. C_L is negative when layer errors cancel, as in "
        "linear attention, where each layer corrects what the previous ones left.",
    )


def _fit_row(c: Curve) -> list:
    f = c.default_fit()
    law = "L0 + c L^-alpha" if f.kind == "offset_power" else "c L^-alpha"
    if not f.identified:
        return [c.label, law, "not identified", MISSING, MISSING, MISSING, MISSING, MISSING, f.reason]
    p, se = f.params, f.se
    boot = f.bootstrap.intervals.get("alpha") if f.bootstrap is not None else None
    return [
        c.label,
        law,
        format_estimate(p["L0"], se["L0"]) if "L0" in p else 0.0,
        format_estimate(p["c"], se["c"]),
        format_estimate(p["alpha"], se["alpha"]),
        f.r2,
        format_interval(*boot) if boot else MISSING,
        f.delta_aic_alpha_one,
        "",
    ]


def fits_table(cs: Sequence[Curve]) -> Table:
    """Each curve's default fit (``Curve.default_fit``): its law, parameters with s.e., R^2, the
    bootstrap interval of alpha and delta AIC against alpha = 1, or why it is not identified."""
    return Table(
        "Fits: R_L = L0 + c L^-alpha (softmax, linear top-k) and R_L = c L^-alpha (linear easy)",
        [
            "condition",
            "law",
            "L0",
            "c",
            "alpha",
            "R^2",
            "alpha 95% (bootstrap over seeds)",
            "delta AIC (alpha = 1)",
            "not identified because",
        ],
        [_fit_row(c) for c in cs],
    )


__all__ = ["runs_table", "fits_table"]


CALIBRATION_ALPHAS = (0.5, 0.75, 1.0, 1.5, 2.0)  # the negative controls 0.5 and 2, and the band's neighbourhood


def calibration_table(
    claim, ev, conditions, alphas: Sequence[float] = CALIBRATION_ALPHAS, replicates: int = 100, seed: int = 0
) -> Table | None:
    """How often ``claim`` passes, fails and stays indicative on synthetic curves with each condition's
    own amplitude, seed offsets and pure error, per true alpha
    (:func:`~depthscale.derivations.claims.calibration.calibrate`: the same claim code); alpha = 0.5
    and 2 are the negative controls at the real effect size.

    ``conditions`` are ``(label, curve)`` pairs; one with fewer than two seeds (no seed offsets or pure
    error to simulate) or without a row of ``claim`` (a fit that failed) is left out. None when
    nothing is left. With the default 100 replicates a rate's binomial standard error is at most 0.05.
    """
    from ..claims.calibration import binomial_se, calibrate, noise_model

    rows = []
    for label, c in conditions:
        if len(c.seeds) < 2:
            continue
        try:
            rates = calibrate(claim, ev, label, alphas, replicates, seed=seed)
        except ValueError:  # no row of the claim on this condition: nothing to calibrate
            continue
        noise = noise_model(c)
        for r in rates:
            rows.append([label, f"{r.alpha:g}", f"{r.pass_rate:.2f}", f"{r.fail_rate:.2f}", f"{r.indicative_rate:.2f}"])
        rows[-len(rates)][0] += (
            f" (gain {noise.gain / noise.r1:.1%} of R_1, seed offsets {noise.seed_sd:.2g}, pure error {noise.pure_sd:.2g})"
        )
    if not rows:
        return None
    return Table(
        f"Calibration of {claim.id} at the measured effect size: the rates of each verdict on {replicates} synthetic "
        "curves per true alpha (same depths, seeds, amplitude, seed offsets and pure error as the row; the same claim "
        f"code) at alpha = {', '.join(f'{a:g}' for a in alphas)}; alpha = 0.5 and 2 are the negative controls",
        ["condition", "true alpha", "pass", "fail", "indicative"],
        rows,
        note=f"A rate's binomial standard error is at most {binomial_se(0.5, replicates):.2g}. Where even alpha = 0.5 "
        "and 2 are mostly indicative, undecided is the expected outcome whatever the truth: the planner "
        "(depthscale plan) says how many seeds would decide.",
    )


def plan_table(
    claim,
    ev,
    conditions,
    alternatives: Sequence[float] = (0.5, 1.0),
    power: float = 0.8,
    replicates: int = 100,
    seeds_max: int = 64,
) -> Table | None:
    """How many seeds ``claim``'s row on each condition needs, at the condition's own depths, to be
    decided right with probability ``power`` when the true alpha is each of ``alternatives``, and
    what the missing runs cost (:func:`~depthscale.derivations.claims.calibration.plan`, the same
    claim code). ``conditions`` as in :func:`calibration_table`; None when nothing is left."""
    from ..claims.calibration import plan

    rows = []
    for label, c in conditions:
        if len(c.seeds) < 2:
            continue
        try:
            depths = [tuple(int(L) for L in c.depths)]
            plans = plan(claim, ev, label, alternatives, power, seeds_max, depth_sets=depths, replicates=replicates)
        except ValueError:  # no row of the claim on this condition
            continue
        for p in plans:
            seeds = f"{p.seeds}" if p.seeds is not None else f"more than {seeds_max}"
            cost = "—" if p.core_hours is None else f"{p.extra_runs} runs, {p.core_hours:.1f} core-hours"
            rows.append(
                [label, f"{p.alternative:g}", p.correct, seeds, f"{p.achieved:.2f} ± {p.achieved_se:.2f}", cost]
            )
    if not rows:
        return None
    return Table(
        f"Seeds to decide {claim.id} (the planner, depthscale plan): the fewest seeds at the row's own depths "
        f"for which synthetic curves of its measured effect and noise get the right verdict in at least "
        f"{power:.0%} of replicates, per true alpha",
        ["condition", "true alpha", "right verdict", "seeds", "P(right) at those seeds", "missing runs"],
        rows,
        note="The missing runs' core-hours come from the cost model (depthscale.sims.budget) with the store's own "
        "timings; a seed is one lockstep group of every depth.",
    )
