"""One registry of training losses by name: the built-in ``mse`` and the losses a user adds.

A loss is what training minimises: the mean over a batch of ``per_context(yhat, target)``, the
per-context loss of the predictions ``yhat`` (B,) against the targets (B,). Only training changes:
every record's ``R_L``, ``A_L``, ``C_L``, floors and verdicts stay squared errors on the evaluation
contexts, the quantities the theory speaks about, whatever loss trained the run (its ``train_curve``
is in the training loss's units).

The built-in ``mse``, ``(yhat - target)^2``, runs on both engines (the numba kernels hold its
gradient). A user's loss is a ``jax.numpy`` function, differentiated by the JAX engine, so it trains
there only (``engine="jax"``): ``depthscale.register_loss(name, per_context=...)`` from Python, or an
entry point of the group ``depthscale.losses`` naming a :class:`Loss` or an object with a
``per_context`` function. A line that cannot be used costs one warning line and is left out
(sims/registry.py).

>>> get_loss("mse").engines, loss_names()[:1]
(('numba', 'jax'), ('mse',))
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..theory._validate import bad_argument
from .engines import ENGINES
from .registry import Registry, check_engine

ENTRY_POINT_GROUP = "depthscale.losses"


@dataclass(frozen=True)
class Loss:
    """One training loss: its name, its per-context function and where it came from.

    Parameters
    ----------
    name : str
        Lower-case letters, digits, ``_ . -``, starting with a letter (at most 40 characters).
    per_context : callable
        ``per_context(yhat, target) -> (B,)`` in ``jax.numpy`` operations (also NumPy for ``mse``).
    source : str
        ``built-in``, ``python`` or ``entry point <value>``.
    """

    name: str
    per_context: Callable[..., Any]
    source: str = "python"

    @property
    def engines(self) -> tuple[str, ...]:
        """The engines that can train with it: ``mse`` on both, a user's loss on JAX (autograd) only."""
        return ENGINES if self.source == "built-in" else ("jax",)


def _squared_error(yhat, target):
    return (yhat - target) ** 2


def _user_loss(name, per_context, source: str) -> Loss:
    """A user's loss, checked (``ValueError`` naming the argument; the name first)."""
    REGISTRY.check_name(name)
    if not callable(per_context):
        bad_argument("per_context", per_context, "a JAX function yhat (B,), target (B,) -> loss (B,)")
    return Loss(name, per_context, source)


def _loss_of_entry_point(ep, obj) -> Loss:
    """The loss an entry point names (a ``Loss`` or an object with ``per_context``); ``ValueError`` saying why not."""
    fn = getattr(obj, "per_context", None)
    if not callable(fn) or (isinstance(obj, Loss) and obj.name != ep.name):
        raise ValueError(
            f"names a {type(obj).__name__}: must name a Loss called {ep.name!r} or an object with a per_context function"
        )
    return _user_loss(ep.name, fn, f"entry point {ep.value}")


REGISTRY = Registry[Loss]("loss", "loss", ENTRY_POINT_GROUP, _loss_of_entry_point, "register_loss")
BUILTIN_LOSSES = (REGISTRY.register("mse", Loss("mse", _squared_error, "built-in"), builtin=True),)


def register_loss(name: str, *, per_context: Callable[..., Any]) -> Loss:
    """Register a user's training loss as ``name``: ``per_context(yhat, target) -> (B,)`` in ``jax.numpy``.

    >>> register_loss("half-mse", per_context=lambda yhat, t: 0.5 * (yhat - t) ** 2).engines
    ('jax',)
    >>> unregister_loss("half-mse")
    """
    return REGISTRY.register(name, _user_loss(name, per_context, "python"))


unregister_loss = REGISTRY.unregister  # the built-in mse cannot be removed
reload_loss_entry_points = REGISTRY.reload
broken_loss_plugins = REGISTRY.broken


def get_loss(name) -> Loss:
    """The registered loss ``name`` (``ValueError`` naming ``loss`` and the registered names otherwise)."""
    return REGISTRY.get(name)


def loss_names() -> tuple[str, ...]:
    """Every registered loss's name: the built-in first."""
    return REGISTRY.names()


def check_loss_engine(name: str, engine: str) -> Loss:
    """The loss ``name`` if ``engine`` can train with it (a user's loss: JAX only)."""
    return check_engine(REGISTRY, name, engine, lambda loss: "a user's loss is a JAX function, differentiated by JAX")


__all__ = [
    "BUILTIN_LOSSES",
    "Loss",
    "broken_loss_plugins",
    "check_loss_engine",
    "get_loss",
    "loss_names",
    "register_loss",
    "reload_loss_entry_points",
    "unregister_loss",
]
