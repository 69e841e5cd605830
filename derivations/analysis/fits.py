"""Scaling-law fits: the laws of docs/claims.md, fitted on log residuals, and what a fit returns
(:class:`FitResult`, which refits itself for its profile interval, beside the fitter, as lmfit keeps
``ModelResult`` with ``Model``; and the records of profiles, comparisons and bootstraps).

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
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
from scipy import optimize, stats

from ...theory._json import finite_number
from ...theory._validate import bad_argument, check_real

ALPHA_MAX = 20.0  # upper bound of fitted exponents: far beyond anything physical here
_ALPHA_GRID = (0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0)
_L0_FRACTIONS = (0.0, 0.25, 0.5, 0.75, 0.9, 0.97, 0.99, 0.999)  # of the smallest loss
PROFILE_ALPHA_MIN = 0.01  # below it a power law is not told from a logarithm on these depths


# -------------------------------------------------------------------------------------------
# results
class ReadOnlyDict(dict):
    """A dict that refuses changes: a fit's numbers (``FitResult.params``, ``.se``, ``.fixed``,
    ``.bounds``). A curve caches its fits and hands the same object to every caller, so a change one
    caller made would move every later verdict; ``dict(fit.params)`` is a copy to change.

    >>> p = ReadOnlyDict(alpha=1.0)
    >>> p["alpha"] = 2.0
    Traceback (most recent call last):
    ...
    TypeError: a fit's parameters are read-only (shared by every caller of a cached fit): change a copy, dict(fit.params)
    >>> dict(p), {**p, "alpha": 2.0}
    ({'alpha': 1.0}, {'alpha': 2.0})
    """

    __slots__ = ()

    def _refuse(self, *args, **kwargs):
        raise TypeError(
            "a fit's parameters are read-only (shared by every caller of a cached fit): change a copy, dict(fit.params)"
        )

    __setitem__ = __delitem__ = __ior__ = _refuse
    clear = pop = popitem = setdefault = update = _refuse

    def __reduce__(self):  # pickle and copy rebuild it whole (the default would set item by item)
        return (type(self), (dict(self),))


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
    bootstrap_refused : str
        Why there is no bootstrap when one was asked for (e.g. fewer than 3 seeds); ``""`` otherwise.
    delta_aic_alpha_one : float
        ``AIC(alpha = 1) - AIC(free)`` for offset fits (``nan`` when not computed).
    depths : tuple
        The depths the fit was made to (a curve's fit; ``()`` for a fit made to bare arrays).
    window : tuple or None
        ``(L_min, L_max)``: the depth window the fit was restricted to (``-inf`` / ``inf`` for an open
        end), None when every depth was offered (``Curve.fit(L_min=..., L_max=...)``).
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
    bootstrap_refused: str = ""
    depths: tuple = ()
    window: tuple | None = None
    # the points an offset fit was made to, ``(L, R, weights, huber)``: what the profile refits
    data: tuple | None = field(default=None, repr=False, compare=False)
    _memo: dict = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        # read-only copies: a cached fit is one object for every caller (ReadOnlyDict)
        for name in ("params", "se", "fixed", "bounds"):
            object.__setattr__(self, name, ReadOnlyDict(getattr(self, name)))

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

        *Identified* promises that the data bound every free parameter inside the range it can take
        (an exponent's lower end may be the range's own).

        Not identified: no fit (``failure``), a non-finite parameter, a parameter at a bound of its
        range, a zero or non-finite standard error, a 95 % Jacobian interval wider than the
        parameter's range, R^2 <= 0 (or undefined: flat data), or, for a free exponent of an offset
        law, a 95 % profile-likelihood interval (:meth:`profile_interval`) that reaches the top of
        the exponent's range: the Jacobian error is a local (quadratic) approximation and on few
        points it can be several times too narrow (docs/choices.md). A profile open towards 0 (a
        law not told from a logarithm) is kept, as a clipped Jacobian interval is: the exponent is
        still bounded above, and claims about it can be decided.
        """
        if "identification" not in self._memo:
            self._memo["identification"] = self._identification()
        return self._memo["identification"]

    def _identification(self) -> tuple[bool, str]:
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
                a, b = self._jacobian_interval(k, 0.95)  # unclipped: clipping would hide the width
                if b - a > hi - lo:
                    return (
                        False,
                        f"the 95% interval of {k} ({b - a:.3g} wide) is wider than its range [{lo:g}, {hi:.4g}]",
                    )
        if not (self.r2 > 0):
            return False, f"R^2 = {self.r2:.3g} <= 0: the law explains nothing of the data"
        if "alpha" in self.names and self.data is not None:
            if self.profile_interval("alpha")[1] >= ALPHA_MAX:
                return False, (
                    f"the 95% profile-likelihood interval of alpha reaches above {ALPHA_MAX:g} "
                    f"(Jacobian {self.params['alpha']:.3g} ± {self.se['alpha']:.2g}): the data do not bound it"
                )
        return True, ""

    def profile_interval(self, name: str = "alpha", level: float = 0.95) -> tuple:
        """Profile-likelihood interval of the exponent of an offset fit: the exponents whose best
        ``(L0, c)`` leave a residual sum within the F bound of the minimum.

        ``SSR(alpha) <= SSR_min (1 + F_(1, dof)(level) / dof)``, the exact interval of a linear model
        and, unlike ``alpha ± t se``, one that follows the curvature of the likelihood. Found by
        walking out from the estimate in steps of 30 % and refining each crossing; an end that
        is not crossed inside the range is returned as that end of the range (``ALPHA_MAX`` above,
        :data:`PROFILE_ALPHA_MIN` below), which means the
        data do not bound the exponent there. ``(nan, nan)`` for other fits and without dof.

        Examples
        --------
        >>> import numpy as np
        >>> from depthscale.derivations.analysis.fits import fit_offset_power
        >>> L = np.repeat([1.0, 2.0, 4.0, 8.0, 16.0], 2)
        >>> f = fit_offset_power(L, (0.5 + 2.0 / L) * np.exp(0.01 * np.tile([1.0, -1.0], 5)))
        >>> lo, hi = f.profile_interval("alpha")
        >>> bool(0.9 < lo < 1.0 < hi < 1.1)
        True
        """
        check_real("level", level, lo=0, hi=1, lo_open=True, hi_open=True)
        if name not in self.params:
            bad_argument("name", name, f"one of {', '.join(self.params) or '(no parameters: no fit)'}")
        if name != "alpha" or self.data is None or self.dof <= 0:
            return (math.nan, math.nan)
        key = ("profile", name, float(level))
        if key not in self._memo:
            self._memo[key] = _profile_alpha_interval(self, level)
        return self._memo[key]

    @property
    def law(self) -> str:
        """The formula of the fitted law (:data:`LAWS`), e.g. ``"L0 + c L^-alpha"``."""
        return law_formula(self.kind)

    @property
    def identified(self) -> bool:
        """True when every free parameter is pinned down by the data (see :meth:`identification`)."""
        return self.identification()[0]

    @property
    def reason(self) -> str:
        """Why the fit is not identified (``""`` when it is)."""
        return self.identification()[1]

    def param_range(self, name: str) -> tuple:
        """``(lo, hi)``: the values parameter ``name`` can take in this fit.

        The fit's :attr:`bounds` where it has them (``L0`` between 0 and the smallest loss, exponents
        of offset fits between 0 and :data:`ALPHA_MAX`);
        amplitudes ``c`` and ``c_<name>`` are positive (fitted as ``exp(log c)``); anything else is
        unbounded (the exponent of a pure power law, a regression slope).

        Examples
        --------
        >>> import numpy as np
        >>> from depthscale.derivations.analysis.fits import fit_power_law
        >>> f = fit_power_law(2.0 ** np.arange(5), 3.0 * 2.0 ** -np.arange(5))
        >>> f.param_range("c"), f.param_range("alpha")
        ((0.0, inf), (-inf, inf))
        """
        if name not in self.params and name not in self.bounds:
            bad_argument("name", name, f"one of {', '.join(self.params) or '(no parameters: no fit)'}")
        if name in self.bounds:
            lo, hi = self.bounds[name]
            return (float(lo), float(hi))
        if name == "c" or name.startswith("c_"):
            return (0.0, math.inf)
        return (-math.inf, math.inf)

    def interval(self, name: str, level: float = 0.95) -> tuple:
        """Jacobian confidence interval ``param +- t_(dof) se``, clipped to :meth:`param_range`.

        Clipped, not profiled: the ends outside the range a parameter can take are cut at that
        range (an exponent that must be positive never gets a negative lower end). The truth lies
        in the range, so clipping keeps the interval's coverage exactly. ``(nan, nan)`` when there
        is no standard error (dof = 0). Whether the unclipped interval fits in the range at all is
        part of :meth:`identification`.

        Examples
        --------
        >>> f = FitResult("offset_power", {"L0": 0.5, "c": 2.0, "alpha": 0.13}, {"L0": 0.01, "c": 0.1,
        ...               "alpha": 0.1}, 0.99, -50.0, 1e-4, 8, 5, ("L0", "c", "alpha"),
        ...               bounds={"L0": (0.0, 0.6), "alpha": (1e-8, 20.0)})
        >>> lo, hi = f.interval("alpha")
        >>> lo, round(hi, 4)  # 0.13 - 2.571 x 0.1 < 0 is cut at the range
        (1e-08, 0.3871)
        """
        check_real("level", level, lo=0, hi=1, lo_open=True, hi_open=True)
        if name not in self.params:
            bad_argument("name", name, f"one of {', '.join(self.params) or '(no parameters: no fit)'}")
        a, b = self._jacobian_interval(name, level)
        if not (math.isfinite(a) and math.isfinite(b)):
            return (a, b)
        lo, hi = self.param_range(name)
        return (min(max(a, lo), hi), max(min(b, hi), lo))

    def _jacobian_interval(self, name: str, level: float) -> tuple:
        se = self.se.get(name, math.nan)
        if self.dof <= 0 or not math.isfinite(se):
            return (math.nan, math.nan)
        q = stats.t.ppf(0.5 + level / 2, self.dof)
        return (float(self.params[name] - q * se), float(self.params[name] + q * se))

    def _repr_html_(self) -> str:
        from .display import fit_html  # display code apart from the numbers

        return fit_html(self)

    def __repr__(self) -> str:
        from .display import fit_repr

        return fit_repr(self)

    def fit_report(self, min_correl: float = 0.1) -> str:
        """A text report in lmfit's manner: the law, fit statistics, whether identified (or why
        not), the variables with standard errors and intervals, and the parameter correlations.

        Parameters
        ----------
        min_correl : float
            Correlations of smaller magnitude are left out.

        Returns
        -------
        str
            Print it: ``print(fit.fit_report())``.
        """
        from .display import fit_report

        check_real("min_correl", min_correl, lo=0, hi=1)
        return fit_report(self, min_correl)

    def correlations(self) -> dict:
        """``{(a, b): r}``: the correlation of each pair of free parameters (from :attr:`cov`)."""
        from .display import correlations

        return correlations(self)

    def predict(self, L) -> np.ndarray:
        """The fitted law at depths ``L``: ``L0 + c L^-alpha`` for offset fits, ``c L^-alpha`` for
        power-law fits and for gap fits (whose fitted quantity is the gap ``L0 - C_L`` itself).

        Examples
        --------
        >>> import numpy as np
        >>> from depthscale.derivations.analysis.fits import fit_gap
        >>> L = 2.0 ** np.arange(1, 7)
        >>> round(float(fit_gap(L, 0.4 / L, L0=1.2).predict(4.0)), 9)  # the gap at L = 4, not L0 + gap
        0.1
        """
        if self.failure:
            raise ValueError(f"kind={self.kind!r}: no fit to predict with ({self.failure})")
        if self.kind.startswith("additive"):
            raise ValueError("kind='additive': predict needs the named inputs; use additive_predict")
        try:
            L = np.asarray(L, dtype=float)
        except (TypeError, ValueError):
            bad_argument("L", L, "depths: numbers >= 1")
        if L.size == 0 or not np.all(np.isfinite(L)) or np.any(L < 1):
            bad_argument("L", L.tolist() if L.size < 8 else f"array of shape {L.shape}", "finite depths >= 1")
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
        if self.bootstrap_refused:
            out["bootstrap_refused"] = self.bootstrap_refused
        if self.depths:
            out["depths"] = [int(x) for x in self.depths]
        if self.window is not None:
            out["window"] = [_finite(x) for x in self.window]  # an open end is None
        return out


