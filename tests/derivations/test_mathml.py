"""The LaTeX-subset to MathML converter and the prose markup: structure, validity and refusals."""

import xml.etree.ElementTree as ET

import pytest
import sympy as sp

from depthscale.theory.mathml import latex_to_mathml
from depthscale.theory.typeset import math_latex, math_mathml, md_escape, prose, tex_escape

NS = "{http://www.w3.org/1998/Math/MathML}"


def tree(latex, display=True):
    root = ET.fromstring(latex_to_mathml(latex, display=display))
    assert root.tag == NS + "math"
    return root


def shape(el):
    """Nested (tag, text, children) without the namespace: the structure a reader sees."""
    kids = [shape(c) for c in el]
    tag = el.tag.replace(NS, "")
    return (tag, (el.text or "").strip(), kids) if kids else (tag, (el.text or "").strip())


@pytest.mark.parametrize(
    "latex,expected",
    [
        (r"x_k", ("msub", "", [("mi", "x"), ("mi", "k")])),
        (r"x^{2}_{k}", ("msubsup", "", [("mi", "x"), ("mi", "k"), ("mn", "2")])),
        (r"\frac{a}{b}", ("mfrac", "", [("mi", "a"), ("mi", "b")])),
        (r"\sqrt{x}", ("msqrt", "", [("mi", "x")])),
        (r"\lambda", ("mi", "λ")),
        (r"\Gamma", ("mi", "Γ")),
        (r"\mathrm{B}", ("mi", "B")),
        (r"12.5", ("mn", "12.5")),
        (r"-", ("mo", "−")),
        (r"\to", ("mo", "→")),
        (r"\text{if } x", ("mrow", "", [("mtext", "if"), ("mi", "x")])),
    ],
)
def test_structure_of_small_formulas(latex, expected):
    assert shape(tree(latex)[0]) == expected


def test_sum_limits_under_and_over_in_display_and_scripts_inline():
    display = tree(r"\sum_{k=1}^{d} k")[0]
    assert display[0].tag == NS + "munderover" and display[0][0].text == "∑"
    inline = tree(r"\sum_{k=1}^{d} k", display=False)[0]
    assert inline[0].tag == NS + "msubsup"
    integral = tree(r"\int_{0}^{1} x\, dx")[0]
    assert integral[0].tag == NS + "msubsup"  # an integral keeps its limits at the side unless \limits
    assert tree(r"\int\limits_{0}^{1} x")[0][0].tag == NS + "munderover"


def test_evaluated_at_bar_is_a_subscripted_group():
    el = tree(r"\left. f(x) \right|_{x = 1}")[0]
    assert el.tag == NS + "msub"
    group, at = el
    assert [c.text for c in group][-1] == "|" and group[0].tag == NS + "mi"  # no opening delimiter
    assert [shape(c) for c in at] == [("mi", "x"), ("mo", "="), ("mn", "1")]


def test_left_right_fences_are_stretchy():
    el = tree(r"\left(\frac{a}{b}\right)")[0]
    assert [c.get("stretchy") for c in el if c.tag == NS + "mo"] == ["true", "true"]


def test_markup_characters_are_escaped():
    text = latex_to_mathml(r"a < b > c \& d")
    assert "&lt;" in text and "&gt;" in text
    assert [c.text for c in tree(r"a < b")[0]] == ["a", "<", "b"]


@pytest.mark.parametrize(
    "latex,message",
    [
        (r"\foo{x}", r"\\foo is not supported"),
        (r"\frac{a}", "ends unexpectedly"),
        (r"{a", "ends unexpectedly"),
        (r"a}", "unbalanced"),
        (r"x_1_2", "double subscript"),
        (r"\left( x", "ends unexpectedly"),
        (r"a \\ b", r"\\\\ is not supported"),
    ],
)
def test_outside_the_subset_raises_naming_it(latex, message):
    with pytest.raises(ValueError, match=message):
        latex_to_mathml(latex)


def test_sympy_notation_for_the_functions_sympy_spells_its_own_way():
    z, L, g, l, m = sp.symbols("zeta L gamma l m", positive=True)
    lam = sp.IndexedBase("lambda")
    assert math_latex(sp.beta(z, 2 * L + 1)) == r"\mathrm{B}\left(\zeta, 2 L + 1\right)"
    assert math_latex(sp.RisingFactorial(z + 1, L, evaluate=False)) == r"\left(\zeta + 1\right)_{L}"
    assert math_latex(sp.KroneckerDelta(l, m)) == r"\delta_{l m}"
    assert math_latex(sp.Subs(g * L, g, L / lam[1])) == r"\left. L \gamma \right|_{\gamma = \frac{L}{{\lambda}_{1}}}"
    assert math_latex(sp.Symbol("R_L^free")) == r"R^{\mathrm{free}}_{L}"
    assert math_latex(sp.Symbol("y^*")) == r"y^{\ast}"
    assert math_latex(sp.factorial(L) ** 2) == r"\left(L!\right)^{2}"
    double = sp.Sum(sp.Sum(l * m, (m, 1, L)), (l, 1, L))
    assert math_latex(double) == r"\sum_{l=1}^{L} \sum_{m=1}^{L} l m"
    # and each of them goes through the MathML path
    for e in (
        sp.beta(z, L),
        sp.RisingFactorial(z, L, evaluate=False),
        sp.KroneckerDelta(l, m),
        double,
        sp.Subs(g * L, g, 2),
    ):
        ET.fromstring(math_mathml(e))


def test_prose_markup_in_each_format():
    text = r"Insert $\lambda_k = c_\lambda k^{-a}$ for 50% of *cases* (\$1)."
    assert prose(text, "md") == r"Insert $\lambda_k = c_\lambda k^{-a}$ for 50% of \*cases\* (\$1)."
    assert prose(text, "tex") == r"Insert $\lambda_k = c_\lambda k^{-a}$ for 50\% of *cases* (\$1)."
    html = prose(text, "html")
    assert html.startswith("Insert <math") and html.endswith("</math> for 50% of *cases* ($1).")
    ET.fromstring(html[len("Insert ") : html.index("</math>") + len("</math>")])
    assert prose(text, "plain") == "Insert λ_k = c_λ k^-a for 50% of *cases* ($1)."
    with pytest.raises(ValueError, match="unbalanced"):
        prose("one $x", "md")
    with pytest.raises(ValueError, match="fmt"):
        prose("x", "pdf")


def test_escapers():
    assert md_escape("a_b*c") == r"a\_b\*c"
    assert tex_escape("a_b & 5% ~ ζ") == r"a\_b \& 5\% \textasciitilde{} $\zeta$"
