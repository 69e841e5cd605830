"""``depthscale fit --store FILE``: fit every curve of a results store.

A curve is every ``ok`` run that shares all settings but depth and seed. Each is fitted with
``R_L = L0 + c L^-alpha`` (with the alpha = 1 comparison) and the pure power law ``c L^-alpha`` on
its seed-mean losses, with bootstrap intervals over seeds when there are at least three seeds.
Every fit says whether its parameters are identified (``"identified"`` in ``--json``, and
"not identified" with the reason in the text); an unidentified fit shows no numbers.
"""

from __future__ import annotations

from ..app import emit


def register(sub) -> None:
    p = sub.add_parser("fit", help="fit scaling laws to every curve (loss against depth) in a results store")
    p.add_argument("--store", required=True, help="an existing results store (opened read-only)")
    p.add_argument("--model", default=None, help="only this model (linear or softmax)")
    p.add_argument("--task", default=None, help="only this task (easy-exact, easy-fresh or topk)")
    p.add_argument(
        "--kind", default="offset,power", help="comma list of fits: offset (L0 + c L^-alpha), power (c L^-alpha)"
    )
    p.add_argument("--n-boot", type=int, default=200, help="bootstrap replicates over seeds (0: none)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=handle)


def handle(args) -> int:
    from ....theory._choices import MODELS, TASKS
    from ....theory._validate import check_choice, check_int
    from ..app import check_in_store, parse_list

    if args.model is not None:
        check_choice("model", args.model, MODELS)
    if args.task is not None:
        check_choice("task", args.task, TASKS)
    kinds = parse_list("kind", args.kind, str)
    n_boot = check_int("n-boot", args.n_boot, lo=0, hi=1_000_000)
    check_in_store("store", args.store)  # every check so far before NumPy is imported
    import numpy as np  # here, not at module level: `depthscale --help` stays free of numpy

    from ....sims.store import Store

    with Store(args.store, mode="read") as st:  # read-only: a foreign or empty file is refused untouched
        records = list(st.records(status="ok", model=args.model, task=args.task))
    from ...analysis.curve import FIT_KINDS, curves  # scipy: only once the store is good

    for k in kinds:
        check_choice("kind", k, tuple(FIT_KINDS))
    out = {"store": args.store, "curves": []}
    lines = []
    for c in curves(records):
        entry = {
            "label": c.label,
            "model": c.model,
            "task": c.task,
            "k": c.k,
            "a": c.a,
            "b": c.b,
            "d": c.d,
            "P": c.P,
            "variant": c.variant,
            "depths": c.depths.tolist(),
            "n_seeds": len(c.seeds),
            "mean_loss": [float(v) if np.isfinite(v) else None for v in c.mean],
            "all_converged": c.all_converged,
            "n_unconverged": c.n_unconverged,
            "fits": {},
        }
        lines.append(
            f"{c.label}: depths {', '.join(str(int(L)) for L in c.depths)}; {len(c.seeds)} seed(s)"
            + ("" if c.all_converged else f"; {c.n_unconverged} run(s) not converged")
        )
        for kind in kinds:
            f = c.fit(kind, n_boot=n_boot)
            entry["fits"][kind] = f.to_dict()
            lines.append(f"  {FIT_KINDS[kind][0]}: {fit_text(f)}")
        out["curves"].append(entry)
    if not out["curves"]:
        lines.append("no finished runs match")
    emit(out, args.json, "\n".join(lines))
    return 0


def fit_text(f) -> str:
    """One line for a fit: its parameters, or why there are none."""
    import numpy as np

    from ...formatting import format_estimate, format_value

    if f.failure:
        return f"no fit ({f.failure})"
    if not f.identified:
        return f"not identified ({f.reason})"
    txt = (
        ", ".join(f"{k} = {format_estimate(f.params[k], f.se[k])}" for k in f.params) + f"; R^2 = {format_value(f.r2)}"
    )
    if np.isfinite(f.delta_aic_alpha_one):
        txt += f"; ΔAIC(alpha=1 − free) = {format_value(f.delta_aic_alpha_one)}"
    if f.bootstrap is not None:
        lo, hi = f.bootstrap.intervals["alpha"]
        txt += f"; alpha 95% bootstrap [{format_value(lo)}, {format_value(hi)}]"
    return txt
