"""Every linear-attention depth law at a list of depths: the one table the CLI and the reports print."""

from __future__ import annotations

from ._validate import DEPTH_MAX, MODES_MAX, check_int

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

# Work limit of ``predict linear``. The sums over modes cost O(1) in d (exact head plus quadrature of
# the tail, theory/mode_sums.py); the free discrete optimum costs about 7 s x (L / 1024)^3 of CPU at
# the deepest depth L (measured at d = 10^7). Beyond LINEAR_SECONDS_MAX, refuse with the estimate.
LINEAR_SECONDS_MAX = 120.0


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

    from .equal_step import beta_form, gamma_asymptote, gamma_opt, r_con
    from .free_poly import free_continuum, free_discrete
    from .spectra import PowerLawSpectrum, as_depths

    if not isinstance(spec, PowerLawSpectrum):
        raise TypeError(f"spec={spec!r}: must be a PowerLawSpectrum")
    Ls, _ = as_depths(depths, "depths")
    cols = {"constrained": r_con(spec, Ls)}
    cols["gamma_opt"], cols["constrained_opt"] = gamma_opt(spec, Ls)
    if spec.asymptotic:
        cols["beta_form"] = beta_form(spec, Ls)
        cols["gamma_asymptote"] = gamma_asymptote(spec, Ls)
        cols["free_continuum"] = free_continuum(spec, Ls)
    cols["free_discrete"] = free_discrete(spec, Ls)
    return {k: np.asarray(cols[k], dtype=np.float64) for k in LINEAR_LAWS if k in cols}


def linear_laws_frame(spec, depths):
    """The linear-attention laws of :func:`linear_law_columns` as a pandas DataFrame indexed by ``L``.

    One column per law that applies (in the order of ``LINEAR_LAWS``); ``attrs`` holds the spectrum
    (``a``, ``b``, ``d`` and ``zeta`` when the asymptotic laws apply). Needs pandas
    (``pip install "depthscale[pandas]"``).

    Examples
    --------
    >>> from depthscale.theory.spectra import PowerLawSpectrum
    >>> df = linear_laws_frame(PowerLawSpectrum(2.0, 1.0, 1000), [1, 2, 4])
    >>> df.index.name, df.index.tolist(), list(df.columns[:2])
    ('L', [1, 2, 4], ['constrained', 'constrained_opt'])
    """
    try:
        import pandas as pd
    except ImportError:
        raise ImportError('pandas is not installed: pip install "depthscale[pandas]"') from None
    from .spectra import PowerLawSpectrum, as_depths

    if not isinstance(spec, PowerLawSpectrum):
        raise TypeError(f"spec={spec!r}: must be a PowerLawSpectrum")
    Ls, _ = as_depths(depths, "depths")
    df = pd.DataFrame(linear_law_columns(spec, Ls), index=pd.Index([int(L) for L in Ls], name="L"))
    df.attrs.update({"a": spec.a, "b": spec.b, "d": spec.d, "zeta": spec.zeta if spec.asymptotic else None})
    return df


def linear_rows(a, b, d, depths, c_lambda=1.0, c_omega=1.0) -> dict:
    """All linear-attention laws at the given depths as a JSON-able dict (``None`` where a law does not apply).

    Examples
    --------
    >>> out = linear_rows(2.0, 1.0, 1000, [8])
    >>> out["zeta"], sorted(out["rows"][0])[:3]
    (1.0, ['L', 'beta_form', 'constrained'])
    """
    depth_list = [depths] if isinstance(depths, int) else list(depths)
    for L in depth_list:
        check_int("depths", L, lo=1, hi=DEPTH_MAX)
    check_linear_work(check_int("d", d, lo=1, hi=MODES_MAX), depth_list)  # before any import or d-sized array
    from .linear_laws import linear_law_columns
    from .spectra import PowerLawSpectrum, as_depths

    Ls, _ = as_depths(depths, "depths")
    spec = PowerLawSpectrum(a, b, d, c_lambda, c_omega)
    import warnings

    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            cols = linear_law_columns(spec, Ls)
        for w in caught:  # the computation went through: its warnings stand
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    except ValueError as exc:  # raised deep inside (e.g. "p=inf" for a = 1e308): say which input it was
        raise ValueError(
            f"a={spec.a:g}, b={spec.b:g}: the linear-attention laws cannot be evaluated at these spectrum"
            f" exponents with d={d} ({exc}); use smaller exponents"
        ) from None
    rows = []
    for i, L in enumerate(Ls):
        row: dict[str, float | None] = {"L": int(L)}
        for key in LINEAR_LAWS:
            row[key] = float(cols[key][i]) if key in cols else None
        rows.append(row)
    return {"zeta": spec.zeta if spec.asymptotic else None, "rows": rows}


def check_linear_work(d: int, depths) -> float:
    """Refuse a ``predict linear`` request whose estimated CPU time exceeds ``LINEAR_SECONDS_MAX``.

    The estimate is ``7 s x (max depth / 1024)^3`` (the free discrete optimum; every other law is
    fast at any d); it is returned when within the limit.

    >>> round(check_linear_work(1000, [8, 1024]), 3)
    7.0
    >>> check_linear_work(10_000_000, [4096])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: depths=[4096]: the free discrete optimum at L=4096 needs about 448 s of CPU ...
    """
    depths = [int(L) for L in depths]
    seconds = 7.0 * (max(depths) / 1024) ** 3
    if seconds > LINEAR_SECONDS_MAX:
        shown = depths if len(depths) <= 6 else depths[:3] + ["..."] + depths[-2:]
        raise ValueError(
            f"depths={shown}: the free discrete optimum at L={max(depths)} needs about {seconds:.0f} s of CPU"
            f" (7 s x (L/1024)^3), above the limit {LINEAR_SECONDS_MAX:.0f} s; use shallower depths"
        )
    return seconds


__all__ = [
    "linear_law_columns",
    "linear_laws_frame",
    "linear_rows",
    "check_linear_work",
    "LINEAR_LAWS",
    "ASYMPTOTIC_LAWS",
    "LINEAR_SECONDS_MAX",
]
