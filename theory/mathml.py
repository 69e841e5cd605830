"""Presentation MathML from the subset of LaTeX that the project writes: the one MathML path.

Every formula of an HTML page (a derivation step printed from sympy, a symbol in prose, a law in
the report's notation section) is first LaTeX and is turned into MathML here, so that each
construct has one rendering. The subset:

- letters (italic identifiers), numbers, the operators ``+ - = < > ( ) [ ] | , . ; : ! / ' *``;
- groups ``{...}``, subscripts ``_``, superscripts ``^`` (either order, on any atom or group);
- ``\\frac \\dfrac \\tfrac \\binom \\sqrt`` (also ``\\sqrt[n]``), ``\\left X ... \\right Y`` with
  ``X, Y`` a delimiter or ``.``; ``\\left. f \\right|_{x=a}`` is the evaluated-at bar;
- Greek letters, ``\\ell \\infty \\partial \\nabla`` and the relations and operators listed in
  ``SYMBOLS``; function names (``\\log \\exp \\ln \\min \\max \\lim ...``);
- ``\\sum \\prod \\int`` (limits under and over with ``\\limits``, or for ``\\sum``/``\\prod``);
- ``\\operatorname{B} \\mathrm \\text \\mathbf \\mathcal \\hat \\bar \\tilde \\substack``, the
  spaces ``\\, \\; \\: \\! \\quad \\qquad`` and the sizes ``\\big \\Big \\bigg \\Bigg`` (ignored).

Anything else raises ``ValueError`` naming the command, so an unsupported construct is found by
the tests instead of being shown as raw text.

Examples
--------
>>> latex_to_mathml(r"\\lambda_k = c_\\lambda k^{-a}", display=False)  # doctest: +NORMALIZE_WHITESPACE
'<math xmlns="http://www.w3.org/1998/Math/MathML"><mrow><msub><mi>&#x3BB;</mi><mi>k</mi></msub><mo>=</mo><msub><mi>c</mi><mi>&#x3BB;</mi></msub><msup><mi>k</mi><mrow><mo>&#x2212;</mo><mi>a</mi></mrow></msup></mrow></math>'
"""

from __future__ import annotations

import re

__all__ = ["latex_to_mathml", "GREEK", "IDENTIFIERS", "SYMBOLS"]

_NS = "http://www.w3.org/1998/Math/MathML"

