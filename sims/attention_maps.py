"""Attention nonlinearities other than softmax: the maps from scores to weights and their backward passes.

Each map takes one layer's scores ``z`` over the P context tokens and overwrites them with the
weights ``p``; each backward pass needs only ``p`` (never ``z``), so the kernels keep one array.
Codes are indices into ``ATTENTIONS`` (numba kernels take an int):

- ``sparsemax`` (Martins and Astudillo 2016): the Euclidean projection of ``z`` onto the simplex,
  ``p_i = [z_i - tau]_+`` with ``sum p = 1``. Jacobian ``diag(s) - s s^T / |S|``, s the support.
- ``entmax15`` (1.5-entmax, Peters, Niculae and Martins 2019): ``p_i = [z_i / 2 - tau]_+^2`` with
  ``sum p = 1``. Jacobian ``diag(g) - g g^T / sum(g)``, ``g = sqrt(p)``.
- ``sigmoid`` (Ramapuram et al. 2024): ``p_i = sigmoid(z_i - log P)``, a fixed (not trained) bias
  that makes zero scores give weights near ``1/P``; not normalised.
- ``relu`` (Wortsman et al. 2023): ``p_i = relu(z_i) / P``; not normalised.

Both thresholds are exact and found without sorting. ``tau`` rises monotonically from
``max(u) - 1`` (where the residual ``g(tau) = sum [u_i - tau]_+^q - 1`` is >= 0) and never passes
the root, so the candidate support ``{u_i > tau}`` only shrinks:

- sparsemax (q = 1): Michelot's iteration, ``tau <- (sum_S u - 1) / |S|``, exact once ``S`` stops
  changing (at most P rounds, in practice 2-5);
- entmax15 (q = 2): on the current ``S`` the closed-form root of ``sum_S (u_i - tau)^2 = 1`` is
  exact when every ``u_i`` of ``S`` is at or above it; otherwise a Newton step on the convex,
  decreasing ``g`` (which from the left never overshoots) shrinks ``S``, and the check repeats.

Ties and all-equal scores need no special case (all-equal scores give the uniform ``1/P``).
Scalar sums run in float64 whatever the arrays' dtype.
"""

from __future__ import annotations

import numpy as np

from .jit import njit

ATTENTIONS = ("softmax", "sparsemax", "entmax15", "sigmoid", "relu")
NORMALISED = ("softmax", "sparsemax", "entmax15")  # weights on the simplex: mixtures of them are floors

SOFTMAX, SPARSEMAX, ENTMAX15, SIGMOID, RELU = range(5)


def attention_code(name: str) -> int:
    """The kernels' integer code of an attention nonlinearity.

    >>> attention_code("entmax15")
    2
    """
    if name not in ATTENTIONS:
        raise ValueError(f"attention={name!r}: must be one of {', '.join(ATTENTIONS)}")
    return ATTENTIONS.index(name)


@njit(cache=True)
def sparsemax_inplace(z):
    """Sparsemax of a vector, in place (exact threshold, Michelot's iteration)."""
    n = z.shape[0]
    mx = z[0]
    for i in range(n):
        mx = max(mx, z[i])
    tau = mx - 1.0
    last = -1
    for _ in range(n + 1):
        k = 0
        s = 0.0
        for i in range(n):
            if z[i] > tau:
                k += 1
                s += z[i]
        if k == last:
            break
        last = k
        tau = max(tau, (s - 1.0) / k)  # never below the last tau: rounding cannot move it back
    for i in range(n):
        z[i] = max(z[i] - tau, 0.0)


@njit(cache=True)
def entmax15_inplace(z):
    """1.5-entmax of a vector, in place: ``p_i = [z_i / 2 - tau]_+^2`` (exact threshold)."""
    n = z.shape[0]
    mx = z[0]
    for i in range(n):
        mx = max(mx, z[i])
    tau = 0.5 * mx - 1.0
    root = tau
    for _ in range(60):  # Newton converges quadratically; the closed form ends it in a few rounds
        k = 0
        s1 = 0.0
        s2 = 0.0
        umin = np.inf
        for i in range(n):
            u = 0.5 * z[i]
            if u > tau:
                k += 1
                s1 += u
                s2 += u * u
                umin = min(umin, u)
        mean = s1 / k
        disc = mean * mean - (s2 - 1.0) / k
        root = mean - np.sqrt(max(disc, 0.0))
        if disc >= 0.0 and umin >= root:
            break
        # Newton on g(tau) = sum_S (u - tau)^2 - 1 from the left: g' = -2 sum_S (u - tau)
        g = s2 - 2.0 * tau * s1 + k * tau * tau - 1.0
        dg = 2.0 * (s1 - k * tau)
        step = g / dg
        if not step > 0.0:
            break
        tau += step
        root = tau
    for i in range(n):
        u = max(0.5 * z[i] - root, 0.0)
        z[i] = u * u


@njit(cache=True)
def sigmoid_inplace(z, bias):
    """``z_i <- sigmoid(z_i + bias)`` in place (stable on both sides of zero)."""
    for i in range(z.shape[0]):
        x = z[i] + bias
        if x >= 0.0:
            z[i] = 1.0 / (1.0 + np.exp(-x))
        else:
            e = np.exp(x)
            z[i] = e / (1.0 + e)


@njit(cache=True)
def relu_inplace(z, scale):
    """``z_i <- scale * max(z_i, 0)`` in place."""
    for i in range(z.shape[0]):
        z[i] = scale * max(z[i], 0.0)


@njit(cache=True, inline="always")
def sparse_back(kind, p, dp, dz, scale):
    """``dz = scale J^T dp`` for the maps other than softmax, from the weights ``p`` (``dz`` may be ``dp``).

    Every Jacobian here is symmetric. ``kind`` is a code of ``ATTENTIONS`` (not softmax). The loops
    multiply by the support mask instead of branching, so that they vectorise.
    """
    n = p.shape[0]
    if kind == SPARSEMAX:
        k = 0.0
        s = 0.0
        for i in range(n):
            on = 1.0 if p[i] > 0.0 else 0.0
            k += on
            s += on * dp[i]
        mean = s / k
        for i in range(n):
            dz[i] = scale * (dp[i] - mean) * (1.0 if p[i] > 0.0 else 0.0)
    elif kind == ENTMAX15:
        sg = 0.0
        sgd = 0.0
        for i in range(n):
            g = np.sqrt(p[i])
            sg += g
            sgd += g * dp[i]
        c = sgd / sg
        for i in range(n):
            dz[i] = scale * np.sqrt(p[i]) * (dp[i] - c)
    elif kind == SIGMOID:
        for i in range(n):
            dz[i] = scale * p[i] * (1.0 - p[i]) * dp[i]
    else:  # relu: p = relu(z) / n
        w = scale / n
        for i in range(n):
            dz[i] = w * dp[i] * (1.0 if p[i] > 0.0 else 0.0)
