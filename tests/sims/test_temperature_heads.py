"""Checks of the temperature-only heads against brute-force references (scipy, dense grids), for
every attention map: the maps are recomputed here from their definitions (thresholds by bisection)."""

import numpy as np
import pytest
from scipy import optimize, special

from depthscale.sims.config import TaskConfig
from depthscale.sims.measure import evaluate
from depthscale.sims.reference_floors import reference_floors
from depthscale.sims.tasks import make_batch
from depthscale.sims.temperature_heads import (
    fit_single_head,
    fit_two_heads,
    head_inputs,
    head_outputs,
    optimal_gains,
    paired_difference,
)

TASK = TaskConfig(task="topk", k=2, a=0.5, b=0.5, d=6, P=24)
ATTENTIONS = ("softmax", "sparsemax", "entmax15", "sigmoid", "relu")


def bisect_threshold(u, q):
    """Per row, the ``tau`` with ``sum_i [u_i - tau]_+^q = 1``, by bisection (the sum falls as tau rises)."""
    lo = u.max(axis=1) - 1.0  # the sum is >= 1 here
    hi = u.max(axis=1)  # and 0 here
    for _ in range(64):  # the bracket has width 1: 64 halvings reach float64 resolution
        mid = 0.5 * (lo + hi)
        big = (np.maximum(u - mid[:, None], 0.0) ** q).sum(axis=1) >= 1.0
        lo, hi = np.where(big, mid, lo), np.where(big, hi, mid)
    return 0.5 * (lo + hi)


def bf_weights(cos, kappa, attention):
    """Attention weights of ``kappa * cos`` from the definitions: softmax, sparsemax (simplex projection,
    ``[z - tau]_+``), 1.5-entmax (``[z / 2 - tau]_+^2``), ``sigmoid(z - log P)``, ``relu(z) / P``."""
    P = cos.shape[1]
    if attention in ("sparsemax", "entmax15"):  # both are shift-invariant: scores <= 0, threshold near 0
        z = kappa * (cos - cos.max(axis=1, keepdims=True))
        u = z if attention == "sparsemax" else z / 2
        q = 1 if attention == "sparsemax" else 2
        return np.maximum(u - bisect_threshold(u, q)[:, None], 0.0) ** q
    z = kappa * cos
    if attention == "softmax":
        return special.softmax(z, axis=1)
    if attention == "sigmoid":
        return special.expit(z - np.log(P))
    assert attention == "relu"
    return np.maximum(z, 0.0) / P


def bf_outputs(cos, y, kappas, attention):
    """``S[b, j] = attention(kappas[j] cos[b]) . y[b]`` by plain numpy."""
    return np.stack([(bf_weights(cos, k, attention) * y).sum(axis=1) for k in kappas], axis=1)


def ls_single(S, t):
    """Least-squares gain of every column of S and its mean squared error, by plain numpy."""
    g = (S * t[:, None]).sum(axis=0) / (S * S).sum(axis=0)
    return g, ((S * g - t[:, None]) ** 2).mean(axis=0)


@pytest.fixture(scope="module")
def fitdata():
    b = make_batch(TASK, 1500, np.random.default_rng(2024))
    X, q = b.X, b.x_test
    cos = np.einsum("bpd,bd->bp", X, q) / (np.linalg.norm(X, axis=2) * np.linalg.norm(q, axis=1)[:, None])
    return cos, b.y, b.target


def _s(cos, y, kappa):
    return np.einsum("bp,bp->b", special.softmax(kappa * cos, axis=1), y)


def _loss_given_kappas(cos, y, t, kappas, with_pred=False):
    S = np.stack([_s(cos, y, k) for k in kappas], axis=1)
    res = optimize.least_squares(lambda g: S @ g - t, np.ones(len(kappas)), xtol=1e-15, ftol=1e-15, gtol=1e-15)
    return (np.mean(res.fun**2), res.fun + t, S) if with_pred else (np.mean(res.fun**2), res.x)


def test_head_inputs_and_outputs_match_bruteforce(fitdata):
    cos, y, t = fitdata
    b = make_batch(TASK, 20, np.random.default_rng(1))
    c2, y2, t2 = head_inputs(b)
    for i in range(3):
        for p in range(TASK.P):
            x, q = b.X[i, p], b.x_test[i]
            assert c2[i, p] == pytest.approx(x @ q / np.sqrt((x @ x) * (q @ q)), rel=1e-12)
    S = head_outputs(cos, y, [0.0, 0.7, 25.0])
    for j, k in enumerate([0.0, 0.7, 25.0]):
        np.testing.assert_allclose(S[:, j], _s(cos, y, k), rtol=1e-10, atol=1e-12)