GREEK = {
    "alpha": "α",
    "beta": "β",
    "gamma": "γ",
    "delta": "δ",
    "epsilon": "ϵ",
    "varepsilon": "ε",
    "zeta": "ζ",
    "eta": "η",
    "theta": "θ",
    "vartheta": "ϑ",
    "iota": "ι",
    "kappa": "κ",
    "lambda": "λ",
    "mu": "μ",
    "nu": "ν",
    "xi": "ξ",
    "pi": "π",
    "rho": "ρ",
    "varrho": "ϱ",
    "sigma": "σ",
    "tau": "τ",
    "upsilon": "υ",
    "phi": "ϕ",
    "varphi": "φ",
    "chi": "χ",
    "psi": "ψ",
    "omega": "ω",
    "Gamma": "Γ",
    "Delta": "Δ",
    "Theta": "Θ",
    "Lambda": "Λ",
    "Xi": "Ξ",
    "Pi": "Π",
    "Sigma": "Σ",
    "Upsilon": "Υ",
    "Phi": "Φ",
    "Psi": "Ψ",
    "Omega": "Ω",
}
# identifiers that are not letters
IDENTIFIERS = {"ell": "ℓ", "infty": "∞", "partial": "∂", "nabla": "∇", "emptyset": "∅"}
# operators and relations: command -> character
SYMBOLS = {
    "to": "→",
    "rightarrow": "→",
    "Rightarrow": "⇒",
    "mapsto": "↦",
    "leftarrow": "←",
    "le": "≤",
    "leq": "≤",
    "ge": "≥",
    "geq": "≥",
    "ll": "≪",
    "gg": "≫",
    "neq": "≠",
    "ne": "≠",
    "sim": "∼",
    "approx": "≈",
    "simeq": "≃",
    "equiv": "≡",
    "propto": "∝",
    "in": "∈",
    "cdot": "⋅",
    "times": "×",
    "pm": "±",
    "mp": "∓",
    "ast": "∗",
    "star": "⋆",
    "circ": "∘",
    "ldots": "…",
    "dots": "…",
    "cdots": "⋯",
    "top": "⊤",
    "prime": "′",
    "mid": "∣",
    "lbrace": "{",
    "rbrace": "}",
    "langle": "⟨",
    "rangle": "⟩",
    "vert": "|",
    "Vert": "‖",
}
_FUNCTIONS = {
    "log",
    "ln",
    "exp",
    "sin",
    "cos",
    "tan",
    "sinh",
    "cosh",
    "tanh",
    "det",
    "arg",
    "min",
    "max",
    "lim",
    "sup",
    "inf",
    "Pr",
}
_UNDER_LIMITS = {"min", "max", "lim", "sup", "inf"}  # in display, their subscript goes underneath
_BIG = {"sum": "∑", "prod": "∏", "int": "∫"}
_SPACES = {",": "0.1667em", ":": "0.2222em", ";": "0.2778em", " ": "0.25em", "quad": "1em", "qquad": "2em"}
_SIZES = {"big", "Big", "bigg", "Bigg", "bigl", "bigr", "Bigl", "Bigr", "biggl", "biggr", "Biggl", "Biggr"}
_ACCENTS = {"hat": "^", "bar": "¯", "tilde": "~", "dot": "˙", "vec": "→", "widehat": "^", "overline": "¯"}
_STYLES = {
    "mathrm": "normal",
    "operatorname": "normal",
    "mathbf": "bold",
    "mathcal": "script",
    "mathit": "italic",
    "mathsf": "sans-serif",
    "boldsymbol": "bold-italic",
}
_DELIMS = {
    "(": "(",
    ")": ")",
    "[": "[",
    "]": "]",
    "|": "|",
    ".": "",
    "\\{": "{",
    "\\}": "}",
    "\\|": "‖",
    "\\langle": "⟨",
    "\\rangle": "⟩",
    "\\lbrace": "{",
    "\\rbrace": "}",
    "\\vert": "|",
    "\\Vert": "‖",
}
_OPERATOR_CHARS = set("+-=<>()[]|,.;:!/'*")

_TOKEN = re.compile(r"\\[A-Za-z]+|\\.|[0-9]+(?:\.[0-9]+)?|\s+|.", re.S)


def _xml(text: str) -> str:
    out = []
    for ch in text:
        if ch == "&":
            out.append("&amp;")
        elif ch == "<":
            out.append("&lt;")
        elif ch == ">":
            out.append("&gt;")
        elif ord(ch) > 127:
            out.append(f"&#x{ord(ch):X};")
        else:
            out.append(ch)
    return "".join(out)


def _mi(ch: str, variant: str | None = None) -> str:
    attr = f' mathvariant="{variant}"' if variant else ""
    return f"<mi{attr}>{_xml(ch)}</mi>"


def _mo(ch: str, **attrs) -> str:
    a = "".join(f' {k.rstrip("_")}="{v}"' for k, v in attrs.items())
    return f"<mo{a}>{_xml(ch)}</mo>"


def _row(items: list) -> str:
    return items[0] if len(items) == 1 else "<mrow>" + "".join(items) + "</mrow>"


