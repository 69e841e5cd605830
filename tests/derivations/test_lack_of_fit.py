"""The lack-of-fit test on synthetic curves: its split of the residual, its level and its power."""

import math

import numpy as np
import pytest
from scipy import optimize, stats

from depthscale.derivations.analysis.goodness_of_fit import lack_of_fit

L = 2.0 ** np.arange(8)  # 1 .. 128


def law(L, L0=0.5, c=2.0, alpha=1.0):
    return L0 + c * L ** (-alpha)


def _seeded(law_values, S, g, seed_sd=0.03, noise_sd=0.01):
    """``S`` seeds of a curve: a per-seed offset in log R (shared by its depths) and independent noise."""
    return law_values * np.exp(seed_sd * g.standard_normal((S, 1)) + noise_sd * g.standard_normal((S, law_values.size)))


def test_lack_of_fit_splits_the_joint_residual_into_lack_of_fit_and_pure_error():
    # independent computation: the pure error as the residual of the two-way (seed + depth) dummy
    # regression, and the joint fit of seed offsets + the law to every point by scipy
    Ls, g = L[:6], np.random.default_rng(3)
    Y = _seeded(law(Ls, alpha=0.6), 3, g)
    lof = lack_of_fit(Ls, Y, 1.0)
    S, J = Y.shape
    X = np.column_stack([np.kron(np.eye(S), np.ones((J, 1))), np.kron(np.ones((S, 1)), np.eye(J))[:, 1:]])
    ss_pe = float(np.linalg.lstsq(X, np.log(Y).ravel(), rcond=None)[1][0])
    assert lof.dof_pe == (S - 1) * (J - 1) == S * J - np.linalg.matrix_rank(X)

    def resid(th):  # th = (offsets of seeds 1.., log L0, log c)
        off = np.concatenate([[0.0], th[: S - 1]])[:, None]
        return (np.log(Y) - off - np.log(np.exp(th[-2]) + np.exp(th[-1]) / Ls)).ravel()

    joint = optimize.least_squares(resid, np.r_[np.zeros(S - 1), np.log(0.5), np.log(2.0)], xtol=1e-14, ftol=1e-14)
    ss_joint = float(joint.fun @ joint.fun)
    ss_lof = lof.F * lof.dof_lof * ss_pe / lof.dof_pe
    assert ss_lof == pytest.approx(lof.fit.ssr, rel=1e-9)
    assert ss_joint == pytest.approx(ss_lof + ss_pe, rel=1e-6)


@pytest.mark.slow  # a Monte Carlo of the test's level: a long statistical check
@pytest.mark.parametrize("S", [2, 4])
def test_lack_of_fit_holds_its_level_when_the_law_is_true(S):
    # Monte Carlo: with the law true, p < 0.05 in 5 % of curves (3 Monte Carlo s.e. either side)
    g, n = np.random.default_rng(11 + S), 1500
    p = np.array([lack_of_fit(L[:7], _seeded(law(L[:7]), S, g)).p for _ in range(n)])
    rate, se = np.mean(p < 0.05), math.sqrt(0.05 * 0.95 / n)
    assert abs(rate - 0.05) < 3 * se
    assert stats.kstest(p, "uniform").pvalue > 1e-3


def test_lack_of_fit_rejects_a_shallow_law_and_not_the_true_one():
    g = np.random.default_rng(5)
    Y = _seeded(law(L, alpha=0.3), 2, g)
    assert lack_of_fit(L, Y, 1.0).p < 1e-4 and lack_of_fit(L, Y, 0.3).p > 1e-3
    # a curve that stops falling after L = 2 (no alpha identified) is far from every alpha in [0.8, 1.2]
    flat = np.where(L > 1, 0.193, 0.212)
    assert max(lack_of_fit(L, _seeded(flat, 2, g, noise_sd=0.003), a).p for a in (0.8, 1.0, 1.2)) < 1e-3


@pytest.mark.parametrize(
    "losses, match",
    [
        (np.ones((1, 8)), "at least 2 seeds"),
        (np.ones((2, 7)), r"losses: must be a \(seeds, 8\) array"),
        (np.where(np.eye(2, 8) > 0, np.nan, 1.0), "finite positive"),
        (-np.ones((2, 8)), "finite positive"),
    ],
)
def test_lack_of_fit_bad_input_names_the_parameter(losses, match):
    with pytest.raises(ValueError, match=match):
        lack_of_fit(L, losses)
