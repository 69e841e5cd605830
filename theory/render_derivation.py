"""Render a machine-checked derivation (:class:`depthscale.theory.derivation.Derivation`).

Three formats, each as a complete document or as a fragment to embed in a report:

- Markdown: equations in ``$$...$$``, inline formulas in ``$...$``;
- HTML: a self-contained page (inline CSS, no scripts), equations and inline formulas in MathML;
- LaTeX: an ``article`` (needs amsmath) with one ``equation*`` per step.

The derivation's texts use the prose markup of :mod:`depthscale.theory.typeset` (formulas
between dollar signs); its equations are sympy expressions printed by
:func:`depthscale.theory.typeset.math_latex`. Each step shows the result of its machine
check. Everything here returns strings; nothing is written to disk.

Examples
--------
>>> import sympy as sp
>>> from depthscale.theory.derivation import Derivation, Step
>>> x = sp.Symbol("x", positive=True)
>>> d = Derivation("Toy", "A toy with $x > 0$.", [(x, "a number", "$x > 0$")],
...                [Step("Double", 2 * x, x + x, "Add.", transforms=("expand",))], "Done.")
>>> print(render_derivation(d, "md").splitlines()[2])
A toy with $x > 0$.
>>> "<math" in render_derivation(d, "html")
True
"""

from __future__ import annotations

from ._validate import check_choice
from .typeset import FORMATS, html_escape, math_latex, math_mathml, md_escape, prose, tex_escape

__all__ = ["render_derivation", "step_latex", "DERIVATION_CSS", "STYLES"]

STYLES = ("full", "paper", "result")

DERIVATION_CSS = (
    # a font with an OpenType MATH table, which stretchy fences and large operators need
    'math{font-family:"STIX Two Math","Latin Modern Math","Cambria Math","DejaVu Math TeX Gyre",math}'
    "math[display=block]{margin:0.8em 0;padding:0.2em 0;overflow-x:auto;overflow-y:hidden}"
    ".step{border-left:3px solid #ccd;padding-left:1em;margin:1.2em 0}"
    ".check{font-size:0.9em;color:#555}.pass strong{color:#176317}.fail strong{color:#a11}"
)
_PAGE_CSS = (
    "body{font-family:Georgia,serif;max-width:60em;margin:2em auto;padding:0 1em;line-height:1.45;color:#222}"
    "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:0.2em 0.6em}" + DERIVATION_CSS
)


def step_latex(step, style: str = "full") -> str:
    r"""LaTeX of a step's relation (no delimiters); an asymptotic one names its limit.

    >>> import sympy as sp
    >>> from depthscale.theory.derivation import Step
    >>> L = sp.Symbol("L", positive=True)
    >>> step_latex(Step("t", L + 1, L, "j", relation="~", limit=L))
    'L + 1 \\sim L \\quad \\left(L \\to \\infty\\right)'
    """
    op = "=" if step.relation == "=" else r"\sim"
    text = f"{math_latex(step.lhs, style)} {op} {math_latex(step.rhs, style)}"
    if step.relation == "~":
        text += rf" \quad \left({math_latex(step.limit, style)} \to \infty\right)"
    return text


_RELATION_TEX = {"=": "=", "~": r"\sim", "≈": r"\simeq"}


def _result_latex(r) -> str:
    return f"{math_latex(r.lhs, 'paper')} {_RELATION_TEX[r.relation]} {math_latex(r.rhs, 'paper')}"


def _steps_text(steps) -> str:
    if not steps:
        return ""
    nums = [str(n) for n in steps]
    return "step " + nums[0] if len(nums) == 1 else "steps " + ", ".join(nums[:-1]) + " and " + nums[-1]


def _conditions(d) -> str:
    """The parameters' domains as one sentence of prose (the conditions every result is stated under)."""
    doms = [dom for _, _, dom in d.parameters if dom]
    return ("Throughout, " + "; ".join(doms) + ".") if doms else ""


