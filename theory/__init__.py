"""depthscale.theory"""
