"""The registered derivations, by name: where each builder lives (module, function).

Kept apart from ``derivation.py`` so that a name can be checked without importing sympy.
"""

BUILDERS = {
    "linear": ("derive_equal_step", "equal_step_derivation"),
    "free": ("derive_free", "free_polynomial_derivation"),
    "modes": ("derive_modes", "modes_derivation"),
    "clt": ("derive_clt", "clt_derivation"),
}
