"""Claims on the best depth-L linear-attention predictor at finite (d, P) (issue 22, docs/claims.md).

- ``linear-optimum``: per linear easy-task curve and depth, the trained loss against the optimum
  of its own class at its own (d, P, L): the best polynomial ``sum_{r<=L} a_r S^r`` of the context
  covariance (:mod:`depthscale.theory.linear_optimum`), within 10 % plus 2 s.e.
- ``linear-exponent-finite``: the optimum's own depth exponent at the paper's scale (d = 128,
  P = 1024), fitted as the paper fits (``c L^-alpha``, eq. 16 with L0 = 0, log-log least squares)
  over L = 1..64, against the paper's Table 2 exponents, within 10 %.
- :func:`limit_note`: for the ``linear-exponent`` row, whether the trained curve is limited by the
  optimum or by training.

The optimum at the runs' own scale is computed when the report is built (``contexts`` = the
report's floor contexts). The one at d = 128, P = 1024 costs about 2 CPU-minutes per spectrum
at 2,000 contexts, too slow for a report, so it is read from ``data/linear_optimum_d128_P1024.csv``,
written by :func:`write_reference` (``python -m depthscale.derivations.claims.linear_optimum``);
the file records the contexts and the seed, and ``tests/derivations/test_linear_optimum_claims.py``
recomputes a part of it.
"""

from __future__ import annotations

import csv
import io
from importlib import resources

import numpy as np

from ..analysis.curve import EASY_TASKS
from ..analysis.reference_values import LINEAR_EASY_EXPONENTS, REFERENCE_D, REFERENCE_P
from ..analysis.theory_numbers import TheoryNumbers
from ..formatting import format_estimate as est
from ..formatting import format_percent as pct
from ..formatting import format_value as num
from .claim import Claim, claim
from .verdicts import ClaimResult

OPTIMUM_RTOL = 0.10  # trained against the optimum at its own (d, P, L)
EXPONENT_RTOL = 0.10  # the optimum's exponent at d = 128, P = 1024 against the paper's
DEPTH_LIMIT = 64  # theory.linear_optimum.DEPTH_LIMIT
REFERENCE_DEPTHS = (1, 2, 4, 8, 16, 32, 64)  # the paper's grid (1..256) up to the deepest the optimum takes
REFERENCE_FILE = "linear_optimum_d128_P1024.csv"
_COLUMNS = ("a", "b", "L", "loss", "se", "in_sample", "contexts", "seed")
_BOOT = 400  # parametric resamples of the Monte Carlo losses for the exponent's error


# ---------------------------------------------------------------- theory numbers
def optimum_at(a, b, d, P, depths, contexts, seed=0, task="easy-fresh") -> dict:
    """``{L: (loss, se, in_sample, equal_step, equal_step_se)}`` of the optimum (and of the best
    equal-step predictor) at the depths ``<= 64`` (one BLAS thread).

    >>> out = optimum_at(2.0, 1.0, 8, 32, [1, 2], contexts=100)
    >>> sorted(out), all(v[1] > 0 for v in out.values())
    ([1, 2], True)
    """
    from ...sims.threads import one_blas_thread
    from ...theory.linear_optimum import linear_optimum

    Ls = sorted(int(L) for L in depths if int(L) <= DEPTH_LIMIT)
    if not Ls:
        return {}
    with one_blas_thread():
        r = linear_optimum(a, b, d, P, Ls, contexts, seed, task=task)
    cols = zip(r.depths, r.loss, r.se, r.in_sample, r.equal_step, r.equal_step_se)
    return {int(L): (float(v), float(s), float(i), float(e), float(es)) for L, v, s, i, e, es in cols}


def optimum_numbers(cs, contexts: int, seed: int = 0) -> dict:
    """The optimum for every linear easy-task curve: ``{(a, b, d, P, task): {L: (loss, se, in_sample)}}``."""
    keys = sorted({(c.a, c.b, c.d, c.P, c.task) for c in cs if c.model == "linear" and c.task in EASY_TASKS})
    out = {}
    for a, b, d, P, task in keys:
        depths = sorted({int(L) for c in cs if (c.a, c.b, c.d, c.P, c.task) == (a, b, d, P, task) for L in c.depths})
        out[(a, b, d, P, task)] = optimum_at(a, b, d, P, depths, contexts, seed, task)
    return out


