"""Figures: PNGs that decode, plotted values checked against the synthetic laws the records were drawn from."""

from __future__ import annotations

import io
import math

import numpy as np
import pytest
from PIL import Image
from synthetic import record

from depthscale.derivations.analysis import reference_values
from depthscale.derivations.analysis.curve import curve_key, curves
from depthscale.derivations.analysis.fits import FitResult
from depthscale.derivations.report import figures
from depthscale.derivations.report.entries import FigureEntry, NoFigure, draw_entry
from depthscale.derivations.report.figure_drawings import to_png
from depthscale.studies.core import drawings as core  # the core study's own drawings, tested beside the library's

PAPER = [(a, b, alpha) for (a, b), alpha in reference_values.LINEAR_EASY_EXPONENTS.items()]

DEPTHS = (1, 2, 4, 8, 16, 32)
SEEDS = (0, 1, 2)


def panels(fig) -> dict:
    """The overview's panels by (model, task kind) index: (0 linear | 1 softmax, 0 easy | 1 difficult)."""
    names = {
        f"{m} attention, {k} task": (i, j)
        for i, m in enumerate(("linear", "softmax"))
        for j, k in enumerate(("easy", "difficult"))
    }
    return {names[ax.get_title()]: ax for ax in fig.axes}


def make_record(
    model="softmax", task="topk", a=0.5, b=0.5, depth=1, seed=0, *, L0=1.0, c=0.5, alpha=1.0, status="ok", **kw
):
    """A run record (``synthetic.record``, d = 8 and P = 64 unless given) whose losses follow known laws:
    R_L = L0 + c L^-alpha (+ seed noise of s.d. 0.01), identity exact."""
    kw = {"d": 8, "P": 64, **kw}
    d = kw["d"]
    rng = np.random.default_rng(1000 * seed + depth + int(100 * a) + 7 * int(100 * b))
    R = L0 + c * depth ** (-alpha) + 0.01 * rng.standard_normal()
    C = L0 + 0.2 * c * depth ** (-alpha)  # shared error, slightly above the floor
    A = C + depth * (R - C)  # exact identity R = C + (A - C)/L
    kk = np.arange(1, d + 1, dtype=float)
    lam, om = kk**-a, kk**-b
    if model == "linear":
        norm = (1 - 0.5 * lam / lam[0]) ** (2 * depth)  # sequential: strong modes first
    else:
        norm = np.full(d, 0.2 + 0.8 / depth)  # parallel: every mode falls together
    modes = (lam * om * norm).tolist()
    rec = record(model, task, a=a, b=b, depth=depth, seed=seed, loss=R, **kw)
    rec.update(final_loss_se=0.005, A_L=A if depth > 1 else R, C_L=C if depth > 1 else None, mode_losses=modes)
    if status != "ok":
        rec.update(status=status, reason="synthetic failure", final_loss=None, mode_losses=None)
    return rec


LAWS = {  # (model, task, a, b) -> (L0, c, alpha)
    ("linear", "easy-exact", 2.0, 1.0): (0.0, 0.8, 1.5),
    ("linear", "topk", 0.5, 0.5): (2.2, 0.3, 1.0),
    ("softmax", "easy-exact", 2.0, 1.0): (0.05, 0.4, 1.0),
    ("softmax", "topk", 0.5, 0.5): (0.3, 0.4, 0.97),
    ("softmax", "topk", 0.25, 0.25): (0.9, 0.6, 0.97),
}


@pytest.fixture(scope="module")
def records():
    out = []
    for (model, task, a, b), (L0, c, alpha) in LAWS.items():
        for L in DEPTHS:
            for s in SEEDS:
                out.append(make_record(model, task, a, b, L, s, L0=L0, c=c, alpha=alpha))
    # runs that must be ignored: a failed run and a diverged one with absurd values
    out.append(make_record("softmax", "topk", 0.5, 0.5, 4, 9, status="failed"))
    bad = make_record("softmax", "topk", 0.5, 0.5, 4, 8)
    bad.update(status="diverged", final_loss=1e6)
    out.append(bad)
    return out


