"""Pure mathematics of depth scaling: sympy derivations and their numeric evaluation (no I/O, no numba).

Public names are re-exported lazily: ``from depthscale.theory import X`` imports only the
module that defines ``X``.
"""

import importlib

_EXPORTS = {
    "Decomposition": "clt",
    "StableScaling": "clt",
    "clt_loss": "clt",
    "decompose": "clt",
    "inverse_variance_loss": "clt",
    "maurey_bound": "clt",
    "optimal_weight_loss": "clt",
    "powerlaw_asymptote": "clt",
    "shrinking_noise_exponent": "clt",
    "shrinking_noise_loss": "clt",
    "stable_median_scaling": "clt",
    "symmetric_stable_rvs": "clt",
    "unequal_variance_loss": "clt",
    "DERIVATIONS": "derivation",
    "Derivation": "derivation",
    "DerivationResult": "derivation",
    "Step": "derivation",
    "StepResult": "derivation",
    "build_derivation": "derivation",
    "clt_derivation": "derive_clt",
    "equal_step_derivation": "derive_equal_step",
    "free_polynomial_derivation": "derive_free",
    "modes_derivation": "derive_modes",
    "beta_form": "equal_step",
    "gamma_asymptote": "equal_step",
    "gamma_opt": "equal_step",
    "local_slope": "equal_step",
    "log_abs_one_minus": "equal_step",
    "r_con": "equal_step",
    "reference_gammas": "equal_step",
    "FloorResult": "floor",
    "LeadingOrderFloor": "floor",
    "feature_gram": "floor",
    "floor_leading_order": "floor",
    "gamma_pk": "floor",
    "linear_floor": "floor",
    "sample_floor_moments": "floor",
    "JacobiSteps": "free_poly",
    "check_jacobi_steps": "free_poly",
    "free_asymptote": "free_poly",
    "free_continuum": "free_poly",
    "free_discrete": "free_poly",
    "jacobi_residual": "free_poly",
    "jacobi_steps": "free_poly",
    "LINEAR_LAWS": "linear_laws",
    "linear_laws": "linear_laws",
    "ModeRule": "mode_sums",
    "discrete_gauss": "mode_sums",
    "mode_rule": "mode_sums",
    "tail_error_bound": "mode_sums",
    "ModeDepth": "modes",
    "mode_depth": "modes",
    "mode_loss": "modes",
    "PowerLawSpectrum": "spectra",
    "as_depths": "spectra",
    "check_choice": "validate",
    "check_int": "validate",
    "check_real": "validate",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return __all__
