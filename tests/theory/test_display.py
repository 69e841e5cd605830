"""Notebook displays of derivations, steps and floor results."""

import numpy as np
import pytest
import sympy as sp

from depthscale.theory.derivation import Derivation, Step
from depthscale.theory.floor import FloorResult

x = sp.Symbol("x", positive=True)


def _toy():
    steps = [
        Step("Double", 2 * x, x + x, "Add.", transforms=("expand",)),
        Step("Leading order", x + 1, x, "The constant is negligible.", relation="~", limit=x),
    ]
    return Derivation("Toy", "A toy with $x > 0$.", [(x, "a number", "$x > 0$")], steps, "Done.")


def test_a_step_shows_its_equation_with_its_limit():
    step = _toy().steps[1]
    md = step._repr_markdown_()
    assert "$$x + 1 \\sim x \\quad \\left(x \\to \\infty\\right)$$" in md
    assert md.startswith("**Leading order.** The constant is negligible.")
    assert "not checked yet" in md


def test_a_derivation_shows_every_step_and_its_checks_once_checked():
    d = _toy()
    before = d._repr_markdown_()
    assert before.startswith("### Toy") and before.count("$$") == 2 * len(d.steps)
    assert before.count("**Check:** not checked") == 2
    d.check()
    after = d._repr_markdown_()
    assert "not checked" not in after and after.count(": passed") == 2
    assert "**All steps machine-checked:** yes" in after
    assert after.index("Double") < after.index("Leading order") < after.index("Done.")


BETA = sp.beta(sp.Symbol("zeta", positive=True), 2 * sp.Symbol("L", positive=True) + 1)


def _beta_derivation():
    return Derivation("Beta", "The Beta function $B$.", [], [Step("Same", BETA, BETA, "Nothing.")])


def test_every_format_typesets_the_beta_function_as_upright_b():
    d = _beta_derivation()
    tex = r"\mathrm{B}\left(\zeta, 2 L + 1\right)"
    assert sp.latex(BETA).startswith(r"\operatorname{B}")  # what sympy alone writes (the old display)
    for text in (d._repr_markdown_(), d._repr_latex_(), d.to_markdown(), d.to_latex(), d.to_latex(fragment=True)):
        assert f"{tex} = {tex}" in text and "operatorname" not in text and "2*L" not in text
    html = d.to_html()
    assert html.startswith("<!DOCTYPE html>") and html.count("<math") >= 2 and "operatorname" not in html
    assert '<mi mathvariant="normal">B</mi>' in html or "<mi>B</mi>" in html
    doc = d.to_latex()
    assert doc.startswith("\\documentclass") and doc.rstrip().endswith("\\end{document}")


def test_the_methods_are_the_reports_renderer():
    from depthscale.theory.render_derivation import render_derivation

    d = _toy()
    assert d.to_latex(checked=False) == render_derivation(d, "tex", checked=False)
    assert d.to_html(fragment=True, level=2, checked=False) == render_derivation(
        d, "html", fragment=True, level=2, checked=False
    )
    assert d.to_markdown(checked=False) == render_derivation(d, "md", checked=False)
    with pytest.raises(TypeError, match=r"^checked='yes': must be True, False or None$"):
        d.to_markdown(checked="yes")


def test_a_floor_result_shows_a_small_table_not_its_matrices():
    G = np.full((4, 4), 123.456)
    r = FloorResult(1.29261, 0.0118, 1.2905, 4, 2.43, np.full(4, 98.765), G, contexts=400, queries=8)
    html = r._repr_html_()
    assert "1.2926 ± 0.012" in html and "400 × 8" in html
    assert "123.456" not in html and "98.765" not in html


def test_jupyter_picks_the_rich_displays():
    formatters = pytest.importorskip("IPython.core.formatters")
    fmt = formatters.DisplayFormatter()
    data, _ = fmt.format(_toy())
    assert "text/markdown" in data and "$$" in data["text/markdown"]
    assert "\\begin{equation*}" in data["text/latex"]  # what nbconvert's LaTeX/PDF export uses
    r = FloorResult(1.0, 0.1, 1.0, 2, 1.0, np.ones(2), np.eye(2), contexts=10)
    assert "<table>" in fmt.format(r)[0]["text/html"]
