"""numba kernels of the softmax-attention model: fused forward and backward passes per context.

Every kernel loops over the batch in ``nchunks`` contiguous chunks (``prange`` over chunks), keeps
its workspace per chunk (no allocation inside the per-example loop) and adds parameter gradients
into per-chunk accumulators that the caller sums: the result depends only on ``nchunks``, never on
thread timing. Dense products go through ``np.dot`` with an output array (BLAS). All arrays handed
to one call share one float dtype (float64 or float32).

The query-key maps enter only through the effective matrices ``M_l`` (N, N) with
``z_ij = xhat_i^T M_l xhat_j``; the caller maps ``dM_l`` back to the parameters.
"""

from __future__ import annotations

import numpy as np

from .attention_maps import (
    ENTMAX15,
    RELU,
    SIGMOID,
    SOFTMAX,
    SPARSEMAX,
    entmax15_inplace,
    exp_shifted32,
    exp_shifted64,
    max4,
    relu_inplace,
    sigmoid_inplace,
    sparse_back_inplace,
    sparsemax_inplace,
    sum4,
)
from .jit import njit, prange

RMS_EPS = 1e-6  # xhat = h / sqrt(mean(h^2) + RMS_EPS): keeps the norm finite at h = 0, negligible otherwise


@njit(cache=True)
def _rms_rows(H, r, eps, S, ones, rowsum):
    """Normalise the rows of H in place, storing the inverse RMS of each row in r.

    ``S`` (P, N), ``ones`` (N,) of ones and ``rowsum`` (P,) are scratch in H's dtype.
    """
    P, N = H.shape
    for i in range(P):
        for a in range(N):
            S[i, a] = H[i, a] * H[i, a]
    np.dot(S, ones, rowsum)  # all row sums in one BLAS gemv: a scalar reduction per row does not vectorise
    for i in range(P):
        r[i] = 1.0 / np.sqrt(rowsum[i] / N + eps)
        ri = r[i]  # read back: the scaling runs in H's precision
        for a in range(N):
            H[i, a] *= ri


@njit(cache=True)
def _rms_rows_back(dH, Hn, r, S, ones, rowsum):
    """In place: gradient w.r.t. the normalised rows Hn -> gradient w.r.t. the raw rows (scratch as in _rms_rows)."""
    P, N = dH.shape
    for i in range(P):
        for a in range(N):
            S[i, a] = dH[i, a] * Hn[i, a]
    np.dot(S, ones, rowsum)  # all row sums in one BLAS gemv, as in _rms_rows
    for i in range(P):
        rowsum[i] /= N  # in place, then read back: the update runs in dH's precision
        ri = r[i]
        dot = rowsum[i]
        for a in range(N):
            dH[i, a] = ri * (dH[i, a] - Hn[i, a] * dot)


# The exponential is attention_maps.exp_shifted64/exp_shifted32 (no libm call, so the loops vectorise;
# shared with the sigmoid map); sums and maxima are attention_maps.sum4/max4 (four partial
# accumulators in a fixed order: vectorisable and deterministic).


@njit(cache=True, fastmath={"contract"})
def _softmax_inplace(z, ib, fb):
    """Stable softmax of a vector, in place (the maximum is subtracted first).

    ``ib`` (int64) and ``fb`` (a float64 view of the same memory) are scratch of length >= len(z).
    """
    n = z.shape[0]
    mx = max4(z)
    exp_shifted64(z, mx, ib, fb)
    inv = 1.0 / sum4(z)
    for i in range(n):
        z[i] *= inv


@njit(cache=True, fastmath={"contract"})
def _softmax32_inplace(z, ib, fb):
    """Single-precision stable softmax in place; ``ib`` int32 scratch, ``fb`` its float32 view."""
    n = z.shape[0]
    mx = np.float32(max4(z))
    exp_shifted32(z, mx, ib, fb)
    inv = np.float32(1.0 / sum4(z))
    for i in range(n):
        z[i] *= inv


