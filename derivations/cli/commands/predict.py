"""``depthscale predict linear|floor|clt|softmax-floor``: theory numbers for linear attention, layer
aggregation and the infinite-depth reference floors of the softmax tasks.

Every argument is validated before any computation; a bad value raises ``ValueError`` naming the
parameter, which the CLI turns into one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import math

from ....theory._choices import CLT_MODELS
from ....theory._validate import D_MAX, DEPTH_MAX, MODES_MAX, P_MAX, SEED_MAX, check_choice, check_int, check_real
from ....theory.linear_laws import (
    LINEAR_LAW_DESCRIPTIONS,
    LINEAR_SECONDS_MAX,
    SLOPE_DESCRIPTION,
    VALIDITY_DESCRIPTION,
    VALIDITY_EPS,
    linear_rows,
)
from ....theory.linear_laws import LINEAR_LAWS as LINEAR_KEYS  # no numpy or sympy: start-up stays light
from ..app import emit, parse_list
from .linear_optimum import add_linear_optimum_parser
from .softmax_floor import add_softmax_floor_parser

CLT_PARAM = {"iid": None, "equicorrelated": "rho", "ar1": "r", "powerlaw": "g"}


def register(subparsers) -> None:
    """Add ``predict`` and its sub-commands ``linear``, ``floor``, ``clt``, ``softmax-floor``, ``linear-optimum``."""
    parser = subparsers.add_parser(
        "predict", help="theory numbers: linear-attention laws, linear floor, CLT aggregation, softmax reference floors"
    )
    # the metavar names the missing choice in argparse's "required" error (not the internal dest)
    sub = parser.add_subparsers(
        dest="predict_command", required=True, metavar="{linear,floor,clt,softmax-floor,linear-optimum}"
    )

    lin = sub.add_parser(
        "linear",
        help="equal-step, optimal-step, continuum and free-polynomial losses per depth, their local slopes and the "
        "continuum laws' validity window",
        description="Linear-attention losses per depth on the power-law spectrum lambda_k = c_lambda k^-a, "
        "omega_k = c_omega k^-b with d modes, their local slopes -d log R / d log L, and the depth L_max below "
        "which the d-mode loss is within --eps of the continuum laws.",
        epilog=linear_columns_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    lin.add_argument("--a", type=float, required=True, help="input spectrum exponent, lambda_k = c_lambda k^-a")
    lin.add_argument("--b", type=float, required=True, help="teacher spectrum exponent, omega_k = c_omega k^-b")
    lin.add_argument("--d", type=int, required=True, help=f"number of modes, 1 <= d <= {MODES_MAX:.0e}")
    lin.add_argument(
        "--depths",
        required=True,
        help=f"comma-separated depths in [1, {DEPTH_MAX}], e.g. 8,32,128; refused when the free discrete"
        f" optimum's estimated CPU time, 2 x 7 s x (max depth / 1024)^3 (the laws and the neighbours of the"
        f" local slopes), exceeds {LINEAR_SECONDS_MAX:.0f} s",
    )
    lin.add_argument(
        "--eps",
        type=float,
        default=VALIDITY_EPS,
        help=f"relative tolerance of the validity window L_max, 0 < eps < 1 (default {VALIDITY_EPS:g})",
    )
    _add_scales_and_json(lin)
    lin.set_defaults(func=handle_linear)

    flo = sub.add_parser("floor", help="Monte Carlo floor T - h^T G^+ h of linear attention on the top-k task")
    flo.add_argument("--a", type=float, required=True, help="input spectrum exponent a >= 0, lambda_k = c_lambda k^-a")
    flo.add_argument("--b", type=float, required=True, help="teacher spectrum exponent b >= 0, omega_k = c_omega k^-b")
    flo.add_argument("--k", type=int, required=True, help="top-k target size, 1 <= k <= P")
    flo.add_argument(
        "--d",
        type=int,
        required=True,
        help=f"input dimension, 1 <= d <= {D_MAX}; refused if the Monte Carlo blocks (about 64 P d bytes) exceed memory",
    )
    flo.add_argument("--P", type=int, required=True, help=f"context length, 1 <= P <= {P_MAX}")
    flo.add_argument("--contexts", type=int, required=True, help="Monte Carlo contexts (>= 2)")
    flo.add_argument("--seed", type=int, required=True, help="random seed (integer >= 0); same seed, same numbers")
    flo.add_argument(
        "--degree", type=int, default=4, help="polynomial degree of the linear model's features, 1..64 (default 4)"
    )
    flo.add_argument(
        "--covariance",
        default="population",
        help="features Sigma^r q (population: the paper's floor, default) or S^r q with S = X^T X / P of each "
        "context (context: the floor of a trained model at this P)",
    )
    _add_scales_and_json(flo)
    flo.set_defaults(func=handle_floor)

    clt = sub.add_parser("clt", help="exact finite-depth losses of the central-limit aggregation models")
    clt.add_argument("--model", required=True, help="iid | equicorrelated | ar1 | powerlaw")
    clt.add_argument("--depths", required=True, help="comma-separated depths, e.g. 1,2,4")
    clt.add_argument("--sigma2", type=float, required=True, help="layer-noise variance sigma^2")
    clt.add_argument("--shared", type=float, required=True, help="shared-error variance E s^2")
    clt.add_argument("--rho", type=float, default=None, help="equicorrelation (model equicorrelated)")
    clt.add_argument("--r", type=float, default=None, help="AR(1) coefficient (model ar1)")
    clt.add_argument(
        "--g", type=float, default=None, help="power-law correlation exponent, rho(k) = (1+k)^-g (model powerlaw)"
    )
    clt.add_argument("--json", action="store_true", help="machine-readable output")
    clt.set_defaults(func=handle_clt)

    add_softmax_floor_parser(sub)
    add_linear_optimum_parser(sub)


def _add_scales_and_json(parser) -> None:
    """The last options of ``linear`` and ``floor``: the spectrum scales and ``--json``."""
    parser.add_argument(
        "--c-lambda", dest="c_lambda", type=float, default=1.0, help="input spectrum scale c_lambda > 0 (default 1)"
    )
    parser.add_argument(
        "--c-omega", dest="c_omega", type=float, default=1.0, help="teacher spectrum scale c_omega > 0 (default 1)"
    )
    parser.add_argument("--json", action="store_true", help="machine-readable output")


# --------------------------------------------------------------------------- linear
def linear_columns_help() -> str:
    """The ``--help`` epilog of ``predict linear``: every output column and what it is.

    >>> "reference step" in linear_columns_help()
    True
    """
    lines = ["output columns (the JSON's 'columns' map says the same):"]
    lines += [f"  {key:<16} {text}" for key, text in LINEAR_LAW_DESCRIPTIONS.items()]
    lines += [f"  {'slopes':<16} {SLOPE_DESCRIPTION}", f"  {'validity':<16} {VALIDITY_DESCRIPTION}"]
    return "\n".join(lines)


def handle_linear(args) -> int:
    depths = parse_list("depths", args.depths, int)
    out = linear_rows(args.a, args.b, args.d, depths, args.c_lambda, args.c_omega, eps=args.eps)
    head = f"zeta = {_fmt(out['zeta'])}   (a={args.a:g}, b={args.b:g}, d={args.d})"
    window = out["validity"]
    if window is not None:
        beyond = [r["L"] for r in out["rows"] if r["L"] > window["L_max"]]
        head += (
            f"\nvalidity: the d-mode loss is within {window['eps']:g} of the continuum laws for 1 << L <= L_max = "
            f"{window['L_max']:.4g} = {window['L_max_over_d_a']:.4g} d^a"
            + (f"; beyond it: L = {', '.join(map(str, beyond))}" if beyond else "")
        )
    if out["zeta"] is None:  # outside the asymptotic laws' domain: said in both outputs, not left to a '-'
        out["note"] = (
            f"a={args.a:g}, b={args.b:g}: zeta = (a + b - 1) / a needs a > 0 and a + b > 1; the asymptotic laws "
            "(beta_form, gamma_asymptote, free_continuum) do not apply, the finite-d columns are exact"
        )
    if "note" in out:  # on the first line: the table below stays one aligned block
        head += "; note: " + out["note"]
    slope_keys = ["L", *(k for k in LINEAR_KEYS if k != "gamma_opt")]
    text = "\n".join(
        [
            head,
            _table(["L", *LINEAR_KEYS], out["rows"]),
            "",
            "local slopes -d log R / d log L:",
            _table(slope_keys, out["slopes"]),
            "",
            *(f"{k}: {v}" for k, v in LINEAR_LAW_DESCRIPTIONS.items() if k != "L"),
        ]
    )
    emit(out, args.json, text)
    return 0


# --------------------------------------------------------------------------- floor
def handle_floor(args) -> int:
    a = check_real("a", args.a, lo=0)
    b = check_real("b", args.b, lo=0)
    d = check_int("d", args.d, lo=1, hi=D_MAX)
    P = check_int("P", args.P, lo=1, hi=P_MAX)
    k = check_int("k", args.k, lo=1, hi=P)
    contexts = check_int("contexts", args.contexts, lo=2)
    seed = check_int("seed", args.seed, lo=0, hi=SEED_MAX)
    degree = check_int("degree", args.degree, lo=1, hi=64)
    c_lambda = check_real("c_lambda", args.c_lambda, lo=0, lo_open=True)
    c_omega = check_real("c_omega", args.c_omega, lo=0, lo_open=True)
    # theory.floor.COVARIANCES, spelled out so that an argument error imports no numpy
    covariance = check_choice("covariance", args.covariance, ("population", "context"))
    from ....sims.threads import one_blas_thread
    from ....theory.floor import linear_floor  # refuses, before allocating, what would not fit in memory

    with one_blas_thread():  # small products: see report.write
        res = linear_floor(
            a, b, k, d, P, contexts, seed, degree=degree, c_lambda=c_lambda, c_omega=c_omega, covariance=covariance
        )
    out = {"floor": float(res.floor), "stderr": float(res.stderr), "degree": int(res.degree), "covariance": covariance}
    emit(out, args.json, _table(list(out), [out]))
    return 0


# --------------------------------------------------------------------------- clt
def clt_arguments(model, depths, sigma2, shared, rho=None, r=None, g=None) -> dict:
    """Validate the CLT model and its parameters; return the keyword arguments of ``clt_loss``.

    The model's own parameter is required and parameters of other models are refused, so nothing
    is silently ignored.

    Examples
    --------
    >>> clt_arguments("ar1", [1, 2], 1.0, 0.5, r=0.3)["r"]
    0.3
    """
    model = check_choice("model", model, CLT_MODELS)
    given = {"rho": rho, "r": r, "g": g}
    need = CLT_PARAM[model]
    for name, value in given.items():
        if name == need and value is None:
            raise ValueError(f"{name}=None: model {model} needs --{name}")
        if name != need and value is not None:
            raise ValueError(f"{name}={value!r}: --{name} applies only to model {_owner(name)}, not {model}")
    kw = {
        "model": model,
        "depths": [check_int("depths", L, lo=1, hi=10**7) for L in depths],
        "sigma2": check_real("sigma2", sigma2, lo=0),
        "shared": check_real("shared", shared, lo=0),
        "rho": None,
        "r": None,
        "g": None,
    }
    if need == "rho":
        kw["rho"] = check_real("rho", rho, lo=-1, hi=1)
    elif need == "r":
        kw["r"] = check_real("r", r, lo=-1, hi=1, lo_open=True, hi_open=True)
    elif need == "g":
        kw["g"] = check_real("g", g, lo=0, lo_open=True)
    return kw


def handle_clt(args) -> int:
    depths = parse_list("depths", args.depths, int)
    kw = clt_arguments(args.model, depths, args.sigma2, args.shared, args.rho, args.r, args.g)
    import numpy as np

    from ....theory.clt import clt_loss

    with np.errstate(over="ignore"):  # an overflow is refused below, by name, not warned about
        losses = np.atleast_1d(clt_loss(**kw))
    if not np.all(np.isfinite(losses)):
        L = kw["depths"][int(np.argmin(np.isfinite(losses)))]
        raise ValueError(
            f"sigma2={kw['sigma2']:g}, shared={kw['shared']:g}: the loss at L={L} exceeds the largest float"
            f" ({np.finfo(float).max:.3g}); sigma2 + shared must stay below it"
        )
    rows = [{"L": int(L), "loss": float(v)} for L, v in zip(kw["depths"], losses)]
    out = {"rows": rows}
    emit(out, args.json, f"model = {kw['model']}\n" + _table(["L", "loss"], rows))
    return 0


# --------------------------------------------------------------------------- helpers
def _owner(param: str) -> str:
    return next(m for m, p in CLT_PARAM.items() if p == param)


def _fmt(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float) and math.isfinite(v):
        return f"{v:.6g}"
    return str(v)


def _table(keys, rows) -> str:
    """Right-aligned text table; missing laws show as '-'."""
    cells = [[_fmt(r.get(k)) for k in keys] for r in rows]
    widths = [max(len(k), *(len(c[i]) for c in cells)) for i, k in enumerate(keys)]
    lines = ["  ".join(k.rjust(w) for k, w in zip(keys, widths))]
    lines += ["  ".join(c.rjust(w) for c, w in zip(row, widths)) for row in cells]
    return "\n".join(lines)
