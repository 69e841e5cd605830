"""The softmax-attention model of docs/sources.md (Models), with hand-derived gradients (numba).

Two streams (default): ``H_x = W_x X`` is fixed and RMS-normalised without gain,
``xhat = h / sqrt(mean(h^2) + 1e-6)``; ``H_y^0 = W_y y_in`` with the test label slot 0. Layer l
lets the test token attend to the P context tokens with ``p_l = softmax_i(z_l,i)``,
``z_l,i = xhat_test^T M_l xhat_i``, and adds ``(1/L) W_v^l H_y^(l-1) p_l`` to its label stream;
the readout is ``yhat = W_o h_y,test^L``. With context tokens not updated this is exactly the
parallel form ``yhat = (1/L) sum_l g_l p_l . y``, ``g_l = W_o W_v^l W_y``.

The effective query-key matrix ``M_l`` depends on ``ModelConfig.qk``:
``factorised`` ``M_l = W_q^l^T W_k^l`` (the paper's form), ``merged`` ``M_l = B_l``, ``tied`` one
``W_q^T W_k`` for every layer (control), ``temperature`` ``M_l = kappa_l I`` (control).
Switches: ``value="per-layer"`` (one ``W_v^l`` per layer), ``context_update=True`` (context tokens
attend to each other with weight ``m / L``, m trainable) and ``stream="single"`` (one cascaded
stream ``H^0 = W_x X + W_y y_in``; not linear in the labels).

Initialisation: ``W_x`` has orthonormal columns (geometry of the inputs kept, the norm removes
scale) and, when ``N > d``, ``W_y`` is a unit vector orthogonal to them (otherwise a random unit
vector); ``W_v = I``, ``W_o = W_y`` so every gain starts at ``g_l = 1``; query/key entries (and
``B_l``, ``kappa_l``) are i.i.d. ``N(0, (init_scale / sqrt(d))^2)``, independent per layer, so
attention starts near uniform and layers start different; ``m = 0`` (the context update starts
switched off). With ``init="default"`` every matrix is instead drawn as common frameworks do by
default, uniform in ``+-1/sqrt(fan_in)`` (``W_y``: fan-in 1; ``kappa``: fan-in 1; ``m = 0``): random
gains ``g_l`` and random, layer-independent logits of order one (the paper states no init).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..theory._validate import D_MAX, bad_argument, check_int
from .attention_maps import attention_code
from .config import ModelConfig
from .model_specs import SoftmaxSpec
from .parameters import input_qk_maps, qk_backward, qk_matrices
from .softmax_kernels import RMS_EPS, core_pass, ctx_pass, single_pass
from .threads import batch_chunks

_bad = bad_argument


@dataclass
class _Pass:
    """One pass's inputs, switches and the buffers every stream writes (attention, residuals, W_x's gradient)."""

    X: np.ndarray
    y: np.ndarray
    xq: np.ndarray
    target: np.ndarray
    p: dict  # the parameters, views of theta
    gp: dict  # the gradient, views of one flat vector
    want_grad: bool
    want_attn: bool
    unit: bool
    nch: int  # batch chunks
    coef: float  # 2 / B: d(mean squared error) / d(yhat) per unit residual
    attn: np.ndarray
    res: np.ndarray
    dWx: np.ndarray


class SoftmaxAttention(SoftmaxSpec):
    """Softmax attention with 1/L residual branches; parameters are one flat vector ``theta``.

    Parameters
    ----------
    cfg : ModelConfig
        ``cfg.model`` must be ``"softmax"``; width ``N = cfg.n(d) >= d``.
    d : int
        Input dimension.

    Examples
    --------
    >>> from depthscale.sims.batch import Batch
    >>> model = SoftmaxAttention(ModelConfig(depth=2), d=3)
    >>> theta = model.init(np.random.default_rng(0))
    >>> rng = np.random.default_rng(1)
    >>> X = rng.standard_normal((2, 5, 3)); beta = rng.standard_normal((2, 3))
    >>> y = np.einsum("bpd,bd->bp", X, beta)
    >>> batch = Batch(X, y, X[:, 0], y[:, 0], X[:, 0], beta, np.zeros((2, 3, 3)), np.zeros((2, 1), int))
    >>> loss, grad = model.loss_and_grad(theta, batch)
    >>> grad.shape == (model.n_params,)
    True

    On a context of identical tokens every score is equal, so each layer attends uniformly and, with
    the starting gains ``g_l = 1``, predicts the mean label (here also the target: loss 0):

    >>> m = SoftmaxAttention(ModelConfig(depth=2), 2)
    >>> th = m.init(np.random.default_rng(0))
    >>> X = np.ones((1, 4, 2)); y = np.array([[1.0, 2.0, 3.0, 6.0]])
    >>> b = Batch(X, y, X[:, 0], np.array([3.0]), X[:, 0], np.ones((1, 2)), np.zeros((1, 2, 2)), np.zeros((1, 1), int))
    >>> m.attention(th, b).shape
    (1, 2, 4)
    >>> np.round(m.label_weights(th, b), 12).tolist()
    [[0.25, 0.25, 0.25, 0.25]]
    >>> np.round(m.layer_outputs(th, b), 12).tolist(), np.round(m.predict(th, b), 12).tolist()
    ([[3.0, 3.0]], [3.0])
    >>> round(m.loss_and_grad(th, b)[0], 12)
    0.0
    """

    def __init__(self, cfg: ModelConfig, d: int):
        if not isinstance(cfg, ModelConfig):
            _bad("cfg", type(cfg).__name__, "a ModelConfig")
        if cfg.model != "softmax":
            _bad("model", cfg.model, "softmax for SoftmaxAttention")
        self.d = check_int("d", d, lo=1, hi=D_MAX)
        self.N = check_int("width", cfg.n(self.d), lo=self.d)
        if cfg.stream == "single" and cfg.context_update:
            _bad("context_update", True, "False with stream='single' (the cascaded stream keeps context tokens fixed)")
        self.cfg = cfg
        self.L = cfg.depth
        self.dtype = np.dtype(cfg.dtype)
        self.layout = self.layout_of(cfg, self.d)
        self.n_params = self.layout.n_params

    # ------------------------------------------------------------------ parameters
    def names(self) -> list[str]:
        """Names of the parameter blocks, in the order they sit in ``theta``.

        >>> SoftmaxAttention(ModelConfig(qk="merged"), 2).names()
        ['W_x', 'W_y', 'B', 'W_v', 'W_o']
        """
        return self.layout.names()

    def unpack(self, theta: np.ndarray) -> dict:
        """Views of ``theta`` shaped as the parameter blocks.

        >>> m = SoftmaxAttention(ModelConfig(depth=3), 2)
        >>> m.unpack(np.zeros(m.n_params))["W_q"].shape
        (3, 2, 2)
        """
        return self.layout.unpack(theta)

    def init(self, rng: np.random.Generator) -> np.ndarray:
        """A starting point (see the module docstring), in ``cfg.dtype``.

        >>> m = SoftmaxAttention(ModelConfig(depth=2), 4)
        >>> Wx = m.init(np.random.default_rng(0))[:16].reshape(4, 4)
        >>> bool(np.allclose(Wx.T @ Wx, np.eye(4)))
        True
        """
        N, d, cfg = self.N, self.d, self.cfg
        theta = np.zeros(self.n_params, dtype=np.float64)
        p = self.unpack(theta)
        if cfg.init == "default":
            for name, block in p.items():
                if name != "m":  # the last axis of a block is the fan-in of its map; a vector's fan-in is 1
                    fan_in = block.shape[-1] if name not in ("W_y", "kappa") else 1
                    block[...] = rng.uniform(-1, 1, block.shape) / np.sqrt(fan_in)
            return theta.astype(self.dtype)
        q, rr = np.linalg.qr(rng.standard_normal((N, d + 1 if N > d else d)))
        q = q * np.sign(np.diag(rr))
        p["W_x"][...] = q[:, :d]
        if N > d:
            p["W_y"][...] = q[:, d]
        else:
            w = rng.standard_normal(N)
            p["W_y"][...] = w / np.linalg.norm(w)
        std = cfg.init_scale / np.sqrt(d)
        for name in ("W_q", "W_k", "B", "kappa"):
            if name in p:
                p[name][...] = std * rng.standard_normal(p[name].shape)
        p["W_v"][...] = np.eye(N)
        p["W_o"][...] = p["W_y"]
        return theta.astype(self.dtype)

    def qk_norms(self, theta: np.ndarray) -> np.ndarray:
        """Frobenius norm of each layer's effective query-key matrix ``M_l``, shape (L,).

        Examples
        --------
        >>> m = SoftmaxAttention(ModelConfig(depth=2, qk="temperature"), 4)
        >>> th = np.zeros(m.n_params); m.unpack(th)["kappa"][:] = [1.0, -2.0]
        >>> m.qk_norms(th).tolist()
        [2.0, 4.0]
        """
        M = self._qk_mats(self.unpack(np.asarray(theta, dtype=np.float64)))
        return np.sqrt(np.einsum("lab,lab->l", M, M))

    def qk_maps(self, theta: np.ndarray) -> np.ndarray:
        """Each layer's query-key map on the inputs ``W_x^T M_l W_x``, shape (L, d, d)."""
        return input_qk_maps(self.cfg.qk, self.unpack(theta), self.L, self.N)

    def _qk_mats(self, p) -> np.ndarray:
        return qk_matrices(self.cfg.qk, p, self.L, self.N)

    def _qk_back(self, p, dM, g) -> None:
        qk_backward(self.cfg.qk, p, dM, g)

    # ------------------------------------------------------------------ the passes
    def _arrays(self, theta, batch):
        dt = self.dtype
        theta = np.ascontiguousarray(theta, dtype=dt)
        if theta.ndim != 1 or theta.shape[0] != self.n_params:
            _bad("theta.shape", theta.shape, f"({self.n_params},)")
        X = np.ascontiguousarray(batch.X, dtype=dt)
        if X.ndim != 3 or X.shape[2] != self.d or X.shape[0] < 1 or X.shape[1] < 1:
            _bad("batch.X.shape", X.shape, f"(B, P, {self.d}) with B, P >= 1")
        B, P, _ = X.shape
        y = np.ascontiguousarray(batch.y, dtype=dt)
        if y.shape != (B, P):
            _bad("batch.y.shape", y.shape, f"({B}, {P})")
        xq = np.ascontiguousarray(batch.x_test, dtype=dt)
        if xq.shape != (B, self.d):
            _bad("batch.x_test.shape", xq.shape, f"({B}, {self.d})")
        target = np.ascontiguousarray(batch.target, dtype=dt)
        if target.shape != (B,):
            _bad("batch.target.shape", target.shape, f"({B},)")
        return theta, X, y, xq, target

    def _run(self, theta, batch, want_grad=False, want_attn=False, unit=False):
        """One fused pass. Returns f (B,L), and as asked attention (B,L,P), grad, label weights."""
        theta, X, y, xq, target = self._arrays(theta, batch)
        dt, B, P = self.dtype, X.shape[0], X.shape[1]
        nch = batch_chunks(B)
        grad = np.zeros(self.n_params, dtype=dt)
        w = _Pass(
            X, y, xq, target, self.unpack(theta), self.unpack(grad), want_grad, want_attn, unit, nch, 2.0 / B,
            attn=np.zeros((B, self.L, P) if want_attn or unit else (1, 1, 1), dtype=dt),
            res=np.zeros(B, dtype=dt),
            dWx=np.zeros((nch, self.N, self.d), dtype=dt),
        )  # fmt: skip
        if self.cfg.stream == "single":
            out = self._single_stream(w)
        else:
            # the test token's normalised input, shared by every layer
            ht = xq @ w.p["W_x"].T
            rt = 1.0 / np.sqrt(np.mean(ht * ht, axis=1) + RMS_EPS)
            xt = np.ascontiguousarray(ht * rt[:, None])
            out, dxt = self._context_update(w, xt) if self.cfg.context_update else self._two_stream(w, xt)
            if want_grad:
                # RMS-norm backward of the test token, then W_x once for all tokens
                dht = rt[:, None] * (dxt - xt * (np.sum(dxt * xt, axis=1) / self.N)[:, None])
                w.gp["W_x"][...] = w.dWx.sum(0) + dht.T @ xq
        if want_attn:
            out["attn"] = w.attn
        if want_grad:
            yhat = out["f"].mean(axis=1)
            out["loss"] = float(np.mean((yhat.astype(np.float64) - target) ** 2))
            out["grad"] = grad
        return out

    def _grads(self, w: _Pass, Lv: int) -> tuple[np.ndarray, ...]:
        """Per-chunk gradient buffers of W_y, W_o, the query-key matrices and W_v."""
        dt, nch, N = self.dtype, w.nch, self.N
        return (
            np.zeros((nch, N), dt),
            np.zeros((nch, N), dt),
            np.zeros((nch, self.L, N, N), dt),
            np.zeros((nch, Lv, N, N), dt),
        )

    def _value_grads(self, w: _Pass, dWy, dWo, dWv, dM) -> None:
        """Sum the chunks' gradients of W_y, W_o, W_v and the query-key matrices into ``w.gp``."""
        w.gp["W_y"][...] = dWy.sum(0)
        w.gp["W_o"][...] = dWo.sum(0)
        w.gp["W_v"][...] = dWv.sum(0).reshape(w.gp["W_v"].shape)
        self._qk_back(w.p, dM.sum(0), w.gp)

    def _single_stream(self, w: _Pass) -> dict:
        p, dt = w.p, self.dtype
        Wv = np.ascontiguousarray(p["W_v"].reshape(-1, self.N, self.N))
        f = np.zeros((w.X.shape[0], self.L), dtype=dt)
        dWy, dWo, dM, dWv = self._grads(w, Wv.shape[0])
        WxT = np.ascontiguousarray(p["W_x"].T)
        M = self._qk_mats(p)
        single_pass(
            w.X, w.y, w.xq, w.target, WxT, np.ascontiguousarray(p["W_y"]), M, Wv, np.ascontiguousarray(p["W_o"]),
            w.coef, w.want_grad, w.want_attn, w.nch, RMS_EPS, f, w.res, w.dWx, dWy, dM, dWv, dWo, w.attn,
        )  # fmt: skip
        if w.want_grad:
            w.gp["W_x"][...] = w.dWx.sum(0)
            self._value_grads(w, dWy, dWo, dWv, dM)
        return {"f": f}

    def _context_update(self, w: _Pass, xt: np.ndarray) -> tuple[dict, np.ndarray]:
        p, dt, B = w.p, self.dtype, w.X.shape[0]
        Wv = p["W_v"].reshape(-1, self.N, self.N)
        f, c = np.zeros((B, self.L), dtype=dt), np.zeros((B, w.X.shape[1]), dtype=dt)
        dxt, dm = np.zeros((B, self.N), dtype=dt), np.zeros(w.nch, dt)
        dWy, dWo, dM, dWv = self._grads(w, Wv.shape[0])
        WxT = np.ascontiguousarray(p["W_x"].T)
        ctx_pass(
            w.X, w.y, xt, w.target, WxT, self._qk_mats(p), np.ascontiguousarray(Wv),
            np.ascontiguousarray(Wv.transpose(0, 2, 1)), np.ascontiguousarray(p["W_o"]),
            np.ascontiguousarray(p["W_y"]), float(p["m"]), w.coef, w.unit, w.want_grad or w.unit, w.want_attn,
            w.nch, RMS_EPS, f, w.res, c, dxt, w.dWx, dM, dWv, dWo, dWy, dm, w.attn,
        )  # fmt: skip
        out = {"f": f, "c": c} if w.unit else {"f": f}
        if w.want_grad:
            self._value_grads(w, dWy, dWo, dWv, dM)
            w.gp["m"][...] = dm.sum()
        return out, dxt

    def _two_stream(self, w: _Pass, xt: np.ndarray) -> tuple[dict, np.ndarray]:
        """The parallel form ``yhat = (1/L) sum_l g_l p_l . y``: one kernel for the attention, the
        gains and the query-key gradients on the host."""
        p, dt, B, N, L = w.p, self.dtype, w.X.shape[0], self.N, self.L
        M = self._qk_mats(p)
        Wv = p["W_v"].reshape(-1, N, N)
        Mcat = np.ascontiguousarray(M.transpose(1, 0, 2).reshape(N, L * N))
        U = np.ascontiguousarray((xt @ Mcat).reshape(B, L, N))
        WvWy = Wv @ p["W_y"]  # (Lv, N)
        # a copy: broadcast_to's view is read-only, and a read-only g is another type to numba
        # (core_pass compiled twice per process, depth 1 or per-layer values against the rest)
        g = np.array(np.broadcast_to(WvWy @ p["W_o"], (L,)), dtype=dt)
        s = np.zeros((B, L), dtype=dt)
        dU = np.zeros((B, L, N) if w.want_grad else (1, 1, 1), dtype=dt)
        WxT = np.ascontiguousarray(p["W_x"].T)
        core_pass(
            w.X, w.y, w.target, WxT, U, g, w.coef, False, w.want_grad, w.want_attn or w.unit, w.nch, RMS_EPS,
            s, w.res, dU, w.dWx, w.attn, attention_code(self.cfg.attention),
        )  # fmt: skip
        out = {"f": s * g}
        if w.unit:
            out["c"] = np.einsum("l,blp->bp", g, w.attn) / L
        if not w.want_grad:
            return out, np.zeros((B, N), dtype=dt)
        dUf = dU.reshape(B, L * N)
        dMs = (xt.T @ dUf).reshape(N, L, N).transpose(1, 0, 2)
        dg = (w.res @ s) / L
        dgv = np.array([dg.sum()], dtype=dt) if Wv.shape[0] == 1 else dg  # shared W_v: one gain
        gp = w.gp
        gp["W_o"][...] = dgv @ WvWy
        gp["W_v"][...] = (dgv[:, None, None] * np.outer(p["W_o"], p["W_y"])[None]).reshape(gp["W_v"].shape)
        gp["W_y"][...] = np.einsum("l,lab,a->b", dgv, Wv, p["W_o"])
        self._qk_back(p, np.ascontiguousarray(dMs), gp)
        return out, dUf @ Mcat.T

    # ------------------------------------------------------------------ public API
    def loss_and_grad(self, theta: np.ndarray, batch) -> tuple[float, np.ndarray]:
        """Mean squared error over the batch and its exact gradient w.r.t. ``theta``."""
        out = self._run(theta, batch, want_grad=True)
        return out["loss"], out["grad"]

    def layer_outputs(self, theta: np.ndarray, batch) -> np.ndarray:
        """Per-layer predictors f (B, L) with ``yhat = f.mean(axis=1)``.

        f_l is L times the readout of layer l's increment of the test token's stream.
        """
        return self._run(theta, batch)["f"]

    def predict(self, theta: np.ndarray, batch) -> np.ndarray:
        """Predictions yhat (B,)."""
        return self._run(theta, batch)["f"].mean(axis=1)

    def label_weights(self, theta: np.ndarray, batch):
        """``c = d yhat / d y`` (B, P), so that ``yhat = c . y``; ``None`` for ``stream="single"``.

        For the core model ``c = (1/L) sum_l g_l p_l``.
        """
        if self.cfg.stream == "single":
            return None
        return self._run(theta, batch, unit=True)["c"]

    def attention(self, theta: np.ndarray, batch) -> np.ndarray:
        """The test token's softmax attention weights over the context, per layer: (B, L, P)."""
        return self._run(theta, batch, want_attn=True)["attn"]
