"""Pure mathematics of depth scaling: sympy derivations and their numeric evaluation (no I/O, no numba).

Public names are re-exported lazily: ``from depthscale.theory import X`` imports only the
module that defines ``X``. ``_validate`` (argument checks, size limits) and ``_exports`` (these
lazy exports) are project infrastructure kept here because theory is the bottom layer: every layer
imports them, none re-exports them.
"""

from depthscale.theory._exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    clt=(
        "Decomposition StableScaling clt_loss decompose inverse_variance_loss maurey_bound optimal_weight_loss "
        "powerlaw_asymptote shrinking_noise_exponent shrinking_noise_loss stable_median_scaling symmetric_stable_rvs "
        "unequal_variance_loss"
    ),
    derivation="DERIVATIONS Derivation DerivationResult Step StepResult build_derivation",
    derive_clt="clt_derivation",
    derive_equal_step="equal_step_derivation",
    derive_free="free_polynomial_derivation",
    derive_modes="modes_derivation",
    equal_step="FINITE_D_FORMS beta_form finite_d_ratio gamma_asymptote gamma_opt local_slope log_abs_one_minus r_con "
    "reference_gammas validity_depth",
    floor="COVARIANCES FloorResult LeadingOrderFloor feature_gram floor_leading_order gamma_pk linear_floor "
    "sample_context_floor_moments sample_floor_moments",
    free_poly="JacobiSteps check_jacobi_steps free_asymptote free_continuum free_discrete jacobi_residual jacobi_steps "
    "leja_order",
    linear_laws="LINEAR_LAWS linear_law_columns linear_laws_frame linear_rows",
    mode_sums="ModeRule discrete_gauss mode_rule tail_error_bound",
    modes="ModeDepth mode_depth mode_loss",
    spectra="PowerLawSpectrum as_depths",
)
