"""mkdocs hook: a heading's mathematics reaches the table of contents as plain text.

pymdownx.arithmatex turns ``$\\zeta$`` in a heading into ``\\(\\zeta\\)`` inside a span that MathJax
typesets in the page; the table of contents keeps only the heading's text, outside any span MathJax
reads, so it showed the raw ``\\(\\zeta\\)``. The derivation pages and the reports, generated files
both, have such headings. This hook rewrites each table-of-contents title with every ``\\(...\\)``
or ``\\[...\\]`` as plain text: ``depth exponent \\(2\\zeta\\)`` becomes ``depth exponent 2ζ``. (The
search plugin reads section titles from the page's HTML, not from the table of contents.)
"""

from __future__ import annotations

import re

# TeX commands of the headings, as Unicode; any other command loses its backslash (\foo -> foo)
_GREEK = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho varsigma sigma tau"
_GREEK += " upsilon phi chi psi omega"
SYMBOLS = {
    **{name: chr(0x3B1 + i) for i, name in enumerate(_GREEK.split())},  # U+03B1 alpha .. U+03C9 omega
    **dict(zip("Gamma Delta Theta Lambda Xi Pi Sigma Phi Psi Omega".split(), "ΓΔΘΛΞΠΣΦΨΩ")),
    **dict(zip("ll gg le leq ge geq ne neq approx sim to infty cdot times pm ast".split(), "≪≫≤≤≥≥≠≠≈~→∞·×±*")),
}
DROPPED = ("mathrm", "mathit", "text", "left", "right")  # fonts and sizes: their argument stays
_MATH = re.compile(r"\\\((.*?)\\\)|\\\[(.*?)\\\]", re.S)
_TOKEN = re.compile(r"\\([A-Za-z]+)|\\(.)|[{}]", re.S)  # a command, an escaped character, a brace


def tex_text(tex: str) -> str:
    """One formula's TeX as plain text: commands as Unicode (or their bare names, fonts dropped),
    braces dropped, spacing commands and line breaks a space: no backslash is left.

    >>> tex_text(r"2\\zeta"), tex_text(r"L \\ll d^a"), tex_text(r"\\mathrm{B}(\\zeta, 2L+1)")
    ('2ζ', 'L ≪ d^a', 'B(ζ, 2L+1)')
    """

    def token(m: re.Match) -> str:
        if m.group(1) is not None:
            name = m.group(1)
            return "" if name in DROPPED else " " if name in ("quad", "qquad") else SYMBOLS.get(name, name)
        if m.group(2) is not None:
            return " " if m.group(2) in ",;:! \\\n" else m.group(2)  # \, \; \\ ... are spacing, \{ a brace
        return ""  # a group's braces

    text = _TOKEN.sub(token, tex)
    return re.sub(r"\s+", " ", text).strip()


def toc_text(title: str) -> str:
    """A table-of-contents title with each ``\\(...\\)`` and ``\\[...\\]`` formula as plain text.

    >>> toc_text(r"Equal-step linear attention: depth exponent \\(\\zeta\\)")
    'Equal-step linear attention: depth exponent ζ'
    """
    return _MATH.sub(lambda m: tex_text(m.group(1) if m.group(1) is not None else m.group(2)), title)


def _plain(items) -> None:
    for item in items:
        item.title = toc_text(item.title)
        _plain(item.children)


def on_page_content(html, page, config, files):
    _plain(page.toc)
    return html
