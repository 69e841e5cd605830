"""Notebook displays of theory objects: derivations as Markdown with LaTeX, floors as small tables.

Jupyter calls ``_repr_markdown_`` / ``_repr_html_`` on the last value of a cell; the classes
define those by calling the functions here (kept apart so that the classes stay about the
mathematics). Equations are typeset by :mod:`depthscale.theory.render_derivation` (the renderer of
the reports) between ``$$``; Jupyter renders them with MathJax.
"""

from __future__ import annotations

import html


def _check_line(result) -> str:
    if result is None:
        return "*not checked yet (`.check()`)*"
    mark = "checked" if result.passed else "**FAILED**"
    return f"{mark}: {result.method}, error {result.error:.2g}"


def step_markdown(step, result=None) -> str:
    r"""A step as Markdown: its title and justification, the equation, and its check if given.

    The equation is typeset by :func:`depthscale.theory.render_derivation.step_latex`, the one
    renderer of derivations (the Beta function as :math:`\mathrm{B}`, Pochhammer symbols, ...).

    >>> import sympy as sp
    >>> from depthscale.theory.derivation import Step
    >>> x = sp.Symbol("x", positive=True)
    >>> print(step_markdown(Step("Double", 2 * x, x + x, "Add.", transforms=("expand",))))
    **Double.** Add.
    <BLANKLINE>
    $$2 x = 2 x$$
    <BLANKLINE>
    *not checked yet (`.check()`)*
    """
    from .render_derivation import step_latex
    from .typeset import prose

    note = f" (*{prose(step.note, 'md')}*)" if getattr(step, "note", "") else ""
    return (
        f"**{prose(step.title, 'md')}.** {prose(step.justification, 'md')}\n\n$${step_latex(step)}$${note}"
        f"\n\n{_check_line(result)}"
    )


def derivation_markdown(derivation) -> str:
    """A derivation as Markdown (:meth:`Derivation.to_markdown` at heading level 3): the checks are
    shown once ``check()`` has run."""
    return derivation.to_markdown(level=3)


def html_table(rows, caption: str = "") -> str:
    """``[(name, value), ...]`` as a two-column HTML table (values escaped).

    >>> html_table([("floor", "1.29 ± 0.01")], "linear floor")
    '<table><caption>linear floor</caption><tr><th style="text-align:left">floor</th><td>1.29 ± 0.01</td></tr></table>'
    """
    head = f"<caption>{html.escape(caption)}</caption>" if caption else ""
    body = "".join(
        f'<tr><th style="text-align:left">{html.escape(str(k))}</th><td>{html.escape(str(v))}</td></tr>'
        for k, v in rows
    )
    return f"<table>{head}{body}</table>"


def html_grid(header, rows, caption: str = "") -> str:
    """A table with a header row: ``header`` names the columns, ``rows`` are sequences of cells
    (values escaped; ``None`` shows as an empty cell).

    >>> html_grid(["L", "loss"], [(1, "0.5"), (2, None)])
    '<table><thead><tr><th>L</th><th>loss</th></tr></thead><tbody><tr><td>1</td><td>0.5</td></tr><tr><td>2</td><td></td></tr></tbody></table>'
    """
    head = f"<caption>{html.escape(caption)}</caption>" if caption else ""
    cols = "".join(f"<th>{html.escape(str(h))}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(f"<td>{'' if v is None else html.escape(str(v))}</td>" for v in row) + "</tr>" for row in rows
    )
    return f"<table>{head}<thead><tr>{cols}</tr></thead><tbody>{body}</tbody></table>"


def floor_html(result) -> str:
    """A :class:`~depthscale.theory.floor.FloorResult` as a small table (not its moment matrices)."""
    return html_table(
        [
            ("floor T - hᵀG⁺h", f"{result.floor:.5g} ± {result.stderr:.2g}"),
            ("plug-in (no control variates)", f"{result.plugin:.5g}"),
            ("polynomial degree", result.degree),
            ("contexts × queries", f"{result.contexts} × {result.queries}"),
            ("covariance", result.covariance),
        ],
        "linear floor (Monte Carlo, jackknife s.e.)",
    )


__all__ = ["step_markdown", "derivation_markdown", "html_table", "html_grid", "floor_html"]
