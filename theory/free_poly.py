"""Free (untied) linear attention: the best residual polynomial of degree <= L (docs/theory/free.md).

Untied isotropic layers realise any residual ``r(lambda) = prod_l (1 - gamma_l lambda / L)`` with
``r(0) = 1``. The loss ``sum_k w_k r(lambda_k)^2`` (``w_k = lambda_k omega_k``) is minimised by the
kernel polynomial of the measure ``w``; its minimum is ``1 / sum_{j <= L} p_j(0)^2`` with ``p_j``
orthonormal for ``w``. On the continuum measure ``(c_lambda c_omega / a) x^(zeta-1) dx`` this gives a
closed form and a shifted Jacobi polynomial; on the finite spectrum it is computed by Lanczos.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import eigh_tridiagonal
from scipy.special import eval_jacobi, gammaln, roots_jacobi

from ._validate import check_int, check_real
from .mode_sums import mode_rule
from .spectra import PowerLawSpectrum

_EPS = np.finfo(np.float64).eps


# --------------------------------------------------------------------------- continuum measure
def free_continuum(spec: PowerLawSpectrum, L):
    """Free optimum on the continuum measure: ``(c_l c_o / a) Gamma(zeta) Gamma(zeta+1) (L!)^2 / Gamma(L+zeta+1)^2``.

    Computed with ``gammaln`` (no overflow up to ``L = 10^7``). Needs ``a > 0`` and ``a + b > 1``.

    Examples
    --------
    >>> s = PowerLawSpectrum(1.0, 1.0, 10)          # zeta = 1: measure dx on (0, 1)
    >>> round(float(free_continuum(s, 0)), 12)      # int_0^1 dx
    1.0
    >>> round(float(free_continuum(s, 1)), 12)      # min_c int_0^1 (1 - c x)^2 dx = 1/4
    0.25
    """
    spec.require_asymptotic()
    Lr, scalar = _nonneg_depths(L)
    z = spec.zeta
    out = spec.prefactor * np.exp(gammaln(z) + gammaln(z + 1) + 2 * gammaln(Lr + 1) - 2 * gammaln(Lr + z + 1))
    return float(out[0]) if scalar else out


def free_asymptote(spec: PowerLawSpectrum, L):
    """Large-depth limit ``(c_l c_o / a) zeta Gamma(zeta)^2 L^(-2 zeta)`` of :func:`free_continuum`.

    Examples
    --------
    >>> round(float(free_asymptote(PowerLawSpectrum(1.0, 1.0, 10), 10)), 12)
    0.01
    """
    spec.require_asymptotic()
    Lr, scalar = _nonneg_depths(L)
    z = spec.zeta
    out = spec.prefactor * z * np.exp(2 * gammaln(z) - 2 * z * np.log(Lr))
    return float(out[0]) if scalar else out


def jacobi_residual(zeta, L, lam, lam1=1.0):
    """Optimal continuum residual ``P_L^(zeta,0)(1 - 2 lam/lam1) / P_L^(zeta,0)(1)`` (equals 1 at ``lam = 0``).

    Examples
    --------
    >>> jacobi_residual(1.0, 1, [0.0, 0.5, 1.0]).round(12).tolist()   # 1 - 3x/2 for zeta = 1
    [1.0, 0.25, -0.5]
    """
    zeta = check_real("zeta", zeta, lo=0, lo_open=True)
    L = check_int("L", L, lo=0, hi=10**6)
    lam1 = check_real("lam1", lam1, lo=0, lo_open=True)
    t = 1.0 - 2.0 * np.asarray(lam, dtype=np.float64) / lam1
    return eval_jacobi(L, zeta, 0.0, t) / eval_jacobi(L, zeta, 0.0, 1.0)


@dataclass(frozen=True)
class JacobiSteps:
    """Roots ``rho`` (lambda units; decreasing, or in the layers' order from ``jacobi_start``) and steps ``gamma = L / rho``."""

    zeta: float
    L: int
    lam1: float
    rho: np.ndarray
    gamma: np.ndarray

    def residual(self, lam) -> np.ndarray:
        """``prod_l (1 - lam / rho_l)``: the residual realised by layers with steps ``gamma_l``."""
        lam = np.asarray(lam, dtype=np.float64)
        return np.prod(1.0 - lam[..., None] / self.rho, axis=-1)


def jacobi_steps(zeta, L, lam1=1.0) -> JacobiSteps:
    """Per-layer step sizes realising the free continuum optimum.

    Examples
    --------
    >>> js = jacobi_steps(1.0, 1)          # r(x) = 1 - 3x/2: root 2/3, step 3/2
    >>> js.rho.round(12).tolist(), js.gamma.round(12).tolist()
    ([0.666666666667], [1.5])
    """
    zeta = check_real("zeta", zeta, lo=0, lo_open=True)
    L = check_int("L", L, lo=1, hi=10**5)
    lam1 = check_real("lam1", lam1, lo=0, lo_open=True)
    t, _ = roots_jacobi(L, zeta, 0.0)
    rho = np.sort(lam1 * (1.0 - t) / 2.0)[::-1]
    return JacobiSteps(zeta, L, lam1, rho, L / rho)


def leja_order(rho) -> np.ndarray:
    """Indices putting the roots ``rho`` in Leja order, the order in which layers should take them.

    A depth-L model applies its layers one after another, so the residual is built as partial
    products ``prod_{l<=m} (1 - lam/rho_l)``. With the small roots together (decreasing order)
    the partial products reach ``(lam1/rho_min)^k`` on the spectrum, and any error that is not a
    polynomial in S (a perturbation of one layer's query-key map mixes the eigendirections) is
    multiplied by them: at d = 32, P = 256, L = 16 one Adam step of 1e-5 raised the loss 7,000-fold
    from the Jacobi steps in decreasing order, and not measurably in Leja order. Leja order (first
    the largest root, then each time the root farthest, in product of distances, from those
    taken) keeps every partial product of moderate size, as in Richardson iteration.

    Examples
    --------
    >>> leja_order([1.0, 2.0, 3.0]).tolist()   # 3 first; then 1 (distance 2 > 1); then 2
    [2, 0, 1]
    """
    r = np.asarray(rho, dtype=np.float64)
    if r.ndim != 1 or r.size == 0 or not np.all(np.isfinite(r)):
        raise ValueError(f"rho={rho!r}: must be a non-empty 1-d array of finite roots")
    order = [int(np.argmax(np.abs(r)))]
    logdist = np.zeros(r.size)  # log of the product of distances to the roots taken (finite at any depth)
    with np.errstate(divide="ignore"):
        for _ in range(r.size - 1):
            logdist += np.log(np.abs(r - r[order[-1]]))
            logdist[order] = np.nan  # taken; a repeated root (distance 0, -inf) still comes last
            order.append(int(np.nanargmax(logdist)) if np.any(logdist > -np.inf) else int(np.nanargmin(logdist)))
    return np.asarray(order)


def check_jacobi_steps(zeta, L, lam1=1.0, n: int = 257) -> float:
    """Largest ``|prod_l (1 - lam/rho_l) - jacobi_residual(lam)|`` over ``n`` points of ``[0, lam1]``.

    Examples
    --------
    >>> check_jacobi_steps(1.5, 12) < 1e-10
    True
    """
    js = jacobi_steps(zeta, L, lam1)
    lam = np.linspace(0.0, js.lam1, check_int("n", n, lo=2))
    return float(np.max(np.abs(js.residual(lam) - jacobi_residual(zeta, L, lam, lam1))))


# --------------------------------------------------------------------------- finite spectrum
def free_discrete(spec: PowerLawSpectrum, L, head: int = 4096):
    """Exact free optimum on the finite spectrum: ``min_{deg r <= L, r(0)=1} sum_k w_k r(lambda_k)^2``.

    The minimum is ``1 / sum_{j<=L} p_j(0)^2`` with ``p_j`` orthonormal for the discrete measure
    ``w_k = lambda_k omega_k`` at nodes ``lambda_k``; one Lanczos run gives every depth. Lanczos
    loses orthogonality as soon as a Ritz value locks onto an isolated top eigenvalue, so the top
    ``head`` modes are treated with full re-orthogonalisation. The dense tail is first replaced by
    its ``(Lmax+1)``-point Gauss rule, which integrates every polynomial of degree ``<= 2 Lmax + 1``
    exactly and so leaves the minimum unchanged. That rule comes from plain Lanczos on the tail;
    its semi-orthogonality is checked from the Ritz residuals (Paige), and ``head`` grows until
    the check passes. Far modes, where the residual has no roots, enter through block Gauss
    rules in k (see ``_free_curve``), so the cost does not grow with d there; it grows like
    ``Lmax^3`` (re-orthogonalisation on about ``4 Lmax`` atoms): about 7 s at ``Lmax = 1024``.

    Parameters
    ----------
    spec : PowerLawSpectrum
    L : int or sequence of int
        Depths ``>= 0`` (``L = 0`` gives ``sum_k w_k``).
    head : int
        Initial number of top modes handled exactly (tuning only; the result does not depend on it).

    Examples
    --------
    >>> s = PowerLawSpectrum(1.0, 0.0, 2)        # nodes 1, 1/2 with weights 1, 1/2
    >>> free_discrete(s, [0, 1, 2]).round(12).tolist()
    [1.5, 0.111111111111, 0.0]
    """
    Lr, scalar = _nonneg_depths(L)
    if np.any(Lr != np.round(Lr)):
        raise ValueError(f"L={L!r}: depths must be integers")
    depths = Lr.astype(np.int64)
    head = check_int("head", head, lo=1)
    n = int(depths.max())
    curve = _free_curve(spec, n, head)
    out = curve[depths]
    return float(out[0]) if scalar else out


def _free_curve(spec: PowerLawSpectrum, n: int, head: int) -> np.ndarray:
    """``min_L`` for L = 0..n on the spectrum, its tail compressed when the residuals are smooth there.

    Modes past ``K`` are replaced by the block Gauss rules of
    :func:`~depthscale.theory.mode_sums.mode_rule` (32 points per block ``[k0, 2 k0)``, exact for
    polynomials of degree 63 in k). That leaves the minimum unchanged to rounding when the
    residuals the minimisation meets vary slowly in k on every block. The roots of a degree-n
    residual near 0 follow the arcsine law, about ``(2n/pi) sqrt(x)`` of them below ``x``, so a
    block past ``K = (n/pi)^(2/a)`` holds at most about two. ``K >= 4n`` besides, so that the
    degree stays well below the number of atoms (else the residual could vanish on the few
    compressed atoms). This is a rule that holds in practice, not a proof:
    ``tests/theory/test_free_poly.py`` checks it against the uncompressed measure. When
    ``4 K >= d`` the plain measure is used.
    """
    K = max(head, 4 * n)
    if spec.a > 0:
        K = max(K, int(np.ceil((max(n, 1) / np.pi) ** (2.0 / spec.a))))
    if 4 * K < spec.d:
        rule = mode_rule(spec.d, K)
        x = np.power(rule.k, -spec.a)
        w = spec.c_lambda * spec.c_omega * rule.power(spec.a + spec.b)
    else:
        x, w = spec.lam / spec.lam1, spec.weights
    scale = float(w.sum())
    return scale * _min_curve(x, w / scale, n, head)


def _min_curve(x, w, n, head):
    """``min_L`` for L = 0..n on the measure (x, w); x sorted decreasing."""
    if n == 0:
        return np.array([w.sum()])
    K = head
    while K < x.size:
        nodes, weights, ok = _tail_gauss_rule(x[K:], w[K:], n + 1)
        if ok:
            x_h = np.concatenate([x[:K], nodes])
            w_h = np.concatenate([w[:K], weights])
            mu0, alpha, beta, broke = _lanczos_full(x_h, w_h, n)
            return _kernel_minima(mu0, alpha, beta, broke, n)
        K *= 4
    mu0, alpha, beta, broke = _lanczos_full(x, w, n)
    return _kernel_minima(mu0, alpha, beta, broke, n)


def _tail_gauss_rule(x, w, m):
    """m-point Gauss rule of the discrete measure (x, w) by plain Lanczos; ``ok`` if semi-orthogonal."""
    mu0 = float(w.sum())
    q = np.sqrt(w / mu0)
    q_prev = np.zeros_like(q)
    v = np.empty_like(q)
    tmp = np.empty_like(q)
    alpha, beta = np.zeros(m), np.zeros(m)
    b = 0.0
    for j in range(m):
        # in-place updates: this loop is memory bound at d ~ 10^6, so avoid temporaries. NumPy's
        # dot, not scipy.linalg.blas: SciPy's bundled OpenBLAS ddot/daxpy measured 20-40x slower
        np.multiply(x, q, out=v)
        a = float(np.dot(q, v))
        v -= np.multiply(q, a, out=tmp)
        v -= np.multiply(q_prev, b, out=tmp)
        b = float(np.sqrt(np.dot(v, v)))
        alpha[j], beta[j] = a, b
        if b <= 64 * _EPS * x[0]:  # the tail has at most j+1 distinct nodes: its own rule is exact
            return x, w, True
        v *= 1.0 / b
        q_prev, q, v = q, v, q_prev
    nodes, vecs = eigh_tridiagonal(alpha, beta[:-1])
    # Paige: loss of orthogonality ~ eps ||A|| / min_i (beta_m |s_mi|); demand it stays below ~1e-10
    ritz_residual = beta[-1] * np.abs(vecs[-1, :])
    ok = bool(ritz_residual.min() >= 1e-6 * x[0])
    return nodes, mu0 * vecs[0, :] ** 2, ok


def _lanczos_full(x, w, n):
    """Lanczos with full (twice-iterated Gram-Schmidt) re-orthogonalisation: recurrence coefficients."""
    mu0 = float(w.sum())
    N = x.size
    steps = min(n, N)
    Q = np.zeros((steps + 1, N))
    Q[0] = np.sqrt(w / mu0)
    alpha, beta = np.zeros(steps), np.zeros(steps)
    for j in range(steps):
        v = x * Q[j]
        alpha[j] = Q[j] @ v
        for _ in range(2):  # CGS2: orthogonal to working precision
            v -= Q[: j + 1].T @ (Q[: j + 1] @ v)
        beta[j] = np.sqrt(v @ v)
        if beta[j] <= 64 * _EPS * x.max():  # measure supported on j+1 points: exact zero beyond
            return mu0, alpha[: j + 1], beta[: j + 1], True
        Q[j + 1] = v / beta[j]
    return mu0, alpha, beta, False


def _kernel_minima(mu0, alpha, beta, broke, n):
    """``1 / sum_{j<=L} p_j(0)^2`` for L = 0..n from the recurrence, rescaled to avoid overflow."""
    out = np.zeros(n + 1)
    p_prev, p = 0.0, 1.0 / np.sqrt(mu0)
    log_scale = 0.0  # true p_j(0) = p * exp(log_scale)
    S = p * p
    out[0] = 1.0 / S
    J = alpha.size if not broke else alpha.size - 1
    for j in range(min(J, n)):
        p_next = (-alpha[j] * p - (beta[j - 1] if j > 0 else 0.0) * p_prev) / beta[j]
        p_prev, p = p, p_next
        S += p * p
        if S > 1e200:  # p_j(0) grows geometrically outside the support: keep numbers in range
            f = np.sqrt(S)
            p, p_prev, S = p / f, p_prev / f, 1.0
            log_scale += np.log(f)
        out[j + 1] = np.exp(-np.log(S) - 2.0 * log_scale)
    # past a breakdown the measure has <= j+1 atoms and a residual with roots on all of them exists
    return out


def _nonneg_depths(L) -> tuple[np.ndarray, bool]:
    scalar = np.ndim(L) == 0
    arr = np.atleast_1d(np.asarray(L, dtype=np.float64))
    if arr.ndim != 1 or arr.size == 0 or not np.all(np.isfinite(arr)) or np.any(arr < 0) or np.any(arr > 10**7):
        raise ValueError(f"L={L!r}: must be a number in [0, 10^7] or a non-empty 1-d list of them")
    return arr, scalar


__all__ = [
    "free_continuum",
    "free_asymptote",
    "jacobi_residual",
    "jacobi_steps",
    "JacobiSteps",
    "check_jacobi_steps",
    "free_discrete",
]
