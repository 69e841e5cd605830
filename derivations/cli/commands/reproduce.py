"""``depthscale reproduce --preset NAME``: sweep, fits, claims and report in one go.

``NAME`` is a preset of a registered study, or a study's name (its first preset); the studies and
their presets are found through :mod:`depthscale.derivations.study` (an unknown name lists them).
``--set KEY=VALUE`` replaces a setting in every block of the preset (``--set task.d=4 --set
model.depth=[1,2]``): the same sweep, report and study at tiny sizes, a dry run of a preset too large
for the machine at hand; the report's title carries the settings.

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
from .report import (
    add_report_options,
    check_contexts,
    check_out,
    claims_text,
    missing_sentence,
    preset_choices,
    preset_runs,
    preset_title,
    resolve_contexts,
    tell_summary,
    write,
)
from .sweep import add_run_options, check_run_options, first_run_needs, run_sweep, with_engine


def presets() -> list[str]:
    """Every preset of every registered study."""
    from ...study import preset_names

    return preset_names()


def register(sub) -> None:
    p = sub.add_parser("reproduce", help="run a preset end to end: sweep, fits, claims, report")
    p.add_argument("--preset", required=True, help="a preset or a study's name: " + preset_choices())
    p.add_argument(
        "--store",
        default=None,
        help="results store: an existing one (resumed), or a new file (default: OUT/store.sqlite)",
    )
    add_run_options(p)
    p.add_argument(
        "--set",
        action="append",
        default=None,
        metavar="KEY=VALUE",
        help="replace a setting of the preset in every block, KEY seeds or SECTION.FIELD, VALUE a TOML value "
        "(repeatable): a dry run of the same machinery at tiny sizes, e.g. --set task.d=4 --set task.P=32 "
        "--set train.steps=5 --set model.depth=[1,2] --set seeds=[0]",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar or progress lines")
    add_report_options(p, floor_default="the study's, per preset", reference_default="the study's, per preset")
    p.set_defaults(func=handle)


def parse_settings(items) -> dict:
    """``--set KEY=VALUE`` items as ``{KEY: value}``: VALUE read as a TOML value (``4``, ``[1, 2]``,
    ``"jax"``), or as a string when it is none (``jax``); a later KEY replaces an earlier one.

    >>> parse_settings(["task.d=4", "model.depth=[1, 2]", "model.engine=jax"])
    {'task.d': 4, 'model.depth': [1, 2], 'model.engine': 'jax'}
    >>> parse_settings(["task.d"])
    Traceback (most recent call last):
    ...
    ValueError: set='task.d': must be KEY=VALUE, e.g. task.d=4 or model.depth=[1,2]
    """
    import tomllib

    out: dict = {}
    for item in items or ():
        key, sep, text = str(item).partition("=")
        key = key.strip()
        if not sep or not key or not text.strip():
            raise ValueError(f"set={item!r}: must be KEY=VALUE, e.g. task.d=4 or model.depth=[1,2]")
        try:
            out[key] = tomllib.loads(f"v = {text.strip()}")["v"]
        except tomllib.TOMLDecodeError:
            out[key] = text.strip()  # a bare word: a string (an engine's or a schedule's name)
    return out


def set_text(settings: dict) -> str:
    """The ``--set`` options of ``settings`` as a command line would spell them (the report's title).

    >>> set_text({"task.d": 4, "model.depth": [1, 2]})
    ' --set task.d=4 --set model.depth=[1,2]'
    """
    import json

    return "".join(f" --set {k}={json.dumps(v, separators=(',', ':'))}" for k, v in settings.items())


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
    resolve_contexts(args, study, args.preset)  # as `report --preset` resolves them: one report
    settings = parse_settings(getattr(args, "set", None))
    # a preset without --set is read as before (a caller may stand its own preset_runs(name) in)
    runs = with_engine(preset_runs(args.preset, settings) if settings else preset_runs(args.preset), args.engine)
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
                f"of the preset ({first_run_needs(res)}); no report written; the store {store_path} "
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
                title=preset_title(args.preset) + set_text(settings),
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
    tell_summary(result)
    return 1 if (res.failed or res.broken) else 0
