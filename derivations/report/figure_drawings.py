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

from ...theory.spectra import PowerLawSpectrum
from ..analysis.curve import EASY_TASKS as _EASY
from ..analysis.curve import Curve, CurveKey, curve_key, curves
from .entries import NoFigure
from .plots import legend_below
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


def spectrum_colours(keys):
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


def empty_panel(ax, text: str):
    """A panel that says why it holds nothing."""
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, color="0.4")
    ax.set_xticks([])
    ax.set_yticks([])


# ----------------------------------------------------------------------------------------------
# builders: return a Figure or raise NoFigure(reason)


def _curves(data, converged_only: bool) -> list:
    """Curves from a list of :class:`Curve` objects or of run records (grouped by ``curve_key``)."""
    items = as_list("records", data, "run-record dicts or curves")
    if items and all(isinstance(c, Curve) for c in items):
        return items
    return curves(_records(items, converged_only))


def draw_overview(records, fits=None, converged_only: bool = False) -> Figure:
    """Loss against depth, one panel per (model, task kind) that has runs (no empty panel), one legend
    label per series (series that would read alike are told apart by their settings)."""
    entries = _fit_entries(fits)
    groups, full = {}, {}
    for c in _curves(records, converged_only):
        ok = np.isfinite(c.mean) & (c.mean > 0)
        if ok.any():
            groups[c.key] = (c.depths[ok], c.mean[ok], c.error_bar[ok])
            full[c.key] = c.label
    if not groups:
        raise NoFigure("no finished runs with a positive final loss")
    keys = list(groups)
    colours, markers = spectrum_colours(keys), _markers(keys)
    show = (
        {"k"}
        | ({"variant"} if _distinct(keys, 1) else set())
        | ({"dP"} if _distinct(keys, 6) or _distinct(keys, 7) else set())
    )
    show |= {"task"} if len({k[2] for k in keys if k[2] in _EASY}) > 1 else set()
    panels = [
        (model, kind, mine)
        for model in ("linear", "softmax")
        for kind in ("easy", "difficult")
        if (mine := [k for k in keys if k[0] == model and ((k[2] in _EASY) == (kind == "easy"))])
    ]
    cols = 1 if len(panels) == 1 else 2
    rows = (len(panels) + cols - 1) // cols
    fig, axes = new_figure(5.5 * cols, 4.25 * rows, rows, cols)
    flat = list(axes.flat)
    for ax in flat[len(panels) :]:
        fig.delaxes(ax)
    for ax, (model, kind, mine) in zip(flat, panels):
        ax.set_title(f"{model} attention, {kind} task")
        labels = {key: _label(key, show) for key in mine}
        seen = Counter(labels.values())
        for key in sorted(mine, key=str):
            if seen[labels[key]] > 1:  # alike at this level of detail: add the settings that tell them apart
                settings = full[key].split(" [", 1)
                labels[key] += f" [{settings[1]}" if len(settings) == 2 else f" ({key.variant})"
        for key in sorted(mine, key=str):
            depths, m, se = groups[key]
            colour = colours[(key.a, key.b)]
            marker = markers[_marker_key(key)]
            ax.errorbar(
                depths,
                m,
                yerr=error_bars(se),
                color=colour,
                marker=marker,
                ls="-",
                lw=1.0,
                ms=4,
                capsize=2,
                label=labels[key],
            )
            fit = next((p for s, p in entries if _match(s, key)), None)
            if fit is not None:
                grid = np.geomspace(min(depths), max(depths), 100)
                curve = fit["L0"] + fit["c"] * grid ** (-fit["alpha"])
                ax.plot(grid[curve > 0], curve[curve > 0], ls="--", lw=1.2, color=colour)
        depth_axis(ax, [L for k in mine for L in groups[k][0]])
        ax.set_yscale("log")
        ax.set_ylabel("loss R_L")
        ax.grid(True, which="both", alpha=0.25)
        ax.legend(fontsize=7, loc="best")
    fig.suptitle("Loss against depth (mean over seeds, error bars one s.e.; fits dashed)")
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
    fig, axes = new_figure(11, 4.6, 1, 2)
    titles = {"linear": "linear attention (sequential)", "softmax": "softmax attention (parallel)"}
    drawn = False
    for j, model in enumerate(("linear", "softmax")):
        ax = axes[0, j]
        ax.set_title(titles[model])
        mine = [k for k in groups if k[0] == model and k[1] == "base"] or [k for k in groups if k[0] == model]
        if not mine:
            empty_panel(ax, "no runs with mode losses")
            continue
        # The series with most depths, preferring the easy task where the mode picture is exact.
        key = max(mine, key=lambda k: (len(groups[k]), k[2] in _EASY, -k[4], str(k)))
        depths = sorted(groups[key])
        r0 = groups[key][depths[0]][0][1]
        t = r0["config"]["task"]
        d = min(len(v) for L in depths for v, _ in groups[key][L])
        ref = PowerLawSpectrum(key.a, key.b, d, float(t.get("c_lambda") or 1.0), float(t.get("c_omega") or 1.0)).weights
        idx = np.unique(np.round(np.geomspace(1, d, min(max_modes, d))).astype(int)) - 1
        from matplotlib import colormaps

        cmap = colormaps["viridis"]
        lowest = math.inf
        for n, m in enumerate(idx):
            y = np.array([np.mean([v[m] for v, _ in groups[key][L]]) for L in depths]) / ref[m]
            ok = y > 0
            ax.plot(
                np.array(depths)[ok],
                y[ok],
                marker="o",
                ms=3,
                color=cmap(n / max(len(idx) - 1, 1)),
                label=f"mode {m + 1}",
            )
            lowest = min(lowest, float(np.min(y[ok]))) if np.any(ok) else lowest
        depth_axis(ax, depths)
        ax.set_yscale("log")
        # a mode learnt to round-off would squash the others: show six decades at most
        if math.isfinite(lowest):
            ax.set_ylim(bottom=max(lowest, 1e-6 * ax.get_ylim()[1]) / 2)
        ax.set_ylabel(r"mode loss / $(\lambda_k \omega_k)$")
        ax.grid(True, which="both", alpha=0.25)
        ax.legend(fontsize=7, title=_label(key, {"k", "task", "dP", "variant"}), title_fontsize=7)
        drawn = True
    if not drawn:
        raise NoFigure("no linear or softmax runs with per-mode losses")
    fig.suptitle("Per-mode loss against depth (mean over seeds)")
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
    keys = sorted(groups, key=str)
    colours, markers = spectrum_colours(keys), _markers(keys)
    show = {"k"} | ({"model"} if _distinct(keys, 0) else set()) | ({"variant"} if _distinct(keys, 1) else set())
    show |= {"dP"} if _distinct(keys, 6) or _distinct(keys, 7) else set()
    fig, axes = new_figure(11, 4.6 + 0.16 * len(keys), 1, 2)
    any_neg = tied = False
    for key in keys:
        depths = np.array(sorted(groups[key]))
        colour, marker = colours[(key.a, key.b)], markers[_marker_key(key)]
        R = np.array([np.nanmean([v[2] for v, _ in groups[key][L]]) for L in depths])
        for j in (0, 1):
            vals = [[v[j] for v, _ in groups[key][L]] for L in depths]
            m = np.array([np.mean(v) for v in vals])
            se = np.array([np.std(v, ddof=1) / math.sqrt(len(v)) if len(v) > 1 else math.nan for v in vals])
            any_neg |= j == 0 and bool(np.any(m <= 0))
            keep = np.ones(len(m), bool)
            if j == 1:  # tied layers disagree by rounding only (1e-15): zero, which a log axis cannot show
                keep = np.abs(m) > 1e-9 * np.abs(R)
                tied |= not keep.all()
            if not keep.any():
                continue
            axes[0, j].errorbar(
                depths[keep],
                m[keep],
                yerr=error_bars(list(se[keep])),
                color=colour,
                marker=marker,
                ms=4,
                capsize=2,
                lw=1,
                label=_label(key, show) if j == 0 else None,
            )
        axes[0, 0].plot(depths, R, color=colour, ls=":", lw=1)
    axes[0, 0].set_title(r"cross-layer error covariance $C_L$ (dotted: $R_L$)")
    axes[0, 1].set_title(r"layer disagreement $A_L - C_L$" + (" (tied layers: 0, not drawn)" if tied else ""))
    all_depths = [L for key in keys for L in groups[key]]
    for j, ax in enumerate(axes[0]):
        depth_axis(ax, all_depths)
        if j == 1 or not any_neg:
            ax.set_yscale("log")
        ax.grid(True, which="both", alpha=0.25)
    legend_below(fig, ncol=min(3, len(keys)), fontsize=7)
    fig.suptitle(r"$R_L = C_L + (A_L - C_L)/L$: the two terms against depth")
    return fig


