"""The linear optimum: trained linear attention against the best depth-L predictor of its class at
its own (d, P) (docs/linear-optimum.md, presets ``linear-start``)."""

from depthscale.derivations.claims import linear_optimum
from depthscale.derivations.study import Study

CLAIMS = linear_optimum.CLAIMS

STUDY = Study(
    name="linear-start",
    question="Does trained linear attention reach the best depth-L predictor of its class, and has that optimum "
    "the paper's exponent?",
    package=__name__,
    presets=("linear-start",),
    claims=CLAIMS,
    report_studies=("core", "protocols", "paper-curves", "linear-start"),
)