def _paper(d, fmt: str, level: int, checked: bool, fragment: bool, appendix: bool = True) -> str:
    """Paper style: the result as displayed equations with conditions, the checked chain as an appendix
    (``appendix=False``, the ``"result"`` style: the chain left to ``depthscale derive`` and the docs)."""
    results = d.paper_results()
    ok = d.check().all_passed if checked else None
    n = len(d.steps)
    where = "of the appendix" if appendix else "of its derivation (depthscale derive, the documentation's theory pages)"
    check_note = (
        f"Each of the {n} steps {where} is machine-checked"
        + ({True: " (all passed).", False: " (SOME FAILED).", None: "."}[ok])
    )
    if fmt == "tex":
        head = _TEX_HEADING[level]
        out = [rf"\{head}{{{prose(d.title, 'tex')}}}", "", prose(d.introduction, "tex"), ""]
        for r in results:
            out += [r"\begin{equation}", _result_latex(r), r"\end{equation}"]
            tail = ", ".join(t for t in (prose(r.condition, "tex"), _steps_text(r.steps)) if t)
            if tail:
                out += [f"{tail}.", ""]
        if _conditions(d):
            out += [prose(_conditions(d), "tex"), ""]
        if d.conclusion:
            out += [prose(d.conclusion, "tex"), ""]
        out += [tex_escape(check_note), ""]
        if not appendix:
            return "\n".join(out)
        if not fragment:
            out += [r"\appendix", ""]
        out.append(_latex_fragment(d, min(level + 1, 6), checked, style="paper", appendix=True))
        return "\n".join(out)
    if fmt == "md":
        hd = "#" * level
        out = [f"{hd} {prose(d.title, 'md')}", "", prose(d.introduction, "md"), ""]
        for r in results:
            out += ["$$", _result_latex(r), "$$", ""]
            tail = ", ".join(t for t in (prose(r.condition, "md"), _steps_text(r.steps)) if t)
            if tail:
                out += [f"{tail}.", ""]
        if _conditions(d):
            out += [prose(_conditions(d), "md"), ""]
        if d.conclusion:
            out += [prose(d.conclusion, "md"), ""]
        out += [md_escape(check_note), ""]
        if not appendix:
            return "\n".join(out)
        return "\n".join(out) + "\n" + _markdown(d, min(level + 1, 6), checked, style="paper", appendix=True)
    h = f"h{min(level, 6)}"
    out = [
        '<section class="derivation">',
        f"<{h}>{prose(d.title, 'html')}</{h}>",
        f"<p>{prose(d.introduction, 'html')}</p>",
    ]
    for r in results:
        out.append(math_mathml(_result_latex(r)))
        tail = ", ".join(t for t in (prose(r.condition, "html"), _steps_text(r.steps)) if t)
        if tail:
            out.append(f"<p>{tail}.</p>")
    if _conditions(d):
        out.append(f"<p>{prose(_conditions(d), 'html')}</p>")
    if d.conclusion:
        out.append(f"<p>{prose(d.conclusion, 'html')}</p>")
    out.append(f"<p>{html_escape(check_note)}</p>")
    if appendix:
        out.append(_html_fragment(d, min(level + 1, 6), checked, style="paper", appendix=True))
    out.append("</section>")
    return "\n".join(out)


def _check_text(result) -> str:
    """The check result as plain text (written by the checker: escaped, never read as prose markup)."""
    if result is None:
        return "not checked"
    verdict = "passed" if result.passed else "FAILED"
    return f"{result.method}: {verdict}" + (f"; {result.detail}" if result.detail else "")


def _results(derivation, checked: bool):
    return derivation.check().steps if checked else (None,) * len(derivation.steps)


# ----------------------------------------------------------------------------------------------
# Markdown


_APPENDIX = "Appendix: the derivation step by step, machine-checked"