class _Parser:
    """Recursive descent over the token list; each ``_atom`` returns (MathML, kind)."""

    def __init__(self, source: str, display: bool):
        self.source = source
        self.display = display
        self.toks = _TOKEN.findall(source)  # whitespace kept for \\text, skipped everywhere else
        self.i = 0

    # ---- token helpers ------------------------------------------------------------------
    def _peek(self):
        while self.i < len(self.toks) and self.toks[self.i].isspace():
            self.i += 1
        return self.toks[self.i] if self.i < len(self.toks) else None

    def _next(self):
        tok = self._peek()
        if tok is None:
            raise ValueError(f"latex={self.source!r}: ends unexpectedly")
        self.i += 1
        return tok

    def _expect(self, tok: str):
        got = self._next()
        if got != tok:
            raise ValueError(f"latex={self.source!r}: expected {tok!r}, found {got!r}")

    def _text_arg(self) -> str:
        """The raw text of a ``{...}`` argument (for \\text and \\operatorname)."""
        self._expect("{")
        depth, out = 1, list[str]()
        while True:
            if self.i >= len(self.toks):
                raise ValueError(f"latex={self.source!r}: ends unexpectedly")
            tok = self.toks[self.i]
            self.i += 1
            if tok == "{":
                depth += 1
            elif tok == "}":
                depth -= 1
                if depth == 0:
                    return "".join(out)
            out.append(tok[1:] if tok in ("\\{", "\\}", "\\_", "\\%", "\\&", "\\$", "\\#") else tok)

    # ---- grammar ------------------------------------------------------------------------
    def parse(self) -> str:
        items = self._sequence(stop=())
        if self._peek() is not None:
            raise ValueError(f"latex={self.source!r}: unbalanced {self._peek()!r}")
        return _row(items) if items else "<mrow/>"

    def _sequence(self, stop) -> list:
        items = []
        while self._peek() is not None and self._peek() not in stop:
            if self._peek() == "}":
                if "}" in stop:
                    break
                raise ValueError(f"latex={self.source!r}: unbalanced '}}'")
            items.append(self._scripted())
        return items

    def _group(self) -> str:
        """A ``{...}`` group or a single atom (the argument of a command or a script)."""
        if self._peek() == "{":
            self._next()
            items = self._sequence(stop=("}",))
            self._expect("}")
            return _row(items) if items else "<mrow/>"
        body, _ = self._atom()
        return body

    def _scripted(self) -> str:
        base, kind = self._atom()
        sub = sup = None
        limits = kind in ("bigop-under", "under")
        while self._peek() in ("_", "^", "\\limits", "\\nolimits"):
            tok = self._next()
            if tok == "\\limits":
                limits = True
                continue
            if tok == "\\nolimits":
                limits = False
                continue
            arg = self._group()
            if tok == "_":
                if sub is not None:
                    raise ValueError(f"latex={self.source!r}: double subscript")
                sub = arg
            else:
                if sup is not None:
                    raise ValueError(f"latex={self.source!r}: double superscript")
                sup = arg
        if sub is None and sup is None:
            return base
        if limits and self.display:
            if sub is not None and sup is not None:
                return f"<munderover>{base}{sub}{sup}</munderover>"
            return f"<munder>{base}{sub}</munder>" if sub is not None else f"<mover>{base}{sup}</mover>"
        if sub is not None and sup is not None:
            return f"<msubsup>{base}{sub}{sup}</msubsup>"
        return f"<msub>{base}{sub}</msub>" if sub is not None else f"<msup>{base}{sup}</msup>"

    def _delimiter(self) -> str:
        tok = self._next()
        if tok not in _DELIMS:
            raise ValueError(f"latex={self.source!r}: {tok!r} is not a delimiter")
        return _DELIMS[tok]

    def _atom(self) -> tuple[str, str]:
        tok = self._next()
        if tok == "{":
            self.i -= 1
            return self._group(), "group"
        if tok in ("_", "^"):
            raise ValueError(f"latex={self.source!r}: script {tok!r} without a base")
        if tok[0].isdigit():
            return f"<mn>{tok}</mn>", "number"
        if tok == "-":
            return _mo("−"), "op"
        if tok in _OPERATOR_CHARS:
            if tok == "*":
                return _mo("∗"), "op"
            if tok == "'":
                return _mo("′"), "op"
            if tok in "()[]|":
                return _mo(tok, stretchy="false"), "op"
            if tok == "/":  # a division slash sits tight, as in TeX
                return _mo(tok, lspace="0", rspace="0"), "op"
            return _mo(tok), "op"
        if not tok.startswith("\\"):
            if tok.isalpha():
                return _mi(tok), "ident"
            if tok in ("~",):
                return '<mspace width="0.25em"/>', "space"
            raise ValueError(f"latex={self.source!r}: character {tok!r} is not supported")
        name = tok[1:]
        if name in _SPACES:
            return f'<mspace width="{_SPACES[name]}"/>', "space"
        if name == "!":
            return '<mspace width="-0.1667em"/>', "space"
        if name in ("{", "}", "|"):
            return _mo(_DELIMS[tok], stretchy="false"), "op"
        if name in ("_", "%", "&", "$", "#"):
            return _mo(name), "op"
        if name in GREEK:
            ch = GREEK[name]
            return _mi(ch, "normal" if ch.isupper() else None), "ident"
        if name in IDENTIFIERS:
            return _mi(IDENTIFIERS[name]), "ident"
        if name in SYMBOLS:
            return _mo(SYMBOLS[name]), "op"
        if name in _FUNCTIONS:
            return _mi(name), ("under" if name in _UNDER_LIMITS else "function")
        if name in _BIG:
            return _mo(_BIG[name], largeop="true", movablelimits="false"), ("bigop-under" if name != "int" else "bigop")
        if name in ("frac", "dfrac", "tfrac"):
            num = self._group()
            den = self._group()
            return f"<mfrac>{num}{den}</mfrac>", "group"
        if name == "binom":
            top = self._group()
            bottom = self._group()
            return (f'<mrow>{_mo("(")}<mfrac linethickness="0">{top}{bottom}</mfrac>{_mo(")")}</mrow>', "group")
        if name == "sqrt":
            if self._peek() == "[":
                self._next()
                index = _row(self._sequence(stop=("]",)))
                self._expect("]")
                return f"<mroot>{self._group()}{index}</mroot>", "group"
            return f"<msqrt>{self._group()}</msqrt>", "group"
        if name == "left":
            opening = self._delimiter()
            items = self._sequence(stop=("\\right",))
            self._expect("\\right")
            closing = self._delimiter()
            parts = (
                ([_mo(opening, fence="true", stretchy="true")] if opening else [])
                + items
                + ([_mo(closing, fence="true", stretchy="true")] if closing else [])
            )
            return "<mrow>" + "".join(parts) + "</mrow>", "group"
        if name == "right":
            raise ValueError(f"latex={self.source!r}: \\right without \\left")
        if name in _SIZES:
            return _mo(self._delimiter(), stretchy="false"), "op"
        if name in ("text", "textrm", "mbox"):
            return f"<mtext>{_xml(self._text_arg())}</mtext>", "ident"
        if name in _STYLES:
            if name in ("mathrm", "operatorname"):
                text = self._text_arg()
                return _mi(text, "normal" if len(text) == 1 else None), (
                    "function" if name == "operatorname" else "ident"
                )
            inner = self._group()
            variant = _STYLES[name]
            return re.sub(r"<(mi|mn|mo)(?: mathvariant=\"[^\"]*\")?>", rf'<\1 mathvariant="{variant}">', inner), "ident"
        if name in _ACCENTS:
            inner = self._group()
            return f'<mover accent="true">{inner}{_mo(_ACCENTS[name])}</mover>', "ident"
        if name == "substack":
            return self._group(), "group"
        if name in ("displaystyle", "textstyle"):
            return "<mrow/>", "space"
        raise ValueError(f"latex={self.source!r}: the command {tok} is not supported")


def latex_to_mathml(latex: str, display: bool = True) -> str:
    """Presentation MathML (a complete ``<math>`` element) of a LaTeX formula in the subset above.

    Parameters
    ----------
    latex : str
        The formula, without ``$`` delimiters.
    display : bool
        A block formula (``display="block"``; limits of sums under and over) or an inline one.

    Returns
    -------
    str
        XML: numeric character references only, so it parses with any XML parser.

    Raises
    ------
    ValueError
        For a construct outside the subset, naming it.

    Examples
    --------
    >>> latex_to_mathml(r"\\frac{a}{b}")
    '<math xmlns="http://www.w3.org/1998/Math/MathML" display="block"><mfrac><mi>a</mi><mi>b</mi></mfrac></math>'
    >>> latex_to_mathml(r"\\foo")
    Traceback (most recent call last):
    ...
    ValueError: latex='\\\\foo': the command \\foo is not supported
    """
    body = _Parser(str(latex), display).parse()
    attr = ' display="block"' if display else ""
    return f'<math xmlns="{_NS}"{attr}>{body}</math>'
