"""A results store as tidy pandas DataFrames: one row per run, and long tables for the list fields.

The store is opened read-only through SQLite's ``mode=ro`` URI and, while no sweep is writing to
it (no ``-wal`` file beside it), as ``immutable``: reading never changes the file's bytes nor
creates a file beside it, so committed stores (``results/*.sqlite``) can be read in place.
pandas is an optional dependency (``pip install "depthscale[pandas]"``).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from urllib.parse import quote

from ..theory._validate import check_choice
from .store import check_store_file, current_spelling, flatten

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


def read_only_uri(path) -> str:
    """SQLite URI that opens ``path`` read-only, ``immutable`` unless a writer's ``-wal`` file exists.

    >>> read_only_uri("/data/runs.sqlite")
    'file:/data/runs.sqlite?mode=ro&immutable=1'
    """
    path = Path(path).absolute()
    uri = f"file:{quote(str(path))}?mode=ro"
    # immutable: SQLite creates no -shm/-journal file and takes no lock; with a -wal file present a
    # sweep is writing and its last transactions live in that file, so read through it instead
    return uri if Path(f"{path}-wal").exists() else uri + "&immutable=1"


def read_records(path) -> list[dict]:
    """Every run record of the store at ``path`` (without the per-context arrays), in key order, with
    today's field names (:func:`~depthscale.sims.store.current_spelling`)."""
    check_store_file(path, "read")
    con = sqlite3.connect(read_only_uri(path), uri=True)
    try:
        rows = con.execute("SELECT key, record FROM runs ORDER BY key").fetchall()
    finally:
        con.close()
    out = []
    for key, text in rows:
        try:
            out.append(current_spelling(json.loads(text)))
        except json.JSONDecodeError as exc:
            raise ValueError(f"store={str(path)!r}: the record of run {key!r} is not valid JSON ({exc})") from None
    return out


def to_frame(store_or_path, kind: str = "runs"):
    """A results store as a tidy DataFrame.

    Parameters
    ----------
    store_or_path : Store, str or Path
        A :class:`~depthscale.sims.store.Store` or the path of a store file; read through its own
        read-only connection (see the module docstring).
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
        Rows in key order (then list order).

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
    path = getattr(store_or_path, "path", store_or_path)
    records = read_records(path)
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


__all__ = ["to_frame", "read_records", "read_only_uri", "KINDS"]
