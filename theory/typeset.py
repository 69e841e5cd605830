r"""Typesetting of text and mathematics for the three output formats (Markdown, HTML, LaTeX).

One place for each rendering concern:

- escaping of plain text: :func:`md_escape`, :func:`html_escape`, :func:`tex_escape`;
- sympy expressions as LaTeX: :func:`math_latex` (a sympy printer that writes substitutions as an
  evaluated-at bar, rising factorials as Pochhammer symbols ``(x)_n``, the Beta function as
  ``\mathrm{B}(x, y)`` and multi-letter indices upright);
- mathematics as MathML: :func:`math_mathml`, always LaTeX first and then
  :func:`depthscale.theory.mathml.latex_to_mathml`, the one MathML path;
- prose with inline mathematics: :func:`prose`.

Markup of prose. The texts of a derivation (titles, justifications, notes, introduction,
conclusion, parameter descriptions) and any other prose passed to :func:`prose` are plain text
with inline formulas between dollar signs, LaTeX inside (``"Insert $\lambda_k = c_\lambda
k^{-a}$ term by term."``); a literal dollar sign is written ``\$``. Markdown and LaTeX output keep
the formula as ``$...$``, HTML output turns it into inline MathML. The LaTeX allowed inside the
dollars is the subset documented in :mod:`depthscale.theory.mathml`; anything else raises
``ValueError`` when the HTML is rendered (and the tests render every derivation).

Examples
--------
>>> print(prose(r"Insert $\lambda_k$ & sum (\$5 each).", "tex"))
Insert $\lambda_k$ \& sum (\$5 each).
"""

from __future__ import annotations

import html
import re

import sympy as sp
from sympy.printing.latex import LatexPrinter
from sympy.printing.precedence import PRECEDENCE

from ._choices import FORMATS
from ._validate import check_choice
from .mathml import GREEK, IDENTIFIERS, SYMBOLS, latex_to_mathml

__all__ = ["md_escape", "html_escape", "tex_escape", "math_latex", "tidy_exponents", "math_mathml", "prose", "FORMATS"]


# ----------------------------------------------------------------------------------------------
# plain text

_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>#$|])")


def md_escape(text) -> str:
    r"""Escape plain text for Markdown (emphasis, code, links, HTML and math markers).

    >>> print(md_escape("a_1 * b <c> $"))
    a\_1 \* b \<c\> \$
    """
    return _MD_SPECIAL.sub(r"\\\1", str(text))


def html_escape(text) -> str:
    """Escape plain text for HTML (also inside attribute values).

    >>> html_escape('<a href="x">&</a>')
    '&lt;a href=&quot;x&quot;&gt;&amp;&lt;/a&gt;'
    """
    return html.escape(str(text), quote=True)


_TEX_CHARS = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "\u2014": "---",
    "\u2013": "--",
    "\u2212": "-",
    "\u2026": r"\ldots{}",
    "\u00a0": "~",
    # a bracket right after \\ would be read as its optional argument: hide brackets in groups
    "[": "{[}",
    "]": "{]}",
}
# Symbols that pdflatex's utf8 input cannot typeset by itself: written as math.
_TEX_MATH = {ch: "\\" + name for name, ch in GREEK.items()}
_TEX_MATH.update(
    {
        "≤": r"\leq",
        "≥": r"\geq",
        "±": r"\pm",
        "×": r"\times",
        "·": r"\cdot",
        "→": r"\to",
        "≈": r"\approx",
        "∞": r"\infty",
        "≠": r"\neq",
        "∼": r"\sim",
        "⁻": r"^{-}",
        "²": r"^{2}",
        "³": r"^{3}",
        "¹": r"^{1}",
        "√": r"\surd",
        "∈": r"\in",
        "∑": r"\sum",
        "∫": r"\int",
        "‖": r"\|",
        "ℓ": r"\ell",
        "≪": r"\ll",
        "≫": r"\gg",
    }
)


def tex_escape(text) -> str:
    """Escape plain text for LaTeX (special characters, Greek letters and common math symbols).

    Examples
    --------
    >>> print(tex_escape("50% of L_0 & {x} ≤ ζ"))
    50\\% of L\\_0 \\& \\{x\\} $\\leq$ $\\zeta$
    """
    out = []
    for ch in str(text):
        if ch in _TEX_CHARS:
            out.append(_TEX_CHARS[ch])
        elif ch in _TEX_MATH:
            out.append(f"${_TEX_MATH[ch]}$")
        elif ch in "\r\n\t":
            out.append(" ")
        else:
            out.append(ch)
    return "".join(out)


