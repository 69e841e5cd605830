"""Typesetting of text and mathematics moved to :mod:`depthscale.theory.typeset` (the bottom layer, so that theory objects
render themselves); this module re-exports its public names for the report code."""

from ...theory.typeset import *  # noqa: F403
from ...theory.typeset import __all__ as __all__
