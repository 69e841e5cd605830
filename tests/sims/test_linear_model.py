"""Linear-attention model: every check is against an independent computation.

References: a plain token-by-token NumPy forward with the mask written out, central finite
differences, brute-force mpmath sums, scipy's Jacobi roots and a Monte Carlo over sampled contexts.
"""

from __future__ import annotations

import itertools

import mpmath
import numpy as np
import pytest
from scipy.special import eval_jacobi, roots_jacobi

from depthscale.sims.batch import Batch
from depthscale.sims.config import ModelConfig
from depthscale.sims.linear_model import LinearAttention, population_loss

QKS = ("factorised", "merged", "tied", "temperature")
VALUES = ("shared", "per-layer")
D, N, P, L, B = 4, 5, 7, 3, 3


# ---------------------------------------------------------------- references
def direct_forward(p, qk, X, y, xt, L):
    """Token-by-token forward of the paper's model: returns f (B, L), yhat (B,), test scores (B, L, P)."""
    Bn, P, d = X.shape
    N = p["W_y"].shape[0]
    f = np.zeros((Bn, L))
    yhat = np.zeros(Bn)
    scores = np.zeros((Bn, L, P))
    M = np.zeros((P + 1, P + 1))
    M[:P, :P] = -1.0
    M[P, :P] = 1.0  # test -> context; column of the test token stays 0
    for b in range(Bn):
        toks = np.vstack([X[b], xt[b][None, :]])  # (P+1, d), test token last
        Hx = p["W_x"] @ toks.T  # (N, P+1)
        Hy = np.outer(p["W_y"], np.append(y[b], 0.0))
        for l in range(L):
            if qk == "factorised":
                raw = (p["W_q"][l] @ Hx).T @ (p["W_k"][l] @ Hx)
            elif qk == "tied":
                raw = (p["W_q"] @ Hx).T @ (p["W_k"] @ Hx)
            elif qk == "merged":
                raw = Hx.T @ p["B"][l] @ Hx
            else:
                raw = p["kappa"][l] * (Hx.T @ Hx)
            A = M * raw / (P * N)
            Wv = p["W_v"][l] if p["W_v"].ndim == 3 else p["W_v"]
            V = Wv @ Hy
            inc = (V @ A.T) / L
            f[b, l] = L * (p["W_o"] @ inc[:, P])
            scores[b, l] = A[P, :P]
            Hy = Hy + inc
        yhat[b] = p["W_o"] @ Hy[:, P]
    return f, yhat, scores


def random_setup(qk, value, seed=0, dtype="float64"):
    rng = np.random.default_rng(seed)
    m = LinearAttention(ModelConfig(model="linear", depth=L, width=N, qk=qk, value=value, dtype=dtype), D)
    theta = m.init(rng).astype(np.float64)
    # move away from the structured init so every path (and non-symmetric B_l) is exercised
    theta = theta + 0.3 * rng.standard_normal(theta.shape)
    pr = m.unpack(theta)
    for k in ("W_q", "W_k", "B"):
        if k in pr:
            pr[k] *= 3.0
    if "kappa" in pr:
        pr["kappa"][:] = rng.uniform(0.5, 2.0, L)
    X = rng.standard_normal((B, P, D))
    y = rng.standard_normal((B, P))
    xt = rng.standard_normal((B, D))
    tg = rng.standard_normal(B)
    batch = Batch(X, y, xt, tg, xt.copy(), np.zeros((B, D)), np.zeros((B, D, D)), np.zeros((B, 0), dtype=int))
    return m, theta, batch


def r_con_bruteforce(lam, om, Ldepth, gamma):
    mpmath.mp.dps = 40
    s = mpmath.mpf(0)
    for lk, ok in zip(lam, om):
        s += mpmath.mpf(lk) * mpmath.mpf(ok) * (1 - mpmath.mpf(gamma) * mpmath.mpf(lk) / Ldepth) ** (2 * Ldepth)
    return float(s)


@pytest.fixture(scope="module", autouse=True)
def warm_kernels():
    # compile (or load) both dtype specialisations once for the module
    for dt in ("float64", "float32"):
        m, th, bt = random_setup("factorised", "shared", dtype=dt)
        m.loss_and_grad(th, bt)
        m.layer_outputs(th, bt)
        m.label_weights(th, bt)


