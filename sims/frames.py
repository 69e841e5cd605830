"""Run records as tidy pandas DataFrames: one row per run, and long tables for the list fields.

``to_frame`` takes records (the list :func:`~depthscale.sims.runner.run` results make, or one
record), a :class:`~depthscale.sims.store.Store` or the path of a store. A path is read through the
store's one read path (``Store(path)``, read-only): reading never changes the file's bytes nor
creates or rewrites a file beside it (``-wal``/``-shm`` included), so committed stores
(``results/*.sqlite``) and stores on read-only media can be read in place. Rows come sorted by
condition (every configuration field but the depth), then depth, then seed.
pandas is an optional dependency (``pip install "depthscale[pandas]"``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from ..theory._validate import check_choice
from .store import Store, flatten

KINDS = ("runs", "layer_losses", "mode_losses", "train_curve")
FIRST = ("key", "seed", "status", "reason")

# long tables: record field -> (index column, value column, first index)
_LONG = {
    "layer_losses": ("layer", "loss", 1),
    "mode_losses": ("mode", "loss", 1),
    "train_curve": ("step", "loss", None),
}


def _pandas():
    try:
        import pandas
    except ImportError:
        raise ImportError('to_frame needs pandas, an optional dependency: pip install "depthscale[pandas]"') from None
    return pandas


def read_records(path) -> list[dict]:
    """Every run record of the store at ``path`` (without the per-context arrays), with today's field
    names (:func:`~depthscale.sims.store.current_spelling`), read through ``Store(path)`` (read-only)."""
    with Store(path) as store:
        return list(store.records())


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


def _records_of(source) -> list[dict]:
    """The run records of ``source``: a Store, a store path, one record, or an iterable of records."""
    if isinstance(source, Store):
        return list(source.records())
    if isinstance(source, (str, os.PathLike)):
        return read_records(source)
    if isinstance(source, dict):
        source = [source]
    if isinstance(source, (bytes, bytearray)) or not isinstance(source, Iterable):
        raise TypeError(
            f"source={source!r}: must be run records (a list of dicts, as run() returns them), "
            f"a Store or the path of a store, not {type(source).__name__}"
        )
    records = list(source)
    for i, rec in enumerate(records):
        if not isinstance(rec, dict):
            raise TypeError(f"source[{i}]={rec!r}: must be a run record (a dict), not {type(rec).__name__}")
        missing = [name for name in ("key", "seed", "config") if name not in rec]
        if missing:
            raise ValueError(f"source[{i}]: a run record needs key, seed and config; {', '.join(missing)} missing")
        if not isinstance(rec["config"], dict):
            raise ValueError(f"source[{i}]['config']={rec['config']!r}: must be a dict (RunConfig.to_dict())")
    return records


def to_frame(source, kind: str = "runs"):
    """Run records as a tidy DataFrame.

    Parameters
    ----------
    source : list of run records, a run record, Store, str or Path
        Records as :func:`~depthscale.sims.runner.run` returns them (a list, any iterable, or one
        record), a :class:`~depthscale.sims.store.Store` (read through its own connection), or the
        path of a store file (opened read-only, see the module docstring).
    kind : {"runs", "layer_losses", "mode_losses", "train_curve"}
        ``"runs"``: one row per run with its scalar fields: ``key``, ``seed``, ``status``,
        ``reason``, the configuration as ``config.task.a``, ``config.model.depth``, ... and the
        measurements (``final_loss``, ``A_L``, ``C_L``, ``floors.single.loss``, ...); lists are
        left out. The other kinds are long tables with one row per list entry and the columns
        ``key``, ``seed`` and: ``layer`` (1..L) and ``loss`` (``M_ll``); ``mode`` (1..d) and
        ``loss``; ``step`` and ``loss`` (smoothed training loss). Join them to the runs on ``key``.
        Missing values (JSON ``null``) are NaN or None.

    Returns
    -------
    pandas.DataFrame
        Rows sorted by condition (every configuration field but the depth), then depth, then seed
        (:func:`run_order`); the long tables then in list order.

    Examples
    --------
    >>> import os, tempfile
    >>> from depthscale.sims.store import Store
    >>> path = os.path.join(tempfile.mkdtemp(), "runs.sqlite")
    >>> with Store(path, mode="write") as s:
    ...     s.put({"key": "abc-0", "seed": 0, "status": "ok", "reason": None, "final_loss": 0.5,
    ...            "config": {"model": {"depth": 2}}, "layer_losses": [0.9, 0.7]})
    >>> to_frame(path)[["key", "config.model.depth", "final_loss"]].to_dict("records")
    [{'key': 'abc-0', 'config.model.depth': 2, 'final_loss': 0.5}]
    >>> to_frame(path, "layer_losses").to_dict("records")
    [{'key': 'abc-0', 'seed': 0, 'layer': 1, 'loss': 0.9}, {'key': 'abc-0', 'seed': 0, 'layer': 2, 'loss': 0.7}]
    """
    check_choice("kind", kind, KINDS)
    pd = _pandas()
    records = sorted(_records_of(source), key=run_order)
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


__all__ = ["to_frame", "read_records", "run_order", "KINDS"]
