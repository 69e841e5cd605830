"""The attention nonlinearities (sims/attention_maps.py) against independent computations.

The maps are checked against their definitions solved another way (sparsemax by the sorted support
search, 1.5-entmax by bisection on the threshold, sigmoid and relu by NumPy), their backward passes
against central differences of the maps, and the model's gradient with each map against central
differences of its loss. The autograd comparison is in test_autograd.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scipy.optimize import brentq

from depthscale.sims.attention_maps import ATTENTIONS, attention_code, sparse_back
from depthscale.sims.batch import Batch
from depthscale.sims.config import ModelConfig, TaskConfig
from depthscale.sims.models import make_model
from depthscale.sims.softmax_kernels import _attend
from depthscale.sims.tasks import make_batch

NONSOFT = [a for a in ATTENTIONS if a != "softmax"]


def _apply(z, name):
    out = np.array(z, dtype=np.float64)
    _attend(out, np.empty(out.shape[0], np.int64), attention_code(name))
    return out


def _reference(z, name):
    """Each map from its definition, solved independently of the engine."""
    z = np.asarray(z, np.float64)
    if name == "sparsemax":
        zs = np.sort(z)[::-1]
        cs = np.cumsum(zs)
        k = np.arange(1, z.size + 1)
        kk = k[1 + k * zs > cs].max()
        return np.maximum(z - (cs[kk - 1] - 1) / kk, 0)
    if name == "entmax15":
        u = z / 2

        def resid(t):
            return np.sum(np.maximum(u - t, 0) ** 2) - 1

        # resid falls from >= 0 at max - 1 to -1 at max; the bracket starts a little lower, where
        # rounding cannot make u_max - t fall below 1 (a lone maximum gave resid = -1e-15 there)
        tau = brentq(resid, u.max() - 1.0 - 1e-6, u.max(), xtol=1e-14, rtol=1e-15, maxiter=500)
        return np.maximum(u - tau, 0) ** 2
    if name == "sigmoid":
        return 1 / (1 + np.exp(-(z - np.log(z.size))))
    if name == "relu":
        return np.maximum(z, 0) / z.size
    e = np.exp(z - z.max())
    return e / e.sum()


scores = st.lists(st.floats(-30, 30, allow_nan=False), min_size=1, max_size=40)


@settings(deadline=None, max_examples=150)
@given(z=scores, name=st.sampled_from(ATTENTIONS))
@example(z=[-14.03560330408729], name="entmax15")  # a lone maximum: u_max - (u_max - 1) rounds below 1
def test_maps_match_their_definitions(z, name):
    got = _apply(z, name)
    ref = _reference(z, name)
    assert np.allclose(got, ref, rtol=1e-9, atol=1e-9)
    if name in ("sparsemax", "entmax15"):
        assert abs(got.sum() - 1) < 1e-12 and np.all(got >= 0)


@pytest.mark.parametrize("name", ["sparsemax", "entmax15"])
def test_sparse_maps_put_exact_zeros_and_handle_ties(name):
    z = np.array([3.0, 3.0, 3.0, -5.0, 0.1, 3.0])
    p = _apply(z, name)
    assert p[3] == 0.0  # far below the threshold: exactly zero, not tiny
    assert np.allclose(p[[0, 1, 2, 5]], 0.25) and abs(p.sum() - 1) < 1e-15
    assert np.allclose(_apply(np.zeros(7), name), 1 / 7)  # all-equal scores: uniform


@pytest.mark.parametrize("name", NONSOFT)
def test_backward_matches_central_differences(name):
    rng = np.random.default_rng(5)
    for _ in range(20):
        z = rng.standard_normal(12) * 2
        dp = rng.standard_normal(12)
        p = _apply(z, name)
        dz = np.empty(12)
        sparse_back(attention_code(name), p, dp, dz, 0.7)
        h = 1e-6
        num = np.array([(dp @ _apply(z + h * e, name) - dp @ _apply(z - h * e, name)) / (2 * h) for e in np.eye(12)])
        # a score within h of the support's edge has no derivative: skip such draws
        if name in ("sparsemax", "relu", "entmax15"):
            edge = _apply(z, name)
            if np.any((edge > 0) & (edge < 1e-8)):
                continue
        assert np.allclose(dz, 0.7 * num, atol=1e-6)


def _fd_grad(eng, theta, batch, idx, h=1e-6):
    out = []
    for i in idx:
        tp, tm = theta.copy(), theta.copy()
        tp[i] += h
        tm[i] -= h
        out.append((eng.loss_and_grad(tp, batch)[0] - eng.loss_and_grad(tm, batch)[0]) / (2 * h))
    return np.array(out)


@pytest.mark.parametrize("qk", ["factorised", "temperature"])
@pytest.mark.parametrize("name", NONSOFT)
def test_model_gradient_matches_central_differences(name, qk):
    task = TaskConfig(task="topk", k=2, d=3, P=9)
    batch = make_batch(task, 6, np.random.default_rng(2))
    eng = make_model(ModelConfig(depth=3, qk=qk, value="per-layer", attention=name), 3)
    rng = np.random.default_rng(4)
    theta = eng.init(rng) + 0.6 * rng.standard_normal(eng.n_params)
    loss, grad = eng.loss_and_grad(theta, batch)
    assert np.isfinite(loss) and np.all(np.isfinite(grad))
    idx = np.arange(eng.n_params)
    num = _fd_grad(eng, theta, batch, idx)
    assert np.max(np.abs(grad - num)) <= 1e-6 * max(1.0, np.max(np.abs(num)))


@pytest.mark.parametrize("name", ATTENTIONS)
def test_zero_query_key_maps_give_a_finite_gradient(name):
    """All-zero weights: every score is 0 (ties everywhere; relu's support is empty)."""
    task = TaskConfig(task="topk", k=2, d=3, P=8)
    batch = make_batch(task, 4, np.random.default_rng(0))
    eng = make_model(ModelConfig(depth=2, attention=name), 3)
    theta = eng.init(np.random.default_rng(1))
    for key in ("W_q", "W_k"):
        eng.unpack(theta)[key][...] = 0.0
    loss, grad = eng.loss_and_grad(theta, batch)
    assert np.isfinite(loss) and np.all(np.isfinite(grad))
    w = eng.attention(theta, batch)
    expected = {"relu": 0.0, "sigmoid": 1 / (1 + 8)}.get(name, 1 / 8)
    assert np.allclose(w, expected)


def test_float32_agrees_with_float64():
    task = TaskConfig(task="topk", k=2, d=4, P=16)
    batch = make_batch(task, 8, np.random.default_rng(3))
    for name in NONSOFT:
        e64 = make_model(ModelConfig(depth=2, attention=name), 4)
        e32 = make_model(ModelConfig(depth=2, attention=name, dtype="float32"), 4)
        theta = e64.init(np.random.default_rng(0)) * 3
        l64, g64 = e64.loss_and_grad(theta, batch)
        l32, g32 = e32.loss_and_grad(theta.astype(np.float32), batch)
        assert abs(l32 - l64) <= 1e-4 * l64
        assert np.max(np.abs(g32 - g64)) <= 1e-3 * np.max(np.abs(g64))


def test_attention_is_refused_where_it_is_not_implemented():
    with pytest.raises(ValueError, match="attention='sparsemax'"):
        ModelConfig(attention="sparsemax", context_update=True)
    with pytest.raises(ValueError, match="attention='relu'"):
        ModelConfig(model="linear", attention="relu")
    with pytest.raises(ValueError, match="attention"):
        ModelConfig(attention="gelu")


def test_softmax_default_keeps_every_stored_key():
    """The new field at its default leaves a config's hash (its store key) as before."""
    from depthscale.sims.config import config_hash

    assert config_hash(ModelConfig()) == config_hash(ModelConfig(attention="softmax"))
    assert config_hash(ModelConfig()) != config_hash(ModelConfig(attention="sparsemax"))


def test_weights_used_by_the_model_are_the_maps_of_its_scores():
    """The model's attention equals the reference map applied to its own scores (the M_l form)."""
    d, P = 3, 10
    rng = np.random.default_rng(8)
    X = rng.standard_normal((2, P, d))
    y = rng.standard_normal((2, P))
    batch = Batch(X, y, X[:, 0], y[:, 0], X[:, 0], np.ones((2, d)), np.zeros((2, d, d)), np.zeros((2, 1), int))
    for name in NONSOFT:
        eng = make_model(ModelConfig(depth=2, qk="merged", attention=name), d)
        theta = eng.init(rng) * 10
        p = eng.unpack(theta)
        xn = lambda h: h / np.sqrt(np.mean(h * h, -1, keepdims=True) + 1e-6)  # noqa: E731
        Xh = xn(X @ p["W_x"].T)
        xt = xn(X[:, 0] @ p["W_x"].T)
        w = eng.attention(theta, batch)
        for b in range(2):
            for l in range(2):
                z = Xh[b] @ (p["B"][l].T @ xt[b])
                assert np.allclose(w[b, l], _reference(z, name), atol=1e-10)


@pytest.mark.parametrize("name", NONSOFT)
@pytest.mark.parametrize("P", [128, 301])
def test_maps_match_their_definitions_on_long_rows(name, P):
    """Rows as long as the model's (vectorised loops with their remainders), narrow to wide scores."""
    rng = np.random.default_rng(P)
    for scale in (0.05, 0.3, 3.0, 30.0):
        for _ in range(10):
            z = scale * rng.standard_normal(P)
            got = _apply(z, name)
            assert np.allclose(got, _reference(z, name), rtol=1e-9, atol=1e-9)
            if name in ("sparsemax", "entmax15"):
                assert np.all(got >= 0)
                # entmax's closed-form root cancels when the scores are large (mean^2 against
                # (sum u^2 - 1) / k): at scale 30 its weights sum to 1 within 1.1e-12 (the kernel
                # before the vectorised passes gave the same), so the 1e-12 check stops at scale 3
                if scale <= 3.0:
                    assert abs(got.sum() - 1) < 1e-12


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_shared_exp_matches_numpy_and_clamps(dtype):
    """exp_shifted64/32 (softmax and sigmoid) against NumPy's exp of the same rounded argument.

    Tolerance: a few units in the last place (the Taylor truncation is below 1e-17, 1e-8 in
    float32; the rest is the rounding of the reduction and the polynomial's steps)."""
    from depthscale.sims.attention_maps import exp_shifted32, exp_shifted64

    lim, rtol = (700.0, 1e-15) if dtype == np.float64 else (87.0, 1e-6)
    rng = np.random.default_rng(11)
    x = np.concatenate([np.linspace(-lim, lim, 1001), rng.uniform(-5, 5, 999), [-1e4, 1e4, -lim - 1, lim + 1]])
    x = x.astype(dtype)
    shift = dtype(0.75)
    arg = (x - shift).astype(np.float64)  # the argument rounded in the array's precision, as in the kernel
    ref = np.exp(np.clip(arg, -lim, lim))
    z = x.copy()
    ib = np.empty(z.size, np.int64)
    if dtype == np.float64:
        exp_shifted64(z, shift, ib, ib.view(np.float64))
    else:
        i32 = ib.view(np.int32)[: z.size]
        exp_shifted32(z, shift, i32, i32.view(np.float32))
    assert np.all(np.isfinite(z))
    assert np.allclose(z, ref, rtol=rtol, atol=0)


def test_sigmoid_of_extreme_scores_is_finite():
    """Scores far beyond exp's range: weights in [0, 1], no overflow, the backward finite."""
    z = np.array([-1e6, -800.0, -30.0, 0.0, 30.0, 800.0, 1e6])
    p = _apply(z, "sigmoid")
    assert np.all(np.isfinite(p)) and np.all((p >= 0) & (p <= 1))
    assert np.allclose(p, _reference(np.clip(z, -700, 700), "sigmoid"), rtol=1e-12, atol=1e-300)
    dz = np.empty_like(p)
    sparse_back(attention_code("sigmoid"), p, np.ones_like(p), dz, 1.0)
    assert np.all(np.isfinite(dz))