# ---------------------------------------------------------------- forward
@pytest.mark.parametrize("qk,value", list(itertools.product(QKS, VALUES)))
def test_fast_forward_equals_token_forward(qk, value):
    m, theta, bt = random_setup(qk, value, seed=1)
    f_ref, yhat_ref, sc_ref = direct_forward(m.unpack(theta), qk, bt.X, bt.y, bt.x_test, L)
    # the identity yhat = mean_l f_l, on the reference itself
    np.testing.assert_allclose(f_ref.mean(1), yhat_ref, rtol=1e-12, atol=0)
    f = m.layer_outputs(theta, bt)
    scale = np.abs(f_ref).max()
    assert np.abs(f - f_ref).max() <= 1e-12 * scale
    assert np.abs(m.predict(theta, bt) - yhat_ref).max() <= 1e-12 * np.abs(yhat_ref).max()
    att = m.attention(theta, bt)
    assert att.shape == (B, L, P)
    assert np.abs(att - sc_ref).max() <= 1e-12 * np.abs(sc_ref).max()


@pytest.mark.parametrize("qk", QKS)
def test_qk_norms(qk):
    m, theta, _ = random_setup(qk, "shared", seed=2)
    p = m.unpack(theta)
    Hx = np.eye(N)  # scores of basis vectors are the entries of B_l
    want = []
    for l in range(L):
        if qk == "factorised":
            Bl = (p["W_q"][l] @ Hx).T @ (p["W_k"][l] @ Hx)
        elif qk == "tied":
            Bl = p["W_q"].T @ p["W_k"]
        elif qk == "merged":
            Bl = p["B"][l]
        else:
            Bl = p["kappa"][l] * np.eye(N)
        want.append(np.sqrt((Bl**2).sum()))
    np.testing.assert_allclose(m.qk_norms(theta), want, rtol=1e-12)


# ---------------------------------------------------------------- gradients
@pytest.mark.parametrize("qk,value", list(itertools.product(QKS, VALUES)))
def test_gradient_matches_central_differences(qk, value):
    m, theta, bt = random_setup(qk, value, seed=3)
    loss, g = m.loss_and_grad(theta, bt)
    # the loss itself against the token-by-token forward
    _, yref, _ = direct_forward(m.unpack(theta), qk, bt.X, bt.y, bt.x_test, L)
    assert abs(loss - np.mean((yref - bt.target) ** 2)) <= 1e-12 * loss
    h = 1e-5
    fd = np.empty_like(theta)
    for i in range(theta.size):
        tp = theta.copy()
        tp[i] += h
        tm = theta.copy()
        tm[i] -= h
        fd[i] = (m.loss_and_grad(tp, bt)[0] - m.loss_and_grad(tm, bt)[0]) / (2 * h)
    err = np.abs(g - fd)
    assert err.max() <= 1e-6 * np.abs(fd).max(), (qk, value, err.max(), np.abs(fd).max())
    # and per parameter group, so that a small group cannot hide behind a large one
    for name, (a, b_, _) in m.layout.slices.items():
        ref = np.abs(fd[a:b_]).max()
        assert err[a:b_].max() <= 1e-6 * ref + 1e-9 * np.abs(fd).max(), name


@pytest.mark.parametrize("qk,value", [("factorised", "shared"), ("merged", "per-layer"), ("temperature", "shared")])
def test_label_weights_match_finite_differences_in_y(qk, value):
    m, theta, bt = random_setup(qk, value, seed=4)
    c = m.label_weights(theta, bt)
    h = 1e-3  # yhat is linear in y: central differences are exact up to rounding
    fd = np.empty((B, P))
    for i in range(P):
        yp = bt.y.copy()
        yp[:, i] += h
        ym = bt.y.copy()
        ym[:, i] -= h
        _, fp, _ = direct_forward(m.unpack(theta), qk, bt.X, yp, bt.x_test, L)
        _, fm, _ = direct_forward(m.unpack(theta), qk, bt.X, ym, bt.x_test, L)
        fd[:, i] = (fp - fm) / (2 * h)
    assert np.abs(c - fd).max() <= 1e-9 * np.abs(fd).max()
    _, yref, _ = direct_forward(m.unpack(theta), qk, bt.X, bt.y, bt.x_test, L)
    np.testing.assert_allclose((c * bt.y).sum(1), yref, rtol=1e-10)


# ---------------------------------------------------------------- population form
def _iso_model(kappas, d, width=0, value="shared"):
    m = LinearAttention(ModelConfig(model="linear", depth=len(kappas), width=width, qk="temperature", value=value), d)
    theta = m.init(np.random.default_rng(5))
    m.unpack(theta)["kappa"][:] = kappas
    return m, theta


