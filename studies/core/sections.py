"""The core study's report pieces: its derivations and theory tables, its results tables, its six
figures, and its story (the answer from its decided claims, one finding per figure)."""

from __future__ import annotations

from collections import Counter
from functools import partial

import numpy as np

from depthscale.derivations.study import (
    LINEAR_EASY_EXPONENTS,
    Curve,
    FigureEntry,
    Finding,
    Sections,
    Story,
    Table,
    answer_word,
    below_zero,
    figure_entry,
    fits_table,
    format_estimate,
    joint_answer,
    quote,
    results_of,
    runs_table,
    settings_by,
    short_tally,
    strongest,
    verdict_phrase,
)

from . import drawings
from .theory import CoreTheory, numbers, tables

# the reference floors (theory/_choices.py FLOOR_NAMES) the room-for-depth table and figure compare
# with: the best single temperature head, and the best two-temperature mixture beyond it
ROOM_FLOORS = ("single", "mixture")

FINDINGS = (
    Finding(
        "Depth exponents against zeta",
        "Fitted exponents of every curve against zeta = (a+b-1)/a: linear attention between zeta and 2 zeta, "
        "softmax near 1 whatever the spectrum if the paper is right.",
        "exponents_vs_zeta",
        ("linear-exponent", "softmax-top2-exponent", "exponent-spread", "topk-slower"),
    ),
    Finding(
        "Shared error and disagreement",
        "C_L and A_L - C_L against depth: R_L = C_L + (A_L - C_L)/L holds exactly on evaluation data.",
        "decomposition",
        ("clt-identity", "clt-convergence"),
    ),
    Finding(
        "Room for depth",
        "The fitted floor against the best single temperature head and the best two-temperature mixture.",
        "room_for_depth",
        ("depth-beats-single", "depth-beats-pair", "softmax-below-linear"),
    ),
    Finding(
        "Modes learned with depth",
        "Per-mode losses against depth: linear attention learns the modes one after another, softmax in parallel.",
        "mode_curves",
        ("linear-sequential-modes", "softmax-parallel-modes"),
    ),
    Finding(
        "Floors",
        "Trained linear floors against the theory (context covariance), and the paper's top-2 floors recomputed.",
        "floors",
        ("linear-floor", "linear-saturation", "floor-reference"),
    ),
)
_FINDING_OF = {f.figure: f.title for f in FINDINGS}

EXPONENTS_CAPTION = (
    "Fitted depth exponents against zeta = (a+b-1)/a with the lines zeta "
    "and 2 zeta; crosses are the paper's trained exponents of linear attention on the easy task "
    "(derivations/reference_values.py)."
)
FLOORS_CAPTION = "Measured loss floors against reference or theory values, with error bars; the line is equality."
ROOM_CAPTION = (
    "Fitted floor L0 against two reference floors, the best single temperature-only head and the best "
    "two-temperature mixture, per spectrum; below: L0 minus each floor, with paired standard errors."
)
OVERVIEW_CAPTION = (
    "Loss against depth for linear and softmax attention on the easy and difficult tasks, log-log, mean "
    "over seeds with one-s.e. error bars, one colour per series; fitted laws dashed; dotted: R_inf + c/L "
    "through each curve's first and last points."
)
DECOMPOSITION_CAPTION = (
    "The shared error C_L (mean E[e_l e_m] over pairs of layers; negative when layer errors cancel, as in "
    "linear attention), with R_L dash-dotted, and the layers' disagreement A_L - C_L against depth "
    "(R_L = C_L + (A_L - C_L)/L), one colour per series."
)
LOOK_AT = {  # what to look at in each figure, one sentence
    "overview": "Look at whether each softmax curve bends away from its dotted 1/L guide towards a plateau.",
    "exponents_vs_zeta": "Look at whether the fitted exponents sit between the zeta and 2 zeta lines.",
    "mode_curves": "Look at the order in which the modes fall: one after another (linear) or together (softmax).",
    "decomposition": "Look at whether the disagreement A_L - C_L stays flat with depth, as the 1/L law needs.",
    "floors": "Look at how far each point sits from the equality line, against its error bars.",
    "room_for_depth": "Look at whether the lower panel's points sit below zero, where depth beats the reference floor.",
}