@njit(cache=True)
def _softmax(z, ib):
    """Softmax of z in place in z's precision; ``ib`` is int64 scratch of length >= len(z)."""
    if z.itemsize == 4:
        i32 = ib.view(np.int32)
        _softmax32_inplace(z, i32, i32.view(np.float32))
    else:
        _softmax_inplace(z, ib, ib.view(np.float64))


@njit(cache=True)
def _attend(z, ib, kind):
    """The attention nonlinearity ``kind`` (a built-in map's code, ``attention_registry``) on z, in place."""
    if kind == SOFTMAX:
        _softmax(z, ib)
    elif kind == SPARSEMAX:
        sparsemax_inplace(z)
    elif kind == ENTMAX15:
        entmax15_inplace(z)
    elif kind == SIGMOID:
        sigmoid_inplace(z, -np.log(z.shape[0]), ib)
    elif kind == RELU:
        relu_inplace(z, 1.0 / z.shape[0])
    else:  # no fall-through: callers check the code first (attention_code); NaN weights, never raw scores
        z[:] = np.nan  # (a raise here would stop numba running the prange loops that call this in parallel)


@njit(cache=True)
def _norm_scratch(H):
    """Scratch for ``_rms_rows``/``_rms_rows_back`` on rows like H (P, N), and int64 softmax scratch.

    Returns r (P,), S (P, N), ones (N,), rowsum (P,) in H's dtype and ib (P,) int64.
    """
    P, N = H.shape
    dt = H.dtype
    return np.empty(P, dt), np.empty((P, N), dt), np.ones(N, dt), np.empty(P, dt), np.empty(P, np.int64)


@njit(cache=True)
def _add_product(acc, A, B, tmp):
    """``acc += A @ B`` through the scratch ``tmp`` (one BLAS product, then an add in fixed order)."""
    np.dot(A, B, tmp)
    for i in range(tmp.shape[0]):
        for j in range(tmp.shape[1]):
            acc[i, j] += tmp[i, j]


@njit(cache=True)
def _test_attention(Ml, x, Hh, u, p, ib):
    """The test token's attention of one layer: ``u = M_l^T x``, ``p = softmax(Hh u)``."""
    N = Ml.shape[0]
    for j in range(N):
        acc = 0.0
        for a in range(N):
            acc += Ml[a, j] * x[a]
        u[j] = acc
    np.dot(Hh, u, p)
    _softmax(p, ib)


@njit(cache=True)
def _test_attention_back(Ml, x, du, dMl, dx):
    """Back through ``u = M_l^T x``: ``dM_l += x du^T`` and ``dx = M_l du`` (overwritten)."""
    N = Ml.shape[0]
    for a in range(N):
        xa = x[a]
        acc = 0.0
        for j in range(N):
            dMl[a, j] += xa * du[j]
            acc += Ml[a, j] * du[j]
        dx[a] = acc


@njit(cache=True)
def _context_attention(Xh, Ml, Vl, G, A, AV, ib):
    """Context tokens attending to each other: ``G = Xh M_l``, ``A = softmax_rows(G Xh^T)``, ``AV = A V_l``."""
    np.dot(Xh, Ml, G)
    np.dot(G, Xh.T, A)
    for i in range(A.shape[0]):
        _softmax(A[i], ib)
    np.dot(A, Vl, AV)


@njit(cache=True, inline="always")
def _softmax_back(p, dp, dz, scale):
    """Back through ``p = softmax(z)`` scaled by ``scale``: ``dz = p scale (dp - p . dp)`` (dz may be dp)."""
    s = 0.0
    for i in range(p.shape[0]):
        s += p[i] * dp[i]
    for i in range(p.shape[0]):
        dz[i] = p[i] * scale * (dp[i] - s)


