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

# what each column is, for --help, the JSON ``columns`` map and the docs (docs/user-guide.md)
LINEAR_LAW_DESCRIPTIONS = {
    "L": "depth (number of layers)",
    "constrained": "reference step: equal-step loss sum_k lambda_k omega_k (1 - gamma lambda_k/L)^(2L) over the d modes "
    "at gamma = L/lambda_1",
    "constrained_opt": "optimal equal step: the same d-mode loss at the loss-minimising equal step gamma_opt",
    "gamma_opt": "optimal equal step: the loss-minimising total step gamma (a step, not a loss; the reference step "
    "is L/lambda_1)",
    "beta_form": "Beta form: continuum (d -> infinity) limit of the reference-step loss, "
    "(c_lambda c_omega/a) B(zeta, 2L + 1)",
    "gamma_asymptote": "asymptote: large-L limit of the Beta form, (c_lambda c_omega/a) Gamma(zeta) (2L)^-zeta, "
    "slope exactly zeta",
    "free_continuum": "free continuum: best untied degree-L residual polynomial in the continuum (d -> infinity) limit, "
    "slope 2 zeta at large L",
    "free_discrete": "free discrete: best untied degree-L residual polynomial on the d modes (exact)",
}
SLOPE_DESCRIPTION = (
    "local slope -d log R / d log L of each loss column at each depth, by centred differences between L - 1 and L + 1 "
    "(forward between 1 and 2 at L = 1); None where a loss is 0 or the column does not apply"
)
VALIDITY_DESCRIPTION = (
    "validity window of the continuum laws: the d-mode loss is within the relative tolerance eps of them for "
    "1 << L <= L_max = (d^a/2) (eps Gamma(zeta + 1))^(1/zeta) (derive linear, steps 11 to 14)"
)
VALIDITY_EPS = 0.1  # default tolerance of the validity window

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


def linear_law_slopes(spec, depths) -> dict:
    """Local slopes ``-d log R / d log L`` of the loss columns of :func:`linear_law_columns` at ``depths``.

    Centred differences between the laws at ``L - 1`` and ``L + 1`` (forward between 1 and 2 at ``L = 1``);
    NaN where a loss is 0 (a free optimum that reached the d modes exactly). ``gamma_opt`` is a step,
    not a loss, and has no slope column.

    Examples
    --------
    >>> from depthscale.theory.spectra import PowerLawSpectrum
    >>> s = linear_law_slopes(PowerLawSpectrum(2.0, 1.0, 10**6), [8, 64])
    >>> s["gamma_asymptote"].round(12).tolist()   # exactly zeta = 1
    [1.0, 1.0]
    """
    import numpy as np

    from .spectra import as_depths

    Ls, _ = as_depths(depths, "depths")
    up = Ls + 1
    dn = np.where(Ls >= 2, Ls - 1, Ls)
    grid = np.unique(np.concatenate([up, dn]))
    cols = linear_law_columns(spec, grid)
    iu, idn = np.searchsorted(grid, up), np.searchsorted(grid, dn)
    out = {}
    for key, col in cols.items():
        if key == "gamma_opt":
            continue
        with np.errstate(divide="ignore", invalid="ignore"):
            lr = np.log(np.where(col > 0, col, np.nan))
            out[key] = -(lr[iu] - lr[idn]) / (np.log(up) - np.log(dn))
    return out


def validity_window(spec, eps: float = VALIDITY_EPS) -> dict | None:
    """The continuum laws' validity window: ``L_max(eps)`` with the tolerance, or None outside ``a > 0, a + b > 1``.

    ``L_max = (d^a/2) (eps Gamma(zeta + 1))^(1/zeta)`` (:func:`depthscale.theory.equal_step.validity_depth`):
    up to it the d-mode loss is within ``eps`` of the continuum laws; ``L_max_over_d_a`` is the constant
    (0.0136 at ``(a, b) = (1.5, 0.5)``, ``eps = 0.1``).

    Examples
    --------
    >>> from depthscale.theory.spectra import PowerLawSpectrum
    >>> w = validity_window(PowerLawSpectrum(1.5, 0.5, 16))
    >>> round(w["L_max"], 3), round(w["L_max_over_d_a"], 4), w["eps"]
    (0.868, 0.0136, 0.1)
    """
    from .equal_step import validity_depth

    if not spec.asymptotic:
        return None
    L_max = validity_depth(spec, eps)
    return {
        "eps": float(eps),
        "L_max": L_max,
        "L_max_over_d_a": L_max / float(spec.d) ** spec.a,
        "d_a": float(spec.d) ** spec.a,
        "condition": "1 << L <= L_max",
    }


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


