"""A curve's runs as data: the seed-level points of a fit, a pandas DataFrame, an xarray DataArray
(what :meth:`Curve.fit(points="seeds") <depthscale.derivations.analysis.curve.Curve.fit>`,
:meth:`Curve.to_frame` and :meth:`Curve.to_xarray` return)."""

from __future__ import annotations

import importlib
import math
from typing import Any

import numpy as np

from . import fits as _fits


def optional(module: str, extra: str):
    """Import an optional dependency, or raise an ImportError that names the extra to install."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ImportError(f'{module} is not installed: pip install "depthscale[{extra}]"') from None


def seed_fit(curve, kind: str, name: str, n_boot: int):
    """The fit to every run's loss: one point per (seed, depth), repeated depths included.

    Examples
    --------
    >>> from depthscale.derivations.analysis.curve import curves
    >>> def rec(L, s):
    ...     return {"status": "ok", "seed": s, "converged": True,
    ...             "final_loss": (0.5 + 0.4 / L) * (1 + 0.01 * (s - 1) * (-1) ** L),
    ...             "config": {"task": {"task": "topk", "k": 2, "a": 0.0, "b": 0.0, "d": 8, "P": 32},
    ...                        "model": {"model": "softmax", "depth": L}, "train": {"steps": 10}}}
    >>> (c,) = curves([rec(L, s) for L in (1, 2, 4) for s in (0, 1, 2)])
    >>> c.fit("offset", n_boot=0, points="mean").failure
    '3 depth(s) with a positive loss < 4'
    >>> f = c.fit("offset", n_boot=0)  # "auto": the nine seed-level points
    >>> f.n, f.dof
    (9, 6)
    """
    from .curve import FIT_KINDS, _replace

    n_params = 3 if kind == "offset" else 2
    seed_idx, depth_idx = np.nonzero(np.isfinite(curve.loss) & (curve.loss > 0))
    L, R = curve.depths[depth_idx].astype(float), curve.loss[seed_idx, depth_idx]
    n_depths = len(set(depth_idx.tolist()))
    if n_depths < n_params or L.size <= n_params:
        return _fits.FitResult.missing(
            name,
            f"{L.size} seed-level point(s) at {n_depths} depth(s): the law needs {n_params} depths "
            f"and more than {n_params} points",
            int(L.size),
        )
    fn = FIT_KINDS[kind][1]
    try:
        res = fn(L, R)
    except (ValueError, RuntimeError, np.linalg.LinAlgError) as exc:
        return _fits.FitResult.missing(name, f"fit failed: {exc}", int(L.size))
    extra: dict[str, Any] = {}
    if kind == "offset":
        try:
            extra["delta_aic_alpha_one"] = _fits.compare_alpha_one(L, R).delta_aic
        except (ValueError, RuntimeError, np.linalg.LinAlgError):
            pass
    if n_boot > 0:
        extra["bootstrap_refused"] = "no bootstrap: a fit to seed-level points (its errors use the seeds' scatter)"
    return _replace(res, **extra) if extra else res


def curve_frame(curve):
    """:meth:`Curve.to_frame`: one row per run, indexed by ``(depth, seed)``.

    Examples
    --------
    >>> from depthscale.derivations.analysis.curve import curves
    >>> def rec(L, s):
    ...     return {"status": "ok", "seed": s, "converged": True, "final_loss": 0.5 + 0.4 / L,
    ...             "config": {"task": {"task": "topk", "k": 2, "a": 0.0, "b": 0.0, "d": 8, "P": 32},
    ...                        "model": {"model": "softmax", "depth": L}, "train": {"steps": 10}}}
    >>> (c,) = curves([rec(L, s) for L in (4, 1, 2) for s in (1, 0)])
    >>> df = curve_frame(c)
    >>> df.index.names, df.index[:3].tolist(), float(df["final_loss"].iloc[0])
    (FrozenList(['depth', 'seed']), [(1, 0), (1, 1), (2, 0)], 0.9)
    """
    pd = optional("pandas", "pandas")
    rows = []
    for (L, s), r in sorted(curve.runs.items()):
        v, se = r.get("final_loss"), r.get("final_loss_se")
        rows.append(
            {
                "depth": int(L),
                "seed": s,
                "final_loss": math.nan if v is None else float(v),
                "final_loss_se": math.nan if se is None else float(se),
                "converged": bool(r.get("converged", False)),
                "steps": r.get("steps_run", r.get("steps")),
            }
        )
    cols = ["depth", "seed", "final_loss", "final_loss_se", "converged", "steps"]
    df = pd.DataFrame(rows, columns=cols).set_index(["depth", "seed"])
    df.attrs["label"] = curve.label
    return df


def curve_xarray(curve):
    """:meth:`Curve.to_xarray`: the losses over ``depth`` x ``seed``."""
    xr = optional("xarray", "xarray")
    attrs: dict[str, Any] = {"label": curve.label, "model": curve.model, "variant": curve.variant}
    attrs.update(task=curve.task, d=curve.d, P=curve.P, n_unconverged=curve.n_unconverged)
    return xr.DataArray(
        curve.loss.T.copy(),
        dims=("depth", "seed"),
        coords={"depth": curve.depths.astype(int), "seed": list(curve.seeds)},
        name="final_loss",
        attrs=attrs,
    )


__all__ = ["optional", "seed_fit", "curve_frame", "curve_xarray"]