_finite = finite_number  # a float for JSON, None for nan and infinities (strict JSON has no NaN)


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
# the ranges of fitted parameters
def _floor_cap(X, R, w) -> float:
    """The largest floor ``L0`` an offset law may take: the smallest loss of one input point.

    Points that repeat an input (several seeds at one depth) count as one, by the weighted geometric
    mean of their losses (the value the log-residual law is fitted to there): the floor lies below
    the loss at every depth, not below the luckiest seed. ``X`` is ``(n,)`` or ``(n, K)``; points of
    zero weight are left out.
    """
    X = np.asarray(X, dtype=float).reshape(len(R), -1)
    keep = w > 0
    groups: dict = {}
    for x, r, wi in zip(map(tuple, X[keep]), R[keep], w[keep]):
        groups.setdefault(x, []).append((float(r), float(wi)))
    means = [
        g[0][0] if len(g) == 1 else math.exp(sum(wi * math.log(r) for r, wi in g) / sum(wi for _, wi in g))
        for g in groups.values()
    ]
    return float(min(means))


def _profile_alpha_interval(fit, level: float) -> tuple:
    """The profile-likelihood interval of alpha of an offset fit (:meth:`FitResult.profile_interval`)."""
    L, R, w, huber = fit.data
    limit = fit.ssr * (1.0 + float(stats.f.ppf(level, 1, fit.dof)) / fit.dof)

    def excess(a: float) -> float:
        return fit_offset_fixed_alpha(L, R, w, a, huber).ssr - limit

    a_hat = fit.params["alpha"]

    def end(step: float, stop: float) -> float:
        inside = a_hat
        while (inside < stop) if step > 1 else (inside > stop):
            nxt = min(inside * step, stop) if step > 1 else max(inside * step, stop)
            if excess(nxt) > 0:
                return float(optimize.brentq(excess, min(inside, nxt), max(inside, nxt), rtol=1e-4))
            inside = nxt
        return stop

    return (end(1 / 1.3, PROFILE_ALPHA_MIN), end(1.3, ALPHA_MAX))


