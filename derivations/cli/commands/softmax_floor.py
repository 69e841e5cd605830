"""``depthscale predict softmax-floor``: the infinite-depth reference floors of a softmax task.

``--attention`` picks the map of the heads (softmax by default, or any nonlinearity of
``ModelConfig.attention``: sparsemax, entmax15, sigmoid, relu).

The sub-command is registered by ``depthscale.derivations.cli.commands.predict``; the options of the
floor computation (contexts, temperature grid, mixture size) are shared with ``infer-scale``.
"""

from __future__ import annotations

import time

from ....sims.threads import check_threads
from ....theory._validate import SEED_MAX, check_int, check_memory, check_real
from ...analysis.scale_match import task_from
from ..app import emit


def add_floor_options(parser, contexts_default=None) -> None:
    """Options of the floor computation shared by ``predict softmax-floor`` and ``infer-scale``."""
    req = contexts_default is None
    parser.add_argument(
        "--contexts",
        type=int,
        required=req,
        default=contexts_default,
        help="evaluation contexts, eval_batches(task, contexts, seed): the contexts of a run with "
        "this seed and eval_contexts = contexts (>= 2)" + ("" if req else f"; default {contexts_default}"),
    )
    parser.add_argument(
        "--fit-contexts",
        dest="fit_contexts",
        type=int,
        default=None,
        help="fitting contexts, an independent stream (rng_for(task, seed, 'baseline-fit')); "
        "default: as many as --contexts",
    )
    parser.add_argument(
        "--seed",
        type=int,
        required=req,
        default=0 if not req else None,
        help="seed of the fitting and evaluation contexts (>= 0)" + ("" if req else "; default 0"),
    )
    parser.add_argument(
        "--kappa-min",
        dest="kappa_min",
        type=float,
        default=1e-2,
        help="smallest temperature of the log grid, 1e-08 <= kappa-min <= 1e+08; default 0.01",
    )
    parser.add_argument(
        "--kappa-max",
        dest="kappa_max",
        type=float,
        default=1e4,
        help="largest temperature of the log grid (> kappa-min, <= 1e+08); default 10000",
    )
    parser.add_argument(
        "--n-kappa",
        dest="n_kappa",
        type=int,
        default=49,
        help="points of the log temperature grid used by the single-head search and the convex "
        "mixture (>= 3); default 49, 8 per decade",
    )
    parser.add_argument(
        "--temperatures", type=int, default=2, help="K, temperatures of the signed mixture (1..8); default 2"
    )
    parser.add_argument(
        "--c-lambda",
        dest="c_lambda",
        type=float,
        default=1.0,
        help="input spectrum scale, lambda_k = c_lambda k^-a (> 0); default 1",
    )
    parser.add_argument(
        "--c-omega",
        dest="c_omega",
        type=float,
        default=1.0,
        help="teacher spectrum scale, omega_k = c_omega k^-b (> 0); default 1",
    )
    parser.add_argument(
        "--threads", type=int, default=1, help="numba threads, 1..cores (results do not depend on it); default 1"
    )
    parser.add_argument("--json", action="store_true", help="machine-readable output")


def add_softmax_floor_parser(sub) -> None:
    """Add ``softmax-floor`` to the ``predict`` sub-parsers."""
    p = sub.add_parser(
        "softmax-floor",
        help="infinite-depth reference floors of a softmax task: best single temperature head, "
        "best non-negative (convex) mixture, best signed K-temperature mixture",
    )
    p.add_argument("--task", required=True, help="topk | easy-exact | easy-fresh")
    p.add_argument(
        "--k",
        type=int,
        default=2,
        help="top-k target size, 1 <= k <= P; default 2 (the easy tasks ignore it, but it is part of the "
        "task configuration that seeds the contexts, as in simulate)",
    )
    p.add_argument("--a", type=float, required=True, help="input spectrum exponent, lambda_k = c_lambda k^-a (>= 0)")
    p.add_argument("--b", type=float, required=True, help="teacher spectrum exponent, omega_k = c_omega k^-b (>= 0)")
    p.add_argument("--d", type=int, required=True, help="input dimension (1..100000)")
    p.add_argument("--P", type=int, required=True, help="context length (>= 1)")
    p.add_argument(
        "--attention",
        default="softmax",
        help="the attention map of every head, as ModelConfig.attention: softmax | sparsemax | entmax15 | "
        "sigmoid (sigmoid(kappa cos - log P)) | relu (relu(kappa cos) / P); default softmax",
    )
    add_floor_options(p)
    p.set_defaults(func=handle_softmax_floor)


KAPPA_LIMITS = (1e-8, 1e8)  # temperatures the log grid and the heads' exponentials represent well
TEMPERATURES_MAX = 8  # sims.reference_floors.MAX_TEMPERATURES, kept here so a refusal needs no scipy


