"""``depthscale fit --store FILE``: fit every curve of a results store.

A curve is every ``ok`` run that shares all settings but depth and seed. Each is fitted with
``R_L = L0 + c L^-alpha`` (with the alpha = 1 comparison) and the pure power law ``c L^-alpha`` on
its seed-mean losses, with bootstrap intervals over seeds when there are at least three seeds.
Every fit says whether its parameters are identified (``"identified"`` in ``--json``, and
"not identified" with the reason in the text); an unidentified fit shows no numbers. ``--L-min`` and
``--L-max`` restrict every fit to a depth window (each fit names the depths it used), ``--where
PATH=VALUE`` selects runs by any configuration field (``--where task.d=16``).
"""

from __future__ import annotations

from ..app import emit


def register(sub) -> None:
    p = sub.add_parser("fit", help="fit scaling laws to every curve (loss against depth) in a results store")
    p.add_argument("--store", required=True, help="an existing results store (opened read-only)")
    add_model_task_options(p)
    p.add_argument(
        "--kind", default="offset,power", help="comma list of fits: offset (L0 + c L^-alpha), power (c L^-alpha)"
    )
    p.add_argument("--n-boot", type=int, default=200, help="bootstrap replicates over seeds (0: none)")
    add_selection_options(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=handle)


def add_model_task_options(p) -> None:
    """``--model`` and ``--task``: shorthands of ``--where model.model=NAME`` and ``--where task.task=NAME``."""
    p.add_argument("--model", default=None, help="only this model (linear, softmax or a registered model)")
    p.add_argument("--task", default=None, help="only this task (easy-exact, easy-fresh, topk or a registered task)")


def add_selection_options(p) -> None:
    """``--where`` (runs) and ``--L-min``/``--L-max`` (the depth window), shared with ``check``."""
    p.add_argument(
        "--where",
        action="append",
        default=[],
        metavar="PATH=VALUE",
        help="only runs whose config field PATH (e.g. task.d, model.qk) equals VALUE; repeat for more "
        "fields, VALUE may be a comma list (task.a=0.5,1.5)",
    )
    p.add_argument("--L-min", dest="L_min", type=float, default=None, help="fit only depths L >= L_MIN")
    p.add_argument("--L-max", dest="L_max", type=float, default=None, help="fit only depths L <= L_MAX")


def _value(text: str):
    """A --where value as the config holds it: an int, a float, true/false, else the text."""
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def parse_where(items) -> dict:
    """``{path: [values]}`` from ``--where PATH=VALUE`` options (checked as ``Store.records`` checks them).

    >>> parse_where(["task.d=16", "task.a=0.5,1.5", "model.qk=tied"])
    {'task.d': [16], 'task.a': [0.5, 1.5], 'model.qk': ['tied']}
    >>> parse_where(["task.d"])
    Traceback (most recent call last):
    ...
    ValueError: where='task.d': must be PATH=VALUE, a config field and its value (task.d=16)
    """
    out: dict = {}
    for item in items or ():
        path, sep, text = item.partition("=")
        if not sep or not path.strip() or not text.strip():
            raise ValueError(f"where={item!r}: must be PATH=VALUE, a config field and its value (task.d=16)")
        out.setdefault(path.strip(), []).extend(_value(t.strip()) for t in text.split(","))
    return out


def check_window(args) -> tuple:
    """``(L_min, L_max)`` of the options, checked (one line naming the option on a bad value)."""
    import math

    for name in ("L_min", "L_max"):
        v = getattr(args, name)
        if v is not None and not (math.isfinite(v) and v > 0):
            raise ValueError(f"{name.replace('_', '-')}={v!r}: must be a depth > 0")
    if args.L_min is not None and args.L_max is not None and args.L_min > args.L_max:
        raise ValueError(f"L-min={args.L_min!r}: must be <= L-max ({args.L_max!r})")
    return args.L_min, args.L_max


def handle(args) -> int:
    from ....theory._validate import check_choice, check_int
    from ..app import check_in_store, parse_list

    kinds = parse_list("kind", args.kind, str)
    n_boot = check_int("n-boot", args.n_boot, lo=0, hi=1_000_000)
    L_min, L_max = check_window(args)
    where = parse_where(args.where)
    check_in_store("store", args.store)  # every check so far before NumPy is imported
    import numpy as np  # here, not at module level: `depthscale --help` stays free of numpy

    from ....sims.store import Store

    with Store(args.store, mode="read") as st:  # read-only: a foreign or empty file is refused untouched
        records = list(st.records(status="ok", where=where, model=args.model, task=args.task))
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
        # a loss at or below zero (a hand edit, or a broken run function) cannot be on a depth law:
        # the fits leave those runs out, and the summary says which
        dropped = [int(L) for L in c.depths[np.asarray(c.loss <= 0).any(axis=0)]]
        entry["depths_left_out"] = dropped
        lines.append(
            f"{c.label}: depths {', '.join(str(int(L)) for L in c.depths)}; {len(c.seeds)} seed(s)"
            + ("" if c.all_converged else f"; {c.n_unconverged} run(s) not converged")
            + (f"; loss <= 0 at depth(s) {', '.join(map(str, dropped))}: left out of the fits" if dropped else "")
        )
        for kind in kinds:
            f = c.fit(kind, n_boot=n_boot, L_min=L_min, L_max=L_max)
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

    from ...analysis.display import depths_text
    from ...formatting import format_estimate, format_value

    if f.failure:
        return f"no fit ({f.failure})"
    at = f"; {depths_text(f)}" if f.window is not None else ""  # the depths used, when a window chose them
    if not f.identified:
        return f"not identified ({f.reason}){at}"
    txt = (
        ", ".join(f"{k} = {format_estimate(f.params[k], f.se[k])}" for k in f.params) + f"; R^2 = {format_value(f.r2)}"
    )
    if np.isfinite(f.delta_aic_alpha_one):
        txt += f"; ΔAIC(alpha=1 − free) = {format_value(f.delta_aic_alpha_one)}"
    if f.bootstrap is not None:
        lo, hi = f.bootstrap.intervals["alpha"]
        txt += f"; alpha 95% bootstrap [{format_value(lo)}, {format_value(hi)}]"
    return txt + at
