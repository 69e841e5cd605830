"""Check your own prediction in one call: a law, the expected value of one of its parameters, a depth
window and data, decided by the claim machinery the studies use.

:func:`check_prediction` fits the law to one curve's depths inside the window and tests the
parameter with :func:`~depthscale.derivations.claims.verdicts.in_range` (a two-sided 95 % Student-t
test at the fit's degrees of freedom); the verdict rule is the studies' own
(:meth:`~depthscale.derivations.claims.claim.Claim.decided`: a pass or fail needs decisive evidence
*inside the window*, at least 5 depths spanning a factor 32 with 2 seeds each, docs/choices.md). An
unidentified fit, or a window with too few depths for the law, is ``indicative`` with the reason,
which names the window. It returns a :class:`PredictionCheck`: the :class:`ClaimResult`, the fit, the
curve and a figure of the data against the law.

Laws: ``"power"`` (``c L^-alpha``), ``"offset"`` (``L0 + c L^-alpha``), or a callable
``f(L, **params)`` with its parameters' initial values (``init={"c": 1, "alpha": 0.5}``), fitted on
log residuals as the built-in laws are. Generic claims (:data:`GENERIC_CLAIMS`) apply to any curve
without a study: ``claim="inverse-depth"``, ``"disagreement"``, ``"clt-identity"``,
``"floor-reached"``.

``validity=eps`` (linear attention on an easy task) restricts the window to the depths where the
continuum laws describe the finite-d loss within ``eps``:
``L <= L_max(eps)`` (:func:`~depthscale.theory.equal_step.validity_depth`).

Examples
--------
>>> import numpy as np
>>> L = np.array([1, 2, 4, 8, 16, 32, 64])
>>> wiggle = np.array([[1.002, 0.998, 1.001, 0.999, 1.002, 0.998, 1.0], [0.999, 1.001, 0.998, 1.002, 0.999, 1.0, 1.001],
...                    [1.001, 0.999, 1.0, 1.001, 0.998, 1.002, 0.999]])   # three seeds: enough to decide
>>> check = check_prediction((L, 2.0 * L**-0.7 * wiggle), "power", alpha=(0.6, 0.75))
>>> check.result.verdict, round(check.result.measured, 3)
('pass', 0.7)
>>> check_prediction((L, 2.0 * L**-0.7 * wiggle), "power", alpha=(0.9, 1.1)).result.verdict
'fail'
"""

from __future__ import annotations

import base64
import inspect
import math
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..theory._validate import bad_argument, check_real
from .analysis.curve import Curve, curves, window_bounds, window_text
from .analysis.estimate import Estimate
from .analysis.fits import FitResult
from .claims.claim import Claim, claim
from .claims.evidence import Evidence
from .claims.generic import (
    DISAGREEMENT_LAW,
    DISAGREEMENT_TOO_FEW,
    FLOOR_RTOL,
    IDENTITY_TOL,
    INVERSE_DEPTH,
    disagreement_fit,
    floor_agreement,
    identity_result,
)
from .claims.verdicts import ClaimResult, Condition, below_zero, in_range
from .formatting import format_estimate, format_interval, format_value

LAWS = {"power": "c L^-alpha", "offset": "L0 + c L^-alpha"}
GENERIC_CLAIMS = {
    "inverse-depth": f"R_L = L0 + c L^-alpha with alpha in [{INVERSE_DEPTH[0]:g}, {INVERSE_DEPTH[1]:g}]",
    "disagreement": "the layer disagreement A_L - C_L is flat or growing in depth: (A_L - C_L)/L falls no faster "
    f"than L^-{INVERSE_DEPTH[1]:g}",
    "clt-identity": "R_L = C_L + (A_L - C_L)/L holds exactly on evaluation data",
    "floor-reached": f"the fitted floor L0 of L0 + c L^-alpha lies within {FLOOR_RTOL:.0%} of a reference floor",
}
TOLERANCE = "t-test, 95 %"


