"""The library's drawings (loss against depth, per-mode losses, the C_L/A_L decomposition, the
excess over a plateau against depth) and the helpers every figure shares (input checks, grouping of
runs into series, colours, axes, PNG output): each ``draw_*`` builder returns a matplotlib Figure or
raises :class:`~depthscale.derivations.report.entries.NoFigure` (reason). A study's own drawings
live in the study and use the public helpers here through the authoring API
(:mod:`depthscale.derivations.study`)."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from ...sims.task_registry import task_name
from ...theory.spectra import PowerLawSpectrum
from ..analysis.curve import EASY_TASKS as _EASY
from ..analysis.curve import Curve, CurveKey, curve_key, curves
from .entries import NoFigure
from .plots import inverse_depth_guide, legend_below
from .png import to_png

# ----------------------------------------------------------------------------------------------
# small helpers


def _bad(name: str, value, allowed: str):
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    raise ValueError(f"{name}={text}: must be {allowed}")


def as_list(name: str, value, what: str) -> list:
    """``value`` as a list (None: empty); a string, a mapping or a scalar refused."""
    if value is None:
        return []
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, (Sequence, np.ndarray)):
        _bad(name, value, f"a list of {what}")
    return list(value)


def mappings(name: str, rows, what: str) -> list[Mapping]:
    """``rows`` as a list of dicts (None: empty); anything else refused, naming the row."""
    out = as_list(name, rows, f"dicts with {what}")
    for i, r in enumerate(out):
        if not isinstance(r, Mapping):
            _bad(f"{name}[{i}]", r, f"a dict with {what}")
    return out


def finite_or_nan(x) -> float:
    """A finite float or nan (None, strings and non-finite values become nan)."""
    if x is None or isinstance(x, (bool, str)):
        return math.nan
    try:
        v = float(x)
    except (TypeError, ValueError):
        return math.nan
    return v if math.isfinite(v) else math.nan


def _fields(curve: Curve) -> dict[str, str]:
    """What defines a series beyond its model, as ``{field: text}``: its training protocol (by name when
    it is one of the named protocols, else its settings one by one), variant, task, spectrum and size."""
    from ..claims.protocol_rows import protocol_of  # the one rule that names a curve's protocol

    key = curve.key
    out: dict[str, str] = {}
    try:
        protocol = protocol_of(curve) if curve.runs else None
    except (KeyError, TypeError, AttributeError, StopIteration):
        protocol = None
    if protocol is not None:
        out["protocol"] = f"{protocol.name} protocol"
    else:
        for name, value in key.train:
            out[f"train.{name}"] = f"{name}={value:g}" if isinstance(value, float) else f"{name}={value}"
        for name in ("width", "init_scale", "dtype", "c_lambda", "c_omega"):
            value = getattr(key, name)
            if value is not None:
                out[name] = f"{name}={value:g}" if isinstance(value, float) else f"{name}={value}"
        if key.variant != "base":
            out["variant"] = key.variant
    out["task"] = task_name(key.task, key.k)
    out["spectrum"] = f"(a,b)=({key.a:g},{key.b:g})"
    out["size"] = f"d={key.d} P={key.P}"
    return out


_SETTINGS = ("train.", "width", "init_scale", "dtype", "c_lambda", "c_omega")


def series_labels(cs) -> tuple[dict, str]:
    """One legend label per curve of ``cs`` that says only what differs between them (protocol,
    settings, variant, task, spectrum, size), and the text they share (for the figure's title): the
    protocol, variant, task, spectrum and size all curves share, and the training settings most curves
    share ("unless labelled"), which a curve's label then names only where it departs from them.
    Curves of different models may share a label (each model has its own panels); curves of one model
    that would still read alike keep their full label."""
    fields = {c.key: _fields(c) for c in cs}
    names: list[str] = []
    for f in fields.values():
        names += [n for n in f if n not in names]
    setting = [n for n in names if n.startswith(_SETTINGS)]
    common, spread = {}, []  # settings curves disagree on: most share one value, or none does
    for n in setting:
        values = Counter(f[n] for f in fields.values() if n in f)
        if len(values) > 1:
            (value, count), total = values.most_common(1)[0], sum(values.values())
            if count > total / 2:
                common[n] = value
            else:
                spread.append(n)
    differ = [n for n in names if n in spread or n not in setting and len({f.get(n, "") for f in fields.values()}) > 1]
    labels = {}
    for c in cs:
        f = fields[c.key]
        own = [f[n] for n in names if n in common and n in f and f[n] != common[n]]
        labels[c.key] = " ".join([*(f[n] for n in differ if n in f), *own]) or c.model
    counts = Counter((c.model, labels[c.key]) for c in cs)
    for c in cs:
        if counts[(c.model, labels[c.key])] > 1:
            labels[c.key] = c.label
    first = next(iter(fields.values()), {})
    titled = ("protocol", "variant", "task", "spectrum", "size")
    shared = " ".join(first[n] for n in names if n in titled and n not in differ and n in first)
    if common:
        shared += ("; " if shared else "") + " ".join(common.values()) + " unless labelled"
    return labels, shared


def series_colours(labels) -> dict:
    """One colour per distinct label, in sorted order (tab10, tab20 beyond ten, viridis beyond twenty)."""
    names = sorted(set(labels))
    return dict(zip(names, palette(len(names))))


def panel_grid(n: int, panel_w: float = 3.8, panel_h: float = 3.2, max_cols: int = 2, **kw):
    """A figure of ``n`` panels at most ``max_cols`` to a row (at most 7.6 in wide, so that its tick labels
    stay readable in the site's 690-px column; a single panel 6.4 in) and its ``n`` axes; the grid's spare
    axes are removed."""
    cols = max(1, min(n, max_cols))
    rows = (n + cols - 1) // cols
    # one panel alone takes 6.4 in, room for its legend's columns
    fig, axes = new_figure(6.4 if n == 1 else min(panel_w * cols, 7.6), panel_h * rows, rows, cols, **kw)
    flat = list(axes.flat)
    for ax in flat[n:]:
        fig.delaxes(ax)
    return fig, flat[:n]


def _records(records, converged_only: bool) -> list:
    recs = as_list("records", records, "run-record dicts")
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


def depth_axis(ax, depths):
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


def error_bars(se):
    """Error bars for ``errorbar(yerr=...)``: None when no s.e. is finite, missing ones as 0."""
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
    out = {
        "L0": finite_or_nan(params.get("L0", 0.0)),
        "c": finite_or_nan(params["c"]),
        "alpha": finite_or_nan(params["alpha"]),
    }
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
        for i, item in enumerate(as_list("fits", fits, "fit dicts")):
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
            if finite_or_nan(want) != finite_or_nan(got):
                return False
        elif name in ("k", "d", "P"):
            if finite_or_nan(want) != finite_or_nan(got):
                return False
        elif want != got:
            return False
    return True


def new_figure(w: float, h: float, rows: int = 1, cols: int = 1, **kw):
    """A figure of its own (never pyplot's) ``w`` x ``h`` inches and its ``rows`` x ``cols`` axes array."""
    fig = Figure(figsize=(w, h), layout="constrained")
    axes = fig.subplots(rows, cols, squeeze=False, **kw)
    return fig, axes


# ----------------------------------------------------------------------------------------------
# builders: return a Figure or raise NoFigure(reason)


def _curves(data, converged_only: bool) -> list:
    """Curves from a list of :class:`Curve` objects or of run records (grouped by ``curve_key``)."""
    items = as_list("records", data, "run-record dicts or curves")
    if items and all(isinstance(c, Curve) for c in items):
        return items
    return curves(_records(items, converged_only))


def _panel_maps(model: str, keys) -> str:
    """What a panel of the model ``model`` holds: "softmax attention", or the attention maps by name
    when its curves use others (a softmax-family model's variant names its map)."""
    from ...sims.attention_registry import attention_names

    maps = sorted({k.variant for k in keys if k.variant in attention_names() and k.variant != "softmax"})
    if not maps:
        return f"{model} attention" if model in ("linear", "softmax") else f"model {model}"
    shown = (["softmax"] if any(k.variant not in maps for k in keys) else []) + maps
    return "attention: " + ", ".join(shown)


def draw_overview(records, fits=None, converged_only: bool = False) -> Figure:
    """Loss against depth, one panel per (model, task kind) that has runs (no empty panel), one colour
    and one legend label per series (the label says only what differs between series; what they share
    is in the title), fits dashed, and a dotted 1/L guide through each curve's first and last points."""
    entries = _fit_entries(fits)
    groups, by_key, single = {}, {}, 0
    for c in _curves(records, converged_only):
        ok = np.isfinite(c.mean) & (c.mean > 0)
        if ok.sum() >= 2:  # a curve against depth needs two depths
            groups[c.key] = (c.depths[ok], c.mean[ok], c.error_bar[ok])
            by_key[c.key] = c
        single += int(ok.sum() == 1)
    if not groups:
        raise NoFigure("no curve with a positive final loss at two depths or more")
    keys = list(groups)
    models = ["linear", "softmax"] + sorted({k[0] for k in keys} - {"linear", "softmax"})  # a user's models too
    panels = [
        (model, kind, mine)
        for model in models
        for kind in ("easy", "difficult")
        if (mine := [k for k in keys if k[0] == model and ((k[2] in _EASY) == (kind == "easy"))])
    ]
    # labels over the whole figure without the model (each panel holds one model): a series keeps its
    # label and colour in every panel
    labels, shared = series_labels([by_key[k] for k in keys])
    colours = series_colours(labels.values())
    fig, axes = panel_grid(len(panels), 3.8, 3.3)
    dashed = False
    for ax, (model, kind, mine) in zip(axes, panels):
        ax.set_title(f"{_panel_maps(model, mine)}, {kind} task")
        ax.set_yscale("log")
        for key in sorted(mine, key=lambda k: labels[k]):
            depths, m, se = groups[key]
            colour = colours[labels[key]]
            ax.errorbar(
                depths, m, yerr=error_bars(se), color=colour, marker="o", ls="-", lw=1.0, ms=3.5, capsize=2,
                label=labels[key],
            )  # fmt: skip
            fit = next((p for s, p in entries if _match(s, key)), None)
            if fit is not None:
                grid = np.geomspace(min(depths), max(depths), 100)
                curve = fit["L0"] + fit["c"] * grid ** (-fit["alpha"])
                ax.plot(grid[curve > 0], curve[curve > 0], ls="--", lw=1.2, color=colour)
                dashed = True
            inverse_depth_guide(ax, depths, m, colour)
        depth_axis(ax, [L for k in mine for L in groups[k][0]])
        ax.set_ylabel("loss R_L")
        ax.grid(True, which="both", alpha=0.25)
    legend_below(fig, extra=[(Line2D([], [], ls="--", color="0.3"), "fitted law (dashed)")] if dashed else ())
    left_out = f" ({single} single-depth curve{'s' if single > 1 else ''} not drawn)" if single else ""
    fig.suptitle("Loss against depth" + (f": {shared}" if shared else "") + left_out, fontsize=9, wrap=True)
    return fig


def draw_mode_curves(records, converged_only: bool = False, max_modes: int = 6) -> Figure:
    recs = _records(records, converged_only)

    def modes(r):
        ml = r.get("mode_losses")
        if ml is None:
            return None
        arr = np.asarray(ml, dtype=float)
        return arr if arr.ndim == 1 and arr.size >= 1 else None

    groups = _group(recs, modes)
    if not groups:
        raise NoFigure("no runs carry per-mode losses (mode_losses)")
    titles = {"linear": "linear attention (sequential)", "softmax": "softmax attention (parallel)"}
    chosen = []
    for model in ("linear", "softmax"):
        mine = [k for k in groups if k[0] == model and k[1] == "base"] or [k for k in groups if k[0] == model]
        if mine:  # the series with most depths, preferring the easy task where the mode picture is exact
            chosen.append(max(mine, key=lambda k: (len(groups[k]), k[2] in _EASY, -k[4], str(k))))
    if not chosen:
        raise NoFigure("no linear or softmax runs with per-mode losses")
    fig, axes = panel_grid(len(chosen), 3.8, 3.4)
    from matplotlib import colormaps

    cmap = colormaps["viridis"]
    for ax, key in zip(axes, chosen):
        depths = sorted(groups[key])
        r0 = groups[key][depths[0]][0][1]
        t = r0["config"]["task"]
        d = min(len(v) for L in depths for v, _ in groups[key][L])
        ref = PowerLawSpectrum(key.a, key.b, d, float(t.get("c_lambda") or 1.0), float(t.get("c_omega") or 1.0)).weights
        idx = np.unique(np.round(np.geomspace(1, d, min(max_modes, d))).astype(int)) - 1
        lowest = math.inf
        for m in idx:
            y = np.array([np.mean([v[m] for v, _ in groups[key][L]]) for L in depths]) / ref[m]
            ok = y > 0
            # the colour says the mode's place in the spectrum (log k / log d), the same in every panel
            shade = math.log(m + 1) / math.log(d) if d > 1 else 0.0
            ax.plot(np.array(depths)[ok], y[ok], marker="o", ms=3, color=cmap(0.9 * shade), label=f"mode {m + 1}")
            lowest = min(lowest, float(np.min(y[ok]))) if np.any(ok) else lowest
        depth_axis(ax, depths)
        ax.set_yscale("log")
        # a mode learnt to round-off would squash the others: show six decades at most
        if math.isfinite(lowest):
            ax.set_ylim(bottom=max(lowest, 1e-6 * ax.get_ylim()[1]) / 2)
        ax.set_ylabel(r"mode loss / $(\lambda_k \omega_k)$")
        ax.grid(True, which="both", alpha=0.25)
        task = task_name(key.task, key.k)
        ax.set_title(f"{titles[key.model]}\n{task} (a,b)=({key.a:g},{key.b:g}) d={key.d}", fontsize=9)
    legend_below(fig)
    fig.suptitle("Per-mode loss against depth (mean over seeds)", fontsize=10)
    return fig


def draw_decomposition(records, converged_only: bool = False) -> Figure:
    recs = _records(records, converged_only)

    def parts(r):
        A, C = finite_or_nan(r.get("A_L")), finite_or_nan(r.get("C_L"))
        if int(r["config"]["model"]["depth"]) < 2 or not (math.isfinite(A) and math.isfinite(C)):
            return None  # C_L needs two layers
        return (C, A - C, finite_or_nan(r.get("final_loss")))

    groups = _group(recs, parts)
    if not groups:
        raise NoFigure("no runs of depth >= 2 with finite A_L and C_L")
    by_key = {c.key: c for c in curves(recs)}
    keys = sorted(groups, key=str)
    labels, shared = series_labels([by_key[k] for k in keys])
    if len({k.model for k in keys}) > 1:
        labels = {k: f"{k.model} {lab}" for k, lab in labels.items()}
    colours = series_colours(labels.values())
    lines: list[list] = [[], []]  # per panel: (key, depths, mean, se)
    tied = False
    for key in keys:
        depths = np.array(sorted(groups[key]))
        R = np.array([np.nanmean([v[2] for v, _ in groups[key][L]]) for L in depths])
        for j in (0, 1):
            vals = [[v[j] for v, _ in groups[key][L]] for L in depths]
            m = np.array([np.mean(v) for v in vals])
            se = np.array([np.std(v, ddof=1) / math.sqrt(len(v)) if len(v) > 1 else math.nan for v in vals])
            keep = np.ones(len(m), bool)
            if j == 1:  # tied layers disagree by rounding only (1e-15): zero, which a log axis cannot show
                keep = np.abs(m) > 1e-9 * np.abs(R)
                tied |= not keep.all()
            if keep.any():
                lines[j].append((key, depths[keep], m[keep], se[keep], R))
    panels = [j for j in (0, 1) if lines[j]]  # no empty panel: tied layers alone have no disagreement
    fig, axes = panel_grid(len(panels), 3.8, 3.4)
    titles = (r"shared error $C_L$ (dash-dot: $R_L$)", r"layer disagreement $A_L - C_L$")
    all_depths = [L for key in keys for L in groups[key]]
    for ax, j in zip(axes, panels):
        any_neg = False
        for key, depths, m, se, R in lines[j]:
            colour = colours[labels[key]]
            ax.errorbar(
                depths, m, yerr=error_bars(list(se)), color=colour, marker="o", ms=3.5, capsize=2, lw=1,
                label=labels[key],
            )  # fmt: skip
            any_neg |= bool(np.any(m <= 0))
            if j == 0:
                ax.plot(depths, R, color=colour, ls="-.", lw=0.9)
        ax.set_title(titles[j] + ("\n(tied layers: 0, not drawn)" if j == 1 and tied else ""), fontsize=9)
        depth_axis(ax, all_depths)
        if not any_neg:
            ax.set_yscale("log")
        ax.set_ylabel(("C_L", "A_L - C_L")[j])
        ax.grid(True, which="both", alpha=0.25)
    legend_below(fig)
    fig.suptitle(
        r"$R_L = C_L + (A_L - C_L)/L$: the two terms against depth" + (f"\n{shared}" if shared else ""), fontsize=10
    )
    return fig


def draw_excess_vs_depth(
    rows, ylabel: str = "R_L - R_inf (fitted)", empty: str = "no curve with an identified fit", signed: bool = False
) -> Figure:
    """Excess against depth, log-log, one panel per task (two to a row), one colour and one legend label
    per series, and per curve a dotted 1/L guide ``c/L`` through its first point (the excess of an
    exact ``R_inf + c/L``). ``signed``: points at or below 0 are drawn too, on a symmetric-log axis
    (linear near 0), instead of being left out and counted in the panel's title."""
    rows = as_list("rows", rows, "dicts with series, task, depths, excess, se")
    per_task: dict = defaultdict(list)
    for r in rows:
        L = np.asarray(r["depths"], float)
        y = np.asarray(r["excess"], float)
        se = np.asarray(r.get("se", [np.nan] * len(L)), float)
        # log axes: a point at or below 0 is left out (and counted), unless the axis is signed
        ok = np.isfinite(y) & ((y > 0) | signed)
        per_task[str(r.get("task"))].append((str(r.get("series")), L, y, se, ok))
    tasks = sorted(t for t, got in per_task.items() if any(ok.any() for *_, ok in got))  # no empty panel
    if not tasks:
        below = sum(int((~ok & np.isfinite(y)).sum()) for got in per_task.values() for _, _, y, _, ok in got)
        raise NoFigure(
            f"every excess is at or below 0 ({below} points): nothing to draw on a log axis" if below else empty
        )
    fig, axes = panel_grid(len(tasks), 3.8, 3.3)
    names = sorted({name for t in tasks for name, *_ in per_task[t]})
    colours = dict(zip(names, palette(len(names))))
    for ax, task in zip(axes, tasks):
        drawn = np.concatenate([y[ok] for _, _, y, _, ok in per_task[task]])
        left_out = sum(int((~ok & np.isfinite(y)).sum()) for _, _, y, _, ok in per_task[task])
        if np.all(drawn > 0):
            ax.set_yscale("log")
        else:  # a log axis cannot show 0 or below: linear within the smallest |value|
            ys = np.abs(drawn)
            ax.set_yscale("symlog", linthresh=float(ys[ys > 0].min()) if np.any(ys > 0) else 1e-3)
            ax.axhline(0.0, color="0.5", lw=0.6)
        for name, L, y, se, ok in sorted(per_task[task], key=lambda t: t[0]):
            if not ok.any():
                continue
            colour = colours[name]
            ax.errorbar(L[ok], y[ok], yerr=error_bars(se[ok]), marker="o", ms=3.5, capsize=2, color=colour, label=name)
            inverse_depth_guide(ax, L[ok], y[ok], colour, r_inf=0.0)
        depth_axis(ax, sorted({float(x) for _, L, _, _, ok in per_task[task] for x in L[ok]}))
        ax.set_ylabel(ylabel)
        ax.set_title(task + (f" ({left_out} points at or below 0 not drawn)" if left_out else ""), fontsize=9)
        ax.grid(True, which="both", alpha=0.2)
    legend_below(fig)
    return fig


def palette(n: int) -> list:
    """``n`` distinct colours: matplotlib's tab10, tab20 beyond ten, viridis beyond twenty."""
    import matplotlib

    if n <= 20:
        cmap = matplotlib.colormaps["tab10" if n <= 10 else "tab20"]
        return [cmap(i) for i in range(n)]
    return [matplotlib.colormaps["viridis"](i / (n - 1)) for i in range(n)]


__all__ = [
    "NoFigure",
    "as_list",
    "mappings",
    "finite_or_nan",
    "series_labels",
    "series_colours",
    "panel_grid",
    "depth_axis",
    "error_bars",
    "to_png",
    "new_figure",
    "palette",
    "draw_overview",
    "draw_mode_curves",
    "draw_decomposition",
    "draw_excess_vs_depth",
]