def linear_rows(a, b, d, depths, c_lambda=1.0, c_omega=1.0, eps=VALIDITY_EPS) -> dict:
    """All linear-attention laws at the given depths as a JSON-able dict (``None`` where a law does not apply).

    Keys: ``zeta``; ``rows`` (one dict per depth, keys ``L`` and ``LINEAR_LAWS``); ``slopes`` (one dict per
    depth: the local slope ``-d log R / d log L`` of each loss column, :func:`linear_law_slopes`);
    ``validity`` (:func:`validity_window` at the tolerance ``eps``, None when the continuum laws do not
    apply); ``columns`` (what each key means, ``LINEAR_LAW_DESCRIPTIONS``).

    Examples
    --------
    >>> out = linear_rows(2.0, 1.0, 1000, [8])
    >>> out["zeta"], sorted(out["rows"][0])[:3], round(out["slopes"][0]["gamma_asymptote"], 9)
    (1.0, ['L', 'beta_form', 'constrained'], 1.0)
    >>> round(out["validity"]["L_max"], 1), out["columns"]["beta_form"][:10]
    (50000.0, 'Beta form:')
    """
    from ._validate import check_real

    depth_list = [depths] if isinstance(depths, int) else list(depths)
    for L in depth_list:
        check_int("depths", L, lo=1, hi=DEPTH_MAX)
    eps = check_real("eps", eps, lo=0, hi=1, lo_open=True, hi_open=True)
    # before any import or d-sized array; the slopes evaluate the laws a second time at L - 1 and L + 1
    check_linear_work(check_int("d", d, lo=1, hi=MODES_MAX), depth_list, runs=2)
    from .linear_laws import linear_law_columns
    from .spectra import PowerLawSpectrum, as_depths

    Ls, _ = as_depths(depths, "depths")
    spec = PowerLawSpectrum(a, b, d, c_lambda, c_omega)
    import warnings

    import numpy as np

    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            cols = linear_law_columns(spec, Ls)
            slopes = linear_law_slopes(spec, Ls)
            window = validity_window(spec, eps)  # d^a: beyond a float for large a (1000^400)
        for w in caught:  # the computation went through: its warnings stand
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    except (ValueError, OverflowError) as exc:  # raised deep inside (e.g. "p=inf" for a = 1e308): say which input
        why = str(exc) if isinstance(exc, ValueError) else "a number past the floating-point range, such as d^a"
        raise ValueError(
            f"a={spec.a:g}, b={spec.b:g}: the linear-attention laws cannot be evaluated at these spectrum"
            f" exponents with d={d} ({why}); use smaller exponents"
        ) from None
    rows, slope_rows = [], []
    for i, L in enumerate(Ls):
        row: dict[str, float | None] = {"L": int(L)}
        srow: dict[str, float | None] = {"L": int(L)}
        for key in LINEAR_LAWS:
            row[key] = float(cols[key][i]) if key in cols else None
            if key != "gamma_opt":
                v = float(slopes[key][i]) if key in slopes else None
                srow[key] = v if v is not None and np.isfinite(v) else None
        rows.append(row)
        slope_rows.append(srow)
    columns = dict(LINEAR_LAW_DESCRIPTIONS)
    columns.update(slopes=SLOPE_DESCRIPTION, validity=VALIDITY_DESCRIPTION)
    return {
        "zeta": spec.zeta if spec.asymptotic else None,
        "rows": rows,
        "slopes": slope_rows,
        "validity": window,
        "columns": columns,
    }


def check_linear_work(d: int, depths, runs: int = 1) -> float:
    """Refuse a ``predict linear`` request whose estimated CPU time exceeds ``LINEAR_SECONDS_MAX``.

    The estimate is ``runs x 7 s x (max depth / 1024)^3`` (the free discrete optimum, one run per
    table: ``predict linear`` makes two, the laws and their neighbours for the local slopes; every
    other law is fast at any d); it is returned when within the limit.

    >>> round(check_linear_work(1000, [8, 1024]), 3)
    7.0
    >>> check_linear_work(10_000_000, [4096])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: depths=[4096]: the free discrete optimum at L=4096 needs about 448 s of CPU ...
    """
    depths = [int(L) for L in depths]
    seconds = runs * 7.0 * (max(depths) / 1024) ** 3
    if seconds > LINEAR_SECONDS_MAX:
        shown = depths if len(depths) <= 6 else depths[:3] + ["..."] + depths[-2:]
        runs_text = f"{runs} x " if runs > 1 else ""
        raise ValueError(
            f"depths={shown}: the free discrete optimum at L={max(depths)} needs about {seconds:.0f} s of CPU"
            f" ({runs_text}7 s x (L/1024)^3), above the limit {LINEAR_SECONDS_MAX:.0f} s; use shallower depths"
        )
    return seconds


__all__ = [
    "linear_law_columns",
    "linear_laws_frame",
    "linear_rows",
    "linear_law_slopes",
    "validity_window",
    "check_linear_work",
    "LINEAR_LAWS",
    "LINEAR_LAW_DESCRIPTIONS",
    "ASYMPTOTIC_LAWS",
    "LINEAR_SECONDS_MAX",
]
