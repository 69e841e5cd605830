"""One registry of attention maps by name: the built-in numba maps and the maps a user adds.

The registry is a :class:`~depthscale.sims.registry.Registry` (sims/registry.py: the one registry
type of every pluggable kind); this module holds what is particular to maps.

A map takes one layer's scores (the test token's ``z_i`` over the P context tokens) to its weights
``p_i``. Each is an :class:`AttentionMap` record: its ``name``, its numba kernel ``code`` (``None``
for a map with no numba kernel), whether its weights lie on the simplex (``normalised``: then
mixtures of its heads are reference floors, docs/reference-floors.md), its JAX function
(scores ``(..., P)`` to weights ``(..., P)``; ``None`` only for a built-in, whose JAX function the
JAX engine defines) and its learnable parameters (``params``: a name and an initial value each,
one copy per layer, trained with the model's on the JAX engine; none for the built-ins). The five
built-in maps are registered here, once, through the call that registers a user's; their kernel
codes are their places in this list (``sims/attention_maps.py`` takes its constants from it).

A user's map comes in two ways, and is then a valid ``ModelConfig(attention=...)``, ``--attention``
and sweep-grid value for the JAX engine (``engine="jax"``; it has no numba kernel):

- from Python, ``depthscale.register_attention("softmax1", fn)``, or with learnable per-layer
  parameters ``register_attention("learned-temp", fn, params={"log_temp": 0.0})`` and
  ``fn(z, log_temp=...)``;
- from an installed package, an entry point of the group ``depthscale.attention``
  (``softmax1 = "mypackage.maps:softmax1"``) naming the JAX function (or an ``AttentionMap``),
  read on the first look-up of a name this process has not registered. A line that cannot be used
  (its module fails to import, or it names something else) costs one warning line on stderr and is
  left out (sims/plugins.py); the other maps register, and only asking for that name fails, saying why.

An unknown name is an error everywhere (``ValueError`` naming ``attention`` and the registered
names), and so is a kernel code that names no built-in map.

>>> [m.code for m in BUILTIN_MAPS]
[0, 1, 2, 3, 4]
>>> get_attention("entmax15").normalised, get_attention("relu").normalised
(True, False)
>>> get_attention("softmax2")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ValueError: attention='softmax2': must be one of softmax, sparsemax, entmax15, sigmoid, relu (or a map registered ...)
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..theory._validate import bad_argument
from .engines import ENGINES
from .registry import Registry, check_engine

ENTRY_POINT_GROUP = "depthscale.attention"


@dataclass(frozen=True)
class AttentionMap:
    """One attention map: its name, numba kernel code, normalisation and JAX function.

    Parameters
    ----------
    name : str
        Lower-case letters, digits, ``_ . -``, starting with a letter (at most 40 characters).
    code : int or None
        The numba kernels' code (built-in maps only); ``None``: the map runs on the JAX engine only.
    normalised : bool
        The weights are non-negative and sum to one (a point of the simplex) for every scores.
    jax_fn : callable or None
        ``fn(z) -> p``, a JAX function (``jax.numpy`` operations, differentiable) from scores
        ``(..., P)`` to weights ``(..., P)`` along the last axis; ``None`` for a built-in map.
    source : str
        Where it was registered: ``built-in``, ``python`` or ``entry point <value>``.
    params : tuple of (str, float)
        The map's learnable parameters, ``(name, initial value)`` in order: each layer has its own
        copy, passed as ``fn(z, name=value)`` with the value shaped to broadcast against that
        layer's scores; the JAX engine appends them (``map.<name>``, one entry per layer) to the
        parameter vector and trains them with the rest. Empty for a map without parameters.
    """

    name: str
    code: int | None = None
    normalised: bool = False
    jax_fn: Callable[[Any], Any] | None = None
    source: str = "python"
    params: tuple[tuple[str, float], ...] = ()

    @property
    def param_names(self) -> tuple[str, ...]:
        """The names of the map's learnable parameters, in order.

        >>> get_attention("softmax").param_names
        ()
        """
        return tuple(name for name, _ in self.params)

    @property
    def engines(self) -> tuple[str, ...]:
        """The engines that can run this map: a built-in runs on both, a user's map on JAX only.

        >>> get_attention("sigmoid").engines
        ('numba', 'jax')
        """
        return ENGINES if self.code is not None else ("jax",)


def _map_of_entry_point(ep, obj) -> AttentionMap:
    """The map an entry point names (a JAX function or an ``AttentionMap``); ``ValueError`` saying why not."""
    where = f"entry point {ep.value}"
    if isinstance(obj, AttentionMap):
        if obj.name != ep.name or obj.code is not None or obj.jax_fn is None:
            raise ValueError(f"must be an AttentionMap named {ep.name!r} with a jax_fn and no numba code")
        return _user_map(obj.name, obj.jax_fn, obj.normalised, dict(obj.params), where)
    if callable(obj):
        normalised, params = bool(getattr(obj, "normalised", False)), getattr(obj, "params", None)
        return _user_map(ep.name, obj, normalised, params, where)
    raise ValueError(f"names a {type(obj).__name__}: must name a JAX function or an AttentionMap")


REGISTRY = Registry[AttentionMap]("attention", "map", ENTRY_POINT_GROUP, _map_of_entry_point, "register_attention")
BUILTIN_MAPS = tuple(
    REGISTRY.register(name, AttentionMap(name, code, normalised, None, "built-in"), builtin=True)
    for code, (name, normalised) in enumerate(
        (("softmax", True), ("sparsemax", True), ("entmax15", True), ("sigmoid", False), ("relu", False))
    )
)
BUILTIN_NAMES = REGISTRY.builtin_names


def register_attention(
    name: str, fn: Callable[..., Any], *, normalised: bool = False, params: dict[str, float] | None = None
) -> AttentionMap:
    """Register a JAX attention map ``fn`` (scores ``(..., P)`` to weights ``(..., P)``) as ``name``.

    The map then names a model's attention (``ModelConfig(attention=name, engine="jax")``), on the
    command line (``--attention name --engine jax``) and in sweep grids of this process; its
    reference floors are computed from ``fn`` (heads ``fn(kappa cos)``, at the parameters' initial
    values). ``normalised=True`` states that its weights lie on the simplex. ``params`` declares
    learnable per-layer parameters with their initial values (``{"log_temp": 0.0}``): ``fn`` is then
    called as ``fn(z, log_temp=t)`` with ``t`` broadcastable against ``z`` (each layer its own
    value), and the JAX engine trains them with the model's parameters. Registering the same name
    again replaces a user's map; a built-in name is refused.

    >>> import numpy as np
    >>> m = register_attention("half-uniform", lambda z: 0.5 * np.ones_like(z) / z.shape[-1])
    >>> m.engines, get_attention("half-uniform") is m
    (('jax',), True)
    >>> unregister_attention("half-uniform")
    >>> t = register_attention("scaled", lambda z, log_temp: np.exp(log_temp) * z, params={"log_temp": 0.0})
    >>> t.params
    (('log_temp', 0.0),)
    >>> unregister_attention("scaled")
    """
    return REGISTRY.register(name, _user_map(name, fn, normalised, params, "python"))


def _user_map(name, fn, normalised, params, source: str) -> AttentionMap:
    """A user's map, checked (``ValueError`` naming the argument; the name first)."""
    REGISTRY.check_name(name)
    if not callable(fn):
        bad_argument("fn", fn, "a JAX function from scores (..., P) to weights (..., P)")
    if not isinstance(normalised, bool):
        bad_argument("normalised", normalised, "True or False")
    return AttentionMap(name, None, normalised, fn, source, _check_params(params))


