"""``depthscale predict linear-optimum``: the best depth-L linear-attention loss on the easy task at finite (d, P).

Registered by ``depthscale.derivations.commands.predict``. Every argument is validated before any
computation (memory included); a bad value raises ``ValueError`` naming the parameter, which the
CLI turns into one line on stderr and exit status 2.
"""

from __future__ import annotations

from ....theory._choices import LINEAR_OPTIMUM_TASKS as TASKS
from ....theory._validate import D_MAX, OPTIMUM_DEPTH_MAX, P_MAX, SEED_MAX, check_choice, check_int, check_real
from ..app import emit, parse_list


def add_linear_optimum_parser(sub) -> None:
    """Add ``linear-optimum`` to the ``predict`` sub-commands."""
    opt = sub.add_parser(
        "linear-optimum",
        help="Monte Carlo loss of the best depth-L polynomial in the context covariance on the easy task",
    )
    opt.add_argument("--a", type=float, required=True, help="input spectrum exponent a >= 0, lambda_k = c_lambda k^-a")
    opt.add_argument("--b", type=float, required=True, help="teacher spectrum exponent b >= 0, omega_k = c_omega k^-b")
    opt.add_argument("--d", type=int, required=True, help=f"input dimension, 1 <= d <= {D_MAX} (memory permitting)")
    opt.add_argument("--P", type=int, required=True, help=f"context length, 1 <= P <= {P_MAX}")
    opt.add_argument(
        "--depths", required=True, help=f"comma-separated distinct depths in [1, {OPTIMUM_DEPTH_MAX}], e.g. 1,2,4,8"
    )
    opt.add_argument(
        "--contexts", type=int, required=True, help="fitting contexts (>= 2); as many evaluation contexts are drawn"
    )
    opt.add_argument("--seed", type=int, required=True, help="random seed (integer >= 0); same seed, same numbers")
    opt.add_argument("--task", default="easy-fresh", help="easy-fresh (fresh query, default) or easy-exact")
    opt.add_argument(
        "--c-lambda", dest="c_lambda", type=float, default=1.0, help="input spectrum scale c_lambda > 0 (default 1)"
    )
    opt.add_argument(
        "--c-omega", dest="c_omega", type=float, default=1.0, help="teacher spectrum scale c_omega > 0 (default 1)"
    )
    opt.add_argument("--json", action="store_true", help="machine-readable output")
    opt.set_defaults(func=handle_linear_optimum)


def handle_linear_optimum(args) -> int:
    a = check_real("a", args.a, lo=0)
    b = check_real("b", args.b, lo=0)
    d = check_int("d", args.d, lo=1, hi=D_MAX)
    P = check_int("P", args.P, lo=1, hi=P_MAX)
    depths = [check_int("depths", L, lo=1, hi=OPTIMUM_DEPTH_MAX) for L in parse_list("depths", args.depths, int)]
    contexts = check_int("contexts", args.contexts, lo=2)
    seed = check_int("seed", args.seed, lo=0, hi=SEED_MAX)
    task = check_choice("task", args.task, TASKS)
    c_lambda = check_real("c_lambda", args.c_lambda, lo=0, lo_open=True)
    c_omega = check_real("c_omega", args.c_omega, lo=0, lo_open=True)
    from ....sims.threads import one_blas_thread
    from ....theory.linear_optimum import linear_optimum  # refuses, before drawing, what would not fit

    with one_blas_thread():  # small batched products and eigensolves: threads only contend
        res = linear_optimum(a, b, d, P, depths, contexts, seed, task=task, c_lambda=c_lambda, c_omega=c_omega)
    rows = [
        {
            "L": int(L),
            "loss": float(v),
            "se": float(s),
            "in_sample": float(i),
            "equal_step": float(e),
            "equal_step_se": float(es),
        }
        for L, v, s, i, e, es in zip(res.depths, res.loss, res.se, res.in_sample, res.equal_step, res.equal_step_se)
    ]
    out = {"task": task, "contexts": contexts, "rows": rows}
    lines = [f"task = {task}   (a={a:g}, b={b:g}, d={d}, P={P}, {contexts} fitting + {contexts} evaluation contexts)"]
    lines.append(f"{'L':>4}  {'loss':>12}  {'se':>10}  {'in_sample':>12}  {'equal_step':>12}  {'se':>10}")
    lines += [
        f"{r['L']:>4}  {r['loss']:>12.6g}  {r['se']:>10.3g}  {r['in_sample']:>12.6g}"
        f"  {r['equal_step']:>12.6g}  {r['equal_step_se']:>10.3g}"
        for r in rows
    ]
    emit(out, args.json, "\n".join(lines))
    return 0
