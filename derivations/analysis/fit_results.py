"""What a fit returns: :class:`FitResult` (parameters, errors, whether it is identified) and the records of
profiles, comparisons and bootstraps.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from ...theory._json import finite_number
from ...theory._validate import bad_argument, check_real


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
            from .fits import ALPHA_MAX

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
        :data:`~depthscale.derivations.analysis.fit_ranges.PROFILE_ALPHA_MIN` below), which means the
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
            from .fit_ranges import _profile_alpha_interval

            self._memo[key] = _profile_alpha_interval(self, level)
        return self._memo[key]

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
        of offset fits between 0 and :data:`~depthscale.derivations.analysis.fits.ALPHA_MAX`);
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
class LackOfFit:
    """The lack-of-fit F test of ``R_inf + c L^-alpha`` (alpha fixed) against the seeds' own scatter.

    ``F = (SS_lof / dof_lof) / (SS_pe / dof_pe)``: the depth means' squared distance from the best
    law, against the pure error (the seed-by-depth interaction of log R); ``p`` is its upper tail
    under the F distribution. A small ``p``: the law cannot describe these depth means.
    """

    alpha: float
    F: float
    dof_lof: int
    dof_pe: int
    p: float
    fit: FitResult  # the law at this alpha, fitted to the depth means of log R


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
