"""Render a depth-scaling report to Markdown, a self-contained HTML page (MathML) and LaTeX.

A :class:`ReportContext` holds everything a report shows: summary text, derivations, theory and
results tables, figures (PNG bytes or the reason they are missing), the claims with their verdicts
and notes. :func:`write_report` validates all of it and the output directory, renders the three
formats in memory and only then writes them, each through a temporary file and a rename:

- ``report.md`` with the figures as PNG files in ``figures/`` beside it, and ``answer.md``: the
  answer's paragraphs as ``report.md`` shows them, without a heading, for a study page to include;
- ``report.html``: figures embedded as base64 data URIs, equations in MathML, CSS inline, a
  content-security policy that forbids every external request;
- ``report.tex``: an ``article`` with ``graphicx`` that includes ``figures/<name>.png``.

Every claim appears in every format, and a figure that was not drawn is named with its reason; a
part with nothing to show (no derivations, a table without rows, a finding whose figure was not
drawn) is left out, heading and all. Figures are numbered in the order a reader meets them, each
finding's beside it. A derivation is one line, its result, linking its page of the documentation's
theory section, and a glossary term links its entry where it first appears in fixed text, a finding
or a caption (:mod:`depthscale.derivations.report.links`).

Examples
--------
>>> import tempfile
>>> from depthscale.derivations.claims.verdicts import ClaimResult
>>> ctx = ReportContext(title="Depth scaling", claims=[ClaimResult("C1", "alpha near 1", 1.0, 0.97, 0.01,
...     "± 0.1", "pass", "")])
>>> paths = write_report(ctx, tempfile.mkdtemp())
>>> sorted(paths)
['html', 'md', 'tex']
>>> "C1" in open(paths["md"]).read()
True
"""

from __future__ import annotations

import base64
import inspect
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup, escape

from ...theory._choices import FORMATS
from ...theory._validate import bad_argument as _bad
from ...theory.derivation import Derivation
from ...theory.derivation_index import BUILDERS
from ...theory.render_derivation import DERIVATION_CSS, render_derivation
from ...theory.typeset import math_mathml, prose, tex_escape
from ..claims.verdicts import VERDICTS, claim_cells
from ..formatting import MISSING, format_estimate, format_interval, format_percent, format_value
from .context import ReportContext, template_data
from .links import LINKS, SITE, glossary_linker, links_for, theory_page
from .publish import check_folder

__all__ = [
    "VERDICTS",
    "MISSING",
    "ReportContext",
    "write_report",
    "render_report",
    "format_value",
    "format_estimate",
    "format_percent",
    "format_interval",
    "claim_cells",
]


class _RawTex(str):
    """LaTeX that is inserted as it is (derivation fragments, the fixed equations)."""


# The laws every report refers to, in LaTeX; the HTML report shows them through the one MathML path.
_EQUATIONS = [
    ("The fitted depth law of the loss R_L", r"R_L = L_0 + c\,L^{-\alpha}"),
    (
        "The exact ensemble identity: C_L the cross-layer error covariance, A_L - C_L the layer disagreement",
        r"R_L = C_L + \frac{A_L - C_L}{L}",
    ),
    ("The linear-attention depth exponent zeta set by the spectrum", r"\zeta = \frac{a + b - 1}{a}"),
]


def _check_out(out_dir) -> Path:
    if isinstance(out_dir, bytes) or not isinstance(out_dir, (str, os.PathLike)) or str(out_dir) == "":
        _bad("out", out_dir, "a directory path")
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        _bad("out", str(out), "a directory (something else is in the way)")
    for parent in out.parents:  # the nearest existing ancestor must be a writable directory
        if parent.exists():
            if not parent.is_dir():
                _bad("out", str(out), f"a directory path ({parent} is a file)")
            if not out.exists() and not os.access(parent, os.W_OK | os.X_OK):
                _bad("out", str(out), f"creatable ({parent} is not writable)")
            if not out.exists():  # permission bits do not bind root nor tell a read-only or virtual mount
                import tempfile

                try:
                    with tempfile.TemporaryFile(dir=parent):
                        pass
                except OSError as exc:
                    _bad("out", str(out), f"creatable ({parent}: {exc.strerror or exc})")
            break
    if out.is_dir() and not os.access(out, os.W_OK | os.X_OK):
        _bad("out", str(out), "a writable directory")
    check_folder("out", out)  # its entries: what the swap would fail on only after the rendering
    return out


# ----------------------------------------------------------------------------------------------
# rendering


_TEMPLATES = Path(__file__).with_name("templates")
_TEX_COLOURS = {"pass": "vpass", "fail": "vfail", "indicative": "vindicative", "not run": "vnotrun", "error": "verror"}