def decode(png: bytes) -> np.ndarray:
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    img = Image.open(io.BytesIO(png))
    img.load()
    arr = np.asarray(img.convert("RGB"), dtype=float)
    assert arr.shape[0] > 100 and arr.shape[1] > 100
    assert arr.std() > 5, "image is blank"
    return arr


def mean_by_hand(recs, model, task, a, b, L):
    vals = [
        r["final_loss"]
        for r in recs
        if r["status"] == "ok"
        and r["config"]["model"]["model"] == model
        and r["config"]["task"]["task"] == task
        and r["config"]["task"]["a"] == a
        and r["config"]["task"]["b"] == b
        and r["config"]["model"]["depth"] == L
    ]
    return sum(vals) / len(vals), len(vals)


def is_data(ln):
    """A data line has a real marker; error-bar caps use '_' or '|' and bare lines none."""
    return ln.get_marker() not in (None, "None", "", " ", "_", "|")


def data_lines(ax):
    """Lines drawn with markers (data) and dashed lines (fits) of one axes."""
    marked = [ln for ln in ax.lines if is_data(ln) and len(ln.get_xdata()) > 1]
    dashed = [ln for ln in ax.lines if ln.get_linestyle() == "--"]
    return marked, dashed


def test_every_figure_returns_a_png_that_decodes(records):
    fits = {
        k: {"L0": v[0], "c": v[1], "alpha": v[2]}
        for k, v in {("linear", "base", "easy-exact", 0, 2.0, 1.0): LAWS[("linear", "easy-exact", 2.0, 1.0)]}.items()
    }
    rows = [
        {"a": 2.0, "b": 1.0, "alpha": 1.5, "alpha_se": 0.1, "series": "linear easy"},
        {"a": 1.0, "b": 2.0, "alpha": 2.6, "alpha_se": 0.2, "series": "linear easy"},
    ]
    floor_rows = [
        {"label": "(1,1)", "measured": 0.504, "measured_se": 0.01, "reference": 0.498, "group": "linear"},
        {"label": "(0.5,0.5)", "measured": 2.33, "measured_se": 0.02, "reference": 2.272, "group": "linear"},
    ]
    base_rows = [
        {
            "spectrum": "(0,0)",
            "L0": 1.90,
            "L0_se": 0.01,
            "single": 1.978,
            "single_se": 0.01,
            "mixture": 1.932,
            "mixture_se": 0.01,
            "single_diff": -0.07,
            "single_diff_se": 0.008,
            "mixture_diff": -0.03,
            "mixture_diff_se": 0.008,
        }
    ]
    pngs = [
        figures.overview(records, fits),
        to_png(core.draw_exponents_vs_zeta(rows, PAPER)),
        figures.mode_curves(records),
        figures.decomposition(records),
        to_png(core.draw_floors(floor_rows)),
        to_png(core.draw_room_for_depth(base_rows)),
    ]
    # each figure is drawn on its own canvas: the decoded image has the builder's width (inches x 100 dpi),
    # at most 760 px (two 3.8-in panels to a row; one panel 6.4 in), so that the site's 690-px column
    # shrinks it by 10 % at most, and the panels' height plus its legend's rows under them
    shapes = [decode(png).shape[:2] for png in pngs]
    assert [w for _, w in shapes] == [760, 640, 760, 760, 640, 640]
    panels = [660, 480, 340, 340, 520, 620]
    assert all(p + 10 < h < p + 200 for (h, _), p in zip(shapes, panels)), shapes
    assert len({bytes(p) for p in pngs}) == len(pngs)  # and no two are the same image