def test_single_head_gain_and_kappa_are_optimal(fitdata):
    cos, y, t = fitdata
    kappa, gain, loss = fit_single_head(cos, y, t)
    s = _s(cos, y, kappa)
    res = optimize.minimize_scalar(lambda g: np.mean((g * s - t) ** 2))
    assert gain == pytest.approx(res.x, rel=1e-6)
    assert loss == pytest.approx(res.fun, rel=1e-9)
    # no kappa of a dense independent grid does better (beyond the refinement tolerance)
    dense = [_loss_given_kappas(cos, y, t, [k])[0] for k in np.geomspace(kappa / 3, kappa * 3, 121)]
    assert loss <= min(dense) * (1 + 1e-6)
    assert optimal_gains(s[:, None], t)[0][0] == pytest.approx(res.x, rel=1e-6)


def test_two_heads_never_worse_and_gains_least_squares(fitdata):
    cos, y, t = fitdata
    k1, g1, l1 = fit_single_head(cos, y, t)
    kappas, gains, l2 = fit_two_heads(cos, y, t, single_kappa=k1)
    assert l2 <= l1 * (1 + 1e-12)
    # only the loss: on this small task the optimum is the limit of coinciding temperatures (a head
    # plus its kappa-derivative), where the gains are large, opposite and ill-conditioned
    bf_loss, _ = _loss_given_kappas(cos, y, t, kappas)
    assert l2 == pytest.approx(bf_loss, rel=1e-8)
    # better than every pair of a coarse independent grid (up to the refinement tolerance)
    grid = np.geomspace(0.1, 300, 12)
    coarse = min(_loss_given_kappas(cos, y, t, [a, b])[0] for i, a in enumerate(grid) for b in grid[i + 1 :])
    assert l2 <= coarse * (1 + 1e-4)


def test_two_head_gains_are_least_squares_when_well_separated():
    task = TaskConfig(task="topk", k=2, d=16, P=128)
    cos, y, t = head_inputs(make_batch(task, 1500, np.random.default_rng(8)))
    kappas, gains, loss = fit_two_heads(cos, y, t)
    assert kappas[1] / kappas[0] > 1.5  # a genuine mixture on this task
    bf_loss, bf_g = _loss_given_kappas(cos, y, t, kappas)
    assert loss == pytest.approx(bf_loss, rel=1e-9)
    np.testing.assert_allclose(gains, bf_g, rtol=1e-6)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("spec", [(0.0, 0.0), (1.0, 2.0)])
def test_mixture_never_worse_on_fitting_contexts(seed, spec):
    task = TaskConfig(task="topk", k=3, a=spec[0], b=spec[1], d=5, P=20)
    b = make_batch(task, 300, np.random.default_rng(seed))
    cos, y, t = head_inputs(b)
    single = fit_single_head(cos, y, t)[2]
    assert fit_two_heads(cos, y, t)[2] <= single * (1 + 1e-12)


def test_easy_exact_large_kappa_is_exact():
    task = TaskConfig(task="easy-exact", d=8, P=32)
    b = make_batch(task, 400, np.random.default_rng(5))
    cos, y, t = head_inputs(b)
    s = head_outputs(cos, y, [1e4])[:, 0]
    assert np.mean((s - t) ** 2) < 1e-12 * np.mean(t**2)
    h = reference_floors(task, 3, n_fit=400, n_eval=400).single
    assert h.loss < 1e-8 * np.mean(t**2) and h.gain == pytest.approx(1.0, rel=1e-6) and h.kappa > 100


