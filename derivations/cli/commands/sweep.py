"""``depthscale sweep GRID.toml --store FILE``: run a grid of simulations into a results store.

Everything (the grid, the executor settings, the store path) is validated before the store is
opened, so bad input leaves the store untouched. Rerunning the same command resumes: finished
runs are skipped, failed ones are retried only with ``--retry-failed``.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

from ..app import emit


def register(sub) -> None:
    p = sub.add_parser("sweep", help="run a grid of simulations (TOML) into a results store")
    p.add_argument("grid", help="grid file (TOML): [task], [model], [train] fields or lists, seeds; or [[grid]] blocks")
    p.add_argument(
        "--store",
        required=True,
        help="results store: an existing one (resumed), or a path that does not exist or is an empty file (created)",
    )
    add_run_options(p)
    p.add_argument(
        "--run-fn",
        default=None,
        metavar="MODULE:FUNCTION",
        help="advanced: run function run(config, seed) -> record (default: the engine's runner)",
    )
    p.add_argument(
        "--no-lockstep",
        action="store_true",
        help="train each depth on its own instead of the depths of a (task, protocol, seed) together",
    )
    p.add_argument(
        "--quiet",
        action="store_true",
        help="no progress bar (on a terminal) and no per-run lines (when stderr is a file)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=handle)


def add_run_options(p) -> None:
    """The options ``sweep`` and ``reproduce`` share: the engine, where runs execute, retries and the time budget."""
    p.add_argument(
        "--engine",
        default=None,
        help="numba or jax: the engine of every run (default: as the grid says, numba where it says nothing)",
    )
    p.add_argument("--executor", default=None, help="process (default), serial or dask")
    p.add_argument("--workers", type=int, default=None, help="process-pool size (default: all cores)")
    p.add_argument(
        "--scheduler", default=None, help="dask scheduler address, e.g. tcp://host:8786 (implies --executor dask)"
    )
    p.add_argument("--retry-failed", action="store_true", help="rerun runs recorded as failed")
    p.add_argument(
        "--budget",
        default=None,
        metavar="DURATION",
        help="time budget such as 2h, 90m or 1h30m: start no run that would not finish in it; rerun to continue",
    )
    p.add_argument(
        "--keep-parameters",
        action="store_true",
        help="store each run's trained parameters and full-precision per-context errors (default: compact)",
    )


def resolve_run_fn(spec: str | None):
    """``module:function`` -> the callable (an alternative run function; default: the engine's runner)."""
    if spec is None:
        return None
    mod, sep, name = spec.partition(":")
    if not sep or not mod or not name:
        raise ValueError(f"run-fn={spec!r}: must be module:function")
    try:
        fn = getattr(importlib.import_module(mod), name)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"run-fn={spec!r}: must name an importable function ({exc})") from None
    if not callable(fn):
        raise ValueError(f"run-fn={spec!r}: must be callable")
    return fn


def check_executor(executor: str | None, workers: int | None, scheduler: str | None) -> str:
    """Validate the executor options of ``sweep`` and ``reproduce`` before anything is created.

    Returns the executor's name. For dask, the scheduler must be an address ``[tcp://]host:port``
    that accepts a connection now, so an unreachable one fails before the store is made.
    """
    from ....sims.sweeps import EXECUTORS
    from ....theory._validate import check_choice, check_int

    executor = executor or ("dask" if scheduler else "process")
    check_choice("executor", executor, EXECUTORS)
    if scheduler and executor != "dask":
        raise ValueError(f"scheduler={scheduler!r}: only used with --executor dask")
    if workers is not None:
        check_int("workers", workers, lo=1, hi=4096)
        if executor != "process":
            raise ValueError(f"workers={workers}: only used with --executor process")
    if executor == "dask":
        if not scheduler:
            raise ValueError("scheduler=None: --executor dask needs --scheduler tcp://host:port")
        _check_reachable(scheduler)
        import importlib.util

        if importlib.util.find_spec("distributed") is None:
            raise ValueError("executor='dask': must have dask.distributed installed (pip install 'depthscale[dask]')")
    return executor


def check_run_options(args) -> tuple[str, float | None]:
    """The validated ``add_run_options`` values: the executor's name and the budget in seconds (or None)."""
    from ....sims.budget import parse_duration

    executor = check_executor(args.executor, args.workers, args.scheduler)
    return executor, parse_duration(args.budget) if args.budget is not None else None


def with_engine(runs, engine: str | None) -> list:
    """``runs`` (``(RunConfig, seed)`` pairs) on ``engine`` (``None``: as they are); ``ValueError`` for
    an unknown engine, or JAX missing."""
    import dataclasses

    if engine is None:
        return list(runs)
    from ....sims.engines import get_engine

    get_engine(engine).check_available()
    return [(dataclasses.replace(cfg, model=dataclasses.replace(cfg.model, engine=engine)), seed) for cfg, seed in runs]


def run_sweep(runs, store, args, executor: str, budget: float | None, **kw):
    """Sweep ``runs`` into the open ``store`` with the ``add_run_options`` values and ``--quiet``.

    With stderr not a terminal (a log file), progress lines replace the progress bar: the runs
    already done, one line per finished run, and a heartbeat while runs are in progress
    (:class:`depthscale.sims.progress.RunLines`). Returns the sweep's result and whether such lines
    were written.
    """
    from ....sims.progress import interactive
    from ....sims.sweeps import sweep

    res = sweep(
        runs,
        store,
        executor=executor,
        workers=args.workers,
        scheduler=args.scheduler,
        retry_failed=args.retry_failed,
        quiet=args.quiet,
        lines=True,
        budget=budget,
        keep_parameters=args.keep_parameters,
        **kw,
    )
    return res, not args.quiet and not interactive(sys.stderr)


