"""Softmax-attention model: gradients, the parallel form and label weights against independent references.

References used here: central finite differences (gradients, label weights), and a direct NumPy
implementation of the residual network over all P + 1 tokens written plainly below (full label
stream update with the attention mask, then the readout).
"""

import itertools

import numpy as np
import pytest

from depthscale.sims.batch import Batch
from depthscale.sims.config import ModelConfig
from depthscale.sims.softmax_model import SoftmaxAttention

D, N, P, L, B = 4, 5, 7, 3, 3
QK = ("factorised", "merged", "tied", "temperature")
VALUE = ("shared", "per-layer")
VARIANT = ("core", "context", "single")
CASES = list(itertools.product(QK, VALUE, VARIANT))


def small_batch(seed=0, b=B, p=P, d=D):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((b, p, d))
    beta = rng.standard_normal((b, d))
    y = np.einsum("bpd,bd->bp", X, beta)
    xq = rng.standard_normal((b, d))
    return Batch(X, y, xq, rng.standard_normal(b), xq, beta, np.zeros((b, d, d)), np.zeros((b, 1), dtype=np.int64))


def make(qk, value, variant, depth=L, width=N, dtype="float64"):
    cfg = ModelConfig(
        depth=depth,
        width=width,
        qk=qk,
        value=value,
        context_update=variant == "context",
        stream="single" if variant == "single" else "two",
        dtype=dtype,
    )
    return SoftmaxAttention(cfg, D)


def rough_theta(model, seed):
    """A generic point: the initialisation plus O(0.3) noise in every entry (m included)."""
    rng = np.random.default_rng(seed)
    return model.init(rng) + 0.3 * rng.standard_normal(model.n_params)


@pytest.fixture(scope="module", autouse=True)
def warm_kernels():
    batch = small_batch()
    for variant in VARIANT:
        m = make("merged", "shared", variant)
        m.loss_and_grad(m.init(np.random.default_rng(0)), batch)
        m.attention(m.init(np.random.default_rng(0)), batch)


# --------------------------------------------------------------------------- reference network
def rms_cols(H, eps=1e-6):
    return H / np.sqrt(np.mean(H**2, axis=0, keepdims=True) + eps)


def softmax(v):
    e = np.exp(v - v.max())
    return e / e.sum()


def reference(model, theta, batch):
    """Token-by-token forward pass of the residual network; returns yhat (B,), f (B,L), attention (B,L,P)."""
    cfg = model.cfg
    prm = {k: np.array(v) for k, v in model.unpack(theta).items()}
    Lq = model.L
    out_y, out_f, out_a = [], [], []
    for b in range(len(batch)):
        Xall = np.concatenate([batch.X[b], batch.x_test[b][None]], axis=0).T  # (d, P+1), test last
        yin = np.concatenate([batch.y[b], [0.0]])
        T = P1 = Xall.shape[1]
        if cfg.stream == "two":
            Hx = rms_cols(prm["W_x"] @ Xall)
            Hy = np.outer(prm["W_y"], yin)
        else:
            H = prm["W_x"] @ Xall + np.outer(prm["W_y"], yin)
        f, att = [], []
        for l in range(Lq):
            if cfg.qk == "factorised":
                Wq, Wk = prm["W_q"][l], prm["W_k"][l]
            elif cfg.qk == "tied":
                Wq, Wk = prm["W_q"], prm["W_k"]
            Wv = prm["W_v"] if cfg.value == "shared" else prm["W_v"][l]
            Hn = Hx if cfg.stream == "two" else rms_cols(H)

            def score(i, j):
                if cfg.qk in ("factorised", "tied"):
                    return (Wq @ Hn[:, i]) @ (Wk @ Hn[:, j])
                if cfg.qk == "merged":
                    return Hn[:, i] @ prm["B"][l] @ Hn[:, j]
                return prm["kappa"][l] * (Hn[:, i] @ Hn[:, j])

            # mask: the test token (last) attends to the context; context->context m 1 1^T or 0; ->test 0
            A = np.zeros((T, P1))
            A[T - 1, : P1 - 1] = softmax(np.array([score(T - 1, j) for j in range(P1 - 1)]))
            if cfg.context_update:
                for i in range(P1 - 1):
                    A[i, : P1 - 1] = float(prm["m"]) * softmax(np.array([score(i, j) for j in range(P1 - 1)]))
            att.append(A[T - 1, : P1 - 1])
            if cfg.stream == "two":
                V = Wv @ Hy
                before = prm["W_o"] @ Hy[:, -1]
                Hy = Hy + V @ A.T / Lq
                f.append(Lq * (prm["W_o"] @ Hy[:, -1] - before))
            else:
                V = Wv @ Hn
                z0 = prm["W_o"] @ (prm["W_x"] @ Xall[:, -1])
                before = prm["W_o"] @ H[:, -1]
                H = H + V @ A.T / Lq
                f.append(z0 + Lq * (prm["W_o"] @ H[:, -1] - before))
        final = Hy[:, -1] if cfg.stream == "two" else H[:, -1]
        out_y.append(prm["W_o"] @ final)
        out_f.append(f)
        out_a.append(att)
    return np.array(out_y), np.array(out_f), np.array(out_a)


