"""Infinite-depth reference floors of the softmax tasks (docs/reference-floors.md).

Three floors, each a predictor built from temperature-only heads
``p(kappa) = softmax_i(kappa cos(x_test, x_i))`` (or another attention map, below):

- ``single``: one head with its least-squares gain (``depthscale.sims.temperature_heads``);
- ``convex``: the best non-negative mixture ``sum_j v_j p(kappa_j) . y`` over a log grid of
  temperatures (non-negative least squares). The base model averages its layers with weights 1/L
  and one shared gain, so as L grows it can reach any non-negative mixture of single-layer rules and
  nothing outside that set: this is its infinite-depth floor if every layer were a temperature head;
- ``mixture``: the best signed mixture of ``K`` temperatures (``K = 2`` by default), kappas and gains
  optimised: the corresponding limit when every layer has its own value map (gains of either sign).

Attention maps. ``attention=`` (default ``softmax``) replaces the softmax of every head by another
map of the model (``ModelConfig.attention``, ``sims/attention_maps.py``): ``p(kappa) =
attention(kappa cos)``. For the normalised maps (sparsemax, 1.5-entmax) every statement above holds
as it stands. For the unnormalised ``sigmoid`` (``sigmoid(kappa cos_i - log P)``) and ``relu``
(``relu(kappa cos_i) / P``) a head's weights do not sum to one, and their total changes with kappa.
``convex`` is then still the best non-negative mixture of heads, and still the limit of the base
model's layer average with a positive shared gain (its weights ``v_j`` are that gain times the
fraction of layers at ``kappa_j``); what it loses is the reading of ``sum_j v_j`` as the gain of
one normalised head. Two limits tie the maps together: ``relu(kappa z) / P = kappa relu(z) / P``,
so every relu head is the same head up to scale: all three relu floors are one predictor, the
single head with its gain (the gain absorbs kappa; ``convex`` needs that gain positive). As kappa
grows, softmax, sparsemax and 1.5-entmax heads all tend to the hard argmax (top-1) head; at kappa =
0 a sigmoid head weighs every token ``1/(P + 1)``, the uniform softmax head up to the gain.

Contexts. Every floor is fitted on the fitting contexts ``rng_for(task, seed, "baseline-fit")`` and
evaluated on the evaluation contexts ``eval_batches(task, n_eval, seed)`` -- the contexts on which
``depthscale.sims.measure.evaluate`` measures a run with that task, seed and ``eval_contexts =
n_eval``. The two sets are independent, so the evaluated losses are not biased low by the fit, and
per-context squared errors pair with a run's (``paired_difference``, ``excess_over_floors``). The
standard errors are those of the evaluation mean for the fitted predictor (``std / sqrt(n_eval)``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize, nnls

from ..theory._choices import FLOOR_NAMES
from ..theory._validate import check_int, check_real
from .config import TaskConfig
from .temperature_heads import (
    KAPPA_RANGE,
    N_GRID,
    HeadMixture,
    SingleHead,
    check_attention,
    check_fit_inputs,
    check_head_task,
    fit_single_head,
    fit_two_heads,
    head_contexts,
    head_errors,
    head_outputs,
    optimal_gains,
    paired_difference,
)

MAX_TEMPERATURES = 8  # K of the signed mixture: each extra temperature costs a Nelder-Mead in K dimensions


@dataclass(frozen=True)
class ConvexMixture:
    """Best non-negative mixture of temperature heads: its ``support`` (the grid kappas with weight
    ``> 0``, increasing) and their ``weights``; ``fit_loss`` on the fitting contexts, ``loss`` +- ``se``
    and per-context squared errors ``sq_err`` on the evaluation contexts."""

    support: tuple
    weights: tuple
    fit_loss: float
    loss: float
    se: float
    sq_err: np.ndarray


@dataclass(frozen=True)
class SignedMixture(HeadMixture):
    """Best signed mixture of ``len(kappas)`` temperatures (``kappas`` increasing, ``gains``). Gains of
    nearly coinciding kappas can be large and opposite (a head plus its kappa-derivative): the loss is
    stable there, the individual gains are not."""


@dataclass(frozen=True)
class ReferenceFloors:
    """The three floors of one ``(task, seed)`` with the context counts they used and the
    ``attention`` map of their heads."""

    task: TaskConfig
    seed: int
    n_fit: int
    n_eval: int
    single: SingleHead
    convex: ConvexMixture
    mixture: SignedMixture
    attention: str = "softmax"

    def sq_errs(self) -> dict:
        """Per-context squared errors on the evaluation contexts, by floor name."""
        return {name: getattr(self, name).sq_err for name in FLOOR_NAMES}


# ------------------------------------------------------------------------------------------------
def kappa_grid(kappa_range=KAPPA_RANGE, n_grid: int = N_GRID) -> np.ndarray:
    """The log-spaced temperature grid ``geomspace(*kappa_range, n_grid)``, validated.

    Examples
    --------
    >>> kappa_grid((1.0, 100.0), 3).tolist()
    [1.0, 10.0, 100.0]
    """
    lo, hi = (check_real("kappa_range", v, lo=0, lo_open=True) for v in kappa_range)
    if not lo < hi:
        raise ValueError(f"kappa_range={tuple(kappa_range)!r}: must be (lo, hi) with 0 < lo < hi")
    return np.geomspace(lo, hi, check_int("n_grid", n_grid, lo=3))


def fit_convex(
    cos, y, target, kappas, threads: int = 1, S: np.ndarray | None = None, attention: str = "softmax"
) -> tuple[tuple, tuple, float]:
    """Best non-negative mixture of the heads at ``kappas`` on the given contexts.

    Minimises ``mean((S v - target)^2)`` over ``v >= 0`` with ``S[:, j] = p(kappas[j]) . y``. The
    problem is reduced exactly to ``m x m`` (``m`` temperatures) by a QR factorisation of ``S`` (``|S v - t|^2 =
    |R v - Q^T t|^2 + const``) and solved by ``scipy.optimize.nnls``. Returns ``(support, weights,
    loss)``: the kappas with positive weight (increasing, duplicates merged), their weights and the
    mean squared error on these contexts. On a one-point grid this is the single head at that kappa
    whenever its least-squares gain is positive. ``S``: ``head_outputs(cos, y, kappas, attention=attention)``
    if already computed (columns in the order of ``kappas``). ``attention``: the map of the heads
    (``head_outputs``); for the unnormalised ``sigmoid`` and ``relu`` the weights are still ``>= 0``
    but need not sum to the gain of a layer average (see the module docstring).

    Examples
    --------
    >>> cos = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.5]]); y = np.array([[1.0, 0.0], [2.0, 1.0], [0.0, 3.0]])
    >>> support, w, loss = fit_convex(cos, y, 2.0 * head_outputs(cos, y, [1e3])[:, 0], [1e3])
    >>> support, [round(v, 12) for v in w], round(loss, 20)
    ((1000.0,), [2.0], 0.0)
    """
    kap, first = np.unique(np.atleast_1d(np.asarray(kappas, dtype=np.float64)), return_index=True)
    if kap.size < 1:
        raise ValueError("kappas=[]: must hold at least one temperature")
    cos, y, target, _ = check_fit_inputs(cos, y, target, KAPPA_RANGE, N_GRID)
    check_attention(attention)
    if S is None:
        S = head_outputs(cos, y, kap, threads, attention)
    else:
        S = np.asarray(S, dtype=np.float64)
        if S.shape != (cos.shape[0], len(kappas)):
            raise ValueError(f"S.shape={S.shape}: must be (n, len(kappas)) = {(cos.shape[0], len(kappas))}")
        S = S[:, first]
    Q, R = np.linalg.qr(S)
    v = nnls(R, Q.T @ target, maxiter=50 * kap.size)[0]
    on = v > 0
    loss = float(np.mean((S[:, on] @ v[on] - target) ** 2)) if on.any() else float(np.mean(target**2))
    return tuple(float(k) for k in kap[on]), tuple(float(w) for w in v[on]), loss


def _mixture_loss(S, target):
    # least squares in the span of S's columns; lstsq copes with (nearly) coinciding temperatures
    g = np.linalg.lstsq(S, target, rcond=None)[0]
    return float(np.mean((S @ g - target) ** 2))


def fit_signed_mixture(
    cos,
    y,
    target,
    K: int = 2,
    kappa_range=KAPPA_RANGE,
    n_grid: int = N_GRID,
    threads: int = 1,
    single_kappa: float | None = None,
    S_grid: np.ndarray | None = None,
    attention: str = "softmax",
) -> tuple[tuple, tuple, float]:
    """Best signed mixture of ``K`` temperatures on the given contexts.

    ``K = 2`` is ``depthscale.sims.temperature_heads.fit_two_heads``. For ``K > 2`` the ``K - 1`` solution is
    extended greedily by the grid temperature that lowers the least-squares loss most, then all ``K``
    log-kappas are refined by Nelder-Mead (kept only if better), so the fitting loss never increases
    with ``K``. Returns ``(kappas, gains, loss)`` with kappas increasing. ``single_kappa``,
    ``S_grid`` and ``attention`` as in ``fit_two_heads``.

    Examples
    --------
    >>> from depthscale.sims.tasks import make_batch
    >>> from depthscale.sims.temperature_heads import head_inputs
    >>> b = make_batch(TaskConfig(task="topk", k=2, d=4, P=16), 256, np.random.default_rng(0))
    >>> cos, y, t = head_inputs(b)
    >>> bool(fit_signed_mixture(cos, y, t, 3)[2] <= fit_signed_mixture(cos, y, t, 2)[2] + 1e-12)
    True
    """
    K = check_int("K", K, lo=1, hi=MAX_TEMPERATURES)
    cos, y, target, grid = check_fit_inputs(cos, y, target, kappa_range, n_grid)
    check_attention(attention)
    if S_grid is None:
        S_grid = head_outputs(cos, y, grid, threads, attention)
    if K == 1:
        kappa, gain, loss = fit_single_head(cos, y, target, kappa_range, n_grid, threads, S_grid, attention)
        return (kappa,), (gain,), loss
    kap: tuple | np.ndarray
    if K == 2:
        kap, gains, loss = fit_two_heads(cos, y, target, kappa_range, n_grid, threads, single_kappa, S_grid, attention)
        return kap, gains, loss
    prev, _, prev_loss = fit_signed_mixture(
        cos, y, target, K - 1, kappa_range, n_grid, threads, single_kappa, S_grid, attention
    )
    S_prev = head_outputs(cos, y, prev, threads, attention)
    trial = [_mixture_loss(np.column_stack([S_prev, S_grid[:, j]]), target) for j in range(grid.size)]
    j = int(np.argmin(trial))
    lo, hi = math.log(grid[0]), math.log(grid[-1])
    start = np.clip(np.log([*prev, grid[j]]), lo, hi)

    def obj(lk):
        return _mixture_loss(head_outputs(cos, y, np.exp(np.clip(lk, lo, hi)), threads, attention), target)

    f0 = obj(start)
    res = minimize(
        obj,
        start,
        method="Nelder-Mead",
        bounds=[(lo, hi)] * K,
        options={"xatol": 1e-2, "fatol": 1e-9 * float(np.mean(target**2)), "maxfev": 100 * K},
    )
    best: np.ndarray = res.x if res.fun < f0 else start
    kap = np.sort(np.exp(np.clip(best, lo, hi)))
    g, loss = optimal_gains(head_outputs(cos, y, kap, threads, attention), target)
    if loss > prev_loss:  # rounding in the refit: keep the smaller mixture padded with a zero gain
        g_prev, loss = optimal_gains(S_prev, target)
        kap, g = np.append(np.asarray(prev), grid[j]), np.append(g_prev, 0.0)
        order = np.argsort(kap)
        kap, g = kap[order], g[order]
    return tuple(float(k) for k in kap), tuple(float(v) for v in g), float(loss)


# ------------------------------------------------------------------------------------------------
def reference_floors(
    task: TaskConfig,
    seed: int,
    n_fit: int = 8192,
    n_eval: int = 10240,
    chunk: int = 1024,
    kappa_range=KAPPA_RANGE,
    n_grid: int = N_GRID,
    K: int = 2,
    threads: int = 1,
    attention: str = "softmax",
) -> ReferenceFloors:
    """The ``single``, ``convex`` and ``mixture`` floors of ``(task, seed)`` (see the module docstring).

    Parameters
    ----------
    task : TaskConfig
    seed : int; selects both the fitting and the evaluation contexts.
    n_fit : fitting contexts (``rng_for(task, seed, "baseline-fit")``, the first ``n_fit``).
    n_eval : evaluation contexts (``eval_batches(task, n_eval, seed)``); use the run's
        ``TrainConfig.eval_contexts`` to pair with its ``sq_err``.
    chunk : contexts generated per block (does not change the contexts).
    kappa_range, n_grid : the log temperature grid of the single-head search and of the convex
        mixture; the convex grid also holds the fitted single-head kappa, so on the fitting contexts
        ``convex`` is never above ``single`` when the single head's gain is positive.
    K : temperatures of the signed mixture (1 .. MAX_TEMPERATURES; 2: the best two-temperature mixture).
    threads : numba threads (the numbers do not depend on it).
    attention : the map of every head, one of ``sims.attention_maps.ATTENTIONS`` (the model's
        ``ModelConfig.attention``); default ``softmax``. The contexts do not depend on it, so floors
        of different maps pair with each other and with every run on ``(task, seed, n_eval)``.

    Examples
    --------
    >>> fl = reference_floors(TaskConfig(task="topk", k=2, d=4, P=16), 0, n_fit=512, n_eval=256)
    >>> bool(fl.convex.fit_loss <= fl.single.fit_loss + 1e-12), fl.sq_errs()["convex"].shape
    (True, (256,))
    """
    n_fit, n_eval, chunk = check_head_task(task, seed, n_fit, n_eval, chunk)
    grid = kappa_grid(kappa_range, n_grid)
    K = check_int("K", K, lo=1, hi=MAX_TEMPERATURES)
    check_attention(attention)
    (cf, yf, tf), (ce, ye, te) = head_contexts(task, seed, n_fit, n_eval, chunk, threads)
    att = attention

    S_grid = head_outputs(cf, yf, grid, threads, att)  # shared by the three fits
    kappa, gain, fit1 = fit_single_head(cf, yf, tf, kappa_range, n_grid, threads, S_grid, att)
    sq, loss, se = head_errors(ce, ye, te, [kappa], [gain], threads, att)
    single = SingleHead(kappa, gain, fit1, loss, se, sq)

    S_conv = np.column_stack([S_grid, head_outputs(cf, yf, [kappa], threads, att)])
    support, weights, fitc = fit_convex(cf, yf, tf, np.append(grid, kappa), threads, S_conv, att)
    if support:
        sq, loss, se = head_errors(ce, ye, te, list(support), list(weights), threads, att)
    else:  # every head anti-correlated with the target: the best non-negative predictor is 0
        sq = te**2
        loss, se = float(sq.mean()), float(sq.std(ddof=1) / math.sqrt(sq.size))
    convex = ConvexMixture(support, weights, fitc, loss, se, sq)

    kappas, gains, fitm = fit_signed_mixture(cf, yf, tf, K, kappa_range, n_grid, threads, kappa, S_grid, att)
    sq, loss, se = head_errors(ce, ye, te, list(kappas), list(gains), threads, att)
    mixture = SignedMixture(kappas, gains, fitm, loss, se, sq)
    return ReferenceFloors(task, int(seed), n_fit, n_eval, single, convex, mixture, att)


def excess_over_floors(sq_err, floors: ReferenceFloors) -> dict:
    """Paired ``R - floor`` for a run's per-context squared errors ``sq_err`` on the same contexts.

    ``sq_err`` must come from the evaluation contexts of ``floors`` (same task, seed and
    ``n_eval``, e.g. ``measure.evaluate(...)["sq_err"]``). Returns ``{name: (mean, se)}`` for
    ``single``, ``convex`` and ``mixture``.

    Examples
    --------
    >>> fl = reference_floors(TaskConfig(task="topk", k=2, d=4, P=16), 0, n_fit=512, n_eval=256)
    >>> excess_over_floors(fl.single.sq_err, fl)["single"]
    (0.0, 0.0)
    """
    if not isinstance(floors, ReferenceFloors):
        raise ValueError(f"floors={type(floors).__name__}: must be a ReferenceFloors")
    sq_err = np.asarray(sq_err, dtype=np.float64)
    if sq_err.shape != (floors.n_eval,):
        raise ValueError(f"sq_err.shape={sq_err.shape}: must be ({floors.n_eval},), the floors' evaluation contexts")
    return {name: paired_difference(sq_err, e) for name, e in floors.sq_errs().items()}
