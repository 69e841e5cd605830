"""What each built-in model is from its config alone: the variants it has, its parameter blocks,
the arithmetic of a training step and the scratch a step keeps, without its kernels.

The cost model (sims/budget.py) and the memory estimate (sims/memory.py) read these before any run,
and a command refusing a bad size must not load numba, so they live here, light; each model class
(``SoftmaxAttention``, ``LinearAttention``) inherits its own (``Model.spec_class``,
sims/model_registry.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .parameters import ParamLayout, qk_shapes, value_block

if TYPE_CHECKING:  # sims/config.py asks these classes to check a ModelConfig
    from .config import ModelConfig


def _refuse(name: str, value, needs: str) -> None:
    raise ValueError(f"{name}={value!r}: needs {needs}")


_DEFAULT_INIT = "model='softmax' and the default init_scale=0.3 (the framework init sets every scale itself)"
_JACOBI = "model='linear' with per-layer query-key maps (qk factorised, merged or temperature)"
_MAPS = (
    "model='softmax' with two streams and no context update (the other maps are implemented for the base layer only)"
)
_ENSEMBLE = "model='softmax' with the base layer (shared value, no context update)"


class SoftmaxSpec:
    """The softmax attention model's variants, sizes and costs (sims/softmax_model.py)."""

    @staticmethod
    def check_options(cfg: ModelConfig) -> None:
        """Refuse (``ValueError`` naming the option) a variant softmax attention does not have."""
        if cfg.init == "default" and cfg.init_scale != 0.3:
            _refuse("init", cfg.init, _DEFAULT_INIT)
        if cfg.init == "jacobi":
            _refuse("init", cfg.init, _JACOBI)
        if cfg.attention != "softmax" and (cfg.context_update or cfg.stream != "two"):
            _refuse("attention", cfg.attention, _MAPS)
        if cfg.ensemble and (cfg.context_update or cfg.value != "shared"):
            _refuse("ensemble", cfg.ensemble, _ENSEMBLE)

    # what a run costs, from its config alone: the cost model's default rate (seconds per unit on one
    # busy core; measured about 4.5e-11) and units (sims/budget.py), and the memory estimate's
    # parameter blocks and scratch (sims/memory.py)
    DEFAULT_RATE = 6e-11

    @staticmethod
    def layout_of(cfg: ModelConfig, d: int) -> ParamLayout:
        """The parameter blocks for inputs of dimension ``d``, in the order they sit in ``theta``
        (stored runs depend on it), without building the model.

        >>> from depthscale.sims.config import ModelConfig
        >>> SoftmaxSpec.layout_of(ModelConfig(depth=2, qk="temperature", context_update=True), 3).names()
        ['W_x', 'W_y', 'kappa', 'W_v', 'W_o', 'm']
        """
        N = cfg.n(d)
        tail = [("m", ())] if cfg.context_update else []  # the context update's mixing scalar
        qk = qk_shapes(cfg.qk, cfg.depth, N)
        return ParamLayout([("W_x", (N, d)), ("W_y", (N,)), *qk, value_block(cfg, N), ("W_o", (N,)), *tail])

    @staticmethod
    def context_units(cfg: ModelConfig, d: int, P: int) -> float:
        """Work units of one training context (the cost model's count of a step's arithmetic)."""
        N, L = cfg.n(d), cfg.depth
        moved = 2 * P * (L - 1) / 5 if cfg.context_update else 0  # the context tokens' own updates
        return float(P * N * d * (19 + L + moved))

    @staticmethod
    def scratch_elems(cfg: ModelConfig, d: int, P: int, batch: int, engine: str) -> float:
        """Array elements a step keeps beyond parameters and data: ``ctx_pass``'s context attention of
        one chunk with the context update; on JAX what autograd keeps (the normalised tokens
        ``(B,P,N)``, three ``(B,L,P)`` score-sized arrays and ``U (B,L,N)``)."""
        N, L = cfg.n(d), cfg.depth
        out = (max(L - 1, 1) * (P * P + 2 * P * N) + 2 * L * P * N) if cfg.context_update else 0
        return float(out + (batch * (P * N + 3 * L * P + L * N) if engine == "jax" else 0))


class LinearSpec:
    """The linear attention model's variants, sizes and costs (sims/linear_model.py)."""

    @staticmethod
    def check_options(cfg: ModelConfig) -> None:
        """Refuse (``ValueError`` naming the option) a variant linear attention does not have."""
        if cfg.init == "default":
            _refuse("init", cfg.init, _DEFAULT_INIT)
        if cfg.init == "jacobi" and cfg.qk == "tied":
            _refuse("init", cfg.init, _JACOBI)
        if cfg.attention != "softmax":
            _refuse("attention", cfg.attention, _MAPS)
        if cfg.ensemble:
            _refuse("ensemble", cfg.ensemble, _ENSEMBLE)

    # what a run costs, from its config alone (see SoftmaxSpec): seconds per unit on one busy
    # core (measured about 1.2e-10 at d = 32), units, parameter blocks and scratch
    DEFAULT_RATE = 2e-10

    @staticmethod
    def layout_of(cfg: ModelConfig, d: int) -> ParamLayout:
        """The parameter blocks for inputs of dimension ``d``, in the order they sit in ``theta``.

        >>> from depthscale.sims.config import ModelConfig
        >>> LinearSpec.layout_of(ModelConfig(model="linear", depth=2, qk="temperature"), 3).names()
        ['W_x', 'W_y', 'W_v', 'W_o', 'kappa']
        """
        N = cfg.n(d)
        return ParamLayout(
            [("W_x", (N, d)), ("W_y", (N,)), value_block(cfg, N), ("W_o", (N,)), *qk_shapes(cfg.qk, cfg.depth, N)]
        )

    @staticmethod
    def context_units(cfg: ModelConfig, d: int, P: int) -> float:
        """Work units of one training context (the cost model's count of a step's arithmetic)."""
        return float(d * d * (P + 8 * cfg.n(d) * cfg.depth))

    @staticmethod
    def scratch_elems(cfg: ModelConfig, d: int, P: int, batch: int, engine: str) -> float:
        """Array elements a step keeps beyond parameters and data: on JAX ``X^T X (B,d,d)`` and two
        ``(L,B,N,d)`` layer states; none on numba."""
        return float(batch * (d * d + 2 * cfg.depth * cfg.n(d) * d) if engine == "jax" else 0)


__all__ = ["SoftmaxSpec", "LinearSpec"]
