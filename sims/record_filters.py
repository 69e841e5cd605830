"""The filters of :meth:`Store.records <depthscale.sims.store.Store.records>`, checked before any
record is read: a misspelt path or value is an error naming it, never an empty result.

A model or an attention map is checked against its registry (sims/model_registry.py,
sims/attention_registry.py), so every name ``ModelConfig`` accepts, a user's own included, is a
filter value too; so is a name the store's runs hold (``stored``: a map whose plugin this process
lacks, or a model trained elsewhere, ``from_layer_outputs(..., model=...)``)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable, Mapping

from ..theory._validate import bad_argument, check_choice
from . import config as _config
from .attention_registry import ENTRY_POINT_GROUP as _MAP_GROUP
from .attention_registry import attention_names, broken_attention_plugins
from .model_registry import ENTRY_POINT_GROUP as _MODEL_GROUP
from .model_registry import broken_model_plugins, model_names

# config sections and their fields, from the config classes themselves
SECTIONS = {"task": _config.TaskConfig, "model": _config.ModelConfig, "train": _config.TrainConfig}
# the fields whose values come from a fixed list
CHOICES = {
    "task.task": _config.TASKS,
    "model.qk": _config.QK_KINDS,
    "model.value": _config.VALUE_KINDS,
    "model.stream": _config.STREAMS,
    "model.dtype": _config.DTYPES,
    "model.init": _config.INITS,
    "train.schedule": _config.SCHEDULES,
}
# the fields whose values are registered names (the built-ins, then a user's from Python or an entry
# point): the names registered when the filter is checked, how an error says where others come from,
# and the plugin lines left out (an error names why)
REGISTERED: dict[str, tuple[Callable[[], tuple[str, ...]], str, Callable[[], dict[str, str]]]] = {
    "model.model": (
        model_names,
        f"or a model registered with depthscale.register_model or the entry-point group {_MODEL_GROUP}",
        broken_model_plugins,
    ),
    "model.attention": (
        attention_names,
        f"or a map registered with depthscale.register_attention or the entry-point group {_MAP_GROUP}",
        broken_attention_plugins,
    ),
}


def _check_value(name: str, path: str, value, stored: Mapping[str, Iterable[str]]) -> None:
    """``value`` of the field ``path`` against its choices, or its registry and the names ``stored``
    (``ValueError`` naming ``name``)."""
    if path in CHOICES:
        check_choice(name, value, CHOICES[path])
    elif path in REGISTERED:
        names, how, broken = REGISTERED[path]
        allowed = names()
        held = sorted(n for n in stored.get(path, ()) if n not in allowed)
        if value not in allowed and value not in held and isinstance(value, str) and value in (left_out := broken()):
            bad_argument(name, value, f"a name that loads; its plugin was left out ({left_out[value]})")
        if value not in allowed and value not in held:
            more = f"; in this store also {', '.join(held)}" if held else ""
            bad_argument(name, value, f"one of {', '.join(allowed)} ({how}{more})")


def allowed_paths() -> list:
    """Every ``section.field`` a filter may name, in config order.

    Examples
    --------
    >>> allowed_paths()[:3]
    ['task.task', 'task.k', 'task.a']
    """
    return [f"{s}.{f.name}" for s, cls in SECTIONS.items() for f in dataclasses.fields(cls)]


def check_filters(where, stored: Mapping[str, Iterable[str]] | None = None, **shorthands) -> dict:
    """``{path: [values]}`` from ``where`` and the shorthands (``model="softmax"`` is ``model.model``),
    or a one-line ``ValueError`` naming the parameter and what it may be. ``stored``: the names of the
    registered fields (:data:`REGISTERED`) that the store's runs hold, allowed beside the registered ones.

    Examples
    --------
    >>> check_filters({"model.depth": [1, 2]}, model="softmax")
    {'model.depth': [1, 2], 'model.model': ['softmax']}
    >>> check_filters({}, model="Softmax")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: model='Softmax': must be one of linear, softmax (or a model registered ...)
    >>> check_filters({"model.attention": "sparsemax"})
    {'model.attention': ['sparsemax']}
    >>> check_filters({}, stored={"model.model": ["my-gpt"]}, model="my-gpt")
    {'model.model': ['my-gpt']}
    """
    stored = stored or {}
    if where is not None and not isinstance(where, dict):
        raise ValueError(f"where={where!r}: must be a dict of config path -> value or list of values")
    conds = {}
    paths = allowed_paths()
    for path, value in (where or {}).items():
        if path not in paths:
            raise ValueError(f"where key {path!r}: must be a config path, one of {', '.join(paths)}")
        values = list(value) if isinstance(value, (list, tuple, set, frozenset)) else [value]
        for v in values:
            _check_value(f"where[{path!r}]", path, v, stored)
            if isinstance(v, float) and math.isnan(v):  # equal to nothing: the filter would match no run
                raise ValueError(f"where[{path!r}]={v!r}: must be a value a config holds (NaN equals nothing)")
        conds[path] = values
    for name, value in shorthands.items():
        if value is None:
            continue
        path = f"{name}.{name}"
        _check_value(name, path, value, stored)
        conds[path] = [value]
    return conds


__all__ = ["SECTIONS", "CHOICES", "REGISTERED", "allowed_paths", "check_filters"]