def test_overview_plots_seed_means_in_the_right_panels_and_fits_dashed(records):
    L0, c, alpha = LAWS[("softmax", "topk", 0.5, 0.5)]
    fig, why = figures.build(
        "overview",
        records,
        [
            {
                "model": "softmax",
                "kind": "difficult",
                "a": 0.5,
                "b": 0.5,
                "fit": {"params": {"L0": L0, "c": c, "alpha": alpha}},
            }
        ],
    )
    assert why == "" and fig is not None
    axes = panels(fig)
    counts = {}
    for i, model in enumerate(("linear", "softmax")):
        for j, task in enumerate(("easy-exact", "topk")):
            marked, _ = data_lines(axes[i, j])
            counts[(model, task)] = len(marked)
            spectra = [(a, b) for (m, t, a, b) in LAWS if m == model and t == task]
            for ln in marked:
                x, y = np.asarray(ln.get_xdata(), float), np.asarray(ln.get_ydata(), float)
                assert list(x) == list(DEPTHS)
                # the line is one of this panel's spectra: find it by its independent seed means
                matches = []
                for a, b in spectra:
                    expect = np.array([mean_by_hand(records, model, task, a, b, L)[0] for L in DEPTHS])
                    matches.append(np.allclose(y, expect, rtol=1e-12))
                assert sum(matches) == 1
    assert counts == {
        (m, t): sum(1 for (mm, tt, _, _) in LAWS if (mm, tt) == (m, t))
        for m in ("linear", "softmax")
        for t in ("easy-exact", "topk")
    }
    # failed/diverged runs excluded: still three seeds at depth 4
    assert mean_by_hand(records, "softmax", "topk", 0.5, 0.5, 4)[1] == 3
    _, dashed = data_lines(axes[1, 1])
    assert len(dashed) == 1  # the one fit given, in the softmax/difficult panel only
    x, y = np.asarray(dashed[0].get_xdata(), float), np.asarray(dashed[0].get_ydata(), float)
    np.testing.assert_allclose(y, L0 + c * x ** (-alpha), rtol=1e-12)
    assert x.min() == pytest.approx(1) and x.max() == pytest.approx(32)
    for ax in (axes[0, 0], axes[0, 1], axes[1, 0]):
        assert data_lines(ax)[1] == []
    assert axes[0, 0].get_xscale() == "log" and axes[0, 0].get_yscale() == "log"


def test_overview_error_bars_are_the_standard_error_over_seeds(records):
    fig, _ = figures.build(
        "overview",
        [r for r in records if r["config"]["model"]["model"] == "linear" and r["config"]["task"]["task"] == "topk"],
    )
    ax = panels(fig)[0, 1]
    segs = [c for c in ax.collections if hasattr(c, "get_segments")][0].get_segments()
    for L, seg in zip(DEPTHS, segs):
        vals = [
            r["final_loss"]
            for r in records
            if r["config"]["model"]["model"] == "linear"
            and r["status"] == "ok"
            and r["config"]["task"]["task"] == "topk"
            and r["config"]["model"]["depth"] == L
        ]
        se = math.sqrt(sum((v - sum(vals) / 3) ** 2 for v in vals) / 2 / 3)
        assert seg[1][1] - seg[0][1] == pytest.approx(2 * se, rel=1e-9)


def test_fit_keys_by_series_prefix_and_fit_objects():
    class FakeFit:
        params = {"L0": 0.5, "c": 1.0, "alpha": 1.0}
        se = {}

    recs = [make_record("softmax", "topk", 0.0, 0.0, L, s, L0=0.5, c=1.0) for L in (1, 4, 16) for s in (0, 1)]
    recs += [make_record("softmax", "topk", 1.0, 1.0, L, 0) for L in (1, 4, 16)]
    fig, _ = figures.build("overview", recs, {("softmax", "base", "topk", 2, 0.0, 0.0): FakeFit()})
    _, dashed = data_lines(panels(fig)[1, 1])
    assert len(dashed) == 1  # matched (0,0) only, not (1,1)
    # a power-law fit (no L0) and a failed fit (no params) are accepted; the failed one draws nothing
    fig, _ = figures.build("overview", recs, {("softmax",): {"c": 2.0, "alpha": 0.5}, ("linear",): {"error": "x"}})
    _, dashed = data_lines(panels(fig)[1, 1])
    assert len(dashed) == 2
    x, y = dashed[0].get_xdata(), dashed[0].get_ydata()
    np.testing.assert_allclose(y, 2.0 * np.asarray(x) ** -0.5, rtol=1e-12)


