"""Intervals respect the range of their parameter; a bootstrap over fewer than 3 seeds is refused."""

import itertools

import numpy as np
import pytest
from scipy import stats
from synthetic import curve

from depthscale.derivations.analysis.bootstrap import bootstrap_over_seeds
from depthscale.derivations.analysis.curve import curves
from depthscale.derivations.analysis.fits import ALPHA_MAX, fit_offset_power

L = 2.0 ** np.arange(6)


def _weak_exponent_fits(n=200, seed=5):
    """Offset fits of a shallow law (alpha = 0.15) with 3 % noise: many identified fits whose
    symmetric Jacobian interval of alpha reaches below 0."""
    g = np.random.default_rng(seed)
    for _ in range(n):
        R = (0.3 + 1.0 * L**-0.15) * np.exp(0.03 * g.standard_normal(L.size))
        yield fit_offset_power(L, R)


def test_intervals_are_clipped_to_the_parameter_range():
    seen_clipped = 0
    for f in _weak_exponent_fits():
        for k in f.names:
            # the t interval computed here from the fit's own se, and the range from the law's definition
            a, b = stats.t.interval(0.95, f.dof, loc=f.params[k], scale=f.se[k])
            lo_k, hi_k = {"L0": (0.0, f.bounds["L0"][1]), "c": (0.0, np.inf), "alpha": (1e-8, ALPHA_MAX)}[k]
            lo, hi = f.interval(k)
            assert lo_k <= lo <= hi <= hi_k
            assert (lo, hi) == pytest.approx((np.clip(a, lo_k, hi_k), np.clip(b, lo_k, hi_k)), rel=1e-9, abs=1e-15)
            if f.identified and k == "alpha" and a < 0:
                seen_clipped += 1
                assert lo == 1e-8  # an identified fit no longer reports a negative exponent
    assert seen_clipped > 0  # the case of the issue occurs here


def test_clipping_keeps_coverage():
    """The truth is inside the range, so a clipped interval covers it exactly when the unclipped one does."""
    hits = unclipped = 0
    for f in _weak_exponent_fits(n=150, seed=11):
        a, b = stats.t.interval(0.95, f.dof, loc=f.params["alpha"], scale=f.se["alpha"])
        lo, hi = f.interval("alpha")
        hits += lo <= 0.15 <= hi
        unclipped += a <= 0.15 <= b
    assert hits == unclipped


def test_identification_still_sees_the_unclipped_width():
    # one point more than parameters, large noise: the unclipped interval of L0 is wider than its range
    g = np.random.default_rng(0)
    R = (0.5 + 1.0 / L[:4]) * np.exp(0.2 * g.standard_normal(4))
    f = fit_offset_power(L[:4], R)
    lo, hi = f.interval("L0")
    a, b = stats.t.interval(0.95, f.dof, loc=f.params["L0"], scale=f.se["L0"])
    assert b - a > f.bounds["L0"][1]  # this seed gives the case
    assert not f.identified and "wider than its range" in f.reason
    assert hi - lo <= f.bounds["L0"][1]


@pytest.mark.parametrize("n_seeds", [1, 2, 3, 4])
def test_bootstrap_over_fewer_than_five_seeds_is_refused(n_seeds):
    """Four seeds have 35 distinct resamples, three 10: percentiles of so few are the per-seed range."""
    Y = np.array([0.5 + s * 0.01 + 1.0 / L for s in range(n_seeds)])
    with pytest.raises(
        ValueError, match=rf"^R_by_seed has {n_seeds} seed\(s\): a bootstrap over seeds needs at least 5"
    ):
        bootstrap_over_seeds(L, Y, n_boot=50)


def test_a_curve_with_two_seeds_says_why_it_has_no_bootstrap():
    (c,) = curves(curve(lambda L: 0.5 + 0.4 / L, seeds=(0, 1), noise=0.02))
    f = c.fit("offset", n_boot=50)
    assert f.identified and f.bootstrap is None
    assert f.bootstrap_refused.startswith("no bootstrap: a bootstrap over seeds needs at least 5")
    assert f.to_dict()["bootstrap_refused"] == f.bootstrap_refused
    assert c.fit("offset", n_boot=0).bootstrap_refused == ""  # none asked for: nothing to refuse


def test_five_seed_bootstrap_draws_only_fits_of_resampled_seed_means():
    """5 seeds have 126 distinct resamples: every bootstrap value is one of their fits, computed here by brute force."""
    g = np.random.default_rng(4)
    Y = (0.5 + 1.0 / L) * np.exp(0.02 * g.standard_normal((5, L.size)))
    b = bootstrap_over_seeds(L, Y, n_boot=200, rng=np.random.default_rng(1))
    brute = [
        fit_offset_power(L, Y[list(idx)].mean(axis=0)).params["alpha"]
        for idx in itertools.combinations_with_replacement(range(5), 5)
    ]
    assert all(min(abs(v - x) for x in brute) < 1e-9 for v in b.samples["alpha"])
    lo, hi = b.intervals["alpha"]
    assert min(brute) - 1e-12 <= lo <= hi <= max(brute) + 1e-12
