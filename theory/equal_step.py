"""Equal-step (constrained) linear attention in the population limit (SCIENCE.md section 4, items 1-2).

With ``L`` identical layers of step ``gamma`` the residual polynomial is ``(1 - gamma lambda / L)^L``
and the loss is ``R_con(L, gamma) = sum_k lambda_k omega_k (1 - gamma lambda_k / L)^(2L)``. For
``1 << L << d^a`` the sum is close to its continuum (Beta) form, whose depth exponent is ``zeta``.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.special import betaln, gammaln

from depthscale.theory.spectra import PowerLawSpectrum, as_depths
from depthscale.theory.validate import check_real


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


def _reference_gammas(spec: PowerLawSpectrum, depths: np.ndarray, gamma) -> np.ndarray:
    """Steps per depth: ``L / lambda_1`` by default, else ``gamma`` checked against ``(0, 2L/lambda_1)``."""
    if gamma is None:
        return depths / spec.lam1
    g = np.broadcast_to(np.asarray(gamma, dtype=np.float64), depths.shape)
    for gi, Li in zip(g, depths):
        check_real("gamma", gi, lo=0.0, hi=2.0 * Li / spec.lam1, lo_open=True, hi_open=True)
    return g.astype(np.float64)


def r_con(spec: PowerLawSpectrum, L, gamma=None):
    """Equal-step loss ``sum_k lambda_k omega_k (1 - gamma lambda_k / L)^(2L)`` (finite sum, exact).

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
    gammas = _reference_gammas(spec, depths, gamma)
    lam, w = spec.lam, spec.weights
    out = np.empty(depths.size)
    for i, (Li, gi) in enumerate(zip(depths, gammas)):
        # (1 - x)^(2L) as exp(2L log|1 - x|): no overflow or cancellation for huge L and d
        out[i] = np.dot(w, np.exp(2.0 * Li * log_abs_one_minus(gi * lam / Li)))
    return float(out[0]) if scalar else out


def gamma_opt(spec: PowerLawSpectrum, L, xtol: float = 1e-10):
    """Loss-minimising equal step for each depth.

    ``R_con`` is convex in ``gamma`` (a sum of even powers of affine functions), so a bounded
    scalar minimisation on the stable range ``(0, 2L/lambda_1)`` finds the global minimum.

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
    xtol = check_real("xtol", xtol, lo=0, lo_open=True)
    lam, w = spec.lam, spec.weights
    x = lam / spec.lam1  # in units of lambda_1; the step is s = gamma lambda_1 / L in (0, 2)
    gs, rs = np.empty(depths.size), np.empty(depths.size)
    for i, Li in enumerate(depths):
        def loss(s, Li=Li):
            return np.dot(w, np.exp(2.0 * Li * log_abs_one_minus(s * x)))

        res = minimize_scalar(loss, bounds=(0.0, 2.0), method="bounded", options={"xatol": xtol})
        gs[i] = res.x * Li / spec.lam1
        rs[i] = res.fun
    return (float(gs[0]), float(rs[0])) if scalar else (gs, rs)


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
        raise ValueError(f"f: an array of losses must be 1-d, at least 2 long and match L (got shapes {R.shape}, {Lr.shape})")
    if np.any(R <= 0) or np.any(Lr <= 0) or np.any(np.diff(Lr) <= 0):
        raise ValueError("f, L: losses must be positive and depths positive and increasing")
    return np.gradient(np.log(R), np.log(Lr))


def _real_depths(L) -> tuple[np.ndarray, bool]:
    scalar = np.ndim(L) == 0
    arr = np.atleast_1d(np.asarray(L, dtype=np.float64))
    if arr.ndim != 1 or arr.size == 0 or not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise ValueError(f"L={L!r}: must be a positive number or a non-empty 1-d list of them")
    return arr, scalar


__all__ = ["r_con", "gamma_opt", "beta_form", "gamma_asymptote", "local_slope", "log_abs_one_minus"]
