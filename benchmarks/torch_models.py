"""PyTorch (CPU) versions of the two attention models of ``depthscale.sims``, gradients by autograd.

The maths is exactly that of ``depthscale.sims.linear_model`` and ``depthscale.sims.softmax_model``
(same flat parameter vector ``theta``, same parameter names, shapes and order), written with batched
tensor operations so autograd supplies the gradient. It serves two purposes: the baseline the
numba engine is timed against (``bench_step.py``), and an independent check of the engine's
hand-derived gradients (``tests/sims/test_autograd.py``).

Linear attention, sufficient-statistic form (per context ``Sxx = X^T X / P``, ``u = X^T y / P``)::

    Et_l = W_x^T B_l^T W_x,   gv = W_v^T W_o,   C_1 = W_y u^T  (N x d),
    f_l  = (1/N) gv . (C_l Et_l x_test),
    C_(l+1) = C_l - (1/(L N)) W_v C_l Et_l Sxx,        yhat = mean_l f_l.

Softmax attention (two streams, RMS pre-norm without gain, ``xhat = h / sqrt(mean(h^2) + eps)``)::

    core (context not updated):  f_l = g_l softmax_i(xhat_test^T M_l xhat_i) . y,  g_l = W_o^T W_v^l W_y
    context_update=True:         context label stream H <- H + (m/L) softmax_rows(Xhat M_l Xhat^T) H W_v^T
    stream="single":             one cascaded stream, f_l = W_o.h^0 + W_o.(W_v^l Hhat^T p_l)

with ``M_l = W_q^l^T W_k^l`` (factorised), ``B_l`` (merged), one ``W_q^T W_k`` (tied) or
``kappa_l I`` (temperature). Loss: mean over the batch of ``(yhat - target)^2``.

This file is a benchmark helper, not part of the installed package; it needs ``torch``.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from depthscale.sims.config import ModelConfig
from depthscale.sims.softmax_kernels import RMS_EPS

__all__ = ["param_shapes", "TorchModel", "TorchTrainer", "linear_layer_outputs", "softmax_layer_outputs"]

_DTYPES = {"float64": torch.float64, "float32": torch.float32}


def param_shapes(cfg: ModelConfig, d: int) -> list[tuple[str, tuple]]:
    """Names and shapes of the parameter groups, in the order they occupy ``theta``.

    The layouts are the ones documented by the numba models.

    Examples
    --------
    >>> from depthscale.sims.config import ModelConfig
    >>> [n for n, _ in param_shapes(ModelConfig(model="linear", qk="merged"), 3)]
    ['W_x', 'W_y', 'W_v', 'W_o', 'B']
    """
    if not isinstance(cfg, ModelConfig):
        raise ValueError(f"cfg={cfg!r}: must be a ModelConfig")
    N, L = cfg.n(d), cfg.depth
    if N < d:
        raise ValueError(f"width={cfg.width!r}: must be 0 or >= d={d}")
    value = ("W_v", (N, N) if cfg.value == "shared" else (L, N, N))
    qk = {
        "factorised": [("W_q", (L, N, N)), ("W_k", (L, N, N))],
        "merged": [("B", (L, N, N))],
        "tied": [("W_q", (N, N)), ("W_k", (N, N))],
        "temperature": [("kappa", (L,))],
    }[cfg.qk]
    if cfg.model == "linear":
        return [("W_x", (N, d)), ("W_y", (N,)), value, ("W_o", (N,))] + qk
    out = [("W_x", (N, d)), ("W_y", (N,))] + qk + [value, ("W_o", (N,))]
    if cfg.context_update:
        out.append(("m", ()))
    return out


def _qk_mats(p: dict, cfg: ModelConfig, N: int) -> torch.Tensor:
    """Score matrices (L, N, N) with score ``h_query^T M_l h_key``."""
    L = cfg.depth
    if cfg.qk == "factorised":
        return p["W_q"].transpose(1, 2) @ p["W_k"]
    if cfg.qk == "merged":
        return p["B"]
    if cfg.qk == "tied":
        return (p["W_q"].T @ p["W_k"]).expand(L, N, N)
    return p["kappa"][:, None, None] * torch.eye(N, dtype=p["kappa"].dtype)


def _values(p: dict, N: int) -> torch.Tensor:
    return p["W_v"].reshape(-1, N, N)


def linear_layer_outputs(p: dict, cfg: ModelConfig, X, y, xt) -> torch.Tensor:
    """Per-layer predictors ``f`` (B, L) of the linear model (see the module docstring).

    Examples
    --------
    >>> import torch
    >>> from depthscale.sims.config import ModelConfig
    >>> cfg = ModelConfig(model="linear", depth=2, qk="temperature")
    >>> p = {"W_x": torch.eye(2), "W_y": torch.ones(2), "W_v": torch.eye(2), "W_o": torch.ones(2),
    ...      "kappa": torch.zeros(2)}
    >>> linear_layer_outputs(p, cfg, torch.ones(1, 3, 2), torch.ones(1, 3), torch.ones(1, 2)).shape
    torch.Size([1, 2])
    """
    N, L = p["W_y"].shape[0], cfg.depth
    P = X.shape[1]
    Xt = X.transpose(1, 2)
    Sxx = (Xt @ X) / P if L > 1 else None  # (B, d, d); only the context updates read it, as in numba
    u = (Xt @ y.unsqueeze(-1)).squeeze(-1) / P  # (B, d)
    Wx = p["W_x"]
    Et = Wx.T @ _qk_mats(p, cfg, N).transpose(1, 2) @ Wx  # (L, d, d)
    Wv = _values(p, N)
    gv = Wv.transpose(1, 2) @ p["W_o"]  # (Lv, N)
    c = 1.0 / (L * N)
    C = p["W_y"][None, :, None] * u[:, None, :]  # (B, N, d)
    fs = []
    for l in range(L):
        v = l if Wv.shape[0] > 1 else 0
        a = xt @ Et[l].T  # Et_l x_test, (B, d)
        q = (C @ a.unsqueeze(-1)).squeeze(-1)  # (B, N)
        fs.append(q @ gv[v] / N)
        if l + 1 < L:  # the last layer's context update is never read
            T2 = (C @ Et[l]) @ Sxx
            C = C - c * (Wv[v] @ T2)
    return torch.stack(fs, dim=1)


def _threshold_map(Z: torch.Tensor, power: int) -> torch.Tensor:
    """``[u - tau]_+^power`` on the last axis with ``sum = 1``, ``u = Z`` (power 1, sparsemax) or
    ``Z / 2`` (power 2, 1.5-entmax); tau from the sorted scores (the textbook support search, not
    the engine's sort-free iteration), with autograd through the closed form on the support."""
    u = Z if power == 1 else Z / 2
    us, _ = torch.sort(u, dim=-1, descending=True)
    k = torch.arange(1, u.shape[-1] + 1, dtype=u.dtype)
    c1 = torch.cumsum(us, -1)
    if power == 1:
        tau_k = (c1 - 1) / k
    else:
        mean = c1 / k
        disc = torch.clamp(mean * mean - (torch.cumsum(us * us, -1) - 1) / k, min=0)
        tau_k = mean - torch.sqrt(disc)
    support = (us > tau_k).sum(-1, keepdim=True)  # the largest k whose k-th score is above its tau
    tau = torch.gather(tau_k, -1, support - 1)
    return torch.clamp(u - tau, min=0) ** power


def attention_map(Z: torch.Tensor, name: str) -> torch.Tensor:
    """The attention nonlinearity ``name`` (``ModelConfig.attention``) on the last axis of Z."""
    P = Z.shape[-1]
    if name == "softmax":
        return torch.softmax(Z, dim=-1)
    if name == "sparsemax":
        return _threshold_map(Z, 1)
    if name == "entmax15":
        return _threshold_map(Z, 2)
    if name == "sigmoid":
        return torch.sigmoid(Z - math.log(P))
    if name == "relu":
        return torch.relu(Z) / P
    raise ValueError(f"attention={name!r}: unknown")


def _rms(h: torch.Tensor) -> torch.Tensor:
    return h * torch.rsqrt((h * h).mean(dim=-1, keepdim=True) + RMS_EPS)


def softmax_layer_outputs(p: dict, cfg: ModelConfig, X, y, xq) -> torch.Tensor:
    """Per-layer predictors ``f`` (B, L) of the softmax model, any variant (see the module docstring).

    Examples
    --------
    >>> import torch
    >>> from depthscale.sims.config import ModelConfig
    >>> cfg = ModelConfig(model="softmax", depth=1, qk="temperature")
    >>> p = {"W_x": torch.eye(2, dtype=torch.float64), "W_y": torch.ones(2, dtype=torch.float64),
    ...      "kappa": torch.zeros(1, dtype=torch.float64), "W_v": torch.eye(2, dtype=torch.float64),
    ...      "W_o": torch.tensor([1.0, 0.0], dtype=torch.float64)}
    >>> X = torch.ones(1, 3, 2, dtype=torch.float64); y = torch.tensor([[1.0, 2.0, 6.0]], dtype=torch.float64)
    >>> softmax_layer_outputs(p, cfg, X, y, X[:, 0]).tolist()  # uniform attention: the mean label
    [[3.0]]
    """
    N, L = p["W_y"].shape[0], cfg.depth
    Wx, Wy, Wo = p["W_x"], p["W_y"], p["W_o"]
    M = _qk_mats(p, cfg, N)
    Wv = _values(p, N)
    Lv = Wv.shape[0]
    if cfg.stream == "single":
        Hh = _rms(X @ Wx.T + y.unsqueeze(-1) * Wy)  # context tokens carry inputs and labels
        h = xq @ Wx.T
        z0 = h @ Wo
        fs = []
        for l in range(L):
            u = _rms(h) @ M[l]  # M_l^T hhat
            pl = torch.softmax((Hh @ u.unsqueeze(-1)).squeeze(-1), dim=-1)
            cl = (pl.unsqueeze(1) @ Hh).squeeze(1)  # Hhat^T p
            v = cl @ Wv[l if Lv > 1 else 0].T
            h = h + v / L
            fs.append(z0 + v @ Wo)
        return torch.stack(fs, dim=1)
    Xh = _rms(X @ Wx.T)  # (B, P, N)
    xt = _rms(xq @ Wx.T)  # (B, N)
    if cfg.context_update:
        Hy = y.unsqueeze(-1) * Wy  # context label stream H_y^0 (B, P, N)
        fs = []
        for l in range(L):
            Wl = Wv[l if Lv > 1 else 0]
            pl = torch.softmax((Xh @ (xt @ M[l]).unsqueeze(-1)).squeeze(-1), dim=-1)
            V = Hy @ Wl.T
            fs.append((pl.unsqueeze(1) @ V).squeeze(1) @ Wo)
            if l < L - 1:  # the last layer's context update is never read
                A = torch.softmax((Xh @ M[l]) @ Xh.transpose(1, 2), dim=-1)
                Hy = Hy + (p["m"] / L) * (A @ V)
        return torch.stack(fs, dim=1)
    U = (xt @ M.transpose(0, 1).reshape(N, L * N)).reshape(-1, L, N)  # U[b, l] = M_l^T xhat_test
    Z = U @ Xh.transpose(1, 2)  # (B, L, P) scores of the test token
    s = (attention_map(Z, cfg.attention) @ y.unsqueeze(-1)).squeeze(-1)  # p_l . y
    g = (Wv @ Wy) @ Wo  # (Lv,) gains W_o^T W_v^l W_y
    return s * g


class TorchModel:
    """One of the two models on a flat parameter vector, with autograd gradients.

    Parameters
    ----------
    cfg : ModelConfig
        As for ``depthscale.sims.models.make_model``; ``cfg.dtype`` sets the torch dtype.
    d : int
        Input dimension.

    Examples
    --------
    >>> import numpy as np
    >>> from depthscale.sims.config import ModelConfig, TaskConfig
    >>> from depthscale.sims.models import make_model
    >>> from depthscale.sims.tasks import make_batch
    >>> cfg = ModelConfig(model="softmax", depth=2)
    >>> ref = make_model(cfg, 4); theta = ref.init(np.random.default_rng(0))
    >>> batch = make_batch(TaskConfig(d=4, P=8), 3, np.random.default_rng(1))
    >>> loss, grad = TorchModel(cfg, 4).loss_and_grad(theta, batch)
    >>> bool(np.isclose(loss, ref.loss_and_grad(theta, batch)[0])) and grad.shape == theta.shape
    True
    """

    def __init__(self, cfg: ModelConfig, d: int):
        self.cfg = cfg
        self.d = int(d)
        self.N = cfg.n(self.d)
        self.dtype = _DTYPES[cfg.dtype]
        self.shapes = param_shapes(cfg, self.d)
        self.n_params = int(sum(int(np.prod(s, dtype=np.int64)) for _, s in self.shapes))

    def unpack(self, theta: torch.Tensor) -> dict:
        """Views of the flat tensor ``theta`` as the named parameter groups."""
        out, off = {}, 0
        for name, shp in self.shapes:
            size = int(np.prod(shp, dtype=np.int64))
            out[name] = theta[off : off + size].reshape(shp)
            off += size
        return out

    def tensors(self, batch) -> tuple:
        """``(X, y, x_test, target)`` of a ``Batch`` as tensors of the model's dtype (no copy if possible)."""
        npdt = np.float64 if self.dtype == torch.float64 else np.float32
        return tuple(
            torch.from_numpy(np.ascontiguousarray(a, dtype=npdt))
            for a in (batch.X, batch.y, batch.x_test, batch.target)
        )

    def layer_outputs_t(self, theta: torch.Tensor, X, y, xt) -> torch.Tensor:
        """Per-layer predictors (B, L) as a differentiable tensor."""
        p = self.unpack(theta)
        if self.cfg.model == "linear":
            return linear_layer_outputs(p, self.cfg, X, y, xt)
        return softmax_layer_outputs(p, self.cfg, X, y, xt)

    def loss_t(self, theta: torch.Tensor, X, y, xt, target) -> torch.Tensor:
        """Mean squared error over the batch (a differentiable scalar tensor)."""
        yhat = self.layer_outputs_t(theta, X, y, xt).mean(dim=1)
        return ((yhat - target) ** 2).mean()

    def loss_and_grad(self, theta, batch) -> tuple[float, np.ndarray]:
        """Loss and its autograd gradient for a NumPy ``theta`` and a ``Batch``."""
        th = torch.tensor(np.asarray(theta), dtype=self.dtype, requires_grad=True)
        loss = self.loss_t(th, *self.tensors(batch))
        loss.backward()
        return float(loss.detach()), th.grad.numpy().copy()

    def layer_outputs(self, theta, batch) -> np.ndarray:
        """Per-layer predictors (B, L) as a NumPy array."""
        with torch.no_grad():
            th = torch.tensor(np.asarray(theta), dtype=self.dtype)
            return self.layer_outputs_t(th, *self.tensors(batch)[:3]).numpy()


class TorchTrainer:
    """One training step at a time: forward, autograd backward, ``torch.optim.Adam`` update.

    Parameters
    ----------
    model : TorchModel
    theta : ndarray
        Starting parameters (copied).
    lr : float
        Adam learning rate.

    Examples
    --------
    >>> import numpy as np
    >>> from depthscale.sims.config import ModelConfig, TaskConfig
    >>> from depthscale.sims.tasks import make_batch
    >>> tm = TorchModel(ModelConfig(model="linear", depth=2), 4)
    >>> tr = TorchTrainer(tm, np.zeros(tm.n_params) + 0.1)
    >>> loss = tr.step(*tm.tensors(make_batch(TaskConfig(d=4, P=8), 3, np.random.default_rng(0))))
    >>> loss >= 0
    True
    """

    def __init__(self, model: TorchModel, theta, lr: float = 1e-3):
        self.model = model
        self.theta = torch.nn.Parameter(torch.tensor(np.asarray(theta), dtype=model.dtype))
        self.opt = torch.optim.Adam([self.theta], lr=lr)

    def step(self, X, y, xt, target) -> float:
        self.opt.zero_grad(set_to_none=True)
        loss = self.model.loss_t(self.theta, X, y, xt, target)
        loss.backward()
        self.opt.step()
        return float(loss.detach())
