"""Theory against simulation: fits (analysis/), claims with verdicts (claims/), a prediction checked in
one call (check.py), reports (report/), the command line (cli/), and the
:class:`~depthscale.derivations.study.Study` record with the registry of studies (study.py; the
studies themselves live in ``depthscale.studies`` and other packages).

Public names are re-exported lazily: ``from depthscale.derivations import X`` imports only the
module that defines ``X``.
"""

from depthscale.theory._exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    analysis=(
        "FloorComparison Curve curve_key curves variant_name "
        "BootstrapResult Comparison FitResult LackOfFit ProfileResult additive_predict bootstrap_over_seeds compare_alpha_one "
        "fit_additive fit_gap fit_offset_power fit_power_law lack_of_fit profile_alpha "
        "TheoryNumbers clt_table derivation_checks floor_reference linear_table slopes"
    ),
    claims="Evidence REGISTRY evaluate_claims ClaimResult ClaimTable decide decisive",
    report=(
        "build decomposition figure_entry mode_curves overview FigureEntry Table "
        "ReportContext format_estimate format_value render_report write_report "
        "build_context fits_table runs_table plot_curve plot_linear_laws "
        "claim_findings claim_of"
    ),
    study="Study Story Finding Sections TheoryInputs studies find_preset",
    check="check_prediction PredictionCheck GENERIC_CLAIMS",
)