@pytest.mark.parametrize("Ldepth,gfac", [(1, 1.0), (4, 0.7), (16, 1.3)])
def test_population_isotropic_equals_bruteforce_r_con(Ldepth, gfac):
    d = 12
    k = np.arange(1, d + 1, dtype=float)
    lam, om = k**-1.5, k**-0.5
    gamma = gfac * Ldepth / lam[0]
    ref = r_con_bruteforce(lam, om, Ldepth, gamma)
    assert abs(population_loss({"kappa": np.full(Ldepth, gamma)}, None, lam, om) - ref) <= 1e-12 * ref
    # the same number from the full model with B_l = kappa I (identity-like embedding, W_v = I, gain 1)
    for width, value in ((0, "shared"), (d + 3, "per-layer")):
        m, theta = _iso_model(np.full(Ldepth, gamma), d, width, value)
        assert abs(population_loss(m, theta, lam, om) - ref) <= 1e-12 * ref


@pytest.mark.parametrize("Ldepth", [2, 5, 9])
def test_population_at_jacobi_roots_gives_free_optimum_residual(Ldepth):
    d = 20
    a, b = 1.5, 1.0
    zeta = (a + b - 1) / a
    k = np.arange(1, d + 1, dtype=float)
    lam, om = k**-a, k**-b
    x, _ = roots_jacobi(Ldepth, zeta, 0.0)
    rho = lam[0] * (1 - x) / 2  # roots in lambda of P_L^(zeta,0)(1 - 2 lambda / lambda_1)
    kappas = Ldepth / rho
    r = eval_jacobi(Ldepth, zeta, 0.0, 1 - 2 * lam / lam[0]) / eval_jacobi(Ldepth, zeta, 0.0, 1.0)
    ref = float(np.sum(lam * om * r**2))
    assert abs(population_loss({"kappa": kappas}, None, lam, om) - ref) <= 1e-10 * ref
    m, theta = _iso_model(kappas, d)
    assert abs(population_loss(m, theta, lam, om) - ref) <= 1e-10 * ref


def test_population_general_B_reduced_form():
    # a general B_l against an explicit expectation: yhat = beta^T M x, M = g (I - prod (I - v/L S B_l))
    rng = np.random.default_rng(6)
    d, Ld = 5, 3
    lam, om = rng.uniform(0.2, 1.0, d), rng.uniform(0.2, 1.0, d)
    Bl = rng.standard_normal((Ld, d, d))
    v, g = 0.8, 1.1
    # Monte-Carlo-free check through E[(beta^T R x)^2] = tr(Omega R Sigma R^T), computed with mpmath
    mpmath.mp.dps = 30
    S = mpmath.diag([mpmath.mpf(t) for t in lam])
    F = mpmath.eye(d)
    for l in range(Ld):
        F = F - (mpmath.mpf(v) / Ld) * F * S * mpmath.matrix(Bl[l].tolist())
    R = mpmath.mpf(g) * (mpmath.eye(d) - F) - mpmath.eye(d)
    Om = mpmath.diag([mpmath.mpf(t) for t in om])
    ref = float(sum((Om * R * S * R.T)[i, i] for i in range(d)))
    assert abs(population_loss({"B": Bl, "v": v, "g": g}, None, lam, om) - ref) <= 1e-12 * ref


def _haar(rng, n, d):
    G = rng.standard_normal((n, d, d))
    Qm, Rm = np.linalg.qr(G)
    return Qm * np.sign(np.diagonal(Rm, axis1=1, axis2=2))[:, None, :]


