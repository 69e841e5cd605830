"""``depthscale report``: a report (Markdown, HTML, LaTeX) from a results store."""

from __future__ import annotations

from pathlib import Path

from ..app import check_in_store, check_out_dir, emit

# what the contexts options say when not given: a preset's report uses its study's sizes, as
# reproduce does, so that `report --preset P` rebuilds the report `reproduce --preset P` wrote
PRESET_DEFAULT = "the preset's study's, as reproduce uses; 3000 without --preset"


def add_report_options(p, floor_default: str = PRESET_DEFAULT, reference_default: str = PRESET_DEFAULT) -> None:
    """``--out``, the Monte Carlo sizes (None when not given: :func:`resolve_contexts` fills them)
    and ``--json``, shared by ``report`` and ``reproduce``."""
    p.add_argument("--out", default="report", help="output directory (created; default: report)")
    p.add_argument(
        "--floor-contexts",
        type=int,
        default=None,
        help=f"Monte Carlo contexts for the linear floors, 10..10000000 (default {floor_default})",
    )
    p.add_argument(
        "--reference-contexts",
        type=int,
        default=None,
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


def resolve_contexts(args, study=None, preset: str = "") -> None:
    """Fill the Monte Carlo sizes not given on the command line: those of ``preset``'s ``study``
    (``Study.contexts_of``), the ones ``reproduce`` uses, else the defaults; then check them."""
    from ...study import DEFAULT_CONTEXTS

    fc, rc = study.contexts_of(preset) if study is not None else DEFAULT_CONTEXTS
    args.floor_contexts = fc if args.floor_contexts is None else args.floor_contexts
    args.reference_contexts = rc if args.reference_contexts is None else args.reference_contexts
    check_contexts(args)


def preset_title(preset: str) -> str:
    """The title of a preset's report, the same whether ``reproduce`` wrote it or ``report`` rebuilt
    it from the store.

    >>> preset_title("smoke")
    'depthscale reproduce --preset smoke'
    """
    return f"depthscale reproduce --preset {preset}"


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
    import time

    t0 = time.perf_counter()
    check_out(args.out, args.store)
    check_contexts(args, given_only=True)
    check_in_store("store", args.store)
    from ...study import find_preset  # after the checks: it imports every study

    study, preset = find_preset(args.preset) if args.preset is not None else (None, "")
    resolve_contexts(args, study, preset)  # a preset's report: every setting reproduce uses
    from ....sims.store import Store  # after the checks: it imports NumPy

    with Store(args.store, mode="read") as st:  # read-only: a foreign or empty file is refused untouched
        records = list(st.records())
        out = write(
            records,
            args,
            title=preset_title(preset) if preset else f"depthscale report: {Path(args.store).name}",
            preset=preset,
            runtime=time.perf_counter() - t0,
            missing=preset_missing(preset, st.statuses()) if preset else None,
            load_arrays=st.load_arrays,
            study=study,
        )
    emit(out, args.json, claims_text(out))
    tell_summary(out)
    return 0


def preset_missing(preset: str, statuses: dict) -> str | None:
    """The sentence ``reproduce`` heads a report with when the store lacks runs of ``preset``
    (:func:`missing_sentence`), for the preset's runs on the engine the store holds most
    of them on (a store ``reproduce --engine jax`` filled has them under their JAX keys)."""
    import dataclasses

    from ....sims.engines import ENGINES
    from ....sims.grid import run_key
    from ....sims.store import is_finished

    runs = preset_runs(preset)

    def on(engine: str) -> list | None:
        try:
            return [(dataclasses.replace(c, model=dataclasses.replace(c.model, engine=engine)), s) for c, s in runs]
        except ValueError:  # a model or map this engine does not run
            return None

    def finished(rs) -> int:
        return sum(is_finished(statuses.get(run_key(c, s))) for c, s in rs)

    others = (on(e) for e in ENGINES if any(c.model.engine != e for c, _ in runs))
    candidates = [runs] + [rs for rs in others if rs is not None]
    return missing_sentence(preset, max(candidates, key=finished), statuses)


def tell_summary(out: dict, stream=None) -> None:
    """At the end of ``report`` and ``reproduce``, on stderr (beside the claims on stdout, which a
    pipe or ``--json`` may take away): the verdict counts, the report's answer (its first paragraph,
    when the report has one) and the report's path.

    >>> import io
    >>> buf = io.StringIO()
    >>> tell_summary({"claims": [{"verdict": "pass"}, {"verdict": "indicative"}, {"verdict": "pass"}],
    ...               "answer": ["Yes, in these settings."], "paths": {"md": "r/report.md", "html": "r/report.html"}}, buf)
    >>> print(buf.getvalue(), end="")
    depthscale: verdicts: 2 pass, 1 indicative (3 claims)
    depthscale: answer: Yes, in these settings.
    depthscale: report: r/report.md (also r/report.html)
    """
    import sys
    from collections import Counter

    from ...claims.verdicts import VERDICTS

    stream = sys.stderr if stream is None else stream
    counts = Counter(c["verdict"] for c in out["claims"])
    order = [v for v in VERDICTS if counts[v]] + sorted(v for v in counts if v not in VERDICTS)
    tally = ", ".join(f"{counts[v]} {v}" for v in order) or "none"
    lines = [f"verdicts: {tally} ({len(out['claims'])} claims)"]
    if out.get("answer"):
        lines.append(f"answer: {out['answer'][0]}")
    paths = out["paths"]
    also = [paths[k] for k in ("html", "tex") if k in paths]
    lines.append(f"report: {paths['md']}" + (f" (also {', '.join(also)})" if also else ""))
    stream.write("".join(f"depthscale: {line}\n" for line in lines))
    stream.flush()


def claims_text(out: dict) -> str:
    lines = [f"{'verdict':<11} claim"]
    lines += [
        f"{c['verdict']:<11} {c['id']}: measured {c['measured_text']} (expected {c['expected_text']})"
        for c in out["claims"]
    ]
    lines += [f"wrote {p}" for p in out["paths"].values()]
    return "\n".join(lines)


def preset_path(name: str):
    """The TOML file of a preset (or of a study's first preset)."""
    from ...study import find_preset

    s, preset = find_preset(name)
    return s.preset_path(preset)


def preset_runs(name: str, settings: dict | None = None) -> list:
    """The ``(RunConfig, seed)`` list of a preset grid, with ``settings`` (``{"task.d": 4, ...}``)
    replaced in every block (:func:`~depthscale.sims.grid.override_grid`)."""
    import tomllib

    from ....sims.grid import load_grid, override_grid

    with preset_path(name).open("rb") as fh:
        data = tomllib.load(fh)
    return load_grid(override_grid(data, settings) if settings else data)


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