def write_reference(path, contexts: int = 2000, seed: int = 22, spectra=None) -> None:
    """Compute the optimum at d = 128, P = 1024 over :data:`REFERENCE_DEPTHS` and write the CSV cache."""
    rows = []
    for a, b in spectra or LINEAR_EASY_EXPONENTS:
        got = optimum_at(a, b, REFERENCE_D, REFERENCE_P, REFERENCE_DEPTHS, contexts, seed)
        rows += [(a, b, L, *got[L][:3], contexts, seed) for L in REFERENCE_DEPTHS]
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(_COLUMNS)
        for r in rows:
            w.writerow([f"{v:g}" if isinstance(v, float) and v == int(v) else repr(v) for v in r])


def load_reference(text: str | None = None) -> dict:
    """The cached optimum at d = 128, P = 1024: ``{(a, b): {"L", "loss", "se", "in_sample" arrays, "contexts", "seed"}}``.

    >>> ref = load_reference()
    >>> sorted(ref) == sorted(LINEAR_EASY_EXPONENTS) and ref[(2.0, 1.0)]["L"].tolist()[:3]
    [1, 2, 4]
    """
    if text is None:
        text = resources.files("depthscale.derivations").joinpath("data", REFERENCE_FILE).read_text()
    rows = list(csv.DictReader(io.StringIO(text)))
    out: dict = {}
    for r in rows:
        key = (float(r["a"]), float(r["b"]))
        e = out.setdefault(key, {"L": [], "loss": [], "se": [], "in_sample": [], "contexts": 0, "seed": 0})
        for name in ("L", "loss", "se", "in_sample"):
            e[name].append(float(r[name]))
        e["contexts"], e["seed"] = int(r["contexts"]), int(r["seed"])
    for e in out.values():
        for name in ("loss", "se", "in_sample"):
            e[name] = np.array(e[name])
        e["L"] = np.array(e["L"], dtype=int)
    return out


def optimum_exponent(L, loss, se, seed: int = 0) -> tuple[float, float]:
    """The paper's fit ``c L^-alpha`` (log-log least squares) of the optimum: ``(alpha, s.e.)``.

    The s.e. is that of the Monte Carlo: the spread of alpha over losses redrawn as
    ``N(loss, se)`` (a fixed seed, so the report is reproducible).

    >>> L = np.array([1.0, 2, 4, 8]); a, s = optimum_exponent(L, 3 * L**-1.5, 1e-9 * L**-1.5)
    >>> round(a, 6), s < 1e-6
    (1.5, True)
    """
    from ..analysis.fits import fit_power_law

    L = np.asarray(L, dtype=float)
    loss, se = np.asarray(loss, dtype=float), np.asarray(se, dtype=float)
    alpha = float(fit_power_law(L, loss).params["alpha"])
    rng = np.random.default_rng(seed)
    draws = loss + se * rng.standard_normal((_BOOT, loss.size))
    draws = np.where(draws > 0, draws, loss)  # a redrawn loss cannot be negative: keep the estimate there
    # the same least squares, vectorised over the redraws: alpha = -cov(log L, log R) / var(log L)
    x = np.log(L) - np.log(L).mean()
    boot = -(np.log(draws) @ x) / (x @ x)
    return alpha, float(np.std(boot, ddof=1))


def reference_exponents(ref: dict | None = None) -> dict:
    """``{(a, b): (alpha, se, alpha_in_sample, paper, contexts)}`` from the cache (the paper's spectra only)."""
    ref = load_reference() if ref is None else ref
    out = {}
    for (a, b), paper in LINEAR_EASY_EXPONENTS.items():
        e = ref.get((a, b))
        if e is None:
            continue
        alpha, se = optimum_exponent(e["L"], e["loss"], e["se"])
        alpha_in = optimum_exponent(e["L"], e["in_sample"], e["se"])[0]
        out[(a, b)] = (alpha, se, alpha_in, paper, e["contexts"])
    return out