def _gap_at(P_ctx, n, lam, om, kappas, m, theta, seed, chunk=2000):
    """Monte Carlo of E[loss_P] - population, with a control variate: the population predictor on
    the same (rotation, teacher, query), whose expected loss is the population value exactly."""
    rng = np.random.default_rng(seed)
    d = lam.size
    Ld = len(kappas)
    Mpop = np.eye(d)
    for kap in kappas:  # reduced polynomial, B_l = kappa_l I
        Mpop = Mpop @ np.diag(1 - kap * lam / Ld)
    Mpop = np.eye(d) - Mpop
    diffs = []
    for s0 in range(0, n, chunk):
        nb = min(chunk, n - s0)
        O = _haar(rng, nb, d)
        beta = np.einsum("bij,bj->bi", O, np.sqrt(om) * rng.standard_normal((nb, d)))
        X = np.einsum("bij,bpj->bpi", O, np.sqrt(lam) * rng.standard_normal((nb, P_ctx, d)))
        xt = np.einsum("bij,bj->bi", O, np.sqrt(lam) * rng.standard_normal((nb, d)))
        y = np.einsum("bpd,bd->bp", X, beta)
        tg = (beta * xt).sum(1)
        bt = Batch(X, y, xt, tg, xt, beta, O, np.zeros((nb, 0), dtype=int))
        yP = m.predict(theta, bt)
        zb = np.einsum("bij,bi->bj", O, beta)  # eigenbasis coordinates
        zx = np.einsum("bij,bi->bj", O, xt)
        yinf = np.einsum("bj,jk,bk->b", zb, Mpop, zx)
        diffs.append((yP - tg) ** 2 - (yinf - tg) ** 2)
    diffs = np.concatenate(diffs)
    return diffs.mean(), diffs.std(ddof=1) / np.sqrt(n)


def _sampled_setting():
    """The setting of the sampled-context tests: d = 6, lambda_k = omega_k = 1/k, two layers."""
    k = np.arange(1, 7, dtype=float)
    kappas = np.array([1.2, 0.8])
    m, theta = _iso_model(kappas, k.size)
    return k**-1.0, k**-1.0, kappas, m, theta


@pytest.mark.slow
def test_sampled_contexts_approach_population_like_one_over_P():
    lam, om, kappas, m, theta = _sampled_setting()
    pop = population_loss(m, theta, lam, om)
    res = {}
    # the paired difference has variance ~ 1/P while the gap is ~ 1/P: more contexts at larger P
    for i, (Pc, n) in enumerate(((64, 20_000), (256, 40_000), (1024, 120_000))):
        res[Pc] = _gap_at(Pc, n, lam, om, kappas, m, theta, seed=100 + i)
        print(
            f"P={Pc}: loss={pop + res[Pc][0]:.6f} population={pop:.6f} gap={res[Pc][0]:.3e} +- {res[Pc][1]:.1e} "
            f"P*gap={Pc * res[Pc][0]:.4f} +- {Pc * res[Pc][1]:.4f}"
        )
    for Pc, (gap, se) in res.items():
        assert gap > 4 * se  # a real, resolved gap at every P
    # roughly 1/P: P * gap agrees across a 16-fold range within 25 % (plus Monte Carlo error)
    pg = {Pc: Pc * g for Pc, (g, _) in res.items()}
    for Pc in (64, 256):
        tol = 0.25 * pg[1024] + 3 * np.hypot(Pc * res[Pc][1], 1024 * res[1024][1])
        assert abs(pg[Pc] - pg[1024]) <= tol, (Pc, pg)


def test_sampled_contexts_gap_shrinks_with_P():
    # the quick version of the slow test above: the gap at P = 1024 is far below the gap at P = 64
    lam, om, kappas, m, theta = _sampled_setting()
    g64, s64 = _gap_at(64, 4000, lam, om, kappas, m, theta, seed=7)
    g1k, s1k = _gap_at(1024, 4000, lam, om, kappas, m, theta, seed=8)
    assert g64 > 4 * s64
    assert abs(g1k) < g64 / 4 and g1k < 3 * s1k + g64 / 8


# ---------------------------------------------------------------- determinism, dtypes, errors
def test_same_seed_same_numbers():
    cfg = ModelConfig(model="linear", depth=4, width=6, qk="factorised")
    m = LinearAttention(cfg, D)
    t1, t2 = m.init(np.random.default_rng(11)), m.init(np.random.default_rng(11))
    assert np.array_equal(t1, t2)
    _, _, bt = random_setup("factorised", "shared", seed=12)
    l1, g1 = m.loss_and_grad(t1, bt)
    l2, g2 = m.loss_and_grad(t2, bt)
    assert l1 == l2 and np.array_equal(g1, g2)
    assert not np.array_equal(t1, m.init(np.random.default_rng(12)))


