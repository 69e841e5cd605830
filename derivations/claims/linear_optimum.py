"""Trained linear attention against the best depth-L predictor of its class at its own (d, P).

The optimum (:func:`depthscale.theory.linear_optimum.linear_optimum`, a Monte Carlo) is computed
for a report as theory numbers (an :class:`OptimumNumbers` record); this module holds what the
claims that read it share: the record, the rule that calls a trained loss "at the optimum"
(:func:`near_optimum`), the optimum's own depth exponent (:func:`optimum_exponent`) and the note
that says whether a trained curve is limited by the optimum or by training
(:func:`optimum_limit_note`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..analysis.estimate import Estimate
from ..formatting import format_estimate as est
from ..formatting import format_value as num
from .verdicts import within

OPTIMUM_RTOL = 0.10  # a trained loss "at the optimum": within 10 % of it (t-test)
_BOOT = 400  # parametric resamples of the Monte Carlo losses for the exponent's error

OptimumKey = tuple[float, float, int, int, str]  # (a, b, d, P, task)


@dataclass(frozen=True)
class OptimumNumbers:
    """The optimum's theory numbers for a report (an empty field: not computed; claims then say so).

    Attributes
    ----------
    at_runs : ``{(a, b, d, P, task): {L: (loss, se, in_sample, equal_step, equal_step_se)}}``, the best
        depth-L polynomial in S at a linear easy-task curve's (d, P).
    reference : ``{(a, b): (alpha, se, alpha_in_sample, paper, contexts)}``, the optimum's exponent at
        the paper's scale (d = 128, P = 1024).
    contexts : the Monte Carlo contexts of ``at_runs`` (0: not computed).
    """

    at_runs: dict[OptimumKey, dict[int, tuple[float, ...]]] = field(default_factory=dict)
    reference: dict[tuple[float, float], tuple[float, float, float, float, int]] = field(default_factory=dict)
    contexts: int = 0


def optimum_numbers_of(ev) -> OptimumNumbers:
    """The optimum numbers of the evidence ``ev``: the :class:`OptimumNumbers` a study computed as its
    theory numbers for the report, else an empty record (not computed)."""
    return next((v for v in ev.theory.studies.values() if isinstance(v, OptimumNumbers)), OptimumNumbers())


def optimum_of(numbers: OptimumNumbers, c) -> dict[int, tuple[float, ...]]:
    """``{L: (loss, se, in_sample, ...)}`` of the optimum at the curve ``c``'s scale."""
    return numbers.at_runs.get((c.a, c.b, c.d, c.P, c.task), {})


def optimum_exponent(L, loss, se, seed: int = 0) -> tuple[float, float]:
    """The paper's fit ``c L^-alpha`` (log-log least squares) of the optimum: ``(alpha, s.e.)``.

    The s.e. is that of the Monte Carlo: the spread of alpha over losses redrawn as
    ``N(loss, se)`` (a fixed seed, so the report is reproducible).

    >>> L = np.array([1.0, 2, 4, 8]); a, s = optimum_exponent(L, 3 * L**-1.5, 1e-9 * L**-1.5)
    >>> round(a, 6), s < 1e-6
    (1.5, True)
    """
    from ..analysis.fits import fit_power_law

    L = np.asarray(L, dtype=float)
    loss, se = np.asarray(loss, dtype=float), np.asarray(se, dtype=float)
    alpha = float(fit_power_law(L, loss).params["alpha"])
    rng = np.random.default_rng(seed)
    draws = loss + se * rng.standard_normal((_BOOT, loss.size))
    draws = np.where(draws > 0, draws, loss)  # a redrawn loss cannot be negative: keep the estimate there
    # the same least squares, vectorised over the redraws: alpha = -cov(log L, log R) / var(log L)
    x = np.log(L) - np.log(L).mean()
    boot = -(np.log(draws) @ x) / (x @ x)
    return alpha, float(np.std(boot, ddof=1))


def near_optimum(m: Estimate, val: float, vse: float) -> bool | None:
    """The trained loss ``m`` within 10 % of the optimum ``val`` (Monte Carlo error ``vse``) by the
    t-test of their difference (``verdicts.within``; one seed: the optimum's error alone, and the
    seed count keeps such a row indicative)."""
    opt = Estimate(val, vse, math.inf, "Monte Carlo")
    return within(
        m.minus(opt) if m.n >= 2 else Estimate(m.value - val, vse, math.inf, "Monte Carlo"), 0.0, OPTIMUM_RTOL * val
    )


def optimum_limit_note(ev, c) -> str:
    """For a row on a trained linear curve ``c``: is it limited by the optimum or by training?

    Training limits it when, at some depth, the trained loss exceeds the optimum by more than
    10 % plus the t margin; the note then names the deepest such depth and the ratio there, and gives
    the optimum's own exponent over the same depths. "" when the optimum is known at fewer than two
    of the curve's depths.
    """
    opt = optimum_of(optimum_numbers_of(ev), c)
    pairs = [(j, int(L)) for j, L in enumerate(c.depths) if int(L) in opt]
    if len(pairs) < 2:
        return ""
    above = []
    for j, L in pairs:
        val, vse = opt[L][:2]
        if c.mean[j] > val and near_optimum(c.estimate(j), val, vse) is False:
            above.append((L, c.mean[j] / val))
    Ls = [L for _, L in pairs]
    alpha, ase = optimum_exponent(Ls, [opt[L][0] for L in Ls], [opt[L][1] for L in Ls])
    own = f"the optimum's own exponent over L={Ls} is {est(alpha, ase)}"
    if not above:
        return f"; limited by the optimum: trained not decidedly above it (10 %, t-test) at any depth ({own})"
    L, ratio = above[-1]
    return (
        f"; limited by training: above the optimum at L={[x for x, _ in above]}, "
        f"trained / optimum = {num(ratio)} at L={L} ({own})"
    )


__all__ = [
    "OPTIMUM_RTOL",
    "OptimumKey",
    "OptimumNumbers",
    "optimum_numbers_of",
    "optimum_of",
    "optimum_exponent",
    "near_optimum",
    "optimum_limit_note",
]
