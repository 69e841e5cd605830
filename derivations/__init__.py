"""Theory against simulation: fits, claims, figures, reports and the command line.

Public names are re-exported lazily: ``from depthscale.derivations import X`` imports only the
module that defines ``X``. ``render_derivation`` is imported from its module of the same name: at
package level that name is the module.
"""

from depthscale.theory.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    analysis="BaselineComparison Curve curve_key curves variant_name",
    claims="Evidence REGISTRY evaluate_claims",
    verdicts="ClaimResult decide decisive",
    figures="build decomposition exponents_vs_zeta figure_entry floors mode_curves overview",
    fits=(
        "BootstrapResult Comparison FitResult ProfileResult additive_predict bootstrap_over_seeds compare_alpha_one "
        "fit_additive fit_gap fit_offset_power fit_power_law profile_alpha"
    ),
    render="ReportContext format_estimate format_value render_report write_report",
    mathml="latex_to_mathml",
    typeset="math_latex math_mathml prose tex_escape",
    reporting="build_context figure_entries gather_theory results_tables",
    theory_numbers="clt_table derivation_checks floor_reference linear_table slopes",
)
