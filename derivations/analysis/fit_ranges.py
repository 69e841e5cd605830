"""The ranges of fitted parameters: the largest floor an offset law may take, and the
profile-likelihood interval of its exponent (what :meth:`FitResult.identification` checks)."""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize, stats

PROFILE_ALPHA_MIN = 0.01  # below it a power law is not told from a logarithm on these depths


def _floor_cap(X, R, w) -> float:
    """The largest floor ``L0`` an offset law may take: the smallest loss of one input point.

    Points that repeat an input (several seeds at one depth) count as one, by the weighted geometric
    mean of their losses (the value the log-residual law is fitted to there): the floor lies below
    the loss at every depth, not below the luckiest seed. ``X`` is ``(n,)`` or ``(n, K)``; points of
    zero weight are left out.
    """
    X = np.asarray(X, dtype=float).reshape(len(R), -1)
    keep = w > 0
    groups: dict = {}
    for x, r, wi in zip(map(tuple, X[keep]), R[keep], w[keep]):
        groups.setdefault(x, []).append((float(r), float(wi)))
    means = [
        g[0][0] if len(g) == 1 else math.exp(sum(wi * math.log(r) for r, wi in g) / sum(wi for _, wi in g))
        for g in groups.values()
    ]
    return float(min(means))


def _profile_alpha_interval(fit, level: float) -> tuple:
    """The profile-likelihood interval of alpha of an offset fit (:meth:`FitResult.profile_interval`)."""
    from .fits import ALPHA_MAX, _fit_offset_fixed_alpha

    L, R, w, huber = fit.data
    limit = fit.ssr * (1.0 + float(stats.f.ppf(level, 1, fit.dof)) / fit.dof)

    def excess(a: float) -> float:
        return _fit_offset_fixed_alpha(L, R, w, a, huber).ssr - limit

    a_hat = fit.params["alpha"]

    def end(step: float, stop: float) -> float:
        inside = a_hat
        while (inside < stop) if step > 1 else (inside > stop):
            nxt = min(inside * step, stop) if step > 1 else max(inside * step, stop)
            if excess(nxt) > 0:
                return float(optimize.brentq(excess, min(inside, nxt), max(inside, nxt), rtol=1e-4))
            inside = nxt
        return stop

    return (end(1 / 1.3, PROFILE_ALPHA_MIN), end(1.3, ALPHA_MAX))


__all__ = ["PROFILE_ALPHA_MIN"]
