"""Bootstrap over seeds: percentile intervals of a fit from resampling whole seeds."""

from __future__ import annotations

import math

import numpy as np

from ...theory._validate import check_int, check_real
from .fits import BootstrapResult, as_vector, fit_offset_power

MIN_BOOT_SEEDS = 5


def refusal(n_seeds: int) -> str:
    """Why a bootstrap over ``n_seeds`` seeds is refused (fewer than :data:`MIN_BOOT_SEEDS`).

    ``n`` seeds have ``C(2n - 1, n)`` distinct resamples (3 for two seeds, 10 for three, 35 for four),
    concentrated on a few: their percentiles are about the range of the per-seed fits, not a 95 %
    interval. Five seeds (126 resamples) are the fewest that give one.

    Examples
    --------
    >>> refusal(3).split(" (")[1]
    '3 seeds have 10 distinct resamples: their percentiles are the range of per-seed fits)'
    """
    distinct = math.comb(2 * n_seeds - 1, n_seeds) if n_seeds >= 1 else 0
    why = (
        f"{n_seeds} seeds have {distinct} distinct resamples: their percentiles are the range of per-seed fits"
        if n_seeds >= 2
        else "nothing to resample"
    )
    return f"R_by_seed has {n_seeds} seed(s): a bootstrap over seeds needs at least {MIN_BOOT_SEEDS} ({why})"


# -------------------------------------------------------------------------------------------
# bootstrap over seeds
def bootstrap_over_seeds(
    L, R_by_seed, fit_fn=fit_offset_power, n_boot: int = 1000, rng=None, level: float = 0.95, **fit_kwargs
) -> BootstrapResult:
    """Percentile intervals from resampling whole seeds (rows), refitting the seed-mean curve.

    Resampling seeds keeps the correlation between the depths of one seed (shared evaluation
    contexts, shared training noise), which resampling points of one curve would destroy. Fewer
    than :data:`MIN_BOOT_SEEDS` (5) seeds are refused with a ``ValueError`` saying why (:func:`refusal`): their resamples
    are the per-seed fits themselves, not an interval.

    Parameters
    ----------
    L : array_like
        Depths, length n_L.
    R_by_seed : array_like, shape (n_seeds, n_L)
        Losses of each seed at each depth (``nan`` for a missing run); at least 5 seeds.
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
    L = as_vector("L", L, True)
    try:
        Y = np.asarray(R_by_seed, dtype=float)
    except (TypeError, ValueError):
        raise ValueError("R_by_seed: must be a numeric array of shape (n_seeds, n_L)") from None
    if Y.ndim != 2 or Y.shape[1] != L.size:
        raise ValueError(f"R_by_seed has shape {Y.shape}: must be (n_seeds, {L.size})")
    if Y.shape[0] < MIN_BOOT_SEEDS:
        raise ValueError(refusal(Y.shape[0]))
    n_boot = check_int("n_boot", n_boot, lo=1)
    level = check_real("level", level, lo=0, hi=1, lo_open=True, hi_open=True)
    if not callable(fit_fn):
        raise ValueError(f"fit_fn={fit_fn!r}: must be a fit function such as fit_offset_power")
    rng = np.random.default_rng(0) if rng is None else rng
    with np.errstate(all="ignore"):
        mean = np.nanmean(Y, axis=0)
    point = fit_fn(L, mean, **fit_kwargs)
    names = list(point.params)
    draws: dict[str, list] = {k: [] for k in names}
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
