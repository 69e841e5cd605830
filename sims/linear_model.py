r"""Two-stream linear attention with 1/L residual branches (docs/sources.md, Models), exactly and fast.

The model
---------
Tokens i = 1..P are the context, token t the query. ``h_x,i = W_x x_i`` (fixed across layers),
``h_y,i^0 = W_y y_i`` and ``h_y,t^0 = 0``. Layer l = 1..L updates the label stream only::

    H_y^l = H_y^(l-1) + (1/L) V^l (A^l)^T,   V^l = W_v^l H_y^(l-1),
    A^l_ij = (1/(P N)) M_ij h_x,i^T B_l h_x,j,

with Bordelon's mask M (-1 context->context including the diagonal, +1 test->context, 0 on the
test column) and ``B_l = (W_q^l)^T W_k^l`` so that ``(Q^T K)_ij = h_x,i^T B_l h_x,j``. The
prediction is ``yhat = W_o . h_y,t^L``.

Exact reformulation (derivation)
--------------------------------
Column i of ``V A^T`` is ``sum_j A_ij W_v h_y,j``. Since the mask kills the test column, only the
context label states feed anything, and with ``C^l = (1/P) sum_j h_y,j^(l-1) h_x,j^T`` (N x N)::

    context:  h_y,i <- h_y,i - (1/(L N)) W_v C^l B_l^T h_x,i        (scores h_x,j^T B_l^T h_x,i)
    test:     h_y,t <- h_y,t + (1/(L N)) W_v C^l B_l^T h_x,t
    so        C^(l+1) = C^l - (1/(L N)) W_v C^l B_l^T S,   S = W_x Sxx W_x^T,
              C^1 = W_y (W_x u)^T,   Sxx = X^T X / P,  u = X^T y / P.

The recurrence uses the TRANSPOSE of the score matrix ``B_l`` (it matters for the factorised and
merged maps, which are not symmetric). Every ``C^l`` ends in ``W_x^T``: writing
``C^l = Chat^l W_x^T`` with ``Chat^l`` (N x d) and ``Et_l = W_x^T B_l^T W_x`` (d x d)::

    Chat^1 = W_y u^T,   Chat^(l+1) = Chat^l - (1/(L N)) W_v^l Chat^l Et_l Sxx,
    f_l    = L W_o . (test increment of layer l) = (1/N) (W_v^l{}^T W_o)^T Chat^l Et_l x_test,
    yhat   = (1/L) sum_l f_l.

A layer then costs O(N d^2 + N^2 d) per example after the O(P d^2) statistic, independent of P.
The backward pass is the reverse recurrence for ``G^l = d loss / d Chat^l`` (hand-derived, see
``depthscale.sims.linear_kernels``); the parameters enter only through ``Et_l``, ``W_v``, ``W_o``,
``W_y``, and the chain rule from ``Et_l`` to ``W_x`` and the query-key maps is done once per batch.

Population form
---------------
With ``W_v = v I`` the state stays ``Chat^l = W_y F^l`` and the push-through identity
``Sxx (I - c Et Sxx) = (I - c Sxx Et) Sxx`` turns the model into Bordelon's covariance polynomial
``F_l = F_(l-1) - (1/L) v F_(l-1) S B_l``, ``F_0 = beta^T``, ``yhat = g (F_0 - F_L) x_test`` with
``S = Sxx``, effective ``B_l = Et_l / N`` and gain ``g = W_o . W_y``.

Initialisation (the paper does not state it; chosen so the model starts at a sensible point)
-------------------------------------------------------------------------------------------
- ``W_x = sqrt(N) [I_d; 0]`` (identity-like): ``W_x^T W_x = N I_d``, so the effective
  Bordelon matrix ``Et_l / N`` is the top-left d x d block of ``B_l^T``;
- ``W_y = W_o = n / |n|`` for one Gaussian vector n: gain ``W_o . W_y = 1``, the correct
  infinite-depth gain;
- ``W_v = I`` (each layer's, for per-layer values): v = 1;
- query/key entries ``N(0, (init_scale / sqrt(d))^2)`` independently per layer; the merged
  ``B_l`` and the temperatures ``kappa_l`` use the same law. Attention therefore starts near
  zero (yhat ~ 0) with layers that differ from each other.

Parameter groups (flat vector ``theta`` in this order): ``W_x (N,d)``, ``W_y (N,)``,
``W_v (N,N)`` or ``(L,N,N)``, ``W_o (N,)``, then by ``qk``: factorised ``W_q, W_k (L,N,N)``;
merged ``B (L,N,N)``; tied ``W_q, W_k (N,N)``; temperature ``kappa (L,)``.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..theory._validate import check_choice, check_int
from .batch import Batch
from .config import ModelConfig
from .linear_kernels import linear_pass
from .model_specs import LinearSpec
from .parameters import input_qk_maps, qk_backward, qk_matrices
from .threads import batch_chunks

__all__ = ["LinearAttention", "population_loss"]


class LinearAttention(LinearSpec):
    """Two-stream linear attention model with hand-derived gradients (see the module docstring).

    Parameters
    ----------
    cfg : ModelConfig
        ``cfg.model`` must be ``"linear"``; ``cfg.stream == "single"`` and ``cfg.context_update``
        are softmax-only and rejected.
    d : int
        Input dimension.

    Examples
    --------
    >>> m = LinearAttention(ModelConfig(model="linear", depth=2), 3)
    >>> theta = m.init(np.random.default_rng(0))
    >>> theta.shape == (m.n_params,)
    True
    """

    def __init__(self, cfg: ModelConfig, d: int):
        if not isinstance(cfg, ModelConfig):
            raise ValueError(f"cfg={cfg!r}: must be a ModelConfig")
        check_choice("model", cfg.model, ("linear",))
        if cfg.stream != "two":
            raise ValueError(
                f"stream={cfg.stream!r}: must be 'two' for the linear model (single stream is softmax-only)"
            )
        if cfg.context_update:
            raise ValueError(
                "context_update=True: must be False for the linear model (context updates are softmax-only)"
            )
        self.cfg = cfg
        self.d = check_int("d", d, lo=1)
        self.N = cfg.n(self.d)
        if self.N < self.d:
            raise ValueError(f"width={cfg.width!r}: must be 0 or >= d={self.d}")
        self.L = cfg.depth
        self.dtype = np.dtype(cfg.dtype)
        self.layout = self.layout_of(cfg, self.d)
        self.n_params = self.layout.n_params

    # ----------------------------------------------------------------- parameters
    def names(self) -> list[str]:
        """Names of the parameter groups, in the order they occupy ``theta``.

        >>> LinearAttention(ModelConfig(model="linear", qk="temperature"), 2).names()
        ['W_x', 'W_y', 'W_v', 'W_o', 'kappa']
        """
        return self.layout.names()

    def unpack(self, theta) -> dict[str, np.ndarray]:
        """Views of ``theta`` as the named parameter arrays.

        >>> m = LinearAttention(ModelConfig(model="linear", depth=3), 2)
        >>> m.unpack(np.zeros(m.n_params))["W_q"].shape
        (3, 2, 2)
        """
        return self.layout.unpack(self._check_theta(theta))

    def init(self, rng: np.random.Generator) -> np.ndarray:
        """Initial parameters (see the module docstring for the choice).

        >>> m = LinearAttention(ModelConfig(model="linear"), 4)
        >>> p = m.unpack(m.init(np.random.default_rng(1)))
        >>> float(np.round(p["W_o"] @ p["W_y"], 12))
        1.0
        """
        if not isinstance(rng, np.random.Generator):
            raise ValueError(f"rng={rng!r}: must be a numpy.random.Generator")
        theta = np.zeros(self.n_params, self.dtype)
        p = self.unpack(theta)
        N, d = self.N, self.d
        p["W_x"][:] = 0.0
        p["W_x"][np.arange(d), np.arange(d)] = np.sqrt(N)
        n = rng.standard_normal(N)
        n /= np.linalg.norm(n)
        p["W_y"][:] = n
        p["W_o"][:] = n
        p["W_v"][:] = np.eye(N)
        sd = self.cfg.init_scale / np.sqrt(d)
        for name in ("W_q", "W_k", "B", "kappa"):
            if name in p:
                p[name][:] = sd * rng.standard_normal(p[name].shape)
        return theta

    def init_steps(self, rng: np.random.Generator, gamma) -> np.ndarray:
        """Parameters whose layers take the steps ``gamma`` (L,): residual ``prod_l (I - gamma_l S / L)``.

        As :meth:`init`, but every layer's query-key map is ``gamma_l`` times the identity
        (``W_q = W_k = sqrt(gamma_l) I``; ``B = gamma_l I``; ``kappa = gamma_l``), so the model
        predicts ``beta^T (I - prod_l (I - gamma_l S / L)) x_test`` with ``S = X^T X / P``: the
        residual polynomial with roots ``L / gamma_l``, e.g. the Jacobi roots of
        :func:`depthscale.theory.free_poly.jacobi_steps` (its ``gamma``). Needs per-layer maps
        (``qk`` factorised, merged or temperature) and, for factorised maps, ``gamma > 0``.

        >>> m = LinearAttention(ModelConfig(model="linear", depth=2), 3)
        >>> p = m.unpack(m.init_steps(np.random.default_rng(0), [1.0, 4.0]))
        >>> np.diagonal(p["W_q"][1] @ p["W_k"][1]).tolist()
        [4.0, 4.0, 4.0]
        """
        g = np.asarray(gamma, dtype=np.float64)
        if g.shape != (self.L,) or not np.all(np.isfinite(g)):
            raise ValueError(f"gamma={gamma!r}: must be {self.L} finite step sizes, one per layer")
        qk = self.cfg.qk
        if qk == "tied":
            raise ValueError("qk='tied': must be factorised, merged or temperature (tied layers share one step)")
        if qk == "factorised" and np.any(g <= 0):
            raise ValueError(f"gamma={gamma!r}: must be > 0 for factorised query-key maps (W_q = W_k = sqrt(gamma) I)")
        theta = self.init(rng)
        p = self.unpack(theta)
        eye = np.eye(self.N)
        if qk == "factorised":
            p["W_q"][:] = np.sqrt(g)[:, None, None] * eye
            p["W_k"][:] = np.sqrt(g)[:, None, None] * eye
        elif qk == "merged":
            p["B"][:] = g[:, None, None] * eye
        else:
            p["kappa"][:] = g
        return theta

    def qk_norms(self, theta) -> np.ndarray:
        """Frobenius norm of each layer's query-key matrix ``B_l`` (N x N), shape (L,).

        Examples
        --------
        >>> m = LinearAttention(ModelConfig(model="linear", qk="temperature", depth=2), 4)
        >>> th = np.zeros(m.n_params); m.unpack(th)["kappa"][:] = [1.0, -2.0]
        >>> m.qk_norms(th)
        array([2., 4.])
        """
        p = self.unpack(theta)
        if self.cfg.qk == "temperature":
            return np.abs(p["kappa"]).astype(float) * np.sqrt(self.N)
        return np.linalg.norm(self._qk(p), axis=(1, 2)).astype(float)

    # ----------------------------------------------------------------- passes
    def loss_and_grad(self, theta, batch: Batch) -> tuple[float, np.ndarray]:
        """Mean squared error over the batch and its exact gradient.

        >>> m = LinearAttention(ModelConfig(model="linear", depth=2), 3)
        >>> r = np.random.default_rng(0); X = r.standard_normal((2, 5, 3)); beta = r.standard_normal((2, 3))
        >>> xt = r.standard_normal((2, 3)); y = np.einsum("bpd,bd->bp", X, beta); tg = (beta * xt).sum(1)
        >>> bt = Batch(X, y, xt, tg, xt, beta, np.tile(np.eye(3), (2, 1, 1)), np.zeros((2, 0), int))
        >>> loss, g = m.loss_and_grad(m.init(r), bt)
        >>> g.shape == (m.n_params,)
        True
        """
        p = self.unpack(theta)
        X, y, xt, tg = self._arrays(batch)
        B_qk, Et, Wv, gv = self._effective(p)
        f, _, dE, dWv, qacc, dWy = self._pass(p, X, y, xt, tg, 2.0 / X.shape[0], 0.0, True, True)
        yhat = f.astype(np.float64).mean(axis=1)
        loss = float(np.mean((yhat - tg) ** 2))
        # chunks are added in a fixed order
        dE = dE.sum(axis=0)
        dWv = dWv.sum(axis=0)
        qacc = qacc.sum(axis=0)
        grad = np.zeros(self.n_params, self.dtype)
        g = self.unpack(grad)
        w = p["W_o"]
        # readout path f_l = (1/N) W_o^T W_v q_l
        dWv = dWv + np.einsum("i,vj->vij", w, qacc) / self.N
        g["W_o"][:] = np.einsum("vij,vj->i", Wv, qacc) / self.N
        g["W_v"][:] = dWv.reshape(g["W_v"].shape)
        g["W_y"][:] = dWy.sum(axis=0)
        # Et_l = W_x^T B_l^T W_x
        Wx = p["W_x"]
        dB = np.matmul(np.matmul(Wx, np.transpose(dE, (0, 2, 1))), Wx.T)  # (L,N,N)
        g["W_x"][:] = np.matmul(np.matmul(np.transpose(B_qk, (0, 2, 1)), Wx), np.transpose(dE, (0, 2, 1))).sum(
            0
        ) + np.matmul(np.matmul(B_qk, Wx), dE).sum(0)
        qk_backward(self.cfg.qk, p, dB, g)
        return loss, grad

    def layer_outputs(self, theta, batch: Batch) -> np.ndarray:
        """Per-layer predictors ``f`` (B, L) with ``yhat = f.mean(axis=1)``.

        >>> m = LinearAttention(ModelConfig(model="linear", depth=4), 2)
        >>> r = np.random.default_rng(0); X = r.standard_normal((3, 6, 2)); xt = r.standard_normal((3, 2))
        >>> bt = Batch(X, X[:, :, 0], xt, xt[:, 0], xt, np.zeros((3, 2)), np.zeros((3, 2, 2)), np.zeros((3, 0), int))
        >>> m.layer_outputs(m.init(r), bt).shape
        (3, 4)
        """
        X, y, xt, tg = self._arrays(batch)
        return self._pass(self.unpack(theta), X, y, xt, tg, 0.0, 0.0, False, False)[0]

    def predict(self, theta, batch: Batch) -> np.ndarray:
        """Predictions ``yhat`` (B,).

        >>> m = LinearAttention(ModelConfig(model="linear"), 2)
        >>> X = np.ones((1, 3, 2)); v = np.ones((1, 2))
        >>> bt = Batch(X, np.ones((1, 3)), v, np.ones(1), v, v, np.ones((1, 2, 2)), np.zeros((1, 0), int))
        >>> m.predict(np.zeros(m.n_params), bt)
        array([0.])
        """
        return self.layer_outputs(theta, batch).astype(np.float64).mean(axis=1).astype(self.dtype)

    def label_weights(self, theta, batch: Batch) -> np.ndarray:
        """``c = d yhat / d y`` (B, P); yhat is linear in the labels, ``yhat = c . y``.

        The labels enter only through ``u = X^T y / P``, so ``c = X (d yhat / d u) / P``, and
        ``d yhat / d u = Wy^T G^1`` from the reverse recurrence seeded with ``d yhat / d f_l = 1/L``.

        >>> m = LinearAttention(ModelConfig(model="linear", depth=2), 2)
        >>> r = np.random.default_rng(0); X = r.standard_normal((1, 4, 2)); y = r.standard_normal((1, 4))
        >>> bt = Batch(X, y, X[:, 0], y[:, 0], X[:, 0], np.zeros((1, 2)), np.zeros((1, 2, 2)), np.zeros((1, 0), int))
        >>> th = m.init(r)
        >>> bool(np.isclose((m.label_weights(th, bt) * y).sum(), m.predict(th, bt)[0]))
        True
        """
        X, y, xt, tg = self._arrays(batch)
        du = self._pass(self.unpack(theta), X, y, xt, tg, 0.0, 1.0, True, False)[1]
        return np.matmul(X, du[:, :, None])[:, :, 0] / X.shape[1]

    def attention(self, theta, batch: Batch) -> np.ndarray:
        """Raw masked scores of the test token over the context, (B, L, P).

        ``A^l_(t,j) = (1/(P N)) h_x,t^T B_l h_x,j = (1/(P N)) x_j^T Et_l x_test``.

        >>> m = LinearAttention(ModelConfig(model="linear", depth=3), 2)
        >>> X = np.ones((1, 5, 2)); v = np.ones((1, 2))
        >>> bt = Batch(X, np.ones((1, 5)), v, np.ones(1), v, v, np.ones((1, 2, 2)), np.zeros((1, 0), int))
        >>> m.attention(m.init(np.random.default_rng(0)), bt).shape
        (1, 3, 5)
        """
        p = self.unpack(theta)
        X, _, xt, _ = self._arrays(batch)
        _, Et, _, _ = self._effective(p)
        a = np.einsum("lij,bj->bli", Et, xt)
        return np.matmul(a, np.transpose(X, (0, 2, 1))) / (X.shape[1] * self.N)

    # ----------------------------------------------------------------- helpers
    def _check_theta(self, theta) -> np.ndarray:
        theta = np.asarray(theta)
        if theta.ndim != 1 or theta.shape[0] != self.n_params:
            raise ValueError(f"theta.shape={theta.shape}: must be ({self.n_params},)")
        if theta.dtype != self.dtype:
            theta = theta.astype(self.dtype)
        return theta

    def _qk(self, p) -> np.ndarray:
        """Score matrices B_l (L, N, N): scores h_x,i^T B_l h_x,j."""
        return qk_matrices(self.cfg.qk, p, self.L, self.N)

    def qk_maps(self, theta) -> np.ndarray:
        """Each layer's query-key map on the inputs ``W_x^T B_l W_x``, shape (L, d, d)."""
        return input_qk_maps(self.cfg.qk, self.unpack(theta), self.L, self.N)

    def _pass(self, p, X, y, xt, tg, s_mul, s_add, want_bwd, want_params):
        """One kernel pass; the backward seed per layer is ``(s_mul (yhat - tg) + s_add) / L`` (see ``linear_pass``)."""
        _, Et, Wv, gv = self._effective(p)
        scal = np.array([1.0 / (self.L * self.N), 1.0 / self.N, 1.0 / X.shape[1], s_mul, s_add], self.dtype)
        W_y = np.ascontiguousarray(p["W_y"])
        per_layer = self.cfg.value == "per-layer"
        return linear_pass(
            X, y, xt, tg, Et, Wv, gv, W_y, scal, per_layer, want_bwd, want_params, batch_chunks(X.shape[0])
        )

    def _effective(self, p):
        B_qk = self._qk(p)
        Wx = p["W_x"]
        Et = np.ascontiguousarray(np.matmul(np.matmul(Wx.T, np.transpose(B_qk, (0, 2, 1))), Wx), self.dtype)
        Wv = np.ascontiguousarray(p["W_v"].reshape(-1, self.N, self.N), self.dtype)
        gv = np.ascontiguousarray(np.einsum("vij,i->vj", Wv, p["W_o"]), self.dtype)
        return B_qk, Et, Wv, gv

    def _arrays(self, batch: Batch):
        X = np.asarray(batch.X)
        if X.ndim != 3 or X.shape[2] != self.d or X.shape[0] < 1 or X.shape[1] < 1:
            raise ValueError(f"batch.X.shape={X.shape}: must be (B, P, {self.d}) with B, P >= 1")
        B, P, _ = X.shape
        for name, shp in (("y", (B, P)), ("x_test", (B, self.d)), ("target", (B,))):
            arr = np.asarray(getattr(batch, name))
            if arr.shape != shp:
                raise ValueError(f"batch.{name}.shape={arr.shape}: must be {shp}")
        dt = self.dtype
        return (
            np.ascontiguousarray(X, dt),
            np.ascontiguousarray(batch.y, dt),
            np.ascontiguousarray(batch.x_test, dt),
            np.ascontiguousarray(batch.target, dt),
        )


