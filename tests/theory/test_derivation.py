"""The checking machinery: true steps pass, false ones fail; theory imports nothing that renders."""

import dataclasses

import pytest
import sympy as sp

from depthscale.theory.derivation import DERIVATIONS, Derivation, Step, build_derivation

x = sp.Symbol("x", positive=True)
z = sp.Symbol("zeta", positive=True)
L = sp.Symbol("L", positive=True, integer=True)


def test_symbolic_step_passes_and_off_by_one_exponent_fails():
    ok = Step(
        "beta",
        sp.beta(z, 2 * L + 1),
        sp.gamma(z) * sp.gamma(2 * L + 1) / sp.gamma(2 * L + z + 1),
        "j",
        assumptions={z: (0.2, 3), L: (1, 6)},
        transforms=("expand_func",),
    )
    r = ok.check()
    assert r.passed and r.method.startswith("symbolic")
    bad = dataclasses.replace(ok, rhs=sp.gamma(z) * sp.gamma(2 * L + 2) / sp.gamma(2 * L + z + 2))
    r = bad.check()
    assert not r.passed and r.method == "numeric" and r.error > 1e-3


def test_numeric_fallback_resolves_tiny_discrepancy():
    # an integral against a closed form that is wrong only in the 12th digit: numbers must notice
    integral = sp.Integral(x ** (z - 1) * sp.exp(-x), (x, 0, sp.oo))
    good = Step("Gamma", integral, sp.gamma(z), "Euler's integral.", assumptions={z: (0.2, 3)}, transforms=())
    r = good.check()
    assert r.passed and r.error < 1e-25
    bad = dataclasses.replace(good, rhs=sp.gamma(z) * (1 + sp.Rational(1, 10**12)))
    r = bad.check()
    assert not r.passed and 1e-13 < r.error < 1e-11


def test_integrable_singularity_near_zero_is_resolved():
    # x^(zeta-1) with zeta = 0.2 puts mass ~eps^0.2 below any fixed cutoff: the check must still reach 1e-25
    s = Step("power", sp.Integral(x ** (z - 1), (x, 0, 1)), 1 / z, "j", assumptions={z: (0.15, 0.25)}, transforms=())
    assert s.check().passed


def test_asymptotic_step_passes_and_wrong_exponent_fails(stirling_step):
    r = stirling_step.check()
    assert r.passed and r.method == "ratio"
    bad = dataclasses.replace(stirling_step, rhs=(2 * L) ** (-z - sp.Rational(1, 100)))
    assert not bad.check().passed


def test_asymptotic_ratio_must_approach_one_monotonically():
    # ratio 1 + sin(L)/L^0.1... use a ratio whose deviation grows: lhs = L + L^(1/2)
    s = Step("wrong", L + L**2 / 10**8, L, "j", relation="~", limit=L, tolerance=1.0)
    r = s.check()
    assert not r.passed and "NOT monotone" in r.detail


def test_fixed_size_instances_and_relative_tolerance():
    M = sp.IndexedBase("M")
    l, m = sp.symbols("l m", integer=True, positive=True)
    lhs = sp.Sum(sp.Sum(M[l, m], (m, 1, L)), (l, 1, L))
    good = Step(
        "split",
        lhs,
        sp.Sum(M[l, l], (l, 1, L)) + sp.Sum(sp.Sum((1 - sp.KroneckerDelta(l, m)) * M[l, m], (m, 1, L)), (l, 1, L)),
        "j",
        instances=[{L: 2}, {L: 3}],
        transforms=(lambda e: sp.expand(e.doit()),),
    )
    r = good.check()
    assert r.passed and "at L = 2, 3" in r.method
    bad = dataclasses.replace(good, rhs=sp.Sum(sp.Sum(M[l, m], (m, 1, L - 1)), (l, 1, L)))
    assert not bad.check().passed


def test_invalid_step_arguments_raise():
    with pytest.raises(ValueError, match="relation"):
        Step("t", x, x, "j", relation="<")
    with pytest.raises(ValueError, match="limit"):
        Step("t", x, x, "j", relation="~")
    with pytest.raises(ValueError, match="assumptions"):
        Step("t", x, x, "j", assumptions={x: (2, 1)})
    with pytest.raises(ValueError, match="name"):
        build_derivation("nope")


def test_derivation_check_reports_each_step(euler_step, off_by_one_step):
    res = Derivation("Toy", "t", [], [euler_step, off_by_one_step]).check()
    assert [r.passed for r in res.steps] == [True, False]
    assert not res.all_passed and res.failed() == ["Wrong"]


def test_theory_imports_nothing_that_renders():
    import subprocess
    import sys

    code = (
        "import sys, depthscale.theory, depthscale.theory.derivation as d; [b() for b in d.DERIVATIONS.values()]; "
        "print(sorted(m for m in sys.modules if m.startswith(('depthscale.derivations', 'depthscale.sims', "
        "'jinja2', 'markupsafe', 'html'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_registry_names():
    assert set(DERIVATIONS) == {"linear", "free", "modes", "clt"}
