"""The paper's reported numbers (raw MSE, d = 128, P = 1024), the one copy the toolkit compares with.

Listed in docs/claims.md ("Reference values"). Keys are spectra ``(a, b)``.
"""

from __future__ import annotations

# Linear attention, easy task: trained depth exponents of a pure power-law fit.
LINEAR_EASY_EXPONENTS = {
    (2.0, 0.5): 1.121,
    (2.0, 1.0): 1.485,
    (2.0, 1.5): 1.684,
    (2.0, 2.0): 1.987,
    (0.5, 2.0): 3.310,
    (1.0, 2.0): 2.552,
    (1.5, 2.0): 2.163,
}
# Linear attention, difficult task top-2: floor T - h^T G^+ h as (theory (Monte Carlo), trained).
_LINEAR_TOP2_FLOORS = {
    (0.0, 0.0): (59.37, 59.85),
    (0.25, 0.25): (9.700, 9.739),
    (0.5, 0.5): (2.272, 2.327),
    (1.0, 0.25): (1.225, 1.226),
    (1.0, 1.0): (0.498, 0.504),
}
LINEAR_TOP2_FLOORS_THEORY = {ab: theory for ab, (theory, _) in _LINEAR_TOP2_FLOORS.items()}
LINEAR_TOP2_FLOORS_TRAINED = {ab: trained for ab, (_, trained) in _LINEAR_TOP2_FLOORS.items()}
# Softmax attention, difficult task top-2: fitted exponents alpha and their standard errors.
SOFTMAX_TOP2_EXPONENTS = {(0.25, 0.25): (0.97, 0.01), (0.25, 0.5): (0.93, 0.06), (0.5, 0.5): (0.97, 0.01)}
# The scale all of the above were measured at.
REFERENCE_D, REFERENCE_P = 128, 1024

__all__ = [
    "LINEAR_EASY_EXPONENTS",
    "LINEAR_TOP2_FLOORS_THEORY",
    "LINEAR_TOP2_FLOORS_TRAINED",
    "SOFTMAX_TOP2_EXPONENTS",
    "REFERENCE_D",
    "REFERENCE_P",
]