def _md_cell(text: str) -> str:
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def _env(fmt: str, links: str = SITE) -> jinja2.Environment:
    loader = jinja2.FileSystemLoader(str(_TEMPLATES))
    common: dict[str, Any] = dict(
        loader=loader,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    if fmt == "html":
        env = jinja2.Environment(autoescape=True, **common)
    elif fmt == "tex":
        # LaTeX is full of braces and percent signs: other delimiters, and every value escaped unless raw.
        env = jinja2.Environment(
            block_start_string="<%",
            block_end_string="%>",
            variable_start_string="<<",
            variable_end_string=">>",
            comment_start_string="<#",
            comment_end_string="#>",
            autoescape=False,
            finalize=lambda v: v if isinstance(v, _RawTex) else tex_escape("" if v is None else v),
            **common,
        )
    else:
        env = jinja2.Environment(autoescape=False, **common)
    env.filters["mdcell"] = _md_cell
    env.filters["safe_tex"] = lambda s: _RawTex(s)  # output of a macro, already escaped inside it
    env.filters["b64"] = lambda b: base64.b64encode(b).decode("ascii")
    env.filters["gloss"] = glossary_linker(fmt, links)  # one per rendering: it links each term once
    return env


def render_report(ctx: ReportContext, links: str = SITE) -> dict:
    """Validate ``ctx`` and render it; returns ``{"md", "html", "tex", "answer"}`` texts (no file is
    written; ``answer`` is the content of ``answer.md``, "" when the report has no answer).
    ``links``: where its links lead, the documentation site's pages (``"site"``) or pages in the
    report's own folder (``"bundle"``, which :func:`write_report` writes beside it); see
    :mod:`depthscale.derivations.report.links`.

    Examples
    --------
    >>> texts = render_report(ReportContext(title="t"))
    >>> "## Claims" in texts["md"], texts["html"].startswith("<!DOCTYPE html>")
    (False, True)
    """
    return _render(ctx, links)[1]


def _render(ctx: ReportContext, links: str = SITE) -> tuple[dict, dict]:
    if links not in LINKS:
        _bad("links", links, f"one of {', '.join(LINKS)}")
    view = template_data(ctx)
    derivs = view["derivations"]
    blocks = {fmt: [_derivation_block(d, fmt, links) for d in derivs] for fmt in FORMATS}
    # rendered as a module: its top-level `answer_text` is the answer exactly as report.md shows it
    md_page = (
        _env("md", links)
        .get_template("report.md.j2")
        .make_module(dict(view, equations=_EQUATIONS, derivation_blocks=blocks["md"]))
    )
    md = str(md_page)
    html = (
        _env("html", links)
        .get_template("report.html.j2")
        .render(
            **view,
            equations=[(label, Markup(math_mathml(tex))) for label, tex in _EQUATIONS],
            derivation_css=Markup(DERIVATION_CSS),
            derivation_blocks=[
                {k: Markup(v) if isinstance(v, str) else v for k, v in b.items()} for b in blocks["html"]
            ],
        )
    )
    tex = (
        _env("tex", links)
        .get_template("report.tex.j2")
        .render(
            **view,
            equations=[(label, _RawTex(tex)) for label, tex in _EQUATIONS],
            verdict_colour=_TEX_COLOURS,
            derivation_blocks=[
                {k: _RawTex(v) if isinstance(v, str) else v for k, v in b.items()} for b in blocks["tex"]
            ],
        )
    )
    answer = str(getattr(md_page, "answer_text", "")).strip()
    return view, {"md": md, "html": html, "tex": tex, "answer": answer + "\n" if answer else ""}


_FRAGMENT = {"md": "to_markdown_fragment", "html": "to_html_fragment", "tex": "to_latex_fragment"}
_OWN_HEADING = {
    "md": re.compile(r"\s*#"),
    "html": re.compile(r"\s*(<section[^>]*>\s*)?<h[1-6][\s>]"),
    "tex": re.compile(r"\s*\\(sub)*section\b"),
}


def _first_sentence(text: str) -> str:
    """The first sentence of prose with ``$...$`` formulas (a full stop inside a formula does not end it).

    >>> _first_sentence("$R = 1.5 L$: a law. More.")
    '$R = 1.5 L$: a law.'
    """
    in_math = False
    for i, ch in enumerate(text):
        if ch == "$" and (i == 0 or text[i - 1] != "\\"):
            in_math = not in_math
        elif ch == "." and not in_math and (i + 1 == len(text) or text[i + 1].isspace()):
            return text[: i + 1]
    return text.strip()


def _derivation_block(d, fmt: str, links: str = SITE) -> dict:
    """One derivation in a report, each text ready for ``fmt``. A registered :class:`~depthscale.theory.derivation.Derivation`
    (its ``name`` one of ``depthscale derive``'s) is one line: its title linking its theory page,
    the first sentence of its conclusion and its checks; the checked chain lives once, in the docs.
    Any other object gives its own fragment (asked for heading level 3 if it takes one)."""
    if isinstance(d, Derivation) and d.name in BUILDERS:
        checks = d.check()  # cached: the report's theory numbers checked it already
        n, ok = len(checks.steps), sum(r.passed for r in checks.steps)
        verdict = "all passed" if ok == n else f"{n - ok} failed: " + "; ".join(checks.failed())
        title, href = prose(d.title, fmt), theory_page(d.name, fmt, links)
        if fmt == "tex":  # no link in print: the page is named
            verdict += f"; {href}, depthscale derive {d.name}"
        elif fmt == "html":
            title = f'<a href="{href}">{title}</a>'
        return {
            "title": title,
            "href": href,
            "result": prose(_first_sentence(d.conclusion), fmt),
            "checks": prose(f"{n} steps machine-checked, {verdict}", fmt),
        }
    if isinstance(d, Derivation):  # not a registered one: its result, typeset here
        text = render_derivation(d, fmt, fragment=True, level=3, style="result")
        return {"title": prose(d.title, fmt), "fragment": text, "own_heading": True, "href": ""}
    method = getattr(d, _FRAGMENT[fmt])
    try:
        takes_level = "level" in inspect.signature(method).parameters
    except (TypeError, ValueError):
        takes_level = False
    text = str(method(level=3) if takes_level and fmt != "tex" else method())
    title = str(getattr(d, "title", "") or "")
    title = {"md": title, "html": str(escape(title)), "tex": tex_escape(title)}[fmt]
    return {"title": title, "fragment": text, "own_heading": bool(_OWN_HEADING[fmt].match(text)), "href": ""}


def write_report(
    ctx: ReportContext, out_dir, extra_files: Mapping[str, bytes] | None = None, links: str | None = None
) -> dict:
    """Write ``report.md``, ``report.html``, ``report.tex`` and ``figures/*.png`` into ``out_dir``.

    Its links resolve where it is written (:mod:`depthscale.derivations.report.links`): a report
    folder in the documentation site links the site's glossary and theory pages; anywhere else the
    folder also gets ``glossary.md``/``.html`` and ``theory/<name>.md``/``.html`` for the derivations
    it shows, and the links lead to those.

    The report appears whole or not at all: the folder is built beside ``out_dir`` and swapped in
    as one step (:mod:`depthscale.derivations.report.publish`), so a reader or a kill at any moment sees
    the complete old report or the complete new one. Every entry of ``out_dir`` that is not the
    report's own (a store, notes) is kept; rebuilding a report (``out_dir`` holds a ``report.md``)
    drops the figures of the report's own names that this build does not draw.

    Everything (the context and the directory) is validated and rendered before the first byte is
    written; a bad value raises ``ValueError`` naming it and leaves the disk untouched.

    Parameters
    ----------
    ctx : ReportContext
    out_dir : str or path-like; created if absent. A file in its place raises ``ValueError`` naming ``out``.
    extra_files : mapping, optional
        ``{relative path: bytes}`` published with the report (``claims.json``).
    links : {"site", "bundle"}, optional
        Where the links lead; default: ``"site"`` when ``out_dir`` sits in a documentation site (its
        parent holds ``glossary.md`` and ``theory/``), else ``"bundle"``.

    Returns
    -------
    dict mapping ``"md"``, ``"html"``, ``"tex"`` to the written paths (strings), and ``"answer"``
    to ``answer.md`` beside them when the report has an answer.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> (d / "blocker").write_text("x")
    1
    >>> write_report(ReportContext(title="t"), d / "blocker")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: out=...: must be a directory (something else is in the way)
    """
    from .publish import publish

    out = _check_out(out_dir)  # before rendering: an unusable folder is refused at once
    links = links_for(out) if links is None else links
    view, texts = _render(ctx, links)
    umask = os.umask(0o022)
    os.umask(umask)
    files = {f["file"]: f["png"] for f in view["figures"] if f["png"] is not None}
    files.update({f"report.{fmt}": texts[fmt].encode("utf-8") for fmt in ("tex", "md", "html")})
    if texts["answer"]:  # the answer alone, for a study page to include (pymdownx.snippets)
        files["answer.md"] = texts["answer"].encode("utf-8")
    owned = {f"report.{fmt}" for fmt in FORMATS}
    if links != SITE:  # the pages its links lead to, beside it (a rebuild drops those no longer linked)
        from .bundle import bundle_files, bundle_owned

        files.update(bundle_files(view["derivations"]))
        owned |= bundle_owned()
    files.update(extra_files or {})
    if (old := out / "report.md").is_file():  # a rebuild: a figure or answer the old report had and this one lacks goes
        old_md = old.read_text("utf-8", errors="replace")
        shown = set(re.findall(r"\((figures/[A-Za-z0-9_.-]+\.png)\)", old_md))
        owned |= {f["file"] for f in view["figures"]} | shown | {"answer.md"}
        if re.search(r"\]\((?:glossary\.md#|theory/)", old_md):  # the old one carried its pages: they go too
            from .bundle import bundle_owned

            owned |= bundle_owned()
    publish(out, files, owned, 0o666 & ~umask)
    paths = {fmt: str(out / f"report.{fmt}") for fmt in FORMATS}
    return paths | ({"answer": str(out / "answer.md")} if "answer.md" in files else {})