def test_converged_only_drops_unconverged_runs():
    recs = [make_record("linear", "topk", 0.5, 0.5, L, 0, converged=(L != 4)) for L in (1, 2, 4, 8)]
    fig, _ = figures.build("overview", recs, converged_only=True)
    marked, _ = data_lines(panels(fig)[0, 1])
    assert list(marked[0].get_xdata()) == [1, 2, 8]


def test_exponents_are_placed_at_zeta_with_zeta_and_two_zeta_lines():
    rows = [
        {"a": 2.0, "b": 0.5, "alpha": 1.1, "series": "linear"},
        {"a": 0.5, "b": 2.0, "alpha": 3.3, "series": "linear"},
        {"a": 0.0, "b": 0.0, "alpha": 1.0, "series": "linear"},
    ]  # zeta undefined: skipped
    fig = core.draw_exponents_vs_zeta(rows, [(1.0, 2.0, 2.552)])
    ax = fig.axes[0]
    pts = [ln for ln in ax.lines if ln.get_linestyle() in ("None", "none", "")]
    xs = sorted(float(v) for ln in pts for v in ln.get_xdata())
    assert xs == pytest.approx(sorted([(2.0 + 0.5 - 1) / 2.0, (0.5 + 2.0 - 1) / 0.5, (1.0 + 2.0 - 1) / 1.0]))
    guide = [ln for ln in ax.lines if ln.get_linestyle() in ("-", "--") and len(ln.get_xdata()) == 50]
    slopes = sorted(np.polyfit(ln.get_xdata(), ln.get_ydata(), 1)[0] for ln in guide)
    assert slopes == pytest.approx([1.0, 2.0])
    with pytest.raises(NoFigure, match="no fitted exponents with a defined zeta"):
        core.draw_exponents_vs_zeta(rows[2:], PAPER)


def test_mode_curves_normalise_by_lambda_omega(records):
    fig, _ = figures.build("mode_curves", records)
    lin, soft = fig.axes[:2]
    a = 2.0  # the linear series with most depths prefers the easy task (a, b) = (2, 1)
    lam = np.arange(1, 9, dtype=float) ** -a
    for ln in lin.lines:
        k = int(ln.get_label().split()[-1])
        x = np.asarray(ln.get_xdata(), float)
        np.testing.assert_allclose(ln.get_ydata(), (1 - 0.5 * lam[k - 1]) ** (2 * x), rtol=1e-10)
    assert len(lin.lines) >= 3
    for ln in soft.lines:
        np.testing.assert_allclose(ln.get_ydata(), 0.2 + 0.8 / np.asarray(ln.get_xdata(), float), rtol=1e-10)


def test_decomposition_uses_depth_two_and_up_and_the_exact_terms(records):
    sub = [r for r in records if r["config"]["model"]["model"] == "softmax" and r["config"]["task"]["a"] == 0.25]
    fig, _ = figures.build("decomposition", sub)
    c_ax, g_ax = fig.axes[:2]
    (line,) = [ln for ln in g_ax.lines if is_data(ln)]
    x = np.asarray(line.get_xdata(), float)
    assert list(x) == [2, 4, 8, 16, 32]
    expect = [np.mean([r["A_L"] - r["C_L"] for r in sub if r["config"]["model"]["depth"] == L]) for L in x]
    np.testing.assert_allclose(line.get_ydata(), expect, rtol=1e-12)
    (cl,) = [ln for ln in c_ax.lines if is_data(ln)]
    L0, c, alpha = LAWS[("softmax", "topk", 0.25, 0.25)]
    np.testing.assert_allclose(cl.get_ydata(), L0 + 0.2 * c * x ** (-alpha), rtol=1e-12)


