"""Notebook displays of the simulation side: a run record as a small table, a store as a summary.

A run record is a plain dict everywhere in the toolkit; :class:`RecordView` is the same dict with an
``_repr_html_`` (what :meth:`Store.record <depthscale.sims.store.Store.record>` returns). A store
shows its counts by status, model and task, never its rows.
"""

from __future__ import annotations

import html
import json
import math
from collections import Counter

from ..theory.display import html_grid, html_table
from .task_registry import task_name


def _num(x, se=None) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "—"
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return str(x)
    text = f"{x:.6g}"
    return text if se is None or not math.isfinite(float(se)) else f"{text} ± {float(se):.2g}"


def record_rows(record: dict) -> list:
    """``[(name, text), ...]``: what identifies a run and what it measured, lists shown by their length.

    Examples
    --------
    >>> rows = dict(record_rows({"key": "k-0", "seed": 0, "status": "ok", "final_loss": 0.5,
    ...     "final_loss_se": 0.01, "layer_losses": [1.0, 0.7], "config": {"model": {"model": "linear",
    ...     "depth": 2}, "task": {"task": "easy-exact", "d": 8, "P": 64}}}))
    >>> rows["final loss"], rows["model"], rows["layer_losses"]
    ('0.5 ± 0.01', 'linear, depth 2', 'list of 2')
    """
    cfg = record.get("config") or {}
    m, t = cfg.get("model") or {}, cfg.get("task") or {}
    rows = [("key", record.get("key", "—")), ("status", record.get("status", "—"))]
    if record.get("reason"):
        rows.append(("reason", record["reason"]))
    if m:
        rows.append(("model", f"{m.get('model', '?')}, depth {m.get('depth', '?')}"))
    if t:
        task = task_name(t.get("task", "?"), t.get("k"))
        rows.append(
            ("task", f"{task}, (a, b) = ({t.get('a', 0):g}, {t.get('b', 0):g}), d = {t.get('d')}, P = {t.get('P')}")
        )
    rows.append(("seed", record.get("seed", "—")))
    rows.append(("final loss", _num(record.get("final_loss"), record.get("final_loss_se"))))
    shown = {"key", "status", "reason", "config", "seed", "final_loss", "final_loss_se", "arrays"}
    for k, v in record.items():
        if k in shown:
            continue
        if isinstance(v, (list, tuple)):
            rows.append((k, f"list of {len(v)}"))
        elif isinstance(v, dict):
            rows.append((k, ", ".join(sorted(map(str, v))) or "{}"))
        else:
            rows.append((k, _num(v)))
    return rows


def record_html(record: dict) -> str:
    """A run record as a two-column HTML table (:func:`record_rows`)."""
    return html_table(record_rows(record), "run record")


def record_repr(record: dict) -> str:
    """A run record in two lines: key, status, model, task, seed; the final loss, convergence, steps
    and how many other fields it holds (never the fields' contents: a training curve has hundreds of
    points).

    Examples
    --------
    >>> print(record_repr({"key": "k-0", "seed": 0, "status": "ok", "final_loss": 0.5, "final_loss_se": 0.01,
    ...     "converged": True, "steps": 300, "layer_losses": [1.0, 0.7], "config": {"model": {"model": "linear",
    ...     "depth": 2}, "task": {"task": "easy-exact", "d": 8, "P": 64}}}))
    <run record k-0: ok, linear depth 2, easy-exact (a, b) = (0, 0) d = 8 P = 64, seed 0
      final loss 0.5 ± 0.01, converged, 300 steps; 1 more field: layer_losses>
    """
    cfg = record.get("config") or {}
    m, t = cfg.get("model") or {}, cfg.get("task") or {}
    head = [f"{record.get('status', '?')}"]
    if m:
        head.append(f"{m.get('model', '?')} depth {m.get('depth', '?')}")
    if t:
        task = task_name(t.get("task", "?"), t.get("k"))
        head.append(f"{task} (a, b) = ({t.get('a', 0):g}, {t.get('b', 0):g}) d = {t.get('d')} P = {t.get('P')}")
    head.append(f"seed {record.get('seed', '?')}")
    body = [f"final loss {_num(record.get('final_loss'), record.get('final_loss_se'))}"]
    if "converged" in record:
        body.append("converged" if record["converged"] else "not converged")
    if record.get("steps") is not None:
        body.append(f"{record['steps']} steps")
    if record.get("reason"):
        body.append(f"reason: {record['reason']}")
    shown = {"key", "status", "reason", "config", "seed", "final_loss", "final_loss_se", "converged", "steps"}
    rest = [k for k in record if k not in shown]
    more = ""
    if rest:
        names = ", ".join(rest[:6]) + (", ..." if len(rest) > 6 else "")
        more = f"; {len(rest)} more field{'s' if len(rest) > 1 else ''}: {names}"
    return f"<run record {record.get('key', '?')}: {', '.join(head)}\n  {', '.join(body)}{more}>"