@dataclass(frozen=True)
class PredictionCheck:
    """What :func:`check_prediction` returns.

    Attributes
    ----------
    result : ClaimResult
        The verdict, with measured and expected values, the test and the reason.
    fit : FitResult or None
        The law fitted inside the window (None for claims that fit nothing, as ``clt-identity``).
    curve : Curve
        The whole curve the data make (every depth; the window is ``window``).
    window : (float, float)
        ``(L_min, L_max)`` of the depths fitted (``-inf`` / ``inf``: open), the validity window applied.
    law : str
        The law in words (``"c L^-alpha"``, or the callable's name and parameters).
    """

    result: ClaimResult
    fit: FitResult | None
    curve: Curve
    window: tuple
    law: str
    _draw: Callable[[Any], None] | None = field(default=None, repr=False, compare=False)
    _png: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def verdict(self) -> str:
        return self.result.verdict

    def figure(self):
        """A new matplotlib Figure: the runs (seed mean ± s.e.; hollow outside the window), the law
        fitted in the window, and the expected interval's ends drawn through the fit."""
        from matplotlib.figure import Figure

        fig = Figure(figsize=(6.0, 4.0), layout="constrained")
        ax = fig.subplots()
        _draw_curve(ax, self)
        if self._draw is not None:
            self._draw(ax)
        ax.legend(fontsize=7)
        return fig

    def png(self) -> bytes:
        """The figure as PNG bytes (drawn once)."""
        if "png" not in self._png:
            from .report.figure_drawings import to_png

            self._png["png"] = to_png(self.figure())
        return self._png["png"]

    def _repr_png_(self) -> bytes:
        return self.png()

    def _repr_html_(self) -> str:
        from .claims.display import ClaimTable

        img = base64.b64encode(self.png()).decode("ascii")
        return f'<div>{ClaimTable([self.result])._repr_html_()}<img src="data:image/png;base64,{img}"/></div>'

    def __repr__(self) -> str:
        return f"<PredictionCheck {self.law}, window {window_text(*self.window)}\n  {self.result!r}>"

    def to_dict(self) -> dict:
        """JSON-able: the result, the law, the window (None for an open end) and the fit."""
        return {
            "result": self.result.to_dict(),
            "law": self.law,
            "window": [x if math.isfinite(x) else None for x in self.window],
            "fit": None if self.fit is None else self.fit.to_dict(),
        }


# ------------------------------------------------------------------------------------------- data
def as_curve(data, *, where: Mapping | None = None, curve: str | None = None, contexts: int | None = None) -> Curve:
    """One :class:`Curve` from a Curve, run records, a results store's path, or arrays
    ``(depths, losses)`` (losses one row per seed); ``curve`` picks one by its label when the data hold
    several, ``where`` filters a store's runs (``Store.records(where=...)``)."""
    if isinstance(data, Curve):
        found = [data]
    elif isinstance(data, (str, os.PathLike)):
        from ..sims.store import Store

        with Store(data, mode="read") as st:
            found = curves(st.records(status="ok", where=dict(where) if where else None))
    elif isinstance(data, tuple) and len(data) == 2 and not isinstance(data[0], Mapping):
        found = [Curve.from_arrays(data[0], data[1], contexts=contexts)]
    elif isinstance(data, Mapping) and "depths" in data:
        found = [Curve.from_arrays(data["depths"], data["loss"], contexts=contexts)]
    elif isinstance(data, Iterable) and not isinstance(data, (bytes, Mapping)):
        found = curves(list(data))
    else:
        bad_argument("data", data, "a Curve, run records, a results store's path or (depths, losses)")
    if where and not isinstance(data, (str, os.PathLike)):
        bad_argument("where", dict(where), "given only with a results store (filter records and curves yourself)")
    if curve is not None:
        found = [c for c in found if c.label == curve]
        if not found:
            bad_argument("curve", curve, "the label of one of the data's curves")
    if len(found) != 1:
        labels = "; ".join(c.label for c in found[:4]) + ("; ..." if len(found) > 4 else "")
        bad_argument(
            "data",
            f"{len(found)} curves",
            "one curve: pick it with curve=LABEL or where=" + (f" ({labels})" if found else " (no ok runs)"),
        )
    return found[0]


