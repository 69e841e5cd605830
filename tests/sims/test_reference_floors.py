"""Reference floors checked against an independent brute force: plain numpy softmax heads, explicit
least squares, non-negative least squares by enumerating every support, dense grids, and Monte Carlo
over independent evaluation sets for the standard errors; for every other attention map, heads
recomputed from the map's definition (``test_temperature_heads.bf_outputs``) with
``scipy.optimize.nnls`` and ``numpy.linalg.lstsq``."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize
from test_temperature_heads import ATTENTIONS, bf_outputs

from depthscale.sims.config import TaskConfig, rng_for
from depthscale.sims.reference_floors import (
    excess_over_floors,
    fit_convex,
    fit_signed_mixture,
    kappa_grid,
    reference_floors,
)
from depthscale.sims.tasks import batches, eval_batches, make_batch

TASK = TaskConfig(task="topk", k=2, a=0.5, b=0.5, d=6, P=24)


def bf_inputs(batch):
    """cos, y, target by plain numpy."""
    X, q = np.asarray(batch.X), np.asarray(batch.x_test)
    cos = np.einsum("bpd,bd->bp", X, q) / (np.linalg.norm(X, axis=2) * np.linalg.norm(q, axis=1)[:, None])
    return cos, np.asarray(batch.y), np.asarray(batch.target)


def bf_contexts(rng_or_batches):
    parts = [bf_inputs(b) for b in rng_or_batches]
    return tuple(np.concatenate([p[i] for p in parts]) for i in range(3))


def bf_heads(cos, y, kappas):
    """S[b, j] = softmax(kappa_j cos[b]) . y[b], plain numpy."""
    out = []
    for k in kappas:
        z = k * cos
        e = np.exp(z - z.max(axis=1, keepdims=True))
        out.append((e / e.sum(axis=1, keepdims=True) * y).sum(axis=1))
    return np.stack(out, axis=1)


def bf_ls(S, t):
    """Least squares by the normal equations; returns (weights, mean squared error)."""
    v = np.linalg.solve(S.T @ S, S.T @ t)
    return v, float(np.mean((S @ v - t) ** 2))


def bf_nnls(S, t):
    """Exact NNLS by enumeration: the best unconstrained fit over every support whose weights are all >= 0."""
    m = S.shape[1]
    best = (np.zeros(m), float(np.mean(t**2)))
    for r in range(1, m + 1):
        for sup in itertools.combinations(range(m), r):
            v, loss = bf_ls(S[:, sup], t)
            if np.all(v >= 0) and loss < best[1]:
                full = np.zeros(m)
                full[list(sup)] = v
                best = (full, loss)
    return best


@pytest.fixture(scope="module")
def fitdata():
    return bf_inputs(make_batch(TASK, 2000, np.random.default_rng(11)))


@pytest.mark.parametrize(
    "grid", [[0.3, 2.0, 5.0, 12.0, 40.0, 300.0], [1.0, 1.5, 2.2, 3.3, 5.0, 7.5], [0.01, 0.1, 1000.0]]
)
def test_convex_equals_enumerated_nnls(fitdata, grid):
    cos, y, t = fitdata
    support, weights, loss = fit_convex(cos, y, t, grid)
    v, bf_loss = bf_nnls(bf_heads(cos, y, grid), t)
    assert loss == pytest.approx(bf_loss, rel=1e-9)
    assert support == tuple(k for k, w in zip(grid, v) if w > 1e-9 * v.max())
    np.testing.assert_allclose(weights, v[v > 1e-9 * v.max()], rtol=1e-6)


@given(kappa=st.floats(0.05, 500.0), seed=st.integers(0, 2**31))
@settings(deadline=None, max_examples=15)
def test_convex_on_one_point_grid_is_the_single_head(kappa, seed):
    cos, y, t = bf_inputs(make_batch(TASK, 300, np.random.default_rng(seed)))
    s = bf_heads(cos, y, [kappa])[:, 0]
    g = (s @ t) / (s @ s)
    support, weights, loss = fit_convex(cos, y, t, [kappa])
    if g > 0:
        assert support == (kappa,) and weights[0] == pytest.approx(g, rel=1e-9)
        assert loss == pytest.approx(np.mean((g * s - t) ** 2), rel=1e-9)
    else:  # a non-negative weight cannot use an anti-correlated head
        assert support == () and loss == pytest.approx(np.mean(t**2))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_convex_never_above_any_grid_head(seed):
    task = TaskConfig(task="topk", k=3, a=0.25, b=1.0, d=5, P=20)
    cos, y, t = bf_inputs(make_batch(task, 600, np.random.default_rng(seed)))
    grid = kappa_grid((0.01, 1e4), 25)
    S = bf_heads(cos, y, grid)
    _, _, loss = fit_convex(cos, y, t, grid)
    for j in range(grid.size):
        s = S[:, j]
        g = max((s @ t) / (s @ s), 0.0)
        assert loss <= np.mean((g * s - t) ** 2) * (1 + 1e-12)


def test_signed_mixtures_match_least_squares_and_improve_with_k(fitdata):
    cos, y, t = fitdata
    losses = []
    for K in (1, 2, 3):
        kappas, gains, loss = fit_signed_mixture(cos, y, t, K)
        assert len(kappas) == K and list(kappas) == sorted(kappas)
        S = bf_heads(cos, y, kappas)
        bf = np.linalg.lstsq(S, t, rcond=None)[0]
        assert loss == pytest.approx(np.mean((S @ bf - t) ** 2), rel=1e-7)
        assert loss == pytest.approx(np.mean((S @ np.asarray(gains) - t) ** 2), rel=1e-7)
        losses.append(loss)
    assert losses[1] <= losses[0] * (1 + 1e-12) and losses[2] <= losses[1] * (1 + 1e-12)
    # K = 3 beats every triple of a coarse independent grid (up to the refinement tolerance)
    grid = np.geomspace(0.3, 300, 9)
    S = bf_heads(cos, y, grid)
    coarse = min(
        np.mean((S[:, c] @ np.linalg.lstsq(S[:, c], t, rcond=None)[0] - t) ** 2)
        for c in map(list, itertools.combinations(range(grid.size), 3))
    )
    assert losses[2] <= coarse * (1 + 1e-4)


def test_reference_floors_fit_and_evaluate_on_the_stated_contexts():
    n_fit, n_eval, seed = 900, 700, 4
    fl = reference_floors(TASK, seed, n_fit=n_fit, n_eval=n_eval, chunk=256, n_grid=25)
    cf, yf, tf = bf_contexts(batches(TASK, n_fit, rng_for(TASK, seed, "baseline-fit"), chunk=300))
    ce, ye, te = bf_contexts(eval_batches(TASK, n_eval, seed, chunk=300))
    assert not np.isin(te, tf).any()  # independent context sets
    preds = {"single": (fl.single.kappa,), "convex": fl.convex.support, "mixture": fl.mixture.kappas}
    gains = {"single": (fl.single.gain,), "convex": fl.convex.weights, "mixture": fl.mixture.gains}
    for name, kap in preds.items():
        floor = getattr(fl, name)
        ev = (bf_heads(ce, ye, kap) @ np.asarray(gains[name]) - te) ** 2
        fit = (bf_heads(cf, yf, kap) @ np.asarray(gains[name]) - tf) ** 2
        np.testing.assert_allclose(floor.sq_err, ev, rtol=1e-9, atol=1e-12)
        assert floor.loss == pytest.approx(ev.mean(), rel=1e-12)
        assert floor.se == pytest.approx(ev.std(ddof=1) / np.sqrt(n_eval), rel=1e-9)
        assert floor.fit_loss == pytest.approx(fit.mean(), rel=1e-8)
    # convex grid holds the single kappa; the signed pair contains the single head
    assert fl.convex.fit_loss <= fl.single.fit_loss * (1 + 1e-12)
    assert fl.mixture.fit_loss <= fl.single.fit_loss * (1 + 1e-12)
    assert all(w > 0 for w in fl.convex.weights)


def test_excess_over_floors_is_paired():
    fl = reference_floors(TASK, 1, n_fit=600, n_eval=500, n_grid=25)
    rng = np.random.default_rng(3)
    run = fl.convex.sq_err * np.exp(0.1 * rng.standard_normal(500))
    out = excess_over_floors(run, fl)
    for name, e in fl.sq_errs().items():
        d = run - e
        assert out[name][0] == pytest.approx(d.mean()) and out[name][1] == pytest.approx(d.std(ddof=1) / np.sqrt(500))
    with pytest.raises(ValueError, match="sq_err"):
        excess_over_floors(run[:-1], fl)


def test_standard_errors_match_the_spread_over_independent_evaluation_sets():
    """The s.e. of a floor on n contexts vs the spread of its loss over M independent sets of n contexts.

    The sample standard deviation of M nearly normal losses has relative error 1/sqrt(2 (M - 1)); the
    check allows four of those.
    """
    n, M = 400, 60
    fl = reference_floors(TASK, 2, n_fit=2000, n_eval=n, n_grid=25)
    rng = np.random.default_rng(99)
    losses = {name: [] for name in ("single", "convex", "mixture")}
    kap = {
        "single": ((fl.single.kappa,), (fl.single.gain,)),
        "convex": (fl.convex.support, fl.convex.weights),
        "mixture": (fl.mixture.kappas, fl.mixture.gains),
    }
    for _ in range(M):
        c, y, t = bf_inputs(make_batch(TASK, n, rng))
        for name, (k, g) in kap.items():
            losses[name].append(np.mean((bf_heads(c, y, k) @ np.asarray(g) - t) ** 2))
    tol = 4 / np.sqrt(2 * (M - 1))
    for name in losses:
        spread = np.std(losses[name], ddof=1)
        assert abs(spread / getattr(fl, name).se - 1) < tol, name


@pytest.mark.parametrize("attention", ATTENTIONS)
def test_convex_of_every_map_equals_scipy_nnls(fitdata, attention):
    cos, y, t = fitdata
    grid = [0.05, 0.5, 2.0, 5.0, 12.0, 40.0, 300.0]
    S = bf_outputs(cos, y, grid, attention)
    v = optimize.nnls(S, t)[0]
    support, weights, loss = fit_convex(cos, y, t, grid, attention=attention)
    assert loss == pytest.approx(np.mean((S @ v - t) ** 2), rel=1e-9)
    pred = bf_outputs(cos, y, support, attention) @ np.asarray(weights)
    np.testing.assert_allclose(pred, S @ v, rtol=1e-6, atol=1e-9 * np.abs(t).max())
    if attention != "relu":  # relu heads are proportional: the weights are not unique, the predictor is
        assert support == tuple(k for k, w in zip(grid, v) if w > 1e-9 * v.max())
        np.testing.assert_allclose(weights, v[v > 1e-9 * v.max()], rtol=1e-6)


@pytest.mark.parametrize("attention", ATTENTIONS)
def test_signed_mixtures_of_every_map_match_lstsq(fitdata, attention):
    cos, y, t = fitdata
    losses = []
    for K in (1, 2, 3):
        kappas, gains, loss = fit_signed_mixture(cos, y, t, K, attention=attention)
        assert len(kappas) == K and list(kappas) == sorted(kappas)
        S = bf_outputs(cos, y, kappas, attention)
        bf = np.linalg.lstsq(S, t, rcond=None)[0]
        assert loss == pytest.approx(np.mean((S @ bf - t) ** 2), rel=1e-7)
        assert loss == pytest.approx(np.mean((S @ np.asarray(gains) - t) ** 2), rel=1e-7)
        losses.append(loss)
    assert losses[1] <= losses[0] * (1 + 1e-12) and losses[2] <= losses[1] * (1 + 1e-12)
    # K = 2 beats every pair of a coarse independent grid (up to the refinement tolerance)
    grid = np.geomspace(0.03, 3000, 11)
    S = bf_outputs(cos, y, grid, attention)
    coarse = min(
        np.mean((S[:, c] @ np.linalg.lstsq(S[:, c], t, rcond=None)[0] - t) ** 2)
        for c in map(list, itertools.combinations(range(grid.size), 2))
    )
    assert losses[1] <= coarse * (1 + 1e-4)


@pytest.mark.parametrize("attention", ATTENTIONS[1:])
def test_reference_floors_of_every_map_on_the_stated_contexts(attention):
    n_fit, n_eval, seed = 900, 700, 4
    fl = reference_floors(TASK, seed, n_fit=n_fit, n_eval=n_eval, chunk=256, n_grid=25, attention=attention)
    assert fl.attention == attention
    cf, yf, tf = bf_contexts(batches(TASK, n_fit, rng_for(TASK, seed, "baseline-fit"), chunk=300))
    ce, ye, te = bf_contexts(eval_batches(TASK, n_eval, seed, chunk=300))
    heads = {
        "single": ((fl.single.kappa,), (fl.single.gain,)),
        "convex": (fl.convex.support, fl.convex.weights),
        "mixture": (fl.mixture.kappas, fl.mixture.gains),
    }
    for name, (kap, g) in heads.items():
        floor = getattr(fl, name)
        ev = (bf_outputs(ce, ye, kap, attention) @ np.asarray(g) - te) ** 2
        fit = (bf_outputs(cf, yf, kap, attention) @ np.asarray(g) - tf) ** 2
        np.testing.assert_allclose(floor.sq_err, ev, rtol=1e-9, atol=1e-12)
        assert floor.loss == pytest.approx(ev.mean(), rel=1e-12)
        assert floor.se == pytest.approx(ev.std(ddof=1) / np.sqrt(n_eval), rel=1e-9)
        assert floor.fit_loss == pytest.approx(fit.mean(), rel=1e-8)
    assert fl.convex.fit_loss <= fl.single.fit_loss * (1 + 1e-12)
    assert fl.mixture.fit_loss <= fl.single.fit_loss * (1 + 1e-12)


def test_relu_floors_are_one_predictor():
    """Every relu head is the kappa = 1 head times kappa, so the single, convex and signed floors are all
    the least-squares multiple of that head (its gain is positive here): one fitting loss, one set of
    per-context errors."""
    fl = reference_floors(TASK, 5, n_fit=800, n_eval=600, n_grid=25, attention="relu")
    cf, yf, tf = bf_contexts(batches(TASK, 800, rng_for(TASK, 5, "baseline-fit")))
    ce, ye, te = bf_contexts(eval_batches(TASK, 600, 5))
    s = bf_outputs(cf, yf, [1.0], "relu")[:, 0]
    g = (s @ tf) / (s @ s)
    assert g > 0
    sq = (g * bf_outputs(ce, ye, [1.0], "relu")[:, 0] - te) ** 2
    for name in ("single", "convex", "mixture"):
        floor = getattr(fl, name)
        assert floor.fit_loss == pytest.approx(np.mean((g * s - tf) ** 2), rel=1e-9), name
        np.testing.assert_allclose(floor.sq_err, sq, rtol=1e-7, atol=1e-12)


def test_bad_input_raises(fitdata):
    cos, y, t = fitdata
    with pytest.raises(ValueError, match="kappa"):
        fit_convex(cos, y, t, [-1.0])
    with pytest.raises(ValueError, match="kappas"):
        fit_convex(cos, y, t, [])
    with pytest.raises(ValueError, match="K"):
        fit_signed_mixture(cos, y, t, 0)
    with pytest.raises(ValueError, match="K"):
        reference_floors(TASK, 0, K=99)
    with pytest.raises(ValueError, match="n_grid"):
        reference_floors(TASK, 0, n_grid=1)
    with pytest.raises(ValueError, match="kappa_range"):
        kappa_grid((5.0, 1.0), 10)
    with pytest.raises(ValueError, match="floors"):
        excess_over_floors(np.zeros(3), object())
    with pytest.raises(ValueError, match="attention"):
        fit_convex(cos, y, t, [1.0], attention="tanh")
    with pytest.raises(ValueError, match="attention"):
        fit_signed_mixture(cos, y, t, 3, attention="tanh")
