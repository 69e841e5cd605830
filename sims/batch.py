"""The batch of contexts every model consumes (produced by ``depthscale.sims.tasks``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Batch:
    """B contexts of one task, in the input (not eigen-) basis.

    Attributes
    ----------
    X : (B, P, d) context inputs x_1..x_P.
    y : (B, P) context labels y_i = beta^T x_i.
    x_test : (B, d) query input.
    target : (B,) the target y*.
    t : (B, d) the input combination of the target, y* = beta^T t (x_j, x_test or the top-k mean).
    beta : (B, d) teacher vectors.
    O : (B, d, d) the Haar rotation of each context (columns are eigenvectors of Sigma and Omega).
    sel : (B, k) indices of the context tokens that define the target (j for easy-exact, S_k for
          top-k; empty (B, 0) for easy-fresh).
    """

    X: np.ndarray
    y: np.ndarray
    x_test: np.ndarray
    target: np.ndarray
    t: np.ndarray
    beta: np.ndarray
    O: np.ndarray
    sel: np.ndarray

    def __len__(self) -> int:
        return self.X.shape[0]

    def slice(self, start: int, stop: int) -> Batch:
        return Batch(*(getattr(self, f)[start:stop] for f in ("X", "y", "x_test", "target", "t", "beta", "O", "sel")))