@njit(cache=True, inline="always")
def _readout_back(Wo, h, target, coef, unit, dh, dWo):
    """The readout ``yhat = W_o . h`` and its residual ``res`` (1 if ``unit``, else ``coef (yhat - target)``).

    Sets ``dh = res W_o`` and adds ``res h`` to ``dWo``; returns ``res``.
    """
    yhat = 0.0
    for a in range(h.shape[0]):
        yhat += Wo[a] * h[a]
    res = 1.0 if unit else coef * (yhat - target)
    for a in range(h.shape[0]):
        dh[a] = res * Wo[a]
        dWo[a] += res * h[a]
    return res


@njit(cache=True, inline="always")
def _add_labels_back(dWy, dH, y):
    """Back through the label embedding ``H_ia = y_i W_y,a``: ``dWy += dH^T y``."""
    for a in range(dH.shape[1]):
        acc = 0.0
        for i in range(dH.shape[0]):
            acc += dH[i, a] * y[i]
        dWy[a] += acc


@njit(cache=True)
def _back_scratch(P, N, d, dt):
    """Scratch of a backward pass: (P, N) and (N, d) product temporaries, a P- and an N-vector in ``dt``, and
    an N-vector in float64 (scalar sums before rounding to ``dt``)."""
    return np.empty((P, N), dt), np.empty((N, d), dt), np.empty(P, dt), np.empty(N, dt), np.empty(N, np.float64)


@njit(cache=True, parallel=True)
def core_pass(
    X, y, target, WxT, U, g, coef, unit, want_grad, want_attn, nchunks, eps, s_out, res_out, dU, dWx_acc, attn, kind
):
    """Two streams, context not updated: the parallel form ``yhat = (1/L) sum_l g_l p_l . y``.

    ``p_l`` is the attention nonlinearity ``kind`` (a built-in map's code, ``attention_registry``) of the
    scores ``z_l``: softmax or one of the maps of ``attention_maps``.

    Inputs: X (B,P,d), y (B,P), target (B,), WxT (d,N) = W_x^T, U (B,L,N) with
    ``U[b,l] = M_l^T xhat_test,b``, g (L,) the gains. Outputs: s_out (B,L) = p_l . y,
    res_out (B,) = d loss / d yhat (1 if ``unit``), dU (B,L,N), dWx_acc (nchunks,N,d) the
    context tokens' share of d loss / d W_x, attn (B,L,P) if ``want_attn``.
    """
    B, P, d = X.shape
    L = U.shape[1]
    N = U.shape[2]
    for c in prange(nchunks):
        b0 = c * B // nchunks
        b1 = (c + 1) * B // nchunks
        Xh = np.empty((P, N), X.dtype)
        r, S, ones, rowsum, ib = _norm_scratch(Xh)
        Z = np.empty((L, P), X.dtype)
        dX = np.empty((P, N), X.dtype)
        tmp = np.empty((N, d), X.dtype)
        wb = np.empty(1, X.dtype)
        sb = np.empty(1, X.dtype)
        for b in range(b0, b1):
            np.dot(X[b], WxT, Xh)
            _rms_rows(Xh, r, eps, S, ones, rowsum)
            np.dot(U[b], Xh.T, Z)  # z_l,i = u_l . xhat_i for all layers in one product
            for l in range(L):
                _attend(Z[l], ib, kind)
            np.dot(Z, y[b], s_out[b])  # s_l = p_l . y
            yhat = 0.0
            for l in range(L):
                yhat += g[l] * s_out[b, l]
            yhat /= L
            if want_attn:
                attn[b, :, :] = Z
            if not want_grad:
                continue
            res = 1.0 if unit else coef * (yhat - target[b])
            res_out[b] = res
            # d loss / d z_l = J_l^T y g_l res / L; for softmax p_l,i (y_i - s_l) g_l res / L
            for l in range(L):
                wb[0] = res * g[l] / L  # through wb/sb: the loop runs in the arrays' precision
                sb[0] = s_out[b, l]
                w = wb[0]
                s = sb[0]
                if kind == SOFTMAX:
                    for i in range(P):
                        Z[l, i] = Z[l, i] * (y[b, i] - s) * w
                else:
                    sparse_back_inplace(kind, Z[l], y[b], w, ib.view(np.float64))
            np.dot(Z, Xh, dU[b])
            np.dot(Z.T, U[b], dX)
            _rms_rows_back(dX, Xh, r, S, ones, rowsum)
            _add_product(dWx_acc[c], dX.T, X[b], tmp)