_ESCAPE = {"md": md_escape, "html": html_escape, "tex": tex_escape}

# ----------------------------------------------------------------------------------------------
# mathematics

_WORD_INDEX = re.compile(r"([_^])\{([A-Za-z]{2,})\}")


class _Printer(LatexPrinter):
    """sympy's LaTeX printer with the conventional notation for the functions sympy spells its own way."""

    def _print_Symbol(self, expr, style="plain"):
        text = super()._print_Symbol(expr, style)
        # indices that are words (R_L^free) upright, a star index as \ast
        text = _WORD_INDEX.sub(lambda m: f"{m.group(1)}{{\\mathrm{{{m.group(2)}}}}}", text)
        return text.replace("{*}", r"{\ast}")

    def _print_Subs(self, subs):
        expr, old, new = subs.args
        at = ", ".join(f"{self._print(o)} = {self._print(n)}" for o, n in zip(old, new))
        return rf"\left. {self._print(expr)} \right|_{{{at}}}"

    def _print_RisingFactorial(self, expr, exp=None):
        x, n = expr.args
        text = rf"\left({self._print(x)}\right)_{{{self._print(n)}}}"
        return rf"{{{text}}}^{{{exp}}}" if exp else text

    def _print_KroneckerDelta(self, expr, exp=None):
        i, j = expr.args
        sep = " " if all(a.is_Atom for a in (i, j)) else ", "
        text = rf"\delta_{{{self._print(i)}{sep}{self._print(j)}}}"
        return rf"\left({text}\right)^{{{exp}}}" if exp else text

    def _print_Sum(self, expr):
        # a double sum as two sums (outermost first), not one sum over a stacked range
        head = " ".join(
            rf"\sum_{{{self._print(v)}={self._print(lo)}}}^{{{self._print(hi)}}}" for v, lo, hi in reversed(expr.limits)
        )
        body = self._print(expr.function)
        return f"{head} \\left({body}\\right)" if isinstance(expr.function, sp.Add) else f"{head} {body}"

    def _print_factorial(self, expr, exp=None):
        text = rf"{self.parenthesize(expr.args[0], PRECEDENCE['Func'])}!"
        return rf"\left({text}\right)^{{{exp}}}" if exp else text

    def _print_beta(self, expr, exp=None):
        args = ", ".join(self._print(a) for a in expr.args)
        text = rf"\mathrm{{B}}\left({args}\right)"
        return rf"{text}^{{{exp}}}" if exp else text


def _tidy_exponent(e):
    """A symbolic exponent over one denominator with its sign in front: ``-(-a - b)/a`` becomes ``(a + b)/a``."""
    if e.is_Number or not e.free_symbols:
        return e
    t = sp.factor_terms(sp.cancel(sp.together(e)))
    return t if sp.count_ops(t) <= sp.count_ops(e) + 2 else e


def tidy_exponents(expr):
    r"""``expr`` with every symbolic exponent simplified (:func:`_tidy_exponent`), nothing else changed.

    >>> a, b, x = sp.symbols("a b x", positive=True)
    >>> e = sp.Pow(x, sp.Mul(-1, sp.Add(-a, -b), sp.Pow(a, -1), evaluate=False), evaluate=False)
    >>> tidy_exponents(e).exp
    (a + b)/a
    """
    return sp.sympify(expr).replace(
        lambda x: isinstance(x, sp.Pow) and not x.exp.is_Number,
        lambda x: sp.Pow(x.base, _tidy_exponent(x.exp), evaluate=False),
    )


class _PaperPrinter(_Printer):
    """The conventional printer with a paper's exponents: a symbolic fraction as ``(a + b)/a`` on one line."""

    def _print_Add(self, expr, order=None):
        # a positive term first: "1 - x", not "- x + 1"
        terms = list(self._as_ordered_terms(expr, order=order))
        if terms and terms[0].could_extract_minus_sign():
            pos = [t for t in terms if not t.could_extract_minus_sign()]
            if pos:
                terms = pos + [t for t in terms if t.could_extract_minus_sign()]
                return super()._print_Add(sp.Add(*terms, evaluate=False), order="none")
        return super()._print_Add(expr, order=order)

    def _print_Pow(self, expr, **kwargs):
        e = expr.exp
        if not e.is_Number and e.free_symbols:
            num, den = sp.fraction(sp.together(e))
            if den != 1:
                sign = ""
                if num.could_extract_minus_sign():
                    sign, num = "-", -num
                top = self._print(num)
                bottom = self._print(den)
                if isinstance(num, sp.Add) or (sign and isinstance(num, sp.Mul)):
                    top = f"({top})"
                if isinstance(den, (sp.Add, sp.Mul, sp.Pow)):
                    bottom = f"({bottom})"
                base = self.parenthesize(expr.base, PRECEDENCE["Pow"], strict=True)
                if isinstance(expr.base, sp.Function) or expr.base.is_Function:
                    base = rf"\left({self._print(expr.base)}\right)"
                return f"{base}^{{{sign}{top}/{bottom}}}"
        return super()._print_Pow(expr, **kwargs)


