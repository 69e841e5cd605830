"""Equal-step (constrained) linear attention in the population limit (docs/theory/linear.md).

With ``L`` identical layers of step ``gamma`` the residual polynomial is ``(1 - gamma lambda / L)^L``
and the loss is ``R_con(L, gamma) = sum_k lambda_k omega_k (1 - gamma lambda_k / L)^(2L)``. For
``1 << L << d^a`` the sum is close to its continuum (Beta) form, whose depth exponent is ``zeta``.
The finite sums are evaluated with :mod:`depthscale.theory.mode_sums` (exact head, Gauss rules on
the smooth tail, a proven error bound below 1e-14 of the sum), at a cost independent of ``d``.
"""

from __future__ import annotations

import numpy as np
from scipy.special import betaln, gammaincc, gammaln

from ._validate import check_real
from .mode_sums import ModeRule, mode_rule, tail_error_bound
from .spectra import PowerLawSpectrum, as_depths

_EPS = np.finfo(np.float64).eps


def log_abs_one_minus(x: np.ndarray) -> np.ndarray:
    """``log|1 - x|`` accurate for small ``x`` (``log1p``) and finite for ``x > 1``; ``-inf`` at 1.

    >>> log_abs_one_minus(np.array([1e-20, 1.5])).tolist()
    [-1e-20, -0.6931471805599453]
    """
    x = np.asarray(x, dtype=np.float64)
    out = np.empty_like(x)
    below = x < 1.0
    out[below] = np.log1p(-x[below])
    with np.errstate(divide="ignore"):
        out[~below] = np.log(x[~below] - 1.0)
    return out


def reference_gammas(spec: PowerLawSpectrum, depths: np.ndarray, gamma=None) -> np.ndarray:
    """Steps per depth: ``L / lambda_1`` when ``gamma`` is None, else ``gamma`` checked against ``(0, 2L/lambda_1)``.

    Parameters
    ----------
    spec : PowerLawSpectrum
    depths : ndarray of int
        Validated depths (see :func:`~depthscale.theory.spectra.as_depths`).
    gamma : float or sequence, optional
        One step, or one per depth.

    Examples
    --------
    >>> reference_gammas(PowerLawSpectrum(1.0, 1.0, 4, c_lambda=2.0), np.array([1, 4])).tolist()
    [0.5, 2.0]
    """
    if gamma is None:
        return depths / spec.lam1
    g = np.broadcast_to(np.asarray(gamma, dtype=np.float64), depths.shape)
    for gi, Li in zip(g, depths):
        check_real("gamma", gi, lo=0.0, hi=2.0 * Li / spec.lam1, lo_open=True, hi_open=True)
    return g.astype(np.float64)


def r_con(spec: PowerLawSpectrum, L, gamma=None):
    """Equal-step loss ``sum_k lambda_k omega_k (1 - gamma lambda_k / L)^(2L)`` of the finite spectrum.

    The sum over the d modes is evaluated with :class:`~depthscale.theory.mode_sums.ModeRule`:
    the top modes exactly, the smooth tail by Gauss rules on blocks of consecutive modes. The head
    grows until the rule's proven error bound is below ``1e-14`` of the loss, so the result is the
    plain sum to rounding (cost independent of d up to the head).

    Parameters
    ----------
    spec : PowerLawSpectrum
    L : int or sequence of int
        Depths ``>= 1``.
    gamma : float or sequence, optional
        Step size(s), ``0 < gamma < 2 L / lambda_1`` (the stable range). Default: the reference
        step ``L / lambda_1``.

    Returns
    -------
    float or ndarray
        One loss per depth (a float for scalar ``L``).

    Examples
    --------
    >>> s = PowerLawSpectrum(1.0, 1.0, 2)
    >>> float(r_con(s, 1))   # only mode 2 survives: 1/4 * (1 - 1/2)^2
    0.0625
    """
    depths, scalar = as_depths(L)
    steps = reference_gammas(spec, depths, gamma) * spec.lam1 / depths  # s = gamma lambda_1 / L
    out = np.empty(depths.size)
    for i, (Li, si) in enumerate(zip(depths, steps)):
        out[i] = _EqualStepSums.for_depth(spec, int(Li), lambda sums: (sums.loss(si), si))[0]
    return float(out[0]) if scalar else out


