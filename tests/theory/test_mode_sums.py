"""Head-plus-tail mode rules: exactness of the block Gauss rules and the stated error bound against plain sums."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from depthscale.theory.mode_sums import discrete_gauss, mode_rule, tail_error_bound


def plain_sum(a, p, s, e, d, scale=1.0):
    """``sum_{k=1}^d scale k^-p (1 - s k^-a)^e`` term by term (math.fsum, plain powers)."""
    k = np.arange(1, d + 1, dtype=np.float64)
    terms = scale * k**-p * (1.0 - s * k**-a) ** e
    return math.fsum(terms), float(np.sum(scale * k**-p))


def rule_sum(rule, a, p, s, e, scale=1.0):
    return float(np.sum(scale * rule.count * rule.k**-p * (1.0 - s * rule.k**-a) ** e))


@pytest.mark.parametrize("N,n", [(10, 3), (77, 5), (1000, 8), (5000, 12)])
def test_discrete_gauss_sums_polynomials_of_degree_2n_minus_1_exactly(N, n):
    t, w = discrete_gauss(N, n)
    assert np.all(w > 0) and w.sum() == pytest.approx(N, rel=1e-13)
    assert np.all((t > 0) & (t < N - 1)) and np.all(np.diff(t) > 0)
    for j in range(2 * n):
        exact = sum(k**j for k in range(N))  # integers: exact
        got = math.fsum(w * t**j)
        assert got == pytest.approx(float(exact), rel=1e-11), j


def test_mode_rule_layout():
    r = mode_rule(10**6, 100)
    assert r.head == 100 and np.array_equal(r.k[:100], np.arange(1, 101))
    assert np.all(np.diff(r.k) > 0) and r.k[-1] < 10**6 and r.k.size < 1000
    assert r.count.sum() == pytest.approx(10**6, rel=1e-14)
    # blocks tile head+1..d without gaps or overlaps
    assert r.blocks[0, 0] == 101 and r.blocks[-1, 1] == 10**6
    assert np.all(r.blocks[1:, 0] == r.blocks[:-1, 1] + 1)
    whole = mode_rule(500, 10**6)  # head past d: the plain sum
    assert whole.head == 500 and whole.blocks.size == 0 and np.array_equal(whole.k, np.arange(1, 501))


def test_mode_rule_refuses_bad_arguments():
    with pytest.raises(ValueError, match="^d="):
        mode_rule(0, 10)
    with pytest.raises(ValueError, match="^head="):
        mode_rule(10, 0)
    with pytest.raises(ValueError, match="^nodes="):
        mode_rule(10, 1, nodes=0)


GRID = [(a, b, 10**4) for a in (0.0, 0.5, 1.0, 2.0, 3.0) for b in (0.0, 1.0)]
GRID += [(0.5, 0.0, 10**5), (2.0, 1.0, 10**5), (3.0, 0.5, 10**5)]


@pytest.mark.parametrize("a,b,d", GRID)
def test_default_rule_matches_plain_sum_within_its_bound(a, b, d):
    """Equal-step sums, small head so the tail matters: error <= bound + rounding, and <= 1e-12 relative."""
    rules = [mode_rule(d, head) for head in (8, 64)]
    for L in (1, 8, 64, 512):
        for s in (0.2, 1.0, 1.9):
            ref, size = plain_sum(a, a + b, s, 2 * L, d)
            for rule in rules:
                got = rule_sum(rule, a, a + b, s, 2 * L)
                bound = tail_error_bound(rule, a, a + b, s, 2 * L)
                assert abs(got - ref) <= bound + 1e-13 * size, (rule.head, L, s, got, ref, bound)
                if bound <= 1e-14 * ref:
                    assert got == pytest.approx(ref, rel=1e-12, abs=1e-300)


@pytest.mark.parametrize(
    "a,b,L,s", [(0.5, 0.0, 64, 1.9), (0.5, 0.5, 8, 1.0), (1.0, 0.0, 200, 0.5), (2.0, 1.0, 512, 1.9)]
)
@pytest.mark.parametrize("nodes", [2, 3, 4])
def test_bound_holds_for_coarse_rules(a, b, L, s, nodes):
    """With 2-4 points per block the rule is visibly wrong; the bound must still cover the error."""
    d = 20_000
    rule = mode_rule(d, 2, nodes=nodes)
    ref, size = plain_sum(a, a + b, s, 2 * L, d)
    got = rule_sum(rule, a, a + b, s, 2 * L)
    bound = tail_error_bound(rule, a, a + b, s, 2 * L)
    assert abs(got - ref) <= bound + 1e-13 * size


@settings(deadline=None, max_examples=60)
@given(
    a=st.floats(0, 3),
    b=st.floats(0, 2),
    d=st.integers(50, 3000),
    head=st.integers(1, 40),
    nodes=st.integers(1, 12),
    L=st.integers(1, 200),
    s=st.floats(0, 2),
    deriv=st.booleans(),
)
def test_bound_property(a, b, d, head, nodes, L, s, deriv):
    """Any spectrum, step and rule: |rule - plain| <= bound (+ rounding); also for the derivative-type sums."""
    rule = mode_rule(d, head, nodes=nodes)
    p, e = (2 * a + b, 2 * L - 1) if deriv else (a + b, 2 * L)
    ref, size = plain_sum(a, p, s, e, d)
    got = rule_sum(rule, a, p, s, e)
    assert abs(got - ref) <= tail_error_bound(rule, a, p, s, e) + 1e-13 * size
