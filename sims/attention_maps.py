"""Attention nonlinearities other than softmax: the maps from scores to weights and their backward passes.

Each map takes one layer's scores ``z`` over the P context tokens and overwrites them with the
weights ``p``; each backward pass needs only ``p`` (never ``z``), so the kernels keep one array.
Codes are the built-in maps' ``code`` in the registry ``sims/attention_registry.py`` (numba kernels
take an int; ``ATTENTIONS`` lists them in code order):

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

from .attention_registry import BUILTIN_MAPS, BUILTIN_NAMES, get_attention
from .attention_registry import attention_code as attention_code  # the registry's, kept importable here
from .jit import njit

ATTENTIONS = BUILTIN_NAMES  # the maps with numba kernels, in code order
NORMALISED = tuple(m.name for m in BUILTIN_MAPS if m.normalised)  # weights on the simplex: mixtures are floors

# the kernels' codes, taken from the registry (numba reads them as compile-time constants)
SOFTMAX = get_attention("softmax").code
SPARSEMAX = get_attention("sparsemax").code
ENTMAX15 = get_attention("entmax15").code
SIGMOID = get_attention("sigmoid").code
RELU = get_attention("relu").code


@njit(cache=True)
def max4(z):
    """Maximum of a vector with four independent accumulators (vectorisable, deterministic order)."""
    n = z.shape[0]
    m0 = z[0]
    m1 = z[0]
    m2 = z[0]
    m3 = z[0]
    i = 0
    while i + 4 <= n:
        m0 = max(m0, z[i])
        m1 = max(m1, z[i + 1])
        m2 = max(m2, z[i + 2])
        m3 = max(m3, z[i + 3])
        i += 4
    while i < n:
        m0 = max(m0, z[i])
        i += 1
    return max(max(m0, m1), max(m2, m3))


@njit(cache=True)
def sum4(z):
    """Sum of a vector in float64 with four partial sums (vectorisable, deterministic order)."""
    n = z.shape[0]
    t0 = 0.0
    t1 = 0.0
    t2 = 0.0
    t3 = 0.0
    i = 0
    while i + 4 <= n:
        t0 += z[i]
        t1 += z[i + 1]
        t2 += z[i + 2]
        t3 += z[i + 3]
        i += 4
    while i < n:
        t0 += z[i]
        i += 1
    return (t0 + t1) + (t2 + t3)


# exp(x) without a libm call and without float->int conversions, so that LLVM vectorises the loops
# that use it (numba has no vector exp here; the scalar call dominated the softmax forward pass):
# x = k ln2 + r with |r| <= ln2 / 2 (k rounded by adding 1.5 * 2^52, whose low bits then hold k;
# Cody-Waite split of ln2 with the fdlibm constants), exp(r) by its Taylor polynomial to degree 13
# (truncation below 1e-17 relative), 2^k assembled in the exponent bits through an int64 view.
# Arguments are clamped to [-700, 700]: exp(-700) ~ 1e-304 is nothing next to the weights the maps
# compare it with (a softmax row's maximum is exp(0) = 1), and exp(700) ~ 1e304 stays finite.
# Shared by softmax (softmax_kernels) and the sigmoid map.
_LOG2E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_MAGIC = 6755399441055744.0  # 1.5 * 2^52
_MAGIC_BITS = 0x4338000000000000  # its bit pattern


@njit(cache=True, fastmath={"contract"}, inline="always")  # FMA only: reassociation would undo the rounding trick
def exp_shifted64(z, shift, ib, fb):
    """``z_i <- exp(z_i - shift)`` in place, float64, the argument clamped to [-700, 700].

    ``ib`` (int64) and ``fb`` (a float64 view of the same memory) are scratch of length >= len(z).
    Inlined into its caller (numba IR), so the caller's fastmath flags apply: callers are compiled
    with ``fastmath={"contract"}`` (FMA), which the rounding trick and the polynomial assume.
    """
    n = z.shape[0]
    for i in range(n):
        x = min(max(z[i] - shift, -700.0), 700.0)
        b = x * _LOG2E + _MAGIC
        kf = b - _MAGIC  # nearest integer to x / ln2
        r = (x - kf * _LN2_HI) - kf * _LN2_LO
        q = 1.0 / 6227020800.0
        q = q * r + 1.0 / 479001600.0
        q = q * r + 1.0 / 39916800.0
        q = q * r + 1.0 / 3628800.0
        q = q * r + 1.0 / 362880.0
        q = q * r + 1.0 / 40320.0
        q = q * r + 1.0 / 5040.0
        q = q * r + 1.0 / 720.0
        q = q * r + 1.0 / 120.0
        q = q * r + 1.0 / 24.0
        q = q * r + 1.0 / 6.0
        q = q * r + 0.5
        q = q * r + 1.0
        q = q * r + 1.0
        z[i] = q
        fb[i] = b
    for i in range(n):
        ib[i] = (ib[i] - _MAGIC_BITS + 1023) << 52  # the bits of 2^k
    for i in range(n):
        z[i] = z[i] * fb[i]


# float32 counterpart: the same construction in single precision (8 lanes instead of 4), Taylor
# degree 7 (truncation below 1e-8 relative), 2^k through an int32 view, clamp at -87 and 87
# (2^-126 is the smallest normal float32, exp(87) ~ 6e37 stays finite).
_LOG2E_F = np.float32(1.4426950408889634)
_LN2_HI_F = np.float32(0.693359375)  # 9 significant bits: k * _LN2_HI_F is exact
_LN2_LO_F = np.float32(-2.1219444005469057e-4)
_MAGIC_F = np.float32(12582912.0)  # 1.5 * 2^23
_MAGIC_BITS_F = 0x4B400000
_NEG87_F = np.float32(-87.0)
_POS87_F = np.float32(87.0)
_ONE_F = np.float32(1.0)


@njit(cache=True, fastmath={"contract"}, inline="always")  # FMA only: reassociation would undo the rounding trick
def exp_shifted32(z, shift, ib, fb):
    """``z_i <- exp(z_i - shift)`` in place, float32 (``shift`` a float32), clamped to [-87, 87].

    ``ib`` (int32) and ``fb`` (a float32 view of the same memory) are scratch of length >= len(z).
    Inlined, callers compiled with ``fastmath={"contract"}`` as for ``exp_shifted64``.
    """
    n = z.shape[0]
    for i in range(n):
        x = min(max(np.float32(z[i] - shift), _NEG87_F), _POS87_F)
        b = x * _LOG2E_F + _MAGIC_F
        kf = b - _MAGIC_F
        r = (x - kf * _LN2_HI_F) - kf * _LN2_LO_F
        q = np.float32(1.0 / 5040.0)
        q = q * r + np.float32(1.0 / 720.0)
        q = q * r + np.float32(1.0 / 120.0)
        q = q * r + np.float32(1.0 / 24.0)
        q = q * r + np.float32(1.0 / 6.0)
        q = q * r + np.float32(0.5)
        q = q * r + _ONE_F
        q = q * r + _ONE_F
        z[i] = q
        fb[i] = b
    for i in range(n):
        ib[i] = np.int32((ib[i] - _MAGIC_BITS_F + 127) << 23)
    for i in range(n):
        z[i] = z[i] * fb[i]


# The reductions of the sparse maps run with reassociation allowed (and no NaN, no signed zero),
# so that LLVM splits each sum into vector lanes; a minimum would not vectorise (its select becomes
# a mispredicted branch), so entmax checks a set by its count instead. The order is fixed by
# the compiled code, so a machine gives the same numbers every time; across CPUs with other vector
# widths they may differ in the last bits. Scores are finite (NaN would give meaningless weights).
_REDUCE = {"reassoc", "nsz", "nnan", "contract"}


@njit(cache=True, fastmath=_REDUCE)
def _above(z, tau, scale):
    """Count, sum and sum of squares of ``u_i = scale z_i`` over ``{u_i > tau}`` (float64, vectorised)."""
    k = 0.0
    s = 0.0
    q = 0.0
    for i in range(z.shape[0]):
        u = scale * z[i]
        on = u > tau
        a = u if on else 0.0
        k += 1.0 if on else 0.0
        s += a
        q += a * a
    return k, s, q


@njit(cache=True)
def sparsemax_inplace(z):
    """Sparsemax of a vector, in place (exact threshold, Michelot's iteration)."""
    n = z.shape[0]
    tau = max4(z) - 1.0
    last = -1.0
    for _ in range(n + 1):
        k, s, _q = _above(z, tau, 1.0)
        if k == 0.0:  # no score above max - 1: scores inf or NaN (an overflowed model); NaN says so
            z[:] = np.nan
            return
        if k == last:
            break
        last = k
        tau = max(tau, (s - 1.0) / k)  # never below the last tau: rounding cannot move it back
    for i in range(n):
        z[i] = max(z[i] - tau, 0.0)


@njit(cache=True)
def entmax15_inplace(z):
    """1.5-entmax of a vector, in place: ``p_i = [z_i / 2 - tau]_+^2`` (exact threshold).

    ``tau`` solves ``g(tau) = sum_i [u_i - tau]_+^2 = 1`` (``u = z / 2``; g decreases). One pass at
    ``t`` gives the count and sums of ``S(t) = {u_i > t}``, and with them the smaller root ``r`` of
    ``sum_{S(t)} (u_i - tau)^2 = 1`` in closed form. Below ``tau``, ``S(t)`` holds the support and
    ``r >= tau``; above it, ``S(t)`` is inside the support and ``r <= tau``; either way ``r = tau``
    when ``S(r) = S(t)``. So each pass is at the last root, on the other side of ``tau``, until the set
    stops changing; from below, a set too large for any real root takes a Newton step on ``g``
    (which stays below ``tau``). Small scores (a model at its initialisation) need 4-6 passes, as
    against 8-10 for Newton from below alone.
    """
    n = z.shape[0]
    t = 0.5 * max4(z) - 1.0  # below tau: the largest u alone gives g = 1 there
    below = True
    k, s1, s2 = _above(z, t, 0.5)
    if k == 0.0:  # no score above max / 2 - 1: scores inf or NaN (an overflowed model); NaN says so
        z[:] = np.nan
        return
    for _ in range(4 * n + 4):  # each set is visited once from each side: the loop ends far sooner
        mean = s1 / k
        disc = mean * mean - (s2 - 1.0) / k
        if below and disc < 0.0:
            step = (s2 - 2.0 * t * s1 + k * t * t - 1.0) / (2.0 * (s1 - k * t))
            if not step > 0.0:  # g(t) = 0 up to rounding
                break
            t += step
            k, s1, s2 = _above(z, t, 0.5)
            continue
        root = mean - np.sqrt(max(disc, 0.0))
        if below and root <= t:  # S(t) = S(tau) up to rounding
            t = root
            break
        kn, s1n, s2n = _above(z, root, 0.5)
        if kn == k:  # S(root) = S(t): root is tau
            t = root
            break
        t, k, s1, s2, below = root, kn, s1n, s2n, not below
    for i in range(n):
        u = max(0.5 * z[i] - t, 0.0)
        z[i] = u * u


@njit(cache=True, fastmath={"contract"}, error_model="numpy")  # no zero-division check: it vectorises
def sigmoid_inplace(z, bias, ib=None):
    """``z_i <- sigmoid(z_i + bias) = 1 / (1 + exp(-z_i - bias))`` in place, in z's precision.

    The exponential is ``exp_shifted64``/``exp_shifted32`` (vectorised; its argument clamped to
    [-700, 700], [-87, 87] in float32, so it never overflows: sigmoid(-700) ~ 1e-304 is the smallest
    weight). ``ib`` is int64 scratch of length >= len(z) (allocated when omitted).
    """
    n = z.shape[0]
    if ib is None:
        sc = np.empty(n, np.int64)
    else:
        sc = ib
    for i in range(n):
        z[i] = -z[i]
    if z.itemsize == 4:
        i32 = sc.view(np.int32)
        exp_shifted32(z, np.float32(bias), i32, i32.view(np.float32))
    else:
        exp_shifted64(z, bias, sc, sc.view(np.float64))
    for i in range(n):
        z[i] = 1.0 / (1.0 + z[i])


@njit(cache=True)
def relu_inplace(z, scale):
    """``z_i <- scale * max(z_i, 0)`` in place."""
    for i in range(z.shape[0]):
        z[i] = scale * max(z[i], 0.0)


@njit(cache=True, fastmath=_REDUCE)
def _back_sums(p, dp, root, buf):
    """``(sum_i w_i, sum_i w_i dp_i)`` in float64 with ``w_i = sqrt(p_i)`` (kept in ``buf``) if ``root``,
    else ``[p_i > 0]`` (vectorised reductions, as in ``_above``; ``buf`` float64, not ``p`` or ``dp``)."""
    a = 0.0
    b = 0.0
    if root:
        for i in range(p.shape[0]):
            w = np.sqrt(np.float64(p[i]))
            buf[i] = w
            a += w
            b += w * dp[i]
    else:
        for i in range(p.shape[0]):
            on = p[i] > 0.0
            a += 1.0 if on else 0.0
            b += dp[i] if on else 0.0
    return a, b


@njit(cache=True, inline="always")
def sparse_back_inplace(kind, p, dp, scale, buf):
    """``p <- scale J^T dp`` for the maps other than softmax: ``p`` holds the weights on entry.

    ``buf`` is float64 scratch of length >= len(p) (entmax keeps ``sqrt(p)`` there).

    Every Jacobian here is symmetric. ``kind`` is a code of ``ATTENTIONS`` (not softmax). One array
    read and written at the same index, and support masks multiplied instead of branched, so that
    the loops vectorise (an output that might overlap an input would need a runtime check that
    fails, in place, and falls back to scalar code).
    """
    n = p.shape[0]
    if kind == SPARSEMAX:
        k, s = _back_sums(p, dp, False, buf)
        mean = s / k if k > 0.0 else np.nan  # no support: NaN weights of non-finite scores
        for i in range(n):
            p[i] = scale * (dp[i] - mean) * (1.0 if p[i] > 0.0 else 0.0)
    elif kind == ENTMAX15:
        sg, sgd = _back_sums(p, dp, True, buf)
        c = sgd / sg if sg > 0.0 else np.nan  # no support: NaN weights of non-finite scores
        for i in range(n):
            p[i] = scale * buf[i] * (dp[i] - c)
    elif kind == SIGMOID:
        for i in range(n):
            p[i] = scale * p[i] * (1.0 - p[i]) * dp[i]
    elif kind == RELU:  # p = relu(z) / n
        w = scale / n
        for i in range(n):
            p[i] = w * dp[i] * (1.0 if p[i] > 0.0 else 0.0)
    else:  # no fall-through: callers check the code first; NaN (a raise would serialise the prange callers)
        for i in range(n):
            p[i] = np.nan


@njit(cache=True)
def sparse_back(kind, p, dp, dz, scale):
    """``dz = scale J^T dp`` from the weights ``p`` (``sparse_back_inplace`` on a copy; ``dz`` may be
    ``p``, not ``dp``)."""
    for i in range(p.shape[0]):
        dz[i] = p[i]
    sparse_back_inplace(kind, dz, dp, scale, np.empty(p.shape[0]))