def _check_reachable(address: str, timeout: float = 5.0) -> None:
    import socket

    rest = address.split("://", 1)[1] if "://" in address else address
    host, sep, port = rest.rstrip("/").rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"scheduler={address!r}: must be an address tcp://host:port")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as exc:
        raise ValueError(f"scheduler={address!r}: must be a reachable dask scheduler ({exc.strerror or exc})") from None


def never_decides(runs) -> str:
    """Why no curve of a grid of ``(config, seed)`` runs can ever decide a depth-law claim under the
    decision rule (:func:`~depthscale.derivations.claims.verdicts.decisive`: seeds, depths and their
    span, evaluation contexts), or ``""`` when at least one curve can."""
    from dataclasses import replace

    from ...claims.verdicts import MIN_DEPTHS, MIN_EVAL, MIN_SEEDS, MIN_SPAN

    by_curve: dict = {}
    for config, seed in runs:
        key = replace(config, model=replace(config.model, depth=1))
        depths, seeds = by_curve.setdefault(key, (set(), set()))
        depths.add(config.model.depth)
        seeds.add(seed)
    why = []
    for config, (depths, seeds) in by_curve.items():
        short = []
        if len(seeds) < MIN_SEEDS:
            short.append(f"{len(seeds)} seed(s) < {MIN_SEEDS}")
        if len(depths) < MIN_DEPTHS or max(depths) / min(depths) < MIN_SPAN:
            short.append(f"depths {sorted(depths)} (need >= {MIN_DEPTHS} spanning x{MIN_SPAN})")
        if config.train.eval_contexts < MIN_EVAL:
            short.append(f"{config.train.eval_contexts} evaluation contexts < {MIN_EVAL}")
        if not short:
            return ""
        why.append("; ".join(short))
    return min(why, key=len) if why else ""


def handle(args) -> int:
    from ....sims._outputs import refuse_store_side_inputs
    from ....sims.config import CONTEXTS_VERSION
    from ....sims.grid import load_grid
    from ....sims.store import Store, check_store_file

    executor, budget = check_run_options(args)
    store_path = Path(args.store)
    # a store, or a side file of it (-wal, -journal, -shm, -lock, .snapshots/), in the grid's place loses the grid
    refuse_store_side_inputs("store", args.store, [("grid", args.grid)])
    run_fn = resolve_run_fn(args.run_fn)
    # a new path, an empty file or a depthscale store (on this engine's contexts); else untouched
    contexts = CONTEXTS_VERSION if run_fn is None else None
    check_store_file(args.store, "write", contexts)
    runs = with_engine(load_grid(args.grid), args.engine)
    if run_fn is None:  # the engine's runs: refuse a grid whose largest run cannot fit in memory
        from ....sims.memory import check_memory_of

        for config in {cfg for cfg, _ in runs}:
            check_memory_of(config)
    if why := never_decides(runs):
        print(f"depthscale: warning: this grid can never decide a depth-law claim: {why}", file=sys.stderr)
    with Store(store_path, contexts=contexts, mode="write") as st:
        res, _ = run_sweep(runs, st, args, executor, budget, run_fn=run_fn, lockstep=not args.no_lockstep)
        n_failed_total = len(st.keys("failed"))
    out = {"store": str(store_path), **res.to_dict(), "failed_in_store": n_failed_total}
    text = (
        f"{res.total} runs in the grid: {res.done} done now, {res.skipped} already done, {res.failed} failed now"
        + (f", {res.skipped_failed} failed earlier (rerun with --retry-failed)" if res.skipped_failed else "")
        + f" ({res.seconds:.1f} s)"
        + (
            f"\ninterrupted: {res.lost} run(s) in flight lost, {res.not_started} not started; rerun to resume"
            + (f" ({res.snapshotted} of those in flight from their snapshots)" if res.snapshotted else "")
            if res.interrupted
            else ""
        )
        + (
            f"\nbudget reached: {res.not_started} run(s) not started; rerun the same command to continue"
            if res.out_of_budget and res.done + res.failed
            else ""
        )
        + (
            f"\nbudget {args.budget}: too short to start any of the {res.not_started} missing run(s) "
            f"({first_run_needs(res)})"
            if res.out_of_budget and not res.done + res.failed
            else ""
        )
        + (f"\nexecutor broke: {res.not_started} run(s) not started; rerun to resume" if res.broken else "")
        + f"\nstore: {store_path}"
    )
    emit(out, args.json, text)
    if res.interrupted:
        return 130
    return 1 if (res.failed or res.broken) else 0


def first_run_needs(res) -> str:
    """What a budget too short to start anything must hold, from a sweep's result: the first run's
    (or lockstep group's) estimate by the cost model and the ``--budget`` that holds it after the
    start-up the sweep already spent.

    >>> from depthscale.sims.sweeps import SweepResult
    >>> first_run_needs(SweepResult(43, 0, 0, 0, 0, 0, False, seconds=2.0, first_held_seconds=190.0))
    'the first run needs about 3.2 min by the cost model; give --budget of at least 4m'
    """
    from ....sims.budget import budget_at_least, duration_text

    if res.first_held_seconds is None:
        return "the first is estimated to take longer"
    need = res.first_held_seconds
    return (
        f"the first run needs about {duration_text(need)} by the cost model; "
        f"give --budget of at least {budget_at_least(need + res.seconds)}"
    )