def test_result_does_not_depend_on_thread_count():
    import numba

    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("needs NUMBA_NUM_THREADS >= 2")
    m, theta, _ = random_setup("merged", "per-layer", seed=14)
    rng = np.random.default_rng(15)
    Bn = 64
    X = rng.standard_normal((Bn, P, D))
    bt = Batch(
        X,
        rng.standard_normal((Bn, P)),
        rng.standard_normal((Bn, D)),
        rng.standard_normal(Bn),
        np.zeros((Bn, D)),
        np.zeros((Bn, D)),
        np.zeros((Bn, D, D)),
        np.zeros((Bn, 0), dtype=int),
    )
    old = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        l1, g1 = m.loss_and_grad(theta, bt)
        numba.set_num_threads(2)
        l2, g2 = m.loss_and_grad(theta, bt)
    finally:
        numba.set_num_threads(old)
    assert l1 == l2 and np.array_equal(g1, g2)


@pytest.mark.parametrize("qk", ["factorised", "temperature"])
def test_float32_agrees_with_float64(qk):
    m64, theta, bt = random_setup(qk, "shared", seed=13)
    m32 = LinearAttention(ModelConfig(model="linear", depth=L, width=N, qk=qk, dtype="float32"), D)
    l64, g64 = m64.loss_and_grad(theta, bt)
    l32, g32 = m32.loss_and_grad(theta.astype(np.float32), bt)
    assert g32.dtype == np.float32 and m32.layer_outputs(theta, bt).dtype == np.float32
    assert abs(l32 - l64) <= 1e-4 * l64
    assert np.abs(g32 - g64).max() <= 1e-4 * np.abs(g64).max()
    c64 = m64.label_weights(theta, bt)
    c32 = m32.label_weights(theta, bt)
    assert np.abs(c32 - c64).max() <= 1e-4 * np.abs(c64).max()


@pytest.mark.parametrize(
    "kwargs,name",
    [
        ({"stream": "single"}, "stream"),
        ({"context_update": True}, "context_update"),
        ({"model": "softmax"}, "model"),
        ({"width": 2}, "width"),
    ],
)
def test_rejects_softmax_only_options(kwargs, name):
    cfg = ModelConfig(**{"model": "linear", **kwargs})
    with pytest.raises(ValueError, match=name):
        LinearAttention(cfg, 4)


def test_rejects_bad_inputs():
    m, theta, bt = random_setup("factorised", "shared")
    with pytest.raises(ValueError, match="theta"):
        m.loss_and_grad(theta[:-1], bt)
    bad = Batch(bt.X[:, :, :2], bt.y, bt.x_test, bt.target, bt.t, bt.beta, bt.O, bt.sel)
    with pytest.raises(ValueError, match="batch.X"):
        m.predict(theta, bad)
    bad = Batch(bt.X, bt.y[:, :2], bt.x_test, bt.target, bt.t, bt.beta, bt.O, bt.sel)
    with pytest.raises(ValueError, match="batch.y"):
        m.predict(theta, bad)
    with pytest.raises(ValueError, match="lam"):
        population_loss({"kappa": [1.0]}, None, [1.0, -1.0], [1.0, 1.0])
    with pytest.raises(ValueError, match="omega"):
        population_loss({"kappa": [1.0]}, None, [1.0, 1.0], [1.0])
    with pytest.raises(ValueError, match="theta"):
        population_loss({"kappa": [1.0]}, theta, [1.0], [1.0])
    with pytest.raises(ValueError, match="'B' or 'kappa'"):
        population_loss({"g": 1.0}, None, [1.0], [1.0])
    with pytest.raises(ValueError, match="rng"):
        m.init(0)


@pytest.mark.parametrize("qk", ["factorised", "merged", "temperature"])
def test_init_steps_realises_the_residual_polynomial(qk):
    # the model started at steps gamma predicts beta^T (I - prod_l (I - gamma_l S / L)) x_test, S = X^T X / P
    from depthscale.theory.free_poly import jacobi_steps

    d, P, L, n = 5, 11, 4, 6
    rng = np.random.default_rng(7)
    X = rng.standard_normal((n, P, d)) * np.array([1.0, 0.7, 0.5, 0.3, 0.2])
    beta = rng.standard_normal((n, d))
    xt = rng.standard_normal((n, d))
    y = np.einsum("npd,nd->np", X, beta)
    bt = Batch(X, y, xt, (beta * xt).sum(1), xt, beta, np.tile(np.eye(d), (n, 1, 1)), np.zeros((n, 0), int))
    gamma = jacobi_steps(1.5, L, lam1=2.0).gamma
    m = LinearAttention(ModelConfig(model="linear", depth=L, qk=qk), d)
    theta = m.init_steps(np.random.default_rng(0), gamma)
    want = np.empty(n)
    for i in range(n):
        S = X[i].T @ X[i] / P
        R = np.eye(d)
        for g in gamma:
            R = R @ (np.eye(d) - g * S / L)
        want[i] = beta[i] @ (np.eye(d) - R) @ xt[i]
    np.testing.assert_allclose(m.predict(theta, bt), want, rtol=1e-10, atol=1e-12)


