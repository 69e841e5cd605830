"""Temperature-only attention heads, the pieces of the reference floors ("room for depth", docs/sources.md, the pilots).

Single head: ``yhat = g * softmax_i(kappa * cos(x_test, x_i)) . y``. For a fixed ``kappa`` the best
gain is the least-squares one, ``g = E[s y*] / E[s^2]`` with ``s = p(kappa) . y``, and the loss is
``E[y*^2] - E[s y*]^2 / E[s^2]``. ``kappa >= 0`` is chosen on a log grid, then refined by a bounded
scalar search on ``log kappa`` between the best grid point's neighbours.

Two temperatures: ``yhat = g1 p(kappa1) . y + g2 p(kappa2) . y``, gains by 2 x 2 least squares,
kappas from the best pair of a 2-D log grid (or the refined single kappa with its best grid partner,
whichever fits better), then refined by Nelder-Mead on the log kappas. Because a mixture contains
the single head (``g2 = 0``) and the search starts at least as well as it, the mixture never fits
the fitting contexts worse than the single head. The gains are unconstrained, so on some tasks the
best mixture is the limit of two coinciding temperatures (a head plus a multiple of its derivative
in kappa): the search then returns two nearly equal kappas with large opposite gains. Its loss is
well defined and stable; the individual gains are not meaningful there.

``attention=`` replaces softmax by another map of the model (``sims/attention_maps.py``): sparsemax,
1.5-entmax, ``sigmoid(kappa cos - log P)`` or ``relu(kappa cos) / P`` (default softmax, whose numbers
do not change).

Both are fitted on their own training contexts (``rng_for(task, seed, "baseline-fit")``) and
evaluated on the evaluation contexts of ``depthscale.sims.tasks.eval_batches(task, n_eval, seed)``,
the very contexts ``depthscale.sims.measure.evaluate`` uses, so per-context squared errors can be
compared with ``paired_difference``. The infinite-depth reference floors built from these heads
(non-negative and signed mixtures) are in ``depthscale.sims.reference_floors``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize, minimize_scalar

from ..theory._validate import SEED_MAX, check_int, check_real
from .attention_maps import (
    ENTMAX15,
    RELU,
    SIGMOID,
    SOFTMAX,
    SPARSEMAX,
    entmax15_inplace,
    relu_inplace,
    sigmoid_inplace,
    sparsemax_inplace,
)
from .attention_registry import get_attention
from .batch import Batch
from .config import TaskConfig, rng_for
from .jit import njit, prange
from .tasks import batches, eval_batches
from .threads import numba_threads, run_parallel

KAPPA_RANGE = (1e-2, 1e4)
N_GRID = 49  # 8 points per decade over KAPPA_RANGE


@dataclass(frozen=True)
class SingleHead:
    """The best temperature-only single head: fitted ``kappa``, ``gain`` and its loss on the fitting
    contexts (``fit_loss``), and on the evaluation contexts ``loss`` +- ``se`` with per-context
    squared errors ``sq_err``."""

    kappa: float
    gain: float
    fit_loss: float
    loss: float
    se: float
    sq_err: np.ndarray


@dataclass(frozen=True)
class HeadMixture:
    """A mixture of temperature heads ``sum_j gains_j p(kappas_j) . y``: its ``kappas`` and ``gains``,
    the other fields as in ``SingleHead``."""

    kappas: tuple
    gains: tuple
    fit_loss: float
    loss: float
    se: float
    sq_err: np.ndarray


@dataclass(frozen=True)
class TwoHeads(HeadMixture):
    """The best mixture of two temperatures."""


# ------------------------------------------------------------------------------------------------
def head_inputs(batch: Batch) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cosine similarities of the query to every context token, the labels and the targets.

    Returns ``cos (n, P), y (n, P), target (n,)`` as float64.

    Examples
    --------
    >>> from depthscale.sims.tasks import make_batch
    >>> b = make_batch(TaskConfig(task="easy-exact", d=4, P=8), 2, np.random.default_rng(0))
    >>> cos, y, t = head_inputs(b)
    >>> bool(np.allclose(cos.max(axis=1), 1.0))
    True
    """
    X = np.asarray(batch.X, dtype=np.float64)
    q = np.asarray(batch.x_test, dtype=np.float64)
    dots = np.matmul(X, q[:, :, None])[:, :, 0]
    nx = np.sqrt(np.einsum("bpd,bpd->bp", X, X))
    nq = np.sqrt(np.einsum("bd,bd->b", q, q))
    with np.errstate(invalid="ignore", divide="ignore"):
        cos = dots / (nx * nq[:, None])
    cos = np.where(np.isfinite(cos), cos, 0.0)  # a zero vector has no direction: similarity 0
    return cos, np.asarray(batch.y, dtype=np.float64), np.asarray(batch.target, dtype=np.float64)


