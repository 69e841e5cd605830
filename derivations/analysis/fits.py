"""Scaling-law fits: the laws of docs/claims.md, fitted on log residuals.

All fits minimise squared residuals of the LOG loss, ``sum_i w_i [log R_i - log model(L_i)]^2``
(optionally with a Huber loss on the residuals), so every point counts by its relative error.
Standard errors come from the Jacobian at the optimum, ``s^2 (J^T J)^-1`` with
``s^2 = SSR / (n - p)``; R^2 is computed on log R; AIC is the Gaussian ``n log(SSR/n) + 2p``
(comparable between fits to the same points). Because L0 and alpha are strongly correlated, use
:func:`profile_alpha` and :func:`bootstrap_over_seeds` (resampling whole seeds, not points of one
curve) alongside the Jacobian errors.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np
from scipy import optimize, stats

from depthscale.theory.validate import check_int, check_real

ALPHA_MAX = 20.0  # upper bound of fitted exponents: far beyond anything physical here
_ALPHA_GRID = (0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0)
_L0_FRACTIONS = (0.0, 0.25, 0.5, 0.75, 0.9, 0.97, 0.99, 0.999)  # of the smallest loss


# -------------------------------------------------------------------------------------------
# results
@dataclass(frozen=True)
class FitResult:
    """A fitted law: parameters, Jacobian standard errors, goodness of fit and whether it is identified.

    A fit is *identified* when its data pin its parameters down; :attr:`identified` and
    :attr:`reason` say whether, and if not why (see :meth:`identification`). Consumers (claims,
    figures, ``depthscale fit``, reports) use an unidentified fit for nothing but saying so.

    Attributes
    ----------
    kind : str
        ``"offset_power"`` (``L0 + c L^-alpha``), ``"power_law"`` (``c L^-alpha``), ``"gap"``
        (``L0 - C_L = c L^-alpha`` with L0 fixed), ``"additive"``, or a constrained variant
        (``"offset_power_alpha1"``, ``"offset_power_fixed_alpha"``).
    params, se : dict
        Free-parameter values and Jacobian standard errors by name (``nan`` where the fit
        leaves no degrees of freedom).
    r2 : float
        R^2 of log R.
    aic : float
        ``n log(SSR/n) + 2p``.
    ssr : float
        Weighted sum of squared log residuals.
    n, dof : int
        Number of points and ``n - p``.
    names : tuple
        Free-parameter names in ``cov`` order.
    cov : tuple
        Covariance of the free parameters (tuple of tuples).
    fixed : dict
        Parameters held fixed (e.g. ``{"alpha": 1.0}``).
    bounds : dict
        ``name -> (lo, hi)``: the range a parameter can take in this fit (the optimiser's bounds,
        and for ``L0`` at most the smallest loss). A parameter at a bound, or with an interval
        wider than its range, is not identified.
    failure : str
        Why there is no fit at all (too few points, the optimiser raised); ``""`` for a fit.
    bootstrap : BootstrapResult or None
        Percentile intervals from resampling seeds, when they were computed.
    delta_aic_alpha_one : float
        ``AIC(alpha = 1) - AIC(free)`` for offset fits (``nan`` when not computed).
    """

    kind: str
    params: dict
    se: dict
    r2: float
    aic: float
    ssr: float
    n: int
    dof: int
    names: tuple = ()
    cov: tuple = ()
    fixed: dict = field(default_factory=dict)
    huber: float | None = None
    success: bool = True
    message: str = ""
    bounds: dict = field(default_factory=dict)
    failure: str = ""
    bootstrap: BootstrapResult | None = None
    delta_aic_alpha_one: float = math.nan

    @classmethod
    def missing(cls, kind: str, reason: str, n: int = 0) -> FitResult:
        """A fit that could not be made, carrying the reason (never identified).

        Examples
        --------
        >>> f = FitResult.missing("offset_power", "3 depths < 4")
        >>> f.identified, f.reason
        (False, '3 depths < 4')
        """
        return cls(kind, {}, {}, math.nan, math.nan, math.nan, n, 0, failure=reason)

    def identification(self) -> tuple[bool, str]:
        """Whether the parameters are identified, and if not, why.

        Not identified: no fit (``failure``), a non-finite parameter, a parameter at a bound of its
        range, a zero or non-finite standard error, R^2 <= 0 (or undefined: flat data), or a 95 %
        interval wider than the parameter's range.
        """
        if self.failure:
            return False, self.failure
        # checked in this order so that the reason names the root cause (a bound before its nan error)
        for k in self.names:
            if not math.isfinite(self.params[k]):
                return False, f"{k} = {self.params[k]} is not finite"
        for k in self.names:
            v = self.params[k]
            lo, hi = self.bounds.get(k, (-math.inf, math.inf))
            scale = (hi - lo) if math.isfinite(hi - lo) and hi > lo else max(abs(v), 1.0)
            for b in (lo, hi):
                if math.isfinite(b) and abs(v - b) <= 1e-6 * scale:
                    return False, f"{k} = {v:.3g} is at the bound {b:g} of its range"
        for k in self.names:
            se = self.se.get(k, math.nan)
            if not math.isfinite(se) or se <= 0:
                return False, f"{k} has standard error {se:g}" + (
                    " (as many parameters as points)" if self.dof <= 0 else ""
                )
        for k in self.names:
            lo, hi = self.bounds.get(k, (-math.inf, math.inf))
            if math.isfinite(hi - lo):
                a, b = self.interval(k)
                if b - a > hi - lo:
                    return (
                        False,
                        f"the 95% interval of {k} ({b - a:.3g} wide) is wider than its range [{lo:g}, {hi:.4g}]",
                    )
        if not (self.r2 > 0):
            return False, f"R^2 = {self.r2:.3g} <= 0: the law explains nothing of the data"
        return True, ""

    @property
    def identified(self) -> bool:
        """True when every free parameter is pinned down by the data (see :meth:`identification`)."""
        return self.identification()[0]

    @property
    def reason(self) -> str:
        """Why the fit is not identified (``""`` when it is)."""
        return self.identification()[1]

    def interval(self, name: str, level: float = 0.95) -> tuple:
        """Jacobian confidence interval ``param +- t_(dof) se`` (``nan`` if dof = 0)."""
        check_real("level", level, lo=0, hi=1, lo_open=True, hi_open=True)
        if name not in self.params:
            raise ValueError(f"name={name!r}: must be one of {', '.join(self.params) or '(no parameters: no fit)'}")
        se = self.se.get(name, math.nan)
        if self.dof <= 0 or not math.isfinite(se):
            return (math.nan, math.nan)
        q = stats.t.ppf(0.5 + level / 2, self.dof)
        return (self.params[name] - q * se, self.params[name] + q * se)

    def predict(self, L) -> np.ndarray:
        """The fitted law at depths ``L``: ``L0 + c L^-alpha`` for offset fits, ``c L^-alpha`` for
        power-law fits and for gap fits (whose fitted quantity is the gap ``L0 - C_L`` itself).

        Examples
        --------
        >>> import numpy as np
        >>> L = 2.0 ** np.arange(1, 7)
        >>> round(float(fit_gap(L, 0.4 / L, L0=1.2).predict(4.0)), 9)  # the gap at L = 4, not L0 + gap
        0.1
        """
        if self.failure:
            raise ValueError(f"kind={self.kind!r}: no fit to predict with ({self.failure})")
        if self.kind.startswith("additive"):
            raise ValueError("kind='additive': predict needs the named inputs; use additive_predict")
        L = np.asarray(L, dtype=float)
        p = {**self.params, **self.fixed}
        law = p["c"] * L ** (-p["alpha"])
        return p["L0"] + law if self.kind.startswith("offset_power") else law

    def to_dict(self) -> dict:
        """JSON-able summary with 95 % Jacobian intervals under ``"ci95"``; non-finite numbers are None."""
        ok, why = self.identification()
        out = {
            "kind": self.kind,
            "identified": ok,
            "reason": why,
            "params": {k: _finite(v) for k, v in self.params.items()},
            "se": {k: _finite(v) for k, v in self.se.items()},
            "ci95": {k: [_finite(x) for x in self.interval(k)] for k in self.params},
            "r2": _finite(self.r2),
            "aic": _finite(self.aic),
            "ssr": _finite(self.ssr),
            "n": int(self.n),
            "dof": int(self.dof),
            "fixed": {k: _finite(v) for k, v in self.fixed.items()},
            "huber": self.huber,
            "success": bool(self.success),
            "message": self.message,
        }
        if math.isfinite(self.delta_aic_alpha_one):
            out["delta_aic_alpha_one"] = float(self.delta_aic_alpha_one)
        if self.bootstrap is not None:
            out["bootstrap"] = self.bootstrap.to_dict()
        return out


def _finite(x) -> float | None:
    """A float for JSON, None for nan and infinities (strict JSON has no NaN)."""
    x = float(x)
    return x if math.isfinite(x) else None


@dataclass(frozen=True)
class ProfileResult:
    """Profile of the residual sum in alpha: best (L0, c) at each fixed alpha."""

    alphas: np.ndarray
    ssr: np.ndarray
    L0: np.ndarray
    c: np.ndarray

    @property
    def best_alpha(self) -> float:
        """The grid alpha with the smallest residual sum."""
        return float(self.alphas[int(np.nanargmin(self.ssr))])

    def to_dict(self) -> dict:
        return {
            "alphas": self.alphas.tolist(),
            "ssr": self.ssr.tolist(),
            "L0": self.L0.tolist(),
            "c": self.c.tolist(),
            "best_alpha": self.best_alpha,
        }


@dataclass(frozen=True)
class Comparison:
    """Free fit against alpha fixed at 1; ``delta_aic = aic(alpha = 1) - aic(free)`` (> 0 favours free)."""

    free: FitResult
    fixed: FitResult
    delta_aic: float

    def to_dict(self) -> dict:
        return {"free": self.free.to_dict(), "alpha_one": self.fixed.to_dict(), "delta_aic": _finite(self.delta_aic)}


@dataclass(frozen=True)
class BootstrapResult:
    """Fit to the seed-mean curve plus percentile intervals from resampling seeds."""

    point: FitResult
    intervals: dict  # name -> (lo, hi)
    se: dict  # bootstrap standard deviation per parameter
    level: float
    n_boot: int
    n_ok: int
    n_seeds: int
    samples: dict = field(default_factory=dict, repr=False)  # name -> array of bootstrap values

    @property
    def params(self) -> dict:
        return self.point.params

    def to_dict(self) -> dict:
        return {
            "point": self.point.to_dict(),
            "params": {k: _finite(v) for k, v in self.point.params.items()},
            "intervals": {k: [_finite(a), _finite(b)] for k, (a, b) in self.intervals.items()},
            "se": {k: _finite(v) for k, v in self.se.items()},
            "level": self.level,
            "n_boot": self.n_boot,
            "n_ok": self.n_ok,
            "n_seeds": self.n_seeds,
        }


# -------------------------------------------------------------------------------------------
# input checks
def _vector(name: str, x, positive: bool) -> np.ndarray:
    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name}={x!r}: must be a 1-D array of numbers") from None
    if a.ndim != 1 or a.size == 0:
        raise ValueError(f"{name}={x!r}: must be a non-empty 1-D array")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name}={a.tolist()!r}: must be finite")
    if positive and np.any(a <= 0):
        raise ValueError(f"{name}={a.tolist()!r}: must be > 0 (fits use logarithms)")
    return a


def _inputs(L, R, weights, n_params: int, R_name: str = "R"):
    L = _vector("L", L, True)
    R = _vector(R_name, R, True)
    if L.size != R.size:
        raise ValueError(f"{R_name} has {R.size} values: must match L ({L.size})")
    if L.size < n_params:
        raise ValueError(f"L has {L.size} points: must have at least {n_params} for this fit")
    if weights is None:
        w = np.ones_like(L)
    else:
        w = _vector("weights", weights, False)
        if w.size != L.size or np.any(w < 0) or w.sum() <= 0:
            raise ValueError(f"weights={w.tolist()!r}: must be {L.size} non-negative numbers, not all zero")
    return L, R, w


def _check_huber(huber):
    return None if huber is None else check_real("huber", huber, lo=0, lo_open=True)


# -------------------------------------------------------------------------------------------
# the generic log-residual fitter
def _finish(
    kind, names, theta, resid_fn, jac_fn, logR, w, huber, fixed, success=True, message="", to_params=None, bounds=None
):
    """Statistics at the optimum. ``jac_fn`` gives d(log model)/d(natural params) (n, p)."""
    r = resid_fn(theta)  # sqrt(w) * (log R - log m)
    ssr = float(r @ r)
    n, p = logR.size, len(names)
    dof = n - p
    params = to_params(theta) if to_params else dict(zip(names, theta))
    J = np.sqrt(w)[:, None] * jac_fn(params)
    if dof > 0:
        s2 = ssr / dof
        try:
            cov = s2 * np.linalg.inv(J.T @ J)
        except np.linalg.LinAlgError:
            cov = s2 * np.linalg.pinv(J.T @ J)
        se = {k: float(math.sqrt(v)) if v >= 0 else math.nan for k, v in zip(names, np.diag(cov))}
    else:
        cov = np.full((p, p), np.nan)
        se = {k: math.nan for k in names}
    wm = np.sum(w * logR) / np.sum(w)
    sst = float(np.sum(w * (logR - wm) ** 2))
    r2 = 1.0 - ssr / sst if sst > 0 else math.nan
    aic = n * math.log(max(ssr, 1e-300) / n) + 2 * p
    return FitResult(
        kind,
        {k: float(params[k]) for k in names},
        se,
        r2,
        aic,
        ssr,
        n,
        dof,
        tuple(names),
        tuple(map(tuple, cov.tolist())),
        dict(fixed),
        huber,
        success,
        message,
        dict(bounds or {}),
    )


def _least_squares(resid, starts, lo, hi, huber, keep: int = 4, jac="2-point"):
    """Multi-start: rank the starts by cost, refine the best ``keep`` and return the best optimum."""
    costs = []
    for s in starts:
        with np.errstate(all="ignore"):
            r = resid(np.asarray(s, dtype=float))
        c = float(r @ r) if np.all(np.isfinite(r)) else math.inf
        costs.append(c)
    order = np.argsort(costs)[:keep]
    best = None
    for i in order:
        if not math.isfinite(costs[i]):
            continue
        x0 = np.clip(np.asarray(starts[i], dtype=float), lo, hi)
        with np.errstate(all="ignore"):
            sol = optimize.least_squares(
                resid,
                x0,
                jac=jac,
                bounds=(lo, hi),
                method="trf",
                x_scale="jac",
                loss="huber" if huber else "linear",
                f_scale=huber or 1.0,
                xtol=1e-12,
                ftol=1e-12,
                gtol=1e-12,
                max_nfev=2000,
            )
        if best is None or sol.cost < best.cost:
            best = sol
    if best is None:
        raise ValueError("fit failed: the model is not finite at any starting point")
    return best


# -------------------------------------------------------------------------------------------
# R_L = L0 + c L^-alpha
def _offset_jac(L, names, alpha=None):
    """d log(L0 + c L^-alpha) / d(names); ``alpha`` given means it is held fixed."""
    lnL = np.log(L)

    def jac(p):
        a = p["alpha"] if alpha is None else alpha
        Lp = L ** (-a)
        m = p["L0"] + p["c"] * Lp
        cols = {"L0": 1.0 / m, "c": Lp / m, "alpha": -p["c"] * Lp * lnL / m}
        return np.column_stack([cols[k] for k in names])

    return jac


def _c_start(L, R, w, L0, alpha):
    """Closed-form log c given (L0, alpha): weighted mean of log(R - L0) + alpha log L."""
    d = R - L0
    if np.any(d <= 0):
        return None
    return float(np.sum(w * (np.log(d) + alpha * np.log(L))) / np.sum(w))


def fit_offset_power(L, R, weights=None, huber=None) -> FitResult:
    """Fit ``R_L = L0 + c L^-alpha`` (L0 >= 0, c > 0, alpha > 0) on log residuals.

    Multi-start over L0 from 0 to just below the smallest loss and alpha on a grid; the best
    starts are refined by bounded least squares.

    Parameters
    ----------
    L, R : array_like
        Depths and (positive) losses, at least 3 points (4 or more for standard errors).
    weights : array_like, optional
        Relative weights of the log residuals (e.g. inverse variances of log R).
    huber : float, optional
        Huber scale in log units: residuals beyond it count linearly (robust to outliers).

    Examples
    --------
    >>> import numpy as np
    >>> L = 2.0 ** np.arange(8)
    >>> f = fit_offset_power(L, 0.5 + 2.0 / L)
    >>> [round(f.params[k], 6) for k in ("L0", "c", "alpha")]
    [0.5, 2.0, 1.0]
    """
    L, R, w = _inputs(L, R, weights, 3)
    huber = _check_huber(huber)
    logR, sw = np.log(R), np.sqrt(w)

    def resid(th):  # th = (L0, log c, alpha)
        return sw * (logR - np.log(th[0] + np.exp(th[1]) * L ** (-th[2])))

    rmin = float(R.min())
    starts = []
    for f, a in itertools.product(_L0_FRACTIONS, _ALPHA_GRID):
        lc = _c_start(L, R, w, f * rmin, a)
        if lc is not None:
            starts.append((f * rmin, lc, a))
    lnL = np.log(L)

    def dresid(th):
        cLp = np.exp(th[1] - th[2] * lnL)
        m = th[0] + cLp
        return -sw[:, None] * np.column_stack([1.0 / m, cLp / m, -cLp * lnL / m])

    lo, hi = np.array([0.0, -np.inf, 1e-8]), np.array([np.inf, np.inf, ALPHA_MAX])
    sol = _least_squares(resid, starts, lo, hi, huber, keep=3, jac=dresid)
    jac = _offset_jac(L, ("L0", "c", "alpha"))
    return _finish(
        "offset_power",
        ("L0", "c", "alpha"),
        sol.x,
        resid,
        jac,
        logR,
        w,
        huber,
        {},
        sol.success,
        sol.message,
        lambda th: {"L0": th[0], "c": math.exp(th[1]), "alpha": th[2]},
        {"L0": (0.0, rmin), "alpha": (float(lo[2]), ALPHA_MAX)},
    )


def _fit_offset_fixed_alpha(L, R, w, alpha, huber, model="offset_power_fixed_alpha") -> FitResult:
    logR, sw = np.log(R), np.sqrt(w)
    La = L ** (-alpha)

    def resid(th):  # th = (L0, log c)
        return sw * (logR - np.log(th[0] + np.exp(th[1]) * La))

    rmin = float(R.min())
    starts = [(f * rmin, _c_start(L, R, w, f * rmin, alpha)) for f in _L0_FRACTIONS]
    starts = [s for s in starts if s[1] is not None]
    # with alpha fixed the law is linear in (L0, c): non-negative least squares on relative errors
    # gives a start next to the log-residual optimum
    (l0, c), _ = optimize.nnls(np.column_stack([np.ones_like(L), La]) / R[:, None] * sw[:, None], sw)
    if c > 0:
        starts.append((l0, math.log(c)))

    def dresid(th):
        cLa = np.exp(th[1]) * La
        m = th[0] + cLa
        return -sw[:, None] * np.column_stack([1.0 / m, cLa / m])

    sol = _least_squares(resid, starts, np.array([0.0, -np.inf]), np.array([np.inf, np.inf]), huber, keep=2, jac=dresid)
    jac = _offset_jac(L, ("L0", "c"), alpha)
    return _finish(
        model,
        ("L0", "c"),
        sol.x,
        resid,
        jac,
        logR,
        w,
        huber,
        {"alpha": alpha},
        sol.success,
        sol.message,
        lambda th: {"L0": th[0], "c": math.exp(th[1])},
        {"L0": (0.0, rmin)},
    )


def profile_alpha(L, R, alphas, weights=None, huber=None) -> ProfileResult:
    """Residual sum of the best (L0, c) at each fixed alpha: the profile of the fit in alpha.

    Examples
    --------
    >>> import numpy as np
    >>> L = 2.0 ** np.arange(8)
    >>> prof = profile_alpha(L, 0.5 + 2.0 / L, [0.5, 1.0, 1.5])
    >>> prof.best_alpha
    1.0
    """
    L, R, w = _inputs(L, R, weights, 2)
    huber = _check_huber(huber)
    a = _vector("alphas", alphas, True)
    ssr, L0, c = (np.full(a.size, np.nan) for _ in range(3))
    for i, alpha in enumerate(a):
        f = _fit_offset_fixed_alpha(L, R, w, float(alpha), huber)
        ssr[i], L0[i], c[i] = f.ssr, f.params["L0"], f.params["c"]
    return ProfileResult(a, ssr, L0, c)


def compare_alpha_one(L, R, weights=None, huber=None) -> Comparison:
    """Free ``L0 + c L^-alpha`` against alpha fixed at 1; ``delta_aic = AIC(alpha=1) - AIC(free)``.

    A positive delta favours the free exponent (by the usual reading, > 2 is some evidence,
    > 10 strong).

    Examples
    --------
    >>> import numpy as np
    >>> L = 2.0 ** np.arange(8)
    >>> cmp = compare_alpha_one(L, 0.5 + 2.0 * L ** -0.5)
    >>> cmp.delta_aic > 10
    True
    """
    L, R, w = _inputs(L, R, weights, 3)
    huber = _check_huber(huber)
    free = fit_offset_power(L, R, weights=w, huber=huber)
    fixed = _fit_offset_fixed_alpha(L, R, w, 1.0, huber, model="offset_power_alpha1")
    return Comparison(free, fixed, fixed.aic - free.aic)


# -------------------------------------------------------------------------------------------
# pure power law and the gap fit
def _power(L, R, w, huber, model, R_name="R", fixed=None):
    logR, lnL, sw = np.log(R), np.log(L), np.sqrt(w)

    def resid(th):  # th = (log c, alpha)
        return sw * (logR - th[0] + th[1] * lnL)

    def jac(p):
        return np.column_stack([1.0 / p["c"] * np.ones_like(L), -lnL])

    if huber is None:
        # weighted linear regression of log R on log L: exact, no iteration
        X = np.column_stack([np.ones_like(L), -lnL])
        th = np.linalg.lstsq(X * sw[:, None], logR * sw, rcond=None)[0]
        success, msg = True, "linear least squares"
    else:
        sol = optimize.least_squares(
            resid, np.array([logR.mean(), 1.0]), loss="huber", f_scale=huber, xtol=1e-12, ftol=1e-12, gtol=1e-12
        )
        th, success, msg = sol.x, sol.success, sol.message
    return _finish(
        model,
        ("c", "alpha"),
        th,
        resid,
        jac,
        logR,
        w,
        huber,
        fixed or {},
        success,
        msg,
        lambda t: {"c": math.exp(t[0]), "alpha": t[1]},
    )


def fit_power_law(L, R, weights=None, huber=None) -> FitResult:
    """Fit the pure power law ``R_L = c L^-alpha`` (L0 = 0) by regression of log R on log L.

    Examples
    --------
    >>> import numpy as np
    >>> L = 2.0 ** np.arange(6)
    >>> f = fit_power_law(L, 3.0 * L ** -1.5)
    >>> round(f.params["c"], 9), round(f.params["alpha"], 9)
    (3.0, 1.5)
    """
    L, R, w = _inputs(L, R, weights, 2)
    return _power(L, R, w, _check_huber(huber), "power_law")


def fit_gap(L, gap_values, L0=None, weights=None, huber=None) -> FitResult:
    """Fit ``L0 - C_L = c L^-alpha`` to the gap values (L0 held fixed by whoever computed them).

    Parameters
    ----------
    L : array_like
        Depths.
    gap_values : array_like
        ``L0 - C_L`` at each depth; all must be > 0 (drop the others before fitting).
    L0 : float, optional
        The fixed floor the gaps were measured from; recorded in ``result.fixed``.

    Examples
    --------
    >>> import numpy as np
    >>> L = 2.0 ** np.arange(1, 7)
    >>> round(fit_gap(L, 0.4 * L ** -0.98, L0=1.2).params["alpha"], 9)
    0.98
    """
    L, G, w = _inputs(L, gap_values, weights, 2, R_name="gap_values")
    fixed = {} if L0 is None else {"L0": check_real("L0", L0)}
    return _power(L, G, w, _check_huber(huber), "gap", fixed=fixed)


# -------------------------------------------------------------------------------------------
# additive multi-term law
def fit_additive(xs: dict, R, weights=None, huber=None) -> FitResult:
    """Fit ``R = sum_i c_i x_i^-a_i + L0`` (c_i > 0, a_i > 0, L0 >= 0) on log residuals.

    Parameters
    ----------
    xs : dict
        ``{name: array}`` of positive inputs (e.g. ``{"m": widths, "l": depths, "D": tokens}``);
        the parameters are ``L0``, ``c_<name>`` and ``a_<name>``.
    R : array_like
        Positive losses, one per point.

    Examples
    --------
    >>> import numpy as np
    >>> m, l = np.meshgrid(2.0 ** np.arange(5), 2.0 ** np.arange(5))
    >>> R = 0.1 + 2 * m.ravel() ** -0.5 + 1 * l.ravel() ** -1.0
    >>> f = fit_additive({"m": m.ravel(), "l": l.ravel()}, R)
    >>> [round(f.params[k], 5) for k in ("L0", "a_m", "a_l")]
    [0.1, 0.5, 1.0]
    """
    if not isinstance(xs, dict) or not xs:
        raise ValueError(f"xs={xs!r}: must be a non-empty dict of name -> array")
    names = [str(k) for k in xs]
    X = []
    for k in names:
        X.append(_vector(f"xs[{k!r}]", xs[k], True))
    R_arr = _vector("R", R, True)
    for k, x in zip(names, X):
        if x.size != R_arr.size:
            raise ValueError(f"xs[{k!r}] has {x.size} values: must match R ({R_arr.size})")
    K = len(names)
    _, R_arr, w = _inputs(np.ones_like(R_arr), R_arr, weights, 1 + 2 * K)
    huber = _check_huber(huber)
    X = np.array(X)  # (K, n)
    lnX = np.log(X)
    logR, sw = np.log(R_arr), np.sqrt(w)

    def model(th):
        c, a = np.exp(th[1 : 1 + K]), th[1 + K :]
        return th[0] + np.sum(c[:, None] * np.exp(-a[:, None] * lnX), axis=0)

    def resid(th):
        return sw * (logR - np.log(model(th)))

    rmin = float(R_arr.min())
    grid = (0.1, 0.3, 0.6, 1.0, 1.5, 2.5)
    starts = []
    for f in (0.0, 0.5, 0.9):
        for a in itertools.product(grid, repeat=K):
            basis = np.exp(-np.array(a)[:, None] * lnX).T  # (n, K)
            # relative residuals: scale rows by 1/R so the linear start matches the log objective
            c, _ = optimize.nnls(basis / R_arr[:, None], (R_arr - f * rmin) / R_arr)
            c = np.maximum(c, 1e-8 * rmin)
            starts.append(np.concatenate([[f * rmin], np.log(c), a]))
    lo = np.concatenate([[0.0], np.full(K, -np.inf), np.full(K, 1e-8)])
    hi = np.concatenate([[np.inf], np.full(K, np.inf), np.full(K, ALPHA_MAX)])
    sol = _least_squares(resid, starts, lo, hi, huber, keep=6)
    pnames = ["L0"] + [f"c_{k}" for k in names] + [f"a_{k}" for k in names]

    def to_params(th):
        p = {"L0": th[0]}
        for i, k in enumerate(names):
            p[f"c_{k}"], p[f"a_{k}"] = math.exp(th[1 + i]), th[1 + K + i]
        return p

    def jac(p):
        c = np.array([p[f"c_{k}"] for k in names])
        a = np.array([p[f"a_{k}"] for k in names])
        terms = np.exp(-a[:, None] * lnX)  # (K, n)
        m = p["L0"] + np.sum(c[:, None] * terms, axis=0)
        cols = [1.0 / m] + [terms[i] / m for i in range(K)] + [-c[i] * terms[i] * lnX[i] / m for i in range(K)]
        return np.column_stack(cols)

    bounds = {"L0": (0.0, rmin), **{f"a_{k}": (float(lo[1 + K]), ALPHA_MAX) for k in names}}
    return _finish(
        "additive", tuple(pnames), sol.x, resid, jac, logR, w, huber, {}, sol.success, sol.message, to_params, bounds
    )


def additive_predict(fit: FitResult, xs: dict) -> np.ndarray:
    """Evaluate a fitted additive law at the inputs ``xs``."""
    p = fit.params
    out = p["L0"]
    for k, x in xs.items():
        out = out + p[f"c_{k}"] * np.asarray(x, dtype=float) ** (-p[f"a_{k}"])
    return out


# -------------------------------------------------------------------------------------------
# bootstrap over seeds
def bootstrap_over_seeds(
    L, R_by_seed, fit_fn=fit_offset_power, n_boot: int = 1000, rng=None, level: float = 0.95, **fit_kwargs
) -> BootstrapResult:
    """Percentile intervals from resampling whole seeds (rows), refitting the seed-mean curve.

    Resampling seeds keeps the correlation between the depths of one seed (shared evaluation
    contexts, shared training noise), which resampling points of one curve would destroy.

    Parameters
    ----------
    L : array_like
        Depths, length n_L.
    R_by_seed : array_like, shape (n_seeds, n_L)
        Losses of each seed at each depth (``nan`` for a missing run).
    fit_fn : callable
        ``fit_fn(L, R, **fit_kwargs) -> FitResult``, e.g. :func:`fit_offset_power`.
    n_boot : int
        Bootstrap replicates.
    rng : numpy.random.Generator, optional
        Source of the resampling (default ``default_rng(0)``: reproducible).
    level : float
        Coverage of the percentile intervals.

    Examples
    --------
    >>> import numpy as np
    >>> g = np.random.default_rng(1)
    >>> L = 2.0 ** np.arange(7)
    >>> R = (0.5 + 2 / L) * np.exp(0.02 * g.standard_normal((8, L.size)))
    >>> b = bootstrap_over_seeds(L, R, n_boot=100, rng=g)
    >>> lo, hi = b.intervals["alpha"]
    >>> bool(lo < b.params["alpha"] < hi), b.n_ok
    (True, 100)
    """
    L = _vector("L", L, True)
    try:
        Y = np.asarray(R_by_seed, dtype=float)
    except (TypeError, ValueError):
        raise ValueError("R_by_seed: must be a numeric array of shape (n_seeds, n_L)") from None
    if Y.ndim != 2 or Y.shape[1] != L.size:
        raise ValueError(f"R_by_seed has shape {Y.shape}: must be (n_seeds, {L.size})")
    if Y.shape[0] < 2:
        raise ValueError(f"R_by_seed has {Y.shape[0]} seed(s): must have at least 2 to resample seeds")
    n_boot = check_int("n_boot", n_boot, lo=1)
    level = check_real("level", level, lo=0, hi=1, lo_open=True, hi_open=True)
    if not callable(fit_fn):
        raise ValueError(f"fit_fn={fit_fn!r}: must be a fit function such as fit_offset_power")
    rng = np.random.default_rng(0) if rng is None else rng
    with np.errstate(all="ignore"):
        mean = np.nanmean(Y, axis=0)
    point = fit_fn(L, mean, **fit_kwargs)
    names = list(point.params)
    draws = {k: [] for k in names}
    S = Y.shape[0]
    fitted: dict = {}  # a resample is a multiset of seeds: with few seeds most repeat (3 seeds: 10 distinct)
    for _ in range(n_boot):
        idx = tuple(sorted(rng.integers(0, S, S)))
        if idx not in fitted:
            with np.errstate(all="ignore"):
                m = np.nanmean(Y[list(idx)], axis=0)
            fitted[idx] = None
            if np.all(np.isfinite(m)):
                try:
                    fitted[idx] = fit_fn(L, m, **fit_kwargs).params
                except (ValueError, np.linalg.LinAlgError):
                    pass
        if fitted[idx] is not None:
            for k in names:
                draws[k].append(fitted[idx][k])
    samples = {k: np.asarray(v) for k, v in draws.items()}
    n_ok = len(samples[names[0]]) if names else 0
    if n_ok < 2:
        raise ValueError(f"n_boot={n_boot}: fewer than 2 bootstrap fits succeeded")
    q = (50 * (1 - level), 50 * (1 + level))
    intervals = {k: tuple(float(x) for x in np.percentile(v, q)) for k, v in samples.items()}
    se = {k: float(np.std(v, ddof=1)) for k, v in samples.items()}
    return BootstrapResult(point, intervals, se, level, n_boot, n_ok, S, samples)


__all__ = [
    "FitResult",
    "ProfileResult",
    "Comparison",
    "BootstrapResult",
    "fit_offset_power",
    "profile_alpha",
    "compare_alpha_one",
    "fit_power_law",
    "fit_gap",
    "fit_additive",
    "additive_predict",
    "bootstrap_over_seeds",
]
