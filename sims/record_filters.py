"""The filters of :meth:`Store.records <depthscale.sims.store.Store.records>`, checked before any
record is read: a misspelt path or value is an error naming it, never an empty result.

A model, an attention map or a task is checked against its registry (sims/registry.py), so every
name the configs accept, a user's own included, is a filter value too; so is a name the store's
runs hold (``stored``: a map or task whose plugin this process lacks, or a model trained
elsewhere, ``from_layer_outputs(..., model=...)``)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping
from typing import Any

from ..theory._validate import bad_argument, check_choice
from . import attention_registry, loss_registry, model_registry, optimizer_registry, task_registry
from . import config as _config
from .registry import Registry

# config sections and their fields, from the config classes themselves
SECTIONS = {"task": _config.TaskConfig, "model": _config.ModelConfig, "train": _config.TrainConfig}
# the fields whose values come from a fixed list
CHOICES = {
    "model.qk": _config.QK_KINDS,
    "model.value": _config.VALUE_KINDS,
    "model.stream": _config.STREAMS,
    "model.dtype": _config.DTYPES,
    "model.init": _config.INITS,
    "train.schedule": _config.SCHEDULES,
}
# the fields whose values are registered names (the built-ins, then a user's from Python or an entry
# point): their registries give the names registered when the filter is checked, where others come
# from, and the plugin lines left out (an error names why)
REGISTERED: dict[str, Registry[Any]] = {
    "task.task": task_registry.REGISTRY,
    "model.model": model_registry.REGISTRY,
    "model.attention": attention_registry.REGISTRY,
    "train.optimizer": optimizer_registry.REGISTRY,
    "train.loss": loss_registry.REGISTRY,
}


def _check_value(name: str, path: str, value, stored: Mapping[str, Iterable[str]]) -> None:
    """``value`` of the field ``path`` against its choices, or its registry and the names ``stored``
    (``ValueError`` naming ``name``)."""
    if path in CHOICES:
        check_choice(name, value, CHOICES[path])
    elif path in REGISTERED:
        registry = REGISTERED[path]
        allowed = registry.names()
        held = sorted(n for n in stored.get(path, ()) if n not in allowed)
        if (
            value not in allowed
            and value not in held
            and isinstance(value, str)
            and value in (left_out := registry.broken())
        ):
            bad_argument(name, value, f"a name that loads; its plugin was left out ({left_out[value]})")
        if value not in allowed and value not in held:
            more = f"; in this store also {', '.join(held)}" if held else ""
            bad_argument(name, value, f"one of {', '.join(allowed)} ({registry.elsewhere}{more})")


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