def _markdown(d, level: int, checked: bool, style: str = "full", appendix: bool = False) -> str:
    hd = "#" * level
    if appendix:
        lines = [f"{hd} {_APPENDIX}", ""]
    else:
        lines = [f"{hd} {prose(d.title, 'md')}", "", prose(d.introduction, "md"), ""]
    if d.parameters:
        lines += ["| parameter | meaning | domain |", "|---|---|---|"]
        for sym, desc, dom in d.parameters:
            cells = (f"${math_latex(sym)}$", prose(desc, "md"), prose(dom, "md"))
            lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
        lines.append("")
    for i, (step, res) in enumerate(zip(d.steps, _results(d, checked)), 1):
        lines += [f"{hd}# Step {i}. {prose(step.title, 'md')}", "", "$$", step_latex(step, style), "$$", ""]
        if step.note:
            lines += [f"*{prose(step.note, 'md')}*", ""]
        lines += [prose(step.justification, "md"), "", f"**Check:** {md_escape(_check_text(res))}", ""]
    if d.conclusion and not appendix:
        lines += [f"{hd}# Conclusion", "", prose(d.conclusion, "md"), ""]
    if checked:
        lines += [f"**All steps machine-checked:** {'yes' if d.check().all_passed else 'NO'}", ""]
    return "\n".join(lines)


# ----------------------------------------------------------------------------------------------
# HTML


def _html_fragment(d, level: int, checked: bool, style: str = "full", appendix: bool = False) -> str:
    h, h2 = f"h{min(level, 6)}", f"h{min(level + 1, 6)}"
    if appendix:
        out = ['<section class="derivation">', f"<{h}>{_APPENDIX}</{h}>"]
    else:
        out = [
            '<section class="derivation">',
            f"<{h}>{prose(d.title, 'html')}</{h}>",
            f"<p>{prose(d.introduction, 'html')}</p>",
        ]
    if d.parameters:
        out.append("<table><thead><tr><th>parameter</th><th>meaning</th><th>domain</th></tr></thead><tbody>")
        for sym, desc, dom in d.parameters:
            out.append(
                f"<tr><td>{math_mathml(sym, display=False)}</td><td>{prose(desc, 'html')}</td>"
                f"<td>{prose(dom, 'html')}</td></tr>"
            )
        out.append("</tbody></table>")
    for i, (step, res) in enumerate(zip(d.steps, _results(d, checked)), 1):
        cls = "check" if res is None else ("check pass" if res.passed else "check fail")
        out.append(f'<div class="step"><{h2}>Step {i}. {prose(step.title, "html")}</{h2}>')
        out.append(math_mathml(step_latex(step, style)))
        if step.note:
            out.append(f'<p class="note"><em>{prose(step.note, "html")}</em></p>')
        out.append(f"<p>{prose(step.justification, 'html')}</p>")
        out.append(f'<p class="{cls}"><strong>Check:</strong> {html_escape(_check_text(res))}</p></div>')
    if d.conclusion and not appendix:
        out.append(f"<{h2}>Conclusion</{h2}><p>{prose(d.conclusion, 'html')}</p>")
    if checked:
        ok = d.check().all_passed
        out.append(
            f'<p class="{"check pass" if ok else "check fail"}"><strong>All steps machine-checked:</strong> '
            f"{'yes' if ok else 'NO'}</p>"
        )
    out.append("</section>")
    return "\n".join(out)


# ----------------------------------------------------------------------------------------------
# LaTeX


# sectioning command for each heading level of the Markdown and HTML output (1 is the document title)
_TEX_HEADING = {1: "section", 2: "section", 3: "subsection", 4: "subsubsection", 5: "paragraph", 6: "subparagraph"}


def _latex_fragment(d, level: int, checked: bool, style: str = "full", appendix: bool = False) -> str:
    head, sub = _TEX_HEADING[level], _TEX_HEADING[min(level + 1, 6)]
    if appendix:
        out = [rf"\{head}{{{_APPENDIX}}}", ""]
    else:
        out = [rf"\{head}{{{prose(d.title, 'tex')}}}", "", prose(d.introduction, "tex"), ""]
    if d.parameters:
        out += [r"\begin{tabular}{lll}", r"parameter & meaning & domain \\ \hline"]
        for sym, desc, dom in d.parameters:
            out.append(rf"${math_latex(sym)}$ & {prose(desc, 'tex')} & {prose(dom, 'tex')} \\")
        out += [r"\end{tabular}", ""]
    for i, (step, res) in enumerate(zip(d.steps, _results(d, checked)), 1):
        out += [
            rf"\{sub}*{{Step {i}. {prose(step.title, 'tex')}}}",
            r"\begin{equation*}",
            step_latex(step, style),
            r"\end{equation*}",
        ]
        if step.note:
            out += [rf"\emph{{{prose(step.note, 'tex')}}}", ""]
        out += [prose(step.justification, "tex"), "", rf"\textbf{{Check:}} {tex_escape(_check_text(res))}", ""]
    if d.conclusion and not appendix:
        out += [rf"\{sub}*{{Conclusion}}", prose(d.conclusion, "tex"), ""]
    if checked:
        out += [rf"\textbf{{All steps machine-checked:}} {'yes' if d.check().all_passed else 'NO'}", ""]
    return "\n".join(out)