def draw_excess_vs_depth(
    rows, ylabel: str = "R_L - R_inf (fitted)", empty: str = "no curve with an identified fit", signed: bool = False
) -> Figure:
    """Excess against depth, log-log, one panel per task, one colour per series. ``signed``: points at or below 0 are drawn
    too, on a symmetric-log axis (linear near 0), instead of being left out and counted."""
    rows = as_list("rows", rows, "dicts with series, task, depths, excess, se")
    tasks = sorted({str(r.get("task")) for r in rows})
    if not tasks:
        raise NoFigure(empty)
    fig, axes = new_figure(4.4 * len(tasks), 4.2, 1, len(tasks))
    names = sorted({str(r.get("series")) for r in rows})
    colours = dict(zip(names, palette(len(names))))
    for ax, task in zip(axes[0], tasks):
        Ls_all, ys_all = [], []
        for r in (r for r in rows if str(r.get("task")) == task):
            L = np.asarray(r["depths"], float)
            y = np.asarray(r["excess"], float)
            se = np.asarray(r.get("se", [np.nan] * len(L)), float)
            # log axes: a point at or below 0 is left out (and counted), unless the axis is signed
            ok = np.isfinite(y) & ((y > 0) | signed)
            ax.errorbar(
                L[ok],
                y[ok],
                yerr=error_bars(se[ok]),
                marker="o",
                ms=4,
                capsize=2,
                color=colours[str(r["series"])],
                label=f"{r['series']}"
                + (f" (alpha={finite_or_nan(r['alpha']):.2f})" if r.get("alpha") is not None else "")
                + (f" ({int((~ok).sum())} at or below 0, not drawn)" if (~ok).any() else ""),
            )
            Ls_all.extend(L[ok])
            ys_all.extend(y[ok])
            if ok.any():
                j = int(np.flatnonzero(ok)[0])
                guide_at = (L[j], y[j])
                ax.plot(L, guide_at[1] * guide_at[0] / L, ls=":", lw=0.8, color=colours[str(r["series"])])
        ax.set_xscale("log")
        ys = np.abs(np.asarray(ys_all, float))
        if ys.size and np.all(np.asarray(ys_all) > 0):
            ax.set_yscale("log")
        else:  # a log axis cannot show 0 or below (nor an empty panel): linear within the smallest |value|
            ax.set_yscale("symlog", linthresh=float(ys[ys > 0].min()) if np.any(ys > 0) else 1e-3)
            ax.axhline(0.0, color="0.5", lw=0.6)
        if Ls_all:
            depth_axis(ax, sorted(set(Ls_all)))
        ax.set_xlabel("depth L")
        ax.set_ylabel(ylabel)
        ax.set_title(task, fontsize=9)
        ax.grid(True, which="both", alpha=0.2)
        ax.legend(fontsize=7)
    return fig


def palette(n: int) -> list:
    """``n`` colours of matplotlib's tab10 cycle."""
    import matplotlib

    cmap = matplotlib.colormaps["tab10"]
    return [cmap(i % 10) for i in range(n)]


__all__ = [
    "NoFigure",
    "as_list",
    "mappings",
    "finite_or_nan",
    "spectrum_colours",
    "depth_axis",
    "error_bars",
    "to_png",
    "new_figure",
    "empty_panel",
    "palette",
    "draw_overview",
    "draw_mode_curves",
    "draw_decomposition",
    "draw_excess_vs_depth",
]
