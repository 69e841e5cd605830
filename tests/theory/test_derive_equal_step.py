"""Every step of the equal-step derivation passes its machine check, and a corrupted step fails it."""

import dataclasses

import pytest
import sympy as sp

from depthscale.theory import derive_equal_step as m


@pytest.fixture(scope="module")
def checked():
    der = m.equal_step_derivation()
    return der, der.check()


def test_every_step_passes(checked):
    der, res = checked
    assert len(res.steps) == len(der.steps) >= 5
    for r in res.steps:
        assert r.passed, (r.title, r.method, r.detail)
    assert res.all_passed


def test_corrupted_step_fails(checked):
    der, _ = checked
    bad = dataclasses.replace(der.steps[5], rhs=der.steps[5].rhs.subs(2 * m.L + 1, 2 * m.L + 2))
    assert bad.rhs != der.steps[[s.title for s in der.steps].index(bad.title)].rhs
    r = bad.check()
    assert not r.passed, r


def test_renders_contain_every_step(checked):
    der, _ = checked
    md, html, tex = der.to_markdown(), der.to_html(), der.to_latex()
    for s in der.steps:
        assert s.title in md and s.title in html
    assert html.count('<math display="block"') == len(der.steps)
    assert tex.count("\\begin{equation*}") == len(der.steps)