# The per-context bodies of ctx_pass and single_pass: the kernels keep the prange chunk loop and
# allocate every workspace once per chunk; these take the example's views and the chunk's scratch.


@njit(cache=True)
def _ctx_forward(Xb, yb, xtb, WxT, M, WvT, Wo, Wy, mL, eps, keep, fb, Xh, norm, Hs, Vs, ps, us, Gs, As, AVs, ht):
    """ctx_pass's forward pass of one context: per-layer predictors into fb (L,), the test token's
    stream into ht and, for the backward pass, each layer's H_y^(l-1), values, test attention and
    ``u_l``; the context attention of every layer but the last when ``keep``, else none kept."""
    r, S, ones, rowsum, ib = norm
    L, P, N = Hs.shape
    Lv = WvT.shape[0]
    np.dot(Xb, WxT, Xh)
    _rms_rows(Xh, r, eps, S, ones, rowsum)
    for i in range(P):
        for a in range(N):
            Hs[0, i, a] = yb[i] * Wy[a]
    ht[:] = 0.0
    for l in range(L):
        lv = l if Lv > 1 else 0
        _test_attention(M[l], xtb, Xh, us[l], ps[l], ib)
        np.dot(Hs[l], WvT[lv], Vs[l])
        fl = 0.0
        for a in range(N):
            pv = 0.0
            for i in range(P):
                pv += ps[l, i] * Vs[l, i, a]
            ht[a] += pv / L
            fl += Wo[a] * pv
        fb[l] = fl
        if l < L - 1:  # the last layer's context update is never read
            k = l if keep else 0
            _context_attention(Xh, M[l], Vs[l], Gs[k], As[k], AVs[k], ib)
            for i in range(P):
                for a in range(N):
                    Hs[l + 1, i, a] = Hs[l, i, a] + mL * AVs[k, i, a]


@njit(cache=True)
def _ctx_work(P, N, d, dt):
    """_ctx_backward's scratch: dA (P, P), dHy, dV, dXh, dG (P, N), tNN (N, N), then _back_scratch's."""
    dA, tNN = np.empty((P, P), dt), np.empty((N, N), dt)
    dHy, dV, dXh, dG = np.empty((P, N), dt), np.empty((P, N), dt), np.empty((P, N), dt), np.empty((P, N), dt)
    return (dA, dHy, dV, dXh, dG, tNN) + _back_scratch(P, N, d, dt)


