"""The renderer of derivations moved to :mod:`depthscale.theory.render_derivation` (the bottom layer, so that theory objects
render themselves); this module re-exports its public names for the report code."""

from ...theory.render_derivation import *  # noqa: F403
from ...theory.render_derivation import __all__ as __all__
