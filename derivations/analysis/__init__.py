"""Curves and fits: run records grouped into depth curves, their fitted depth laws, and the theory numbers beside them.

Public names are re-exported lazily: ``from depthscale.derivations.analysis import X`` imports only
the module that defines ``X``.
"""

from depthscale.theory._exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    curve="EASY_TASKS FIT_KINDS FloorComparison Curve CurveKey curve_key curve_label curves variant_name",
    estimate="Estimate t_quantile welch_dof",
    fits="BootstrapResult Comparison FitResult LAWS Law ProfileResult additive_predict compare_alpha_one fit_additive "
    "fit_gap fit_offset_power fit_power_law profile_alpha",
    goodness_of_fit="LackOfFit lack_of_fit",
    bootstrap="bootstrap_over_seeds",
    theory_numbers="TheoryNumbers clt_table derivation_checks floor_reference linear_table slopes",
    scale_match="match_score rank read_floors",
    trend="Trend TrendPoint comparable_groups fit_trend trend_points",
)
