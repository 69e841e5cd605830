"""A report's links into the documentation: the glossary's terms and the derivations' theory pages.

Every link of a report leads to a page that exists where the report is written, in one of two ways
(:data:`LINKS`):

- ``"site"``: a report inside the documentation site, ``docs/<name>-report/`` (``report.md`` a page
  of the site, ``report.html`` a file copied as it is), links the site's own pages, relative to that
  folder. Markdown: ``../glossary.md#decided`` and ``../theory/linear.md``, which MkDocs turns into
  the site's addresses and which also resolve in the repository's tree; HTML: the site's addresses
  themselves, ``../glossary/#decided`` and ``../theory/linear/`` (MkDocs copies ``report.html``
  unchanged, and the site has a folder per page, ``theory/linear/index.html``).
- ``"bundle"``: a report written anywhere else carries the pages it links in its own folder
  (:mod:`depthscale.derivations.report.bundle`): ``glossary.md#decided`` and ``theory/linear.md``
  from the Markdown, ``glossary.html#decided`` and ``theory/linear.html`` from the HTML, so the
  report stands alone and still requests nothing from outside.

:func:`links_for` tells the two apart by the folder (a site's report folder sits beside its
``glossary.md``); :func:`glossary_linker` links the first appearance of each term in a report, in
reading order.

Examples
--------
>>> link = glossary_linker("md")
>>> link("2 indicative, 1 decided; indicative again")
'2 [indicative](../glossary.md#indicative), 1 [decided](../glossary.md#decided); indicative again'
>>> link("decided")
'decided'
>>> theory_page("linear", "html")
'../theory/linear/'
>>> glossary_href("decided", "html", "bundle"), theory_page("linear", "html", "bundle")
('glossary.html#decided', 'theory/linear.html')
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

from markupsafe import Markup, escape

from ...theory._validate import check_choice

SITE, BUNDLE = "site", "bundle"
LINKS = (SITE, BUNDLE)  # where a report's links lead: the docs site's pages, or copies beside the report

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


def links_for(out_dir) -> str:
    """:data:`SITE` when the report folder ``out_dir`` sits in a documentation site (its parent holds
    the site's ``glossary.md`` and ``theory/`` pages, as ``docs/`` does), else :data:`BUNDLE`.

    >>> import tempfile, pathlib
    >>> links_for(pathlib.Path(tempfile.mkdtemp()) / "report")
    'bundle'
    """
    parent = Path(os.path.abspath(out_dir)).parent
    return SITE if (parent / "glossary.md").is_file() and (parent / "theory").is_dir() else BUNDLE


def glossary_href(anchor: str, fmt: str, links: str = SITE) -> str:
    """The address of a glossary entry from a report's folder (``fmt``: "md" or "html"; ``links``:
    one of :data:`LINKS`)."""
    if check_choice("links", links, LINKS) == BUNDLE:
        return f"glossary.{'md' if fmt == 'md' else 'html'}#{anchor}"
    return f"../glossary.md#{anchor}" if fmt == "md" else f"../glossary/#{anchor}"


def theory_page(name: str, fmt: str, links: str = SITE) -> str:
    """The address of a derivation's theory page (``docs/theory/<name>.md``) from a report's folder;
    for LaTeX, the page's path (in the repository, or in the report's folder when bundled)."""
    if check_choice("links", links, LINKS) == BUNDLE:
        return {"md": f"theory/{name}.md", "html": f"theory/{name}.html"}.get(fmt, f"theory/{name}.md")
    return {"md": f"../theory/{name}.md", "html": f"../theory/{name}/"}.get(fmt, f"docs/theory/{name}.md")


def glossary_linker(fmt: str, links: str = SITE) -> Callable[[str], str]:
    """A filter that links, in each text it is given, the terms not yet linked in this report.

    It is called on the report's texts in reading order, so each term is linked where it first
    appears. For "html" the text is escaped first (a ``Markup`` is taken as HTML already) and a
    ``Markup`` returned; for "tex" the text is returned as it is. ``links``: where the links lead
    (one of :data:`LINKS`).
    """
    check_choice("links", links, LINKS)
    seen: set[str] = set()

    def link(text) -> str:
        if fmt not in _PROTECTED:
            return text
        html = fmt == "html"
        source = (text if isinstance(text, Markup) else escape(text)) if html else str(text)
        out, at = [], 0
        for m in _PROTECTED[fmt].finditer(source):
            out += [_link_plain(source[at : m.start()], fmt, seen, links), m.group(0)]
            at = m.end()
        out.append(_link_plain(source[at:], fmt, seen, links))
        return Markup("".join(out)) if html else "".join(out)

    return link


def _link_plain(text: str, fmt: str, seen: set[str], links: str) -> str:
    def one(m: re.Match) -> str:
        anchor = _ANCHOR[m.lastgroup or ""]
        if anchor in seen:
            return m.group(0)
        seen.add(anchor)
        href = glossary_href(anchor, fmt, links)
        return f"[{m.group(0)}]({href})" if fmt == "md" else f'<a class="term" href="{href}">{m.group(0)}</a>'

    return _TERM_RE.sub(one, text)


__all__ = ["TERMS", "LINKS", "SITE", "BUNDLE", "links_for", "glossary_href", "glossary_linker", "theory_page"]