@njit(cache=True)
def _ctx_backward(
    Xb, yb, xtb, M, Wv, Wy, mL, Xh, norm, Hs, Vs, ps, us, Gs, As, AVs, dht, work, cb, dxtb, dWx, dM, dWv, dWy, dm
):
    """ctx_pass's backward pass of one context from ``dht`` = d loss / d h_test (forward state as
    _ctx_forward leaves it): c = dH_y^0 W_y into cb, the test input's gradient added to dxtb, the
    chunk's parameter gradients added to dWx, dM, dWv, dWy and dm (1,). ``work``: the scratch
    as _ctx_work allocates it."""
    r, S, ones, rowsum, _ = norm
    dA, dHy, dV, dXh, dG, tNN, tPN, tNd, dp, du, dxt_l = work
    L, P, N = Hs.shape
    Lv = Wv.shape[0]
    dHy[:, :] = 0.0
    dXh[:, :] = 0.0
    for l in range(L - 1, -1, -1):
        lv = l if Lv > 1 else 0
        for i in range(P):
            for a in range(N):
                dV[i, a] = ps[l, i] * dht[a] / L
        if l < L - 1:
            G, A = Gs[l], As[l]
            dmb = 0.0
            for i in range(P):
                for a in range(N):
                    dmb += dHy[i, a] * AVs[l, i, a]
            dm[0] += dmb / L
            np.dot(A.T, dHy, tPN)
            for i in range(P):
                for a in range(N):
                    dV[i, a] += mL * tPN[i, a]
            np.dot(dHy, Vs[l].T, dA)
            for i in range(P):
                _softmax_back(A[i], dA[i], dA[i], mL)
            np.dot(dA, Xh, dG)
            _add_product(dXh, dA.T, G, tPN)
            _add_product(dM[l], Xh.T, dG, tNN)
            _add_product(dXh, dG, M[l].T, tPN)
        # the test token's attention of layer l
        np.dot(Vs[l], dht, dp)
        for i in range(P):
            dp[i] /= L
        _softmax_back(ps[l], dp, dp, 1.0)  # now dz
        for i in range(P):
            for a in range(N):
                dXh[i, a] += dp[i] * us[l, a]
        np.dot(Xh.T, dp, du)
        _test_attention_back(M[l], xtb, du, dM[l], dxt_l)
        for a in range(N):
            dxtb[a] += dxt_l[a]
        # values V = H_y^(l-1) W_v^T
        _add_product(dWv[lv], dV.T, Hs[l], tNN)
        _add_product(dHy, dV, Wv[lv], tPN)
    for i in range(P):
        ci = 0.0
        for a in range(N):
            ci += dHy[i, a] * Wy[a]
        cb[i] = ci
    _add_labels_back(dWy, dHy, yb)
    _rms_rows_back(dXh, Xh, r, S, ones, rowsum)
    _add_product(dWx, dXh.T, Xb, tNd)


@njit(cache=True, parallel=True)
def ctx_pass(
    X,
    y,
    xt,
    target,
    WxT,
    M,
    Wv,
    WvT,
    Wo,
    Wy,
    m,
    coef,
    unit,
    want_grad,
    want_attn,
    nchunks,
    eps,
    f_out,
    res_out,
    c_out,
    dxt,
    dWx_acc,
    dM_acc,
    dWv_acc,
    dWo_acc,
    dWy_acc,
    dm_acc,
    attn,
):
    """Two streams with context updates: context tokens attend to each other with weight m / L.

    ``H_y^l = H_y^(l-1) + (m/L) A^l H_y^(l-1) W_v^l^T`` with ``A^l = softmax_rows(Xhat M_l Xhat^T)``,
    the test token reads ``(1/L) p_l^T H_y^(l-1) W_v^l^T``. Outputs: f_out (B,L) per-layer
    predictors, res_out (B,), c_out (B,P) = d yhat / d y when ``unit``, dxt (B,N) the gradient
    w.r.t. the normalised test input, per-chunk accumulators of the parameter gradients.
    """
    B, P, d = X.shape
    L = M.shape[0]
    N = M.shape[1]
    mL = m / L
    for c in prange(nchunks):
        b0 = c * B // nchunks
        b1 = (c + 1) * B // nchunks
        dt = X.dtype
        Xh = np.empty((P, N), dt)
        norm = _norm_scratch(Xh)
        Hs = np.empty((L, P, N), dt)  # H_y^(l-1) read by layer l
        Vs = np.empty((L, P, N), dt)
        ps = np.empty((L, P), dt)
        us = np.empty((L, N), dt)
        # each layer's context attention, kept for the backward pass when there is one (recomputing
        # it there cost a third of a step: its P^2 exponentials dominate a layer); (L-1) P^2 per chunk
        nkeep = max(L - 1, 1) if want_grad else 1
        Gs = np.empty((nkeep, P, N), dt)
        As = np.empty((nkeep, P, P), dt)
        AVs = np.empty((nkeep, P, N), dt)
        ht = np.empty(N, dt)
        dht = np.empty(N, dt)
        work = _ctx_work(P, N, d, dt)
        for b in range(b0, b1):
            _ctx_forward(
                X[b], y[b], xt[b], WxT, M, WvT, Wo, Wy, mL, eps, want_grad, f_out[b], Xh, norm, Hs, Vs, ps, us,
                Gs, As, AVs, ht,
            )  # fmt: skip
            if want_attn:
                attn[b, :, :] = ps
            if want_grad:
                res_out[b] = _readout_back(Wo, ht, target[b], coef, unit, dht, dWo_acc[c])
                _ctx_backward(
                    X[b], y[b], xt[b], M, Wv, Wy, mL, Xh, norm, Hs, Vs, ps, us, Gs, As, AVs, dht, work, c_out[b],
                    dxt[b], dWx_acc[c], dM_acc[c], dWv_acc[c], dWy_acc[c], dm_acc[c : c + 1],
                )  # fmt: skip


