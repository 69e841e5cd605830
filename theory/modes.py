"""Mode-wise picture of equal-step linear attention (docs/theory/modes.md).

At the reference step ``gamma = L / lambda_1`` mode k keeps the fraction
``(1 - lambda_k / lambda_1)^(2L) ~ exp(-L / tau_k)`` of its loss, ``tau_k = k^a / 2``: strong modes
are learned at small depth, weak modes only at large depth (sequential learning).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._validate import check_real
from .equal_step import log_abs_one_minus, reference_gammas
from .spectra import PowerLawSpectrum, as_depths


def _modes(spec: PowerLawSpectrum, k) -> tuple[np.ndarray, bool]:
    scalar = np.ndim(k) == 0
    arr = np.atleast_1d(np.asarray(k))
    if (
        arr.ndim != 1
        or arr.size == 0
        or not np.issubdtype(arr.dtype, np.integer)
        or arr.min() < 1
        or arr.max() > spec.d
    ):
        raise ValueError(f"k={k!r}: must be mode indices, integers in [1, {spec.d}]")
    return arr.astype(np.int64), scalar


def mode_loss(spec: PowerLawSpectrum, L, gamma=None, modes=None) -> np.ndarray:
    """Per-mode normalised loss ``(1 - gamma lambda_k / L)^(2L)``, shape ``(len(L), len(modes))``.

    Parameters
    ----------
    spec : PowerLawSpectrum
    L : int or sequence of int
        Depths, as in :func:`~depthscale.theory.equal_step.r_con`.
    gamma : float or sequence, optional
        Step(s), as in :func:`~depthscale.theory.equal_step.r_con` (default: the reference step ``L / lambda_1``).
    modes : sequence of int, optional
        1-based mode indices (default: all d modes).

    Examples
    --------
    >>> mode_loss(PowerLawSpectrum(1.0, 0.0, 2), [1, 2]).tolist()   # mode 2: (1/2)^(2L)
    [[0.0, 0.25], [0.0, 0.0625]]
    """
    depths, _ = as_depths(L)
    gammas = reference_gammas(spec, depths, gamma)
    idx = np.arange(spec.d) if modes is None else _modes(spec, modes)[0] - 1
    lam = spec.lam[idx]
    x = (gammas / depths)[:, None] * lam[None, :]
    return np.exp(2.0 * depths[:, None] * log_abs_one_minus(x))


@dataclass(frozen=True)
class ModeDepth:
    """Depths at which modes ``k`` fall below ``eps`` at the reference step.

    ``exact``: the smallest integer L with ``(1 - lambda_k/lambda_1)^(2L) < eps``;
    ``approx``: ``tau_k ln(1/eps)`` with ``tau_k = k^a / 2`` (good when ``lambda_k << lambda_1``).
    """

    k: np.ndarray
    eps: float
    exact: np.ndarray
    approx: np.ndarray
    tau: np.ndarray


def mode_depth(spec: PowerLawSpectrum, k, eps: float) -> ModeDepth:
    """Depth needed to learn mode(s) ``k`` to precision ``eps`` (reference step).

    Examples
    --------
    >>> md = mode_depth(PowerLawSpectrum(1.0, 1.0, 100), [2, 10], 1e-3)
    >>> md.exact.tolist()            # (1/2)^(2L) < 1e-3 from L = 5; (9/10)^(2L) from L = 33
    [5, 33]
    >>> md.approx.round(2).tolist()  # k/2 ln 1000
    [6.91, 34.54]
    """
    ks, _ = _modes(spec, k)
    eps = check_real("eps", eps, lo=0, hi=1, lo_open=True, hi_open=True)
    x = spec.lam[ks - 1] / spec.lam1
    log_eps = np.log(eps)
    per_layer = 2.0 * log_abs_one_minus(x)  # log loss per unit depth (-inf when x = 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        guess = np.where(np.isfinite(per_layer), np.floor(log_eps / per_layer) + 1.0, 1.0)
    L = np.maximum(guess, 1.0)
    # settle rounding at the boundary by checking the predicate on both sides (exact search)
    for _ in range(4):
        up = np.isfinite(per_layer) & (L * per_layer >= log_eps)
        L = np.where(up, L + 1.0, L)
        down = (
            np.isfinite(per_layer) & (L > 1) & ((L - 1.0) * np.where(np.isfinite(per_layer), per_layer, 0.0) < log_eps)
        )
        L = np.where(down, L - 1.0, L)
    tau = ks.astype(np.float64) ** spec.a / 2.0
    return ModeDepth(ks, eps, L.astype(np.int64), tau * np.log(1.0 / eps), tau)


__all__ = ["mode_loss", "mode_depth", "ModeDepth"]
