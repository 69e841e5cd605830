"""Rendering of derivations: valid documents in every format, mathematics typeset as mathematics.

The four registered derivations are rendered in Markdown, HTML and LaTeX; no sympy function name,
no ``*``/``**`` outside markup and no ASCII spelling of a symbol may reach the output, every
formula must be in the LaTeX subset that the MathML path converts, and every ``<math>`` block of
the HTML must parse as XML and contain only presentation-MathML elements.
"""

import dataclasses
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import pytest
import sympy as sp
from tex_compile import compile_tex, needs_pdflatex

from depthscale.theory.derivation import DERIVATIONS, Derivation, build_derivation
from depthscale.theory.mathml import latex_to_mathml
from depthscale.theory.render_derivation import render_derivation

MATHML = "http://www.w3.org/1998/Math/MathML"
XHTML = "http://www.w3.org/1999/xhtml"
PRESENTATION = {
    "math",
    "mi",
    "mn",
    "mo",
    "mrow",
    "msub",
    "msup",
    "msubsup",
    "mfrac",
    "msqrt",
    "mroot",
    "munder",
    "mover",
    "munderover",
    "mspace",
    "mtext",
}
# sympy's names for objects and functions, as its printers fall back to them
SYMPY_WORDS = re.compile(
    r"(?<![\\A-Za-z])(Subs|RisingFactorial|KroneckerDelta|risingfactorial|kroneckerdelta|"
    r"operatorname|IndexedBase|Indexed|Piecewise|AppliedUndef|Dummy)(?![A-Za-z])"
)
SYMPY_CALLS = re.compile(
    r"(?<![\\A-Za-z])(subs|beta|gamma|jacobi|factorial|binomial|exp|log|sqrt|Sum|Integral|"
    r"Derivative|Function|Symbol|Abs|Mul|Add|Pow)\("
)
# a symbol written in ASCII in prose (in LaTeX it is a command: preceded by a backslash)
ASCII_SYMBOL = re.compile(
    r"(?<![\\A-Za-z])(alpha|beta|gamma|delta|epsilon|eps|zeta|eta|lambda|omega|sigma|rho|tau|"
    r"xi|oo|inf)(?![A-Za-z])|->|<=|>=|!=|<<|>>"
)

z = sp.Symbol("zeta", positive=True)
L = sp.Symbol("L", positive=True, integer=True)


# multi-letter identifiers a formula may show; sympy's fallback spelling of a function (subs, beta,
# risingfactorial) would be one more
WORDS = {"log", "ln", "exp", "min", "max", "lim", "sup", "inf", "free"}


@pytest.fixture(scope="module", params=sorted(DERIVATIONS))
def rendered(request):
    # the mathematics without the check results (those are plain text, tested on the toy below)
    d = build_derivation(request.param)
    return d, {fmt: render_derivation(d, fmt, checked=False) for fmt in ("md", "html", "tex")}


def _check_mathml(el):
    for node in el.iter():
        assert node.tag.startswith(f"{{{MATHML}}}") and node.tag.split("}")[1] in PRESENTATION, node.tag
        if node.tag == f"{{{MATHML}}}mi" and len(node.text or "") > 1:
            assert node.text in WORDS, node.text


def _md_math(md):
    """(formulas, text) of Markdown: $$ blocks and inline $...$ separated from the prose."""
    blocks = re.findall(r"^\$\$\n(.*?)\n\$\$$", md, flags=re.S | re.M)
    rest = re.sub(r"^\$\$\n.*?\n\$\$$", " ", md, flags=re.S | re.M)
    inline = re.findall(r"(?<!\\)\$(.+?)(?<!\\)\$", rest)
    text = re.sub(r"(?<!\\)\$(.+?)(?<!\\)\$", " ", rest)
    return blocks + inline, text


def _tex_math(tex):
    blocks = re.findall(r"\\begin\{equation\*\}\n(.*?)\n\\end\{equation\*\}", tex, flags=re.S)
    rest = re.sub(r"\\begin\{equation\*\}.*?\\end\{equation\*\}", " ", tex, flags=re.S)
    inline = re.findall(r"(?<!\\)\$(.+?)(?<!\\)\$", rest)
    text = re.sub(r"(?<!\\)\$(.+?)(?<!\\)\$", " ", rest)
    return blocks + inline, text