@njit(cache=True, parallel=True)
def _head_outputs(cos, y, kappas, out):
    n, P = cos.shape
    for b in prange(n):
        cmax = cos[b, 0]
        for i in range(1, P):
            if cos[b, i] > cmax:
                cmax = cos[b, i]
        for k in range(kappas.size):
            kap = kappas[k]
            z = 0.0
            s = 0.0
            for i in range(P):
                e = math.exp(kap * (cos[b, i] - cmax))  # kappa >= 0: the maximum has exponent 0
                z += e
                s += e * y[b, i]
            out[b, k] = s / z


@njit(cache=True, parallel=True)
def _map_head_outputs(cos, y, kappas, kind, out):
    # the maps other than softmax, from sims/attention_maps.py, on one score vector per context
    n, P = cos.shape
    bias = -math.log(P)
    scale = 1.0 / P
    for b in prange(n):
        z = np.empty(P)
        shift = 0.0  # sparsemax and entmax are shift-invariant: scores <= 0 keep the threshold small
        if kind == SPARSEMAX or kind == ENTMAX15:
            shift = cos[b, 0]
            for i in range(1, P):
                if cos[b, i] > shift:
                    shift = cos[b, i]
        for k in range(kappas.size):
            kap = kappas[k]
            for i in range(P):
                z[i] = kap * (cos[b, i] - shift)
            if kind == SPARSEMAX:
                sparsemax_inplace(z)
            elif kind == ENTMAX15:
                entmax15_inplace(z)
            elif kind == SIGMOID:
                sigmoid_inplace(z, bias)
            elif kind == RELU:
                relu_inplace(z, scale)
            else:  # no fall-through: the caller checked the code (check_attention); NaN, never the raw scores
                z[:] = np.nan
            s = 0.0
            for i in range(P):
                s += z[i] * y[b, i]
            out[b, k] = s


def check_attention(attention) -> int:
    """The kernel code of a registered attention map's name, -1 for a user's map (JAX only: its heads
    are computed from its JAX function); ``ValueError`` naming ``attention`` for an unknown name."""
    code = get_attention(attention).code
    return -1 if code is None else code