# ---------------------------------------------------------------- claims
def _optimum_of(theory: TheoryNumbers, c) -> dict[int, tuple[float, ...]]:
    return theory.linear_optimum.get((c.a, c.b, c.d, c.P, c.task), {})


@claim(
    "linear-optimum",
    tolerance=f"{OPTIMUM_RTOL:.0%} + 2 s.e.",
    expected="the optimum",
    missing="no linear easy-task runs",
)
def linear_optimum_claim(claim: Claim, ev) -> list[ClaimResult]:
    """Trained linear loss equals the best polynomial sum_{r<=L} a_r S^r (S = X^T X / P) at its (d, P, L)"""
    # the paper's model, from the small start or from the Jacobi steps (ModelConfig init="jacobi")
    cs = [c for c in ev.curves if c.model == "linear" and c.task in EASY_TASKS and c.variant in ("base", "jacobi-init")]
    out = []
    for c in cs:
        opt = _optimum_of(ev.theory, c)
        for j, L in enumerate(c.depths):
            label = f"{c.label} L={int(L)}"
            m, se = c.mean[j], c.se[j]
            if int(L) not in opt:
                why = "optimum not computed" + (" (L > 64)" if L > DEPTH_LIMIT else "")
                out.append(claim.not_run(why, label, None, m, se))
                continue
            val, vse, ins, *equal = opt[int(L)]
            se0 = se if np.isfinite(se) else 0.0
            ok = abs(m - val) <= OPTIMUM_RTOL * val + 2 * np.hypot(se0, vse)
            seeds = [r.get("final_loss") for r in c.records_at(int(L))]
            per_seed = ", ".join(num(s / val) for s in seeds if s is not None)
            det = (
                f"trained / optimum = {num(m / val)} (per seed {per_seed}); optimum {est(val, vse)}, "
                f"in-sample bound {num(ins)}"
            )
            if equal:  # what layers that all take one step reach at this (d, P)
                det += f"; equal steps {est(equal[0], equal[1])} (trained / equal steps = {num(m / equal[0])})"
            out.append(claim.decided(label, ok, [c], det, val, m, se, expected_error=vse))
    return out


@claim(
    "linear-exponent-finite",
    tolerance=f"{EXPONENT_RTOL:.0%}",
    expected="paper's exponent",
    missing="reference optimum not loaded",
)
def linear_exponent_finite(claim: Claim, ev) -> list[ClaimResult]:
    """Exponent of the best depth-L polynomial in S at d=128, P=1024 equals the paper's trained exponent

    The paper's exponents are its Table 2's, of trained models.
    """
    out = []
    for (a, b), (alpha, se, alpha_in, paper, n) in sorted(ev.theory.linear_optimum_reference.items()):
        rel = (alpha - paper) / paper
        # a Monte Carlo number, no training: decided whenever 2 s.e. clear the bound either way
        ok = (
            True
            if abs(rel) + 2 * se / paper <= EXPONENT_RTOL
            else (False if abs(rel) - 2 * se / paper > EXPONENT_RTOL else None)
        )
        v = "indicative" if ok is None else ("pass" if ok else "fail")
        zeta = (a + b - 1) / a
        det = (
            f"c L^-alpha over L={list(REFERENCE_DEPTHS)} (the paper's grid went to 256); relative difference "
            f"{pct(rel)}; in-sample bound gives alpha = {num(alpha_in)}; zeta = {num(zeta)}, 2 zeta = {num(2 * zeta)}; "
            f"{n} fitting + {n} evaluation contexts (cached, data/{REFERENCE_FILE})"
        )
        if v == "indicative":
            det += f"; the Monte Carlo error (2 s.e. = {num(2 * se)}) straddles the {claim.tolerance} bound"
        out.append(claim.result(f"(a,b)=({a:g},{b:g})", paper, alpha, se, v, det))
    return out


