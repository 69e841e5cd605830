"""One constructor for every attention model, chosen by ``ModelConfig.model``."""

from __future__ import annotations

from .config import ModelConfig


def make_model(cfg: ModelConfig, d: int):
    """Build the model of ``cfg`` for inputs of dimension ``d`` (see docs/engine-contract.md).

    >>> from depthscale.sims.config import ModelConfig
    >>> make_model(ModelConfig(model="softmax", depth=2), 4).n_params > 0
    True
    ``cfg.engine == "jax"`` gives the JAX engine's model (``sims/jax_engine.py``; needs JAX).
    """
    if cfg.engine == "jax":
        from .jax_engine import JaxModel

        return JaxModel(cfg, d)
    if cfg.model == "linear":
        from .linear_model import LinearAttention

        return LinearAttention(cfg, d)
    from .softmax_model import SoftmaxAttention

    return SoftmaxAttention(cfg, d)
