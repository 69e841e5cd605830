"""Curves compared across one parameter: what each curve measures, and how that moves with the parameter.

A study that asks whether an answer survives a change of ``d``, ``P``, ``k`` or the attention map
holds several curves that differ in that one parameter (and in any that move with it, such as
``P = 8 d``). :func:`trend_points` measures each curve the same way, as a :class:`TrendPoint`:

- the depth gain ``(R_first - R_last) / R_first``, per seed (the seeds' runs share their evaluation
  contexts, so the gain is paired) and its seeds' error;
- ``R_1``, the one-layer loss, with its seeds' error;
- ``(R_1 - H) / H``, the one-layer model against the best single temperature head ``H`` on the same
  contexts (paired; the runs' stored reference floors), pooled over seeds
  (:func:`~depthscale.derivations.analysis.curve.pool_paired`);
- the exponent ``alpha`` of the layers' disagreement term ``(A_L - C_L)/L = c L^-alpha``
  (:func:`~depthscale.derivations.claims.generic.disagreement_fit`; ``alpha = 1``: the disagreement is
  flat in depth, ``alpha < 1``: it grows), with the fit's error.

:func:`fit_trend` fits one of them against the parameter: a weighted least-squares line in
``log2`` of the parameter (a change per doubling) or in the parameter itself, each point weighted by
its own error. The slope and the line's value anywhere are linear combinations of the points, so
their errors add in quadrature and their degrees of freedom are the Welch-Satterthwaite ones of the
points'; when the points scatter about the line more than their errors allow (``chi^2`` above its
degrees of freedom) every error is scaled up by ``sqrt(chi^2 / dof)`` and rests on the line's own
``n - 2`` degrees of freedom instead. A value outside the measured range (``at=``) is an
*extrapolation*, and :class:`Trend` says so wherever it shows it.

Examples
--------
>>> def rec(d, L, s):  # a gain that grows with d: R_L = 1 + g(d) / L, g = 0.1 log2(d)
...     R = (1 + 0.1 * math.log2(d) / L) * (1 + 0.002 * s)
...     return {"status": "ok", "seed": s, "converged": True, "final_loss": R, "gap": 0.5 * L ** 0.3,
...             "config": {"task": {"task": "topk", "k": 2, "a": 0.0, "b": 0.0, "d": d, "P": 8 * d},
...                        "model": {"model": "softmax", "depth": L}, "train": {"steps": 10}}}
>>> from depthscale.derivations.analysis.curve import curves
>>> cs = curves([rec(d, L, s) for d in (8, 16, 32) for L in (1, 2, 4, 8) for s in (0, 1, 2)])
>>> points = trend_points(cs, "d", also=("P",))
>>> [p.value for p in points], round(points[0].depth_gain.value, 4), round(points[0].exponent.value, 2)
([8, 16, 32], 0.2019, 0.7)
>>> t = fit_trend(points, "depth_gain", at=128)
>>> t.slope.value > 0, t.extrapolation, t.at
(True, True, 128.0)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats

from ...theory._validate import bad_argument, check_choice, check_real
from ..claims.generic import DISAGREEMENT_TOO_FEW, disagreement_fit
from .curve import Curve, pool_paired, variant_name
from .estimate import Estimate, welch_dof

PARAMETERS = ("d", "P", "k", "attention")  # what curves may differ in (with what moves along: ``also``)
QUANTITIES = {  # a point's measured quantities and what each is, for tables and axes
    "depth_gain": "depth gain (R_first - R_last) / R_first",
    "r1": "one-layer loss R_1",
    "r1_vs_single": "(R_1 - single head) / single head",
    "exponent": "disagreement exponent alpha",
}
AXES = ("log2", "linear")  # the trend's axis: a change per doubling, or per unit of the parameter


@dataclass(frozen=True)
class TrendPoint:
    """One curve, measured for a comparison across ``parameter`` (:func:`trend_points`).

    Attributes
    ----------
    parameter : str
        What the curves differ in (one of :data:`PARAMETERS`).
    value : int or str
        The curve's value of it (an attention map's name for ``"attention"``).
    label : str
        The curve's label.
    depths : tuple of int
        Its depths.
    n_seeds : int
        Its seeds.
    first, last : int
        The depths the gain runs between (``R_first``, ``R_last``); ``last`` also bounds the
        disagreement fit, so that every curve is measured over the same depths.
    depth_gain, r1, r1_vs_single, exponent : Estimate or None
        The quantities of :data:`QUANTITIES` (None where the curve cannot give one; ``notes`` says why).
    notes : tuple of str
        Why a quantity is missing, one line each.
    core_hours : float
        The recorded wall time of its runs, one core each.
    """

    parameter: str
    value: int | str
    label: str
    depths: tuple[int, ...]
    n_seeds: int
    first: int
    last: int
    depth_gain: Estimate | None = None
    r1: Estimate | None = None
    r1_vs_single: Estimate | None = None
    exponent: Estimate | None = None
    notes: tuple[str, ...] = ()
    core_hours: float = 0.0

    def get(self, quantity: str) -> Estimate | None:
        """The estimate of ``quantity`` (a key of :data:`QUANTITIES`), or None."""
        check_choice("quantity", quantity, tuple(QUANTITIES))
        return getattr(self, quantity)


@dataclass(frozen=True)
class Trend:
    """A quantity fitted against the parameter (:func:`fit_trend`): a weighted line in ``log2`` of
    the parameter (``axis="log2"``) or in the parameter, its slope and its value anywhere with a
    95 % t interval, and the extrapolation asked for.

    Attributes
    ----------
    parameter, quantity, axis : str
        What was fitted against what, on which axis (``log2`` or ``linear`` in the parameter).
    values : tuple of float
        The parameter's values of the points fitted.
    estimates : tuple of Estimate
        Their estimates of the quantity.
    slope : Estimate
        The change per doubling of the parameter (``log2``) or per unit (``linear``).
    intercept : Estimate
        The line's value at the smallest value fitted.
    chi2 : float
        The points' weighted squared residuals about the line; ``fit_dof = n - 2`` degrees of freedom.
    fit_p : float
        The chance of a ``chi2`` this large if the line held and the errors were exact (nan with two points).
    inflated : bool
        Whether the errors were scaled by ``sqrt(chi2 / fit_dof)`` (the points scatter beyond their errors).
    at : float or None
        Where the line was evaluated beyond the points' values, if asked.
    extrapolated : Estimate or None
        The line's value there.
    dropped : tuple of str
        Points left out (no estimate, or no error to weight it by), one line each.
    """

    parameter: str
    quantity: str
    axis: str
    values: tuple[float, ...]
    estimates: tuple[Estimate, ...]
    slope: Estimate
    intercept: Estimate
    chi2: float
    fit_dof: int
    fit_p: float
    inflated: bool
    at: float | None = None
    extrapolated: Estimate | None = None
    dropped: tuple[str, ...] = ()
    _rows: tuple = field(default=(), repr=False, compare=False)  # (A0, A1): value = A0.y + t A1.y

    @property
    def extrapolation(self) -> bool:
        """Whether ``at`` lies outside the values fitted (the line's value there is an extrapolation)."""
        return self.at is not None and not (min(self.values) <= self.at <= max(self.values))

    def _t(self, x: float) -> float:
        if self.axis == "log2":
            if not x > 0:
                bad_argument("x", x, "> 0 (the trend is in log2 of the parameter)")
            return math.log2(x) - math.log2(self.values[0])
        return float(x) - self.values[0]

    def predict(self, x: float) -> Estimate:
        """The line's value at parameter value ``x``, with its error (inside or outside the points' values)."""
        t = self._t(float(x))
        a0, a1 = self._rows
        return self._combine([u + t * v for u, v in zip(a0, a1)])

    def _combine(self, coef) -> Estimate:
        """``sum coef_i y_i`` of the points' independent estimates: errors in quadrature, Welch degrees
        of freedom; scaled by ``sqrt(chi2 / fit_dof)`` on ``fit_dof`` degrees of freedom when inflated."""
        parts = [Estimate(c * e.value, abs(c) * e.se, e.dof, e.basis, e.n) for c, e in zip(coef, self.estimates)]
        value = float(sum(p.value for p in parts))
        se = math.sqrt(sum(p.se**2 for p in parts))
        if self.inflated:
            return Estimate(value, se * math.sqrt(self.chi2 / self.fit_dof), self.fit_dof, "fit", len(parts))
        main = max(parts, key=lambda p: p.se)
        return Estimate(value, se, welch_dof(*parts), main.basis, sum(e.n for e in self.estimates))

    def band(self, xs) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(value, lower, upper)`` of the line at each of ``xs``: the 95 % t interval of its value."""
        est = [self.predict(float(x)) for x in np.asarray(xs, dtype=float)]
        v = np.array([e.value for e in est])
        m = np.array([e.margin for e in est])
        return v, v - m, v + m

    def describe(self, symbol: str | None = None) -> str:
        """One line: the slope with its test and, when asked, the value at ``at``, labelled an
        extrapolation when it is one.

        >>> pts = [TrendPoint("d", d, "", (1, 2), 3, 1, 2, depth_gain=Estimate(g, 0.01, 2, "seeds", 3))
        ...        for d, g in ((16, 0.03), (32, 0.04), (64, 0.05))]
        >>> print(fit_trend(pts, "depth_gain", at=128).describe())  # doctest: +NORMALIZE_WHITESPACE
        slope 0.0100 ± 0.0071 per doubling of d (seeds n=9, t(4) = 2.78);
        at d = 128: 0.060 ± 0.015 (an extrapolation beyond d = 16..64)
        """
        unit = f"per doubling of {self.parameter}" if self.axis == "log2" else f"per unit of {self.parameter}"
        text = f"slope {_text(self.slope)} {unit} ({self.slope.test})"
        if self.extrapolated is not None and self.at is not None:
            lo, hi = min(self.values), max(self.values)
            where = (
                f"an extrapolation beyond {self.parameter} = {lo:g}..{hi:g}" if self.extrapolation else "interpolated"
            )
            text += f"; at {self.parameter} = {self.at:g}: {_text(self.extrapolated)} ({where})"
        if self.inflated:
            text += f"; errors scaled by sqrt(chi2/dof) = {math.sqrt(self.chi2 / self.fit_dof):.2f}"
        return text if symbol is None else f"{symbol}: {text}"


def _text(e: Estimate) -> str:
    """``value ± se`` with the error to two significant digits (the answers' style)."""
    if not (math.isfinite(e.se) and e.se > 0):
        return f"{e.value:.3g}"
    decimals = max(1 - math.floor(math.log10(e.se)), 0)
    return f"{e.value:.{decimals}f} ± {e.se:.{decimals}f}"


# ------------------------------------------------------------------------------------------------ points
def _attention(c: Curve) -> str:
    rec = next(iter(c.runs.values()))
    return str(((rec.get("config") or {}).get("model") or {}).get("attention", "softmax"))


def _value(c: Curve, parameter: str):
    return _attention(c) if parameter == "attention" else int(getattr(c.key, parameter))


def _condition(c: Curve, drop: set) -> dict:
    """The curve's condition less what may differ: the parameter, what moves along with it, and the
    engine (both engines' runs agree in distribution: one condition for a comparison)."""
    key = c.key._asdict()
    for name in drop & {"d", "P", "k"}:
        key.pop(name)
    model = dict((next(iter(c.runs.values())).get("config") or {}).get("model") or {})
    model.pop("engine", None)
    if "attention" in drop:
        model.pop("attention", None)
    key["variant"] = variant_name(model)
    return key


def _own_floor(rec: Any, floor: Any) -> bool:
    """A stored floor of the run's own map (older records name none: softmax heads)."""
    attention = ((rec.get("config") or {}).get("model") or {}).get("attention", "softmax")
    return floor.get("attention", "softmax") == attention


def _column(c: Curve, depth: int) -> int | None:
    hit = np.flatnonzero(c.depths == depth)
    return int(hit[0]) if hit.size else None


def _point(c: Curve, parameter: str, first: int, last: int) -> TrendPoint:
    notes: list[str] = []
    gain = r1 = vs_single = alpha = None
    jf, jl = _column(c, first), _column(c, last)
    if jf is None or jl is None or first >= last:
        notes.append(f"depth gain: the curve has no runs at L = {first} and L = {last}")
    else:
        R0, R1 = c.loss[:, jf], c.loss[:, jl]
        ok = np.isfinite(R0) & np.isfinite(R1) & (R0 > 0)
        if ok.any():
            gain = Estimate.from_seeds((R0[ok] - R1[ok]) / R0[ok])
        else:
            notes.append(f"depth gain: no seed has finite losses at L = {first} and L = {last}")
    j1 = _column(c, 1)
    if j1 is None or not np.any(np.isfinite(c.loss[:, j1])):
        notes.append("R_1: no one-layer runs")
    else:
        r1 = Estimate.from_seeds(c.loss[:, j1])
        pairs = []
        for rec in c.records_at(1):
            f = (rec.get("floors") or {}).get("single")
            if f and _own_floor(rec, f) and f.get("loss") and f.get("diff") is not None:
                pairs.append((f["diff"] / f["loss"], (f.get("diff_se") or 0.0) / f["loss"]))
        if pairs:
            vs_single = pool_paired(pairs)
        else:
            notes.append("R_1 against the single head: no stored reference floors at L = 1")
    fit, _, _ = disagreement_fit(c, None, last)
    if fit is None:
        notes.append(f"exponent: {DISAGREEMENT_TOO_FEW} (up to L = {last})")
    elif fit.failure or not fit.identified:
        notes.append(f"exponent: fit not identified ({fit.failure or fit.reason})")
    else:
        alpha = Estimate.from_fit(fit, "alpha")
    secs = sum(float(r.get("wall_seconds") or 0.0) for r in c.runs.values())
    return TrendPoint(
        parameter,
        _value(c, parameter),
        c.label,
        tuple(int(L) for L in c.depths),
        len(c.seeds),
        first,
        last,
        gain,
        r1,
        vs_single,
        alpha,
        tuple(notes),
        secs / 3600,
    )


def trend_points(
    curves: Sequence[Curve], parameter: str = "d", *, also: Sequence[str] = (), first=None, last=None
) -> tuple[TrendPoint, ...]:
    """Each curve measured for a comparison across ``parameter``, ordered by its value.

    Parameters
    ----------
    curves : sequence of Curve
        Curves with their run records (:func:`~depthscale.derivations.analysis.curve.curves`) that differ
        in ``parameter`` (each value once) and agree in everything else but ``also`` and the engine.
    parameter : {"d", "P", "k", "attention"}
        What they differ in.
    also : sequence of str
        Parameters that move with it (``("P",)`` for ``P = 8 d``).
    first, last : int, optional
        The depths the depth gain runs between, and ``last`` the deepest depth of the disagreement
        fit. Default: the shallowest and the deepest depth every curve has (the gain is then one
        comparison across the curves).

    Returns
    -------
    tuple of TrendPoint

    Raises
    ------
    ValueError
        Fewer than one curve, a curve without run records, a repeated value, curves that differ in
        anything else (the first such field is named), or no two depths shared by the curves.

    Examples
    --------
    >>> from depthscale.derivations.analysis.curve import curves
    >>> rec = lambda d, L, s, lr: {"status": "ok", "seed": s, "converged": True, "final_loss": 1 + 1 / L,
    ...     "config": {"task": {"task": "topk", "k": 2, "a": 0.0, "b": 0.0, "d": d, "P": 8 * d},
    ...                "model": {"model": "softmax", "depth": L}, "train": {"steps": 10, "lr": lr}}}
    >>> cs = curves([rec(d, L, s, 1e-3 if d == 8 else 3e-3) for d in (8, 16) for L in (1, 4) for s in (0, 1)])
    >>> trend_points(cs, "d", also=("P",))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: curves: must differ only in d (and P); they differ in train: (('lr', 0.001), ...) and (('lr', 0.003), ...)
    """
    check_choice("parameter", parameter, PARAMETERS)
    also = tuple(also)
    for a in also:
        check_choice("also", a, PARAMETERS)
    if isinstance(curves, Curve) or not isinstance(curves, Sequence) or not curves:
        bad_argument("curves", curves, "a non-empty sequence of Curve")
    for i, c in enumerate(curves):
        if not isinstance(c, Curve):
            raise TypeError(f"curves[{i}]={c!r}: must be a Curve (from depthscale.derivations.analysis.curve)")
        if not c.runs:
            bad_argument(f"curves[{i}]", c.label, "a curve with its run records (curves(records)), not one from arrays")
    values = [_value(c, parameter) for c in curves]
    if len(set(values)) != len(values):
        repeated = sorted({v for v in values if values.count(v) > 1}, key=str)
        bad_argument("curves", f"{len(curves)} curves", f"one curve per value of {parameter} ({repeated} repeat)")
    order = sorted(range(len(curves)), key=lambda i: (isinstance(values[i], str), values[i]))
    curves = [curves[i] for i in order]
    drop = {parameter, *also}
    base = _condition(curves[0], drop)
    for c in curves[1:]:
        other = _condition(c, drop)
        for name, v in base.items():
            if other[name] != v:
                moved = f"{parameter}" + (f" (and {', '.join(also)})" if also else "")
                raise ValueError(
                    f"curves: must differ only in {moved}; they differ in {name}: {v!r} and {other[name]!r}"
                )
    shared = sorted(set.intersection(*(set(int(L) for L in c.depths) for c in curves)))
    lo = int(first) if first is not None else (shared[0] if shared else None)
    hi = int(last) if last is not None else (shared[-1] if shared else None)
    if lo is None or hi is None or lo >= hi:
        bad_argument("first, last", (first, last), f"two depths, first < last (the curves share {shared or 'none'})")
    return tuple(_point(c, parameter, lo, hi) for c in curves)


def comparable_groups(
    curves: Sequence[Curve], parameter: str = "d", *, also: Sequence[str] = ()
) -> list[tuple[Curve, ...]]:
    """The curves sorted into groups that differ only in ``parameter`` (and ``also``), each group
    ordered by its value: the groups :func:`trend_points` accepts, in a stable order, groups of one
    curve included. Curves of both engines at one value fall into one group per engine.

    Examples
    --------
    >>> from depthscale.derivations.analysis.curve import curves
    >>> rec = lambda d, L, k: {"status": "ok", "seed": 0, "converged": True, "final_loss": 1 + 1 / L,
    ...     "config": {"task": {"task": "topk", "k": k, "a": 0.0, "b": 0.0, "d": d, "P": 8 * d},
    ...                "model": {"model": "softmax", "depth": L}, "train": {"steps": 10}}}
    >>> cs = curves([rec(d, L, k) for d in (8, 16) for L in (1, 4) for k in (2, 16)])
    >>> [[(c.k, c.d) for c in g] for g in comparable_groups(cs, "d", also=("P",))]
    [[(16, 8), (16, 16)], [(2, 8), (2, 16)]]
    """
    check_choice("parameter", parameter, PARAMETERS)
    drop = {parameter, *also}
    by: dict[str, list[Curve]] = {}
    for c in curves:
        if not isinstance(c, Curve) or not c.runs:
            bad_argument("curves", c, "curves with their run records (curves(records))")
        by.setdefault(repr(sorted(_condition(c, drop).items())), []).append(c)
    groups: list[tuple[Curve, ...]] = []
    for members in by.values():
        values = [_value(c, parameter) for c in members]
        if len(set(values)) < len(values):  # one value run on both engines: one group per engine
            engines: dict[str, list[Curve]] = {}
            for c in members:
                engines.setdefault(c.variant, []).append(c)
            parts = list(engines.values())
        else:
            parts = [members]
        for part in parts:
            groups.append(
                tuple(sorted(part, key=lambda c: (isinstance(_value(c, parameter), str), _value(c, parameter))))
            )
    return sorted(groups, key=lambda g: str(g[0].key))


# ------------------------------------------------------------------------------------------------ the fit
def fit_trend(points: Sequence[TrendPoint], quantity: str, *, axis: str = "log2", at: float | None = None) -> Trend:
    """The weighted line of ``quantity`` against the points' parameter (the module docstring says how).

    Parameters
    ----------
    points : sequence of TrendPoint
        From :func:`trend_points` (one parameter, numeric).
    quantity : str
        A key of :data:`QUANTITIES`.
    axis : {"log2", "linear"}
        The line in ``log2`` of the parameter (slope per doubling) or in the parameter (per unit).
    at : float, optional
        Where to evaluate the line as well (``Trend.extrapolated``; an extrapolation when outside the
        points' values, and labelled so). A line through two values is not carried beyond them
        (``extrapolated`` None): nothing checks that it is a line.

    Raises
    ------
    ValueError
        Points of several parameters or of a non-numeric one, fewer than two points with an estimate
        and a positive finite error, or a value at or below zero on the ``log2`` axis.

    Examples
    --------
    >>> pts = [TrendPoint("d", d, "", (1, 2), 3, 1, 2, exponent=Estimate(a, 0.05, 3, "fit", 5))
    ...        for d, a in ((16, 0.6), (32, 0.7), (64, 0.8))]
    >>> t = fit_trend(pts, "exponent", at=128)
    >>> round(t.slope.value, 6), round(t.extrapolated.value, 6), t.extrapolation, t.inflated
    (0.1, 0.9, True, False)
    """
    check_choice("quantity", quantity, tuple(QUANTITIES))
    check_choice("axis", axis, AXES)
    if at is not None:
        at = check_real("at", at, lo=0, lo_open=True) if axis == "log2" else check_real("at", at)
    if isinstance(points, TrendPoint) or not isinstance(points, Sequence) or not points:
        bad_argument("points", points, "a non-empty sequence of TrendPoint (trend_points)")
    for i, p in enumerate(points):
        if not isinstance(p, TrendPoint):
            raise TypeError(f"points[{i}]={p!r}: must be a TrendPoint (trend_points)")
    names = {p.parameter for p in points}
    if len(names) != 1:
        bad_argument("points", sorted(names), "points of one parameter")
    parameter = names.pop()
    if any(isinstance(p.value, str) for p in points):
        bad_argument("points", parameter, "a numeric parameter (d, P or k): a trend needs numbers to fit a line to")
    used, dropped = [], []
    for p in sorted(points, key=lambda p: float(p.value)):
        e = p.get(quantity)
        if e is None:
            dropped.append(f"{parameter} = {p.value}: no {quantity}")
        elif not (math.isfinite(e.value) and math.isfinite(e.se) and e.se > 0):
            dropped.append(f"{parameter} = {p.value}: {quantity} without a positive finite error")
        else:
            used.append((float(p.value), e))
    if len(used) < 2 or len({x for x, _ in used}) < 2:
        bad_argument(
            "points", f"{len(used)} usable of {len(points)}", f"two or more values of {parameter} with {quantity}"
        )
    x = np.array([u[0] for u in used])
    if axis == "log2" and np.any(x <= 0):
        bad_argument(parameter, x.tolist(), "> 0 on the log2 axis (axis='linear' for others)")
    ests = tuple(u[1] for u in used)
    y = np.array([e.value for e in ests])
    se = np.array([e.se for e in ests])
    t = np.log2(x) - math.log2(x[0]) if axis == "log2" else x - x[0]
    X = np.column_stack([np.ones_like(t), t])
    W = 1.0 / se**2
    A = np.linalg.solve(X.T @ (W[:, None] * X), (X * W[:, None]).T)  # (2, n): beta = A y
    beta = A @ y
    resid = y - X @ beta
    chi2 = float(np.sum(W * resid**2))
    fit_dof = len(y) - 2
    fit_p = float(stats.chi2.sf(chi2, fit_dof)) if fit_dof > 0 else math.nan
    inflated = fit_dof > 0 and chi2 > fit_dof
    trend = Trend(
        parameter,
        quantity,
        axis,
        tuple(float(v) for v in x),
        ests,
        Estimate.exact(0.0),
        Estimate.exact(0.0),
        chi2,
        fit_dof,
        fit_p,
        inflated,
        None if at is None else float(at),
        None,
        tuple(dropped),
        (tuple(A[0]), tuple(A[1])),
    )
    slope, intercept = trend._combine(A[1]), trend._combine(A[0])
    # a line through two values has nothing that shows it is a line: read between them, never beyond
    extrapolated = None
    if at is not None and (fit_dof > 0 or not trend.extrapolation):
        extrapolated = trend.predict(float(at))
    return Trend(
        parameter,
        quantity,
        axis,
        trend.values,
        ests,
        slope,
        intercept,
        chi2,
        fit_dof,
        fit_p,
        inflated,
        trend.at,
        extrapolated,
        tuple(dropped),
        trend._rows,
    )


__all__ = ["AXES", "PARAMETERS", "QUANTITIES", "Trend", "TrendPoint", "comparable_groups", "fit_trend", "trend_points"]