# -------------------------------------------------------------------------------------------
# input checks
def as_vector(name: str, x, positive: bool) -> np.ndarray:
    """``x`` as a non-empty finite 1-D float array (``positive``: every value > 0), or a ValueError naming ``name``."""
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
    L = as_vector("L", L, True)
    R = as_vector(R_name, R, True)
    if L.size != R.size:
        raise ValueError(f"{R_name} has {R.size} values: must match L ({L.size})")
    if L.size < n_params:
        raise ValueError(f"L has {L.size} points: must have at least {n_params} for this fit")
    if weights is None:
        w = np.ones_like(L)
    else:
        w = as_vector("weights", weights, False)
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


def fit_offset_fixed_alpha(L, R, w, alpha, huber, model="offset_power_fixed_alpha", cap: bool = True) -> FitResult:
    """``L0 + c L^-alpha`` with ``alpha`` held fixed, on checked arrays (the profile, the alpha = 1
    comparison and the lack-of-fit test refit with it). ``cap=False``: L0 bounded below by 0 only
    (the law itself, as a lack-of-fit test's null model needs); by default also above by the
    smallest loss, as every reported offset fit."""
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
    a = as_vector("alphas", alphas, True)
    ssr, L0, c = (np.full(a.size, np.nan) for _ in range(3))
    for i, alpha in enumerate(a):
        f = fit_offset_fixed_alpha(L, R, w, float(alpha), huber)
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
    fixed = fit_offset_fixed_alpha(L, R, w, 1.0, huber, model="offset_power_alpha1")
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
        X.append(as_vector(f"xs[{k!r}]", xs[k], True))
    R_arr = as_vector("R", R, True)
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