def floor_options(args, ds=None, Ps=None) -> dict:
    """Validate the shared options and check the memory of the floors at the largest ``d`` and ``P``
    (``ds``, ``Ps``; default ``args.d``, ``args.P``), before anything heavy is imported; return the
    keyword arguments of ``reference_floors``."""
    n_eval = check_int("contexts", args.contexts, lo=2, hi=10_000_000)
    n_fit = n_eval if args.fit_contexts is None else check_int("fit_contexts", args.fit_contexts, lo=2, hi=10_000_000)
    lo, hi = KAPPA_LIMITS
    kappa_range = (
        check_real("kappa_min", args.kappa_min, lo=lo, hi=hi),
        check_real("kappa_max", args.kappa_max, lo=lo, hi=hi),
    )
    if not kappa_range[0] < kappa_range[1]:
        raise ValueError(f"kappa_max={args.kappa_max!r}: must be larger than kappa_min={args.kappa_min!r}")
    n_grid = check_int("n_kappa", args.n_kappa, lo=3, hi=10_000)
    kw = {
        "seed": check_int("seed", args.seed, lo=0, hi=SEED_MAX),
        "n_fit": n_fit,
        "n_eval": n_eval,
        "kappa_range": kappa_range,
        "n_grid": n_grid,
        "K": check_int("temperatures", args.temperatures, lo=1, hi=TEMPERATURES_MAX),
    }
    from ...analysis.scale_resolution import floors_memory_bytes

    d, P = max(ds or [args.d]), max(Ps or [args.P])
    check_memory(
        f"contexts={n_eval}, fit_contexts={n_fit}, n_kappa={n_grid}, d={d}, P={P}",
        floors_memory_bytes(d, P, n_fit, n_eval, n_grid),
    )
    kw["threads"] = check_threads(args.threads, lo=1)  # last: it imports numba
    return kw


def floors_json(fl) -> dict:
    """The JSON object of ``predict softmax-floor`` for a ``ReferenceFloors``."""
    s, c, m = fl.single, fl.convex, fl.mixture
    return {
        "attention": fl.attention,
        "single": {"loss": s.loss, "se": s.se, "kappa": s.kappa, "gain": s.gain, "fit_loss": s.fit_loss},
        "convex": {
            "loss": c.loss,
            "se": c.se,
            "support": [{"kappa": k, "weight": w} for k, w in zip(c.support, c.weights)],
            "fit_loss": c.fit_loss,
        },
        "mixture": {
            "loss": m.loss,
            "se": m.se,
            "kappas": list(m.kappas),
            "gains": list(m.gains),
            "fit_loss": m.fit_loss,
        },
        "contexts": {
            "fit": fl.n_fit,
            "eval": fl.n_eval,
            "seed": fl.seed,
            "fit_stream": "rng_for(task, seed, 'baseline-fit')",
            "eval_stream": "eval_batches(task, eval, seed)",
        },
    }


def handle_softmax_floor(args) -> int:
    from ....sims.attention_registry import get_attention

    attention = get_attention(args.attention).name  # a registered map, checked before numba is imported
    kw = floor_options(args)  # sizes and memory first: task_from imports NumPy
    task = task_from(args.task, args.k, args.a, args.b, args.d, args.P, args.c_lambda, args.c_omega)
    from ....sims.reference_floors import reference_floors

    t0 = time.perf_counter()
    fl = reference_floors(task, attention=attention, **kw)
    out = floors_json(fl)
    out["task"] = {
        "task": task.task,
        "k": task.k,
        "a": task.a,
        "b": task.b,
        "d": task.d,
        "P": task.P,
        "c_lambda": task.c_lambda,
        "c_omega": task.c_omega,
    }
    out["seconds"] = time.perf_counter() - t0
    emit(out, args.json, _text(out))
    return 0


def _text(out) -> str:
    s, c, m = out["single"], out["convex"], out["mixture"]
    sup = ", ".join(f"{e['kappa']:.4g}:{e['weight']:.3g}" for e in c["support"]) or "(empty)"
    mix = ", ".join(f"{k:.4g}:{g:.3g}" for k, g in zip(m["kappas"], m["gains"]))
    ctx = out["contexts"]
    return "\n".join(
        [
            f"{out['attention']} floors on {ctx['eval']} evaluation contexts (fitted on {ctx['fit']} independent "
            f"contexts), seed {ctx['seed']}",
            f"single   {s['loss']:.6g} +- {s['se']:.2g}   kappa {s['kappa']:.4g}, gain {s['gain']:.4g}",
            f"convex   {c['loss']:.6g} +- {c['se']:.2g}   support kappa:weight {sup}",
            f"mixture  {m['loss']:.6g} +- {m['se']:.2g}   kappa:gain {mix}",
        ]
    )