@njit(cache=True)
def _single_forward(Xb, yb, xq, WxT, Wy, M, Wv, Wo, eps, fb, Hh, norm, hs, hh, rt, us, ps, cs):
    """single_pass's forward pass of one context: per-layer predictors into fb (L,), and for the
    backward pass the normalised context rows Hh, the test token's stream hs (L+1, N), its
    normalised rows hh and inverse RMS rt, ``u_l``, the attention and ``c_l = Hhat^T p_l``."""
    r, S, ones, rowsum, ib = norm
    L = M.shape[0]
    P, N = Hh.shape
    d = xq.shape[0]
    Lv = Wv.shape[0]
    np.dot(Xb, WxT, Hh)
    for i in range(P):
        for a in range(N):
            Hh[i, a] += yb[i] * Wy[a]
    _rms_rows(Hh, r, eps, S, ones, rowsum)
    for a in range(N):
        acc = 0.0
        for k in range(d):
            acc += xq[k] * WxT[k, a]
        hs[0, a] = acc
    z0 = 0.0
    for a in range(N):
        z0 += Wo[a] * hs[0, a]
    for l in range(L):
        lv = l if Lv > 1 else 0
        ss = 0.0
        for a in range(N):
            ss += hs[l, a] * hs[l, a]
        rr = 1.0 / np.sqrt(ss / N + eps)
        rt[l] = rr
        for a in range(N):
            hh[l, a] = hs[l, a] * rr
        _test_attention(M[l], hh[l], Hh, us[l], ps[l], ib)
        np.dot(Hh.T, ps[l], cs[l])
        fl = z0
        for a in range(N):
            v = 0.0
            for j in range(N):
                v += Wv[lv, a, j] * cs[l, j]
            hs[l + 1, a] = hs[l, a] + v / L
            fl += Wo[a] * v
        fb[l] = fl


@njit(cache=True)
def _single_work(L, P, N, d, dt):
    """_single_backward's scratch: dZ (L, P), dC (L, N), dHh (P, N), dhh (N,), then _back_scratch's."""
    return (np.empty((L, P), dt), np.empty((L, N), dt), np.empty((P, N), dt), np.empty(N, dt)) + _back_scratch(
        P, N, d, dt
    )


