"""The engines that compute a model, as records with their behaviour: ``numba`` and ``jax``.

An engine builds the model of a ``ModelConfig`` (the interface of docs/engine-contract.md) and
trains the depths of one lockstep group on one stream of contexts, one ``TrainResult`` per model.
``ModelConfig.engine`` names one; the code that builds, trains or checks a run asks its
:class:`Engine` record (``get_engine``) instead of branching on the name. Maps, models, tasks,
losses and optimisers say which engines run them (their records' ``engines``), so the engines are
the package's own: there is no door for a user's engine.

>>> [e.name for e in BUILTIN_ENGINES], get_engine("jax").snapshots
(['numba', 'jax'], False)
>>> get_engine("torch")
Traceback (most recent call last):
...
ValueError: engine='torch': must be one of numba, jax
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass
from typing import Any

from ..theory._validate import bad_argument

ENGINES = ("numba", "jax")  # the first is the default (ModelConfig.engine)


def load_named(where: str) -> Any:
    """The object ``module:name`` under ``depthscale.sims``, imported on first use (engines, model classes)."""
    module, _, name = where.partition(":")
    return getattr(importlib.import_module(f"depthscale.sims.{module}"), name)


@dataclass(frozen=True)
class Engine:
    """One engine: its name, where its model builder and lockstep trainer live (``module:function``
    under ``depthscale.sims``, imported on first use), the modules it needs installed, whether its
    trainer saves resumable snapshots, the install hint for a missing module, and whether it has the
    base softmax layer alone (two streams, no context update, no ensemble)."""

    name: str
    model: str
    trainer: str
    needs: tuple[str, ...] = ()
    snapshots: bool = False
    install: str = ""
    base_layer_only: bool = False  # two streams, no context update, no ensemble

    def check_available(self) -> Engine:
        """The engine, if the modules it needs are installed (``ValueError`` naming ``engine`` otherwise)."""
        if any(importlib.util.find_spec(m) is None for m in self.needs):
            raise ValueError(f"engine={self.name!r}: must have {' and '.join(self.needs)} installed ({self.install})")
        return self

    def make_model(self, cfg, d: int):
        """The model of ``cfg`` for inputs of dimension ``d`` on this engine."""
        return load_named(self.model)(cfg, d)

    def train_lockstep(self, models, task, cfg, seed: int, **options) -> list:
        """Train ``models`` (``(model, ModelConfig)`` pairs, one lockstep group) on one stream of
        contexts; ``options``: ``progress``, ``prefetch``, ``measure`` and, where ``snapshots``, ``snapshot``."""
        return load_named(self.trainer)(models, task, cfg, seed, **options)


BUILTIN_ENGINES = (
    Engine("numba", "models:host_model", "training:train_lockstep", snapshots=True),
    Engine(
        "jax",
        "jax_engine:JaxModel",
        "jax_engine:train_lockstep",
        ("jax", "optax"),
        install="pip install 'depthscale[jax]'",
        base_layer_only=True,
    ),
)
_BY_NAME = {e.name: e for e in BUILTIN_ENGINES}


def get_engine(name: Any) -> Engine:
    """The engine ``name`` (``ValueError`` naming ``engine`` and the engines otherwise)."""
    if not isinstance(name, str) or name not in _BY_NAME:
        bad_argument("engine", name, f"one of {', '.join(ENGINES)}")
    return _BY_NAME[name]


__all__ = ["ENGINES", "BUILTIN_ENGINES", "Engine", "get_engine"]