def test_head_errors_pair_with_evaluate():
    """sq_err of a temperature head and of measure.evaluate refer to the same contexts, in order."""

    class Head:
        def __init__(self, kappa, gain):
            self.kappa, self.gain = kappa, gain

        def _p(self, b):
            cos = np.einsum("bpd,bd->bp", b.X, b.x_test) / (
                np.linalg.norm(b.X, axis=2) * np.linalg.norm(b.x_test, axis=1)[:, None]
            )
            return special.softmax(self.kappa * cos, axis=1)[:, None, :]

        def layer_outputs(self, theta, b):
            return self.gain * np.einsum("blp,bp->bl", self._p(b), b.y)

        def label_weights(self, theta, b):
            return self.gain * self._p(b)[:, 0]

        def attention(self, theta, b):
            return self._p(b)

        def qk_norms(self, theta):
            return np.array([self.kappa])

    floors = reference_floors(TASK, 7, n_fit=600, n_eval=700, chunk=256)
    h = floors.single
    ev = evaluate(Head(h.kappa, h.gain), None, TASK, 700, seed=7, chunk=100)
    np.testing.assert_allclose(ev["sq_err"], h.sq_err, rtol=1e-9, atol=1e-12)
    assert h.loss == pytest.approx(np.mean(h.sq_err)) and h.se > 0
    two = floors.mixture
    assert two.fit_loss <= h.fit_loss * (1 + 1e-12)
    diff, se = paired_difference(two.sq_err, ev["sq_err"])
    d = two.sq_err - ev["sq_err"]
    assert diff == pytest.approx(d.mean()) and se == pytest.approx(d.std(ddof=1) / np.sqrt(d.size))


@pytest.mark.parametrize("attention", ATTENTIONS)
def test_head_outputs_of_every_map_match_its_definition(fitdata, attention):
    cos, y, t = fitdata
    kappas = [0.0, 0.3, 3.0, 30.0, 1e3, 1e8]
    S = head_outputs(cos, y, kappas, attention=attention)
    np.testing.assert_allclose(S, bf_outputs(cos, y, kappas, attention), rtol=1e-12, atol=1e-12)
    if attention in ("sparsemax", "entmax15"):  # on the simplex, and sparse at a moderate temperature
        w = bf_weights(cos, 3.0, attention)
        assert np.allclose(w.sum(axis=1), 1.0, atol=1e-12) and (w == 0).any(axis=1).all()


@pytest.mark.parametrize("attention", ATTENTIONS)
def test_single_head_of_every_map_beats_a_dense_bruteforce_scan(fitdata, attention):
    cos, y, t = fitdata
    kappa, gain, loss = fit_single_head(cos, y, t, attention=attention)
    s = bf_outputs(cos, y, [kappa], attention)
    g, bf_loss = ls_single(s, t)
    assert gain == pytest.approx(g[0], rel=1e-9) and loss == pytest.approx(bf_loss[0], rel=1e-10)
    # every kappa of a dense independent scan over the same range, least-squares gain each
    _, dense = ls_single(bf_outputs(cos, y, np.geomspace(1e-2, 1e4, 241), attention), t)
    assert loss <= dense.min() * (1 + 1e-9)


def test_relu_head_loss_does_not_depend_on_kappa(fitdata):
    """``relu(kappa z) / P = kappa relu(z) / P``: every relu head is one head up to scale, which the gain absorbs."""
    cos, y, t = fitdata
    kappas = [1e-2, 0.7, 1.0, 55.0, 1e4]
    S = head_outputs(cos, y, kappas, attention="relu")
    # S[:, k] / kappa_k is the kappa = 1 head up to the rounding of a sum of P terms of either sign
    terms = (np.maximum(cos, 0.0) * np.abs(y)).sum(axis=1) / cos.shape[1]
    err = np.abs(S / np.asarray(kappas) - bf_outputs(cos, y, [1.0], "relu"))
    assert (err <= 1e-14 * cos.shape[1] * terms[:, None]).all()
    _, losses = ls_single(S, t)
    np.testing.assert_allclose(losses, losses[0], rtol=1e-12)
    kappa, gain, loss = fit_single_head(cos, y, t, attention="relu")
    assert loss == pytest.approx(ls_single(bf_outputs(cos, y, [1.0], "relu"), t)[1][0], rel=1e-12)
    assert gain * kappa == pytest.approx(ls_single(bf_outputs(cos, y, [1.0], "relu"), t)[0][0], rel=1e-9)