def test_init_steps_refuses_what_it_cannot_realise():
    m = LinearAttention(ModelConfig(model="linear", depth=2), 3)
    with pytest.raises(ValueError, match="gamma="):
        m.init_steps(np.random.default_rng(0), [1.0])
    with pytest.raises(ValueError, match="gamma="):
        m.init_steps(np.random.default_rng(0), [1.0, -1.0])
    tied = LinearAttention(ModelConfig(model="linear", depth=2, qk="tied"), 3)
    with pytest.raises(ValueError, match="qk='tied'"):
        tied.init_steps(np.random.default_rng(0), [1.0, 2.0])


def test_jacobi_init_starts_at_the_steps_of_jacobi_start():
    # the run's starting point predicts beta^T (I - prod_l (I - gamma_l S / L)) x_test with the
    # steps of theory.linear_optimum.jacobi_start, applied in its (Leja) order
    from depthscale.sims.config import TaskConfig
    from depthscale.sims.tasks import make_batch
    from depthscale.sims.training import initial_parameters
    from depthscale.theory.linear_optimum import jacobi_start

    task = TaskConfig(task="easy-fresh", a=1.0, b=1.0, d=6, P=24)
    mcfg = ModelConfig(model="linear", depth=5, init="jacobi")
    m = LinearAttention(mcfg, task.d)
    theta = initial_parameters(m, mcfg, task, np.random.default_rng(0))
    gamma = jacobi_start(1.0, 1.0, 6, 24, 5).gamma
    bt = make_batch(task, 7, np.random.default_rng(1))
    want = []
    for i in range(7):
        S = bt.X[i].T @ bt.X[i] / task.P
        R = np.eye(task.d)
        for g in gamma:
            R = R @ (np.eye(task.d) - g * S / 5)
        want.append(bt.beta[i] @ (np.eye(task.d) - R) @ bt.x_test[i])
    np.testing.assert_allclose(m.predict(theta, bt), want, rtol=1e-9, atol=1e-12)


def test_jacobi_start_in_leja_order_holds_under_a_small_kick():
    # every parameter moved by 1e-6 (one Adam step's size): the loss barely moves with the steps in
    # Leja order and measurably with the same steps in decreasing-root order (same polynomial)
    from depthscale.sims.config import TaskConfig
    from depthscale.sims.tasks import make_batch
    from depthscale.theory.linear_optimum import jacobi_start

    task = TaskConfig(task="easy-fresh", a=2.0, b=1.0, d=16, P=128)
    L = 16
    js = jacobi_start(2.0, 1.0, 16, 128, L)
    m = LinearAttention(ModelConfig(model="linear", depth=L), 16)
    ev = make_batch(task, 1024, np.random.default_rng(1))
    kick = 1e-6 * np.sign(np.random.default_rng(2).standard_normal(m.n_params))
    change = {}
    for name, gamma in (("leja", js.gamma), ("decreasing roots", L / np.sort(js.rho)[::-1])):
        theta = m.init_steps(np.random.default_rng(0), gamma)
        change[name] = m.loss_and_grad(theta + kick, ev)[0] / m.loss_and_grad(theta, ev)[0] - 1
    assert abs(change["leja"]) < 1e-3 < abs(change["decreasing roots"])


@pytest.mark.parametrize(
    "model, task, match",
    [
        ({"model": "softmax", "init": "jacobi"}, {}, "init='jacobi'"),
        ({"model": "linear", "qk": "tied", "init": "jacobi"}, {}, "init='jacobi'"),
        ({"model": "linear", "init": "jacobi"}, {"task": "topk"}, "easy task"),
        ({"model": "linear", "init": "jacobi"}, {"task": "easy-fresh", "a": 0.5, "b": 0.25}, "a \\+ b > 1"),
    ],
)
def test_jacobi_init_refuses_what_has_no_jacobi_steps(model, task, match):
    from depthscale.sims.config import RunConfig

    with pytest.raises(ValueError, match=match):
        RunConfig.from_dict({"task": task, "model": model})
