"""Assemble a report from a results store: theory numbers, curves and fits, claims, figures."""

from __future__ import annotations

import datetime as _dt
import time

import numpy as np

from depthscale.derivations import figures, theory_numbers
from depthscale.derivations.analysis import curves as make_curves
from depthscale.derivations.analysis import fit_curve
from depthscale.derivations.claims import Evidence, evaluate_claims

EASY = ("easy-exact", "easy-fresh")


def _pm(x, se=None):
    if x is None or not np.isfinite(x):
        return "—"
    return f"{x:.4g}" if se is None or not np.isfinite(se) else f"{x:.4g} ± {se:.2g}"


def gather_theory(cs, floor_contexts: int, reference_contexts: int) -> tuple[dict, list, list]:
    """Theory numbers for the conditions of these curves: (evidence dict, derivation objects, tables)."""
    derivs, checks = theory_numbers.derivation_checks()
    lin_spectra = sorted({(c.a, c.b) for c in cs if c.model == "linear" and c.task in EASY}) or [(2.0, 1.0), (1.0, 2.0), (1.5, 2.0)]
    topk = sorted({(c.a, c.b, c.k, c.d, c.P) for c in cs if c.task == "topk"})
    theory = {
        "derivations": checks,
        "slopes": theory_numbers.slopes(lin_spectra),
        "floor": theory_numbers.floors(topk, floor_contexts) if topk else {},
    }
    if reference_contexts:
        theory["floor_reference"] = theory_numbers.floor_reference(reference_contexts)
    d_lin = max([c.d for c in cs if c.model == "linear"] or [128])
    tables = theory_numbers.linear_table(lin_spectra, d_lin)
    tables.append(theory_numbers.clt_table())
    if theory["floor"]:
        tables.append({"title": f"Linear floor T - h^T G^+ h (Monte Carlo, {floor_contexts} contexts, degree 4)",
                       "columns": ["(a,b)", "k", "d", "P", "floor", "s.e."],
                       "rows": [[f"({a:g},{b:g})", k, d, P, v, s] for (a, b, k, d, P), (v, s) in theory["floor"].items()]})
    if "floor_reference" in theory:
        tables.append({"title": f"Paper's top-2 floors recomputed (d=128, P=1024, {reference_contexts} contexts)",
                       "columns": ["(a,b)", "this toolkit", "s.e.", "paper"],
                       "rows": [[f"({a:g},{b:g})", v, s, ref] for (a, b), (v, s, ref) in theory["floor_reference"].items()]})
    return theory, derivs, tables


def results_tables(cs, fits: dict) -> list:
    rows = []
    for c in cs:
        A, C = c.field_mean("A_L"), c.field_mean("C_L")
        for j, L in enumerate(c.depths):
            recs = c.records_at(int(L))
            conv = sum(bool(r.get("converged")) for r in recs)
            top1 = np.mean([r["top1_mass"][0] for r in recs if r.get("top1_mass")] or [np.nan])
            rows.append([c.label, int(L), len(recs), conv, _pm(c.mean[j], c.se[j]), _pm(A[j]), _pm(C[j]), _pm(top1)])
    out = [{"title": "Loss against depth (mean ± s.e. over seeds, fresh evaluation contexts)",
            "columns": ["condition", "L", "seeds", "converged", "R_L", "A_L", "C_L", "top-1 mass (layer 1)"], "rows": rows}]
    frows = []
    for c in cs:
        f = fits.get(c.key)
        if not f or "params" not in f:
            frows.append([c.label, "—", "—", "—", "—", "—", "—", (f or {}).get("error", "too few depths")])
            continue
        p, se = f["params"], f.get("se", {})
        boot = f.get("bootstrap", {}).get("intervals", {}).get("alpha")
        a1 = f.get("alpha_one", {}).get("delta_aic")
        frows.append([c.label, f["kind"], _pm(p.get("L0", 0.0), se.get("L0")), _pm(p["c"], se.get("c")), _pm(p["alpha"], se.get("alpha")),
                      _pm(f.get("r2")), f"[{boot[0]:.3g}, {boot[1]:.3g}]" if boot else "—", _pm(a1)])
    out.append({"title": "Fits: R_L = L0 + c L^-alpha (softmax, linear top-k) and R_L = c L^-alpha (linear easy)",
                "columns": ["condition", "law", "L0", "c", "alpha", "R^2", "alpha 95% (bootstrap over seeds)", "delta AIC (alpha = 1)"], "rows": frows})
    brows = []
    for c in cs:
        if c.model != "softmax" or c.task != "topk":
            continue
        L = int(c.depths[-1])
        recs = [r for r in c.records_at(L) if r.get("baseline")]
        if not recs:
            continue
        b = {n: (np.mean([r["baseline"][n]["loss"] for r in recs]), np.mean([r["baseline"][n]["diff"] for r in recs]),
                 np.sqrt(np.sum([r["baseline"][n]["diff_se"] ** 2 for r in recs])) / len(recs)) for n in ("single", "pair")}
        j = len(c.depths) - 1
        regime = "depth beats both" if b["pair"][1] < -2 * b["pair"][2] else ("depth beats one temperature only" if b["single"][1] < -2 * b["single"][2] else "no room used by depth")
        brows.append([c.label, L, _pm(c.mean[j], c.se[j]), _pm(b["single"][0]), _pm(b["single"][1], b["single"][2]),
                      _pm(b["pair"][0]), _pm(b["pair"][1], b["pair"][2]), regime])
    out.append({"title": "Room for depth: deepest model against the best temperature-only heads (paired on the same contexts)",
                "columns": ["condition", "L", "R_L", "single head", "R_L - single", "two temperatures", "R_L - two", "regime"], "rows": brows})
    return out


