"""``depthscale reproduce --preset smoke|cpu|paper``: sweep, fits, claims and report in one go."""

from __future__ import annotations

import time
from importlib import resources
from pathlib import Path

from depthscale.derivations.cli import emit
from depthscale.derivations.commands.report import add_report_options, check_contexts, check_out, claims_text, write

PRESETS = ("smoke", "cpu", "protocol", "paper")
# Contexts for the theory Monte Carlo per preset: (linear floors at the sweep's scales, paper's five floors).
THEORY_CONTEXTS = {"smoke": (500, 300), "cpu": (3000, 3000), "protocol": (3000, 3000), "paper": (3000, 3000)}


def preset_path(name: str):
    return resources.files("depthscale.derivations").joinpath("presets", f"{name}.toml")


def register(sub) -> None:
    p = sub.add_parser("reproduce", help="run a preset end to end: sweep, fits, claims, report")
    p.add_argument("--preset", required=True, help="smoke, cpu, protocol or paper")
    p.add_argument("--store", default=None, help="results store (default: OUT/store.sqlite)")
    p.add_argument("--executor", default="process", help="process, serial or dask")
    p.add_argument("--workers", type=int, default=None, help="process-pool size (default: all cores)")
    p.add_argument("--scheduler", default=None, help="dask scheduler address, e.g. tcp://host:8786 (implies --executor dask)")
    p.add_argument("--retry-failed", action="store_true")
    p.add_argument("--budget", default=None, metavar="DURATION",
                   help="time budget such as 2h or 90m for the sweep: start no run that would not finish in it; rerun to continue")
    p.add_argument("--quiet", action="store_true", help="no progress output")
    add_report_options(p)
    p.set_defaults(func=handle, floor_contexts=None, reference_contexts=None)


def handle(args) -> int:
    from depthscale.sims.grid import load_grid
    from depthscale.sims.store import Store
    from depthscale.sims.sweeps import sweep
    from depthscale.theory.validate import check_choice, check_int

    check_choice("preset", args.preset, PRESETS)
    out = check_out(args.out)
    fc, rc = THEORY_CONTEXTS[args.preset]
    args.floor_contexts = fc if args.floor_contexts is None else args.floor_contexts
    args.reference_contexts = rc if args.reference_contexts is None else args.reference_contexts
    check_contexts(args)
    executor = "dask" if args.scheduler else args.executor
    check_choice("executor", executor, ("process", "serial", "dask"))
    if args.workers is not None:
        check_int("workers", args.workers, lo=1)
    store_path = Path(args.store) if args.store else out / "store.sqlite"
    if store_path.exists() and not store_path.is_file():
        raise ValueError(f"store={str(store_path)!r}: must be a file path")
    from depthscale.sims.budget import parse_duration

    budget = parse_duration(args.budget) if args.budget is not None else None
    with preset_path(args.preset).open("rb") as fh:
        import tomllib

        runs = load_grid(tomllib.load(fh))
    t0 = time.perf_counter()
    out.mkdir(parents=True, exist_ok=True)
    with Store(store_path) as st:
        res = sweep(runs, st, executor=executor, workers=args.workers, scheduler=args.scheduler,
                    retry_failed=args.retry_failed, quiet=args.quiet, budget=budget)
        records = list(st.records())
    result = write(records, args, title=f"depthscale reproduce --preset {args.preset}", preset=args.preset,
                   runtime=time.perf_counter() - t0)
    result["sweep"] = {k: v for k, v in vars(res).items() if isinstance(v, (int, float, str))} if hasattr(res, "__dict__") else str(res)
    result["store"] = str(store_path)
    emit(result, args.json, claims_text(result) + f"\nstore: {store_path}")
    return 0
