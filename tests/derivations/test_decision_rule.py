"""The one decision rule, pinned case by case: pass only when the whole 95 % t interval lies inside the
claim's band, fail only when it lies wholly outside, else undecided (issue 47).

Each case's verdict was worked out by hand from the t quantile (t(1) = 12.706, t(3) = 3.182,
t(4) = 2.776, normal 1.960), not by the code under test.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from depthscale.derivations.analysis.curve import Curve
from depthscale.derivations.analysis.estimate import Estimate
from depthscale.derivations.claims.generic import floor_agreement, inverse_depth_verdict
from depthscale.derivations.claims.verdicts import (
    MIN_SEEDS,
    ClaimResult,
    apply_holm,
    below_zero,
    decision,
    decision_p,
    holm,
    in_range,
    within,
)

INF = math.inf

# (value, se, dof, lo, hi, verdict): True pass, False fail, None undecided
IN_RANGE = [
    (1.0, 0.05, 4, 0.8, 1.2, True),  # [0.861, 1.139] inside
    (0.971, 0.067, 3, 0.8, 1.2, None),  # the README's positive control: [0.758, 1.184] crosses 0.8
    (0.913, 0.041, 3, 0.8, 1.2, None),  # [0.783, 1.043] crosses 0.8
    (0.3, 0.05, 4, 0.8, 1.2, False),  # [0.161, 0.439] wholly below
    (1.6, 0.1, 4, 0.8, 1.2, False),  # [1.322, 1.878] wholly above
    (1.897, 0.070, 4, 2.0, 4.0, None),  # linear exponent below zeta: [1.703, 2.091] crosses 2
    (1.5, 0.07, 4, 2.0, 4.0, False),  # [1.306, 1.694] wholly below zeta
    (3.0, 0.3, 4, 2.0, 4.0, True),  # [2.167, 3.833] inside [zeta, 2 zeta]
    (0.3, 0.05, 1, 0.8, 1.2, None),  # t(1): [-0.335, 0.935] crosses 0.8
    (1.0, 0.0, INF, 0.8, 1.2, True),  # exact, inside
    (0.8, 0.0, INF, 0.8, 1.2, True),  # exact, on the closed edge
    (1.3, 0.0, INF, 0.8, 1.2, False),  # exact, outside
    (1.0, math.nan, 4, 0.8, 1.2, None),  # no error: nothing decided
    (1.0, 0.3, 0, 0.8, 1.2, None),  # no degrees of freedom
    (1.0, 0.11, 4, 0.8, 1.2, None),  # [0.695, 1.305]: wider than the band
]

# below_zero(value, bound): the band (-inf, bound]
BELOW = [
    (-0.3, 0.1, 4, 0.0, True),  # [-0.578, -0.022]
    (0.3, 0.1, 4, 0.0, False),
    (-0.2, 0.1, 4, 0.0, None),  # [-0.478, 0.078]
    (-0.033, 0.012, 1, 0.0, None),  # 2.75 s.e. < t(1)
    (0.01, 0.002, INF, 0.02, True),  # [0.0061, 0.0139] below 0.02
]

# within(value, target, tol): the band [target - tol, target + tol]
WITHIN = [
    (1.04, 0.01, 1e4, 1.0, 0.1, True),  # [1.020, 1.060] inside [0.9, 1.1]
    (1.2, 0.01, 4, 1.0, 0.1, False),  # [1.172, 1.228] above 1.1
    (1.04, 0.01, 1, 1.0, 0.1, None),  # t(1): [0.913, 1.167]
    (1.08, 0.01, 4, 1.0, 0.1, None),  # [1.052, 1.108] crosses 1.1
]

# floor_agreement(L0, floor, rtol=0.03): log(L0 / floor) against [log 0.97, log 1.03] = [-0.0305, 0.0296]
FLOOR = [
    (0.101, 0.0005, 4, 0.1, True),  # log-ratio 0.00995 ± 0.0137
    (1.02, 0.01, 4, 1.0, None),  # 0.0198 ± 0.0272: the old rule passed it (point inside, margin <= 3 %)
    (1.2, 0.01, 4, 1.0, False),  # 0.182 ± 0.023
    (0.2, 0.001, 4, 0.1, False),  # twice the floor
    (0.99, 0.002, 4, 1.0, True),  # -0.0101 ± 0.0056
]


@pytest.mark.parametrize(("value", "se", "dof", "lo", "hi", "verdict"), IN_RANGE)
def test_in_range_is_the_interval_rule(value, se, dof, lo, hi, verdict):
    assert in_range(Estimate(value, se, dof, "fit", 7), lo, hi) is verdict


@pytest.mark.parametrize(("value", "se", "dof", "bound", "verdict"), BELOW)
def test_below_zero_is_the_interval_rule_on_a_half_line(value, se, dof, bound, verdict):
    assert below_zero(Estimate(value, se, dof, "fit", 7), bound) is verdict


@pytest.mark.parametrize(("value", "se", "dof", "target", "tol", "verdict"), WITHIN)
def test_within_is_the_interval_rule_on_a_symmetric_band(value, se, dof, target, tol, verdict):
    assert within(Estimate(value, se, dof, "fit", 7), target, tol) is verdict


@pytest.mark.parametrize(("value", "se", "dof", "floor", "verdict"), FLOOR)
def test_floor_agreement_tests_the_log_ratio(value, se, dof, floor, verdict):
    ok, rel, p = floor_agreement(Estimate(value, se, dof, "fit", 7), floor)
    assert ok is verdict
    assert rel == pytest.approx(value / floor - 1)
    assert (p < 0.05) is (verdict is not None)


def test_a_pass_never_has_an_interval_that_crosses_its_band():
    """Random estimates and bands: every pass has its whole interval inside, every fail wholly outside."""
    g = np.random.default_rng(3)
    for _ in range(2000):
        v, se, dof = g.normal(1, 0.5), abs(g.normal(0, 0.2)), int(g.integers(1, 30))
        lo = g.normal(0.8, 0.3)
        hi = lo + abs(g.normal(0.4, 0.3))
        e = Estimate(v, se, dof, "fit", dof + 3)
        t = stats.t.ppf(0.975, dof)  # independent of Estimate.t
        ok = in_range(e, lo, hi)
        if ok is True:
            assert lo <= v - t * se and v + t * se <= hi
        elif ok is False:
            assert v + t * se < lo or v - t * se > hi
        else:
            assert not (lo <= v - t * se and v + t * se <= hi) and not (v + t * se < lo or v - t * se > hi)


@pytest.mark.parametrize(("value", "se", "dof", "lo", "hi", "verdict"), [c for c in IN_RANGE if c[1] > 0])
def test_decision_p_is_below_five_percent_exactly_when_the_rule_decides(value, se, dof, lo, hi, verdict):
    e = Estimate(value, se, dof, "fit", 7)
    p = decision_p(e, lo, hi)
    if math.isfinite(se) and dof >= 1:
        # independent: two-sided t tail at the distance to the nearer edge
        z = min(abs(value - lo), abs(value - hi)) / se
        assert p == pytest.approx(2 * stats.t.sf(z, dof))
    assert (p < 0.05) is (verdict is not None)


# holm(p-values): hand-worked step-down at 5 %
HOLM = [
    ([0.01, 0.04, 0.03, 0.5], [True, False, False, False]),  # 0.01 <= 0.0125; 0.03 > 0.0167 stops
    ([0.001, 0.01, 0.02], [True, True, True]),  # 0.001 <= 0.0167, 0.01 <= 0.025, 0.02 <= 0.05
    ([0.2, 0.3], [False, False]),
    ([0.04], [True]),
    ([0.001, math.nan, 0.03], [True, False, True]),  # nan is not a hypothesis: m = 2
]


@pytest.mark.parametrize(("ps", "kept"), HOLM)
def test_holm_step_down(ps, kept):
    assert holm(ps) == kept


def test_holm_demotes_a_family_s_weakest_decisions_to_indicative():
    rows = [
        ClaimResult("x", "c", (0.8, 1.2), 1.0, 0.05, "", v, "", p=p, condition=str(i))
        for i, (v, p) in enumerate([("pass", 0.001), ("fail", 0.03), ("pass", 0.04), ("indicative", 0.4)])
    ]
    out = apply_holm(rows)
    assert [r.verdict for r in out] == ["pass", "indicative", "indicative", "indicative"]
    assert [r.would_be for r in out] == [None, "fail", "pass", None]
    assert "Holm over 4 conditions" in out[1].reason and "kept" in out[0].family_note


def _curve(Y, depths):
    return Curve.from_arrays(depths, Y, label="synthetic")


def test_decided_needs_three_seeds_at_every_depth():
    assert MIN_SEEDS == 3
    depths = [1, 2, 4, 8, 16, 32]
    two = _curve(np.ones((2, 6)), depths)
    three = _curve(np.ones((3, 6)), depths)
    assert decision(True, [two], "x")[0] == "indicative"
    assert decision(True, [three], "x")[0] == "pass"


def test_depths_the_fit_drops_do_not_count_toward_enough_depths():
    """Item 7: a depth whose loss is zero or negative is dropped by the fit, so it cannot make the span."""
    depths = [1, 2, 4, 8, 16, 32, 64]
    Y = np.tile([1.0, 0.8, 0.7, 0.65, 0.62, -0.1, 0.0], (3, 1))
    verdict, reason, _ = decision(True, [_curve(Y, depths)], "x")
    assert verdict == "indicative" and "[1, 2, 4, 8, 16]" in reason


def _law_curve(alpha, noise=1e-4, seeds=4, depths=(1, 2, 4, 8, 16, 32, 64), seed=0):
    g = np.random.default_rng(seed)
    L = np.asarray(depths, float)
    Y = (0.5 + 1.0 * L**-alpha) * np.exp(noise * g.standard_normal((seeds, L.size)))
    return _curve(Y, depths)


def test_inverse_depth_verdict_passes_one_over_l_and_fails_a_slow_law():
    c = _law_curve(1.0)
    v = inverse_depth_verdict(c, c.fit("offset", n_boot=0))
    assert v.ok is True and abs(v.alpha.value - 1) < 0.05 and v.p < 0.05
    c = _law_curve(0.3)
    v = inverse_depth_verdict(c, c.fit("offset", n_boot=0))
    assert v.ok is False and "lack of fit at alpha = 1" in v.detail


def test_inverse_depth_verdict_fails_by_lack_of_fit_when_alpha_is_not_identified():
    """A curve that stops falling after L = 2: the free fit cannot place alpha, the seeds reject the law."""
    g = np.random.default_rng(1)
    L = np.array([1, 2, 4, 8, 16, 32, 64], float)
    base = np.where(L == 1, 1.2, 1.0)
    Y = base * np.exp(0.001 * g.standard_normal((4, L.size)))
    c = _curve(Y, L.astype(int))
    v = inverse_depth_verdict(c, c.fit("offset", n_boot=0))
    if v.alpha is None:  # not identified: decided by lack of fit alone
        assert v.ok is False and v.law is not None and v.law.p < 0.05 and v.p == v.law.p
    else:
        assert v.ok is False