# ------------------------------------------------------------------------------------------- laws
def _user_law(f: Callable, init: Mapping | None) -> tuple[str, list[str], np.ndarray]:
    """The callable's name, its parameters in order and their initial values (``init``, else defaults)."""
    sig = inspect.signature(f)
    names = [p.name for p in list(sig.parameters.values())[1:] if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    init = dict(init or {})
    for k in init:
        if k not in names:
            bad_argument("init", init, f"initial values of the law's parameters ({', '.join(names) or 'none'})")
    start = []
    for n in names:
        default = sig.parameters[n].default
        v = init.get(n, None if default is inspect.Parameter.empty else default)
        if v is None:
            bad_argument("init", init, f"an initial value for every parameter of the law, here {n!r} too")
        start.append(check_real(f"init[{n!r}]", v))
    if not names:
        bad_argument("law", getattr(f, "__name__", f), "a callable f(L, **params) with at least one named parameter")
    name = getattr(f, "__name__", "law")
    return f"{name}(L; {', '.join(names)})", names, np.asarray(start, dtype=float)


def fit_callable(
    f: Callable, names: list[str], start: np.ndarray, L: np.ndarray, R: np.ndarray, kind: str
) -> FitResult:
    """Least squares of ``log R - log f(L, **params)`` from ``start``, with Jacobian errors on
    ``n - p`` degrees of freedom, as the built-in laws are fitted (:mod:`.analysis.fits`)."""
    from scipy import optimize

    logR = np.log(R)

    def resid(theta):
        with np.errstate(all="ignore"):
            m = np.asarray(f(L, **dict(zip(names, theta))), dtype=float) * np.ones_like(L)
        out = logR - np.log(m)
        return np.where(np.isfinite(out), out, 1e6)

    n, p = L.size, len(names)
    if n <= p:
        return FitResult.missing(kind, f"{n} point(s) for {p} parameter(s): no degree of freedom", n)
    try:
        sol = optimize.least_squares(resid, start, method="lm", x_scale="jac", max_nfev=20000)
    except (ValueError, RuntimeError, np.linalg.LinAlgError) as exc:
        return FitResult.missing(kind, f"fit failed: {exc}", n)
    r = resid(sol.x)
    ssr = float(r @ r)
    dof = n - p
    try:
        cov = np.linalg.inv(sol.jac.T @ sol.jac) * ssr / dof
        se = np.sqrt(np.diag(cov))
    except np.linalg.LinAlgError:
        cov, se = np.full((p, p), np.nan), np.full(p, np.nan)
    sst = float(np.sum((logR - logR.mean()) ** 2))
    r2 = 1 - ssr / sst if sst > 0 else math.nan
    aic = n * math.log(max(ssr, 1e-300) / n) + 2 * p
    params = {k: float(v) for k, v in zip(names, sol.x)}
    return FitResult(
        kind,
        params,
        {k: float(v) for k, v in zip(names, se)},
        r2,
        aic,
        ssr,
        n,
        dof,
        tuple(names),
        tuple(tuple(float(x) for x in row) for row in cov),
        success=bool(sol.success),
        message=str(sol.message),
    )


def _curve_fit_callable(c: Curve, f, names, start, lo: float, hi: float, kind: str) -> FitResult:
    """The callable law fitted to the seed means of the depths in the window (every run's loss when the
    means leave no degree of freedom)."""
    w = c.window(lo, hi)
    mean = w.mean
    ok = np.isfinite(mean) & (mean > 0)
    if ok.sum() > len(names):
        L, R = w.depths[ok].astype(float), mean[ok]
    else:
        si, di = np.nonzero(np.isfinite(w.loss) & (w.loss > 0))
        L, R = w.depths[di].astype(float), w.loss[si, di]
    used = tuple(sorted({int(x) for x in L}))
    res = fit_callable(f, names, start, L, R, kind)
    window = None if (lo, hi) == (-math.inf, math.inf) else (lo, hi)
    if res.failure and window is not None:
        res = replace(res, failure=f"{res.failure} in the window {window_text(lo, hi)}")
    return replace(res, depths=used, window=window)


# ------------------------------------------------------------------------------------------- validity
def validity_window(c: Curve, eps, spectrum=None) -> tuple[float, str]:
    """``(L_max, words)``: the depth below which the continuum law of equal-step linear attention holds
    within ``eps`` at the curve's spectrum and d (or ``spectrum``'s), and the window in words."""
    from ..theory.equal_step import validity_depth
    from ..theory.spectra import PowerLawSpectrum

    eps = 0.1 if eps is True else check_real("validity", eps, lo=0, hi=1, lo_open=True, hi_open=True)
    if spectrum is None:
        if c.model != "linear" or not c.easy:
            bad_argument(
                "validity", eps, "given only for linear attention on an easy task (or with spectrum=PowerLawSpectrum)"
            )
        spectrum = c.spectrum
    if not isinstance(spectrum, PowerLawSpectrum):
        bad_argument("spectrum", spectrum, "a PowerLawSpectrum(a, b, d)")
    if not spectrum.asymptotic:
        bad_argument("validity", eps, f"given only where the continuum law applies (a > 0, a + b > 1), not {spectrum}")
    Lv = validity_depth(spectrum, eps)
    words = (
        f"validity window L <= {Lv:.3g} of the continuum law (within {eps:g} of the d = {spectrum.d} loss: "
        f"L_max = {Lv / spectrum.d**spectrum.a:.3g} d^a, d^a = {spectrum.d**spectrum.a:.4g})"
    )
    return Lv, words


# ------------------------------------------------------------------------------------------- the check
def _expected(expected: dict, tol) -> tuple[str, tuple[float, float]]:
    if len(expected) != 1:
        bad_argument(
            "expected", dict(expected), "exactly one parameter's expected value or interval, e.g. alpha=(0.6, 0.75)"
        )
    ((name, value),) = expected.items()
    if isinstance(value, (tuple, list)):
        if len(value) != 2 or tol is not None:
            bad_argument(name, value, "an interval (lo, hi) with lo <= hi, or a value with tol=")
        lo, hi = check_real(f"{name}[0]", value[0]), check_real(f"{name}[1]", value[1])
        if lo > hi:
            bad_argument(name, tuple(value), "an interval (lo, hi) with lo <= hi")
        return name, (lo, hi)
    v = check_real(name, value)
    if tol is None:
        bad_argument("tol", tol, f"a tolerance > 0 with the single value {name}={v:g} (or give an interval)")
    t = check_real("tol", tol, lo=0, lo_open=True)
    return name, (v - t, v + t)


def check_prediction(
    data,
    law: str | Callable = "power",
    *,
    claim: str | None = None,
    init: Mapping | None = None,
    tol: float | None = None,
    L_min: float | None = None,
    L_max: float | None = None,
    validity: float | bool | None = None,
    spectrum=None,
    where: Mapping | None = None,
    curve: str | None = None,
    contexts: int | None = None,
    floor: float | None = None,
    error: str = "fit",
    id: str = "my-prediction",
    statement: str | None = None,
    **expected,
) -> PredictionCheck:
    """Decide a prediction about how a curve's loss falls with depth.

    Parameters
    ----------
    data : Curve, run records, str or path, or (depths, losses)
        The data: a :class:`Curve`, run records (dicts), a results store's path, or arrays
        ``(depths, losses)`` with ``losses`` one row per seed (a 1-d array: one seed). It must make one
        curve (``curve=LABEL`` or, for a store, ``where=`` pick it).
    law : {"power", "offset"} or callable
        ``"power"``: ``c L^-alpha``; ``"offset"``: ``L0 + c L^-alpha``; or ``f(L, **params)`` returning
        the loss at the depths ``L`` (an array), its parameters' initial values in ``init`` (or as
        defaults of ``f``).
    claim : str, optional
        A generic claim instead of a law (:data:`GENERIC_CLAIMS`): ``"inverse-depth"`` (offset law,
        alpha in [0.8, 1.2]), ``"disagreement"`` (``(A_L - C_L)/L`` fitted as ``c L^-alpha`` over
        ``L >= 2``, alpha below 1.2: the disagreement flat or growing), ``"clt-identity"`` (exact, every
        run), ``"floor-reached"`` (the offset law's ``L0`` within 3 % of a reference floor stored with
        the runs, or of ``floor``). ``alpha=`` may replace the default interval.
    **expected
        One parameter's expected interval, ``alpha=(0.6, 0.75)``, or value with ``tol``, ``alpha=0.67,
        tol=0.05``.
    L_min, L_max : float, optional
        The depth window fitted.
    validity : float or True, optional
        Restrict the window to ``L <= validity_depth(spectrum, eps)`` with ``eps = validity`` (True:
        0.1): where the continuum law of equal-step linear attention is within ``eps`` of the loss at
        the curve's d (linear attention on an easy task; ``spectrum=`` for other data).
    contexts : int, optional
        Evaluation contexts behind each loss of arrays (None: exact).
    error : {"fit", "seeds"}
        What the parameter's error rests on: ``"fit"``, the Jacobian error of the law fitted to the seed
        means (``n_depths - n_params`` degrees of freedom); ``"seeds"``, the scatter of the law fitted
        to each seed alone (``n_seeds - 1`` degrees of freedom: two seeds decide only at t(1) = 12.7 s.e.).
    id, statement : str
        The result's claim id and statement.

    Returns
    -------
    PredictionCheck
        ``.result`` (a :class:`ClaimResult`), ``.fit``, ``.curve``, ``.window``, ``.figure()``.
    """
    if error not in ("fit", "seeds"):
        bad_argument("error", error, "one of fit, seeds")
    c = as_curve(data, where=where, curve=curve, contexts=contexts)
    lo, hi = window_bounds(L_min, L_max)
    notes = []
    if validity is not None and validity is not False:
        Lv, words = validity_window(c, validity, spectrum)
        if Lv < hi:
            hi = Lv
            notes.append(words)
        if lo > hi:
            bad_argument("L_min", L_min, f"<= the validity window's L_max ({Lv:.3g})")
    if claim is not None:
        if claim not in GENERIC_CLAIMS:
            bad_argument("claim", claim, f"one of {', '.join(GENERIC_CLAIMS)}")
        if not (isinstance(law, str) and law == "power") or init is not None:
            bad_argument("law", law, f"left out with claim={claim!r} (the claim names its law)")
        if error != "fit" and claim != "inverse-depth":
            bad_argument("error", error, f"'fit' with claim={claim!r}")
        return _generic(c, claim, expected, tol, lo, hi, notes, floor, id if id != "my-prediction" else claim, error)
    if floor is not None:
        bad_argument("floor", floor, "given only with claim='floor-reached'")
    name, (plo, phi) = _expected(expected, tol)
    return _check_law(c, law, init, name, (plo, phi), lo, hi, notes, id, statement, error)


def _law_fit(c: Curve, law, init, lo, hi) -> tuple[str, FitResult, Callable | None]:
    if isinstance(law, str):
        if law not in LAWS:
            bad_argument("law", law, f"one of {', '.join(LAWS)}, or a callable f(L, **params)")
        if init is not None:
            bad_argument("init", init, "given only with a callable law")
        return LAWS[law], c.fit(law, n_boot=0, L_min=lo, L_max=hi), None
    if not callable(law):
        bad_argument("law", law, f"one of {', '.join(LAWS)}, or a callable f(L, **params)")
    words, names, start = _user_law(law, init)
    fit = _curve_fit_callable(c, law, names, start, lo, hi, f"user:{getattr(law, '__name__', 'law')}")
    return words, fit, law


def _seed_fits(c: Curve, law, init, lo, hi) -> list[tuple[object, FitResult]]:
    """``(seed, fit)``: the law fitted to each seed's own losses in the window."""
    w = c.window(lo, hi)
    out = []
    for i, s in enumerate(w.seeds):
        one = Curve.from_arrays(w.depths, w.loss[i : i + 1]) if w.depths.size else w
        out.append(
            (
                s,
                _law_fit(one, law, init, -math.inf, math.inf)[1]
                if w.depths.size
                else FitResult.missing("", "no depth"),
            )
        )
    return out


def _seeds_estimate(fits_: list, name: str) -> tuple[Estimate | None, str]:
    """The parameter's mean over the seeds' own fits, its error their scatter (``n - 1`` degrees of
    freedom), or None and why not (a seed's fit missing or not identified, fewer than 2 seeds)."""
    bad = [f"seed {s}: {f.failure or f.reason}" for s, f in fits_ if f.failure or not f.identified]
    if bad:
        return None, "per-seed fit not usable (" + "; ".join(bad) + ")"
    if len(fits_) < 2:
        return None, f"{len(fits_)} seed(s): an error from the seeds' scatter needs 2"
    values = [f.params[name] for _, f in fits_]
    return Estimate.from_seeds(values), f"per seed: {', '.join(f'{v:.4g}' for v in values)}"


def _check_law(c, law, init, name, band, lo, hi, notes, id_, statement, error="fit") -> PredictionCheck:
    words, fit, fn = _law_fit(c, law, init, lo, hi)
    if name not in fit.params and not fit.failure:
        bad_argument(name, band, f"the expected value of a parameter of {words} ({', '.join(fit.params)})")
    said = statement or f"R_L = {words} with {name} in {format_interval(*band)} (window {window_text(lo, hi)})"
    seeds = None
    if error == "seeds":
        seeds = _seeds_estimate(_seed_fits(c, law, init, lo, hi), name)
    rule = _law_rule(words, name, band, fit, lo, hi, notes, lambda e: in_range(e, *band), seeds)
    result = _evaluate(id_, said, band, c, lo, hi, rule)
    return PredictionCheck(result, fit, c, (lo, hi), words, _law_drawing(fit, fn, name, band, lo, hi))


def _law_rule(words, name, expected, fit, lo, hi, notes, test, seeds=None) -> Callable[[Claim, Curve], ClaimResult]:
    """The evaluation of one law's parameter on the windowed curve ``w``: the studies' rules throughout
    (an unusable fit is indicative with its reason, naming the window; else ``test`` of the estimate and
    :meth:`Claim.decided` on the windowed curve). ``seeds``: ``(estimate or None, words)`` from the
    seeds' own fits, which replaces the pooled fit's estimate."""

    def rule(cl: Claim, w: Curve) -> ClaimResult:
        note = "".join(f"; {n}" for n in notes)
        if fit.failure:
            why = fit.failure if "window" in fit.failure else f"{fit.failure} in the window {window_text(lo, hi)}"
            return cl.indicative(_where(w), expected, f"no fit of {words}: {why}{note}")
        if (
            unusable := cl.without_fit(_where(w), expected, {words: fit}, note=f" (window {window_text(lo, hi)}){note}")
        ) is not None:
            return unusable
        at = ", ".join(map(str, fit.depths))
        if seeds is not None:
            e_seeds, how = seeds
            if e_seeds is None:
                return cl.indicative(_where(w), expected, f"{how} (window {window_text(lo, hi)}){note}")
            e, note = e_seeds, f"; {how}{note}"
        else:
            e = Estimate.from_fit(fit, name)
        ok = test(e)
        det = f"{name} = {format_estimate(e.value, e.se)} fitted at L = {at} (window {window_text(lo, hi)})"
        if ok is None:
            shown = format_interval(*expected) if isinstance(expected, tuple) else expected
            det += f"; {name} ± {e.t:.2f} s.e. is wider than {shown} or straddles an end: too imprecise to decide"
        return cl.decided(_where(w), ok, [w], det + note, expected, e, None)

    return rule


def _where(w: Curve) -> Condition:
    """The condition a result names: the curve's, or its label alone for a curve from arrays."""
    return Condition(w.label) if w.model == "arrays" else Condition.of(w)


def _evaluate(id_: str, statement: str, expected, c: Curve, lo: float, hi: float, rule) -> ClaimResult:
    """``rule(claim, windowed curve)`` through a declared :class:`Claim` (the studies' record and skeleton)."""

    def evaluate(cl: Claim, ev: Evidence) -> list[ClaimResult]:
        return [rule(cl, w) for w in ev.curves]

    declared = claim(id_, statement, tolerance=TOLERANCE, expected=expected, family="check")(evaluate)
    (result,) = declared(Evidence([c.window(lo, hi)]))
    return result


# ------------------------------------------------------------------------------------------- generic claims
def _generic(c: Curve, which: str, expected: dict, tol, lo, hi, notes, floor, id_, error="fit") -> PredictionCheck:
    statement = GENERIC_CLAIMS[which]
    if which == "inverse-depth":
        name, band = _expected(expected, tol) if expected else ("alpha", INVERSE_DEPTH)
        if name != "alpha":
            bad_argument(
                name, expected[name], "left out: inverse-depth tests alpha (alpha=(lo, hi) may replace the range)"
            )
        return _check_law(c, "offset", None, "alpha", band, lo, hi, notes, id_, statement, error)
    if which == "disagreement":
        return _disagreement(c, expected, tol, lo, hi, notes, id_, statement)
    if expected:
        bad_argument(next(iter(expected)), next(iter(expected.values())), f"left out with claim={which!r}")
    if which == "clt-identity":
        return _identity(c, lo, hi, id_, statement)
    return _floor(c, floor, lo, hi, notes, id_, statement)


def _disagreement(c, expected, tol, lo, hi, notes, id_, statement) -> PredictionCheck:
    fit, L, D = disagreement_fit(c, lo if math.isfinite(lo) else None, hi if math.isfinite(hi) else None)
    if expected:
        name, band = _expected(expected, tol)
        if name != "alpha":
            bad_argument(name, expected[name], "left out: the disagreement claim tests alpha")
        exp: object = band

        def test(e):
            return in_range(e, *band)
    else:
        exp = f"alpha <= {INVERSE_DEPTH[1]:g}"

        def test(e):
            return below_zero(e, INVERSE_DEPTH[1])

    if fit is None:
        why = f"{DISAGREEMENT_TOO_FEW} in the window {window_text(max(lo, 2.0), hi)} (depths {[int(x) for x in L]})"
        fit = FitResult.missing("power_law", why, int(L.size))
    else:
        fit = replace(fit, depths=tuple(int(x) for x in L), window=(max(lo, 2.0), hi))
    rule = _law_rule(DISAGREEMENT_LAW, "alpha", exp, fit, max(lo, 2.0), hi, notes, test)
    result = _evaluate(id_, statement, exp, c, lo, hi, rule)

    def draw(ax):
        if L.size:
            ax.plot(L, D, "s", color="tab:purple", ms=4, label="A_L - C_L (seed mean)")
            if not fit.failure:
                grid = np.geomspace(L.min(), L.max(), 60)
                ax.plot(
                    grid,
                    fit.params["c"] * grid ** (1 - fit.params["alpha"]),
                    "-",
                    color="tab:purple",
                    lw=1,
                    label=f"fit: A_L - C_L ~ L^{1 - fit.params['alpha']:.2f}",
                )

    return PredictionCheck(result, fit, c, (lo, hi), DISAGREEMENT_LAW, draw)


def _identity(c, lo, hi, id_, statement) -> PredictionCheck:
    w = c.window(lo, hi)

    def rule(cl: Claim, w: Curve) -> ClaimResult:
        row = identity_result(cl, _where(w), [w])
        missing = "no runs with R_L, A_L and C_L stored (needs run records of L >= 2)"
        return row if row is not None else cl.not_run(missing, _where(w), 0.0)

    declared = claim(id_, statement, tolerance=f"<= {IDENTITY_TOL:g}", expected=0.0, family="check")(
        lambda cl, ev: [rule(cl, x) for x in ev.curves]
    )
    (result,) = declared(Evidence([w]))
    return PredictionCheck(result, None, c, (lo, hi), "R_L = C_L + (A_L - C_L)/L")


def _floor(c, floor, lo, hi, notes, id_, statement) -> PredictionCheck:
    from ..theory._choices import FLOOR_NAMES

    words = LAWS["offset"]
    fit = c.fit("offset", n_boot=0, L_min=lo, L_max=hi)
    if floor is not None:
        refs = {"given": (check_real("floor", floor, lo=0, lo_open=True), 0.0)}
    else:
        refs = {n: (fc.loss, fc.loss_se) for n in FLOOR_NAMES if (fc := c.floor(n)) is not None}

    def rule(cl: Claim, w: Curve) -> ClaimResult:
        note = "".join(f"; {n}" for n in notes)
        if not refs:
            return cl.not_run("no reference floors stored with these runs (give floor=)", _where(w))
        if fit.failure:
            return cl.indicative(_where(w), None, f"no fit of {words}: {fit.failure}{note}")
        if (unusable := cl.without_fit(_where(w), None, {words: fit}, note=note)) is not None:
            return unusable
        name = min(refs, key=lambda n: abs(fit.params["L0"] / refs[n][0] - 1))
        value, value_se = refs[name]
        L0 = Estimate.from_fit(fit, "L0")
        ok, rel, p = floor_agreement(L0, value, FLOOR_RTOL, value_se)
        det = f"L0 = {format_estimate(L0.value, L0.se)}; nearest reference floor: {name} "
        det += f"{format_estimate(value, value_se)} ({rel:+.1%})"
        if ok is None:
            det += f"; the 95 % interval of L0 / floor crosses 1 ± {FLOOR_RTOL:.0%}"
        return cl.decided(_where(w), ok, [w], det + note, value, L0, None, expected_error=value_se or None, p=p)

    declared = claim(id_, statement, tolerance=f"ratio within 1 ± {FLOOR_RTOL:.0%}, t-test on its log", family="check")(
        lambda cl, ev: [rule(cl, x) for x in ev.curves]
    )
    (result,) = declared(Evidence([c.window(lo, hi)]))

    def draw(ax):
        if not fit.failure:
            _draw_fit(ax, fit, None, lo, hi)
        for n, (v, _) in refs.items():
            ax.axhline(v, ls=":", lw=1, color="0.3", label=f"reference floor {n}: {format_value(v)}")

    return PredictionCheck(result, fit, c, (lo, hi), words, draw)


# ------------------------------------------------------------------------------------------- figure
def _draw_curve(ax, check: PredictionCheck) -> None:
    c, (lo, hi) = check.curve, check.window
    L = c.depths.astype(float)
    inside = (L >= lo) & (L <= hi)
    err = c.error_bar
    ax.errorbar(
        L[inside],
        c.mean[inside],
        yerr=err[inside],
        fmt="o",
        ms=4,
        capsize=3,
        color="tab:blue",
        label=f"runs in the window ({len(c.seeds)} seed(s))",
    )
    if (~inside).any():
        ax.errorbar(
            L[~inside],
            c.mean[~inside],
            yerr=err[~inside],
            fmt="o",
            ms=4,
            capsize=3,
            mfc="none",
            color="tab:blue",
            alpha=0.6,
            label="runs outside the window",
        )
    if math.isfinite(hi) and hi < L.max():
        ax.axvline(hi, ls="--", lw=0.8, color="tab:red", label=f"L_max = {hi:.3g}")
    if math.isfinite(lo) and lo > L.min():
        ax.axvline(lo, ls="--", lw=0.8, color="tab:red", label=f"L_min = {lo:.3g}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("depth L")
    ax.set_ylabel("loss R_L")
    r = check.result
    ax.set_title(f"{r.claim_id}: {r.verdict}" + (f" (would be {r.would_be})" if r.would_be else ""), fontsize=9)


def _draw_fit(ax, fit: FitResult, fn, lo, hi, name=None, band=None) -> None:
    """The fitted law across the window (solid; dashed beyond it) and, for ``band``, the law with the
    parameter at each end of the expected interval, the other parameters as fitted."""
    if not fit.depths:
        return
    a, b = min(fit.depths), max(fit.depths)
    grid = np.geomspace(a, b, 80)

    def law(L, **changes):
        p = {**fit.params, **fit.fixed, **changes}
        if fn is not None:
            return np.asarray(fn(L, **p), dtype=float) * np.ones_like(L)
        out = p["c"] * L ** (-p["alpha"])
        return p["L0"] + out if "L0" in p else out

    style = "-" if fit.identified else "--"
    ax.plot(
        grid,
        law(grid),
        style,
        color="tab:orange",
        lw=1.5,
        label=f"fit in the window{'' if fit.identified else ' (not identified)'}",
    )
    if name is not None and band is not None and name in fit.params:
        mid = math.sqrt(a * b)  # the ends drawn through the fit at the window's middle
        for value, ls in zip(band, (":", "-.")):
            curve_ = law(grid, **{name: value})
            scale = law(np.array([mid]))[0] / law(np.array([mid]), **{name: value})[0]
            ax.plot(grid, curve_ * scale, ls, color="0.4", lw=1, label=f"expected end: {name} = {value:.3g}")


def _law_drawing(fit, fn, name, band, lo, hi):
    def draw(ax):
        if not fit.failure:
            _draw_fit(ax, fit, fn, lo, hi, name, band)

    return draw


__all__ = [
    "LAWS",
    "GENERIC_CLAIMS",
    "PredictionCheck",
    "as_curve",
    "check_prediction",
    "fit_callable",
    "validity_window",
]
