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
>>> ctx = ReportContext(title="Depth scaling", claims=[{"id": "C1", "claim": "alpha near 1",
...     "theory": 1.0, "measured": 0.97, "tolerance": 0.1, "verdict": "pass", "detail": ""}])
>>> paths = write_report(ctx, tempfile.mkdtemp())
>>> sorted(paths)
['html', 'md', 'tex']
>>> "C1" in open(paths["md"]).read()
True
"""

from __future__ import annotations

import base64
import inspect
import math
import numbers
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import jinja2
from markupsafe import Markup

from depthscale.derivations.publish import check_target
from depthscale.derivations.render_derivation import DERIVATION_CSS, render_derivation
from depthscale.derivations.typeset import math_mathml, tex_escape
from depthscale.derivations.verdicts import VERDICTS
from depthscale.theory.derivation import Derivation

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
    "tex_escape",
]

FORMATS = ("md", "html", "tex")
LEAD_FIGURES = ("overview",)  # shown right after the claims table; the others after the tables
_PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")
_DASH = MISSING = "\u2014"  # the one spelling of a missing or non-finite number


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass
class ReportContext:
    """Everything one report shows.

    Attributes
    ----------
    title, subtitle : headings.
    preset : name of the preset or sweep the results come from ("" when not applicable).
    created : timestamp text (defaults to now, UTC).
    runtime_seconds : wall time of the work behind the report, or None.
    summary : paragraphs of plain text (Markdown allowed in the .md output).
    derivations : :class:`~depthscale.theory.derivation.Derivation` objects (rendered by
        :mod:`depthscale.derivations.render_derivation`), or objects with ``title``,
        ``to_markdown_fragment()``, ``to_html_fragment()`` (MathML) and ``to_latex_fragment()``
        whose fragments are inserted as they are.
    theory_tables, results_tables : dicts ``{"title", "columns": [str], "rows": [[...]], "note"?}``;
        numbers are shown with 4 significant digits, None and nan as an em dash.
    figures : dicts ``{"name", "caption", "png": bytes or None, "why_missing": str}``.
    claims : :class:`~depthscale.derivations.verdicts.ClaimResult` objects (or dicts with the same
        fields) with ``verdict`` one of ``VERDICTS``; shown right after the summary, with the overview figure.
    notes : paragraphs of plain text.

    Examples
    --------
    >>> ReportContext(title="t", runtime_seconds=75.0).runtime_text()
    '1 min 15 s'
    """

    title: str
    subtitle: str = ""
    preset: str = ""
    created: str = field(default_factory=_now)
    runtime_seconds: float | None = None
    summary: list = field(default_factory=list)
    derivations: list = field(default_factory=list)
    theory_tables: list = field(default_factory=list)
    results_tables: list = field(default_factory=list)
    figures: list = field(default_factory=list)
    claims: list = field(default_factory=list)
    notes: list = field(default_factory=list)

    def runtime_text(self) -> str:
        """The running time in words ('' when unknown)."""
        s = self.runtime_seconds
        if s is None:
            return ""
        s = float(s)
        if s < 59.95:
            return f"{s:.1f} s"
        if round(s) < 3600:  # round once, so 119.7 s reads '2 min 00 s', never '1 min 60 s'
            m, sec = divmod(int(round(s)), 60)
            return f"{m} min {sec:02d} s"
        h, m = divmod(int(round(s / 60)), 60)
        return f"{h} h {m:02d} min"


# ----------------------------------------------------------------------------------------------
# formatting


def format_value(x) -> str:
    """Text of a table cell: 4 significant digits for floats, an em dash for None and nan.

    Examples
    --------
    >>> [format_value(v) for v in (1.23456, 64, float("nan"), None, 1e-7, "top-2", True, (0.5, 2.0))]
    ['1.235', '64', '—', '—', '1e-07', 'top-2', 'yes', '0.5, 2']
    """
    if x is None:
        return _DASH
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, str):
        return x
    if isinstance(x, numbers.Integral):
        return str(int(x))
    if isinstance(x, numbers.Real):
        v = float(x)
        if math.isnan(v):
            return _DASH
        if math.isinf(v):
            return "\u221e" if v > 0 else "-\u221e"
        return f"{v:.4g}"
    if isinstance(x, (list, tuple)):
        return ", ".join(format_value(v) for v in x)
    if hasattr(x, "item") and getattr(x, "ndim", None) == 0:  # numpy scalars and 0-d arrays
        return format_value(x.item())
    return str(x)


def format_estimate(x, se=None) -> str:
    """A measured value with its standard error: ``x ± se`` (4 and 2 significant digits).

    The error is left out when it is None or not finite; a missing value reads as an em dash.

    Examples
    --------
    >>> format_estimate(0.97123, 0.0123), format_estimate(2.5), format_estimate(None, 0.1)
    ('0.9712 ± 0.012', '2.5', '—')
    """
    text = format_value(x)
    if text == _DASH or se is None or isinstance(se, str):
        return text
    se = float(se)
    return text if not math.isfinite(se) else f"{text} ± {se:.2g}"


def format_percent(x) -> str:
    """A signed relative difference as a percentage (``+1.23%``); the missing spelling for None/nan.

    Examples
    --------
    >>> format_percent(0.0123), format_percent(-0.5), format_percent(float("nan"))
    ('+1.23%', '-50.00%', '—')
    """
    if x is None or not math.isfinite(float(x)):
        return _DASH
    return f"{float(x):+.2%}"


def format_interval(lo, hi) -> str:
    """An interval ``[lo, hi]`` with the one number format.

    Examples
    --------
    >>> format_interval(0.8312, 1.2)
    '[0.8312, 1.2]'
    """
    return f"[{format_value(lo)}, {format_value(hi)}]"


def claim_cells(result) -> dict:
    """The text of a claim's cells from a :class:`~depthscale.derivations.verdicts.ClaimResult`.

    ``expected`` is a number, an interval ``(lo, hi)`` shown as ``[lo, hi]``, a condition string or None.

    Examples
    --------
    >>> from depthscale.derivations.verdicts import ClaimResult
    >>> cells = claim_cells(ClaimResult("x", "c", (1.0, 2.0), 1.5, 0.1, "2 s.e.", "pass", "why"))
    >>> cells["expected"], cells["measured"]
    ('[1, 2]', '1.5 ± 0.1')
    """
    exp = result.expected
    if isinstance(exp, tuple):
        exp_text = format_interval(*exp)
    else:
        exp_text = format_estimate(exp, getattr(result, "expected_error", None))
    measured = format_estimate(result.measured, result.error)
    if result.note:
        measured = f"{measured} {result.note}" if result.measured is not None else result.note
    return {
        "id": result.id,
        "claim": result.claim,
        "expected": exp_text,
        "measured": measured,
        "tolerance": result.tolerance,
        "verdict": result.verdict,
        "reason": result.reason,
    }


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


# ----------------------------------------------------------------------------------------------
# validation


def _bad(name: str, value, allowed: str):
    text = repr(value)
    if len(text) > 80:
        text = text[:77] + "..."
    raise ValueError(f"{name}={text}: must be {allowed}")


def _texts(name: str, value) -> list:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if not isinstance(value, Sequence):
        _bad(name, value, "a string or a list of strings")
    for i, v in enumerate(value):
        if not isinstance(v, str):
            _bad(f"{name}[{i}]", v, "a string")
    return list(value)


def _items(name: str, value) -> list:
    if value is None:
        return []
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Sequence):
        _bad(name, value, "a list")
    return list(value)


def _check_table(name: str, t) -> dict:
    if not isinstance(t, Mapping):
        _bad(name, t, 'a dict {"title", "columns", "rows"}')
    cols = t.get("columns")
    if isinstance(cols, str) or not isinstance(cols, Sequence) or not cols:
        _bad(f"{name}.columns", cols, "a non-empty list of column names")
    rows = _items(f"{name}.rows", t.get("rows"))
    for i, row in enumerate(rows):
        if isinstance(row, (str, bytes, Mapping)) or not isinstance(row, Sequence) or len(row) != len(cols):
            _bad(f"{name}.rows[{i}]", row, f"a list of {len(cols)} cells (one per column)")
    return {
        "title": str(t.get("title", "")),
        "columns": [str(c) for c in cols],
        "rows": [[format_value(v) for v in row] for row in rows],
        "note": str(t.get("note", "") or ""),
    }


def _check_figure(name: str, f, seen: set) -> dict:
    if not isinstance(f, Mapping):
        _bad(name, f, 'a dict {"name", "caption", "png", "why_missing"}')
    fname = f.get("name")
    if not isinstance(fname, str) or not _NAME_RE.match(fname) or ".." in fname:
        _bad(f"{name}.name", fname, "a file-name-safe string (letters, digits, '_', '-', '.')")
    if fname in seen:
        _bad(f"{name}.name", fname, "unique among the figures")
    seen.add(fname)
    png = f.get("png")
    if png is not None:
        if not isinstance(png, (bytes, bytearray)) or not bytes(png).startswith(_PNG_MAGIC):
            _bad(f"{name}.png", png if not isinstance(png, (bytes, bytearray)) else bytes(png[:8]), "PNG bytes or None")
        png = bytes(png)
    why = str(f.get("why_missing") or "") if png is None else ""
    return {
        "name": fname,
        "caption": str(f.get("caption") or ""),
        "png": png,
        "why_missing": why or ("no reason was given" if png is None else ""),
        "file": f"figures/{fname}.png",
    }


def _check_claim(name: str, c, seen: set) -> dict:
    """Cells of one claim from a ``ClaimResult`` or a dict with the same fields.

    A dict may spell ``expected`` as ``theory`` and ``reason`` as ``detail``.
    """
    if hasattr(c, "verdict") and hasattr(c, "expected"):
        c = claim_cells(c)
    if not isinstance(c, Mapping):
        _bad(
            name, c, 'a ClaimResult or a dict {"id", "claim", "expected", "measured", "tolerance", "verdict", "reason"}'
        )
    cid = c.get("id")
    if cid is None or str(cid).strip() == "":
        _bad(f"{name}.id", cid, "a non-empty identifier")
    cid = str(cid)
    if cid in seen:
        _bad(f"{name}.id", cid, "unique among the claims")
    seen.add(cid)
    verdict = c.get("verdict")
    if verdict not in VERDICTS:
        _bad(f"{name}.verdict", verdict, "one of " + ", ".join(VERDICTS))
    return {
        "id": cid,
        "claim": format_value(c.get("claim", "")),
        "expected": format_value(c.get("expected", c.get("theory"))),
        "measured": format_value(c.get("measured")),
        "tolerance": format_value(c.get("tolerance")),
        "verdict": verdict,
        "reason": format_value(c.get("reason", c.get("detail")) or ""),
    }


def _check_derivation(name: str, d):
    if isinstance(d, Derivation):
        return d
    for method in ("to_markdown_fragment", "to_html_fragment", "to_latex_fragment"):
        if not callable(getattr(d, method, None)):
            _bad(name, d, f"a Derivation or an object with {method}()")
    return d


def _check_out(out_dir) -> Path:
    if isinstance(out_dir, bytes) or not isinstance(out_dir, (str, os.PathLike)) or str(out_dir) == "":
        _bad("out", out_dir, "a directory path")
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        _bad("out", str(out), "a directory (something else is in the way)")
    check_target("out", out)
    for parent in out.parents:  # the nearest existing ancestor must be a writable directory
        if parent.exists():
            if not parent.is_dir():
                _bad("out", str(out), f"a directory path ({parent} is a file)")
            if not out.exists() and not os.access(parent, os.W_OK | os.X_OK):
                _bad("out", str(out), f"creatable ({parent} is not writable)")
            break
    if out.is_dir() and not os.access(out, os.W_OK | os.X_OK):
        _bad("out", str(out), "a writable directory")
    figs = out / "figures"
    if figs.exists() and not figs.is_dir():
        _bad("out", str(out), f"a directory whose 'figures' entry is a directory ({figs} is a file)")
    for fmt in FORMATS:
        target = out / f"report.{fmt}"
        if target.exists() and not target.is_file():
            _bad("out", str(out), f"a directory where report.{fmt} can be written ({target} is not a file)")
    return out


def _view(ctx: ReportContext) -> dict:
    """Validate the context and turn it into plain data for the templates."""
    if not isinstance(ctx, ReportContext):
        _bad("ctx", ctx, "a ReportContext")
    if not isinstance(ctx.title, str) or not ctx.title.strip():
        _bad("ctx.title", ctx.title, "a non-empty string")
    if ctx.runtime_seconds is not None:
        v = ctx.runtime_seconds
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v) or v < 0:
            _bad("ctx.runtime_seconds", v, "a finite number >= 0 or None")
    seen_fig, seen_claim = set(), set()
    figures = [_check_figure(f"figures[{i}]", f, seen_fig) for i, f in enumerate(_items("figures", ctx.figures))]
    for n, f in enumerate(figures, 1):
        f["number"] = n
    claims = [_check_claim(f"claims[{i}]", c, seen_claim) for i, c in enumerate(_items("claims", ctx.claims))]
    counts = {v: sum(c["verdict"] == v for c in claims) for v in VERDICTS}
    return {
        "title": ctx.title,
        "subtitle": str(ctx.subtitle or ""),
        "preset": str(ctx.preset or ""),
        "created": str(ctx.created or ""),
        "runtime": ctx.runtime_text(),
        "summary": _texts("summary", ctx.summary),
        "notes": _texts("notes", ctx.notes),
        "derivations": [
            _check_derivation(f"derivations[{i}]", d) for i, d in enumerate(_items("derivations", ctx.derivations))
        ],
        "theory_tables": [
            _check_table(f"theory_tables[{i}]", t) for i, t in enumerate(_items("theory_tables", ctx.theory_tables))
        ],
        "results_tables": [
            _check_table(f"results_tables[{i}]", t) for i, t in enumerate(_items("results_tables", ctx.results_tables))
        ],
        "figures": figures,
        "lead_names": LEAD_FIGURES,
        "claims": claims,
        "verdicts": VERDICTS,
        "counts_text": ", ".join(f"{counts[v]} {v}" for v in VERDICTS),
    }


# ----------------------------------------------------------------------------------------------
# rendering


_TEMPLATES = Path(__file__).with_name("templates")
_TEX_COLOURS = {"pass": "vpass", "fail": "vfail", "indicative": "vindicative", "not run": "vnotrun"}


def _md_cell(text: str) -> str:
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def _env(fmt: str) -> jinja2.Environment:
    loader = jinja2.FileSystemLoader(str(_TEMPLATES))
    common = dict(
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
    view = _view(ctx)
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
    if isinstance(d, Derivation):
        return d.title, render_derivation(d, fmt, fragment=True, level=3), True
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
    as one step (:mod:`depthscale.derivations.publish`), so a reader or a kill at any moment sees
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
    from depthscale.derivations.publish import publish

    view, texts = _render(ctx)
    out = _check_out(out_dir)
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
