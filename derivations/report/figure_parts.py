"""Small helpers shared by the figures: input checks, grouping of runs into series, colours, markers, axes, PNG output."""

from __future__ import annotations

import io
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ..analysis.curve import EASY_TASKS as _EASY
from ..analysis.curve import CurveKey, curve_key

_DPI = 100


# ----------------------------------------------------------------------------------------------
# small helpers


class _NoFigure(Exception):
    """Raised inside a builder when there is nothing to draw; the message says why."""


def _bad(name: str, value, allowed: str):
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    raise ValueError(f"{name}={text}: must be {allowed}")


def _as_list(name: str, value, what: str) -> list:
    if value is None:
        return []
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, (Sequence, np.ndarray)):
        _bad(name, value, f"a list of {what}")
    return list(value)


def _num(x) -> float:
    """A finite float or nan (None, strings and non-finite values become nan)."""
    if x is None or isinstance(x, (bool, str)):
        return math.nan
    try:
        v = float(x)
    except (TypeError, ValueError):
        return math.nan
    return v if math.isfinite(v) else math.nan


def _label(key: CurveKey, show: set) -> str:
    model, variant, task, k, a, b, d, P = key[:8]
    parts = [f"(a,b)=({a:g},{b:g})"]
    if "k" in show and task == "topk":
        parts.append(f"top-{k}")
    if "task" in show and task != "topk":
        parts.append(task)
    if "variant" in show and variant != "base":
        parts.append(variant)
    if "dP" in show:
        parts.append(f"d={d},P={P}")
    if "model" in show:
        parts.insert(0, model)
    return " ".join(parts)


def _distinct(keys, idx) -> bool:
    return len({k[idx] for k in keys}) > 1


def _records(records, converged_only: bool) -> list:
    recs = _as_list("records", records, "run-record dicts")
    out = []
    for i, r in enumerate(recs):
        if not isinstance(r, Mapping):
            _bad(f"records[{i}]", r, "a run-record dict")
        cfg = r.get("config")
        if (
            not isinstance(cfg, Mapping)
            or not isinstance(cfg.get("task"), Mapping)
            or not isinstance(cfg.get("model"), Mapping)
        ):
            _bad(f"records[{i}].config", cfg, "a dict with 'task' and 'model' dicts")
        if r.get("status", "ok") != "ok":
            continue
        if converged_only and not r.get("converged", False):
            continue
        out.append(r)
    return out


def _group(recs, field_fn):
    """{curve_key: {depth: [values over seeds]}} for the finite values of ``field_fn(record)``."""
    out: dict = defaultdict(lambda: defaultdict(list))
    for r in recs:
        v = field_fn(r)
        if v is None:
            continue
        out[curve_key(r)][int(r["config"]["model"]["depth"])].append((v, r))
    return out


def _colours(keys):
    """One colour per spectrum (a, b), shared by every panel of a figure."""
    from matplotlib import colormaps

    spectra = sorted({(k[4], k[5]) for k in keys})
    cmap = colormaps["tab10"] if len(spectra) <= 10 else colormaps["viridis"]
    n = max(len(spectra) - 1, 1)
    return {s: cmap(i if len(spectra) <= 10 else i / n) for i, s in enumerate(spectra)}


def _markers(keys):
    """One marker per everything-but-the-spectrum (model, variant, k, d, P)."""
    others = sorted({_marker_key(k) for k in keys})
    shapes = "osD^vP*Xh<>"
    return {o: shapes[i % len(shapes)] for i, o in enumerate(others)}


def _marker_key(key: CurveKey) -> tuple:
    return (key.model, key.variant, key.k, key.d, key.P)


def _depth_axis(ax, depths):
    """Log depth axis labelled at the depths actually run (plain integers, no minor labels)."""
    from matplotlib.ticker import NullFormatter, NullLocator

    ax.set_xscale("log")
    ticks = sorted({int(L) for L in depths})
    if len(ticks) > 8:  # keep the labels legible
        ticks = ticks[:: math.ceil(len(ticks) / 8)]
    ax.set_xticks(ticks, [str(t) for t in ticks])
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("depth L")


def _yerr(se):
    se = np.asarray(se, dtype=float)
    return None if not np.any(np.isfinite(se)) else np.where(np.isfinite(se), se, 0.0)


def _fit_params(fit) -> dict | None:
    """L0, c, alpha of a loss law from a FitResult, a dict with 'params', or a plain parameter dict.

    None for a fit that is not identified and for a gap fit (its law is not the loss).
    """
    if fit is None or getattr(fit, "identified", True) is False or getattr(fit, "kind", "") == "gap":
        return None
    params = getattr(fit, "params", None)
    if params is None and isinstance(fit, Mapping):
        params = fit.get("params", fit)
    if not isinstance(params, Mapping) or "c" not in params or "alpha" not in params:
        return None
    out = {"L0": _num(params.get("L0", 0.0)), "c": _num(params["c"]), "alpha": _num(params["alpha"])}
    return out if all(math.isfinite(v) for v in out.values()) else None


_SELECTORS = ("model", "variant", "task", "k", "a", "b", "d", "P")


def _fit_entries(fits) -> list:
    """Normalise ``fits`` to a list of (selector dict, params)."""
    if fits is None:
        return []
    entries = []
    if isinstance(fits, Mapping):
        for key, fit in fits.items():
            key = key if isinstance(key, tuple) else (key,)
            sel = {"key": key} if len(key) > len(_SELECTORS) else dict(zip(_SELECTORS, key))
            entries.append((sel, _fit_params(fit)))
    else:
        for i, item in enumerate(_as_list("fits", fits, "fit dicts")):
            if not isinstance(item, Mapping):
                _bad(f"fits[{i}]", item, "a dict with selectors (model, task, a, b, ...) and 'fit'")
            sel = {s: item[s] for s in _SELECTORS if s in item}
            if "kind" in item and "task" not in item:
                sel["kind"] = item["kind"]
            entries.append((sel, _fit_params(item.get("fit", item))))
    return [(s, p) for s, p in entries if p is not None]


def _match(sel: dict, key: CurveKey) -> bool:
    for name, want in sel.items():
        if name == "key":
            if want != key:
                return False
            continue
        if name == "kind":
            got = "easy" if key.task in _EASY else "difficult"
        else:
            got = getattr(key, name)
        if isinstance(got, float) or name in ("a", "b"):
            if _num(want) != _num(got):
                return False
        elif name in ("k", "d", "P"):
            if _num(want) != _num(got):
                return False
        elif want != got:
            return False
    return True


def _png(fig: Figure) -> bytes:
    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=_DPI, metadata={"Software": None})
    return buf.getvalue()


def _new(w: float, h: float, rows: int = 1, cols: int = 1, **kw):
    fig = Figure(figsize=(w, h), layout="constrained")
    axes = fig.subplots(rows, cols, squeeze=False, **kw)
    return fig, axes


def _empty_panel(ax, text: str):
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, color="0.4")
    ax.set_xticks([])
    ax.set_yticks([])
