"""Every linear-attention depth law at a list of depths: the one table the CLI and the reports print."""

from __future__ import annotations

# column order of the table; the asymptotic laws are absent unless a > 0 and a + b > 1
LINEAR_LAWS = (
    "constrained",
    "constrained_opt",
    "gamma_opt",
    "beta_form",
    "gamma_asymptote",
    "free_continuum",
    "free_discrete",
)
ASYMPTOTIC_LAWS = ("beta_form", "gamma_asymptote", "free_continuum")


def linear_law_columns(spec, depths) -> dict:
    """Columns ``{law: ndarray}`` of the linear-attention laws at ``depths`` (integers >= 1).

    ``constrained``: equal-step loss at the reference step ``L / lambda_1``; ``gamma_opt`` and
    ``constrained_opt``: the loss-minimising equal step and its loss; ``beta_form``,
    ``gamma_asymptote``, ``free_continuum``: continuum laws (only when ``spec.asymptotic``);
    ``free_discrete``: the free (untied) optimum on the finite spectrum.

    Parameters
    ----------
    spec : PowerLawSpectrum
    depths : sequence of int

    Examples
    --------
    >>> import numpy as np
    >>> from depthscale.theory.spectra import PowerLawSpectrum
    >>> cols = linear_law_columns(PowerLawSpectrum(2.0, 1.0, 1000), [1, 8])
    >>> [k for k in LINEAR_LAWS if k in cols] == list(cols)
    True
    >>> bool(np.all(cols["free_discrete"] <= cols["constrained_opt"] * (1 + 1e-12)))
    True
    """
    # imported here: importing this module for LINEAR_LAWS stays cheap (CLI start-up)
    import numpy as np

    from depthscale.theory.equal_step import beta_form, gamma_asymptote, gamma_opt, r_con
    from depthscale.theory.free_poly import free_continuum, free_discrete
    from depthscale.theory.spectra import as_depths

    Ls, _ = as_depths(depths, "depths")
    cols = {"constrained": r_con(spec, Ls)}
    cols["gamma_opt"], cols["constrained_opt"] = gamma_opt(spec, Ls)
    if spec.asymptotic:
        cols["beta_form"] = beta_form(spec, Ls)
        cols["gamma_asymptote"] = gamma_asymptote(spec, Ls)
        cols["free_continuum"] = free_continuum(spec, Ls)
    cols["free_discrete"] = free_discrete(spec, Ls)
    return {k: np.asarray(cols[k], dtype=np.float64) for k in LINEAR_LAWS if k in cols}


__all__ = ["linear_law_columns", "LINEAR_LAWS", "ASYMPTOTIC_LAWS"]