def gamma_opt(spec: PowerLawSpectrum, L, xtol: float = 1e-10):
    """Loss-minimising equal step for each depth.

    In the normalised step ``s = gamma lambda_1 / L`` the loss ``S(s) = R_con`` is convex (a sum of
    even powers of affine functions), and ``S'`` and ``S''`` are sums of the same kind, so a
    bracketed Newton iteration on ``S'(s) = 0`` over the stable range ``(0, 2)`` converges to the
    global minimum to rounding. If ``S`` still decreases at the edge ``s = 2`` (slowly decaying
    spectra at small depth), the edge step ``2L / lambda_1`` is returned: the loss's infimum.
    All sums use the head-plus-tail rule of :func:`r_con`; its error bound is checked for the loss
    and for ``S'`` at the returned step.

    Parameters
    ----------
    spec : PowerLawSpectrum
    L : int or sequence of int
        Depths ``>= 1``.
    xtol : float
        Accepted for compatibility; the iteration always runs to rounding (must be > 0).

    Returns
    -------
    (gamma, loss) : tuple of float or of ndarray
        The minimising step(s) and the loss there.

    Examples
    --------
    >>> g, r = gamma_opt(PowerLawSpectrum(0.0, 0.0, 3), 4)   # flat spectrum: gamma = L / lambda_1
    >>> round(g, 6), r < 1e-12
    (4.0, True)
    """
    depths, scalar = as_depths(L)
    check_real("xtol", xtol, lo=0, lo_open=True)
    gs, rs = np.empty(depths.size), np.empty(depths.size)
    s = 1.0
    for i, Li in enumerate(depths):
        # the optimum moves little between neighbouring depths: start from the last one
        start = min(s, 1.999)
        rs[i], s = _EqualStepSums.for_depth(spec, int(Li), lambda sums: _minimise(sums, start), check_slope=True)
        gs[i] = s * Li / spec.lam1
    return (float(gs[0]), float(rs[0])) if scalar else (gs, rs)


_TOL = 1e-14  # accepted error bound of the tail rule, relative to the sum it approximates
_HEAD0 = 64  # first head tried; grows x4 until the bound holds


class _EqualStepSums:
    """``S(s) = sum_k w_k (1 - s x_k)^(2L)`` and its s-derivatives on one mode rule (``x_k = k^-a``)."""

    def __init__(self, spec: PowerLawSpectrum, rule: ModeRule, L: int):
        self.spec, self.rule, self.L = spec, rule, L
        self.p = spec.a + spec.b
        self.scale = spec.c_lambda * spec.c_omega
        self.w = self.scale * rule.power(self.p)  # rule weight times lambda_k omega_k
        self.x = np.power(rule.k, -spec.a)  # lambda_k / lambda_1

    @classmethod
    def for_depth(cls, spec, L, solve, check_slope=False):
        """Run ``solve(sums) -> (value, s)`` on growing heads until the tail bound holds."""
        head = _HEAD0
        while True:
            sums = cls(spec, mode_rule(spec.d, head), L)
            value, s = solve(sums)
            if sums.rule.head >= spec.d or sums.within_bound(value, s, check_slope):
                return value, s
            head *= 4

    def _pow(self, s, e):
        """``(1 - s x)^e`` as ``sign^e exp(e log|1 - s x|)`` (no cancellation for small x, any e >= 0)."""
        if e == 0:
            return np.ones_like(self.x)
        out = np.exp(e * log_abs_one_minus(s * self.x))
        if e % 2:
            out = np.where(s * self.x > 1.0, -out, out)
        return out

    def loss(self, s):
        return float(self.w @ self._pow(s, 2 * self.L))

    def slope(self, s):
        """``(S'(s), S''(s), size)`` with ``size`` the sum of ``|terms|`` of ``S'`` (its rounding scale)."""
        e = 2 * self.L
        y = s * self.x
        v = log_abs_one_minus(y)
        u1 = np.exp((e - 1) * v)  # |1 - s x|^(e-1)
        u2 = np.exp((e - 2) * v) if e > 2 else np.ones_like(v)
        wx = self.w * self.x
        size = e * float(wx @ u1)
        g = -e * float(wx @ np.where(y > 1.0, -u1, u1))
        return g, e * (e - 1) * float((wx * self.x) @ u2), size

    def within_bound(self, value, s, check_slope):
        e = 2 * self.L
        with np.errstate(divide="ignore"):
            if tail_error_bound(self.rule, self.spec.a, self.p, s, e, self.scale) > _TOL * value:
                return False
            if not check_slope:
                return True
            # S' at the minimum is a cancelling sum: compare with the sum of its absolute terms
            wx = self.w * self.x
            size = e * float(wx @ np.abs(self._pow(s, e - 1)))
            return (
                tail_error_bound(self.rule, self.spec.a, self.p + self.spec.a, s, e - 1, e * self.scale) <= _TOL * size
            )


