"""Every step of every derivation passes its machine check, and a corrupted step fails it (the
renderings are tested in tests/derivations/test_render_derivation.py)."""

import dataclasses

import pytest
import sympy as sp

from depthscale.theory import derive_clt, derive_equal_step, derive_free, derive_modes

# (builder, index of the step to corrupt, corruption of its right-hand side)
CASES = {
    "linear": (
        derive_equal_step.equal_step_derivation,
        6,
        lambda rhs: rhs.subs(2 * derive_equal_step.L + 1, 2 * derive_equal_step.L + 2),
    ),  # off-by-one Beta argument
    "free": (
        derive_free.free_polynomial_derivation,
        8,
        lambda rhs: rhs * (derive_free.L + derive_free.zeta + 1) / (derive_free.L + 1),
    ),  # wrong Gamma ratio
    "modes": (
        derive_modes.modes_derivation,
        6,
        lambda rhs: rhs * derive_modes.L ** sp.Rational(-1, 100),
    ),  # exponent off by 0.01
    "clt": (
        derive_clt.clt_derivation,
        8,
        lambda rhs: rhs.subs(derive_clt.r**derive_clt.L, derive_clt.r ** (derive_clt.L + 1)),
    ),
}


@pytest.fixture(scope="module", params=sorted(CASES))
def checked(request):
    build, index, corrupt = CASES[request.param]
    der = build()
    return der, der.check(), index, corrupt


def test_every_step_passes(checked):
    der, res, _, _ = checked
    assert len(res.steps) == len(der.steps) >= 5
    for r in res.steps:
        assert r.passed, (r.title, r.method, r.detail)
    assert res.all_passed


def test_corrupted_step_fails(checked):
    der, _, index, corrupt = checked
    bad = dataclasses.replace(der.steps[index], rhs=corrupt(der.steps[index].rhs))
    assert bad.rhs != der.steps[index].rhs
    r = bad.check()
    assert not r.passed, r
