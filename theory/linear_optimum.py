r"""The best depth-L linear-attention predictor on the easy task at finite (d, P) (issue 22).

What a depth-L model computes
-----------------------------
``sims/linear_model.py`` reduces the model to ``Chat^1 = W_y u^T``,
``Chat^(l+1) = Chat^l - (1/(L N)) W_v Chat^l Et_l S`` and ``yhat = (1/(L N)) sum_l gv^T Chat^l Et_l
x_test``, with ``S = X^T X / P`` and ``u = X^T y / P``. For isotropic layers (``Et_l = kappa_l I``,
``W_v = v I``) every ``Chat^l`` is ``W_y u^T`` times a polynomial of degree ``l - 1`` in ``S``, so
``yhat = u^T q(S) x_test`` with ``deg q <= L - 1``. The labels are ``y_i = beta . x_i``, hence
``u = S beta`` and

    yhat = beta^T p(S) x_test,   p(S) = S q(S) = sum_{r=1..L} a_r S^r,

a polynomial without constant term whose coefficients are shared by all contexts (they are the
model's weights). Real roots of ``1 - p`` are the layers' steps (``gamma_l = L / root``); the
optimum's polynomial may have complex ones, which isotropic layers cannot take.

The loss of one context, integrated over ``beta ~ N(0, Omega)`` and the query, is
``tr(Omega R C R)`` with ``R = I - p(S)`` and ``C = Sigma`` (``easy-fresh``: a fresh query
``x ~ N(0, Sigma)``) or ``C = S`` (``easy-exact``: the query is a uniformly chosen context token,
whose second moment over the choice is ``S``). With ``S = U diag(mu) U^T``,
``R = U diag(r) U^T``, ``r_i = 1 - p(mu_i)``, and

    loss(context) = r^T K r,   K = (U^T Omega U) o (U^T C U)   (elementwise; K is PSD),

so the depth-L optimum is ``min_p E_S[r^T K r]``. Sigma and Omega share the Haar rotation of the
context, and the loss is invariant under rotating every input, so contexts are drawn in the
eigenbasis (``x = sqrt(lambda) z``). As ``P -> infinity``, ``S -> Sigma``, ``U -> I`` and the loss
becomes ``sum_k lambda_k omega_k (1 - p(lambda_k))^2``: the exact discrete free optimum
(:func:`~depthscale.theory.free_poly.free_discrete`).

Estimator
---------
- Basis: ``psi_j(mu) = mu T_j(2 mu / top - 1)``, Chebyshev polynomials on ``[0, top]`` for the
  eigenvalues ``mu`` of ``S / s`` (``s`` the Marchenko-Pastur edge scale), ``top`` 25 % above the
  largest eigenvalue of separate pilot contexts. The span is that of ``S, ..., S^L`` whatever
  ``top``; at d = 32, P = 256, L = 32 the weighted design has condition number about 1e5, where
  monomials lose everything past degree ~10. (A basis orthonormal for the pooled diagonal measure
  ``mu^2 K_ii``, tried first, is far worse: it blows up where that measure is thin, and its
  normal equations missed the optimum by a factor 3 at L = 32.)
- Fit: ``a = G^+ h`` from ``G = mean Psi^T K Psi`` and ``h = mean Psi^T K 1`` over the fitting
  contexts; each depth uses the leading ``L`` basis functions (the basis is nested).
- High degrees overfit: the eigenvalues of S move from context to context, a degree-L polynomial
  fitted to finitely many of them can swing far between and beyond them, and an evaluation
  context whose eigenvalue falls there pays for it. A smoothness penalty ``rho Tbar mean_q
  r(x_q)^2`` over Chebyshev points of ``[0, top]`` (``Tbar`` the mean loss of ``p = 0``, ``rho``
  from a fixed grid including 0) is therefore chosen per depth by delete-one-group
  cross-validation on the fitting contexts (16 groups).
- Cross-validation misses rare blow-ups at high degree, so a family without fitted coefficients
  competes: the Jacobi residuals of the continuum free optimum for a grid of exponents and right
  edges around the top of S's spectrum. Per depth the candidate with the least loss on the
  fitting contexts replaces the fitted polynomial when that loss is below the fit's
  cross-validated one (both are out-of-sample estimates there); ``jacobi`` says where.
- Evaluation on separate contexts: ``r^T K r`` per context, computed from the residual itself (no
  cancellation however small the loss). Its mean ``loss`` is above the optimum in expectation (the
  fitted coefficients are not the optimal ones) and the in-sample minimum ``in_sample`` below it;
  the gap shows what the finite number of contexts leaves open. ``se`` combines the evaluation's
  standard error with the delete-one-group jackknife variance over the fitting contexts (the two
  are independent).

The class is that of isotropic layers; a model with general query-key matrices could in principle
add coefficients that depend on ``tr S`` (rotation averages of its products), a gain of relative
order ``1 / (P d_eff)`` that is not included.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import eval_jacobi

from ._choices import LINEAR_OPTIMUM_TASKS
from ._validate import D_MAX, OPTIMUM_DEPTH_MAX, P_MAX, SEED_MAX, check_choice, check_int, check_memory, check_real

TASKS = LINEAR_OPTIMUM_TASKS
DEPTH_LIMIT = OPTIMUM_DEPTH_MAX  # deepest polynomial
_PILOT = 64  # contexts whose largest eigenvalue sets the basis's interval
_TOP_MARGIN = 1.25  # the interval [0, top] reaches this factor beyond the pilot's largest eigenvalue
_GROUPS = 16  # delete-one-group jackknife over the fitting contexts


@dataclass(frozen=True)
class LinearOptimum:
    """Monte Carlo optimum of the depth-L polynomial predictor (see the module docstring).

    Attributes
    ----------
    depths : (n,) depths L.
    loss : (n,) evaluation loss of the coefficients fitted on the fitting contexts: above the
        optimum in expectation (any fixed coefficients are), by the fitting noise.
    se : (n,) its standard error: the evaluation spread and the fitting spread (delete-one-group
        jackknife over the fitting contexts) combined.
    in_sample : (n,) the least fitting loss (no penalty): below the optimum in expectation. The
        optimum lies between ``in_sample`` and ``loss`` up to their errors. It is formed from the
        summed moments, ``T - 2 a^T h + a^T G a``, so below about 1e-10 of ``T`` it is rounding.
    se_eval : (n,) standard error of ``loss`` over the evaluation contexts alone.
    penalty : (n,) the smoothness penalty chosen per depth by cross-validation on the fitting contexts.
    jacobi : (n,) True where ``loss`` is that of a Jacobi candidate, not of the fitted polynomial.
    coefficients : (n, L_max) coefficients of each depth in the basis (zero past L).
    equal_step, equal_step_se : (n,) evaluation loss (and its standard error) of the best EQUAL-step
        predictor, ``r = (1 - gamma S / L)^L`` with the one step chosen on the fitting contexts: what
        a depth-L model whose layers do not tell themselves apart can reach at this (d, P).
    contexts : fitting contexts; as many evaluation contexts are drawn.
    task : ``"easy-fresh"`` or ``"easy-exact"``.
    """

    depths: np.ndarray
    loss: np.ndarray
    se: np.ndarray
    in_sample: np.ndarray
    se_eval: np.ndarray
    penalty: np.ndarray
    jacobi: np.ndarray
    coefficients: np.ndarray
    contexts: int
    task: str
    equal_step: np.ndarray
    equal_step_se: np.ndarray


def optimum_memory_bytes(d: int, P: int, depth: int, n_depths: int = 1, chunk: int = 8, contexts: int = 0) -> float:
    """Bytes of the largest arrays held at once (a lower bound), float64.

    Per chunk of contexts: the normals ``(chunk, P, d)``, six ``(chunk, d, d)`` matrices (S, its
    eigenvectors, the two rotated covariances, K and a product), the basis values ``(chunk, d,
    depth)`` and the residuals of every depth and jackknife group ``(chunk, d, n_depths (groups +
    1))`` twice; besides, the per-group sums and the evaluation losses ``(contexts, n_depths
    (groups + 1))``.

    >>> optimum_memory_bytes(128, 1024, 64, n_depths=8) / 2**20
    17.1328125
    """
    cols = n_depths * (_GROUPS + 1)
    per_chunk = P * d + 6 * d * d + d * depth + 2 * d * cols
    return 8.0 * (chunk * per_chunk + _GROUPS * (depth + 1) * depth + contexts * cols)


def _edge_scale(lam, P):
    """``s``, the Marchenko-Pastur edge scale: ``S / s`` has eigenvalues of order one at most."""
    return (np.sqrt(lam[0]) + np.sqrt(lam.sum() / P)) ** 2


def _contexts(rng, lam, P, n, chunk):
    """Eigen-decomposed context covariances ``S / s``, ``chunk`` at a time: yields ``(mu, U)``."""
    d = lam.size
    sqrt_lam = np.sqrt(lam)
    scale = P * _edge_scale(lam, P)
    buf = np.empty((chunk, P, d))
    for start in range(0, n, chunk):
        c = min(chunk, n - start)
        X = buf[:c]
        rng.standard_normal(out=X)
        X *= sqrt_lam
        S = np.matmul(np.swapaxes(X, 1, 2), X) / scale
        mu, U = np.linalg.eigh(S)
        yield np.maximum(mu, 0.0), U


def _kernel(mu, U, lam, omega, task, scale):
    """``K = (U^T Omega U) o (U^T C U)`` per context, (c, d, d); ``mu`` are the eigenvalues of ``S / scale``."""
    Ut = np.swapaxes(U, 1, 2)
    A = np.matmul(Ut * omega, U)
    if task == "easy-exact":  # C = S: U^T S U = diag(scale mu), so K is diagonal
        K = np.zeros_like(A)
        idx = np.arange(mu.shape[1])
        K[:, idx, idx] = np.diagonal(A, axis1=1, axis2=2) * (scale * mu)
        return K
    return A * np.matmul(Ut * lam, U)


def _basis(mu, top, n):
    """``psi_j(mu) = mu T_j(2 mu / top - 1)``, j = 0..n-1, shape ``mu.shape + (n,)`` (Chebyshev recurrence)."""
    out = np.empty(mu.shape + (n,))
    t = 2.0 * mu / top - 1.0
    T_prev, T = np.ones_like(mu), t
    out[..., 0] = mu
    for j in range(1, n):
        out[..., j] = mu * T
        T_prev, T = T, 2.0 * t * T - T_prev
    return out


# candidates without fitted coefficients: Jacobi residuals for these exponents and right edges (in
# units of the pilot's largest eigenvalue)
_JACOBI_ZETAS = (0.5, 1.0, 2.0, 4.0)
_JACOBI_EDGES = (1.0, 1.15, 1.3, 1.5)
# equal steps: r(mu) = (1 - c mu / top)^L for this grid of c, chosen on the fitting contexts. Past
# c = 2 a context with an eigenvalue near top has |r| > 1, which costs |r|^(2L): the evaluation
# contexts, not the fitting ones, tell whether the chosen step met such a context (then its
# standard error is large; more contexts settle it)
_EQUAL_C = np.geomspace(0.02, 4.0, 241)
# weights of the smoothness penalty, relative to the mean loss of p = 0 (0: plain least squares)
_PENALTIES = (0.0, 1e-9, 1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2)


def _penalty(top, n):
    """``(M, m)`` with ``mean_q r(x_q)^2 = 1 - 2 a^T m + a^T M a`` over Chebyshev points ``x_q`` of [0, top]."""
    q = 4 * n + 8
    x = 0.5 * top * (1.0 - np.cos(np.pi * (np.arange(q) + 0.5) / q))
    Psi = _basis(x, top, n)
    return Psi.T @ Psi / q, Psi.mean(axis=0)


def _solve(G, h, L, rho=0.0, pen=None, rcond=1e-13):
    """Coefficients of depth L: ``argmin a^T G a - 2 a^T h + rho (a^T M a - 2 a^T m)`` on the leading block.

    The block is rescaled to unit diagonal (Jacobi) and its eigen-directions below ``rcond`` of the
    largest are dropped (a cut-off pseudo-inverse).
    """
    out = np.zeros(G.shape[0])
    g, hh = G[:L, :L], h[:L]
    if rho:
        g, hh = g + rho * pen[0][:L, :L], hh + rho * pen[1][:L]
    s = np.sqrt(np.diag(g))
    evals, evecs = np.linalg.eigh(g / np.outer(s, s))
    keep = evals > rcond * evals.max()
    out[:L] = (evecs[:, keep] @ ((evecs[:, keep].T @ (hh / s)) / evals[keep])) / s
    return out


def _jacobi_residuals(mu, L, top):
    """Residuals ``P_L^(z,0)(1 - 2 mu / e) / P_L^(z,0)(1)`` of the candidates, shape ``mu.shape + (n_cand,)``.

    The continuum free optimum of :mod:`depthscale.theory.free_poly` (the Jacobi residual) for a grid
    of exponents ``z`` and right edges ``e`` around the top of S's spectrum: a family without fitted
    coefficients, so its loss on the fitting contexts is an unbiased estimate, however deep L.
    """
    out = [
        eval_jacobi(L, z, 0.0, 1.0 - 2.0 * mu / (f * top)) / eval_jacobi(L, z, 0.0, 1.0)
        for z in _JACOBI_ZETAS
        for f in _JACOBI_EDGES
    ]
    return np.stack(out, axis=-1)


def _equal_residuals(mu, L, top):
    """Equal-step residuals ``(1 - c mu / top)^L`` for every ``c`` of ``_EQUAL_C``, shape ``mu.shape + (n_c,)``."""
    return (1.0 - mu[..., None] * (_EQUAL_C / top)) ** L


def _choose_penalties(G, h, T, Ls, pen):
    """Per depth, ``(penalty, summed held-out loss)`` for the penalty of ``_PENALTIES`` with the least
    delete-one-group cross-validated loss.

    ``G, h, T`` are per-group sums (groups first); the held-out loss of group g is
    ``T_g - 2 a^T h_g + a^T G_g a`` with ``a`` fitted without g (and the penalty scaled by the
    fitted contexts' count and mean ``T``). Choosing on the fitting contexts keeps the evaluation
    contexts independent of every choice.
    """
    n_g = G.shape[0]
    Gs, hs, Ts = G.sum(0), h.sum(0), T.sum()
    out = []
    for L in Ls:
        cv = np.zeros(len(_PENALTIES))
        for i, rho in enumerate(_PENALTIES):
            for g in range(n_g):
                a = _solve(Gs - G[g], hs - h[g], L, rho * (Ts - T[g]), pen)
                cv[i] += T[g] - 2.0 * a @ h[g] + a @ G[g] @ a
        cv[~np.isfinite(cv)] = np.inf
        out.append((_PENALTIES[int(np.argmin(cv))], float(cv.min())))
    return out


def _fit_sums(contexts, n: int, groups: int, Ls, lam, omega, task: str, s_edge, top: float, mu_top: float):
    """One pass over the fitting contexts: per-group sums of ``Psi^T K Psi``, ``Psi^T K 1`` and
    ``1^T K 1`` (``G``, ``h``, ``T``), and the summed fitting loss of each Jacobi candidate and each
    equal step per depth."""
    Lmax = max(Ls)
    cand = np.zeros((len(Ls), len(_JACOBI_ZETAS) * len(_JACOBI_EDGES)))
    equal = np.zeros((len(Ls), _EQUAL_C.size))
    G = np.zeros((groups, Lmax, Lmax))
    h = np.zeros((groups, Lmax))
    T = np.zeros(groups)
    grp_of = np.arange(n) * groups // n  # contiguous groups of equal size (up to one context)
    start = 0
    for mu, U in contexts:
        c = mu.shape[0]
        K = _kernel(mu, U, lam, omega, task, s_edge)
        Psi = _basis(mu, top, Lmax)  # (c, d, Lmax)
        KPsi = np.matmul(K, Psi)
        Gc = np.matmul(np.swapaxes(Psi, 1, 2), KPsi)
        hc = KPsi.sum(axis=1)
        Tc = K.sum(axis=(1, 2))
        for i, L in enumerate(Ls):
            Rj = _jacobi_residuals(mu, L, mu_top)  # (c, d, n_cand)
            cand[i] += np.einsum("cik,cik->k", Rj, np.matmul(K, Rj))
            Re = _equal_residuals(mu, L, top)
            equal[i] += np.einsum("cik,cik->k", Re, np.matmul(K, Re))
        for g in np.unique(grp_of[start : start + c]):
            sel = grp_of[start : start + c] == g
            G[g] += Gc[sel].sum(0)
            h[g] += hc[sel].sum(0)
            T[g] += Tc[sel].sum()
        start += c
    return G, h, T, cand, equal


def _evaluate(contexts, n: int, A, Ls, lam, omega, task: str, s_edge, top: float, mu_top: float, best, best_c):
    """One pass over the evaluation contexts: ``r^T K r`` from the residuals themselves, per context,
    of every column of ``A`` (the fitted polynomials), the chosen Jacobi candidate and the best equal step."""
    Lmax = A.shape[0]
    losses = np.empty((n, A.shape[1]))
    jac = np.empty((n, len(Ls)))
    eq = np.empty((n, len(Ls)))
    start = 0
    for mu, U in contexts:
        c = mu.shape[0]
        K = _kernel(mu, U, lam, omega, task, s_edge)
        R = 1.0 - np.matmul(_basis(mu, top, Lmax), A)  # (c, d, cols)
        losses[start : start + c] = np.einsum("cik,cik->ck", R, np.matmul(K, R))
        for i, L in enumerate(Ls):
            Rj = _jacobi_residuals(mu, L, mu_top)[..., best[i]]
            jac[start : start + c, i] = np.einsum("ci,ci->c", Rj, np.einsum("cij,cj->ci", K, Rj))
            Re = (1.0 - best_c[i] * mu / top) ** L
            eq[start : start + c, i] = np.einsum("ci,ci->c", Re, np.einsum("cij,cj->ci", K, Re))
        start += c
    return losses, jac, eq


def linear_optimum(
    a, b, d, P, depths, contexts, seed, task="easy-fresh", c_lambda=1.0, c_omega=1.0, chunk=8
) -> LinearOptimum:
    """Loss of the best ``p(S) = sum_{r<=L} a_r S^r`` on the easy task at finite (d, P), per depth.

    Parameters
    ----------
    a, b : float
        Spectrum exponents, ``lambda_k = c_lambda k^-a``, ``omega_k = c_omega k^-b``; >= 0.
    d, P : int
        Input dimension and context length.
    depths : int or sequence of int
        Depths L in ``[1, 64]``.
    contexts : int
        Fitting contexts (>= 2); as many evaluation contexts are drawn, and ``min(64, contexts)``
        pilot contexts for the basis's interval.
    seed : int
        Seed of ``numpy.random.SeedSequence``; the pilot, fitting and evaluation contexts come from
        separate child streams, so the numbers do not depend on ``chunk``.
    task : ``"easy-fresh"`` (fresh query) or ``"easy-exact"`` (query = a context token).
    c_lambda, c_omega : float
        Spectrum prefactors, > 0.
    chunk : int
        Contexts processed together (memory only).

    Returns
    -------
    LinearOptimum

    Examples
    --------
    >>> res = linear_optimum(1.0, 1.0, d=8, P=32, depths=[1, 2], contexts=200, seed=0)
    >>> bool(res.loss[1] < res.loss[0]) and bool(np.all(res.se > 0))
    True
    """
    a = check_real("a", a, lo=0)
    b = check_real("b", b, lo=0)
    d = check_int("d", d, lo=1, hi=D_MAX)
    P = check_int("P", P, lo=1, hi=P_MAX)
    depth_list = [depths] if np.ndim(depths) == 0 else list(depths)
    if not depth_list:
        raise ValueError("depths=[]: must be one or more integers in [1, 64]")
    Ls = [check_int("depths", L, lo=1, hi=DEPTH_LIMIT) for L in depth_list]
    n = check_int("contexts", contexts, lo=2)
    seed = check_int("seed", seed, lo=0, hi=SEED_MAX)
    task = check_choice("task", task, TASKS)
    c_lambda = check_real("c_lambda", c_lambda, lo=0, lo_open=True)
    c_omega = check_real("c_omega", c_omega, lo=0, lo_open=True)
    chunk = min(check_int("chunk", chunk, lo=1), n)
    Lmax = max(Ls)
    pilot = min(_PILOT, n)
    need = optimum_memory_bytes(d, P, Lmax, len(Ls), chunk, n)
    check_memory(f"d={d}, P={P}, contexts={n}, depths up to {Lmax}", need)

    idx = np.arange(1, d + 1, dtype=float)
    lam, omega = c_lambda * idx ** (-a), c_omega * idx ** (-b)
    pilot_ss, fit_ss, eval_ss = np.random.SeedSequence(seed).spawn(3)
    s_edge = _edge_scale(lam, P)

    def stream(ss, count):
        # SFC64 draws the P d normals (the dominant cost) faster than PCG64
        return _contexts(np.random.Generator(np.random.SFC64(ss)), lam, P, count, min(chunk, count))

    # basis: Chebyshev on [0, top], top a little above the pilot's largest eigenvalue
    mu_top = max(float(mu.max()) for mu, _ in stream(pilot_ss, pilot))
    top = _TOP_MARGIN * mu_top

    groups = min(_GROUPS, n)
    G, h, T, cand, equal = _fit_sums(stream(fit_ss, n), n, groups, Ls, lam, omega, task, s_edge, top, mu_top)
    pen = _penalty(top, Lmax)
    chosen = _choose_penalties(G, h, T, Ls, pen)
    penalties = [rho for rho, _ in chosen]
    # per depth: the fitted polynomial, or the best Jacobi candidate when its loss on the fitting
    # contexts is below the fit's cross-validated loss (both are out-of-sample estimates there)
    cand[~np.isfinite(cand)] = np.inf
    best = np.argmin(cand, axis=1)
    use_jacobi = np.array([cand[i, best[i]] < cv for i, (_, cv) in enumerate(chosen)])
    Gs, hs, Ts = G.sum(0), h.sum(0), T.sum()
    full = np.stack([_solve(Gs, hs, L, rho * Ts, pen) for L, rho in zip(Ls, penalties)])  # (n_depths, Lmax)
    in_sample = np.empty(len(Ls))
    for i, L in enumerate(Ls):
        a0 = _solve(Gs, hs, L, 0.0)
        in_sample[i] = (Ts - 2.0 * a0 @ hs + a0 @ Gs @ a0) / n
    loo = [
        np.stack([_solve(Gs - G[g], hs - h[g], L, rho * (Ts - T[g]), pen) for L, rho in zip(Ls, penalties)])
        for g in range(groups)
    ]
    A = np.concatenate([full, *loo]).T  # (Lmax, (groups + 1) n_depths)

    equal[~np.isfinite(equal)] = np.inf
    best_c = _EQUAL_C[np.argmin(equal, axis=1)]
    losses, jac, eq = _evaluate(stream(eval_ss, n), n, A, Ls, lam, omega, task, s_edge, top, mu_top, best, best_c)
    means = losses.mean(axis=0).reshape(groups + 1, len(Ls))
    se_eval = losses[:, : len(Ls)].std(axis=0, ddof=1) / np.sqrt(n)
    # spread from the fitting contexts: delete-one-group jackknife, the evaluation contexts fixed
    loo_means = means[1:]
    var_fit = (groups - 1) / groups * np.sum((loo_means - loo_means.mean(axis=0)) ** 2, axis=0)
    loss = np.where(use_jacobi, jac.mean(axis=0), means[0])
    se_jac = jac.std(axis=0, ddof=1) / np.sqrt(n)
    se_eval = np.where(use_jacobi, se_jac, se_eval)
    return LinearOptimum(
        depths=np.array(Ls),
        loss=loss,
        se=np.where(use_jacobi, se_jac, np.sqrt(se_eval**2 + var_fit)),
        in_sample=in_sample,
        se_eval=se_eval,
        penalty=np.array(penalties),
        jacobi=use_jacobi,
        coefficients=full,
        contexts=n,
        task=task,
        equal_step=eq.mean(axis=0),
        equal_step_se=eq.std(axis=0, ddof=1) / np.sqrt(n),
    )


START_MARGIN = 1.1  # the start's right edge: this factor beyond the largest eigenvalue of S in the pilot
START_PILOT = 256  # pilot contexts drawn for that edge


def jacobi_start(a, b, d, P, L, seed=0, c_lambda=1.0):
    """Steps of a depth-L model that start it near the finite-(d, P) optimum, in Leja order.

    The continuum free optimum's Jacobi residual (exponent ``zeta = (a + b - 1) / a``) stretched to
    the right edge ``START_MARGIN`` times the largest eigenvalue of ``S = X^T X / P`` over
    ``START_PILOT`` pilot contexts, so that almost every context's spectrum lies inside it: a
    context with an eigenvalue beyond the edge pays ``|r|^2`` there, and ``r`` grows fast outside
    (at d = 32, P = 256, L = 16-32 on (2,1), an edge near the mean top eigenvalue lost a factor
    10^3-10^4). The steps come in :func:`~depthscale.theory.free_poly.leja_order`, the order in
    which the layers can hold them.

    Parameters
    ----------
    a, b : float
        Spectrum exponents with ``a > 0`` and ``a + b > 1``.
    d, P, L : int
        Input dimension, context length, depth (``L <= 64``).
    seed : int
        Seed of the pilot contexts.
    c_lambda : float
        Input spectrum prefactor (the teacher's does not move the steps).

    Returns
    -------
    JacobiSteps
        ``rho`` and ``gamma`` in the layers' order (Leja, not decreasing).

    Examples
    --------
    >>> js = jacobi_start(2.0, 1.0, d=32, P=256, L=4)
    >>> js.zeta, bool(js.rho[0] == js.rho.max()), bool(1.0 < js.lam1 < 1.5)
    (1.0, True, True)
    """
    from .free_poly import JacobiSteps, jacobi_steps, leja_order

    a = check_real("a", a, lo=0, lo_open=True)
    b = check_real("b", b, lo=0)
    if a + b <= 1:
        raise ValueError(f"a={a!r}, b={b!r}: must have a + b > 1 (zeta = (a + b - 1) / a > 0)")
    d = check_int("d", d, lo=1, hi=D_MAX)
    P = check_int("P", P, lo=1, hi=P_MAX)
    L = check_int("L", L, lo=1, hi=DEPTH_LIMIT)
    seed = check_int("seed", seed, lo=0, hi=SEED_MAX)
    lam = check_real("c_lambda", c_lambda, lo=0, lo_open=True) * np.arange(1, d + 1, dtype=float) ** (-a)
    check_memory(f"d={d}, P={P} (pilot contexts)", 8.0 * 8 * P * d * 2)
    rng = np.random.Generator(np.random.SFC64(np.random.SeedSequence(seed)))
    top = max(float(mu.max()) for mu, _ in _contexts(rng, lam, P, START_PILOT, 8)) * _edge_scale(lam, P)
    js = jacobi_steps((a + b - 1) / a, L, START_MARGIN * top)
    order = leja_order(js.rho)
    return JacobiSteps(js.zeta, L, js.lam1, js.rho[order], js.gamma[order])


__all__ = ["jacobi_start", "linear_optimum", "LinearOptimum", "optimum_memory_bytes", "TASKS"]
