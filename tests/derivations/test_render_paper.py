"""Paper style of the derivations (issue 41): the result as a few displayed equations with conditions and
simplified exponents, the checked chain as an appendix; no double negatives; compiles with pdflatex."""

import re

import pytest
import sympy as sp
from cli_calls import run
from tex_compile import compile_tex, needs_pdflatex

from depthscale.theory.derivation import DERIVATIONS, build_derivation
from depthscale.theory.render_derivation import render_derivation
from depthscale.theory.typeset import math_latex

# a minus sign directly followed by another one, inside a group, a fraction or a parenthesis
DOUBLE_NEGATIVE = re.compile(r"-\s*-|-\s*\\left\(\s*-|-\s*\(\s*-|-\s*\\frac\{\s*-|\^\{\s*-\s*\\frac\{\s*-")

MATH = re.compile(r"\\begin\{(equation\*?)\}(.*?)\\end\{\1\}|\$\$(.*?)\$\$|\$([^$]+)\$", re.S)


def math_of(text: str) -> str:
    """Every formula of a Markdown or LaTeX text (displayed and inline), one per line."""
    return "\n".join(next(g for g in m.groups()[1:] if g is not None) for m in MATH.finditer(text))


@pytest.fixture(scope="module", params=sorted(DERIVATIONS))
def paper(request):
    d = build_derivation(request.param)
    d.check()
    return d, {fmt: render_derivation(d, fmt, style="paper") for fmt in ("md", "html", "tex")}


def test_no_double_negatives(paper):
    _, out = paper
    for fmt in ("md", "tex"):
        maths = math_of(out[fmt])
        assert maths.count("\n") > 10
        found = DOUBLE_NEGATIVE.search(maths)
        assert not found, (fmt, maths[max(0, found.start() - 80) : found.end() + 40])


def test_the_pattern_catches_the_issues_example():
    # the full chain still prints sympy's exponent; the paper printer does not (a control that can fail)
    a, b, lam, c = sp.symbols("a b lambda c_lambda", positive=True)
    e = ((lam / c) ** (-1 / a)) ** (-a - b)
    assert DOUBLE_NEGATIVE.search(math_latex(e))
    assert not DOUBLE_NEGATIVE.search(math_latex(e, style="paper"))
    assert math_latex(e, style="paper") == r"\left(\frac{\lambda}{c_{\lambda}}\right)^{(a + b)/a}"
    assert DOUBLE_NEGATIVE.search(math_of(render_derivation(build_derivation("linear"), "tex", checked=False)))


def test_results_then_appendix_with_every_check(paper):
    d, out = paper
    tex = out["tex"]
    n_results = len(d.paper_results())
    assert 1 <= n_results <= 6
    assert tex.count(r"\begin{equation}") == n_results  # numbered: the paper's equations
    assert tex.count(r"\begin{equation*}") == len(d.steps)  # the appendix: every step
    assert tex.index(r"\begin{equation}") < tex.index(r"\appendix") < tex.index(r"\begin{equation*}")
    assert tex.count(r"\textbf{Check:}") == len(d.steps) and "FAILED" not in tex
    assert "Throughout," in tex  # the conditions are stated
    assert out["md"].count("**Check:**") == len(d.steps) and "Appendix" in out["md"]
    assert out["html"].count('class="check pass"') >= len(d.steps)
    # the default stays the full chain
    assert r"\appendix" not in d.to_latex() and d.to_latex(style="paper") == tex


def test_linear_paper_result():
    d = build_derivation("linear")
    tex = d.to_latex(style="paper", checked=False)
    head = tex[: tex.index(r"\appendix")]
    assert r"\simeq 1 - \frac{\left(2 L d^{- a}\right)^{\zeta}}{\Gamma\left(\zeta + 1\right)}" in head
    assert r"\left(\epsilon \Gamma\left(\zeta + 1\right)\right)^{1/\zeta}" in head
    assert r"for $1 \ll L \ll d^a$" in head
    assert r"\left(\frac{\lambda}{c_{\lambda}}\right)^{(a + b)/a}" in tex  # the change of variables, tidied


def test_bad_style():
    with pytest.raises(ValueError, match="style='short'"):
        build_derivation("modes").to_latex(style="short")


def test_cli_style_paper(capsys, tmp_path):
    code, out, _ = run(capsys, ["derive", "linear", "--style", "paper", "--format", "tex", "--out", str(tmp_path)])
    assert code == 0
    text = (tmp_path / "derivation-linear.tex").read_text(encoding="utf-8")
    assert r"\appendix" in text and not DOUBLE_NEGATIVE.search(math_of(text))
    code, _, err = run(capsys, ["derive", "linear", "--style", "short", "--out", str(tmp_path)])
    assert code == 2 and "style=" in err


@needs_pdflatex
@pytest.mark.parametrize("name", sorted(DERIVATIONS))
def test_paper_style_compiles(name, tmp_path):
    (tmp_path / "d.tex").write_text(build_derivation(name).to_latex(style="paper", checked=False), encoding="utf-8")
    log = compile_tex(tmp_path, "d.tex")
    assert "undefined" not in log.lower()
