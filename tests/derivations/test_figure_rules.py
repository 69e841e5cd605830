"""The rules every report figure keeps, checked on the drawn matplotlib figure of each drawing (the
library's kinds and each study's own), on synthetic data: no panel without data, one legend label
per series, legends outside every panel's data area and at least 8 pt, titles inside the figure, a
width that stays readable in the site's 690-px column, and a dotted 1/L guide on every plot of a
loss against depth. A figure that breaks each rule is caught (the checker can fail)."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest
from matplotlib.figure import Figure
from synthetic import curve, protocol_records, record

from depthscale.derivations.analysis.curve import Curve, CurveKey, curves
from depthscale.derivations.claims.evidence import Evidence
from depthscale.derivations.report import figures
from depthscale.derivations.report.plots import COLUMN_PX, GUIDE_GID, inverse_depth_guide, legend_below
from depthscale.derivations.report.png import to_png
from depthscale.sims.protocols import PROTOCOLS
from depthscale.studies._template import sections as template
from depthscale.studies.core import drawings as core
from depthscale.studies.linear_start.drawings import draw_optimum_vs_depth
from depthscale.studies.nonlinearities import sections as nonlin
from depthscale.studies.paper_curves import objections as ob

MAX_WIDTH_IN = 7.6  # shrunk to 690 px, 8-pt text is still 10 px tall


def _has_data(ax) -> bool:
    """A line with a finite point, or a collection (error bars, bands, scatter) with one."""
    for ln in ax.lines:
        if ln.get_gid() == GUIDE_GID:
            continue
        x, y = (np.asarray(v, dtype=float) for v in ln.get_data())
        if x.size and np.any(np.isfinite(x) & np.isfinite(y)):
            return True
    return any(len(c.get_paths()) or len(c.get_offsets()) for c in ax.collections)


def _overlap(a, b) -> bool:
    return a.x0 < b.x1 - 1 and b.x0 < a.x1 - 1 and a.y0 < b.y1 - 1 and b.y0 < a.y1 - 1


def problems(fig: Figure) -> list[str]:
    """What the figure breaks, as sentences (empty: it keeps every rule)."""
    to_png(fig)  # lays out and draws the figure as the report does
    renderer = fig.canvas.get_renderer()
    out = []
    w = fig.get_figwidth()
    if w > MAX_WIDTH_IN + 1e-9:
        out.append(f"{w:g} in wide: shrunk to {COLUMN_PX} px its text is unreadable")
    axes = [ax for ax in fig.axes if ax.get_visible()]
    for ax in axes:
        if not _has_data(ax):
            out.append(f"panel {ax.get_title()!r} holds no data")
        loss = "R_L" in ax.get_ylabel() and "depth" in ax.get_xlabel()
        if loss and not any(ln.get_gid() == GUIDE_GID for ln in ax.lines):
            out.append(f"panel {ax.get_title()!r} plots a loss against depth without a 1/L guide")
    legends = [lg for lg in [*fig.legends, *(ax.get_legend() for ax in axes)] if lg is not None]
    labels = [t.get_text() for lg in legends for t in lg.get_texts()]
    if dup := [lab for lab, n in Counter(labels).items() if n > 1]:
        out.append(f"legend labels repeated: {dup}")
    frame = fig.bbox
    for lg in legends:
        box = lg.get_window_extent(renderer)
        if any(_overlap(box, ax.get_window_extent(renderer)) for ax in axes):
            out.append("a legend lies over a panel")
        if min((t.get_fontsize() for t in lg.get_texts()), default=99) < 8:
            out.append("legend text under 8 pt")
        if box.x0 < -1 or box.y0 < -1 or box.x1 > frame.x1 + 1 or box.y1 > frame.y1 + 1:
            out.append("a legend is clipped")
    titles = [ax.title for ax in axes] + ([fig._suptitle] if fig._suptitle is not None else [])
    for t in titles:
        if not t.get_text():
            continue
        box = t.get_window_extent(renderer)
        if box.x0 < -1 or box.x1 > frame.x1 + 1 or box.y1 > frame.y1 + 1:
            out.append(f"title {t.get_text()!r} is clipped")
    return out


# ------------------------------------------------------------------------------------ synthetic data
def _records():
    """Linear and softmax runs on the easy and top-2 tasks, two spectra, with A_L, C_L and mode losses."""
    out = []
    for model, task, a, b in (("linear", "easy-exact", 2.0, 1.0), ("softmax", "topk", 0.5, 0.5)):
        for a_, b_ in ((a, b), (a / 2, b)):
            for L in (1, 2, 4, 8, 16):
                for s in (0, 1, 2):
                    R = 0.3 + 0.5 / L + 0.003 * s
                    C = 0.3 + 0.1 / L
                    k = np.arange(1, 9, dtype=float)
                    rec = record(model, task, a=a_, b=b_, d=8, P=64, depth=L, seed=s, loss=R)
                    rec.update(A_L=C + L * (R - C), C_L=C if L > 1 else None, mode_losses=(k**-a_ * k**-b / L).tolist())
                    out.append(rec)
    return out


def _protocol_curves():
    """Five protocols of one task: labels must name the protocol only."""
    out = []
    for i, p in enumerate(PROTOCOLS[:5]):
        model = {"model": "softmax", "init_scale": p.init_scale, "width": p.width or None}
        out += protocol_records(
            p, model, lambda L, w, i=i: {"final_loss": (0.2 + (0.1 + 0.02 * i) / L) * w}, [1, 2, 4, 8, 16]
        )
    return curves(out)


def _excess_rows(signed=False):
    rows = []
    for task in ("top-2 (0,0)", "top-16 (0,0.25)", "top-2 (0.5,0.5)"):
        for j, name in enumerate(("cosine", "constant-3e-3", "ensemble-control")):
            L = [1, 2, 4, 8, 16]
            ex = [(0.05 + 0.01 * j) / x - (0.004 if signed else 0.0) for x in L]
            rows.append({"series": name, "task": task, "depths": L, "excess": ex, "se": [1e-3] * 5, "alpha": 1.0})
    return rows


def _optimum_rows():
    rows = []
    for label in ("(2,1) d=16 P=64", "(1.5,1) d=16 P=64", "(3,1) d=16 P=64"):
        L = [1, 2, 4, 8]
        rows.append(
            {
                "label": label,
                "depths": L,
                "seeds": {"0": [0.5 / x**0.7 for x in L], "1": [0.52 / x**0.7 for x in L]},
                "optimum": {x: (0.4 / x**0.8, 0.01, 0.38 / x**0.8, 0.45 / x**0.7) for x in L},
                "laws": {
                    "equal step (optimal step)": (L, [0.45 / x**0.6 for x in L]),
                    "free continuum": (L, [0.3 / x for x in L]),
                },
            }
        )
    return rows


def _nonlinearity_evidence():
    from depthscale.sims.config import ModelConfig, RunConfig, TaskConfig, TrainConfig

    recs = []
    for j, attention in enumerate(("softmax", "sparsemax", "relu")):
        for k in (2, 16):
            for s in (0, 1):
                for L in (1, 2, 4, 8, 16):
                    cfg = RunConfig(
                        TaskConfig(task="topk", k=k, d=16, P=128),
                        ModelConfig(depth=L, attention=attention),
                        TrainConfig(lr=3e-3, batch=1024, steps=4000, schedule="cosine"),
                    )
                    R = 0.4 + 0.1 * j + 0.2 / L + 0.001 * s
                    C = 0.4 + 0.1 * j
                    recs.append(
                        {
                            "key": f"{attention}-{k}-{L}-{s}",
                            "status": "ok",
                            "seed": s,
                            "converged": True,
                            "config": cfg.to_dict(),
                            "final_loss": R,
                            "final_loss_se": 1e-3,
                            "A_L": C + L * (R - C),
                            "C_L": C,
                            "gap": L * (R - C) if L > 1 else None,
                        }  # fmt: skip
                    )
    return Evidence(curves(recs))


def _objections():
    cs = []
    for lr, shift in ((1e-3, 0.01), (3e-3, 0.0), (1e-2, 0.005)):
        L = np.array([1, 2, 4, 16, 64], dtype=float)
        loss = 0.35 + shift + 0.02 / L + 1e-4 * np.arange(3)[:, None]
        train = (("batch", 1024), ("lr", lr), ("schedule", "cosine"), ("steps", 4000))
        key = CurveKey("softmax", "base", "topk", 2, 0.5, 0.5, 16, 128, None, None, None, 0.3, "float64", train)
        cs.append(replace(Curve.from_arrays(L.astype(int), loss, contexts=10240), key=key, label=f"lr={lr:g}"))
    return ob.objections(SimpleNamespace(curves=cs))


DRAWINGS = {
    "overview": lambda: figures.build("overview", _records())[0],
    "overview of five protocols": lambda: figures.build("overview", _protocol_curves())[0],
    "mode_curves": lambda: figures.build("mode_curves", _records())[0],
    "decomposition": lambda: figures.build("decomposition", _records())[0],
    "excess_vs_depth": lambda: figures.build("excess_vs_depth", _excess_rows())[0],
    "signed_excess_vs_depth": lambda: figures.build("signed_excess_vs_depth", _excess_rows(signed=True))[0],
    "core exponents": lambda: core.draw_exponents_vs_zeta(
        [{"a": 2.0, "b": 1.0, "alpha": 0.6, "series": "linear"}, {"a": 1.5, "b": 1.0, "alpha": 1.0, "series": "x"}]
    ),
    "core floors": lambda: core.draw_floors(
        [
            {"label": "(0,0)", "measured": 1.9, "reference": 1.95, "group": "g1"},
            {"label": "(1,1)", "measured": 0.4, "reference": 0.41},
        ]
    ),
    "core room": lambda: core.draw_room_for_depth(
        [
            {"spectrum": "(0,0) top-2 d=16", "L0": 1.9, "single": 1.98, "mixture": 1.93, "single_diff": -0.07},
            {"spectrum": "(0.5,0.5) top-2 d=16", "L0": 0.3, "single": 0.31, "mixture": 0.305},
        ]  # fmt: skip
    ),
    "linear optimum": lambda: draw_optimum_vs_depth(_optimum_rows()),
    "nonlinearities loss": lambda: nonlin.draw_loss(nonlin._by_task(_nonlinearity_evidence())),
    "nonlinearities terms": lambda: nonlin.draw_terms(nonlin._by_task(_nonlinearity_evidence())),
    "objections": lambda: ob.draw_objections(_objections()),
    "template": lambda: template.draw_loss(
        curves(curve(lambda L: 0.2 + 1 / L, model="linear", task="easy-exact", a=2.0, b=1.0))
    ),
}


@pytest.mark.parametrize("name", sorted(DRAWINGS))
def test_every_report_drawing_keeps_the_figure_rules(name):
    fig = DRAWINGS[name]()
    assert isinstance(fig, Figure), name
    assert problems(fig) == []


def test_a_legend_says_only_what_differs_and_the_title_what_is_shared():
    fig = DRAWINGS["overview of five protocols"]()
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert sorted(lab for lab in labels if "protocol" in lab) == sorted(f"{p.name} protocol" for p in PROTOCOLS[:5])
    assert all("(a,b)" not in lab and "top-2" not in lab for lab in labels)
    assert "top-2 (a,b)=(0,0) d=16 P=128" in fig._suptitle.get_text()
    colours = {
        tuple(ln.get_color()) for ln in fig.axes[0].lines if ln.get_gid() != GUIDE_GID and len(ln.get_xdata()) > 1
    }
    assert len(colours) == 5  # one colour per protocol


def test_the_guide_is_r_inf_plus_c_over_l_through_the_ends_or_the_given_plateau():
    ax = Figure().subplots()
    L, y = np.array([1, 2, 4, 8, 16.0]), np.array([1.5, 1.1, 0.95, 0.9, 0.86])
    gx, gy = inverse_depth_guide(ax, L, y, "k").get_data()
    c = (y[0] - y[-1]) / (1 - 1 / 16)  # by hand: R_inf + c/L through (1, 1.5) and (16, 0.86)
    assert gy == pytest.approx(y[-1] - c / 16 + c / gx, rel=1e-12)
    gx, gy = inverse_depth_guide(ax, L, y, "k", r_inf=0.8).get_data()
    assert gy == pytest.approx(0.8 + 0.7 / gx, rel=1e-12)
    assert inverse_depth_guide(ax, [4.0], [1.0], "k") is None


def test_the_checker_catches_each_broken_rule():
    fig = Figure(figsize=(11, 4), layout="constrained")
    a, b = fig.subplots(1, 2)
    a.plot([1, 2, 4], [1.0, 0.6, 0.5], label="softmax")
    a.plot([1, 2, 4], [1.1, 0.7, 0.6], label="softmax")
    a.set_xlabel("depth L")
    a.set_ylabel("loss R_L")
    a.legend(fontsize=6)
    got = problems(fig)
    assert any("wide" in p for p in got)
    assert any("holds no data" in p for p in got)
    assert any("without a 1/L guide" in p for p in got)
    assert any("repeated" in p for p in got)
    assert any("over a panel" in p for p in got)
    assert any("under 8 pt" in p for p in got)
    ok = Figure(figsize=(6, 4), layout="constrained")
    ax = ok.subplots()
    ax.set_yscale("log")
    ax.plot([1, 2, 4], [1.0, 0.6, 0.5], label="softmax")
    inverse_depth_guide(ax, [1, 2, 4], [1.0, 0.6, 0.5], "C0")
    ax.set_xlabel("depth L")
    ax.set_ylabel("loss R_L")
    legend_below(ok)
    assert problems(ok) == []
    with pytest.raises(ValueError, match="fontsize"):
        legend_below(ok, fontsize=6)


def test_sections_take_records_only_and_refuse_anything_else_naming_the_field():
    from depthscale.derivations.report.entries import FigureEntry, Table
    from depthscale.derivations.study import Sections

    table = Table("t", ["a"], [[1]])
    entry = FigureEntry("f", lambda: Figure())
    assert Sections(tables=[table], figures=[entry], results=(table,)).figures == (entry,)
    for field, value in (
        ("tables", {"title": "t", "columns": ["a"], "rows": [[1]]}),
        ("results", {"title": "t", "columns": ["a"], "rows": []}),
        ("figures", {"name": "f", "caption": "c", "png": None, "why_missing": "none"}),
        ("figures", table),
    ):
        with pytest.raises(ValueError, match=rf"^{field}\[0\]=.*: must be a (Table|FigureEntry) record") as err:
            Sections(**{field: (value,)})
        assert "\n" not in str(err.value)


def test_an_overview_panel_is_titled_by_the_maps_it_holds():
    from depthscale.derivations.analysis.curve import CurveKey
    from depthscale.derivations.report.figure_drawings import _panel_maps

    def key(variant):
        return CurveKey("softmax", variant, "topk", 2, 0.0, 0.0, 16, 128, None, None, None, None, None, ())

    assert _panel_maps("softmax", [key("base"), key("tied")]) == "softmax attention"
    assert _panel_maps("softmax", [key("base"), key("sparsemax"), key("relu")]) == "attention: softmax, relu, sparsemax"
    assert _panel_maps("softmax", [key("sigmoid")]) == "attention: sigmoid"
