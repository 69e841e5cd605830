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
from .record_tables import KINDS, records_frame, run_order
from .store import Store


def read_records(path) -> list[dict]:
    """Every run record of the store at ``path`` (without the per-context arrays), with today's field
    names (:func:`~depthscale.sims.store.current_spelling`), read through ``Store(path)`` (read-only)."""
    with Store(path) as store:
        return list(store.records())


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
    return records_frame(_records_of(source), kind)


__all__ = ["to_frame", "read_records", "run_order", "KINDS"]
