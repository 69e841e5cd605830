"""Sums to infinity over the modes of a power law: the numbers behind the derivations' sum-to-integral steps.

sympy cannot evaluate ``sum_{k>=1} k^-p g(k)`` at the large depths where those steps are checked,
and the rules of :mod:`depthscale.theory.mode_sums` cover finite d only. Here the terms are summed
one by one where they vary and the smooth tail is replaced by its integral.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import mpmath
import numpy as np


def infinite_power_sum(p: float, log_factor: Callable, scale: float, start: int = 1) -> float:
    """``sum_{k >= start} k^-p exp(log_factor(k))`` for a factor that varies on the scale ``k ~ scale``.

    The terms are summed explicitly (float64, compensated) up to ``K = 200 scale``; the smooth tail
    beyond is quadrature plus the Euler-Maclaurin half-term. ``log_factor(x, lib)`` evaluates the
    log of the factor with the functions of ``lib``, numpy on arrays of k or mpmath on one point.

    Examples
    --------
    >>> total = infinite_power_sum(2.0, lambda x, lib: 0 * x, 1.0)   # zeta(2) = pi^2/6
    >>> abs(total - math.pi**2 / 6) < 1e-7
    True
    """
    K = int(200 * scale) + 10

    def log_term(x, lib):
        return log_factor(x, lib) - p * lib.log(x)

    direct = math.fsum(np.exp(log_term(np.arange(start, K, dtype=float), np)))

    def f(x):
        return mpmath.exp(log_term(x, mpmath))

    with mpmath.workdps(20):
        tail = mpmath.quad(f, [K, 10 * K, 100 * K, mpmath.inf]) + f(K) / 2
    return direct + float(tail)


__all__ = ["infinite_power_sum"]
