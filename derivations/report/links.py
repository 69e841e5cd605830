"""A report's links into the documentation: the glossary's terms and the derivations' theory pages.

A report is published in the documentation site as ``docs/<name>-report/`` (``report.md`` a page of
the site, ``report.html`` a file copied as it is), so its links are relative to that folder:

- Markdown: ``../glossary.md#decided`` and ``../theory/linear.md``, which MkDocs turns into the
  site's addresses and which also resolve in the repository's tree;
- HTML: the site's addresses themselves, ``../glossary/#decided`` and ``../theory/linear/``: MkDocs
  copies ``report.html`` unchanged, and the site has a folder per page (``theory/linear/index.html``),
  not a ``theory/linear.html``. Opened outside the site (a report written anywhere else) these links
  lead nowhere, as the Markdown's do: the HTML stays self-contained and requests nothing.

:func:`glossary_linker` links the first appearance of each term in a report, in reading order.

Examples
--------
>>> link = glossary_linker("md")
>>> link("2 indicative, 1 decided; indicative again")
'2 [indicative](../glossary.md#indicative), 1 [decided](../glossary.md#decided); indicative again'
>>> link("decided")
'decided'
>>> theory_page("linear", "html")
'../theory/linear/'
"""

from __future__ import annotations

import re
from collections.abc import Callable

from markupsafe import Markup, escape

# the glossary's anchors (docs/glossary.md's headings as MkDocs makes them) and the words that name
# them in a report; a longer phrase is tried before a shorter one at the same place
TERMS: tuple[tuple[str, str], ...] = (
    ("would-be-verdict", r"would-be verdicts?"),
    ("equal-step-predictor", r"equal-step predictors?"),
    ("single-head", r"single(?:[- ]temperature)? heads?"),
    ("convex-floor", r"convex floors?"),
    ("signed-floor", r"signed floors?"),
    ("identified-fit", r"identified fits?|identified"),
    ("lack-of-fit", r"lack of fit"),
    ("inverse-depth", r"inverse depth"),
    ("evaluation-contexts", r"evaluation contexts"),
    ("top-k-ab-tasks", r"top-(?:k|\d+)"),
    ("easy-tasks", r"easy tasks?"),
    ("spectrum-exponents-a-b-and-zeta", r"zeta|ζ"),
    ("decided", r"decided"),
    ("indicative", r"indicative"),
    ("verdicts", r"verdicts?"),
    ("r_l", r"R_L"),
    ("a_l", r"A_L"),
    ("c_l", r"C_L"),
    ("protocol", r"protocols?"),
    ("seeds", r"seeds?"),
    ("preset", r"presets?"),
    ("store", r"store"),
)
_TERM_RE = re.compile(
    "|".join(rf"(?P<t{i}>(?<![\w-])(?:{pattern})(?![\w-]))" for i, (_, pattern) in enumerate(TERMS)), re.IGNORECASE
)
_ANCHOR = {f"t{i}": anchor for i, (anchor, _) in enumerate(TERMS)}
# spans no link goes into: code, mathematics, an existing link or image, an HTML tag or element
_PROTECTED = {
    "md": re.compile(r"`[^`]*`|\$\$.*?\$\$|\$[^$]*\$|!?\[[^\]]*\]\([^)]*\)|<[^>]*>", re.S),
    "html": re.compile(r"<(a|code|math|h[1-6])\b.*?</\1>|<[^>]*>", re.S | re.I),
}


def glossary_href(anchor: str, fmt: str) -> str:
    """The address of a glossary entry from a report's folder (``fmt``: "md" or "html")."""
    return f"../glossary.md#{anchor}" if fmt == "md" else f"../glossary/#{anchor}"


def theory_page(name: str, fmt: str) -> str:
    """The address of a derivation's theory page (``docs/theory/<name>.md``) from a report's folder;
    for LaTeX, the page's path in the repository."""
    return {"md": f"../theory/{name}.md", "html": f"../theory/{name}/"}.get(fmt, f"docs/theory/{name}.md")


def glossary_linker(fmt: str) -> Callable[[str], str]:
    """A filter that links, in each text it is given, the terms not yet linked in this report.

    It is called on the report's texts in reading order, so each term is linked where it first
    appears. For "html" the text is escaped first (a ``Markup`` is taken as HTML already) and a
    ``Markup`` returned; for "tex" the text is returned as it is.
    """
    seen: set[str] = set()

    def link(text) -> str:
        if fmt not in _PROTECTED:
            return text
        html = fmt == "html"
        source = (text if isinstance(text, Markup) else escape(text)) if html else str(text)
        out, at = [], 0
        for m in _PROTECTED[fmt].finditer(source):
            out += [_link_plain(source[at : m.start()], fmt, seen), m.group(0)]
            at = m.end()
        out.append(_link_plain(source[at:], fmt, seen))
        return Markup("".join(out)) if html else "".join(out)

    return link


def _link_plain(text: str, fmt: str, seen: set[str]) -> str:
    def one(m: re.Match) -> str:
        anchor = _ANCHOR[m.lastgroup or ""]
        if anchor in seen:
            return m.group(0)
        seen.add(anchor)
        href = glossary_href(anchor, fmt)
        return f"[{m.group(0)}]({href})" if fmt == "md" else f'<a class="term" href="{href}">{m.group(0)}</a>'

    return _TERM_RE.sub(one, text)


__all__ = ["TERMS", "glossary_href", "glossary_linker", "theory_page"]
