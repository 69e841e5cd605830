"""Sums over the modes k = 1..d of a power-law spectrum: exact head plus Gauss rules on the tail.

Every linear law is a sum ``sum_k f(k)`` with ``f(k) = C k^-p (1 - s k^-a)^e``, smooth in ``k``
once ``k`` is past the few isolated top modes. :class:`ModeRule` keeps the modes ``k <= head``
exactly and replaces each tail block of consecutive integers ``k0..k1`` (ratio ``k1/k0 ~ 2``) by
the n-point Gauss rule of the uniform measure on those integers, which sums every polynomial of
degree ``<= 2n - 1`` in ``k`` exactly. The cost of a sum drops from ``d`` terms to
``head + n * log2(d / head)``.

Error bound (:func:`tail_error_bound`). Let ``E_rho`` be the Bernstein ellipse with foci ``k0, k1``
and ``|f| <= M`` inside it. The Chebyshev truncation of degree ``m = 2n - 1`` is within
``2 M rho^-m / (rho - 1)`` of ``f`` on the block; the block sum and the rule (positive weights
summing to the block size ``N``) both integrate it exactly, so

    |sum_block f - rule f| <= 4 N M rho^-(2n-1) / (rho - 1).

``M`` is bounded in closed form: on an ellipse whose leftmost point is ``r > 0`` and whose
rays from the origin make angles ``<= phi``, ``|z^-p| <= r^-p`` and ``z^-a`` lies in the sector
``R^-a <= |zeta| <= r^-a``, ``|arg zeta| <= a phi`` (``R`` the rightmost point), where
``|1 - s zeta|`` is largest at a corner. The bound is evaluated for a few ellipses per block and
the smallest is kept. It covers the replacement of the tail only; rounding adds about one unit
of the last place per term.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy.linalg import eigh_tridiagonal

from ._validate import check_int, check_real

NODES = 32  # Gauss points per tail block: degree 63, so rho^-63 < 1e-35 for the ratio-2 blocks
RATIO = 2.0  # last / first integer of a tail block
_LEFT = (0.25, 0.5, 0.7, 0.85)  # leftmost point of the trial ellipses, as a fraction of k0


@dataclass(frozen=True)
class ModeRule:
    """Nodes ``k`` and weights ``count`` with ``sum_{k=1}^d f(k) ~ sum_i count_i f(k_i)``.

    Attributes
    ----------
    d : int
        Number of modes.
    head : int
        Modes ``1..head`` appear as themselves with weight 1 (``head = d``: the plain sum).
    k, count : ndarray
        Nodes (increasing; the head's integers, then each tail block's Gauss points) and weights.
    blocks : ndarray
        ``(n_blocks, 2)`` first and last integer of each tail block replaced by a Gauss rule.
    nodes : int
        Gauss points per tail block.
    """

    d: int
    head: int
    k: np.ndarray
    count: np.ndarray
    blocks: np.ndarray
    nodes: int

    def power(self, p: float) -> np.ndarray:
        """``count_i k_i^-p``: the weights of ``sum_k k^-p g(k)``."""
        return self.count * np.power(self.k, -p)


def mode_rule(d: int, head: int, nodes: int = NODES) -> ModeRule:
    """Rule for sums over ``k = 1..d`` that is exact on ``k <= head`` (cached per arguments).

    Examples
    --------
    >>> r = mode_rule(10**6, 100)
    >>> r.k.size < 600, float(r.count.sum()) == 10**6
    (True, True)
    """
    d = check_int("d", d, lo=1)
    head = check_int("head", head, lo=1)
    nodes = check_int("nodes", nodes, lo=1, hi=200)
    return _mode_rule(d, min(head, d), nodes)


@lru_cache(maxsize=64)
def _mode_rule(d: int, head: int, nodes: int) -> ModeRule:
    ks = [np.arange(1, head + 1, dtype=np.float64)]
    cs = [np.ones(head)]
    blocks = []
    k0 = head + 1
    while k0 <= d:
        k1 = min(d, max(k0 + 2 * nodes - 1, int(RATIO * k0) - 1))
        if d - k1 < k0 // 2:  # no short last block: fold the remainder into this one
            k1 = d
        n_pts = k1 - k0 + 1
        if n_pts <= 2 * nodes:  # too short to gain anything: keep the integers
            ks.append(np.arange(k0, k1 + 1, dtype=np.float64))
            cs.append(np.ones(n_pts))
        else:
            t, w = discrete_gauss(n_pts, nodes)
            ks.append(k0 + t)
            cs.append(w)
            blocks.append((k0, k1))
        k0 = k1 + 1
    k, count = np.concatenate(ks), np.concatenate(cs)
    k.flags.writeable = False
    count.flags.writeable = False
    return ModeRule(d, head, k, count, np.array(blocks, dtype=np.int64).reshape(-1, 2), nodes)


@lru_cache(maxsize=256)
def discrete_gauss(N: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """n-point Gauss rule of the uniform measure on ``{0, 1, ..., N-1}`` (``n < N``).

    Golub-Welsch on the recurrence of the discrete Chebyshev (Gram) polynomials: diagonal
    ``(N-1)/2``, squared off-diagonal ``j^2 (N^2 - j^2) / (4 (4 j^2 - 1))``. The rule sums every
    polynomial of degree ``<= 2n - 1`` over the N integers exactly; weights are positive, sum N.

    Examples
    --------
    >>> t, w = discrete_gauss(10, 3)
    >>> round(float(w @ t**5), 6), sum(j**5 for j in range(10))
    (120825.0, 120825)
    """
    j = np.arange(1, n, dtype=np.float64)
    NN = float(N)
    off = np.sqrt(j * j * (NN - j) * (NN + j) / (4.0 * (4.0 * j * j - 1.0)))
    t, v = eigh_tridiagonal(np.full(n, (NN - 1.0) / 2.0), off)
    w = NN * v[0, :] ** 2
    # the rule is symmetric about (N-1)/2: symmetrise away the eigen-solver's rounding
    t = 0.5 * (t + (NN - 1.0 - t[::-1]))
    w = 0.5 * (w + w[::-1])
    t.flags.writeable = False
    w.flags.writeable = False
    return t, w


def tail_error_bound(rule: ModeRule, a: float, p: float, s: float, e: int, scale: float = 1.0) -> float:
    """Bound on ``|sum_{k>head} f(k) - rule|`` for ``f(k) = scale k^-p (1 - s k^-a)^e``.

    See the module docstring for the derivation. ``a, p >= 0``, ``s >= 0``, ``e >= 0`` integer.

    Examples
    --------
    >>> r = mode_rule(10**6, 64)
    >>> tail_error_bound(r, 2.0, 3.0, 1.0, 128) < 1e-30
    True
    """
    a = check_real("a", a, lo=0)
    p = check_real("p", p, lo=0)
    s = check_real("s", s, lo=0)
    e = check_int("e", e, lo=0)
    if rule.blocks.size == 0:
        return 0.0
    k0 = rule.blocks[:, :1].astype(np.float64)
    k1 = rule.blocks[:, 1:].astype(np.float64)
    N = k1 - k0 + 1.0
    c, h = 0.5 * (k0 + k1), 0.5 * (k1 - k0)
    r = k0 * np.array(_LEFT)[None, :]  # leftmost point of each trial ellipse
    A = c - r  # semi-major axis (> h since r < k0)
    B = np.sqrt(A * A - h * h)
    rho = (A + B) / h
    phi = np.arctan(B / np.sqrt(c * c - A * A))  # widest angle of the ellipse seen from 0
    R = c + A
    psi = a * phi
    log_g = np.zeros_like(A)
    if e > 0:
        # |1 - s zeta| on the sector of zeta = z^-a: largest at a corner (convex in |zeta|, in -cos)
        cos_psi = np.where(psi < np.pi, np.cos(psi), -1.0)
        corners = [np.power(R, -a), np.power(r, -a)]
        g2 = np.maximum(*[1.0 - 2.0 * s * z * cos_psi + (s * z) ** 2 for z in corners])
        with np.errstate(divide="ignore"):  # g2 = 0 (a = 0, s = 1): the terms vanish, bound 0
            log_g = 0.5 * e * np.log(np.maximum(g2, 0.0))
    m = 2 * rule.nodes - 1
    log_bound = np.log(4.0 * N * scale) - p * np.log(r) + log_g - m * np.log(rho) - np.log(rho - 1.0)
    return float(np.sum(np.exp(log_bound.min(axis=1))))


__all__ = ["ModeRule", "mode_rule", "discrete_gauss", "tail_error_bound", "NODES"]
