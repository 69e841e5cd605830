"""The pages a report written outside the documentation site carries in its own folder, so that every
link it holds leads somewhere (:mod:`depthscale.derivations.report.links`, ``"bundle"``):

- ``glossary.md`` and ``glossary.html``: the documentation's glossary (a copy of ``docs/glossary.md``
  ships with the package, ``templates/glossary.md``; a test keeps the two equal). Its links to the
  glossary's own entries and to the bundled theory pages stay links; a link to any other page of the
  documentation, which is not beside the report, becomes its plain words.
- ``theory/<name>.md`` and ``theory/<name>.html``: the theory page of each registered derivation the
  report shows, rendered from the derivation itself, as ``docs/theory/<name>.md`` is.

The HTML glossary is one self-contained page like ``report.html``: inline style, formulas in
MathML, a policy that forbids every request, each entry's heading with the anchor MkDocs gives it.

Examples
--------
>>> print(glossary_markdown("# G\\n\\nSee [decided](#decided), [choices](choices.md), [clt](theory/clt.md).\\n",
...                         pages={"clt"}), end="")
# G
<BLANKLINE>
See [decided](#decided), choices, [clt](theory/clt.md).
>>> slug("Top-k (a,b) tasks"), slug("R_L")
('top-k-ab-tasks', 'r_l')
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection, Iterable
from pathlib import Path

from markupsafe import escape

GLOSSARY = Path(__file__).with_name("templates") / "glossary.md"
# the theory pages a bundle may hold (``theory/<name>.md``): a link to one names it
_THEORY = re.compile(r"^theory/([a-z0-9_-]+)\.md(#[\w-]*)?$")
# a Markdown link, kept apart from code spans and formulas (which may hold brackets of their own)
_INLINE = re.compile(r"`([^`]*)`|\[([^\]]*)\]\(([^)\s]*)\)|\$([^$]+)\$")


def slug(heading: str) -> str:
    """The anchor MkDocs (Python-Markdown's ``toc``) gives a heading: ASCII, word characters, spaces
    and hyphens kept, lower case, runs of spaces and hyphens one hyphen."""
    text = unicodedata.normalize("NFKD", heading).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def _target(href: str, fmt: str, pages: Collection[str]) -> str | None:
    """Where a glossary link leads in the bundle (``fmt`` "md" or "html"), or None: not bundled."""
    if href.startswith("#"):
        return href
    m = _THEORY.match(href)
    if m and m.group(1) in pages:
        return href if fmt == "md" else f"theory/{m.group(1)}.html{m.group(2) or ''}"
    return None


def glossary_markdown(text: str, pages: Collection[str]) -> str:
    """The glossary's Markdown ``text`` as the bundle holds it: a link to an entry, or to a theory page
    of ``pages`` (derivation names), kept; any other link its plain words."""
    out, at = [], 0
    for m in _INLINE.finditer(text):
        out.append(text[at : m.start()])
        label, href = m.group(2), m.group(3)
        keep = label is None or _target(href, "md", pages) is not None
        out.append(m.group(0) if keep else label)
        at = m.end()
    out.append(text[at:])
    return "".join(out)


def _inline_html(text: str, pages: Collection[str]) -> str:
    from ...theory.typeset import prose

    out, at = [], 0
    for m in _INLINE.finditer(text):
        out.append(str(escape(text[at : m.start()])))
        code, label, href, formula = m.groups()
        if code is not None:
            out.append(f"<code>{escape(code)}</code>")
        elif label is not None:
            inner, to = _inline_html(label, pages), _target(href, "html", pages)
            out.append(f'<a href="{escape(to)}">{inner}</a>' if to is not None else inner)
        else:
            out.append(prose(f"${formula}$", "html"))
        at = m.end()
    out.append(str(escape(text[at:])))
    return "".join(out)


_STYLE = (
    'body { font-family: Georgia, "DejaVu Serif", serif; max-width: 50rem; margin: 2rem auto; padding: 0 1rem;'
    " line-height: 1.45; color: #222; } .meta { color: #555; font-size: 0.9rem; }"
    " code { font-size: 0.9em; background: #f4f4f4; padding: 0 0.15rem; }"
)


def glossary_html(text: str, pages: Collection[str]) -> str:
    """The glossary's Markdown ``text`` (headings and paragraphs) as one self-contained HTML page, each
    heading with its MkDocs anchor; links as :func:`glossary_markdown` keeps them.

    >>> page = glossary_html("# Glossary\\n\\n### R_L\\nThe loss $R_L$, see [C](#c_l).\\n", pages=())
    >>> '<h3 id="r_l">R_L</h3>' in page, '<a href="#c_l">C</a>' in page, "<math" in page
    (True, True, True)
    """
    body = []
    for block in re.split(r"\n\s*\n", text.strip()):
        lines = block.strip().splitlines()
        while lines and (h := re.match(r"(#{1,6}) (.+)$", lines[0])):
            level, title = len(h.group(1)), h.group(2).strip()
            body.append(f'<h{level} id="{slug(title)}">{_inline_html(title, pages)}</h{level}>')
            lines = lines[1:]
        if lines:
            body.append(f"<p>{_inline_html(' '.join(line.strip() for line in lines), pages)}</p>")
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n"
        f"<title>Glossary</title>\n<style>{_STYLE}</style>\n</head>\n<body>\n"
        '<p class="meta"><a href="report.html">The report</a> · the glossary of the depthscale documentation,'
        " beside the report</p>\n" + "\n".join(body) + "\n</body>\n</html>\n"
    )


def bundle_files(derivations: Iterable) -> dict[str, bytes]:
    """``{relative path: bytes}`` of the pages a bundled report links: the glossary (Markdown and HTML)
    and the theory page of each registered derivation in ``derivations`` (both formats)."""
    from ...theory.derivation import Derivation
    from ...theory.derivation_index import BUILDERS
    from ...theory.render_derivation import render_derivation

    files: dict[str, bytes] = {}
    shown = [d for d in derivations if isinstance(d, Derivation) and d.name in BUILDERS]
    for d in shown:
        for fmt in ("md", "html"):
            files[f"theory/{d.name}.{fmt}"] = render_derivation(d, fmt).encode("utf-8")
    pages = {d.name for d in shown}
    text = GLOSSARY.read_text(encoding="utf-8")
    files["glossary.md"] = glossary_markdown(text, pages).encode("utf-8")
    files["glossary.html"] = glossary_html(text, pages).encode("utf-8")
    return files


def bundle_owned() -> set[str]:
    """Every relative path a bundle may write: a rebuild drops those this build does not write."""
    from ...theory.derivation_index import BUILDERS

    return {"glossary.md", "glossary.html"} | {f"theory/{n}.{fmt}" for n in BUILDERS for fmt in ("md", "html")}


__all__ = ["GLOSSARY", "bundle_files", "bundle_owned", "glossary_html", "glossary_markdown", "slug"]
