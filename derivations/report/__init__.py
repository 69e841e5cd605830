"""Reports: figures, tables and the rendering of reports and derivations to Markdown, HTML (MathML) and LaTeX.

Public names are re-exported lazily: ``from depthscale.derivations.report import X`` imports only
the module that defines ``X``. Text and mathematics are typeset by :mod:`depthscale.theory.typeset`,
:mod:`depthscale.theory.mathml` and :mod:`depthscale.theory.render_derivation`, their one home.
"""

from depthscale.theory._exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    entries="DrawnFigure FigureEntry NoFigure Table draw_entry",
    figures="build decomposition figure_entry mode_curves overview",
    render="ReportContext format_estimate format_value render_report write_report",
    reporting="build_context",
    tables="fits_table runs_table",
    plots="plot_curve plot_linear_laws plot_trend",
    findings="claim_findings claim_of",
)
