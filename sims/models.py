"""One constructor for every attention model, chosen by ``ModelConfig.model`` and ``ModelConfig.engine``,
and the interface every model keeps (docs/engine-contract.md) as a ``Protocol``."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

from .config import ModelConfig
from .engines import get_engine
from .model_registry import get_model


@runtime_checkable
class AttentionModel(Protocol):
    """The engine contract (docs/engine-contract.md): what training, measurement and the reference
    floors ask of a model. The numba models (``SoftmaxAttention``, ``LinearAttention``) and the JAX
    engine's ``JaxModel`` keep it; parameters are one flat vector ``theta`` of ``n_params`` entries.

    >>> isinstance(make_model(ModelConfig(depth=2), 4), AttentionModel)
    True
    """

    n_params: int

    def names(self) -> list[str]:
        """The parameter blocks, in their order in ``theta``."""
        ...

    def unpack(self, theta: np.ndarray) -> dict:
        """Views of ``theta`` shaped as the parameter blocks."""
        ...

    def init(self, rng: np.random.Generator) -> np.ndarray:
        """A starting point, in the model's dtype."""
        ...

    def loss_and_grad(self, theta: np.ndarray, batch: Any) -> tuple[float, np.ndarray]:
        """Mean squared error over the batch and its exact gradient."""
        ...

    def layer_outputs(self, theta: np.ndarray, batch: Any) -> np.ndarray:
        """Per-layer predictors ``f`` (B, L) with ``yhat = f.mean(axis=1)``."""
        ...

    def predict(self, theta: np.ndarray, batch: Any) -> np.ndarray:
        """Predictions ``yhat`` (B,)."""
        ...

    def label_weights(self, theta: np.ndarray, batch: Any) -> Any:
        """``c = d yhat / d y`` (B, P), or None for a model not linear in the labels."""
        ...

    def attention(self, theta: np.ndarray, batch: Any) -> np.ndarray:
        """The test token's weights per layer (B, L, P) (raw scores for linear attention)."""
        ...

    def qk_norms(self, theta: np.ndarray) -> np.ndarray:
        """Frobenius norm of each layer's effective query-key matrix (L,)."""
        ...


def make_model(cfg: ModelConfig, d: int):
    """Build the model of ``cfg`` for inputs of dimension ``d`` (see docs/engine-contract.md).

    The engine ``cfg.engine`` builds it (sims/engines.py): numba the model's own class, JAX
    ``sims/jax_engine.JaxModel`` (needs JAX).

    >>> from depthscale.sims.config import ModelConfig
    >>> make_model(ModelConfig(model="softmax", depth=2), 4).n_params > 0
    True
    """
    return get_engine(cfg.engine).make_model(cfg, d)


def host_model(cfg: ModelConfig, d: int):
    """The numba engine's model of ``cfg``: the built-in model's own class (sims/model_registry.py)."""
    return get_model(cfg.model).host_class()(cfg, d)