class RecordView(dict):
    """A run record (a plain ``dict``) that shows as a table in a notebook and as two lines of text.

    What :func:`~depthscale.sims.runner.run` and :meth:`Store.record
    <depthscale.sims.store.Store.record>` return; it is a ``dict`` in every other respect.

    Examples
    --------
    >>> r = RecordView({"key": "k-0", "status": "ok", "final_loss": 0.25})
    >>> r["final_loss"], "0.25" in r._repr_html_()
    (0.25, True)
    >>> r
    <run record k-0: ok, seed ?
      final loss 0.25>
    """

    def _repr_html_(self) -> str:
        return record_html(self)

    def __repr__(self) -> str:
        return record_repr(self)

    def _repr_pretty_(self, p, cycle) -> None:  # IPython's text display: the short repr, not the dict
        p.text(record_repr(self))


def store_summary(rows) -> dict:
    """Counts of ``rows`` (``(status, config_dict)`` pairs) by status, by (model, task) and by depth.

    Examples
    --------
    >>> s = store_summary([("ok", {"model": {"model": "linear", "depth": 2}, "task": {"task": "topk", "k": 2}}),
    ...                    ("failed", {"model": {"model": "linear", "depth": 4}, "task": {"task": "topk", "k": 2}})])
    >>> s["status"], s["model_task"]
    ({'ok': 1, 'failed': 1}, {('linear', 'top-2'): {'ok': 1, 'failed': 1}})
    """
    status: Counter = Counter()
    by: dict = {}
    depths = set()
    for st, cfg in rows:
        status[st] += 1
        m, t = cfg.get("model") or {}, cfg.get("task") or {}
        task = task_name(t.get("task", "?"), t.get("k"))
        cell = by.setdefault((str(m.get("model", "?")), task), Counter())
        cell[st] += 1
        if "depth" in m:
            depths.add(int(m["depth"]))
    return {"status": dict(status), "model_task": {k: dict(v) for k, v in sorted(by.items())}, "depths": sorted(depths)}


def store_html(store) -> str:
    """A store as its path, mode and counts: runs by status, and by model and task (one row each)."""
    rows = [(st, json.loads(cfg)) for st, cfg in store._conn.execute("SELECT status, config FROM runs")]
    s = store_summary(rows)
    statuses = ("ok", "diverged", "failed")
    head = html_table(
        [
            ("file", store.path.name),
            ("mode", store.mode),
            ("runs", sum(s["status"].values())),
            *((st, s["status"].get(st, 0)) for st in statuses),
            ("depths", ", ".join(map(str, s["depths"])) or "—"),
        ],
        "results store",
    )
    grid = html_grid(
        ["model", "task", *statuses],
        [(m, t, *(c.get(st, 0) for st in statuses)) for (m, t), c in s["model_task"].items()],
        "runs by model and task",
    )
    return f"<div>{head}{grid}</div>" if s["model_task"] else f"<div>{head}<p>{html.escape('no runs')}</p></div>"


__all__ = ["RecordView", "record_rows", "record_html", "record_repr", "store_summary", "store_html"]