def _minimise(sums: _EqualStepSums, start: float = 1.0):
    """(S(s*), s*) with s* the minimiser of the convex S on [0, 2]: Newton on S' kept inside a bracket."""
    g_edge = sums.slope(2.0)[0]
    if g_edge <= 0.0:
        return sums.loss(2.0), 2.0
    lo, hi, s = 0.0, 2.0, start
    for _ in range(200):
        g, h, size = sums.slope(s)
        if abs(g) <= 8.0 * _EPS * size:  # S' is zero to rounding
            break
        if g < 0.0:
            lo = s
        else:
            hi = s
        step = g / h if h > 0.0 else np.inf
        if abs(step) <= 4.0 * _EPS * s:  # Newton converged: the next step is below rounding
            break
        s_new = s - step
        if not lo < s_new < hi:
            s_new = 0.5 * (lo + hi)
        if hi - lo <= 4.0 * _EPS * hi:
            break
        s = s_new
    return sums.loss(s), s


def beta_form(spec: PowerLawSpectrum, L):
    """Continuum (Beta) form ``(c_lambda c_omega / a) B(zeta, 2L + 1)`` of ``R_con`` at the reference step.

    Valid for ``1 << L << d^a``; needs ``a > 0`` and ``a + b > 1``. ``L`` may be real here.

    Examples
    --------
    >>> round(float(beta_form(PowerLawSpectrum(1.0, 1.0, 10), 1)), 6)   # B(1, 3) = 1/3
    0.333333
    """
    spec.require_asymptotic()
    Lr, scalar = _real_depths(L)
    out = spec.prefactor * np.exp(betaln(spec.zeta, 2.0 * Lr + 1.0))
    return float(out[0]) if scalar else out


def gamma_asymptote(spec: PowerLawSpectrum, L):
    """Large-depth limit ``(c_lambda c_omega / a) Gamma(zeta) (2L)^-zeta`` of the Beta form.

    Examples
    --------
    >>> round(float(gamma_asymptote(PowerLawSpectrum(1.0, 1.0, 10), 2)), 6)   # Gamma(1) / 4
    0.25
    """
    spec.require_asymptotic()
    Lr, scalar = _real_depths(L)
    out = spec.prefactor * np.exp(gammaln(spec.zeta) - spec.zeta * np.log(2.0 * Lr))
    return float(out[0]) if scalar else out


FINITE_D_FORMS = ("first-order", "incomplete-gamma")


def finite_d_ratio(spec: PowerLawSpectrum, L, form: str = "first-order"):
    """Finite over infinite equal-step sum at the reference step, ``R_d / R_inf``, from the truncated tail.

    The tail of the modes ``k > d`` is ``c_lambda c_omega d^(1-a-b) / (a+b-1)`` for ``L << d^a`` (step 11
    of ``depthscale derive linear``); over ``R_inf ~ (c_lambda c_omega / a) Gamma(zeta) (2L)^-zeta`` it
    gives ``form="first-order"``: ``1 - (2L/d^a)^zeta / Gamma(zeta + 1)`` (steps 12 and 13), for
    ``1 << L << d^a``. ``form="incomplete-gamma"``: the continuum limit at fixed ``x = 2L/d^a``,
    ``Gamma(zeta, x) / Gamma(zeta)`` (the eigenvalue integral cut at ``lambda_d``), whose expansion in
    small ``x`` is the first-order form; it also follows the exponential fall past ``L ~ d^a``.
    The first-order form may go negative past ``L ~ d^a``, where it no longer applies.

    Parameters
    ----------
    spec : PowerLawSpectrum
        Needs ``a > 0`` and ``a + b > 1``.
    L : float or sequence
        Depths (> 0).
    form : {"first-order", "incomplete-gamma"}

    Examples
    --------
    >>> s = PowerLawSpectrum(1.0, 1.0, 100)   # zeta = 1: 1 - 2L/d
    >>> round(float(finite_d_ratio(s, 5)), 6), round(float(finite_d_ratio(s, 5, "incomplete-gamma")), 6)
    (0.9, 0.904837)
    """
    from ._validate import check_choice

    spec.require_asymptotic()
    form = check_choice("form", form, FINITE_D_FORMS)
    Lr, scalar = _real_depths(L)
    x = 2.0 * Lr / float(spec.d) ** spec.a
    if form == "first-order":
        out = 1.0 - np.exp(spec.zeta * np.log(x) - gammaln(spec.zeta + 1.0))
    else:
        out = gammaincc(spec.zeta, x)
    return float(out[0]) if scalar else out