# -------------------------------------------------------------------------------------------
# the laws a curve is fitted with: the one table (curves, displays and the command line read it)
class Law(NamedTuple):
    """A depth law: its formula, its fitter, the fewest depths that leave it a degree of freedom, and
    the :attr:`FitResult.kind` its fits carry."""

    formula: str
    fit: Callable[..., FitResult]
    fewest_depths: int
    kind: str


LAWS = {
    "offset": Law("L0 + c L^-alpha", fit_offset_power, 4, "offset_power"),
    "power": Law("c L^-alpha", fit_power_law, 2, "power_law"),
    "gap": Law("L0 - C_L = c L^-alpha", fit_gap, 2, "gap"),
}


def law_formula(kind: str) -> str:
    """The formula of a :attr:`FitResult.kind` (constrained variants read as their law), or ``kind``.

    >>> law_formula("offset_power_alpha1"), law_formula("additive")
    ('L0 + c L^-alpha', 'additive')
    """
    base = kind.split("_alpha")[0].replace("_fixed", "")
    return next((law.formula for law in LAWS.values() if law.kind == base), kind)


__all__ = [
    "ALPHA_MAX",
    "PROFILE_ALPHA_MIN",
    "Law",
    "LAWS",
    "law_formula",
    "as_vector",
    "fit_offset_fixed_alpha",
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