def test_no_sympy_internals_anywhere(rendered):
    _, out = rendered
    for fmt, text in out.items():
        assert not SYMPY_WORDS.search(text), (fmt, SYMPY_WORDS.search(text).group(0))
        assert not SYMPY_CALLS.search(text), (fmt, SYMPY_CALLS.search(text).group(0))


def test_markdown_formulas_are_in_the_subset_and_prose_has_no_ascii_maths(rendered):
    d, out = rendered
    formulas, text = _md_math(out["md"])
    assert len(formulas) > len(d.steps)  # the steps' equations and the inline formulas of the prose
    for f in formulas:
        assert "*" not in f, f
        _check_mathml(ET.fromstring(latex_to_mathml(f)))  # raises on anything outside the subset
    markup_free = re.sub(r"\*\*[^*\n]+:\*\*|^\*[^*\n]+\*$", " ", text, flags=re.M)
    assert "*" not in markup_free
    prose_only = "\n".join(line for line in text.splitlines() if not line.startswith("**Check:**"))
    prose_only = re.sub(r"\*\*[^*\n]+:\*\*|^\*[^*\n]+\*$", " ", prose_only, flags=re.M)
    found = ASCII_SYMBOL.search(prose_only)
    assert not found, found.group(0)
    assert "_" not in prose_only.replace("\\_", "") and "^" not in prose_only


def test_latex_formulas_are_in_the_subset_and_prose_has_no_ascii_maths(rendered):
    d, out = rendered
    formulas, text = _tex_math(out["tex"])
    assert len(formulas) > len(d.steps)
    for f in formulas:
        assert "*" not in f, f
        _check_mathml(ET.fromstring(latex_to_mathml(f)))
    assert "*" not in re.sub(r"\\[a-z]+\*|\{equation\*\}", "", text)
    prose_only = "\n".join(line for line in text.splitlines() if not line.startswith(r"\textbf{Check:}"))
    found = ASCII_SYMBOL.search(re.sub(r"\\[A-Za-z]+", "", prose_only))
    assert not found, found.group(0)


class _Text(HTMLParser):
    """Text of the page outside <math>, <style> and the check lines."""

    def __init__(self):
        super().__init__()
        self.skip, self.text, self.check = 0, [], False

    def handle_starttag(self, tag, attrs):
        if tag in ("math", "style"):
            self.skip += 1
        if tag == "p" and "check" in (dict(attrs).get("class") or ""):
            self.check = True

    def handle_endtag(self, tag):
        if tag in ("math", "style"):
            self.skip -= 1
        if tag == "p":
            self.check = False

    def handle_data(self, data):
        if not self.skip and not self.check:
            self.text.append(data)


def test_html_is_xml_with_valid_mathml_and_no_ascii_maths(rendered):
    d, out = rendered
    page = out["html"]
    root = ET.fromstring(page.split("\n", 1)[1])  # everything after the doctype is XML
    maths = list(root.iter(f"{{{MATHML}}}math"))
    assert sum(m.get("display") == "block" for m in maths) == len(d.steps)
    assert len(maths) > len(d.steps) + len(d.parameters)  # inline formulas of the prose too
    for m in re.findall(r"<math\b.*?</math>", page, flags=re.S):
        _check_mathml(ET.fromstring(m))  # each block parses on its own
    assert "*" not in page
    p = _Text()
    p.feed(page)
    text = "".join(p.text)
    found = ASCII_SYMBOL.search(text.replace("&gt;", ">").replace("&lt;", "<"))
    assert not found, found.group(0)
    assert "_" not in text and "^" not in text and "$" not in text and "\\" not in text


@needs_pdflatex
def test_latex_document_compiles(rendered, tmp_path):
    _, out = rendered
    (tmp_path / "d.tex").write_text(out["tex"], encoding="utf-8")
    log = compile_tex(tmp_path, "d.tex")
    assert "undefined" not in log.lower()


def test_every_step_in_every_format(rendered):
    d, out = rendered
    assert out["md"].count("\n$$\n") == 2 * len(d.steps)
    assert out["tex"].count("\\begin{equation*}") == len(d.steps)
    for i in range(1, len(d.steps) + 1):
        assert f"Step {i}." in out["md"] and f"Step {i}." in out["html"] and f"Step {i}." in out["tex"]


