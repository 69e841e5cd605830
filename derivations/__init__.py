"""Theory against simulation: fits, claims, figures, reports and the command line.

Public names are re-exported lazily: ``from depthscale.derivations import X`` imports only the
module that defines ``X``.
"""

from depthscale.theory.exports import lazy_exports

_EXPORTS = {
    "BaselineComparison": "analysis",
    "Curve": "analysis",
    "curve_key": "analysis",
    "curves": "analysis",
    "variant_name": "analysis",
    "Evidence": "claims",
    "REGISTRY": "claims",
    "evaluate_claims": "claims",
    "ClaimResult": "verdicts",
    "decide": "verdicts",
    "decisive": "verdicts",
    "build": "figures",
    "decomposition": "figures",
    "exponents_vs_zeta": "figures",
    "figure_entry": "figures",
    "floors": "figures",
    "mode_curves": "figures",
    "overview": "figures",
    "BootstrapResult": "fits",
    "Comparison": "fits",
    "FitResult": "fits",
    "ProfileResult": "fits",
    "additive_predict": "fits",
    "bootstrap_over_seeds": "fits",
    "compare_alpha_one": "fits",
    "fit_additive": "fits",
    "fit_gap": "fits",
    "fit_offset_power": "fits",
    "fit_power_law": "fits",
    "profile_alpha": "fits",
    "ReportContext": "render",
    "format_estimate": "render",
    "format_value": "render",
    "render_report": "render",
    "write_report": "render",
    "render_derivation": "render_derivation",
    "latex_to_mathml": "mathml",
    "math_latex": "typeset",
    "math_mathml": "typeset",
    "prose": "typeset",
    "tex_escape": "typeset",
    "build_context": "reporting",
    "figure_entries": "reporting",
    "gather_theory": "reporting",
    "results_tables": "reporting",
    "clt_table": "theory_numbers",
    "derivation_checks": "theory_numbers",
    "floor_reference": "theory_numbers",
    "linear_table": "theory_numbers",
    "slopes": "theory_numbers",
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