# ---------------------------------------------------------------------------------------- tables
def room_table(cs: list[Curve]) -> Table:
    """The deepest softmax top-k model against the reference floors of :data:`ROOM_FLOORS` (paired)."""
    rows = []
    for c in cs:
        if c.model != "softmax" or c.task != "topk":
            continue
        found = {n: c.floor(n) for n in ROOM_FLOORS}
        b = {n: v for n, v in found.items() if v is not None}
        if len(b) < len(ROOM_FLOORS):
            continue
        beats = {n: below_zero(b[n].diff) is True for n in ROOM_FLOORS}
        regime = (
            "depth beats both"
            if beats["mixture"]
            else "depth beats one temperature only"
            if beats["single"]
            else "no room used by depth"
        )
        j = len(c.depths) - 1
        rows.append(
            [
                c.label,
                int(c.depths[j]),
                format_estimate(c.mean[j], c.se[j]),
                b["single"].loss,
                format_estimate(b["single"].diff.value, b["single"].diff.se),
                b["mixture"].loss,
                format_estimate(b["mixture"].diff.value, b["mixture"].diff.se),
                regime,
            ]
        )
    return Table(
        "Room for depth: deepest model against the best temperature-only heads (paired on the same contexts)",
        ["condition", "L", "R_L", "single head", "R_L - single", "two temperatures", "R_L - two", "regime"],
        rows,
    )


# --------------------------------------------------------------------------------------- figures
def _exponent_rows(cs: list[Curve], fits: dict) -> list[dict]:
    return [
        {
            "a": c.a,
            "b": c.b,
            "alpha": f.params["alpha"],
            "alpha_se": f.se["alpha"],
            "series": f"{c.model} {'easy' if c.easy else f'top-{c.k}'} d={c.d}",
        }
        for c in cs
        if (f := fits.get(c.key)) is not None and c.variant == "base"
    ]


def _floor_rows(cs: list[Curve], th: CoreTheory) -> list[dict]:
    out = []
    for c in cs:
        key = (c.a, c.b, c.k, c.d, c.P)
        if c.model == "linear" and c.task == "topk" and key in th.floor_context:
            v, s = th.floor_context[key]
            out.append(
                {
                    "label": f"({c.a:g},{c.b:g}) d={c.d}",
                    "measured": c.mean[-1],
                    "measured_se": c.se[-1],
                    "reference": v,
                    "reference_se": s,
                    "group": "trained linear vs context floor",
                }
            )
    for (a, b), (v, s, ref) in th.floor_reference.items():
        out.append(
            {
                "label": f"({a:g},{b:g})",
                "measured": v,
                "measured_se": s,
                "reference": ref,
                "group": "theory MC vs paper",
            }
        )
    return out


def _room_rows(cs: list[Curve], fits: dict) -> list[dict]:
    out = []
    for c in cs:
        if c.model != "softmax" or c.task != "topk" or c.variant != "base":
            continue
        bs = {n: c.floor(n) for n in ROOM_FLOORS}
        if all(v is None for v in bs.values()):
            continue
        f = fits.get(c.key)
        row = {
            "spectrum": f"({c.a:g},{c.b:g}) top-{c.k} d={c.d}",
            "L0": f.params["L0"] if f is not None else np.nan,
            "L0_se": f.se["L0"] if f is not None else np.nan,
        }
        for n, fl in bs.items():
            if fl is not None:
                row[n], row[n + "_se"] = fl.loss, fl.loss_se
        out.append(row)
    return out


