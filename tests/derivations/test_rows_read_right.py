"""Rows that read right (issue 50): a one-seed comparison says it has no error estimate and decides
nothing (it read "contexts n=0, t(inf)" and could decide on the evaluation error alone); how the
layers' disagreement changes with depth is worded from the verdict and the measured sign (a pass
read "stays flat" beside "grows as L^0.13")."""

import math

import numpy as np
import pytest

from depthscale.derivations.analysis.curve import pool_paired
from depthscale.derivations.analysis.estimate import Estimate
from depthscale.derivations.claims.verdicts import below_zero, in_range
from depthscale.derivations.formatting import growth_text

BAND = (0.8, 1.2)


def test_one_seed_has_no_error_estimate_and_decides_nothing():
    # a paired difference far from zero on thousands of contexts: one trained model says nothing of the
    # scatter between trained models, so no test can be made on it
    one = pool_paired([(0.29, 0.001)])
    assert one.value == pytest.approx(0.29) and math.isnan(one.se) and one.dof == 0 and one.n == 1
    assert one.test == "one seed: no error estimate" and "n=0" not in one.test and "t(inf)" not in one.test
    assert below_zero(one) is None and in_range(one, 0.0, 1.0) is None
    assert Estimate.from_seeds([0.29]).test == "one seed: no error estimate"
    # two seeds: their scatter, one degree of freedom, as before
    two = pool_paired([(0.2, 0.001), (0.4, 0.001)])
    assert (two.basis, two.n, two.dof) == ("seeds", 2, 1.0)
    assert two.se == pytest.approx(np.std([0.2, 0.4], ddof=1) / math.sqrt(2))


def _disagreement(alpha: Estimate) -> str:
    """The wording a disagreement claim gives, from the fit of (A_L - C_L)/L ~ L^-alpha."""
    ok = in_range(alpha, *BAND)
    grows = Estimate(1 - alpha.value, alpha.se, alpha.dof, alpha.basis, alpha.n)
    return growth_text("A_L - C_L", grows, ok, "alpha in [0.8, 1.2]")


@pytest.mark.parametrize(
    "alpha, se, verdict_words, sign_words",
    [
        (0.8667, 0.02, "flat within the band", "rising slightly"),  # the smoke report's pass (tightened)
        (1.10, 0.02, "flat within the band", "falling slightly"),
        (0.40, 0.02, "outside the band of flat", "grows as L^0.60"),
        (1.60, 0.02, "outside the band of flat", "shrinks as L^-0.60"),
        (0.85, 0.40, "undecided", "not resolved"),
    ],
)
def test_the_disagreement_is_worded_from_the_verdict_and_the_sign(alpha, se, verdict_words, sign_words):
    text = _disagreement(Estimate(alpha, se, 3, "fit", 6))
    assert verdict_words in text and sign_words in text, text
    ok = in_range(Estimate(alpha, se, 3, "fit", 6), *BAND)
    if ok is True:  # a pass never says the disagreement grows or shrinks
        assert "grows" not in text and "shrinks" not in text
    if ok is False:
        assert "flat within" not in text
