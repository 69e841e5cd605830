"""``depthscale check --store FILE --law power --param alpha=LO,HI``: decide a prediction on one curve.

The law (``power``: ``c L^-alpha``, ``offset``: ``L0 + c L^-alpha``) is fitted to the curve's depths
inside the window (``--L-min``/``--L-max``, ``--validity EPS`` for the continuum law's own window), and
the parameter is tested against the expected interval (``NAME=LO,HI``, or ``NAME=VALUE`` with
``--tol``) by the studies' rules (:func:`~depthscale.derivations.check.check_prediction`). ``--claim``
applies a generic claim instead (inverse-depth, disagreement, clt-identity, floor-reached). The data
must make one curve: ``--where PATH=VALUE`` (``--model NAME`` and ``--task NAME`` are shorthands; any
registered model or map, a user's own included) and ``--curve LABEL`` pick it. Exit status 0 whatever the
verdict (the verdict is in the output); 2 for bad input.
"""

from __future__ import annotations

from ..app import emit
from .fit import add_model_task_options, add_selection_options, check_window, parse_where

GENERIC = ("inverse-depth", "disagreement", "clt-identity", "floor-reached")  # derivations.check.GENERIC_CLAIMS


def register(sub) -> None:
    p = sub.add_parser("check", help="decide a prediction (a law and a parameter's interval) on one curve of a store")
    p.add_argument("--store", required=True, help="an existing results store (opened read-only)")
    p.add_argument("--law", default="power", help="power (c L^-alpha) or offset (L0 + c L^-alpha)")
    p.add_argument(
        "--param",
        action="append",  # collected, so that a second one is refused rather than silently replacing the first
        default=None,
        metavar="NAME=LO,HI",
        help="the expected interval of one parameter of the law (alpha=0.6,0.75), or NAME=VALUE with --tol",
    )
    p.add_argument("--tol", type=float, default=None, help="tolerance of a single expected value (--param alpha=0.67)")
    p.add_argument("--claim", default=None, help=f"a generic claim instead of --law: {', '.join(GENERIC)}")
    p.add_argument(
        "--validity",
        type=float,
        default=None,
        metavar="EPS",
        help="linear attention, easy task: fit only depths where the continuum law is within EPS of the d-mode loss",
    )
    p.add_argument(
        "--error",
        default="fit",
        help="what the parameter's error rests on: fit (the law fitted to the seed means) or seeds (each seed's "
        "own fit; two seeds decide only at t(1) = 12.7 s.e.)",
    )
    p.add_argument("--curve", default=None, help="the label of the curve, when the selected runs make several")
    p.add_argument("--floor", type=float, default=None, help="the reference floor of --claim floor-reached")
    add_model_task_options(p)
    add_selection_options(p)
    p.add_argument("--id", default="my-prediction", help="the result's claim id")
    p.add_argument("--figure", default=None, metavar="PATH", help="write the figure of the data against the law (PNG)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=handle)


def parse_param(text: str) -> dict:
    """``{name: (lo, hi)}`` or ``{name: value}`` from ``--param``.

    >>> parse_param("alpha=0.6,0.75"), parse_param("alpha=0.67")
    ({'alpha': (0.6, 0.75)}, {'alpha': 0.67})
    >>> parse_param("alpha")
    Traceback (most recent call last):
    ...
    ValueError: param='alpha': must be NAME=LO,HI or NAME=VALUE (alpha=0.6,0.75)
    """
    what = f"param={text!r}: must be NAME=LO,HI or NAME=VALUE (alpha=0.6,0.75)"
    name, sep, rest = text.partition("=")
    parts = [t.strip() for t in rest.split(",")]
    if not sep or not name.strip().isidentifier() or len(parts) not in (1, 2):
        raise ValueError(what)
    try:
        values = [float(t) for t in parts]
    except ValueError:
        raise ValueError(what) from None
    return {name.strip(): tuple(values) if len(values) == 2 else values[0]}


def handle(args) -> int:
    from ....theory._validate import check_choice
    from ..app import check_in_store, check_out_file

    if args.claim is not None:
        check_choice("claim", args.claim, GENERIC)
    check_choice("law", args.law, ("power", "offset"))
    check_choice("error", args.error, ("fit", "seeds"))
    if args.param is not None and len(args.param) > 1:
        raise ValueError(
            f"param={args.param!r}: must be given once (a check tests one parameter; run check again for another)"
        )
    param = args.param[0] if args.param else None
    if args.claim is None and param is None:
        raise ValueError("param=None: must be given without --claim (NAME=LO,HI, e.g. alpha=0.6,0.75)")
    expected = parse_param(param) if param is not None else {}
    L_min, L_max = check_window(args)
    where = parse_where(args.where)
    for name in ("model", "task"):
        if getattr(args, name) is not None:
            if f"{name}.{name}" in where:
                raise ValueError(
                    f"{name}={getattr(args, name)!r}: must not be given with --where {name}.{name} (one of them)"
                )
            where[f"{name}.{name}"] = [getattr(args, name)]
    store = check_in_store("store", args.store)
    figure = None
    if args.figure is not None:
        from ....sims._outputs import refuse_replacing_inputs, store_inputs

        figure = check_out_file("figure", args.figure)
        refuse_replacing_inputs("figure", figure, store_inputs("store", store))
    from ...check import check_prediction  # numpy and scipy: only once the arguments are good

    kw = {"claim": args.claim, "floor": args.floor} if args.claim else {"law": args.law}
    check = check_prediction(
        str(store),
        tol=args.tol,
        L_min=L_min,
        L_max=L_max,
        validity=args.validity,
        where=where or None,
        curve=args.curve,
        error=args.error,
        id=args.id if args.claim is None or args.id != "my-prediction" else args.claim,
        **kw,
        **expected,
    )
    out = {"store": str(store), **check.to_dict()}
    if figure is not None:
        _write_png(figure, check.png())
        out["figure"] = str(figure)
    r = check.result
    lines = [
        f"{r.id}: {r.verdict}" + (f" (would be {r.would_be})" if r.would_be else ""),
        f"  claim:    {r.claim}",
        f"  measured: {r.to_dict()['measured_text']}  expected: {r.to_dict()['expected_text']} ({r.tolerance})",
        f"  reason:   {r.reason}",
    ]
    if figure is not None:
        lines.append(f"  figure:   {figure}")
    emit(out, args.json, "\n".join(lines))
    return 0


def _write_png(path, png: bytes) -> None:
    """The PNG written whole (a temporary file beside it, renamed)."""
    import os

    from ....sims._outputs import check_new_file, temp_beside, umask

    out = check_new_file("figure", path, replace=True)
    fd, tmp = temp_beside("figure", out)
    try:
        with open(fd, "wb") as fh:
            fh.write(png)
        os.chmod(tmp, 0o666 & ~umask())  # as a file made by open()
        os.replace(tmp, out)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
