"""The filters of :meth:`Store.records <depthscale.sims.store.Store.records>`, checked before any
record is read: a misspelt path or value is an error naming it, never an empty result."""

from __future__ import annotations

import dataclasses
import math

from ..theory._choices import ATTENTIONS
from ..theory._validate import check_choice
from . import config as _config

# config sections and their fields, from the config classes themselves
SECTIONS = {"task": _config.TaskConfig, "model": _config.ModelConfig, "train": _config.TrainConfig}
# the fields whose values come from a fixed list
CHOICES = {
    "task.task": _config.TASKS,
    "model.model": _config.MODELS,
    "model.qk": _config.QK_KINDS,
    "model.value": _config.VALUE_KINDS,
    "model.stream": _config.STREAMS,
    "model.dtype": _config.DTYPES,
    "model.init": _config.INITS,
    "model.attention": ATTENTIONS,
    "train.schedule": _config.SCHEDULES,
}


def allowed_paths() -> list:
    """Every ``section.field`` a filter may name, in config order.

    Examples
    --------
    >>> allowed_paths()[:3]
    ['task.task', 'task.k', 'task.a']
    """
    return [f"{s}.{f.name}" for s, cls in SECTIONS.items() for f in dataclasses.fields(cls)]


def check_filters(where, **shorthands) -> dict:
    """``{path: [values]}`` from ``where`` and the shorthands (``model="softmax"`` is ``model.model``),
    or a one-line ``ValueError`` naming the parameter and what it may be.

    Examples
    --------
    >>> check_filters({"model.depth": [1, 2]}, model="softmax")
    {'model.depth': [1, 2], 'model.model': ['softmax']}
    >>> check_filters({}, model="Softmax")
    Traceback (most recent call last):
    ...
    ValueError: model='Softmax': must be one of linear, softmax
    """
    if where is not None and not isinstance(where, dict):
        raise ValueError(f"where={where!r}: must be a dict of config path -> value or list of values")
    conds = {}
    paths = allowed_paths()
    for path, value in (where or {}).items():
        if path not in paths:
            raise ValueError(f"where key {path!r}: must be a config path, one of {', '.join(paths)}")
        values = list(value) if isinstance(value, (list, tuple, set, frozenset)) else [value]
        for v in values:
            if path in CHOICES:
                check_choice(f"where[{path!r}]", v, CHOICES[path])
            if isinstance(v, float) and math.isnan(v):  # equal to nothing: the filter would match no run
                raise ValueError(f"where[{path!r}]={v!r}: must be a value a config holds (NaN equals nothing)")
        conds[path] = values
    for name, value in shorthands.items():
        if value is None:
            continue
        path = f"{name}.{name}"
        check_choice(name, value, CHOICES[path])
        conds[path] = [value]
    return conds


__all__ = ["SECTIONS", "CHOICES", "allowed_paths", "check_filters"]
