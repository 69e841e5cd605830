"""Run records as tidy tables: nested configurations flattened to ``a.b`` columns
(:func:`flatten`), runs in their reading order (:func:`run_order`), and the pandas DataFrames of
:func:`depthscale.sims.frames.to_frame` and ``Store.to_frame`` (:func:`records_frame`). It reads no
store: the store and the frames module both build on it.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from ..theory._validate import check_choice

KINDS = ("runs", "layer_losses", "mode_losses", "train_curve")
FIRST = ("key", "seed", "status", "reason")

# long tables: record field -> (index column, value column, first index)
_LONG = {
    "layer_losses": ("layer", "loss", 1),
    "mode_losses": ("mode", "loss", 1),
    "train_curve": ("step", "loss", None),
}


def flatten(obj: dict, prefix: str = "") -> dict:
    """Flatten nested dicts of scalars into ``{"a.b": value}``; lists and arrays are skipped.

    >>> flatten({"a": 1, "b": {"c": 2.5, "d": [1, 2]}})
    {'a': 1, 'b.c': 2.5}
    """
    out = {}
    for k, v in obj.items():
        name = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(flatten(v, name + "."))
        elif v is None or isinstance(v, (bool, int, float, str, np.generic)):
            out[name] = v.item() if isinstance(v, np.generic) else v
    return out


def _pandas():
    try:
        import pandas
    except ImportError:
        raise ImportError('to_frame needs pandas, an optional dependency: pip install "depthscale[pandas]"') from None
    return pandas


def _sortable(value) -> tuple:
    """A value of a configuration field as a key that orders numbers numerically, then text, then None."""
    if value is None:
        return (2, 0.0, "")
    if isinstance(value, (bool, int, float)):
        return (0, float(value), "")
    return (1, 0.0, str(value))


def run_order(rec: dict) -> tuple:
    """Sort key of a run record: its condition (every configuration field but ``model.depth``), then
    depth, then seed, then key.

    >>> recs = [{"key": k, "seed": s, "config": {"task": {"a": a}, "model": {"depth": L}}}
    ...         for k, s, a, L in [("x-1", 1, 0.5, 4), ("y-0", 0, 0.5, 1), ("z-0", 0, 0.25, 2), ("w-0", 0, 0.5, 4)]]
    >>> [r["key"] for r in sorted(recs, key=run_order)]
    ['z-0', 'y-0', 'w-0', 'x-1']
    """
    config = rec.get("config")
    flat = flatten(config) if isinstance(config, dict) else {}
    depth = flat.pop("model.depth", None)
    condition = tuple((name, _sortable(flat[name])) for name in sorted(flat))
    seed = rec.get("seed")
    return (condition, _sortable(depth), _sortable(seed), str(rec.get("key", "")))


def records_frame(records: Iterable[dict], kind: str = "runs"):
    """Checked run records as a tidy DataFrame of ``kind`` (:func:`depthscale.sims.frames.to_frame`
    says what each kind holds), rows sorted by :func:`run_order`.

    >>> recs = [{"key": "b-1", "seed": 1, "final_loss": 0.4, "config": {"model": {"depth": 2}}},
    ...         {"key": "a-0", "seed": 0, "final_loss": 0.5, "config": {"model": {"depth": 1}}}]
    >>> records_frame(recs)[["key", "config.model.depth", "final_loss"]].to_dict("records")
    [{'key': 'a-0', 'config.model.depth': 1, 'final_loss': 0.5}, {'key': 'b-1', 'config.model.depth': 2, 'final_loss': 0.4}]
    """
    check_choice("kind", kind, KINDS)
    pd = _pandas()
    records = sorted(records, key=run_order)
    if kind == "runs":
        # a list field is None where it does not apply (mode_losses of softmax): left out all the same
        lists = {k for rec in records for k, v in rec.items() if isinstance(v, list)}
        rows = []
        for rec in records:
            row = flatten({k: v for k, v in rec.items() if k != "config" and k not in lists})
            row.update(flatten(rec.get("config") or {}, "config."))
            rows.append(row)
        config = sorted({c for r in rows for c in r if c.startswith("config.")})
        rest = [c for c in dict.fromkeys(c for r in rows for c in r) if c not in FIRST and c not in config]
        return pd.DataFrame(rows, columns=[*FIRST, *config, *rest])
    index, value, start = _LONG[kind]
    long_rows = []
    for rec in records:
        for i, entry in enumerate(rec.get(kind) or ()):
            at, v = (i + start, entry) if start is not None else entry
            long_rows.append((rec["key"], rec["seed"], at, v))
    frame = pd.DataFrame(long_rows, columns=["key", "seed", index, value])
    return frame.astype({"seed": "int64", index: "int64", value: "float64"})


__all__ = ["KINDS", "flatten", "records_frame", "run_order"]
