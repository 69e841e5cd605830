"""Central-limit aggregation of layer predictors (docs/theory/clt.md).

A depth-L model whose prediction is the equal-weight mean of L per-layer predictors ``f_l`` has
layer errors ``e_l = f_l - y*`` with second-moment matrix ``M_lm = E[e_l e_m]``. Exactly,

    R_L = 1^T M 1 / L^2 = C_L + (A_L - C_L) / L,
    A_L = (1/L) sum_l M_ll,  C_L = (1/(L(L-1))) sum_(l != m) M_lm,
    A_L - C_L = (1/(L-1)) sum_l E(f_l - yhat)^2 >= 0,

so the loss is a shared error ``C_L`` plus layer disagreement averaged away like ``1/L``. This module
measures the decomposition on data (M0) and gives the closed-form losses of the noise models
M1-M6.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._choices import CLT_MODELS
from ._validate import SEED_MAX, check_choice, check_int, check_real

# ---------------------------------------------------------------- argument checks


def _array(name, value, *, ndim, lo=None, lo_open=False, min_len=1):
    """Finite float array of the given ndim (and optional lower bound), else ``ValueError``."""
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name}={value!r}: must be a {ndim}-d array of real numbers") from None
    if arr.ndim != ndim:
        raise ValueError(f"{name} with shape {arr.shape}: must be a {ndim}-d array")
    if arr.shape[0] < min_len:
        raise ValueError(f"{name} with shape {arr.shape}: must have at least {min_len} row(s)")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name}: must be finite (found nan or inf)")
    if lo is not None:
        bad = arr <= lo if lo_open else arr < lo
        if np.any(bad):
            raise ValueError(f"{name}={arr[bad].flat[0]!r} (an entry): must be {'>' if lo_open else '>='} {lo}")
    return arr


def _depths(depths, hi=10**9):
    """Depths as an int array (scalar or 1-d), each in [1, hi]."""
    arr = np.asarray(depths)
    scalar = arr.ndim == 0
    flat = np.atleast_1d(arr)
    if flat.ndim != 1 or flat.size == 0:
        raise ValueError(f"depths={depths!r}: must be a positive integer or a 1-d list of them")
    out = np.array([check_int("depths", v.item() if hasattr(v, "item") else v, lo=1, hi=hi) for v in flat])
    return out, scalar


# ---------------------------------------------------------------- M0: the exact decomposition


@dataclass(frozen=True)
class Decomposition:
    """The exact ensemble decomposition of an L-layer prediction.

    Attributes
    ----------
    L : number of layers.
    R_L : ``E[(yhat - y*)^2]`` with ``yhat = mean_l f_l``.
    A_L : mean single-layer loss ``(1/L) sum_l M_ll``.
    C_L : mean cross-layer error product (nan for L = 1).
    gap : ``A_L - C_L`` (nan for L = 1).
    M : (L, L) second-moment matrix of the layer errors.
    identity_residual : :func:`identity_residual` of ``R_L, A_L, C_L``.
    disagreement : ``(1/(L-1)) sum_l E(f_l - yhat)^2`` (nan for L = 1).
    sq_err : (n,) per-context squared errors ``(yhat - y*)^2``.
    layer_losses : (L,) ``M_ll``.
    """

    L: int
    R_L: float
    A_L: float
    C_L: float
    gap: float
    M: np.ndarray
    identity_residual: float
    disagreement: float
    sq_err: np.ndarray
    layer_losses: np.ndarray


def identity_residual(R, A, C, L) -> float:
    """``|R_L - (C_L + (A_L - C_L)/L)| / max(R_L, A_L)`` (for L = 1, ``|R_1 - A_1| / max(R_1, A_1)``).

    Relative to the larger of the loss and the mean layer loss, because the sums behind ``A_L`` and
    ``C_L`` round at the scale of ``A_L`` (``|C_L| <= A_L``), which can exceed ``R_L`` by orders of
    magnitude when the layers' errors cancel (a deep linear model at the Jacobi steps: ``A_L/R_L``
    about 10^7). Absolute when both are 0.

    >>> identity_residual(1.0, 3.0, 0.5, 2), identity_residual(1.0, 1.0, float("nan"), 1)
    (0.25, 0.0)
    """
    predicted = A if L == 1 else C + (A - C) / L
    scale = max(R, A)
    diff = abs(R - predicted)
    return float(diff / scale) if scale > 0 else float(diff)


def decompose(f, target) -> Decomposition:
    """Split the loss of an equal-weight layer ensemble into shared error and disagreement.

    Parameters
    ----------
    f : array_like, shape (n, L)
        Per-layer predictions on n contexts; the model predicts ``f.mean(axis=1)``.
    target : array_like, shape (n,)
        Targets ``y*``.

    Returns
    -------
    Decomposition

    Examples
    --------
    >>> dec = decompose([[1.0, 3.0], [0.0, 2.0]], [1.0, 0.0])
    >>> dec.R_L, dec.A_L, dec.C_L, dec.gap
    (1.0, 2.0, 0.0, 2.0)
    """
    f = _array("f", f, ndim=2)
    y = _array("target", target, ndim=1)
    n, L = f.shape
    if y.shape[0] != n:
        raise ValueError(f"target with shape {y.shape}: must have shape ({n},) to match f with shape {f.shape}")
    if L < 1:
        raise ValueError(f"f with shape {f.shape}: must have at least one layer (column)")
    # Everything is computed from the errors e (not from f and yhat) so that rounding is relative
    # to the errors, and the identity holds to machine precision even when f is far from 0.
    e = f - y[:, None]
    M = e.T @ e / n
    e_bar = e.mean(axis=1)  # yhat - y*
    sq_err = e_bar**2
    R = float(sq_err.mean())
    trace = float(np.trace(M))
    A = trace / L
    if L > 1:
        C = (float(M.sum()) - trace) / (L * (L - 1))
        disagreement = float(np.sum(np.mean((e - e_bar[:, None]) ** 2, axis=0))) / (L - 1)
    else:
        C = float("nan")
        disagreement = float("nan")
    residual = identity_residual(R, A, C, L)
    return Decomposition(
        L=L,
        R_L=R,
        A_L=A,
        C_L=C,
        gap=A - C,
        M=M,
        identity_residual=float(residual),
        disagreement=disagreement,
        sq_err=sq_err,
        layer_losses=np.diag(M).copy(),
    )


def optimal_weight_loss(M):
    """Smallest loss ``w^T M w`` over weights with ``sum w = 1``, and the weights.

    For invertible M this is ``1 / (1^T M^-1 1)`` with ``w = M^-1 1 / (1^T M^-1 1)``. We solve the
    Lagrange system ``[[M, -1], [1^T, 0]] [w; mu] = [0; 1]`` by least squares, which stays correct
    for singular M (e.g. identical layers, or a direction of zero error, where the optimum is 0).

    Parameters
    ----------
    M : array_like, shape (L, L)
        Symmetric positive semi-definite second-moment matrix of the layer errors.

    Returns
    -------
    loss : float
    weights : ndarray, shape (L,)

    Examples
    --------
    >>> loss, w = optimal_weight_loss([[1.0, 0.0], [0.0, 3.0]])
    >>> round(loss, 6), w.round(6).tolist()
    (0.75, [0.75, 0.25])
    """
    M = _array("M", M, ndim=2)
    L = M.shape[0]
    if M.shape != (L, L):
        raise ValueError(f"M with shape {M.shape}: must be square")
    scale = max(float(np.max(np.abs(M))), np.finfo(float).tiny)
    if not np.allclose(M, M.T, rtol=1e-10, atol=1e-12 * scale):
        raise ValueError("M: must be symmetric")
    if np.linalg.eigvalsh((M + M.T) / 2).min() < -1e-10 * scale:
        raise ValueError("M: must be positive semi-definite")
    K = np.zeros((L + 1, L + 1))
    K[:L, :L] = M / scale  # unit scale keeps the bordered system well balanced
    K[:L, L] = -1.0
    K[L, :L] = 1.0
    rhs = np.zeros(L + 1)
    rhs[L] = 1.0
    sol = np.linalg.lstsq(K, rhs, rcond=None)[0]
    w = sol[:L]
    w = w / w.sum()
    loss = max(float(w @ M @ w), 0.0)
    return loss, w


# ---------------------------------------------------------------- M1, M2, M4: closed forms


def clt_loss(model, depths, sigma2, shared, rho=None, r=None, g=None) -> np.ndarray:
    """Exact finite-depth loss of the equal-weight mean of L noisy layers.

    Each layer's error is ``s + n_l`` with shared part s (``E s^2 = shared``) and layer noise of
    variance ``sigma2`` and correlation ``rho(|l - m|)``; the loss is
    ``shared + (sigma2 / L^2) sum_(l,m) rho(|l - m|)``:

    - ``"iid"`` (M1): ``shared + sigma2 / L``.
    - ``"equicorrelated"`` (M2, needs ``rho`` in ``[-1/(L-1), 1]`` for every L):
      ``shared + rho sigma2 + (1 - rho) sigma2 / L``.
    - ``"ar1"`` (M4, ``rho(k) = r^k``, needs ``|r| < 1``):
      ``shared + (sigma2/L^2) [L(1+r)/(1-r) - 2r(1-r^L)/(1-r)^2]``.
    - ``"powerlaw"`` (M4, ``rho(k) = (1+k)^-g``, needs ``g >= 0``): the exact double sum
      ``shared + (sigma2/L^2) [L + 2 sum_(k=1)^(L-1) (L-k)(1+k)^-g]``, evaluated for all depths from
      two cumulative sums (O(max depth) in total); see :func:`powerlaw_asymptote`.

    Parameters that do not belong to ``model`` must be left ``None``.

    Parameters
    ----------
    model : str
        One of ``"iid"``, ``"equicorrelated"``, ``"ar1"``, ``"powerlaw"``.
    depths : int or sequence of int
        Depths L >= 1 (at most 10^7 for ``"powerlaw"``).
    sigma2, shared : float
        Layer-noise variance and shared error ``E s^2``; >= 0.
    rho, r, g : float, optional
        Model parameters (see above).

    Returns
    -------
    ndarray of float, one loss per depth (a float if ``depths`` is a scalar).

    Examples
    --------
    >>> clt_loss("iid", [1, 2, 4], sigma2=1.0, shared=0.5).tolist()
    [1.5, 1.0, 0.75]
    >>> float(clt_loss("ar1", 2, sigma2=1.0, shared=0.0, r=0.5))
    0.75
    """
    model = check_choice("model", model, CLT_MODELS)
    sigma2 = check_real("sigma2", sigma2, lo=0)
    shared = check_real("shared", shared, lo=0)
    needed = {"iid": (), "equicorrelated": ("rho",), "ar1": ("r",), "powerlaw": ("g",)}[model]
    given = {"rho": rho, "r": r, "g": g}
    for name, value in given.items():
        if name in needed and value is None:
            raise ValueError(f"{name}=None: must be given (a real number) for model {model!r}")
        if name not in needed and value is not None:
            raise ValueError(f"{name}={value!r}: must be None for model {model!r}")
    L, scalar = _depths(depths, hi=10**7 if model == "powerlaw" else 10**12)
    Lf = L.astype(float)
    if model == "iid":
        noise = 1.0 / Lf
    elif model == "equicorrelated":
        lo = -1.0 / (L.max() - 1) if L.max() > 1 else -np.inf
        rho = check_real("rho", rho, hi=1)
        if rho < lo:
            raise ValueError(f"rho={rho!r}: must be in [{lo}, 1] (>= -1/(L-1) for L = {L.max()})")
        noise = rho + (1.0 - rho) / Lf
    elif model == "ar1":
        r = check_real("r", r, lo=-1, hi=1, lo_open=True, hi_open=True)
        noise = (Lf * (1 + r) / (1 - r) - 2 * r * (1 - r**Lf) / (1 - r) ** 2) / Lf**2
    else:
        g = check_real("g", g, lo=0)
        lag = np.arange(1, L.max(), dtype=float)
        rho_k = (1.0 + lag) ** (-g)
        s1 = np.concatenate(([0.0], np.cumsum(rho_k)))  # s1[L-1] = sum_(k<L) rho_k
        s2 = np.concatenate(([0.0], np.cumsum(lag * rho_k)))
        noise = (Lf + 2.0 * (Lf * s1[L - 1] - s2[L - 1])) / Lf**2
    out = shared + sigma2 * noise
    return out[0] if scalar else out


def powerlaw_asymptote(L, sigma2, g):
    """Large-L noise part of the power-law model: ``2 sigma2 L^-g / ((1 - g)(2 - g))``.

    Valid for ``0 < g < 1`` (non-summable correlation): sub-inverse depth scaling, approached with
    relative corrections of order ``L^(g-1)``.

    Examples
    --------
    >>> round(float(powerlaw_asymptote(100, 1.0, 0.5)), 6)
    0.266667
    """
    if np.ndim(L) == 0:
        L = check_real("L", L, lo=0, lo_open=True)
    else:
        L = _array("L", L, ndim=1, lo=0, lo_open=True)
    sigma2 = check_real("sigma2", sigma2, lo=0)
    g = check_real("g", g, lo=0, hi=1, lo_open=True, hi_open=True)
    return 2.0 * sigma2 * np.power(L, -g) / ((1.0 - g) * (2.0 - g))


# ---------------------------------------------------------------- M3: unequal variances


def unequal_variance_loss(shared, sigma2_l) -> float:
    """Equal-weight loss with independent layer noise of variances ``sigma2_l``: ``shared + sum / L^2``.

    Examples
    --------
    >>> unequal_variance_loss(0.1, [1.0, 3.0])
    1.1
    """
    shared = check_real("shared", shared, lo=0)
    s = _array("sigma2_l", sigma2_l, ndim=1, lo=0)
    return shared + float(s.sum()) / s.size**2


def inverse_variance_loss(shared, sigma2_l) -> float:
    """Loss with inverse-variance weights ``w_l ~ 1/sigma2_l``: ``shared + 1 / sum(1/sigma2_l)``.

    Examples
    --------
    >>> inverse_variance_loss(0.0, [1.0, 3.0])
    0.75
    """
    shared = check_real("shared", shared, lo=0)
    s = _array("sigma2_l", sigma2_l, ndim=1, lo=0, lo_open=True)
    return shared + 1.0 / float(np.sum(1.0 / s))


def shrinking_noise_exponent(eta) -> float:
    """Depth exponent ``1 + eta`` when every layer's noise variance shrinks like ``L^-eta``.

    Examples
    --------
    >>> shrinking_noise_exponent(0.5)
    1.5
    """
    return 1.0 + check_real("eta", eta, lo=0)


def shrinking_noise_loss(depths, shared, sigma2, eta) -> np.ndarray:
    """Loss when all L layers carry independent noise of variance ``sigma2 L^-eta`` (same for every l).

    ``shared + (1/L^2) L sigma2 L^-eta = shared + sigma2 L^-(1 + eta)``.

    Examples
    --------
    >>> shrinking_noise_loss([1, 4], 0.0, 1.0, 0.5).tolist()
    [1.0, 0.125]
    """
    L, scalar = _depths(depths, hi=10**12)
    shared = check_real("shared", shared, lo=0)
    sigma2 = check_real("sigma2", sigma2, lo=0)
    exponent = shrinking_noise_exponent(eta)
    out = shared + sigma2 * L.astype(float) ** (-exponent)
    return out[0] if scalar else out


# ---------------------------------------------------------------- M5: heavy tails


def symmetric_stable_rvs(s, size, rng):
    """Symmetric stable draws of index s, characteristic function ``exp(-|t|^s)``.

    Chambers-Mallows-Stuck: with ``V ~ U(-pi/2, pi/2)`` and ``W ~ Exp(1)``,
    ``X = sin(s V) / cos(V)^(1/s) * (cos((1 - s) V) / W)^((1 - s)/s)`` (s = 2 gives N(0, 2), s = 1
    the standard Cauchy).

    Examples
    --------
    >>> x = symmetric_stable_rvs(1.5, 4, np.random.default_rng(0))
    >>> x.shape
    (4,)
    """
    s = check_real("s", s, lo=0, hi=2, lo_open=True)
    V = rng.uniform(-np.pi / 2, np.pi / 2, size)
    W = rng.standard_exponential(size)
    return np.sin(s * V) / np.cos(V) ** (1.0 / s) * (np.cos((1.0 - s) * V) / W) ** ((1.0 - s) / s)


@dataclass(frozen=True)
class StableScaling:
    """Median squared error of the mean of L symmetric stable variables, and its depth exponent.

    Attributes
    ----------
    depths : (m,) depths.
    medians : (m,) median of ``(mean of L draws)^2``.
    log_se : (m,) standard error of ``log median`` (distribution-free order-statistic interval).
    exponent : fitted decay exponent, ``median ~ L^-exponent`` (weighted least squares in logs).
    exponent_se : its standard error from the per-depth errors.
    theory : ``2 - 2/s``.
    """

    depths: np.ndarray
    medians: np.ndarray
    log_se: np.ndarray
    exponent: float
    exponent_se: float
    theory: float


def stable_median_scaling(s, depths, n, seed) -> StableScaling:
    """Simulate M5: the typical squared error of the mean of L heavy-tailed layer errors.

    For symmetric stable noise of index s the mean of L draws is ``L^(1/s - 1)`` times one draw,
    so the median squared error falls as ``L^-(2 - 2/s)`` (no gain for s <= 1, while the MSE is
    infinite for s < 2). Each depth uses ``n`` fresh replicates; the median's error bar is the
    distribution-free 95 % order-statistic interval divided by 2 x 1.96.

    Parameters
    ----------
    s : float
        Stability index in (0, 2].
    depths : sequence of int
        At least two distinct depths >= 1.
    n : int
        Replicates per depth, >= 100.
    seed : int
        Seed of ``numpy.random.SeedSequence``.

    Returns
    -------
    StableScaling

    Examples
    --------
    >>> res = stable_median_scaling(1.5, [1, 4, 16], n=2000, seed=0)
    >>> round(res.theory, 4), bool(abs(res.exponent - res.theory) < 0.2)
    (0.6667, True)
    """
    s = check_real("s", s, lo=0, hi=2, lo_open=True)
    L, _ = _depths(depths, hi=10**6)
    if np.unique(L).size < 2:
        raise ValueError(f"depths={depths!r}: must contain at least two distinct depths")
    n = check_int("n", n, lo=100)
    seed = check_int("seed", seed, lo=0, hi=SEED_MAX)
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    z = 1.959963984540054
    j_lo = max(int(np.floor(n / 2 - z * np.sqrt(n) / 2)), 0)
    j_hi = min(int(np.ceil(n / 2 + z * np.sqrt(n) / 2)), n - 1)
    medians = np.empty(L.size)
    log_se = np.empty(L.size)
    for i, depth in enumerate(L):
        total = np.zeros(n)
        for start in range(0, int(depth), 256):  # bounded memory for deep ensembles
            width = min(256, int(depth) - start)
            total += symmetric_stable_rvs(s, (n, width), rng).sum(axis=1)
        sq = np.sort((total / depth) ** 2)
        medians[i] = np.median(sq)
        log_se[i] = (sq[j_hi] - sq[j_lo]) / (2 * z) / medians[i]
    x = np.log(L.astype(float))
    w = 1.0 / log_se**2
    xbar = np.sum(w * x) / w.sum()
    sxx = np.sum(w * (x - xbar) ** 2)
    slope = np.sum(w * (x - xbar) * np.log(medians)) / sxx
    return StableScaling(
        depths=L,
        medians=medians,
        log_se=log_se,
        exponent=float(-slope),
        exponent_se=float(np.sqrt(1.0 / sxx)),
        theory=2.0 - 2.0 / s,
    )


# ---------------------------------------------------------------- M6: Maurey


def maurey_bound(R_inf, var, L):
    """Maurey's empirical method: L i.i.d. draws around the infinite-depth predictor give
    ``E R_L <= R_inf + var / L`` (equality for independent draws).

    Parameters
    ----------
    R_inf : float
        Loss of the mean (infinite-depth) predictor, >= 0.
    var : float
        Mean variance of a single draw around it, >= 0.
    L : int or sequence of int
        Depths >= 1.

    Examples
    --------
    >>> maurey_bound(0.1, 1.0, [1, 10]).tolist()
    [1.1, 0.2]
    """
    R_inf = check_real("R_inf", R_inf, lo=0)
    var = check_real("var", var, lo=0)
    depths, scalar = _depths(L, hi=10**12)
    out = R_inf + var / depths.astype(float)
    return out[0] if scalar else out
