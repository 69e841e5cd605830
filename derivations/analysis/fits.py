"""Scaling-law fits: the laws of docs/claims.md, fitted on log residuals.

All fits minimise squared residuals of the LOG loss, ``sum_i w_i [log R_i - log model(L_i)]^2``
(optionally with a Huber loss on the residuals), so every point counts by its relative error.
Standard errors come from the Jacobian at the optimum, ``s^2 (J^T J)^-1`` with
``s^2 = SSR / (n - p)``; R^2 is computed on log R; AIC is the Gaussian ``n log(SSR/n) + 2p``
(comparable between fits to the same points). Because L0 and alpha are strongly correlated, use
:func:`profile_alpha` and :func:`~depthscale.derivations.analysis.bootstrap.bootstrap_over_seeds`
(resampling whole seeds, not points of one curve) alongside the Jacobian errors.
"""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
from scipy import optimize

from ...theory._validate import check_real
from .fit_ranges import _floor_cap
from .fit_results import BootstrapResult, Comparison, FitResult, ProfileResult

ALPHA_MAX = 20.0  # upper bound of fitted exponents: far beyond anything physical here
_ALPHA_GRID = (0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0)
_L0_FRACTIONS = (0.0, 0.25, 0.5, 0.75, 0.9, 0.97, 0.99, 0.999)  # of the smallest loss


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

    rmin = _floor_cap(L, R, w)
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

    lo, hi = np.array([0.0, -np.inf, 1e-8]), np.array([rmin, np.inf, ALPHA_MAX])
    sol = _least_squares(resid, starts, lo, hi, huber, keep=3, jac=dresid)
    jac = _offset_jac(L, ("L0", "c", "alpha"))
    res = _finish(
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
    return dataclasses.replace(res, data=(L, R, w, huber))


def _fit_offset_fixed_alpha(L, R, w, alpha, huber, model="offset_power_fixed_alpha", cap: bool = True) -> FitResult:
    """``cap=False``: L0 bounded below by 0 only (the law itself, as a lack-of-fit test's null model
    needs); by default also above by the smallest loss, as every reported offset fit."""
    logR, sw = np.log(R), np.sqrt(w)
    La = L ** (-alpha)

    def resid(th):  # th = (L0, log c)
        return sw * (logR - np.log(th[0] + np.exp(th[1]) * La))

    rmin = _floor_cap(L, R, w)
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

    top = rmin if cap else np.inf
    sol = _least_squares(resid, starts, np.array([0.0, -np.inf]), np.array([top, np.inf]), huber, keep=2, jac=dresid)
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
        {"L0": (0.0, top)},
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
    Xa = np.array(X)  # (K, n)
    lnX = np.log(Xa)
    logR, sw = np.log(R_arr), np.sqrt(w)

    def model(th):
        c, a = np.exp(th[1 : 1 + K]), th[1 + K :]
        return th[0] + np.sum(c[:, None] * np.exp(-a[:, None] * lnX), axis=0)

    def resid(th):
        return sw * (logR - np.log(model(th)))

    rmin = _floor_cap(Xa.T, R_arr, w)
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
    hi = np.concatenate([[rmin], np.full(K, np.inf), np.full(K, ALPHA_MAX)])
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
]
