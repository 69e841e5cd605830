"""numba kernels of the linear-attention model in its sufficient-statistic form.

See ``depthscale.sims.linear_model`` for the derivation. Per example the kernels hold the state
``C_l`` (N x d) of every layer in a per-chunk workspace that stays in cache, run the forward
recurrence, and (optionally) the reverse recurrence for the gradient straight after, so one
example costs about 8 (N x d x d)-sized matrix products per layer and no allocation. The batch is
split into a fixed number of chunks (``prange``); each chunk sums its own parameter gradients, the
caller adds the chunks in a fixed order, so results do not depend on thread scheduling.

Measured choices: ``np.dot`` on the contiguous per-example blocks (BLAS) runs the 32 x 32 x 32
products at the machine's large-GEMM rate and the ``X^T X`` statistic about ten times faster than
hand-written loops, so the kernels use it for every product and plain loops only for the O(N d)
rank-one and update steps.

All floating inputs must share one dtype (float64 or float32); kernels compile for both.
"""

from __future__ import annotations

import numpy as np

from .jit import njit, prange


@njit(cache=True)
def _workspace(X, L, N):
    """Per-chunk scratch of ``_example``: Sxx, u, a, C, T2s, Q, T1, T3, G, dT2, dT1, tdd, tNN."""
    d = X.shape[2]
    dt = X.dtype
    Nd = (N, d)
    return (
        np.empty((d, d), dt),
        np.empty(d, dt),
        np.empty((L, d), dt),
        np.empty((L, N, d), dt),
        np.empty((L, N, d), dt),
        np.empty((L, N), dt),
        np.empty(Nd, dt),
        np.empty(Nd, dt),
        np.empty(Nd, dt),
        np.empty(Nd, dt),
        np.empty(Nd, dt),
        np.empty((d, d), dt),
        np.empty((N, N), dt),
    )


@njit(cache=True)
def _example(Xb, yb, xt, tgt, model, scal, per_layer, want_bwd, want_params, ws, f_out, du_out, grads):
    """Forward (and backward) pass of one example.

    scal = [1/(L N), 1/N, 1/P, s_mul, s_add]: the backward seed per layer is
    s = (s_mul * (yhat - tgt) + s_add) / L, i.e. d loss_b / d f_l for the loss (s_mul = 2/B,
    s_add = 0) or d yhat / d f_l for label weights (s_mul = 0, s_add = 1).
    ``model = (Et, Wv, gv, Wy)``, ``ws`` the scratch from ``_workspace`` and ``grads = (dE, dWv,
    qacc, dWy)`` the chunk's gradient accumulators. Returns yhat.
    """
    Et, Wv, gv, Wy = model
    Sxx, u, a, C, T2s, Q, T1, T3, G, dT2, dT1, tdd, tNN = ws
    dE, dWv, qacc, dWy = grads
    L = Et.shape[0]
    N = Wy.shape[0]
    d = xt.shape[0]
    c = scal[0]
    invN = scal[1]
    invP = scal[2]
    # sufficient statistics of the context (Sxx only feeds the context updates, absent when L = 1)
    if L > 1:
        np.dot(Xb.T, Xb, Sxx)
        for i in range(d):
            for j in range(d):
                Sxx[i, j] *= invP
    np.dot(Xb.T, yb, u)
    for i in range(d):
        u[i] *= invP
    # C_1 = W_y u^T
    for i in range(N):
        for j in range(d):
            C[0, i, j] = Wy[i] * u[j]
    yhat = 0.0
    for l in range(L):
        v = l if per_layer else 0
        np.dot(Et[l], xt, a[l])  # a_l = Et_l x_test
        np.dot(C[l], a[l], Q[l])  # q_l = C_l Et_l x_test (test token increment before W_v)
        fl = 0.0
        for i in range(N):
            fl += gv[v, i] * Q[l, i]
        fl *= invN
        f_out[l] = fl
        yhat += fl
        if l + 1 < L:  # the last layer's context update is never read
            np.dot(C[l], Et[l], T1)
            np.dot(T1, Sxx, T2s[l])
            np.dot(Wv[v], T2s[l], T3)
            for i in range(N):
                for j in range(d):
                    C[l + 1, i, j] = C[l, i, j] - c * T3[i, j]
    yhat /= L
    if not want_bwd:
        return yhat
    s = (scal[3] * (yhat - tgt) + scal[4]) / L
    sN = s * invN
    for l in range(L - 1, -1, -1):
        v = l if per_layer else 0
        if l + 1 < L:
            # C_{l+1} = C_l - c W_v T2_l, T2_l = C_l Et_l Sxx ; G = d/dC_{l+1}
            np.dot(Wv[v].T, G, dT2)
            if want_params:
                np.dot(G, T2s[l].T, tNN)
                for i in range(N):
                    for j in range(N):
                        dWv[v, i, j] -= c * tNN[i, j]
            np.dot(dT2, Sxx, dT1)
            for i in range(N):
                for j in range(d):
                    dT1[i, j] *= -c
            # rank-one part from q_l = C_l Et_l x_test: dT1 += (s/N) gv x_test^T
            for i in range(N):
                gi = sN * gv[v, i]
                for j in range(d):
                    dT1[i, j] += gi * xt[j]
            if want_params:
                np.dot(C[l].T, dT1, tdd)
                for i in range(d):
                    for j in range(d):
                        dE[l, i, j] += tdd[i, j]
            np.dot(dT1, Et[l].T, T3)
            for i in range(N):
                for j in range(d):
                    G[i, j] += T3[i, j]
        else:
            # last layer: everything is rank one; dT1 = (s/N) gv x_test^T
            if want_params:
                for j in range(d):
                    acc = 0.0
                    for i in range(N):
                        acc += C[l, i, j] * gv[v, i]
                    acc *= sN
                    for k in range(d):
                        dE[l, j, k] += acc * xt[k]
            for i in range(N):
                gi = sN * gv[v, i]
                for j in range(d):
                    G[i, j] = gi * a[l, j]
        if want_params:
            for i in range(N):
                qacc[v, i] += s * Q[l, i]
    # G = d/dC_1 with C_1 = W_y u^T
    for i in range(N):
        acc = 0.0
        for j in range(d):
            acc += G[i, j] * u[j]
        dWy[i] += acc
    for j in range(d):
        acc = 0.0
        for i in range(N):
            acc += G[i, j] * Wy[i]
        du_out[j] = acc
    return yhat


