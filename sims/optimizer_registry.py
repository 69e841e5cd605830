"""One registry of optimisers by name: the built-in ``adam`` and ``sgd`` and the optimisers a user adds.

An optimiser moves the flat parameter vector along a gradient, at the learning rate the schedule
gives each step (``TrainConfig.lr``, ``schedule``, ``warmup``); the stopping and divergence rules
are the trainer's, the same for every optimiser. Each is an :class:`Optimizer` record:

- ``make(n, hyper, dtype)``: the numba engine's optimiser, an object with ``step(theta, grad, lr)``
  (updates ``theta`` in place) and ``finite()`` (whether its state is finite: a state that has
  overflowed freezes a run without a NaN, which the trainer counts as divergence);
- ``optax(hyper)``: the JAX engine's, an optax ``GradientTransformation`` whose update the engine
  applies as ``theta - lr * update`` (``None``: the optimiser runs on numba only).

``hyper`` is a :class:`Hyper` (``beta1``, ``beta2``, ``eps`` of the run's ``TrainConfig``): what an
optimiser may read besides the learning rate, so a compiled JAX program serves every learning rate.

A user's optimiser comes as a user's map or task does: ``depthscale.register_optimizer(name,
make=..., optax=...)`` from Python, or an entry point of the group ``depthscale.optimizers`` naming an
``Optimizer`` or an object with ``make`` (and optionally ``optax``). It is then a valid
``TrainConfig(optimizer=...)`` and sweep-grid value. A line that cannot be used costs one warning
line and is left out (sims/registry.py).

>>> [o.name for o in BUILTIN_OPTIMIZERS], get_optimizer("sgd").engines
(['adam', 'sgd'], ('numba', 'jax'))
>>> opt = get_optimizer("sgd").make(2, Hyper(0.9, 0.999, 1e-8), np.float64)
>>> theta = np.array([1.0, 2.0]); opt.step(theta, np.array([0.5, -1.0]), 0.1); theta
array([0.95, 2.1 ])
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from ..theory._validate import bad_argument
from .engines import ENGINES
from .registry import Registry, check_engine

ENTRY_POINT_GROUP = "depthscale.optimizers"


class Hyper(NamedTuple):
    """What an optimiser reads of its run's ``TrainConfig`` besides the learning rate (hashable: a
    static argument of the JAX engine's compiled blocks)."""

    beta1: float
    beta2: float
    eps: float

    @classmethod
    def of(cls, cfg: Any) -> Hyper:
        """The hyper-parameters of a ``TrainConfig``."""
        return cls(float(cfg.beta1), float(cfg.beta2), float(cfg.eps))


class Adam:
    """Adam on a flat parameter vector (bias-corrected, in place)."""

    def __init__(self, n: int, hyper: Hyper, dtype):
        self.m = np.zeros(n, dtype=dtype)
        self.v = np.zeros(n, dtype=dtype)
        self.t = 0
        self.b1, self.b2, self.eps = hyper.beta1, hyper.beta2, hyper.eps

    def finite(self) -> bool:
        """Whether the moments are finite (an overflowed ``v`` freezes the parameters without a NaN)."""
        return bool(np.all(np.isfinite(self.m)) and np.all(np.isfinite(self.v)))

    def step(self, theta: np.ndarray, grad: np.ndarray, lr: float) -> None:
        self.t += 1
        self.m *= self.b1
        self.m += (1 - self.b1) * grad
        self.v *= self.b2
        self.v += (1 - self.b2) * grad * grad
        # the textbook (and PyTorch) form: eps is added to the bias-corrected sqrt(v)
        denom = np.sqrt(self.v) / math.sqrt(1 - self.b2**self.t) + self.eps
        theta -= (lr / (1 - self.b1**self.t)) * self.m / denom


class SGD:
    """Plain gradient descent: ``theta -= lr * grad`` (no state)."""

    def __init__(self, n: int, hyper: Hyper, dtype):
        pass

    def finite(self) -> bool:
        return True

    def step(self, theta: np.ndarray, grad: np.ndarray, lr: float) -> None:
        theta -= lr * grad


def _adam_optax(hyper: Hyper):
    import optax

    return optax.scale_by_adam(b1=hyper.beta1, b2=hyper.beta2, eps=hyper.eps)


def _sgd_optax(hyper: Hyper):
    import optax

    return optax.identity()


