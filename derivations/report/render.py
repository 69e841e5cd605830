"""Render a depth-scaling report to Markdown, a self-contained HTML page (MathML) and LaTeX.

A :class:`ReportContext` holds everything a report shows: summary text, derivations, theory and
results tables, figures (PNG bytes or the reason they are missing), the claims with their verdicts
and notes. :func:`write_report` validates all of it and the output directory, renders the three
formats in memory and only then writes them, each through a temporary file and a rename:

- ``report.md`` with the figures as PNG files in ``figures/`` beside it;
- ``report.html``: figures embedded as base64 data URIs, equations in MathML, CSS inline, a
  content-security policy that forbids every external request;
- ``report.tex``: an ``article`` with ``graphicx`` that includes ``figures/<name>.png``.

Every claim appears in every format, and a missing figure or an empty table is stated, never
dropped.

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
from markupsafe import Markup

from ...theory._choices import FORMATS
from ...theory._validate import bad_argument as _bad
from ...theory.derivation import Derivation
from ...theory.render_derivation import DERIVATION_CSS, render_derivation
from ...theory.typeset import math_mathml, tex_escape
from ..claims.verdicts import VERDICTS, claim_cells
from ..formatting import MISSING, format_estimate, format_interval, format_percent, format_value
from .context import ReportContext, template_data
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
    ("The fitted depth law", r"R_L = L_0 + c\,L^{-\alpha}"),
    (
        "The exact ensemble identity (cross-layer error covariance and layer disagreement)",
        r"R_L = C_L + \frac{A_L - C_L}{L}",
    ),
    ("The linear-attention depth exponent set by the spectrum", r"\zeta = \frac{a + b - 1}{a}"),
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


def _env(fmt: str) -> jinja2.Environment:
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
    return env


def render_report(ctx: ReportContext) -> dict:
    """Validate ``ctx`` and render it; returns ``{"md", "html", "tex"}`` texts (no file is written).

    Examples
    --------
    >>> texts = render_report(ReportContext(title="t"))
    >>> "No claims were evaluated" in texts["md"] and texts["html"].startswith("<!DOCTYPE html>")
    True
    """
    return _render(ctx)[1]


def _render(ctx: ReportContext) -> tuple[dict, dict]:
    view = template_data(ctx)
    derivs = view["derivations"]
    blocks = {fmt: [_fragment(d, fmt) for d in derivs] for fmt in FORMATS}
    md = _env("md").get_template("report.md.j2").render(**view, equations=_EQUATIONS, derivation_blocks=blocks["md"])
    html = (
        _env("html")
        .get_template("report.html.j2")
        .render(
            **view,
            equations=[(label, Markup(math_mathml(tex))) for label, tex in _EQUATIONS],
            derivation_css=Markup(DERIVATION_CSS),
            derivation_blocks=[(t, Markup(f), h) for t, f, h in blocks["html"]],
        )
    )
    tex = (
        _env("tex")
        .get_template("report.tex.j2")
        .render(
            **view,
            equations=[(label, _RawTex(tex)) for label, tex in _EQUATIONS],
            verdict_colour=_TEX_COLOURS,
            derivation_blocks=[(t, _RawTex(f), h) for t, f, h in blocks["tex"]],
        )
    )
    return view, {"md": md, "html": html, "tex": tex}


_FRAGMENT = {"md": "to_markdown_fragment", "html": "to_html_fragment", "tex": "to_latex_fragment"}
_OWN_HEADING = {
    "md": re.compile(r"\s*#"),
    "html": re.compile(r"\s*(<section[^>]*>\s*)?<h[1-6][\s>]"),
    "tex": re.compile(r"\s*\\(sub)*section\b"),
}


def _fragment(d, fmt: str) -> tuple[str, str, bool]:
    """(title, fragment, whether the fragment carries its own heading) of one derivation.

    A :class:`~depthscale.theory.derivation.Derivation` is rendered at heading level 3, under
    "Derivations"; other objects give their own fragments (asked for level 3 if they take one).
    """
    if isinstance(d, Derivation):  # its result only: the checked chain lives once, in the docs' theory pages
        return d.title, render_derivation(d, fmt, fragment=True, level=3, style="result"), True
    method = getattr(d, _FRAGMENT[fmt])
    try:
        takes_level = "level" in inspect.signature(method).parameters
    except (TypeError, ValueError):
        takes_level = False
    text = str(method(level=3) if takes_level and fmt != "tex" else method())
    return str(getattr(d, "title", "") or ""), text, bool(_OWN_HEADING[fmt].match(text))


def write_report(ctx: ReportContext, out_dir, extra_files: Mapping[str, bytes] | None = None) -> dict:
    """Write ``report.md``, ``report.html``, ``report.tex`` and ``figures/*.png`` into ``out_dir``.

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

    Returns
    -------
    dict mapping ``"md"``, ``"html"``, ``"tex"`` to the written paths (strings).

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
    view, texts = _render(ctx)
    umask = os.umask(0o022)
    os.umask(umask)
    files = {f["file"]: f["png"] for f in view["figures"] if f["png"] is not None}
    files.update({f"report.{fmt}": texts[fmt].encode("utf-8") for fmt in ("tex", "md", "html")})
    files.update(extra_files or {})
    owned = {f"report.{fmt}" for fmt in FORMATS}
    if (out / "report.md").is_file():  # a rebuild: a figure the old report drew and this one does not goes
        owned |= {f["file"] for f in view["figures"]}
    publish(out, files, owned, 0o666 & ~umask)
    return {fmt: str(out / f"report.{fmt}") for fmt in FORMATS}
