"""A measured number with its standard error, its degrees of freedom and what the error rests on.

Every claim decides on an :class:`Estimate`: a two-sided 95 % Student-t test at the estimate's
degrees of freedom (docs/choices.md, "When a claim is decided"). The degrees of freedom follow from
what the error was estimated from:

- ``"seeds"``: the scatter of ``n`` independently trained models, ``n - 1`` degrees of freedom (two
  seeds leave one, where a 95 % decision needs 12.7 standard errors);
- ``"fit"``: a least-squares fit's Jacobian error, ``n_points - n_params``;
- ``"contexts"``: the spread of per-context values over ``n`` evaluation contexts, ``n - 1``
  (thousands: the normal quantile 1.96);
- ``"Monte Carlo"``: ``n`` independent draws, ``n - 1``;
- ``"exact"``: no sampling error at all (``se = 0``, infinite degrees of freedom).

A difference of two independent estimates has the Welch-Satterthwaite degrees of freedom.

Examples
--------
>>> e = Estimate.from_seeds([1.0, 1.2])
>>> round(e.value, 3), round(e.se, 3), e.dof, e.basis
(1.1, 0.1, 1.0, 'seeds')
>>> round(e.t, 2)
12.71
>>> e.test
'seeds n=2, t(1) = 12.71'
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from scipy import stats

from ...theory._validate import bad_argument

LEVEL = 0.95  # two-sided confidence of every decision
BASES = ("seeds", "fit", "contexts", "Monte Carlo", "exact")


def t_quantile(dof: float, level: float = LEVEL) -> float:
    """The two-sided Student-t quantile: how many standard errors a ``level`` decision needs.

    ``dof`` may be ``inf`` (the normal quantile); fewer than one degree of freedom, or nan, can decide
    nothing (``inf``).

    >>> round(t_quantile(1), 3), round(t_quantile(4), 3), round(t_quantile(math.inf), 3)
    (12.706, 2.776, 1.96)
    """
    if not (isinstance(dof, (int, float)) and dof >= 1):  # nan fails the comparison
        return math.inf
    return float(stats.t.ppf(0.5 + level / 2, dof)) if math.isfinite(dof) else float(stats.norm.ppf(0.5 + level / 2))


@dataclass(frozen=True)
class Estimate:
    """``value ± se`` with ``dof`` degrees of freedom; ``basis`` names what the error rests on
    (one of :data:`BASES`) and ``n`` how many of them there were (seeds, fit points, contexts, draws).
    """

    value: float
    se: float
    dof: float
    basis: str
    n: int = 0

    def __post_init__(self):
        if self.basis not in BASES:
            bad_argument("basis", self.basis, f"one of {', '.join(BASES)}")
        object.__setattr__(self, "value", float(self.value))
        object.__setattr__(self, "se", float(self.se))
        object.__setattr__(self, "dof", float(self.dof))

    # ---- constructors, one per kind of error
    @classmethod
    def from_seeds(cls, values: Iterable[float]) -> Estimate:
        """Mean of per-seed values; its error the seeds' scatter ``sd / sqrt(n)``, ``n - 1`` degrees of freedom."""
        v = np.asarray([float(x) for x in values], dtype=float)
        v = v[np.isfinite(v)]
        n = int(v.size)
        se = float(np.std(v, ddof=1) / math.sqrt(n)) if n >= 2 else math.nan
        return cls(float(v.mean()) if n else math.nan, se, n - 1, "seeds", n)

    @classmethod
    def from_fit(cls, fit, name: str) -> Estimate:
        """Parameter ``name`` of a :class:`~depthscale.derivations.analysis.fits.FitResult`, with its
        Jacobian error on the fit's ``n - p`` degrees of freedom."""
        return cls(fit.params[name], fit.se[name], fit.dof, "fit", fit.n)

    @classmethod
    def from_contexts(cls, value: float, se: float, n: int) -> Estimate:
        """A mean over ``n`` evaluation contexts (``n - 1`` degrees of freedom)."""
        return cls(value, se, max(int(n) - 1, 0), "contexts", int(n))

    @classmethod
    def exact(cls, value: float) -> Estimate:
        """A number without sampling error."""
        return cls(value, 0.0, math.inf, "exact", 0)

    # ---- the test
    @property
    def t(self) -> float:
        """Standard errors a 95 % two-sided decision needs at these degrees of freedom."""
        return t_quantile(self.dof)

    @property
    def margin(self) -> float:
        """Half-width of the 95 % interval, ``t * se`` (``inf`` when the error is unknown)."""
        if self.se == 0:
            return 0.0
        return self.t * self.se if math.isfinite(self.se) else math.inf

    @property
    def test(self) -> str:
        """What the decision rests on, for the claims table: ``'seeds n=2, t(1) = 12.71'``; an
        estimate with no error to test on says so (``'one seed: no error estimate'``).

        >>> Estimate.from_seeds([0.3]).test, Estimate(0.3, 0.01, 0, "contexts", 1).test
        ('one seed: no error estimate', 'contexts n=1: no error estimate')
        """
        if self.basis == "exact":
            return "exact"
        if not (self.dof >= 1 and math.isfinite(self.se)):  # nothing to test on: it decides nothing
            if self.basis == "seeds" and self.n <= 1:
                return "one seed: no error estimate" if self.n == 1 else "no seeds: no estimate"
            return f"{self.basis} n={self.n}: no error estimate"
        dof = "inf" if math.isinf(self.dof) else f"{self.dof:.3g}"
        return f"{self.basis} n={self.n}, t({dof}) = {self.t:.2f}"

    def scaled(self, k: float) -> Estimate:
        """``k`` times the estimate (a difference relative to a reference, say)."""
        return Estimate(self.value * k, self.se * abs(k), self.dof, self.basis, self.n)

    def __neg__(self) -> Estimate:
        return Estimate(-self.value, self.se, self.dof, self.basis, self.n)

    def minus(self, other: Estimate) -> Estimate:
        """``self - other`` for independent estimates: errors in quadrature, Welch-Satterthwaite
        degrees of freedom, the basis of the larger error."""
        se = math.hypot(self.se, other.se)
        return Estimate(
            self.value - other.value, se, welch_dof(self, other), _dominant(self, other).basis, _dominant(self, other).n
        )


def welch_dof(*parts: Estimate) -> float:
    """Welch-Satterthwaite degrees of freedom of a sum of independent estimates."""
    num = sum(p.se**2 for p in parts) ** 2
    den = sum(p.se**4 / p.dof for p in parts if p.se > 0 and math.isfinite(p.dof))
    if num == 0:
        return math.inf
    return num / den if den > 0 else math.inf


def _dominant(a: Estimate, b: Estimate) -> Estimate:
    return a if a.se >= b.se else b


__all__ = ["LEVEL", "BASES", "Estimate", "t_quantile", "welch_dof"]
