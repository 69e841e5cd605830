"""The difficult-task floor of linear attention (docs/claims.md, linear-floor).

A depth-L linear-attention model in the population limit predicts ``yhat = beta^T p(Sigma) q`` with
``p`` a polynomial without constant term. On the top-k task the target is ``y* = beta^T t``, ``t``
the mean of the k context inputs most cosine-similar to the query ``q``, so no polynomial reaches
it: the irreducible loss is

    R_irr = T - h^T G^+ h,   Phi(q) = [Sigma q, ..., Sigma^D q],
    T = E[t^T Omega t],  h = E[Phi^T Omega t],  G = E[Phi^T Omega Phi],  G_rs = tr(Omega Sigma^(r+s+1)).

``T`` and ``h`` are estimated by Monte Carlo; ``G`` is exact. To leading order
``E[t | q] ~ gamma_(P,k) Sigma q / sqrt(tr Sigma^2)`` with ``gamma_(P,k)`` (:func:`gamma_pk`) the
expected mean of the top k of P standard normals, a direction a degree-one polynomial already
reaches: hence the plateau (:func:`floor_leading_order`).

A trained model sees P tokens, not Sigma: its polynomial is in the context covariance
``S = X^T X / P`` (docs/engine-contract.md), and ``S q = (1/P) sum_i x_i (x_i^T q)`` already weights each
token by its similarity to the query, which is what the top-k target rewards. ``covariance=
"context"`` gives the floor of that class, ``Phi(q) = [S q, ..., S^D q]`` with ``G`` by Monte Carlo
too; the population floor above is its P -> infinity limit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

from ._validate import D_MAX, P_MAX, SEED_MAX, check_choice, check_int, check_memory, check_real

# Composite Gauss-Legendre rule on [-_X_MAX, _X_MAX]: the integrand is bounded by |x| phi(x), whose
# mass beyond 12 is below 1e-30, and panels of width 0.05 resolve the order-statistic peak even at
# P = 10^7 (peak width about 0.3).
_X_MAX = 12.0
_PANELS = 480
_NODES = 20


def _quadrature_grid():
    u, w = np.polynomial.legendre.leggauss(_NODES)
    edges = np.linspace(-_X_MAX, _X_MAX, _PANELS + 1)
    half = 0.5 * np.diff(edges)
    mid = 0.5 * (edges[1:] + edges[:-1])
    x = (mid[:, None] + half[:, None] * u[None, :]).ravel()
    wx = (half[:, None] * w[None, :]).ravel()
    return x, wx


_GRID_X, _GRID_W = _quadrature_grid()


def gamma_pk(P, k):
    """Expected mean of the k largest of P independent standard normals.

    Summing the densities of the k largest order statistics gives
    ``P phi(x) Prob[Binomial(P - 1, 1 - Phi(x)) <= k - 1]``, and the binomial tail is a regularised
    incomplete beta function, so ``gamma = (P / k) int x phi(x) Q(k, P - k; 1 - Phi(x)) dx`` with
    ``Q = betaincc``. Using the upper tail ``1 - Phi`` (``ndtr(-x)``) keeps full relative precision
    where the top order statistics live, so the result is stable for P up to 10^7 and beyond. The
    integral is a fixed composite Gauss-Legendre rule; against 30-digit quadrature of the
    order-statistic densities it agrees to about 1e-15 relative for P from 2 to 10^6.

    Parameters
    ----------
    P, k : int or array_like of int
        Number of normals and how many of the largest are averaged, ``1 <= k <= P``. Broadcast
        against each other.

    Returns
    -------
    float or ndarray
        ``gamma_(P,k)``; 0 when ``k == P``.

    Examples
    --------
    >>> round(float(gamma_pk(2, 1)), 6)  # E max of two normals = 1 / sqrt(pi)
    0.56419
    """
    P_arr, k_arr = np.broadcast_arrays(np.asarray(P), np.asarray(k))
    Pf = np.empty(P_arr.shape, dtype=float)
    kf = np.empty(P_arr.shape, dtype=float)
    for idx in np.ndindex(P_arr.shape):
        p = check_int("P", P_arr[idx].item(), lo=1, hi=10**9)
        Pf[idx] = p
        kf[idx] = check_int("k", k_arr[idx].item(), lo=1, hi=p)
    x, w = _GRID_X, _GRID_W
    tail = special.ndtr(-x)
    xphi = x * np.exp(-0.5 * x * x) / np.sqrt(2.0 * np.pi)
    out = np.zeros(Pf.shape)
    flat_P, flat_k, flat_out = Pf.ravel(), kf.ravel(), out.reshape(-1)
    for i in range(flat_P.size):
        p, kk = flat_P[i], flat_k[i]
        if kk == p:  # the mean of all P normals has expectation zero
            continue
        weight = special.betaincc(kk, p - kk, tail)
        flat_out[i] = (p / kk) * np.dot(w, xphi * weight)
    return out[()] if out.ndim == 0 else out


def _spectra(a, b, d, c_lambda, c_omega):
    idx = np.arange(1, d + 1, dtype=float)
    return c_lambda * idx ** (-a), c_omega * idx ** (-b)


def _check_spectrum(a, b, d, c_lambda, c_omega):
    a = check_real("a", a, lo=0)
    b = check_real("b", b, lo=0)
    d = check_int("d", d, lo=1, hi=D_MAX)
    c_lambda = check_real("c_lambda", c_lambda, lo=0, lo_open=True)
    c_omega = check_real("c_omega", c_omega, lo=0, lo_open=True)
    return a, b, d, c_lambda, c_omega


def feature_gram(lam, omega, degree):
    """Exact ``G_rs = tr(Omega Sigma^(r+s+1))``, r, s = 1..degree, in the shared eigenbasis.

    Examples
    --------
    >>> feature_gram(np.array([1.0, 0.5]), np.array([1.0, 1.0]), 1)
    array([[1.125]])
    """
    degree = check_int("degree", degree, lo=1, hi=64)
    lam = np.asarray(lam, dtype=float)
    omega = np.asarray(omega, dtype=float)
    if lam.ndim != 1 or omega.shape != lam.shape:
        raise ValueError(f"lam, omega with shapes {lam.shape}, {omega.shape}: must be 1-d of equal length")
    r = np.arange(1, degree + 1)
    powers = r[:, None] + r[None, :] + 1
    return np.sum(omega * lam[None, None, :] ** powers[..., None], axis=-1)


def _scaled_pinv(G, rcond):
    """Pseudo-inverse of the badly conditioned ``G``.

    ``G`` holds powers of lambda: we rescale it to unit diagonal (Jacobi scaling removes the spread
    of magnitudes between powers), take the Moore-Penrose pseudo-inverse of the scaled matrix with
    relative eigenvalue cutoff ``rcond`` and undo the scaling. The cutoff also handles an exactly
    rank-deficient G (a flat spectrum makes all powers equal).
    """
    s = np.sqrt(np.diag(G))
    evals, evecs = np.linalg.eigh(G / np.outer(s, s))
    keep = evals > rcond * evals.max()
    inner = (evecs[:, keep] / evals[keep]) @ evecs[:, keep].T
    return inner / np.outer(s, s)


@dataclass(frozen=True)
class FloorResult:
    """Monte Carlo estimate of the linear-attention floor ``R_irr = T - h^T G^+ h``.

    Attributes
    ----------
    floor : jackknife bias-corrected, control-variate estimate of R_irr.
    stderr : delete-one-context jackknife standard error of ``floor``.
    plugin : the plain plug-in value ``Tbar - hbar^T G^+ hbar`` (no control variates, no bias
        correction; biased low by about ``tr(G^+ Cov h) / samples``).
    degree : highest power D of Sigma in the polynomial.
    T : Monte Carlo ``E[t^T Omega t]`` (plain sample mean).
    h : (D,) Monte Carlo ``E[Phi^T Omega t]`` (plain sample mean).
    G : (D, D) exact ``tr(Omega Sigma^(r+s+1))`` (``covariance="context"``: Monte Carlo
        ``E[Phi^T Omega Phi]`` with ``Phi = [S q, ..., S^D q]``).
    contexts : number of contexts; each is probed with ``queries`` independent queries.
    queries : queries per context.
    covariance : ``"population"`` or ``"context"`` (see :func:`linear_floor`).
    """

    floor: float
    stderr: float
    plugin: float
    degree: int
    T: float
    h: np.ndarray
    G: np.ndarray
    contexts: int
    queries: int = 1
    covariance: str = "population"

    def _repr_html_(self) -> str:
        from .display import floor_html

        return floor_html(self)


def _control_basis(lam, omega, degree, rcond):
    """Whitened control variates of the query, with known mean 0 and identity covariance.

    The raw variates are ``f_j(q) = sum_k omega_k lam_k^j (q_k^2 - lam_k)``, j = 0..2 degree: they
    span ``Phi^T Omega Phi - G`` and the leading dependence of ``t^T Omega t`` on the query. Their
    exact covariance under ``q ~ N(0, Sigma)`` is ``2 sum_k omega_k^2 lam_k^(i+j+2)``; we return the
    map ``W`` (J, d) such that ``g = W (q^2 - lam)`` has identity covariance (eigen-directions below
    ``rcond`` of the unit-diagonal rescaled covariance are dropped).
    """
    j = np.arange(0, 2 * degree + 1)
    F = omega[None, :] * lam[None, :] ** j[:, None]  # (J, d): f = F (q^2 - lam)
    K = 2.0 * (F * lam**2) @ F.T
    s = np.sqrt(np.diag(K))
    evals, evecs = np.linalg.eigh(K / np.outer(s, s))
    keep = evals > rcond * evals.max()
    return (evecs[:, keep] / np.sqrt(evals[keep])).T @ (F / s[:, None])


_GEMM_RATIO = 4  # form S when d <= this * queries * degree (measured: about 2x faster at d = 128)


def floor_memory_bytes(d: int, P: int, contexts: int = 0, degree: int = 4, queries: int = 8, chunk: int = 4) -> float:
    """Bytes of the largest arrays the floor samplers hold at once (a lower bound).

    Two ``(chunk, P, d)`` blocks (the context normals and their squares), the ``(chunk, P, queries)``
    scores with their ranking, the queries, targets and context features ``(chunk, queries, d,
    2 + degree)``, the context covariances ``(chunk, d, d)`` where they are formed, and the
    per-context results (``T``, ``h``, ``g``, ``gT``, ``gh`` with at most ``2 degree + 1`` control
    variates), in float64.

    >>> floor_memory_bytes(128, 1024) / 2**20
    9.1875
    >>> floor_memory_bytes(1, 1, contexts=1, degree=1, queries=0, chunk=0)   # 1 + 1 + 3 + 3 + 3 numbers
    88.0
    """
    J = 2 * degree + 1
    per_chunk = P * (2 * d + 2 * queries) + queries * d * (2 + degree) + d * min(d, _GEMM_RATIO * queries * degree)
    return 8.0 * chunk * per_chunk + 8.0 * contexts * (1 + degree + 2 * J + J * degree)


def _sampler_args(a, b, k, d, P, contexts, seed, degree, c_lambda, c_omega, queries, chunk) -> tuple:
    """The samplers' arguments checked (one-line ``ValueError`` naming the bad one), memory included,
    and the spectra: ``(k, d, P, n, degree, queries, seed, chunk, lam, omega)``."""
    a, b, d, c_lambda, c_omega = _check_spectrum(a, b, d, c_lambda, c_omega)
    P = check_int("P", P, lo=1, hi=P_MAX)
    k = check_int("k", k, lo=1, hi=P)
    n = check_int("contexts", contexts, lo=1)
    degree = check_int("degree", degree, lo=1, hi=64)
    m = check_int("queries", queries, lo=1, hi=100_000)
    seed = check_int("seed", seed, lo=0, hi=SEED_MAX)
    chunk = check_int("chunk", chunk, lo=1)
    check_memory(f"d={d}, P={P}, contexts={n}", floor_memory_bytes(d, P, n, degree, m, min(chunk, n)))
    return (k, d, P, n, degree, m, seed, chunk, *_spectra(a, b, d, c_lambda, c_omega))


def _draw_contexts(lam, k, P, n, m, seed, chunk):
    """Contexts in the eigenbasis, ``chunk`` at a time: yields ``(slice, X, q, t)`` with the inputs
    ``X (c, P, d)``, ``m`` queries ``q (c, m, d)`` per context and their top-k means ``t (c, m, d)``.

    Queries and contexts come from separate child streams of ``SeedSequence(seed)``, so the draws
    do not depend on ``chunk``. ``X`` is overwritten by the next chunk.
    """
    d = lam.size
    sqrt_lam = np.sqrt(lam)
    query_ss, context_ss = np.random.SeedSequence(seed).spawn(2)
    qrng = np.random.default_rng(query_ss)
    # SFC64 generates the P d context normals (the dominant cost) about 20 % faster than PCG64
    rng = np.random.Generator(np.random.SFC64(context_ss))
    buf = np.empty((chunk, P, d))
    sq = np.empty((chunk, P, d))
    for start in range(0, n, chunk):
        c = min(chunk, n - start)
        Z = buf[:c]
        rng.standard_normal(out=Z)
        q = qrng.standard_normal((c, m, d)) * sqrt_lam  # (c, m, d)
        # cosine(x_i, q) with x_i = sqrt(lam) z_i: numerator z_i . (sqrt(lam) q), squared norm
        # z_i^2 . lam; |q| is common to all tokens and does not change the ranking.
        np.square(Z, out=sq[:c])
        inv_norm = 1.0 / np.sqrt(sq[:c] @ lam)  # (c, P)
        score = (Z @ np.swapaxes(q * sqrt_lam, 1, 2)) * inv_norm[:, :, None]  # (c, P, m)
        score = np.swapaxes(score, 1, 2)  # (c, m, P)
        if k < P:
            top = np.argpartition(-score, k - 1, axis=2)[:, :, :k]
        else:
            top = np.broadcast_to(np.arange(P), (c, m, P))
        t = Z[np.arange(c)[:, None, None], top].mean(axis=2) * sqrt_lam  # (c, m, d)
        Z *= sqrt_lam  # the inputs x_i
        yield slice(start, start + c), Z, q, t


def sample_floor_moments(
    a, b, k, d, P, contexts, seed, degree=4, c_lambda=1.0, c_omega=1.0, queries=8, rcond=1e-12, chunk=4
):
    """Per-context Monte Carlo averages behind :func:`linear_floor`, in the eigenbasis.

    For each context (P inputs) ``queries`` independent queries are drawn; for each query the
    exact cosine top-k mean ``t`` gives ``T = t^T Omega t``, ``h = Phi(q)^T Omega t`` and the
    whitened query control variates ``g`` (see ``_control_basis``). Returned are the per-context
    means over queries: a dict with ``T (n,)``, ``h (n, D)``, ``g (n, J)``, ``gT (n, J)`` and
    ``gh (n, J, D)``. Queries and contexts come from separate child streams of
    ``SeedSequence(seed)``, so the numbers do not depend on ``chunk``.

    Examples
    --------
    >>> m = sample_floor_moments(0.5, 0.5, 2, 8, 32, contexts=10, seed=0, degree=2, queries=3)
    >>> m["T"].shape, m["h"].shape, m["gh"].shape
    ((10,), (10, 2), (10, 5, 2))
    """
    k, d, P, n, degree, m, seed, chunk, lam, omega = _sampler_args(
        a, b, k, d, P, contexts, seed, degree, c_lambda, c_omega, queries, chunk
    )
    rcond = check_real("rcond", rcond, lo=0, hi=1, hi_open=True)
    lam_pows = lam[None, :] ** np.arange(1, degree + 1)[:, None]  # (D, d)
    W = _control_basis(lam, omega, degree, rcond)
    J = W.shape[0]

    out = {
        "T": np.empty(n),
        "h": np.empty((n, degree)),
        "g": np.empty((n, J)),
        "gT": np.empty((n, J)),
        "gh": np.empty((n, J, degree)),
    }
    for sl, _, q, t in _draw_contexts(lam, k, P, n, m, seed, chunk):
        T = (t * t) @ omega  # (c, m)
        h = (q * t * omega) @ lam_pows.T  # (c, m, D)
        g = (q * q - lam) @ W.T  # (c, m, J)
        out["T"][sl] = T.mean(axis=1)
        out["h"][sl] = h.mean(axis=1)
        out["g"][sl] = g.mean(axis=1)
        out["gT"][sl] = np.einsum("cmj,cm->cj", g, T) / m
        out["gh"][sl] = np.einsum("cmj,cmr->cjr", g, h) / m
    return out


def sample_context_floor_moments(
    a, b, k, d, P, contexts, seed, degree=4, c_lambda=1.0, c_omega=1.0, queries=8, chunk=4
):
    """Per-context Monte Carlo averages behind ``linear_floor(..., covariance="context")``.

    As :func:`sample_floor_moments` (the same contexts, queries and targets for the same seed), but
    the features are powers of each context's own covariance ``S = X^T X / P`` applied to the
    query, and ``G`` is sampled too. Returns a dict with ``T (n,)``, ``h (n, D)`` and ``G (n, D, D)``
    of the features ``(S / s)^r q``, with ``s = (sqrt(lambda_1) + sqrt(tr Sigma / P))^2`` a fixed
    scale that keeps high powers finite (it does not change the floor).

    Examples
    --------
    >>> m = sample_context_floor_moments(0.5, 0.5, 2, 8, 32, contexts=10, seed=0, degree=2, queries=3)
    >>> m["T"].shape, m["h"].shape, m["G"].shape
    ((10,), (10, 2), (10, 2, 2))
    """
    k, d, P, n, degree, m, seed, chunk, lam, omega = _sampler_args(
        a, b, k, d, P, contexts, seed, degree, c_lambda, c_omega, queries, chunk
    )
    # S / s has norm of order one (s bounds the top eigenvalue of S roughly, as the edge of the
    # Marchenko-Pastur law), so high powers neither overflow nor underflow; the coefficients absorb
    # the fixed factor s^-r, so the floor is that of S itself.
    scale = P * (np.sqrt(lam[0]) + np.sqrt(lam.sum() / P)) ** 2  # X^T X / scale = S / s
    form_S = d <= _GEMM_RATIO * m * degree  # one GEMM per context beats 2 m D thin products
    out = {"T": np.empty(n), "h": np.empty((n, degree)), "G": np.empty((n, degree, degree))}
    for sl, X, q, t in _draw_contexts(lam, k, P, n, m, seed, chunk):
        if form_S:
            S = np.swapaxes(X, 1, 2) @ X / scale  # (c, d, d), symmetric

            def apply(v, S=S):
                return v @ S

        else:

            def apply(v, X=X):
                return (v @ np.swapaxes(X, 1, 2)) @ X / scale

        feats = np.empty(q.shape + (degree,))  # (c, m, d, D): (S / s)^r q
        v = q
        for r in range(degree):
            v = apply(v)
            feats[..., r] = v
        wt = t * omega
        out["T"][sl] = np.einsum("cmi,cmi->c", wt, t) / m
        out["h"][sl] = np.einsum("cmir,cmi->cr", feats, wt) / m
        out["G"][sl] = np.einsum("cmir,i,cmis->crs", feats, omega, feats) / m
    if not all(np.isfinite(v).all() for v in out.values()):
        raise ValueError(f"degree={degree}: the context features overflow at d={d}, P={P}; use a lower degree")
    return out


def _floor_from_means(T, h, g, gT, gh, G_pinv):
    """Control-variate floor from (possibly stacked) means; see :func:`linear_floor`."""
    c = h @ G_pinv  # optimal polynomial coefficients c = G^+ h
    plugin = T - np.sum(h * c, axis=-1)
    # First-order fluctuation of the plug-in is y = T - 2 c^T h; the variates g have mean 0 and
    # identity covariance exactly, so the regression coefficient of y on g is E[g y].
    beta = gT - 2.0 * np.einsum("...jr,...r->...j", gh, c)
    return plugin - np.sum(beta * g, axis=-1)


def _context_plugin(T, h, G, rcond):
    """``T - h^T G^+ h`` for (possibly stacked) sampled moments; G Jacobi-scaled as in ``_scaled_pinv``."""
    s = np.sqrt(np.diagonal(G, axis1=-2, axis2=-1))
    hs = h / s
    inner = np.linalg.pinv(G / (s[..., :, None] * s[..., None, :]), rcond=rcond, hermitian=True)
    return T - np.einsum("...r,...rs,...s->...", hs, inner, hs)


COVARIANCES = ("population", "context")


def linear_floor(
    a, b, k, d, P, contexts, seed, degree=4, c_lambda=1.0, c_omega=1.0, queries=8, rcond=1e-12, covariance="population"
):
    """Monte Carlo floor ``R_irr = T - h^T G^+ h`` of linear attention on the top-k task.

    Works in the eigenbasis of the covariances. Both ``Sigma = O diag(lambda) O^T`` and
    ``Omega = O diag(omega) O^T`` share the Haar rotation O, and cosine similarity, the top-k
    selection, ``t^T Omega t`` and ``(Sigma^r q)^T Omega t`` are all invariant under rotating every
    input by ``O^T``; so inputs are drawn as ``sqrt(lambda) * z`` with z standard normal, no rotation
    is sampled, and the result is exact, not an approximation. ``beta`` is integrated out
    analytically (``E[(beta^T v)^2] = v^T Omega v``). For the population floor ``G`` is computed
    exactly; the context floor (``covariance="context"``, the same invariance holds for
    ``S = X^T X / P``) samples it and uses no control variates.

    Numerics and statistics (the control variates are the population floor's only):

    - ``G`` holds powers of lambda and is badly conditioned: it is rescaled to unit diagonal and
      pseudo-inverted with relative eigenvalue cutoff ``rcond`` (this also handles the exactly
      rank-deficient G of a flat spectrum).
    - Each context (the expensive part: P d normals) is probed by ``queries`` independent queries;
      every (context, query) pair is an exact sample, and the grouping is respected by the error bar.
    - Variance reduction: functions of the query with exactly known mean and covariance,
      ``sum_k omega_k lam_k^j (q_k^2 - lam_k)``, serve as regression control variates.
    - The estimator is nonlinear in the sample means, so the error bar is the delete-one-context
      jackknife, and ``floor`` is the jackknife bias-corrected value (``plugin`` keeps the plain
      plug-in without control variates).

    Parameters
    ----------
    a, b : float
        Spectrum exponents, ``lambda_k = c_lambda k^-a``, ``omega_k = c_omega k^-b``; >= 0.
    k : int
        Top-k target, ``1 <= k <= P``.
    d, P : int
        Input dimension and context length.
    contexts : int
        Number of contexts, >= 2.
    seed : int
        Seed of ``numpy.random.SeedSequence``, >= 0.
    degree : int
        Highest power of Sigma in the polynomial (the depth L of a linear model), >= 1.
    c_lambda, c_omega : float
        Spectrum prefactors, > 0.
    queries : int
        Independent queries per context, >= 1.
    rcond : float
        Relative eigenvalue cutoff of the pseudo-inverses, in [0, 1).
    covariance : ``"population"`` (features ``Sigma^r q``: the paper's floor) or ``"context"``
        (features ``S^r q`` with ``S = X^T X / P`` of the context's own tokens: the class a trained
        model has at this P). The context floor samples ``G`` too and uses no control variates;
        ``floor`` is the jackknife bias-corrected plug-in.

    Returns
    -------
    FloorResult

    Examples
    --------
    >>> res = linear_floor(0.5, 0.5, k=2, d=16, P=64, contexts=100, seed=0, degree=2)
    >>> bool(0 < res.floor < res.T) and res.stderr > 0
    True
    """
    n = check_int("contexts", contexts, lo=2)
    if check_choice("covariance", covariance, COVARIANCES) == "context":
        return _context_floor(a, b, k, d, P, n, seed, degree, c_lambda, c_omega, queries, rcond)
    mom = sample_floor_moments(
        a, b, k, d, P, n, seed, degree=degree, c_lambda=c_lambda, c_omega=c_omega, queries=queries, rcond=rcond
    )
    lam, omega = _spectra(float(a), float(b), int(d), float(c_lambda), float(c_omega))
    G = feature_gram(lam, omega, int(degree))
    G_pinv = _scaled_pinv(G, float(rcond))
    means = {key: v.mean(axis=0) for key, v in mom.items()}
    plugin = float(means["T"] - means["h"] @ G_pinv @ means["h"])
    full = float(_floor_from_means(G_pinv=G_pinv, **means))
    # delete-one-context jackknife: leave-one-out means are cheap updates of the full means
    loo = {key: (n * means[key] - v) / (n - 1) for key, v in mom.items()}
    F_loo = _floor_from_means(G_pinv=G_pinv, **loo)
    F_dot = F_loo.mean()
    stderr = float(np.sqrt((n - 1) / n * np.sum((F_loo - F_dot) ** 2)))
    floor = float(n * full - (n - 1) * F_dot)
    return FloorResult(
        floor=floor,
        stderr=stderr,
        plugin=plugin,
        degree=int(degree),
        T=float(means["T"]),
        h=means["h"],
        G=G,
        contexts=n,
        queries=int(queries),
    )


def _context_floor(a, b, k, d, P, n, seed, degree, c_lambda, c_omega, queries, rcond):
    rcond = check_real("rcond", rcond, lo=0, hi=1, hi_open=True)
    mom = sample_context_floor_moments(
        a, b, k, d, P, n, seed, degree=degree, c_lambda=c_lambda, c_omega=c_omega, queries=queries
    )
    means = {key: v.mean(axis=0) for key, v in mom.items()}
    full = float(_context_plugin(means["T"], means["h"], means["G"], rcond))
    loo = {key: (n * means[key] - v) / (n - 1) for key, v in mom.items()}
    F_loo = _context_plugin(loo["T"], loo["h"], loo["G"], rcond)
    F_dot = F_loo.mean()
    return FloorResult(
        floor=float(n * full - (n - 1) * F_dot),
        stderr=float(np.sqrt((n - 1) / n * np.sum((F_loo - F_dot) ** 2))),
        plugin=full,
        degree=int(degree),
        T=float(means["T"]),
        h=means["h"],
        G=means["G"],
        contexts=n,
        queries=int(queries),
        covariance="context",
    )


@dataclass(frozen=True)
class LeadingOrderFloor:
    """Leading-order (large effective dimension) floor of the linear model.

    Attributes
    ----------
    floor : ``(tr(Omega Sigma) - gamma^2 tr(Omega Sigma^3) / tr(Sigma^2)) / k``.
    explained : ``gamma^2 tr(Omega Sigma^3) / tr(Sigma^2)``, the part of ``T`` a degree-one
        polynomial ``c Sigma q`` removes when ``E[t | q] = gamma Sigma q / sqrt(tr Sigma^2)``.
    T : leading-order ``E[t^T Omega t] = (tr(Omega Sigma) + (k - 1) explained) / k``.
    gamma : ``gamma_(P,k)``.
    d_eff : effective dimension ``(tr Sigma)^2 / tr(Sigma^2)``; the expansion needs
        ``d_eff >> gamma^2`` (cosines of order 1/sqrt(d_eff) and nearly constant norms).
    """

    floor: float
    explained: float
    T: float
    gamma: float
    d_eff: float


def floor_leading_order(a, b, k, d, P, c_lambda=1.0, c_omega=1.0):
    """Leading-order floor from ``E[t | q] ~ gamma_(P,k) Sigma q / sqrt(tr Sigma^2)``.

    With many effective dimensions the cosine ranking is the ranking of ``x_i^T q`` (norms nearly
    constant), whose selected standardised values average ``gamma_(P,k)``; Gaussian conditioning
    gives the conditional mean above, which is a degree-one polynomial in Sigma applied to q. The
    selected inputs keep their unconditional norm (cosine selection does not pick long vectors),
    so ``E[x_sel^T Omega x_sel] ~ tr(Omega Sigma)`` and distinct selected inputs share only the
    mean direction. Hence ``T ~ (tr(Omega Sigma) + (k-1) E)/k`` with
    ``E = gamma^2 tr(Omega Sigma^3)/tr(Sigma^2)``, the degree-one fit removes ``E``, and
    ``R_irr ~ (tr(Omega Sigma) - E) / k``: essentially the within-selection variance, which no
    polynomial in Sigma can remove. Accurate for flat spectra (large ``d_eff``); it fails as the
    spectrum steepens (compare with :func:`linear_floor`).

    Examples
    --------
    >>> lo = floor_leading_order(0, 0, k=2, d=128, P=1024)
    >>> round(lo.floor, 1)  # Monte Carlo value of the paper: 59.37
    59.2
    """
    a, b, d, c_lambda, c_omega = _check_spectrum(a, b, d, c_lambda, c_omega)
    P = check_int("P", P, lo=1, hi=10**9)
    k = check_int("k", k, lo=1, hi=P)
    lam, omega = _spectra(a, b, d, c_lambda, c_omega)
    g = float(gamma_pk(P, k))
    tr_os = float(np.sum(omega * lam))
    tr_s2 = float(np.sum(lam**2))
    explained = g * g * float(np.sum(omega * lam**3)) / tr_s2
    return LeadingOrderFloor(
        floor=(tr_os - explained) / k,
        explained=explained,
        T=(tr_os + (k - 1) * explained) / k,
        gamma=g,
        d_eff=float(np.sum(lam)) ** 2 / tr_s2,
    )