@njit(cache=True, parallel=True)
def linear_pass(X, y, xt, target, Et, Wv, gv, Wy, scal, per_layer, want_bwd, want_params, nchunks):
    """Run every example of the batch; return per-layer outputs, d(seed)/du and chunk gradients.

    Returns
    -------
    f : (B, L) per-layer predictors; yhat = f.mean(1).
    du : (B, d) gradient of the seeded objective with respect to u = X^T y / P (zero if no backward).
    dE : (nchunks, L, d, d) gradient with respect to Et_l (sum over the chunk's examples).
    dWv : (nchunks, Lv, N, N) gradient with respect to W_v through the context recurrence.
    qacc : (nchunks, Lv, N) sum over examples of s * q_l (gives the readout-path gradients).
    dWy : (nchunks, N) gradient with respect to W_y.
    """
    B, P, d = X.shape
    L = Et.shape[0]
    Lv = Wv.shape[0]
    N = Wy.shape[0]
    dt = X.dtype
    f = np.zeros((B, L), dt)
    du = np.zeros((B, d), dt)
    nbwd = nchunks
    Lp = L if want_params else 1
    dE = np.zeros((nbwd, Lp, d, d), dt)
    dWv = np.zeros((nbwd, Lv, N, N), dt)
    qacc = np.zeros((nbwd, Lv, N), dt)
    dWy = np.zeros((nbwd, N), dt)
    model = (Et, Wv, gv, Wy)
    for ch in prange(nchunks):
        b0 = (B * ch) // nchunks
        b1 = (B * (ch + 1)) // nchunks
        ws = _workspace(X, L, N)
        grads = (dE[ch], dWv[ch], qacc[ch], dWy[ch])
        for b in range(b0, b1):
            _example(
                X[b], y[b], xt[b], target[b], model, scal, per_layer, want_bwd, want_params, ws, f[b], du[b], grads
            )
    return f, du, dE, dWv, qacc, dWy