_PARAM = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,39}$")


def _check_params(params) -> tuple[tuple[str, float], ...]:
    """``params`` (a dict of names to initial values, or ``None``) as the record's tuple of pairs."""
    if params is None:
        return ()
    allowed = "a dict of parameter names (Python identifiers, <= 40 characters) to finite initial values"
    if not isinstance(params, dict):
        bad_argument("params", params, allowed)
    out = []
    for key, value in params.items():
        if not isinstance(key, str) or not _PARAM.match(key) or key in ("z", "self"):
            bad_argument("params", key, allowed + " (not 'z')")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            bad_argument(f"params[{key!r}]", value, "a finite real initial value")
        out.append((key, float(value)))
    return tuple(out)


# the registry's own methods under this kind's public names (tests, notebooks, other modules)
unregister_attention = REGISTRY.unregister  # a built-in map cannot be removed
reload_attention_entry_points = REGISTRY.reload  # read the group again on the next look-up (a package installed since)
broken_attention_plugins = REGISTRY.broken  # {entry point name: "name = 'value': reason"} of the lines left out


def get_attention(name) -> AttentionMap:
    """The registered map ``name`` (``ValueError`` naming ``attention`` and the registered names otherwise)."""
    return REGISTRY.get(name)


def attention_names() -> tuple[str, ...]:
    """Every registered map's name: the built-ins first, then the users' in registration order.

    >>> attention_names()[:5]
    ('softmax', 'sparsemax', 'entmax15', 'sigmoid', 'relu')
    """
    return REGISTRY.names()


def check_attention_engine(name: str, engine: str) -> AttentionMap:
    """The map ``name`` if ``engine`` can run it (a user's map has no numba kernel: JAX only).

    >>> check_attention_engine("relu", "numba").code
    4
    """
    return check_engine(REGISTRY, name, engine, _why_jax_only)


def _why_jax_only(entry: AttentionMap) -> str:
    why = "its learnable parameters train with autograd" if entry.params else "a user's map has a JAX function"
    return f"{why}, no numba kernel"


def attention_code(name: str) -> int:
    """The numba kernels' integer code of the map ``name`` (an error for a map without a kernel).

    >>> attention_code("entmax15")
    2
    """
    code = check_attention_engine(name, "numba").code
    assert code is not None  # a map the numba engine runs has a code
    return code


def map_of_code(code: int) -> AttentionMap:
    """The built-in map of a numba kernel code (``ValueError`` for a code that names none).

    >>> map_of_code(3).name
    'sigmoid'
    """
    if isinstance(code, bool) or not isinstance(code, int) or not 0 <= code < len(BUILTIN_MAPS):
        bad_argument("code", code, f"a built-in map's kernel code, 0 to {len(BUILTIN_MAPS) - 1}")
    return BUILTIN_MAPS[code]
