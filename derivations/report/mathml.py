"""The LaTeX-subset to MathML translator moved to :mod:`depthscale.theory.mathml` (the bottom layer, so that theory objects
render themselves); this module re-exports its public names for the report code."""

from ...theory.mathml import *  # noqa: F403
from ...theory.mathml import __all__ as __all__