def test_conventional_notation_of_the_named_functions():
    md = {n: render_derivation(build_derivation(n), "md", checked=False) for n in DERIVATIONS}
    html = {n: render_derivation(build_derivation(n), "html", checked=False) for n in ("linear", "free", "clt")}
    beta = r"\mathrm{B}\left(\zeta, 2 L + 1\right)"
    assert beta in md["linear"]  # the Beta function B(zeta, 2L + 1)
    assert r"\right|_{\gamma = \frac{L}{c_{\lambda}}}" in md["linear"]  # evaluated-at bar
    assert r"\right|_{\gamma = \frac{L}{{\lambda}_{1}}}" in md["modes"]
    assert r"\left(\zeta + 1\right)_{L}" in md["free"]  # Pochhammer symbol
    assert r"\delta_{l m}" in md["clt"]  # Kronecker delta
    fence = '<mo fence="true" stretchy="true">(</mo>'
    assert f'<mi mathvariant="normal">B</mi><mrow>{fence}<mi>&#x3B6;</mi>' in html["linear"]
    assert f"<msub><mrow>{fence}<mi>&#x3B6;</mi><mo>+</mo><mn>1</mn>" in html["free"]
    assert "<msub><mi>&#x3B4;</mi><mrow><mi>l</mi><mi>m</mi></mrow></msub>" in html["clt"]


# ----------------------------------------------------------------------------------------------
# a toy derivation with hostile text


@pytest.fixture(scope="module")
def toy(euler_step, stirling_step, off_by_one_step):
    # the steps of known truth from tests/conftest.py; the first with hostile prose
    good = dataclasses.replace(
        euler_step,
        title="Euler <integral> & co",
        justification=r"Uses 50% of \$money_# {braces} ~ ^ \ and <tags> & ζ → ∞, with $\zeta > 0$.",
    )
    return Derivation(
        "A <toy> & test",
        "Intro with <b>markup</b> & 100% text.",
        [(z, "exponent", r"$\zeta > 0$"), (L, "depth", r"$L \ge 1$")],
        [good, stirling_step, off_by_one_step],
        "Done & dusted.",
    )


class _Collect(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.text = [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def test_html_is_wellformed_self_contained_mathml(toy):
    page = render_derivation(toy, "html")
    root = ET.fromstring(page.split("\n", 1)[1])
    blocks = [el for el in root.iter(f"{{{MATHML}}}math") if el.get("display") == "block"]
    assert len(blocks) == 3
    assert "<script" not in page and "<link" not in page and "src=" not in page
    p = _Collect()
    p.feed(page)
    text = "".join(p.text)
    assert "Euler <integral> & co" in text and "<b>markup</b>" in text  # escaped, shown literally
    assert ("b", {}) not in p.tags
    assert "FAILED" in text and "$money_#" in text
    frag = render_derivation(toy, "html", fragment=True, level=3)
    ET.fromstring(frag)
    assert frag.startswith('<section class="derivation">\n<h3>') and "<html" not in frag and "<h4>Step 1." in frag


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
    doc = render_derivation(toy, "tex")
    _balanced(doc)
    assert doc.startswith("\\documentclass") and "\\usepackage{amsmath" in doc
    assert doc.count("\\begin{equation*}") == 3
    assert "50\\%" in doc and "\\$money\\_\\#" in doc and "$\\zeta$" in doc and "$\\to$" in doc
    assert "with $\\zeta > 0$." in doc
    frag = render_derivation(toy, "tex", fragment=True, level=3)
    _balanced(frag)
    assert frag.startswith("\\subsection{A \\textless{}toy\\textgreater{} \\& test}")
    assert "\\subsubsection*{Step 1." in frag and "\\documentclass" not in frag


def test_markdown_has_display_math_and_escapes(toy):
    md = render_derivation(toy, "md")
    assert md.startswith("# A \\<toy\\> & test")
    assert md.count("$$") == 6 and "\\sim" in md
    assert "\\<b\\>markup\\</b\\>" in md and "with $\\zeta > 0$." in md and "\\$money\\_\\#" in md
    assert render_derivation(toy, "md", fragment=True, level=2).startswith("## ")


@pytest.mark.parametrize(
    "kw,name", [({"fmt": "pdf"}, "fmt"), ({"fmt": "md", "level": 0}, "level"), ({"fmt": "md", "level": True}, "level")]
)
def test_bad_arguments_raise_naming_them(toy, kw, name):
    with pytest.raises(ValueError, match=f"^{name}="):
        render_derivation(toy, **kw)
