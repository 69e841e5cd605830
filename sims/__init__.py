"""depthscale.sims"""