def test_decomposition_leaves_out_tied_layers_and_keeps_its_legend_off_the_data():
    # tied layers: A_L - C_L is zero up to rounding (1e-15 of R_L); a log axis down to 1e-15 hid the rest
    tied = []
    for L in (2, 4, 8):
        r = make_record(depth=L, a=0.0, b=0.0)
        r.update(A_L=r["C_L"] * (1 + 1e-15), final_loss=r["C_L"] * (1 + 1e-15 / L))
        tied.append(r)
    spread = [make_record(depth=L, a=0.5, b=0.5) for L in (2, 4, 8)]
    fig, _ = figures.build("decomposition", tied + spread)
    c_ax, g_ax = fig.axes[:2]
    (line,) = [ln for ln in g_ax.lines if is_data(ln)]  # the tied group draws no point there
    np.testing.assert_allclose(line.get_ydata(), [r["A_L"] - r["C_L"] for r in spread], rtol=1e-12)
    assert g_ax.get_ylim()[0] > 1e-6 and "tied layers" in g_ax.get_title()
    assert len([ln for ln in c_ax.lines if is_data(ln)]) == 2  # C_L of both groups is drawn
    assert c_ax.get_legend() is None and g_ax.get_legend() is None and len(fig.legends) == 1


def test_room_for_depth_paired_and_unpaired_differences():
    row = {
        "spectrum": "(0,0)",
        "L0": 1.90,
        "L0_se": 0.03,
        "single": 1.978,
        "single_se": 0.04,
        "mixture": 1.932,
        "mixture_se": 0.04,
        "single_diff": -0.07,
        "single_diff_se": 0.008,
    }
    fig = core.draw_room_for_depth([row])
    ax = fig.axes[1]
    assert "unpaired" in ax.get_title()  # the pair difference had to be computed without pairing
    ys = sorted(float(ln.get_ydata()[0]) for ln in ax.lines if is_data(ln))
    assert ys == pytest.approx(sorted([-0.07, 1.90 - 1.932]))
    row.update(mixture_diff=-0.03, mixture_diff_se=0.01)
    fig = core.draw_room_for_depth([row])
    assert "unpaired" not in fig.axes[1].get_title()


def test_a_report_figure_labels_a_narrow_log_axis_with_plain_numbers():
    # the floors of one spectrum span 1.90-1.98 on a log axis: matplotlib wrote "1.95x10^0"
    row = {"spectrum": "(0,0)", "L0": 1.90, "L0_se": 0.03, "single": 1.978, "single_se": 0.04}
    row.update(mixture=1.932, mixture_se=0.04, single_diff=-0.07, single_diff_se=0.008)
    fig = core.draw_room_for_depth([row])
    to_png(fig)  # the labels are set when the figure is rendered
    ax = fig.axes[0]
    assert ax.get_yscale() == "log"
    texts = [t.get_text() for t in ax.yaxis.get_ticklabels(minor=True) + ax.yaxis.get_ticklabels() if t.get_text()]
    assert texts and all("times" not in t and "^" not in t for t in texts), texts
    lo, hi = ax.get_ylim()
    assert sum(lo <= float(t) <= hi for t in texts) >= 2


def test_missing_data_gives_none_and_a_reason():
    failed = [make_record(status="failed", depth=L) for L in (1, 2)]
    for name, args in [
        ("overview", ([],)),
        ("overview", (failed,)),
        ("mode_curves", (failed,)),
        ("decomposition", ([make_record(depth=1)],)),
    ]:
        fig, why = figures.build(name, *args)
        assert fig is None and why, name
        drawn = draw_entry(figures.figure_entry(name, *args))
        assert drawn.png is None and drawn.why_missing == why and drawn.caption
    for draw, args in [
        (core.draw_floors, ([{"label": "x", "measured": None, "reference": 1.0}],)),
        (core.draw_floors, (None,)),
        (core.draw_room_for_depth, ([],)),
        (core.draw_exponents_vs_zeta, ([],)),
    ]:
        drawn = draw_entry(FigureEntry("x", lambda: draw(*args), "a caption"))
        assert drawn.png is None and drawn.why_missing and drawn.caption == "a caption"
    assert figures.overview([]) is None
    assert figures.mode_curves([{**make_record(), "mode_losses": None}]) is None