def math_latex(expr, style: str = "full") -> str:
    r"""LaTeX of a sympy expression (no delimiters), in conventional notation.

    ``style="paper"`` simplifies the symbolic exponents first (no ``-\frac{-a - b}{a}``) and writes a
    fractional one on one line, ``x^{(a + b)/a}``.

    Examples
    --------
    >>> zeta, L = sp.symbols("zeta L", positive=True)
    >>> math_latex(sp.beta(zeta, 2 * L + 1))
    '\\mathrm{B}\\left(\\zeta, 2 L + 1\\right)'
    >>> math_latex(sp.RisingFactorial(zeta + 1, L, evaluate=False))
    '\\left(\\zeta + 1\\right)_{L}'
    >>> a, b, lam, c = sp.symbols("a b lambda c_lambda", positive=True)
    >>> math_latex(((lam / c) ** (-1 / a)) ** (-a - b), style="paper")
    '\\left(\\frac{\\lambda}{c_{\\lambda}}\\right)^{(a + b)/a}'
    """
    if style == "paper":
        return _PaperPrinter().doprint(tidy_exponents(expr))
    return _Printer().doprint(sp.sympify(expr))


def math_mathml(expr, display: bool = True) -> str:
    """MathML ``<math>`` element of a sympy expression or of a LaTeX string (through LaTeX).

    >>> "&#x3BB;" in math_mathml(sp.Symbol("lambda"))
    True
    """
    latex = expr if isinstance(expr, str) else math_latex(expr)
    return latex_to_mathml(latex, display=display)


# ----------------------------------------------------------------------------------------------
# prose with inline mathematics

_DOLLAR = re.compile(r"(?<!\\)\$")


def _split(text: str) -> list:
    """Alternating [text, math, text, ...] pieces of ``$``-delimited prose."""
    pieces = _DOLLAR.split(str(text))
    if len(pieces) % 2 == 0:
        raise ValueError(f"text={text!r}: unbalanced '$' (write a literal dollar sign as \\$)")
    return [p.replace("\\$", "$") if i % 2 == 0 else p.strip() for i, p in enumerate(pieces)]


_COMMAND = re.compile(r"\\([A-Za-z]+|.)")


def _plain_math(latex: str) -> str:
    """A formula as plain Unicode text (for places that hold text only, such as an HTML title)."""

    def command(m):
        name = m.group(1)
        return GREEK.get(name) or IDENTIFIERS.get(name) or SYMBOLS.get(name) or ("" if not name.isalpha() else name)

    return _COMMAND.sub(command, latex).replace("{", "").replace("}", "")


def prose(text, fmt: str) -> str:
    r"""Render prose with ``$...$`` formulas for ``fmt``: ``"md"``, ``"html"``, ``"tex"`` or ``"plain"``.

    ``"plain"`` is Unicode text without markup (Greek letters and symbols as characters), for
    places that hold text only.

    Examples
    --------
    >>> print(prose(r"Here $d \to \infty$ and *more*", "md"))
    Here $d \to \infty$ and \*more\*
    >>> prose("$x$", "html")
    '<math xmlns="http://www.w3.org/1998/Math/MathML"><mi>x</mi></math>'
    >>> prose(r"exponent $\zeta \to \infty$", "plain")
    'exponent ζ → ∞'
    """
    check_choice("fmt", fmt, (*FORMATS, "plain"))
    out = []
    for i, piece in enumerate(_split(text)):
        if fmt == "plain":
            out.append(piece if i % 2 == 0 else _plain_math(piece))
        elif i % 2 == 0:
            out.append(_ESCAPE[fmt](piece))
        elif fmt == "html":
            out.append(latex_to_mathml(piece, display=False))
        else:
            out.append(f"${piece}$")
    return "".join(out)
