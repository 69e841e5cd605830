"""``depthscale reproduce --preset NAME``: sweep, fits, claims and report in one go.

``NAME`` is a preset of a registered study, or a study's name (its first preset); the studies and
their presets are found through :mod:`depthscale.derivations.study` (an unknown name lists them).

Every input (preset, output directory, store, executor) is checked before anything is created.
Ctrl-C stops like ``sweep``: runs in flight are lost, the store keeps every finished run, no
report is written, exit status 130; rerunning the same command resumes. A ``--budget`` too short
to start any missing run writes no report either and exits with status 1. A report built from a
store that lacks runs of the preset (failed ones) says so in its first summary line.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from ..app import check_out_file, emit
from .report import add_report_options, check_contexts, check_out, claims_text, preset_choices, write
from .sweep import add_run_options, check_run_options, run_sweep, with_engine


def presets() -> list[str]:
    """Every preset of every registered study."""
    from ...study import preset_names

    return preset_names()


def preset_path(name: str):
    """The TOML file of a preset (or of a study's first preset)."""
    from ...study import find_preset

    s, preset = find_preset(name)
    return s.preset_path(preset)


def register(sub) -> None:
    p = sub.add_parser("reproduce", help="run a preset end to end: sweep, fits, claims, report")
    p.add_argument("--preset", required=True, help="a preset or a study's name: " + preset_choices())
    p.add_argument(
        "--store",
        default=None,
        help="results store: an existing one (resumed), or a new file (default: OUT/store.sqlite)",
    )
    add_run_options(p)
    p.add_argument("--quiet", action="store_true", help="no progress bar or progress lines")
    add_report_options(p, floor_default="the study's, per preset", reference_default="the study's, per preset")
    p.set_defaults(func=handle, floor_contexts=None, reference_contexts=None)


def preset_runs(name: str) -> list:
    """The ``(RunConfig, seed)`` list of a preset grid."""
    import tomllib

    from ....sims.grid import load_grid

    with preset_path(name).open("rb") as fh:
        return load_grid(tomllib.load(fh))


def missing_sentence(preset: str, runs, statuses: dict) -> str | None:
    """First summary line of a report whose store lacks runs of the preset, else None.

    >>> missing_sentence("smoke", [], {}) is None
    True
    """
    from ....sims.grid import run_key
    from ....sims.store import is_finished

    keys = {run_key(cfg, seed) for cfg, seed in runs}
    have = sum(is_finished(statuses.get(k)) for k in keys)
    if have == len(keys):
        return None
    return (
        f"Incomplete: {have} of {len(keys)} runs of the preset {preset!r} finished; the other {len(keys) - have}"
        " failed or did not run, and the claims below rest only on the runs present."
    )


def handle(args) -> int:
    from ...study import check_preset_name, find_preset

    # every argument is checked before a study is loaded (it imports SciPy and Matplotlib: seconds)
    check_contexts(args, given_only=True)
    check_preset_name(args.preset)
    from ....sims._outputs import STORE_EXTRA, check_name_fits
    from ....sims.config import CONTEXTS_VERSION
    from ....sims.store import Store, check_store_file
    from ....sims.sweeps import plan

    store_path = Path(args.store) if args.store else Path(args.out) / "store.sqlite"
    out = check_out(args.out, store_path)
    executor, budget = check_run_options(args)
    if store_path.absolute().parent != out.absolute() or out.is_dir():  # a store inside a new OUT is new too
        check_store_file(store_path, "write", CONTEXTS_VERSION)
    if not store_path.exists():  # a new store: its folder must take it, and its name, before OUT is created
        check_out_file("store", store_path)
        check_name_fits("store", store_path, STORE_EXTRA)
    study, args.preset = find_preset(args.preset)
    fc, rc = study.contexts_of(args.preset)
    args.floor_contexts = fc if args.floor_contexts is None else args.floor_contexts
    args.reference_contexts = rc if args.reference_contexts is None else args.reference_contexts
    check_contexts(args)
    runs = with_engine(preset_runs(args.preset), args.engine)
    # inputs are good: now create the directory and the store
    t0 = time.perf_counter()
    out.mkdir(parents=True, exist_ok=True)
    with Store(store_path, contexts=CONTEXTS_VERSION, mode="write") as st:
        res, logged = run_sweep(runs, st, args, executor, budget)
        statuses = st.statuses()
        if res.out_of_budget and res.done + res.failed == 0:
            # nothing ran: a report would only restate the store; say so and leave the store to resume
            sys.stderr.write(
                f"depthscale: budget {args.budget}: too short to start any of the {res.not_started} missing run(s) "
                f"of the preset (the first is estimated to take longer); no report written; the store {store_path} "
                "is kept: rerun with a longer budget\n"
            )
            return 1
        if res.out_of_budget:
            sys.stderr.write(
                f"depthscale: budget reached: {res.not_started} run(s) of the preset not started; "
                "rerun the same command to continue\n"
            )
        if res.interrupted:
            left, have, failed = plan(runs, st)
            sys.stderr.write(
                f"depthscale: interrupted: {have} of {have + failed + len(left)} runs finished in {store_path}, "
                f"{res.lost} in flight lost, no report written; rerun the same command to resume\n"
            )
            return 130
        records = list(st.records())
    if logged:
        sys.stderr.write("depthscale: sweep finished; writing the report (fits, theory Monte Carlo)\n")
    try:
        with Store(store_path, mode="read") as st:
            result = write(
                records,
                args,
                title=f"depthscale reproduce --preset {args.preset}",
                preset=args.preset,
                study=study,
                runtime=time.perf_counter() - t0,
                missing=missing_sentence(args.preset, runs, statuses),
                load_arrays=st.load_arrays,
            )
    except KeyboardInterrupt:
        sys.stderr.write(
            f"depthscale: interrupted while writing the report; the store {store_path} holds every "
            "finished run: rerun the same command to write it\n"
        )
        return 130
    result["sweep"] = res.to_dict()
    result["store"] = str(store_path)
    emit(result, args.json, claims_text(result) + f"\nstore: {store_path}")
    return 1 if (res.failed or res.broken) else 0
