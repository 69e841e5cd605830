"""Reports: figures, tables and the rendering of reports and derivations to Markdown, HTML (MathML) and LaTeX.

Public names are re-exported lazily: ``from depthscale.derivations.report import X`` imports only
the module that defines ``X``. Text and mathematics are typeset by :mod:`depthscale.theory.typeset`,
:mod:`depthscale.theory.mathml` and :mod:`depthscale.theory.render_derivation`, their one home.
"""

from depthscale.theory._exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    figures="build decomposition exponents_vs_zeta figure_entry floors mode_curves overview",
    render="ReportContext format_estimate format_value render_report write_report",
    reporting="build_context figure_entries gather_theory results_tables",
    plots="plot_curve plot_linear_laws",
    findings="claim_findings claim_of",
)
