"""``depthscale fit --store FILE``: fit every curve of a results store.

A curve is every ``ok`` run that shares all settings but depth and seed. Each is fitted with
``R_L = L0 + c L^-alpha`` (with the alpha = 1 comparison) and the pure power law ``c L^-alpha`` on
its seed-mean losses, with bootstrap intervals over seeds when there are at least three seeds.
"""

from __future__ import annotations

import math

from depthscale.derivations.cli import emit

KINDS = ("offset", "power")


def register(sub) -> None:
    p = sub.add_parser("fit", help="fit scaling laws to every curve (loss against depth) in a results store")
    p.add_argument("--store", required=True, help="an existing results store (opened read-only)")
    p.add_argument("--model", default=None, help="only this model (linear or softmax)")
    p.add_argument("--task", default=None, help="only this task (easy-exact, easy-fresh or topk)")
    p.add_argument("--kind", default="offset,power", help="comma list of fits: offset (L0 + c L^-alpha), power (c L^-alpha)")
    p.add_argument("--n-boot", type=int, default=200, help="bootstrap replicates over seeds (0: none)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=handle)


def _fmt(v, se=None) -> str:
    if v is None or not math.isfinite(v):
        return "n/a"
    return f"{v:.4g}" + (f" ± {se:.2g}" if se is not None and math.isfinite(se) else "")


def handle(args) -> int:
    from depthscale.derivations.cli import parse_list
    from depthscale.sims.config import MODELS, TASKS
    from depthscale.sims.store import Store
    from depthscale.theory.validate import check_choice, check_int

    if args.model is not None:
        check_choice("model", args.model, MODELS)
    if args.task is not None:
        check_choice("task", args.task, TASKS)
    kinds = parse_list("kind", args.kind, str)
    for k in kinds:
        check_choice("kind", k, KINDS)
    n_boot = check_int("n-boot", args.n_boot, lo=0, hi=1_000_000)
    with Store(args.store, mode="read") as st:  # read-only: a foreign or empty file is refused untouched
        records = list(st.records(status="ok", model=args.model, task=args.task))
    from depthscale.derivations.analysis import curves, fit_curve

    out = {"store": args.store, "curves": []}
    lines = []
    for c in curves(records):
        entry = {
            "label": c.label, "model": c.model, "task": c.task, "k": c.k, "a": c.a, "b": c.b, "d": c.d, "P": c.P,
            "variant": c.variant, "depths": c.depths.tolist(), "n_seeds": len(c.seeds), "mean_loss": c.mean.tolist(),
            "all_converged": c.all_converged, "n_unconverged": c.n_unconverged, "fits": {},
        }
        lines.append(f"{c.label}: depths {', '.join(str(int(L)) for L in c.depths)}; {len(c.seeds)} seed(s)"
                     + ("" if c.all_converged else f"; {c.n_unconverged} run(s) not converged"))
        for kind in kinds:
            f = fit_curve(c, kind, n_boot=n_boot)
            entry["fits"][kind] = f
            name = "L0 + c L^-alpha" if kind == "offset" else "c L^-alpha"
            if f is None:
                lines.append(f"  {name}: too few depths")
                continue
            if "error" in f:
                lines.append(f"  {name}: fit failed ({f['error']})")
                continue
            p, se = f["params"], f["se"]
            txt = ", ".join(f"{k} = {_fmt(p[k], se.get(k))}" for k in p) + f"; R^2 = {_fmt(f['r2'])}"
            if "alpha_one" in f:
                txt += f"; ΔAIC(alpha=1 − free) = {_fmt(f['alpha_one']['delta_aic'])}"
            if "bootstrap" in f:
                lo, hi = f["bootstrap"]["intervals"]["alpha"]
                txt += f"; alpha 95% bootstrap [{_fmt(lo)}, {_fmt(hi)}]"
            lines.append(f"  {name}: {txt}")
        out["curves"].append(entry)
    if not out["curves"]:
        lines.append("no finished runs match")
    emit(out, args.json, "\n".join(lines))
    return 0
