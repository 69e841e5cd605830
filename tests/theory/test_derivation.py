"""The checking machinery: true steps pass, false ones fail, and the renderers produce valid documents."""

import dataclasses
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import mpmath
import pytest
import sympy as sp

from depthscale.theory.derivation import DERIVATIONS, Derivation, Step, build_derivation

x = sp.Symbol("x", positive=True)
z = sp.Symbol("zeta", positive=True)
L = sp.Symbol("L", positive=True, integer=True)


def test_symbolic_step_passes_and_off_by_one_exponent_fails():
    ok = Step("beta", sp.beta(z, 2 * L + 1), sp.gamma(z) * sp.gamma(2 * L + 1) / sp.gamma(2 * L + z + 1), "j",
              assumptions={z: (0.2, 3), L: (1, 6)}, transforms=("expand_func",))
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


def test_asymptotic_step_passes_and_wrong_exponent_fails():
    good = Step("Stirling", sp.gamma(2 * L + 1) / sp.gamma(2 * L + z + 1), (2 * L) ** (-z), "j",
                assumptions={z: (0.2, 3)}, relation="~", limit=L, tolerance=1e-5)
    r = good.check()
    assert r.passed and r.method == "ratio"
    bad = dataclasses.replace(good, rhs=(2 * L) ** (-z - sp.Rational(1, 100)))
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
    good = Step("split", lhs, sp.Sum(M[l, l], (l, 1, L)) + sp.Sum(sp.Sum((1 - sp.KroneckerDelta(l, m)) * M[l, m],
                                                                          (m, 1, L)), (l, 1, L)),
                "j", instances=[{L: 2}, {L: 3}], transforms=(lambda e: sp.expand(e.doit()),))
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


@pytest.fixture(scope="module")
def toy():
    good = Step("Euler <integral> & co", sp.Integral(x ** (z - 1) * sp.exp(-x), (x, 0, sp.oo)), sp.gamma(z),
                "Uses 50% of $money_# {braces} ~ ^ \\ and <tags> & ζ → ∞.", assumptions={z: (0.5, 2)}, transforms=())
    asym = Step("Stirling", sp.gamma(2 * L + 1) / sp.gamma(2 * L + z + 1), (2 * L) ** (-z), "Stirling.",
                assumptions={z: (0.2, 3)}, relation="~", limit=L, tolerance=1e-5, note="for large L")
    bad = Step("Wrong", sp.beta(z, L), sp.gamma(z) * sp.gamma(L) / sp.gamma(L + z + 1), "Off by one.",
               assumptions={z: (0.2, 3), L: (1, 5)}, transforms=("expand_func",))
    return Derivation("A <toy> & test", "Intro with <b>markup</b> & 100% text.",
                      [(z, "exponent", "zeta > 0"), (L, "depth", "L >= 1")], [good, asym, bad], "Done & dusted.")


def test_derivation_check_reports_each_step(toy):
    res = toy.check()
    assert [r.passed for r in res.steps] == [True, True, False]
    assert not res.all_passed and res.failed() == ["Wrong"]


class _Collect(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.text = [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def test_html_is_wellformed_self_contained_mathml(toy):
    page = toy.to_html()
    root = ET.fromstring(page.split("\n", 1)[1])  # drop the doctype line; the rest must be XML
    mathml = "{http://www.w3.org/1998/Math/MathML}math"
    blocks = [el for el in root.iter(mathml) if el.get("display") == "block"]
    assert len(blocks) == 3
    assert "<script" not in page and "<link" not in page and "src=" not in page
    p = _Collect()
    p.feed(page)
    text = "".join(p.text)
    assert "Euler <integral> & co" in text and "<b>markup</b>" in text  # escaped, shown literally
    assert ("b", {}) not in p.tags
    assert "FAILED" in text
    frag = toy.to_html_fragment()
    ET.fromstring(frag)
    assert frag.startswith("<section") and "<html" not in frag


def _balanced(tex):
    stack = []
    for kind, env in re.findall(r"\\(begin|end)\{([^}]*)\}", tex):
        if kind == "begin":
            stack.append(env)
        else:
            assert stack and stack.pop() == env, env
    assert not stack
    depth = 0
    for i, ch in enumerate(tex):
        if ch in "{}" and (i == 0 or tex[i - 1] != "\\"):
            depth += 1 if ch == "{" else -1
            assert depth >= 0
    assert depth == 0


def test_latex_document_balanced_and_escaped(toy):
    doc = toy.to_latex()
    _balanced(doc)
    assert doc.startswith("\\documentclass") and "\\usepackage{amsmath" in doc
    assert doc.count("\\begin{equation*}") == 3
    assert "50\\%" in doc and "\\$money\\_\\#" in doc and "$\\zeta$" in doc and "$\\to$" in doc
    assert all(ord(c) < 128 for c in doc)  # pdflatex-safe
    frag = toy.to_latex_fragment()
    _balanced(frag)
    assert "\\documentclass" not in frag


def test_markdown_has_display_math_and_escapes(toy):
    md = toy.to_markdown()
    assert md.startswith("# A \\<toy\\> & test")
    assert md.count("$$") == 6 and "\\sim" in md
    assert "\\<b\\>markup\\</b\\>" in md
    assert toy.to_markdown_fragment(level=2).startswith("## ")


def test_registry_names():
    assert set(DERIVATIONS) == {"linear", "free", "modes", "clt"}
