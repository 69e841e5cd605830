"""Fits on seed-level points (repeated depths), the floor's range and interval, and what "identified"
promises on small data: checked against independent optimisers and a brute-force profile."""

import math

import numpy as np
import pytest
from scipy import optimize, stats
from synthetic import curve

from depthscale.derivations.analysis.curve import curves
from depthscale.derivations.analysis.fits import ALPHA_MAX, fit_offset_power

DEPTHS3 = np.repeat([1.0, 2.0, 4.0], 3)  # 3 depths x 3 seeds


def _small(seed, L0=1.4, c=0.5, alpha=2.0, noise=0.05):
    g = np.random.default_rng(seed)
    return (L0 + c * DEPTHS3**-alpha) * np.exp(noise * g.standard_normal(DEPTHS3.size))


def _ssr(L, R, L0, c, alpha):
    return float(np.sum((np.log(R) - np.log(L0 + c * L**-alpha)) ** 2))


def _free_optimum(L, R):
    """The unconstrained log-residual optimum by Nelder-Mead from a grid of starts (no bounds on L0
    other than L0 >= 0 through its square)."""
    best = None
    for a0 in (0.5, 1.0, 2.0, 4.0):
        for f0 in (0.0, 0.5, 0.9):

            def obj(t):
                return _ssr(L, R, t[0] ** 2, math.exp(t[1]), abs(t[2]))

            r = optimize.minimize(
                obj,
                [math.sqrt(f0 * R.min()), 0.0, a0],
                method="Nelder-Mead",
                options={"xatol": 1e-10, "fatol": 1e-14, "maxiter": 20000},
            )
            if best is None or r.fun < best.fun:
                best = r
    t = best.x
    return {"L0": t[0] ** 2, "c": math.exp(t[1]), "alpha": abs(t[2])}, best.fun


def _profile_ssr(L, R, alpha):
    """Brute force: the smallest SSR at fixed alpha over a fine grid of L0 (each with the best c)."""
    cap = min(math.exp(np.mean(np.log(R[L == x]))) for x in np.unique(L))
    out = math.inf
    for L0 in np.linspace(0.0, cap, 2001):
        r = optimize.minimize_scalar(lambda lc: _ssr(L, R, L0, math.exp(lc), alpha), bounds=(-30, 30), method="bounded")
        out = min(out, r.fun)
    return out


def test_the_floor_interval_contains_its_estimate_on_seed_level_points():
    # 3 depths x 3 seeds where the best floor lies above the luckiest single loss at L = 4
    g = np.random.default_rng(8)
    L = DEPTHS3
    R = (1.4 + 0.8 * L**-1.5) * np.exp(0.03 * g.standard_normal(L.size))
    free, _ = _free_optimum(L, R)
    assert free["L0"] > R.min()  # the case of the issue: before, the range ended at R.min()
    f = fit_offset_power(L, R)
    assert f.params["L0"] == pytest.approx(free["L0"], rel=1e-5)
    lo, hi = f.param_range("L0")
    assert lo <= f.params["L0"] <= hi
    a, b = f.interval("L0")
    assert a <= f.params["L0"] <= b
    # the range's upper end is the smallest per-depth geometric mean, computed here directly
    assert hi == pytest.approx(min(math.exp(np.mean(np.log(R[L == x]))) for x in (1.0, 2.0, 4.0)), rel=1e-12)


@pytest.mark.parametrize("seed,identified", [(0, False), (1, True)])
def test_identified_needs_a_profile_interval_closed_inside_the_range(seed, identified):
    R = _small(seed)
    f = fit_offset_power(DEPTHS3, R)
    # the Jacobian alone calls both identified: alpha ± t se fits in its range
    a, b = stats.t.interval(0.95, f.dof, loc=f.params["alpha"], scale=f.se["alpha"])
    assert b - a < ALPHA_MAX
    _, ssr_min = _free_optimum(DEPTHS3, R)
    limit = ssr_min * (1 + stats.f.ppf(0.95, 1, f.dof) / f.dof)
    at_end = _profile_ssr(DEPTHS3, R, ALPHA_MAX)
    assert abs(at_end / limit - 1) > 0.05  # a clear case either way
    assert (at_end > limit) == identified  # brute force: does the profile cross the limit before ALPHA_MAX?
    assert f.identified == identified
    if not identified:
        assert "profile-likelihood interval of alpha reaches above 20" in f.reason
        assert f.profile_interval("alpha")[1] == ALPHA_MAX
    else:
        lo, hi = f.profile_interval("alpha")
        # each end is where the brute-force profile meets the limit
        for end in (lo, hi):
            assert _profile_ssr(DEPTHS3, R, end) == pytest.approx(limit, rel=2e-3)


def test_three_depths_and_three_seeds_are_fitted_on_their_nine_points():
    recs = curve(lambda L: 1.4 + 0.8 * L**-1.0, seeds=(0, 1, 2), depths=(1, 2, 4), noise=0.01)
    (c,) = curves(recs)
    assert c.fit("offset", n_boot=0, points="mean").failure == "3 depth(s) with a positive loss < 4"
    f = c.fit("offset", n_boot=50)
    assert f.n == 9 and f.dof == 6 and not f.failure
    L = np.array([r["config"]["model"]["depth"] for r in recs], dtype=float)
    R = np.array([r["final_loss"] for r in recs])
    free, ssr = _free_optimum(L, R)
    for k in ("L0", "c", "alpha"):
        assert f.params[k] == pytest.approx(free[k], rel=1e-4)
    assert f.ssr == pytest.approx(ssr, rel=1e-6)
    assert f.bootstrap is None and "seed-level points" in f.bootstrap_refused
    assert c.fit("offset", n_boot=0, points="seeds").params == f.params  # "auto" chose the seeds
    # with enough depths "auto" keeps the seed means (one point a depth)
    (c5,) = curves(curve(lambda L: 1.4 + 0.8 * L**-1.0, depths=(1, 2, 4, 8, 16), noise=0.01))
    assert c5.fit("offset", n_boot=0).n == 5 and c5.fit("offset", n_boot=0, points="seeds").n == 15


def test_seed_level_fit_needs_as_many_depths_as_parameters():
    (c,) = curves(curve(lambda L: 1.4 + 0.8 / L, seeds=(0, 1, 2), depths=(1, 2), noise=0.01))
    f = c.fit("offset", n_boot=0)
    assert f.failure.startswith("6 seed-level point(s) at 2 depth(s): the law needs 3 depths")
    with pytest.raises(ValueError, match=r"^points='all': must be one of auto, mean, seeds"):
        c.fit("offset", points="all")