def limit_note(ev, c) -> str:
    """For the ``linear-exponent`` row: is the trained curve limited by the optimum or by training?

    Training limits it when, at some depth, the trained loss exceeds the optimum by more than
    10 % plus 2 s.e.; the note then names the deepest such depth and the ratio there, and gives
    the optimum's own exponent over the same depths.
    """
    opt = _optimum_of(ev.theory, c)
    pairs = [(j, int(L)) for j, L in enumerate(c.depths) if int(L) in opt]
    if len(pairs) < 2:
        return ""
    above = []
    for j, L in pairs:
        val, vse = opt[L][:2]
        se = c.se[j] if np.isfinite(c.se[j]) else 0.0
        if c.mean[j] - val > OPTIMUM_RTOL * val + 2 * np.hypot(se, vse):
            above.append((L, c.mean[j] / val))
    Ls = [L for _, L in pairs]
    alpha, ase = optimum_exponent(Ls, [opt[L][0] for L in Ls], [opt[L][1] for L in Ls])
    own = f"the optimum's own exponent over L={Ls} is {est(alpha, ase)}"
    if not above:
        return f"; limited by the optimum: trained within {OPTIMUM_RTOL:.0%} + 2 s.e. of it at every depth ({own})"
    L, ratio = above[-1]
    return (
        f"; limited by training: above the optimum at L={[x for x, _ in above]}, "
        f"trained / optimum = {num(ratio)} at L={L} ({own})"
    )


CLAIMS = (linear_optimum_claim, linear_exponent_finite)


# ---------------------------------------------------------------- report pieces
def theory_tables(theory: TheoryNumbers, contexts: int) -> list:
    """The optimum at the runs' scale and the exponents at d = 128, P = 1024, as report tables."""
    out = []
    rows = [
        [f"({a:g},{b:g})", task, d, P, L, *vals]
        for (a, b, d, P, task), per in sorted(theory.linear_optimum.items())
        for L, vals in sorted(per.items())
    ]
    if rows:
        out.append(
            {
                "title": f"Best depth-L polynomial in S = X^T X / P on the easy task (Monte Carlo, {contexts} fitting + "
                f"{contexts} evaluation contexts): held-out loss and in-sample bound, and the best equal-step predictor",
                "columns": ["(a,b)", "task", "d", "P", "L", "optimum", "s.e.", "in-sample", "equal steps", "s.e."],
                "rows": rows,
            }
        )
    ref = theory.linear_optimum_reference
    if ref:
        out.append(
            {
                "title": f"Exponent of the optimum at d={REFERENCE_D}, P={REFERENCE_P}, c L^-alpha over "
                f"L={list(REFERENCE_DEPTHS)}, against the paper's Table 2",
                "columns": ["(a,b)", "zeta", "optimum alpha", "s.e.", "in-sample alpha", "paper"],
                "rows": [
                    [f"({a:g},{b:g})", (a + b - 1) / a, al, se, ai, p] for (a, b), (al, se, ai, p, _) in ref.items()
                ],
            }
        )
    return out


def figure_rows(cs, theory: TheoryNumbers) -> list:
    """One row per linear easy-task curve for the ``linear_optimum`` figure (trained seeds, optimum, laws)."""
    from ...theory.equal_step import gamma_opt
    from ...theory.free_poly import free_continuum

    rows = []
    for c in cs:
        if c.model != "linear" or c.task not in EASY_TASKS or c.variant != "base":
            continue
        opt = _optimum_of(theory, c)
        Lgrid = np.unique(np.geomspace(1, max(int(c.depths[-1]), 2), 40).round().astype(int))
        spec = c.spectrum
        laws = {"equal step (optimal step)": gamma_opt(spec, Lgrid)[1]}
        if spec.asymptotic:
            laws["free continuum"] = free_continuum(spec, Lgrid)
        rows.append(
            {
                "label": f"({c.a:g},{c.b:g}) d={c.d} P={c.P}",
                "depths": [int(L) for L in c.depths],
                "seeds": {str(s): [float(v) for v in c.loss[i]] for i, s in enumerate(c.seeds)},
                "optimum": {int(L): opt[L] for L in sorted(opt)},
                "laws": {k: (Lgrid.tolist(), np.asarray(v, dtype=float).tolist()) for k, v in laws.items()},
            }
        )
    return rows


if __name__ == "__main__":  # regenerate the cache: python -m depthscale.derivations.claims.linear_optimum OUT.csv
    import sys

    write_reference(sys.argv[1], contexts=int(sys.argv[2]) if len(sys.argv) > 2 else 2000)
