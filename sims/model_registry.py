"""One registry of whole models by name: the built-in ``softmax`` and ``linear`` and the models a user adds.

A model names what ``ModelConfig.model`` builds. The registry is a
:class:`~depthscale.sims.registry.Registry` (sims/registry.py: the one registry type of every
pluggable kind). The two built-ins are registered here, once, through the call that registers a
user's, and run on both engines (their numba kernels, and the JAX engine's own passes). A user's model runs on
the JAX engine only (``engine="jax"``) and is two JAX functions:

- ``init(key, cfg, d) -> params``: a pytree of arrays (a dict of arrays is enough) from a JAX
  PRNG key, the run's :class:`~depthscale.sims.config.ModelConfig` (``cfg.depth``, ``cfg.width``,
  ``cfg.init_scale``) and the input dimension ``d``; the key is derived from the run's seed as the
  built-ins' starting point is, so the same config and seed start at the same parameters;
- ``layer_outputs(params, X, y, x_test) -> f``: the per-layer predictions ``f`` ``(B, L)`` of a
  batch (``X (B, P, d)``, ``y (B, P)``, ``x_test (B, d)``), ``jax.numpy`` operations only; the
  prediction is ``f.mean(axis=1)`` and the loss its mean squared error, as for every model.

Optional: ``linear_in_labels=True`` (``yhat`` is linear in ``y``: the record's mode losses then come
from ``d yhat / d y`` by autograd) and ``attention(params, X, y, x_test) -> (B, L, P)`` (the test
token's weights per layer: the record's attention statistics). The JAX engine trains such a model
with the built-ins' loop, rules and measurement, and writes records of the same schema (fields that
need what the model does not give, such as query-key norms, are ``None``).

A user's model comes in two ways: ``depthscale.register_model("name", init=..., layer_outputs=...)``
from Python, or an entry point of the group ``depthscale.models`` in an installed package
(``name = "mypackage.models:MODEL"``, naming a :class:`Model` or an object with ``init`` and
``layer_outputs`` attributes), read on the first look-up of a name this process has not registered.
A line that cannot be used (its module fails to import, or it names something else) costs one
warning line on stderr and is left out (sims/plugins.py); the other models register, and only asking
for that name fails, saying why. An unknown name is an error everywhere (``ModelConfig``, ``--model``,
sweep grids) in one line.

>>> [m.name for m in BUILTIN_MODELS], get_model("linear").engines
(['linear', 'softmax'], ('numba', 'jax'))
>>> get_model("transformer")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ValueError: model='transformer': must be one of linear, softmax (or a model registered ...)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..theory._choices import MODELS
from ..theory._validate import bad_argument
from .attention_registry import ENGINES
from .engines import load_named
from .registry import Registry, check_engine

ENTRY_POINT_GROUP = "depthscale.models"


@dataclass(frozen=True)
class Model:
    """One model: its name, where it came from and, for a user's model, its JAX functions.

    Parameters
    ----------
    name : str
        Lower-case letters, digits, ``_ . -``, starting with a letter (at most 40 characters).
    init : callable or None
        ``init(key, cfg, d) -> params`` (a pytree of arrays); ``None`` for a built-in.
    layer_outputs : callable or None
        ``layer_outputs(params, X, y, x_test) -> f (B, L)``; ``None`` for a built-in.
    linear_in_labels : bool
        ``yhat`` is linear in the labels ``y`` (mode losses by autograd).
    attention : callable or None
        ``attention(params, X, y, x_test) -> (B, L, P)`` weights, or ``None`` (no attention statistics).
    source : str
        ``built-in``, ``python`` or ``entry point <value>``.
    host : str or None
        A built-in's numba model class as ``module:Class`` under ``depthscale.sims`` (:meth:`host_class`).
    spec : str or None
        A built-in's sizes and costs, light (``model_specs:Class``, :meth:`spec_class`).
    """

    name: str
    init: Callable[..., Any] | None = None
    layer_outputs: Callable[..., Any] | None = None
    linear_in_labels: bool = False
    attention: Callable[..., Any] | None = None
    source: str = "python"
    host: str | None = None
    spec: str | None = None

    def host_class(self) -> type:
        """The numba model class of a built-in (``ValueError`` for a user's model: JAX functions only).

        >>> get_model("linear").host_class().__name__
        'LinearAttention'
        """
        if self.host is None:
            bad_argument("model", self.name, "a built-in model (a user's model is JAX functions, no numba model)")
        return load_named(self.host)

    def spec_class(self) -> Any:  # a model class, loaded by name
        """The class whose ``check_options`` says which variants a built-in has (``ModelConfig``) and
        whose ``DEFAULT_RATE``, ``context_units``, ``layout_of`` and ``scratch_elems`` cost a run of
        this model (sims/budget.py, sims/memory.py): a built-in's own, and for a user's model (whose
        parameters are its own) the softmax model's of the same size.

        >>> get_model("linear").spec_class().DEFAULT_RATE > get_model("softmax").spec_class().DEFAULT_RATE
        True
        """
        return load_named(self.spec or USER_MODEL_COSTED_AS)

    @property
    def builtin(self) -> bool:
        """Whether the model is one of the package's own (with numba kernels).

        >>> get_model("softmax").builtin
        True
        """
        return self.source == "built-in"

    @property
    def engines(self) -> tuple[str, ...]:
        """The engines that can run it: a built-in runs on both, a user's model on JAX only."""
        return ENGINES if self.builtin else ("jax",)


def _model_of_entry_point(ep, obj) -> Model:
    """The model an entry point names (a ``Model`` or an object with ``init`` and ``layer_outputs``);
    ``ValueError`` saying why not."""
    init, outputs = getattr(obj, "init", None), getattr(obj, "layer_outputs", None)
    if not (callable(init) and callable(outputs)) or (isinstance(obj, Model) and obj.name != ep.name):
        raise ValueError(
            f"names a {type(obj).__name__}: must name a Model called {ep.name!r} or an object with init "
            "and layer_outputs JAX functions"
        )
    linear = bool(getattr(obj, "linear_in_labels", False))
    return _user_model(ep.name, init, outputs, linear, getattr(obj, "attention", None), f"entry point {ep.value}")


USER_MODEL_COSTED_AS = "model_specs:SoftmaxSpec"
REGISTRY = Registry[Model]("model", "model", ENTRY_POINT_GROUP, _model_of_entry_point, "register_model")
_BUILTINS = {  # name: (numba model class, its sizes and costs), in theory._choices.MODELS order
    "linear": ("linear_model:LinearAttention", "model_specs:LinearSpec"),
    "softmax": ("softmax_model:SoftmaxAttention", "model_specs:SoftmaxSpec"),
}
BUILTIN_MODELS = tuple(
    REGISTRY.register(
        name, Model(name, source="built-in", host=_BUILTINS[name][0], spec=_BUILTINS[name][1]), builtin=True
    )
    for name in MODELS
)


def register_model(
    name: str,
    *,
    init: Callable[..., Any],
    layer_outputs: Callable[..., Any],
    linear_in_labels: bool = False,
    attention: Callable[..., Any] | None = None,
) -> Model:
    """Register a user's JAX model as ``name`` (see the module docstring for the two functions).

    The model then names ``ModelConfig(model=name, engine="jax")``, ``--model name --engine jax``
    and sweep-grid values of this process. Registering the same name again replaces a user's model;
    a built-in name is refused.

    >>> m = register_model("mean-label", init=lambda key, cfg, d: {"w": [0.0]},
    ...                    layer_outputs=lambda p, X, y, xq: y.mean(axis=1, keepdims=True) + p["w"][0])
    >>> m.engines, get_model("mean-label") is m
    (('jax',), True)
    >>> unregister_model("mean-label")
    """
    return REGISTRY.register(name, _user_model(name, init, layer_outputs, linear_in_labels, attention, "python"))


def _user_model(name, init, layer_outputs, linear_in_labels, attention, source: str) -> Model:
    """A user's model, checked (``ValueError`` naming the argument; the name first)."""
    REGISTRY.check_name(name)
    for arg, fn in (("init", init), ("layer_outputs", layer_outputs)):
        if not callable(fn):
            bad_argument(arg, fn, "a JAX function (see depthscale.sims.model_registry)")
    if attention is not None and not callable(attention):
        bad_argument("attention", attention, "None or a JAX function params, X, y, x_test -> weights (B, L, P)")
    if not isinstance(linear_in_labels, bool):
        bad_argument("linear_in_labels", linear_in_labels, "True or False")
    return Model(name, init, layer_outputs, linear_in_labels, attention, source)


# the registry's own methods under this kind's public names (tests, notebooks, other modules)
unregister_model = REGISTRY.unregister  # a built-in model cannot be removed
reload_model_entry_points = REGISTRY.reload  # read the group again on the next look-up (a package installed since)
broken_model_plugins = REGISTRY.broken  # {entry point name: "name = 'value': reason"} of the lines left out


def get_model(name) -> Model:
    """The registered model ``name`` (``ValueError`` naming ``model`` and the registered names otherwise)."""
    return REGISTRY.get(name)


def model_names() -> tuple[str, ...]:
    """Every registered model's name: the built-ins first, then the users' in registration order.

    >>> model_names()[:2]
    ('linear', 'softmax')
    """
    return REGISTRY.names()


def check_model_engine(name: str, engine: str) -> Model:
    """The model ``name`` if ``engine`` can run it (a user's model has no numba kernels: JAX only).

    >>> check_model_engine("softmax", "numba").builtin
    True
    """
    return check_engine(REGISTRY, name, engine, lambda m: "a user's model is JAX functions, no numba kernels")
