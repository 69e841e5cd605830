"""depthscale.derivations"""