def figures(ev) -> list[FigureEntry]:
    """The overview first, then the figures of the findings."""
    cs, th = list(ev.curves), numbers(ev)
    fits = {c.key: fit for c in cs if (fit := c.default_fit()).identified}
    records = [r for c in cs for L in c.depths for r in c.records_at(int(L))]
    reference = [(a, b, alpha) for (a, b), alpha in LINEAR_EASY_EXPONENTS.items()]
    own = {
        "exponents_vs_zeta": (
            partial(drawings.draw_exponents_vs_zeta, _exponent_rows(cs, fits), reference),
            EXPONENTS_CAPTION,
        ),
        "floors": (partial(drawings.draw_floors, _floor_rows(cs, th)), FLOORS_CAPTION),
        "room_for_depth": (partial(drawings.draw_room_for_depth, _room_rows(cs, fits)), ROOM_CAPTION),
    }
    made = {
        name: FigureEntry(name, draw, caption, LOOK_AT[name], finding=_FINDING_OF.get(name, ""))
        for name, (draw, caption) in own.items()
    }
    made["mode_curves"] = figure_entry(
        "mode_curves", records, look_at=LOOK_AT["mode_curves"], finding=_FINDING_OF.get("mode_curves", "")
    )
    made["decomposition"] = figure_entry(
        "decomposition",
        records,
        caption=DECOMPOSITION_CAPTION,
        look_at=LOOK_AT["decomposition"],
        finding=_FINDING_OF.get("decomposition", ""),
    )
    order = ("exponents_vs_zeta", "mode_curves", "decomposition", "floors", "room_for_depth")
    overview = figure_entry("overview", cs, fits, caption=OVERVIEW_CAPTION, look_at=LOOK_AT["overview"])
    return [overview, *(made[n] for n in order)]


def sections(ev) -> Sections:
    th = numbers(ev)
    cs = list(ev.curves)
    return Sections(
        tables=tuple(tables(th)),
        figures=tuple(figures(ev)),
        results=(runs_table(cs), fits_table(cs), room_table(cs)),
        derivations=th.shown,
    )


# ----------------------------------------------------------------------------------------- story
def story(results, ev) -> Story:
    """The answer to both halves of the question in the study's settings: the linear exponent against
    [zeta, 2 zeta] and the softmax top-2 exponent against 1, each by its tally and clearest result, then
    the measurement checks and whether depth beats the temperature-only heads, by their tallies."""
    lin, soft = results_of(results, "linear-exponent"), results_of(results, "softmax-top2-exponent")
    answer = []
    if lin or soft:
        groups = {
            "linear": [c for c in ev.curves if c.model == "linear" and c.variant == "base" and c.easy],
            "softmax": [c for c in ev.curves if c.model == "softmax" and c.variant == "base" and c.k == 2],
        }
        word = joint_answer(answer_word(lin) if lin else None, answer_word(soft) if soft else None)
        parts, shown = [], []
        for rs, what in (
            (lin, "linear attention's exponent between zeta and 2 zeta"),
            (soft, "softmax's top-2 exponent near 1"),
        ):
            if rs:
                parts.append(f"{what} {verdict_phrase(rs, 'spectra')}")
                c = Counter(r.verdict for r in rs)  # the clearest result of the more frequent decided verdict
                if r := strongest(rs, "fail" if c["fail"] > c["pass"] else "pass"):
                    shown.append(quote(r, "alpha"))
        answer.append(
            f"{word}: {settings_by(groups, lin + soft)}, "
            + "; ".join(parts)
            + "."
            + (f" Clearest: {'; '.join(shown)}." if shown else "")
        )
    single, pair = results_of(results, "depth-beats-single"), results_of(results, "depth-beats-pair")
    if single or pair:
        answer.append(
            f"Does the deepest softmax model beat the best single temperature head? {short_tally(single)}. "
            f"The best two-temperature mixture? {short_tally(pair)}."
        )
    if not answer:
        return Story(answer=("No run of the core presets is in this report.",))
    return Story(answer=tuple(answer), findings=FINDINGS)
