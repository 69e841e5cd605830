"""``depthscale report``: a report (Markdown, HTML, LaTeX) from a results store."""

from __future__ import annotations

from pathlib import Path

from ..app import check_in_store, check_out_dir, emit


def add_report_options(p, floor_default: str = "3000", reference_default: str = "3000") -> None:
    p.add_argument("--out", default="report", help="output directory (created; default: report)")
    p.add_argument(
        "--floor-contexts",
        type=int,
        default=3000,
        help=f"Monte Carlo contexts for the linear floors, 10..10000000 (default {floor_default})",
    )
    p.add_argument(
        "--reference-contexts",
        type=int,
        default=3000,
        help="contexts for recomputing the paper's five top-2 floors at d=128, P=1024, 0 (skip) or 10..10000000"
        f" (default {reference_default})",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object (claims and paths)")


def check_out(out: str, store) -> Path:
    """The report directory: checked (exists and writable, or creatable, not the current directory,
    which the report's swap would replace, nor holding in its place an entry the report writes, nor
    one that is the store, ``store``) before anything is computed."""
    from ....sims._outputs import refuse_replacing_inputs, store_inputs
    from ...report.publish import REPORT_FILES, check_folder

    path = check_out_dir("out", out)
    check_folder("out", path)
    refuse_replacing_inputs("out", path, store_inputs("store", store), owned=REPORT_FILES)
    return path


CONTEXTS_MAX = 10_000_000


def check_contexts(args, given_only: bool = False) -> None:
    """The Monte Carlo sizes of a report; ``given_only``: skip those not given (None: a study's default)."""
    from ....theory._validate import check_int

    # at most 10^7 contexts, as --contexts of the floors: the Monte Carlo then holds about 4.4 GiB at
    # the paper's d and P, and a larger count is refused here, before any store is read or created
    if not (given_only and args.floor_contexts is None):
        check_int("floor-contexts", args.floor_contexts, lo=10, hi=CONTEXTS_MAX)
    if not (given_only and args.reference_contexts is None):
        check_int("reference-contexts", args.reference_contexts, lo=0, hi=CONTEXTS_MAX)
        if 0 < args.reference_contexts < 10:
            raise ValueError(f"reference-contexts={args.reference_contexts}: must be 0 (skip) or >= 10")


def write(
    records,
    args,
    title: str,
    preset: str = "",
    runtime: float = 0.0,
    missing: str | None = None,
    load_arrays=None,
    study=None,
) -> dict:
    """:func:`~depthscale.derivations.report.from_records.report_from_records` with the options of
    ``args``; ``study`` (a :class:`~depthscale.derivations.study.Study`): the report of its preset."""
    from ...report.from_records import report_from_records

    return report_from_records(
        records,
        args.out,
        title,
        floor_contexts=args.floor_contexts,
        reference_contexts=args.reference_contexts,
        preset=preset,
        runtime=runtime,
        missing=missing,
        load_arrays=load_arrays,
        study=study,
    )


def preset_choices() -> str:
    """The names ``--preset`` takes, read from the studies' preset folders without importing a study
    (a --help must not wait for SciPy), for the options' help."""
    from ...study import quick_names

    names = quick_names()
    return ", ".join(sorted(names)) if names else "see depthscale reproduce --preset ? (an unknown name lists them)"


def register(sub) -> None:
    p = sub.add_parser("report", help="write report.md, report.html and report.tex from a results store")
    p.add_argument("--store", required=True, help="an existing results store (opened read-only)")
    p.add_argument(
        "--preset",
        default=None,
        help="the preset (or study) the store holds: its study's claims, sections and answer "
        f"(default: every registered study's claims, no answer): {preset_choices()}",
    )
    add_report_options(p)
    p.set_defaults(func=handle)


def handle(args) -> int:
    check_out(args.out, args.store)
    check_contexts(args)
    check_in_store("store", args.store)
    from ...study import find_preset  # after the checks: it imports every study

    study, preset = find_preset(args.preset) if args.preset is not None else (None, "")
    from ....sims.store import Store  # after the checks: it imports NumPy

    with Store(args.store, mode="read") as st:  # read-only: a foreign or empty file is refused untouched
        records = list(st.records())
        out = write(
            records,
            args,
            title=f"depthscale report: {Path(args.store).name}",
            preset=preset,
            load_arrays=st.load_arrays,
            study=study,
        )
    emit(out, args.json, claims_text(out))
    return 0


def claims_text(out: dict) -> str:
    lines = [f"{'verdict':<11} claim"]
    lines += [
        f"{c['verdict']:<11} {c['id']}: measured {c['measured_text']} (expected {c['expected_text']})"
        for c in out["claims"]
    ]
    lines += [f"wrote {p}" for p in out["paths"].values()]
    return "\n".join(lines)