def figure_entries(records, cs, fits, theory) -> list:
    selectors = []
    for c in cs:
        f = fits.get(c.key)
        if f and "params" in f:
            selectors.append({"model": c.model, "variant": c.variant, "task": c.task, "k": c.k, "a": c.a, "b": c.b,
                              "d": c.d, "P": c.P, "fit": f["params"]})
    exp_rows = [{"a": c.a, "b": c.b, "alpha": fits[c.key]["params"]["alpha"], "alpha_se": fits[c.key].get("se", {}).get("alpha", np.nan),
                 "series": f"{c.model} {'easy' if c.task in EASY else f'top-{c.k}'} d={c.d}"}
                for c in cs if fits.get(c.key) and "params" in fits[c.key] and c.variant == "base"]
    floor_rows = []
    for c in cs:
        key = (c.a, c.b, c.k, c.d, c.P)
        if c.model == "linear" and c.task == "topk" and key in theory.get("floor", {}):
            v, s = theory["floor"][key]
            floor_rows.append({"label": f"({c.a:g},{c.b:g}) d={c.d}", "measured": c.mean[-1], "measured_se": c.se[-1],
                               "reference": v, "reference_se": s, "group": "trained linear vs theory"})
    for (a, b), (v, s, ref) in theory.get("floor_reference", {}).items():
        floor_rows.append({"label": f"({a:g},{b:g})", "measured": v, "measured_se": s, "reference": ref, "group": "theory MC vs paper"})
    base_rows = []
    for c in cs:
        f = fits.get(c.key)
        if c.model != "softmax" or c.task != "topk" or c.variant != "base":
            continue
        recs = [r for r in c.records_at(int(c.depths[-1])) if r.get("baseline")]
        if not recs:
            continue
        row = {"spectrum": f"({c.a:g},{c.b:g}) top-{c.k} d={c.d}",
               "L0": f["params"]["L0"] if f and "params" in f else np.nan, "L0_se": f.get("se", {}).get("L0", np.nan) if f else np.nan}
        for n in ("single", "pair"):
            row[n] = float(np.mean([r["baseline"][n]["loss"] for r in recs]))
            row[n + "_se"] = float(np.mean([r["baseline"][n]["se"] for r in recs]))
        base_rows.append(row)
    return [
        figures.figure_entry("overview", records, selectors),
        figures.figure_entry("exponents_vs_zeta", exp_rows),
        figures.figure_entry("mode_curves", records),
        figures.figure_entry("decomposition", records),
        figures.figure_entry("floors", floor_rows),
        figures.figure_entry("baselines", base_rows),
    ]


def build_context(records, *, title: str, preset: str = "", floor_contexts: int = 3000, reference_contexts: int = 3000,
                  runtime_seconds: float | None = None, notes=()):
    """Everything a report shows, from a list of run records."""
    from depthscale.derivations.render import ReportContext

    t0 = time.perf_counter()
    records = list(records)
    cs = make_curves(records)
    fits = {}
    for c in cs:
        kind = "power" if c.model == "linear" and c.task in EASY else "offset"
        fits[c.key] = fit_curve(c, kind)
    theory, derivs, theory_tables = gather_theory(cs, floor_contexts, reference_contexts)
    claims = evaluate_claims(Evidence(cs, theory))
    n_ok = sum(r.get("status") == "ok" for r in records)
    n_conv = sum(bool(r.get("converged")) for r in records)
    failed = [r for r in records if r.get("status") != "ok"]
    counts = {v: sum(c["verdict"] == v for c in claims) for v in ("pass", "fail", "indicative", "not run")}
    summary = [
        f"{len(records)} runs in the store: {n_ok} finished, {n_conv} converged, {len(failed)} failed or diverged.",
        "Claims: " + ", ".join(f"{n} {v}" for v, n in counts.items()) + ".",
        "Verdicts are pass/fail only when the evidence is decisive (at least 2 seeds, 5 depths spanning a factor 32, "
        "converged runs, 4,096 evaluation contexts); otherwise indicative, with the would-be verdict stated.",
    ]
    notes = list(notes) + [f"Run {r.get('key')}: {r.get('status')} — {r.get('reason')}" for r in failed]
    return ReportContext(
        title=title, subtitle="Depth scaling in attention: theory against simulation", preset=preset,
        created=_dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        runtime_seconds=(runtime_seconds or 0.0) + (time.perf_counter() - t0), summary=summary, derivations=derivs,
        theory_tables=theory_tables, results_tables=results_tables(cs, fits), figures=figure_entries(records, cs, fits, theory),
        claims=claims, notes=notes,
    )