def test_bad_input_raises_value_error_naming_the_parameter():
    with pytest.raises(ValueError, match="records"):
        figures.overview("not a list")
    with pytest.raises(ValueError, match=r"records\[1\]"):
        figures.overview([make_record(), 3])
    with pytest.raises(ValueError, match=r"records\[0\]\.config"):
        figures.decomposition([{"status": "ok"}])
    with pytest.raises(ValueError, match=r"rows\[0\]"):
        core.draw_floors([1.0])
    with pytest.raises(ValueError, match="name"):
        figures.build("nope")
    with pytest.raises(ValueError, match="fits"):
        figures.overview([make_record()], fits="x")


def test_series_key_matches_contract():
    r = make_record("linear", "easy-exact", 2, 1, 4, 0, qk="temperature")
    assert curve_key(r)[:8] == ("linear", "temperature", "easy-exact", 0, 2.0, 1.0, 8, 64)


def test_series_are_the_curves_the_claims_use():
    # two training protocols of one condition are two curves for the claims, so two lines in the figure
    recs = [make_record("softmax", "topk", 0.5, 0.5, L, s) for L in (1, 4, 16) for s in (0, 1)]
    other = [dict(r, config={**r["config"], "train": {"lr": 1e-2}}) for r in recs]
    assert len(curves(recs + other)) == 2
    fig, _ = figures.build("overview", recs + other)
    marked, _ = data_lines(panels(fig)[1, 1])
    assert len(marked) == 2
    # and the figure accepts the curves themselves, drawing the same seed means
    fig2, _ = figures.build("overview", curves(recs + other))
    marked2, _ = data_lines(panels(fig2)[1, 1])
    assert sorted(tuple(m.get_ydata()) for m in marked) == sorted(tuple(m.get_ydata()) for m in marked2)


def test_unidentified_fit_is_not_drawn():
    recs = [make_record("softmax", "topk", 0.0, 0.0, L, s, L0=0.5, c=1.0) for L in (1, 4, 16) for s in (0, 1)]
    key = ("softmax", "base", "topk", 2, 0.0, 0.0)
    good = FitResult(
        "offset_power",
        {"L0": 0.5, "c": 1.0, "alpha": 1.0},
        {"L0": 0.01, "c": 0.01, "alpha": 0.01},
        0.99,
        0.0,
        0.0,
        6,
        3,
        ("L0", "c", "alpha"),
    )
    bad = FitResult.missing("offset_power", "too few depths")
    for fit, n in ((good, 1), (bad, 0)):
        fig, _ = figures.build("overview", recs, {key: fit})
        assert len(data_lines(panels(fig)[1, 1])[1]) == n


def test_overview_draws_only_panels_with_data_and_no_repeated_legend_label():
    from synthetic import curve

    one = curve(lambda L: 1 + 1 / L)
    two = curve(lambda L: 2 + 1 / L)
    for r in two:  # the same condition but for the learning rate: a separate curve
        r["config"]["train"]["lr"] = 1e-2
    fig, why = figures.build("overview", one + two)
    assert why == "" and [ax.get_title() for ax in fig.axes] == ["softmax attention, difficult task"]
    (legend,) = fig.legends  # one legend, under the panel
    labels = [t.get_text() for t in legend.get_texts() if "guide" not in t.get_text()]
    assert len(labels) == 2 and len(set(labels)) == 2, labels
    assert sorted(labels)[1] == "lr=0.01"  # only what differs between the two series
