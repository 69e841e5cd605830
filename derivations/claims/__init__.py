"""Claims and verdicts: each claim of docs/claims.md tested on the curves of a sweep, one module per claim family.

Public names are re-exported lazily: ``from depthscale.derivations.claims import X`` imports only
the module that defines ``X``.
"""

from depthscale.theory._exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    calibration="CalibrationRates NoiseModel SeedPlan backing_curve calibrate noise_model plan synthetic_curve",
    claim="Claim",
    display="ClaimTable",
    evidence="Evidence",
    registry="REGISTRY CLAIMS_BY_ID ReportEvidence claims evaluate_claims registered_claims report_evidence study_order",
    verdicts="VERDICTS ClaimResult decide decisive not_run unidentified",
)
