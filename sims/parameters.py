"""Parameters shared by both attention models: the flat-vector layout and the query-key maps.

Both models keep their parameters in one flat vector ``theta`` (what Adam updates) and view it as
named blocks. The query-key block depends on ``ModelConfig.qk``, and so do the effective maps
``M_l`` (score of a token pair ``h_query^T M_l h_key``) and the chain rule from ``dM_l`` back to
the parameters; both are defined here once.
"""

from __future__ import annotations

import numpy as np


class ParamLayout:
    """Named blocks of a flat parameter vector, in the order given.

    >>> lay = ParamLayout([("a", (2, 3)), ("b", ())])
    >>> lay.n_params, lay.names(), lay.unpack(np.arange(7.0))["b"].item()
    (7, ['a', 'b'], 6.0)
    """

    def __init__(self, shapes):
        self.shapes = list(shapes)
        self.slices = {}
        off = 0
        for name, shp in self.shapes:
            size = int(np.prod(shp, dtype=np.int64))
            self.slices[name] = (off, off + size, shp)
            off += size
        self.n_params = off

    def names(self) -> list[str]:
        return [name for name, _ in self.shapes]

    def unpack(self, theta: np.ndarray) -> dict:
        """Views of ``theta`` (1-d, length ``n_params``) shaped as the blocks."""
        theta = np.asarray(theta)
        if theta.ndim != 1 or theta.shape[0] != self.n_params:
            raise ValueError(f"theta.shape={theta.shape}: must be ({self.n_params},)")
        return {name: theta[a:b].reshape(shp) for name, (a, b, shp) in self.slices.items()}


def value_block(cfg, N: int) -> tuple:
    """The value block of ``ModelConfig.value``: one ``(N, N)`` map shared by the layers, or one per layer."""
    return ("W_v", (N, N) if cfg.value == "shared" else (cfg.depth, N, N))


def qk_shapes(kind: str, L: int, N: int) -> list:
    """The query-key blocks of ``ModelConfig.qk == kind`` for depth ``L`` and width ``N``."""
    shapes: dict[str, list] = {
        "factorised": [("W_q", (L, N, N)), ("W_k", (L, N, N))],
        "merged": [("B", (L, N, N))],
        "tied": [("W_q", (N, N)), ("W_k", (N, N))],
        "temperature": [("kappa", (L,))],
    }
    return shapes[kind]


def qk_matrices(kind: str, p: dict, L: int, N: int) -> np.ndarray:
    """Effective query-key matrices ``M_l`` (L, N, N), C-contiguous.

    >>> p = {"kappa": np.array([1.0, -2.0])}
    >>> qk_matrices("temperature", p, 2, 3)[1].diagonal().tolist()
    [-2.0, -2.0, -2.0]
    """
    if kind == "factorised":
        M = np.matmul(p["W_q"].transpose(0, 2, 1), p["W_k"])
    elif kind == "merged":
        M = p["B"]
    elif kind == "tied":
        M = np.broadcast_to(p["W_q"].T @ p["W_k"], (L, N, N))
    else:
        M = p["kappa"][:, None, None] * np.eye(N, dtype=p["kappa"].dtype)
    return np.ascontiguousarray(M)


def qk_backward(kind: str, p: dict, dM: np.ndarray, g: dict) -> None:
    """Chain rule from ``dM_l`` (L, N, N) to the query-key parameters, written into the views ``g``."""
    if kind == "factorised":
        g["W_q"][...] = np.matmul(p["W_k"], dM.transpose(0, 2, 1))
        g["W_k"][...] = np.matmul(p["W_q"], dM)
    elif kind == "merged":
        g["B"][...] = dM
    elif kind == "tied":
        dMs = dM.sum(axis=0)
        g["W_q"][...] = p["W_k"] @ dMs.T
        g["W_k"][...] = p["W_q"] @ dMs
    else:
        g["kappa"][...] = np.trace(dM, axis1=1, axis2=2)


def input_qk_maps(kind: str, p: dict, L: int, N: int) -> np.ndarray:
    """Each layer's query-key map on the inputs, ``W_x^T M_l W_x`` (L, d, d), float64.

    The score of a token pair is ``x_query^T (W_x^T M_l W_x) x_key`` (up to the RMS norms of the
    softmax model, which every layer shares), so these are the maps to compare across layers.
    """
    q = {k: np.asarray(v, dtype=np.float64) for k, v in p.items()}
    Wx = q["W_x"]
    return Wx.T @ qk_matrices(kind, q, L, N) @ Wx


def mean_pairwise_cosine(maps: np.ndarray) -> float | None:
    """Mean cosine similarity of ``vec(A_l)`` over the pairs l < m; None for fewer than two maps.

    >>> A = np.stack([np.eye(2), 2 * np.eye(2), -np.eye(2)])
    >>> round(mean_pairwise_cosine(A), 12)  # pairs: +1, -1, -1
    -0.333333333333
    """
    L = maps.shape[0]
    if L < 2:
        return None
    v = maps.reshape(L, -1)
    norms = np.linalg.norm(v, axis=1)
    u = v / np.where(norms > 0, norms, 1.0)[:, None]
    G = u @ u.T
    return float((G.sum() - np.trace(G)) / (L * (L - 1)))