@dataclass(frozen=True)
class Optimizer:
    """One optimiser: its name, the numba engine's ``make`` and the JAX engine's ``optax`` (see the module docstring).

    Parameters
    ----------
    name : str
        Lower-case letters, digits, ``_ . -``, starting with a letter (at most 40 characters).
    make : callable
        ``make(n, hyper, dtype)``: an object with ``step(theta, grad, lr)`` and ``finite()``.
    optax : callable or None
        ``optax(hyper)``: an optax ``GradientTransformation`` (its update is scaled by ``-lr``);
        ``None`` for an optimiser that runs on the numba engine only.
    source : str
        ``built-in``, ``python`` or ``entry point <value>``.
    """

    name: str
    make: Callable[..., Any]
    optax: Callable[..., Any] | None = None
    source: str = "python"

    @property
    def engines(self) -> tuple[str, ...]:
        """The engines that can train with it: both with an optax transformation, else numba."""
        return ENGINES if self.optax is not None else ("numba",)


def _user_optimizer(name, make, optax, source: str) -> Optimizer:
    """A user's optimiser, checked (``ValueError`` naming the argument; the name first)."""
    REGISTRY.check_name(name)
    if not callable(make):
        bad_argument("make", make, "a function n, hyper, dtype -> an object with step(theta, grad, lr) and finite()")
    if optax is not None and not callable(optax):
        bad_argument("optax", optax, "None or a function hyper -> an optax GradientTransformation")
    return Optimizer(name, make, optax, source)


def _optimizer_of_entry_point(ep, obj) -> Optimizer:
    """The optimiser an entry point names (an ``Optimizer`` or an object with ``make``); ``ValueError`` saying why not."""
    make = getattr(obj, "make", None)
    if not callable(make) or (isinstance(obj, Optimizer) and obj.name != ep.name):
        raise ValueError(
            f"names a {type(obj).__name__}: must name an Optimizer called {ep.name!r} or an object with a make function"
        )
    return _user_optimizer(ep.name, make, getattr(obj, "optax", None), f"entry point {ep.value}")


REGISTRY = Registry[Optimizer](
    "optimizer", "optimizer", ENTRY_POINT_GROUP, _optimizer_of_entry_point, "register_optimizer"
)
BUILTIN_OPTIMIZERS = (
    REGISTRY.register("adam", Optimizer("adam", Adam, _adam_optax, "built-in"), builtin=True),
    REGISTRY.register("sgd", Optimizer("sgd", SGD, _sgd_optax, "built-in"), builtin=True),
)


def register_optimizer(name: str, *, make: Callable[..., Any], optax: Callable[..., Any] | None = None) -> Optimizer:
    """Register a user's optimiser as ``name`` (see the module docstring for ``make`` and ``optax``).

    >>> class Halved:  # gradient descent at half the learning rate
    ...     def __init__(self, n, hyper, dtype): pass
    ...     def finite(self): return True
    ...     def step(self, theta, grad, lr): theta -= 0.5 * lr * grad
    >>> register_optimizer("halved", make=Halved).engines
    ('numba',)
    >>> unregister_optimizer("halved")
    """
    return REGISTRY.register(name, _user_optimizer(name, make, optax, "python"))


unregister_optimizer = REGISTRY.unregister  # a built-in optimiser cannot be removed
reload_optimizer_entry_points = REGISTRY.reload
broken_optimizer_plugins = REGISTRY.broken


def get_optimizer(name) -> Optimizer:
    """The registered optimiser ``name`` (``ValueError`` naming ``optimizer`` and the registered names otherwise)."""
    return REGISTRY.get(name)


def optimizer_names() -> tuple[str, ...]:
    """Every registered optimiser's name: the built-ins first."""
    return REGISTRY.names()


def check_optimizer_engine(name: str, engine: str) -> Optimizer:
    """The optimiser ``name`` if ``engine`` can train with it (one without ``optax``: numba only)."""
    return check_engine(REGISTRY, name, engine, lambda o: "it has no optax transformation")


__all__ = [
    "Adam",
    "BUILTIN_OPTIMIZERS",
    "Hyper",
    "Optimizer",
    "SGD",
    "broken_optimizer_plugins",
    "check_optimizer_engine",
    "get_optimizer",
    "optimizer_names",
    "register_optimizer",
    "reload_optimizer_entry_points",
    "unregister_optimizer",
]