@njit(cache=True)
def _single_backward(Xb, yb, xq, M, Wv, Hh, norm, hh, rt, us, ps, cs, dh, work, dWx, dWy, dM, dWv):
    """single_pass's backward pass of one context from ``dh`` = d loss / d h^L (forward state as
    _single_forward leaves it; dh is overwritten): the chunk's parameter gradients added to dWx,
    dWy, dM and dWv. ``work``: as _single_work allocates it."""
    r, S, ones, rowsum, _ = norm
    dZ, dC, dHh, dhh, tPN, tNd, dp, du, dhh64 = work
    L = M.shape[0]
    N = Hh.shape[1]
    d = xq.shape[0]
    Lv = Wv.shape[0]
    for l in range(L - 1, -1, -1):
        lv = l if Lv > 1 else 0
        # v = W_v c, h^l = h^(l-1) + v / L
        for j in range(N):
            acc = 0.0
            for a in range(N):
                dva = dh[a] / L
                dWv[lv, a, j] += dva * cs[l, j]
                acc += Wv[lv, a, j] * dva
            dC[l, j] = acc
        # c = Hhat^T p
        np.dot(Hh, dC[l], dp)
        _softmax_back(ps[l], dp, dZ[l], 1.0)
        np.dot(Hh.T, dZ[l], du)
        # u = M^T hhat, then the test token's RMS norm
        _test_attention_back(M[l], hh[l], du, dM[l], dhh64)
        dot = 0.0
        for a in range(N):
            dhh[a] = dhh64[a]
            dot += dhh64[a] * hh[l, a]
        dot /= N
        for a in range(N):
            dh[a] += rt[l] * (dhh[a] - hh[l, a] * dot)
    for a in range(N):
        for k in range(d):
            dWx[a, k] += dh[a] * xq[k]
    np.dot(ps.T, dC, dHh)
    _add_product(dHh, dZ.T, us, tPN)
    _rms_rows_back(dHh, Hh, r, S, ones, rowsum)
    _add_product(dWx, dHh.T, Xb, tNd)
    _add_labels_back(dWy, dHh, yb)


@njit(cache=True, parallel=True)
def single_pass(
    X,
    y,
    Xtest,
    target,
    WxT,
    Wy,
    M,
    Wv,
    Wo,
    coef,
    want_grad,
    want_attn,
    nchunks,
    eps,
    f_out,
    res_out,
    dWx_acc,
    dWy_acc,
    dM_acc,
    dWv_acc,
    dWo_acc,
    attn,
):
    """One shared stream, cascaded: the test token's stream changes layer by layer.

    Context tokens carry ``h_i = W_x x_i + W_y y_i`` (not updated); the test token starts at
    ``h^0 = W_x x_test`` and ``h^l = h^(l-1) + (1/L) W_v^l Hhat^T softmax(Hhat M_l^T hhat^(l-1))``
    with hats the RMS-normalised rows. Per-layer predictors ``f_l = z_0 + W_o . v_l`` where
    ``z_l = W_o . h^l`` (so ``f_l = b_L + L (z_l - z_(l-1))``).
    """
    B, P, d = X.shape
    L = M.shape[0]
    N = M.shape[1]
    for c in prange(nchunks):
        b0 = c * B // nchunks
        b1 = (c + 1) * B // nchunks
        dt = X.dtype
        Hh = np.empty((P, N), dt)
        norm = _norm_scratch(Hh)
        hs = np.empty((L + 1, N), dt)
        hh = np.empty((L, N), dt)
        rt = np.empty(L, dt)
        us = np.empty((L, N), dt)
        ps = np.empty((L, P), dt)
        cs = np.empty((L, N), dt)
        dh = np.empty(N, dt)
        work = _single_work(L, P, N, d, dt)
        for b in range(b0, b1):
            _single_forward(X[b], y[b], Xtest[b], WxT, Wy, M, Wv, Wo, eps, f_out[b], Hh, norm, hs, hh, rt, us, ps, cs)
            if want_attn:
                attn[b, :, :] = ps
            if want_grad:
                res_out[b] = _readout_back(Wo, hs[L], target[b], coef, False, dh, dWo_acc[c])
                _single_backward(
                    X[b], y[b], Xtest[b], M, Wv, Hh, norm, hh, rt, us, ps, cs, dh, work, dWx_acc[c], dWy_acc[c],
                    dM_acc[c], dWv_acc[c],
                )  # fmt: skip