# ----------------------------------------------------------------------------------------------
# Complete documents

_FRAGMENT = {"md": _markdown, "html": _html_fragment, "tex": _latex_fragment}


def _document_frame(d, fmt: str) -> tuple[str, str]:
    """What goes before and after a level-1 fragment to make a complete HTML page or LaTeX article."""
    if fmt == "html":
        return (
            "<!DOCTYPE html>\n"
            '<html xmlns="http://www.w3.org/1999/xhtml" lang="en">\n<head>\n<meta charset="utf-8"/>\n'
            f"<title>{html_escape(prose(d.title, 'plain'))}</title>\n<style>{_PAGE_CSS}</style>\n</head>\n<body>\n",
            "\n</body>\n</html>\n",
        )
    return (
        "\\documentclass[11pt]{article}\n\\usepackage[utf8]{inputenc}\n\\usepackage[T1]{fontenc}\n"
        "\\usepackage{amsmath,amssymb}\n\\usepackage[margin=2.5cm]{geometry}\n"
        f"\\title{{{prose(d.title, 'tex')}}}\n\\date{{}}\n\\begin{{document}}\n\\maketitle\n\n",
        "\n\\end{document}\n",
    )


def render_derivation(
    derivation, fmt: str, fragment: bool = False, level: int = 1, checked: bool = True, style: str = "full"
) -> str:
    """Render ``derivation`` as Markdown, HTML or LaTeX.

    Parameters
    ----------
    derivation : depthscale.theory.derivation.Derivation
    fmt : {"md", "html", "tex"}
    fragment : bool
        A section to embed in a larger document (Markdown heading, HTML ``<section>``, LaTeX
        sectioning command) instead of a complete document.
    level : int
        Heading level of the title, as in Markdown (LaTeX: 1 and 2 are ``\\section``, 3 is
        ``\\subsection``, ...); steps are one level below.
    checked : bool
        Run the machine checks (cached by the derivation) and show their results.
    style : {"full", "paper"}
        ``"full"``: the checked chain, one equation per step. ``"paper"``: the result as a few displayed
        equations (the derivation's ``results``) with their conditions and simplified exponents, then
        the chain with its checks as an appendix. ``"result"``: the paper style without the appendix
        (what a report shows; the chain is a ``depthscale derive`` away).

    Returns
    -------
    str

    Examples
    --------
    >>> import sympy as sp
    >>> from depthscale.theory.derivation import Derivation, Step
    >>> x = sp.Symbol("x")
    >>> d = Derivation("T", "i", [], [Step("s", x, x, "j")])
    >>> render_derivation(d, "md", fragment=True, level=2).startswith("## T")
    True
    >>> render_derivation(d, "pdf")
    Traceback (most recent call last):
    ...
    ValueError: fmt='pdf': must be one of md, html, tex
    """
    check_choice("fmt", fmt, FORMATS)
    check_choice("style", style, STYLES)
    if isinstance(level, bool) or not isinstance(level, int) or not 1 <= level <= 6:
        raise ValueError(f"level={level!r}: must be an integer from 1 to 6")
    if style != "full":
        appendix = style == "paper"
        if fragment or fmt == "md":
            return _paper(derivation, fmt, level, checked, fragment=True, appendix=appendix)
        head, tail = _document_frame(derivation, fmt)
        return head + _paper(derivation, fmt, 1, checked, fragment=False, appendix=appendix) + tail
    if fragment or fmt == "md":  # Markdown has no document preamble: the title heading keeps its level
        return _FRAGMENT[fmt](derivation, level, checked)
    head, tail = _document_frame(derivation, fmt)
    return head + _FRAGMENT[fmt](derivation, 1, checked) + tail