# --------------------------------------------------------------------------- tests
@pytest.mark.parametrize("qk,value,variant", CASES)
def test_gradient_matches_central_differences(qk, value, variant):
    model = make(qk, value, variant)
    batch = small_batch(1)
    theta = rough_theta(model, 2)
    loss, grad = model.loss_and_grad(theta, batch)
    h = 1e-5
    fd = np.empty_like(grad)
    for i in range(model.n_params):
        e = np.zeros_like(theta)
        e[i] = h
        fd[i] = (model.loss_and_grad(theta + e, batch)[0] - model.loss_and_grad(theta - e, batch)[0]) / (2 * h)
    assert np.linalg.norm(grad - fd) <= 1e-6 * np.linalg.norm(fd)
    assert np.max(np.abs(grad - fd)) <= 1e-6 * np.max(np.abs(fd))
    yhat, _, _ = reference(model, theta, batch)
    assert loss == pytest.approx(np.mean((yhat - batch.target) ** 2), rel=1e-12)


@pytest.mark.parametrize("qk,value,variant", CASES)
def test_forward_matches_token_by_token_network(qk, value, variant):
    model = make(qk, value, variant)
    batch = small_batch(3)
    theta = rough_theta(model, 4)
    yhat, f, att = reference(model, theta, batch)
    np.testing.assert_allclose(model.predict(theta, batch), yhat, rtol=1e-12, atol=1e-12 * np.abs(yhat).max())
    got_f = model.layer_outputs(theta, batch)
    np.testing.assert_allclose(got_f, f, rtol=1e-12, atol=1e-12 * np.abs(f).max())
    np.testing.assert_allclose(got_f.mean(axis=1), yhat, rtol=1e-12, atol=1e-12 * np.abs(yhat).max())
    np.testing.assert_allclose(model.attention(theta, batch), att, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("qk,value,variant", [c for c in CASES if c[2] != "single"])
def test_label_weights_match_finite_differences_in_y(qk, value, variant):
    model = make(qk, value, variant)
    batch = small_batch(5)
    theta = rough_theta(model, 6)
    c = model.label_weights(theta, batch)
    h = 1e-4
    fd = np.empty_like(c)
    for i in range(P):
        up, dn = small_batch(5), small_batch(5)
        up.y[:, i] += h
        dn.y[:, i] -= h
        fd[:, i] = (model.predict(theta, up) - model.predict(theta, dn)) / (2 * h)
    np.testing.assert_allclose(c, fd, rtol=1e-8, atol=1e-9 * np.abs(fd).max())
    # linear in the labels: yhat = c . y exactly
    np.testing.assert_allclose(np.sum(c * batch.y, axis=1), model.predict(theta, batch), rtol=1e-10)


def test_label_weights_core_form():
    """Core model: c = (1/L) sum_l g_l p_l with g_l = W_o W_v^l W_y."""
    model = make("factorised", "per-layer", "core")
    batch = small_batch(7)
    theta = rough_theta(model, 8)
    prm = model.unpack(theta)
    g = np.array([prm["W_o"] @ prm["W_v"][l] @ prm["W_y"] for l in range(L)])
    _, _, att = reference(model, theta, batch)
    np.testing.assert_allclose(model.label_weights(theta, batch), np.einsum("l,blp->bp", g, att) / L, rtol=1e-12)


def test_single_stream_is_not_linear_in_labels():
    model = make("factorised", "shared", "single")
    assert model.label_weights(rough_theta(model, 0), small_batch()) is None


def test_qk_norms_are_frobenius_norms_of_effective_maps():
    for qk in QK:
        model = make(qk, "shared", "core")
        theta = rough_theta(model, 9)
        prm = model.unpack(theta)
        if qk == "factorised":
            want = [np.linalg.norm(prm["W_q"][l].T @ prm["W_k"][l]) for l in range(L)]
        elif qk == "tied":
            want = [np.linalg.norm(prm["W_q"].T @ prm["W_k"])] * L
        elif qk == "merged":
            want = [np.linalg.norm(prm["B"][l]) for l in range(L)]
        else:
            want = [abs(prm["kappa"][l]) * np.sqrt(N) for l in range(L)]
        np.testing.assert_allclose(model.qk_norms(theta), want, rtol=1e-12)


def test_init_statistics_and_layout():
    d, n, depth = 16, 24, 8
    model = SoftmaxAttention(ModelConfig(depth=depth, width=n, init_scale=0.3), d)
    theta = model.init(np.random.default_rng(0))
    prm = model.unpack(theta)
    assert model.names() == ["W_x", "W_y", "W_q", "W_k", "W_v", "W_o"]
    assert theta.size == model.n_params == n * d + n + 2 * depth * n * n + n * n + n
    np.testing.assert_allclose(prm["W_x"].T @ prm["W_x"], np.eye(d), atol=1e-12)
    np.testing.assert_allclose(prm["W_x"].T @ prm["W_y"], 0, atol=1e-12)
    assert prm["W_o"] @ prm["W_v"] @ prm["W_y"] == pytest.approx(1.0)
    q = prm["W_q"].ravel()
    # sample std of 4608 Gaussian entries: within 5 standard errors (se ~ std / sqrt(2 n))
    std = 0.3 / np.sqrt(d)
    assert abs(q.std() - std) < 5 * std / np.sqrt(2 * q.size)
    assert not np.allclose(prm["W_q"][0], prm["W_q"][1])  # layers start different
    assert model.unpack(theta)["W_q"].base is not None  # views, not copies


def test_same_seed_gives_identical_results():
    model = make("factorised", "per-layer", "context")
    a = model.init(np.random.default_rng(11))
    b = model.init(np.random.default_rng(11))
    assert np.array_equal(a, b)
    batch = small_batch(12)
    la, ga = model.loss_and_grad(a, batch)
    lb, gb = model.loss_and_grad(b, batch)
    assert la == lb and np.array_equal(ga, gb)


@pytest.mark.parametrize("variant", VARIANT)
def test_float32_agrees_with_float64(variant):
    m64 = make("factorised", "shared", variant)
    m32 = make("factorised", "shared", variant, dtype="float32")
    batch = small_batch(13, b=8, p=20)
    theta = rough_theta(m64, 14)
    l64, g64 = m64.loss_and_grad(theta, batch)
    l32, g32 = m32.loss_and_grad(theta.astype(np.float32), batch)
    assert g32.dtype == np.float32 and m32.init(np.random.default_rng(0)).dtype == np.float32
    assert l32 == pytest.approx(l64, rel=1e-4)
    assert np.linalg.norm(g32 - g64) <= 1e-4 * np.linalg.norm(g64)
    np.testing.assert_allclose(
        m32.predict(theta.astype(np.float32), batch), m64.predict(theta, batch), rtol=1e-4, atol=1e-4
    )


def test_large_scores_stay_finite():
    """Sharp attention (scores ~ 1e3) must not overflow: the softmax subtracts the maximum."""
    model = make("temperature", "shared", "core")
    theta = model.init(np.random.default_rng(0))
    model.unpack(theta)["kappa"][:] = [200.0, -300.0, 1000.0]
    batch = small_batch(15)
    loss, grad = model.loss_and_grad(theta, batch)
    assert np.isfinite(loss) and np.all(np.isfinite(grad))
    att = model.attention(theta, batch)
    np.testing.assert_allclose(att.sum(axis=2), 1.0, rtol=1e-12)


def test_bad_input_raises_value_error_naming_the_parameter():
    with pytest.raises(ValueError, match="model"):
        SoftmaxAttention(ModelConfig(model="linear"), 4)
    with pytest.raises(ValueError, match="width"):
        SoftmaxAttention(ModelConfig(width=3), 4)
    with pytest.raises(ValueError, match="context_update"):
        SoftmaxAttention(ModelConfig(stream="single", context_update=True), 4)
    model = make("merged", "shared", "core")
    with pytest.raises(ValueError, match="theta"):
        model.loss_and_grad(np.zeros(model.n_params + 1), small_batch())
    bad = small_batch(d=D + 1)
    with pytest.raises(ValueError, match="batch.X"):
        model.loss_and_grad(np.zeros(model.n_params), bad)


@pytest.mark.slow
@pytest.mark.parametrize("qk", ["factorised"])
def test_one_layer_learns_easy_exact_task(qk):
    """One softmax layer, Adam, d = 32, P = 256: MSE <= 1e-3 E[y*^2] and top-1 mass >= 0.99."""
    from depthscale.sims.config import TaskConfig
    from depthscale.sims.tasks import make_batch

    task = TaskConfig(task="easy-exact", d=32, P=256, a=0.0, b=0.0)
    model = SoftmaxAttention(ModelConfig(depth=1, qk=qk), task.d)
    rng = np.random.default_rng(0)
    theta = model.init(rng)
    m1, m2 = np.zeros_like(theta), np.zeros_like(theta)
    lr, b1, b2, steps = 1e-2, 0.9, 0.999, 1500
    for t in range(1, steps + 1):
        loss, g = model.loss_and_grad(theta, make_batch(task, 128, rng))
        m1 = b1 * m1 + (1 - b1) * g
        m2 = b2 * m2 + (1 - b2) * g * g
        theta -= lr * (m1 / (1 - b1**t)) / (np.sqrt(m2 / (1 - b2**t)) + 1e-8)
    ev = make_batch(task, 2048, np.random.default_rng(123))
    mse = np.mean((model.predict(theta, ev) - ev.target) ** 2)
    power = np.mean(ev.target**2)
    att = model.attention(theta, ev)[:, 0, :]
    top1 = att[np.arange(len(ev)), ev.sel[:, 0]].mean()
    print(
        f"mse/power = {mse / power:.2e}, top-1 mass on the matching token = {top1:.4f}, qk norm = {model.qk_norms(theta)[0]:.2f}"
    )
    assert mse <= 1e-3 * power
    assert top1 >= 0.99