def head_outputs(cos: np.ndarray, y: np.ndarray, kappas, threads: int = 1, attention: str = "softmax") -> np.ndarray:
    """``S[b, k] = attention(kappas[k] * cos[b]) . y[b]`` for every context and temperature.

    ``attention`` is a registered map (``sims.attention_registry``; a user's map runs through its JAX
    function, ``sims.jax_engine.map_head_outputs``). The built-in maps of the model
    (``ModelConfig.attention``): ``softmax``, ``sparsemax``, ``entmax15`` (weights on the simplex),
    ``sigmoid`` (``sigmoid(kappa cos_i - log P)``) and ``relu`` (``relu(kappa cos_i) / P``), the last
    two with the model's fixed bias and scale. At ``kappa = 0`` the normalised maps give the uniform
    weights ``1/P`` and sigmoid gives ``1/(P + 1)`` on every token; relu gives zero weights.

    Examples
    --------
    >>> cos = np.array([[1.0, 0.0]]); y = np.array([[2.0, 4.0]])
    >>> head_outputs(cos, y, [0.0, 1e6]).tolist()
    [[3.0, 2.0]]
    >>> head_outputs(cos, y, [0.0, 1.0], attention="sparsemax").tolist()
    [[3.0, 2.0]]
    """
    cos = np.ascontiguousarray(cos, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    if cos.ndim != 2 or cos.shape[1] < 1:
        raise ValueError(f"cos.shape={cos.shape}: must be (n, P) with P >= 1")
    if y.shape != cos.shape:
        raise ValueError(f"y.shape={y.shape}: must equal cos.shape {cos.shape}")
    kap = np.atleast_1d(np.asarray(kappas, dtype=np.float64))
    for v in kap:
        check_real("kappa", v, lo=0)
    kind = check_attention(attention)
    if kind < 0:
        from .jax_engine import map_head_outputs

        return map_head_outputs(get_attention(attention), cos, y, kap)
    out = np.empty((cos.shape[0], kap.size))
    if kind == SOFTMAX:
        run_parallel(_head_outputs, numba_threads(threads), cos, y, kap, out)
    else:
        run_parallel(_map_head_outputs, numba_threads(threads), cos, y, kap, kind, out)
    return out


def optimal_gains(S: np.ndarray, target: np.ndarray) -> tuple[np.ndarray, float]:
    """Least-squares gains ``g`` minimising ``mean((S g - target)^2)`` and that minimum.

    Examples
    --------
    >>> S = np.array([[1.0], [2.0]]); t = np.array([2.0, 4.0])
    >>> g, loss = optimal_gains(S, t)
    >>> g.tolist(), round(loss, 12)
    ([2.0], 0.0)
    """
    S = np.asarray(S, dtype=np.float64)
    target = np.asarray(target, dtype=np.float64)
    if S.ndim != 2 or target.shape != (S.shape[0],):
        raise ValueError(f"S.shape={S.shape}, target.shape={target.shape}: must be (n, m) and (n,)")
    g = np.linalg.lstsq(S, target, rcond=None)[0]
    return g, float(np.mean((S @ g - target) ** 2))


def _single_losses(S, target):
    # closed form per column: E[y*^2] - E[s y*]^2 / E[s^2]
    T = np.mean(target**2)
    G = np.mean(S * S, axis=0)
    b = np.mean(S * target[:, None], axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        loss = np.where(G > 0, T - b * b / G, T)
    return loss


def _pair_losses(S, target):
    # all pairs of columns at once from the Gram matrix
    n = S.shape[0]
    T = np.mean(target**2)
    G = S.T @ S / n
    b = S.T @ target / n
    d = np.diag(G)
    det = d[:, None] * d[None, :] - G * G
    num = (b * b)[:, None] * d[None, :] - 2 * b[:, None] * b[None, :] * G + (b * b)[None, :] * d[:, None]
    single = _single_losses(S, target)
    best_single = np.minimum(single[:, None], single[None, :])
    ok = det > 1e-10 * d[:, None] * d[None, :]
    with np.errstate(invalid="ignore", divide="ignore"):
        pair = np.where(ok, T - num / np.where(ok, det, 1.0), best_single)
    return np.minimum(pair, best_single)


def check_fit_inputs(cos, y, target, kappa_range, n_grid):
    """Validated float64 ``(cos, y, target)`` of a head fit (shapes ``(n, P)``, ``(n, P)``, ``(n,)``)."""
    cos = np.ascontiguousarray(cos, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    target = np.asarray(target, dtype=np.float64)
    if cos.ndim != 2 or y.shape != cos.shape or target.shape != (cos.shape[0],) or cos.shape[0] < 2:
        raise ValueError(f"cos.shape={cos.shape}: must be (n, P) with n >= 2, y (n, P) and target (n,)")
    lo, hi = (check_real("kappa_range", v, lo=0, lo_open=True) for v in kappa_range)
    if not lo < hi:
        raise ValueError(f"kappa_range={tuple(kappa_range)!r}: must be (lo, hi) with 0 < lo < hi")
    n_grid = check_int("n_grid", n_grid, lo=3)
    return cos, y, target, np.geomspace(lo, hi, n_grid)


def _grid_outputs(cos, y, grid, threads, S_grid, attention="softmax"):
    if S_grid is None:
        return head_outputs(cos, y, grid, threads, attention)
    S_grid = np.asarray(S_grid, dtype=np.float64)
    if S_grid.shape != (cos.shape[0], grid.size):
        raise ValueError(f"S_grid.shape={S_grid.shape}: must be (n, n_grid) = {(cos.shape[0], grid.size)}")
    return S_grid


def fit_single_head(
    cos,
    y,
    target,
    kappa_range=KAPPA_RANGE,
    n_grid: int = N_GRID,
    threads: int = 1,
    S_grid: np.ndarray | None = None,
    attention: str = "softmax",
) -> tuple[float, float, float]:
    """Fit ``kappa`` and the gain of one temperature-only head on the given contexts.

    Returns ``(kappa, gain, loss)`` with ``loss`` the mean squared error on these contexts.
    ``S_grid``: ``head_outputs`` on the log grid of ``kappa_range, n_grid`` (with this
    ``attention``) if already computed. ``attention``: the map of the head, as in ``head_outputs``;
    for ``relu`` every ``kappa > 0`` gives the same loss (``relu(kappa z) = kappa relu(z)``, the gain
    absorbs ``kappa``), so the returned ``kappa`` is arbitrary and only ``kappa * gain`` is determined.

    Examples
    --------
    >>> from depthscale.sims.tasks import make_batch
    >>> b = make_batch(TaskConfig(task="easy-exact", d=8, P=16), 256, np.random.default_rng(0))
    >>> kappa, gain, loss = fit_single_head(*head_inputs(b))
    >>> bool(loss < 1e-6 * np.mean(b.target ** 2)), round(gain, 6)
    (True, 1.0)
    """
    cos, y, target, grid = check_fit_inputs(cos, y, target, kappa_range, n_grid)
    check_attention(attention)
    S = _grid_outputs(cos, y, grid, threads, S_grid, attention)
    losses = _single_losses(S, target)
    i = int(np.argmin(losses))
    lo, hi = math.log(grid[max(i - 1, 0)]), math.log(grid[min(i + 1, grid.size - 1)])

    def obj(lk):
        return float(_single_losses(head_outputs(cos, y, [math.exp(lk)], threads, attention), target)[0])

    res = minimize_scalar(obj, bounds=(lo, hi), method="bounded", options={"xatol": 1e-3})
    kappa = math.exp(res.x) if res.fun < losses[i] else float(grid[i])
    g, loss = optimal_gains(head_outputs(cos, y, [kappa], threads, attention), target)
    return kappa, float(g[0]), loss


def fit_two_heads(
    cos,
    y,
    target,
    kappa_range=KAPPA_RANGE,
    n_grid: int = N_GRID,
    threads: int = 1,
    single_kappa: float | None = None,
    S_grid: np.ndarray | None = None,
    attention: str = "softmax",
) -> tuple[tuple, tuple, float]:
    """Fit the best mixture of two temperatures on the given contexts.

    ``single_kappa`` (default: fitted here) seeds the search, so the result is never worse on these
    contexts than the single head at that temperature. Returns ``((kappa1, kappa2), (g1, g2), loss)``
    with ``kappa1 <= kappa2``. ``S_grid`` and ``attention`` as in ``fit_single_head``; for ``relu``
    all heads are proportional, so the pair is no better than the single head (the second gain is 0
    up to rounding).

    Examples
    --------
    >>> from depthscale.sims.tasks import make_batch
    >>> b = make_batch(TaskConfig(task="topk", k=2, d=4, P=16), 256, np.random.default_rng(0))
    >>> cos, y, t = head_inputs(b)
    >>> _, _, two = fit_two_heads(cos, y, t)
    >>> bool(two <= fit_single_head(cos, y, t)[2] + 1e-12)
    True
    """
    cos, y, target, grid = check_fit_inputs(cos, y, target, kappa_range, n_grid)
    check_attention(attention)
    S_grid = _grid_outputs(cos, y, grid, threads, S_grid, attention)
    if single_kappa is None:
        single_kappa = fit_single_head(cos, y, target, kappa_range, n_grid, threads, S_grid, attention)[0]
    single_kappa = check_real("single_kappa", single_kappa, lo=0, lo_open=True)
    cand = np.append(grid, single_kappa)
    S_single = head_outputs(cos, y, [single_kappa], threads, attention)
    pair = _pair_losses(np.column_stack([S_grid, S_single]), target)
    np.fill_diagonal(pair, np.inf)  # identical temperatures are the single head
    i, j = np.unravel_index(np.argmin(pair), pair.shape)
    start = np.clip(np.log([cand[i], cand[j]]), math.log(grid[0]), math.log(grid[-1]))
    lo, hi = math.log(grid[0]), math.log(grid[-1])

    def obj(lk):
        Sk = head_outputs(cos, y, np.exp(np.clip(lk, lo, hi)), threads, attention)
        return float(_pair_losses(Sk, target)[0, 1])

    res = minimize(
        obj,
        start,
        method="Nelder-Mead",
        bounds=[(lo, hi), (lo, hi)],
        options={"xatol": 1e-2, "fatol": 1e-9 * float(np.mean(target**2)), "maxfev": 200},
    )
    best = res.x if res.fun < obj(start) else start
    kap = np.sort(np.exp(np.clip(best, lo, hi)))
    g, loss = optimal_gains(head_outputs(cos, y, kap, threads, attention), target)
    return (float(kap[0]), float(kap[1])), (float(g[0]), float(g[1])), loss


# ------------------------------------------------------------------------------------------------
_CACHE: dict = {}  # the last (task, seed, n_fit, n_eval) prepared: single and pair fits share it


def head_contexts(task, seed, n_fit, n_eval, chunk, threads):
    """``((cos, y, target) on the fitting contexts, (cos, y, target) on the evaluation contexts)``,
    cached per (task, seed, n_fit, n_eval) so that every head fitted to a task shares them."""
    key = (task, seed, n_fit, n_eval)
    if key not in _CACHE:
        # the stream keeps the label of the old name "baseline": the label seeds the fitting contexts,
        # so renaming it would change every stored floor
        fit = [
            head_inputs(b)
            for b in batches(task, n_fit, rng_for(task, seed, "baseline-fit"), chunk=chunk, threads=threads)
        ]
        ev = [head_inputs(b) for b in eval_batches(task, n_eval, seed, chunk=chunk, threads=threads)]
        _CACHE.clear()
        _CACHE[key] = tuple(tuple(np.concatenate([p[i] for p in parts]) for i in range(3)) for parts in (fit, ev))
    return _CACHE[key]


def check_head_task(task, seed, n_fit, n_eval, chunk):
    """Validate the task and context counts of a head fit; returns ``(n_fit, n_eval, chunk)``."""
    if not isinstance(task, TaskConfig):
        raise ValueError(f"task={task!r}: must be a TaskConfig")
    check_int("seed", seed, lo=0, hi=SEED_MAX)
    return check_int("n_fit", n_fit, lo=2), check_int("n_eval", n_eval, lo=2), check_int("chunk", chunk, lo=1)


def head_errors(cos, y, target, kappas, gains, threads, attention="softmax"):
    """Per-context squared errors of ``sum_j gains_j p(kappas_j) . y``, their mean and its standard error."""
    yhat = head_outputs(cos, y, kappas, threads, attention) @ np.asarray(gains, dtype=np.float64)
    sq = (yhat - target) ** 2
    return sq, float(sq.mean()), float(sq.std(ddof=1) / np.sqrt(sq.size))


def paired_difference(sq_err_a, sq_err_b) -> tuple[float, float]:
    """Mean and standard error of ``a - b`` over the same contexts (paired comparison).

    Examples
    --------
    >>> paired_difference([1.0, 2.0, 3.0], [0.5, 1.5, 2.5])
    (0.5, 0.0)
    """
    a = np.asarray(sq_err_a, dtype=np.float64)
    b = np.asarray(sq_err_b, dtype=np.float64)
    if a.ndim != 1 or a.shape != b.shape or a.size < 2:
        raise ValueError(f"sq_err shapes {a.shape} and {b.shape}: must be equal 1-D with at least 2 contexts")
    diff = a - b
    return float(diff.mean()), float(diff.std(ddof=1) / np.sqrt(diff.size))