def _check_spectrum(name: str, arr) -> np.ndarray:
    try:
        a = np.asarray(arr, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name}={arr!r}: must be a 1-D array of positive finite numbers") from None
    if a.ndim != 1 or a.size < 1 or not np.all(np.isfinite(a)) or np.any(a <= 0):
        raise ValueError(f"{name}={arr!r}: must be a 1-D array of positive finite numbers")
    return a


def population_loss(model_or_params, theta, lam, omega) -> float:
    """Exact easy-fresh loss in the population limit (Sxx = Sigma, u = Sigma beta), no sampling.

    Computed in the eigenbasis (Sigma = diag(lam), Omega = diag(omega)); with ``yhat = beta^T M
    x_test`` the loss is ``sum_kj omega_k lam_j (M - I)_kj^2``. For isotropic query-key maps
    (``B_l = kappa_l I``) it does not depend on the rotation, so it is also the Haar average.

    Parameters
    ----------
    model_or_params : LinearAttention or mapping
        A model (then ``theta`` is its parameter vector) or the reduced covariance-polynomial
        parameters ``{"B": (L,d,d)}`` or ``{"kappa": (L,)}`` with optional scalars ``"v"`` and
        ``"g"`` (default 1): ``F_l = F_(l-1) - (1/L) v F_(l-1) Sigma B_l``, ``F_0 = beta^T``,
        ``yhat = g (F_0 - F_L) x_test`` (then ``theta`` must be None).
    theta : ndarray or None
    lam, omega : (d,) spectra of Sigma and Omega.

    Examples
    --------
    >>> lam = np.array([1.0, 0.5]); om = np.array([1.0, 1.0])
    >>> r = population_loss({"kappa": [1.0]}, None, lam, om)
    >>> bool(np.isclose(r, (1 - 1.0) ** 2 + 0.5 * (1 - 0.5) ** 2))
    True
    """
    lam = _check_spectrum("lam", lam)
    omega = _check_spectrum("omega", omega)
    if lam.shape != omega.shape:
        raise ValueError(f"omega.shape={omega.shape}: must equal lam.shape={lam.shape}")
    d = lam.size
    if isinstance(model_or_params, LinearAttention):
        m = model_or_params
        if m.d != d:
            raise ValueError(f"lam.size={d}: must equal the model's d={m.d}")
        p = {k: v.astype(np.float64) for k, v in m.unpack(theta).items()}
        B_qk = m._qk(p).astype(np.float64)
        Wx = p["W_x"]
        Et = np.matmul(np.matmul(Wx.T, np.transpose(B_qk, (0, 2, 1))), Wx)
        Wv = p["W_v"].reshape(-1, m.N, m.N)
        gv = np.einsum("vij,i->vj", Wv, p["W_o"])
        L, N = m.L, m.N
        c = 1.0 / (L * N)
        # one state per teacher direction beta = e_k: Z[k] = W_y (Sigma e_k)^T
        Z = np.zeros((d, N, d))
        Z[np.arange(d), :, np.arange(d)] = lam[:, None] * p["W_y"][None, :]
        Mmat = np.zeros((d, d))
        for l in range(L):
            v = l if m.cfg.value == "per-layer" else 0
            ZE = np.matmul(Z, Et[l])  # (d,N,d)
            Mmat += np.einsum("n,knj->kj", gv[v], ZE) / (L * N)
            if l + 1 < L:
                Z = Z - c * np.matmul(Wv[v], ZE * lam[None, None, :])
    else:
        if theta is not None:
            raise ValueError(f"theta={theta!r}: must be None when reduced parameters are given")
        if not isinstance(model_or_params, Mapping):
            raise ValueError(f"model_or_params={model_or_params!r}: must be a LinearAttention or a mapping")
        prm = model_or_params
        if "B" in prm:
            Bl = np.asarray(prm["B"], dtype=np.float64)
            if Bl.ndim != 3 or Bl.shape[1:] != (d, d) or Bl.shape[0] < 1:
                raise ValueError(f"B.shape={Bl.shape}: must be (L, {d}, {d}) with L >= 1")
        elif "kappa" in prm:
            kap = np.asarray(prm["kappa"], dtype=np.float64)
            if kap.ndim != 1 or kap.size < 1:
                raise ValueError(f"kappa.shape={kap.shape}: must be (L,) with L >= 1")
            Bl = kap[:, None, None] * np.eye(d)
        else:
            raise ValueError(f"model_or_params keys={sorted(prm)}: must contain 'B' or 'kappa'")
        if not np.all(np.isfinite(Bl)):
            raise ValueError("B: must be finite")
        v_gain = float(prm.get("v", 1.0))  # not the layer index v of the branch above
        g = float(prm.get("g", 1.0))
        L = Bl.shape[0]
        F = np.eye(d)
        for l in range(L):
            F = F - (v_gain / L) * (F * lam[None, :]) @ Bl[l]
        Mmat = g * (np.eye(d) - F)
    R = Mmat - np.eye(d)
    return float(np.einsum("k,j,kj->", omega, lam, R * R))