def validity_depth(spec: PowerLawSpectrum, eps: float = 0.1) -> float:
    """Depth ``L_max(eps) = (d^a / 2) (eps Gamma(zeta + 1))^(1/zeta)`` below which ``R_d`` is within ``eps`` of ``R_inf``.

    Where the finite-d deviation ``(2L/d^a)^zeta / Gamma(zeta + 1)`` of :func:`finite_d_ratio` reaches
    ``eps`` (step 14 of ``depthscale derive linear``): the continuum laws (Beta form, Gamma asymptote)
    describe the d-mode loss within the relative tolerance ``eps`` for ``1 << L <= L_max``. A real number;
    below 1 no depth qualifies.

    Examples
    --------
    >>> round(validity_depth(PowerLawSpectrum(1.5, 0.5, 1024)) / 1024**1.5, 4)   # about 0.014 d^a
    0.0136
    """
    spec.require_asymptotic()
    eps = check_real("eps", eps, lo=0, hi=1, lo_open=True, hi_open=True)
    z = spec.zeta
    return float(0.5 * np.exp(spec.a * np.log(float(spec.d)) + (np.log(eps) + gammaln(z + 1.0)) / z))


def local_slope(f, L, values=None):
    """Local exponent ``d log R / d log L`` by centred differences in ``log L``.

    Parameters
    ----------
    f : callable or array_like
        A callable ``f(depths) -> losses`` (evaluated at the integer neighbours ``L - 1`` and
        ``L + 1``, so integer-only laws work; needs ``L >= 2``), or an array of losses given at
        the depths ``L`` (then ``numpy.gradient`` on the log-log grid, second order in the interior).
    L : int or sequence
        Depths at which the slope is wanted (callable), or the grid of ``f`` (array).

    Examples
    --------
    >>> round(float(local_slope(lambda L: np.asarray(L, float) ** -1.5, 10)), 4)
    -1.5
    >>> local_slope([1.0, 0.25, 1 / 16], [1, 2, 4]).round(6).tolist()
    [-2.0, -2.0, -2.0]
    """
    if callable(f):
        depths, scalar = as_depths(L)
        if np.any(depths < 2):
            raise ValueError(f"L={L!r}: local_slope of a callable needs depths >= 2")
        up = np.asarray(f(depths + 1), dtype=np.float64)
        dn = np.asarray(f(depths - 1), dtype=np.float64)
        out = (np.log(up) - np.log(dn)) / (np.log(depths + 1.0) - np.log(depths - 1.0))
        return float(out[0]) if scalar else out
    R = np.asarray(f, dtype=np.float64)
    Lr = np.asarray(L, dtype=np.float64)
    if R.ndim != 1 or R.shape != Lr.shape or R.size < 2:
        raise ValueError(
            f"f: an array of losses must be 1-d, at least 2 long and match L (got shapes {R.shape}, {Lr.shape})"
        )
    if np.any(R <= 0) or np.any(Lr <= 0) or np.any(np.diff(Lr) <= 0):
        raise ValueError("f, L: losses must be positive and depths positive and increasing")
    return np.gradient(np.log(R), np.log(Lr))


def _real_depths(L) -> tuple[np.ndarray, bool]:
    scalar = np.ndim(L) == 0
    arr = np.atleast_1d(np.asarray(L, dtype=np.float64))
    if arr.ndim != 1 or arr.size == 0 or not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise ValueError(f"L={L!r}: must be a positive number or a non-empty 1-d list of them")
    return arr, scalar


__all__ = [
    "r_con",
    "gamma_opt",
    "reference_gammas",
    "beta_form",
    "gamma_asymptote",
    "finite_d_ratio",
    "validity_depth",
    "FINITE_D_FORMS",
    "local_slope",
    "log_abs_one_minus",
]