def test_normalised_maps_share_the_hard_argmax_limit(fitdata):
    """softmax, sparsemax and 1.5-entmax of ``kappa cos`` all become the top-1 head ``y[argmax cos]`` once
    ``kappa`` times the gap between the two largest similarities is large, so their single-head floors
    restricted to large kappas are one number: the least-squares top-1 head's loss."""
    cos, y, t = fitdata
    top = np.sort(cos, axis=1)
    gap = (top[:, -1] - top[:, -2]).min()
    assert gap > 0  # no ties in these contexts
    top1 = y[np.arange(y.shape[0]), np.argmax(cos, axis=1)][:, None]
    _, top1_loss = ls_single(top1, t)
    big = 1e3 / gap  # exp(-1000) = 0 for softmax; sparsemax and entmax have support 1 past 1/gap, 2/gap
    for attention in ("softmax", "sparsemax", "entmax15"):
        np.testing.assert_array_equal(head_outputs(cos, y, [big, 10 * big], attention=attention), np.hstack([top1] * 2))
        _, _, loss = fit_single_head(cos, y, t, kappa_range=(big, 100 * big), n_grid=5, attention=attention)
        assert loss == pytest.approx(top1_loss[0], rel=1e-12), attention
    # and far below that scale they differ: the limit is a limit, not an identity of the maps
    mid = [head_outputs(cos, y, [0.1 / gap], attention=a)[:, 0] for a in ("softmax", "sparsemax", "entmax15")]
    assert all(np.abs(m - top1[:, 0]).max() > 1e-3 for m in mid)


def test_sigmoid_at_zero_temperature_is_the_uniform_softmax_head(fitdata):
    """``sigmoid(0 - log P) = 1 / (P + 1)`` on every token: ``P / (P + 1)`` times the uniform softmax head,
    so with its least-squares gain the same predictor."""
    cos, y, t = fitdata
    P = cos.shape[1]
    sig = head_outputs(cos, y, [0.0, 1e-9], attention="sigmoid")
    np.testing.assert_allclose(sig[:, 0], y.sum(axis=1) / (P + 1), rtol=1e-13, atol=1e-15)
    uniform = y.mean(axis=1)[:, None]
    np.testing.assert_allclose(head_outputs(cos, y, [0.0]), uniform, rtol=1e-13, atol=1e-15)
    _, ref = ls_single(uniform, t)
    _, losses = ls_single(sig, t)
    np.testing.assert_allclose(losses, ref[0], rtol=1e-7)
    assert losses[0] == pytest.approx(ref[0], rel=1e-12)
    # the single-head floors restricted to tiny temperatures agree too
    small = {
        a: fit_single_head(cos, y, t, kappa_range=(1e-10, 1e-9), n_grid=3, attention=a)[2]
        for a in ("softmax", "sigmoid")
    }
    assert small["sigmoid"] == pytest.approx(small["softmax"], rel=1e-7)
    assert small["softmax"] == pytest.approx(ref[0], rel=1e-7)


def test_paired_difference_se_beats_unpaired():
    rng = np.random.default_rng(0)
    common = rng.exponential(size=5000)
    a = common + 0.1 * rng.standard_normal(5000)
    b = common + 0.05 + 0.1 * rng.standard_normal(5000)
    m, se = paired_difference(a, b)
    unpaired = np.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
    assert abs(m + 0.05) < 5 * se and se < unpaired / 5


def test_bad_input_raises(fitdata):
    cos, y, t = fitdata
    with pytest.raises(ValueError, match="kappa"):
        head_outputs(cos, y, [-1.0])
    with pytest.raises(ValueError, match="kappa_range"):
        fit_single_head(cos, y, t, kappa_range=(10.0, 1.0))
    with pytest.raises(ValueError, match="n_grid"):
        fit_single_head(cos, y, t, n_grid=2)
    with pytest.raises(ValueError, match="n_fit"):
        reference_floors(TASK, 0, n_fit=1)
    with pytest.raises(ValueError, match="seed"):
        reference_floors(TASK, -2)
    with pytest.raises(ValueError, match="sq_err"):
        paired_difference([1.0, 2.0], [1.0])
    for bad in ("tanh", "Softmax", None, 3):
        with pytest.raises(ValueError, match="attention"):
            head_outputs(cos, y, [1.0], attention=bad)
    with pytest.raises(ValueError, match="attention"):
        fit_single_head(cos, y, t, attention="tanh")
    with pytest.raises(ValueError, match="attention"):
        fit_two_heads(cos, y, t, attention="tanh")
    with pytest.raises(ValueError, match="attention"):
        reference_floors(TASK, 0, attention="tanh")
