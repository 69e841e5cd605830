"""``depthscale report``: a report (Markdown, HTML, LaTeX) from a results store."""

from __future__ import annotations

from pathlib import Path

from depthscale.derivations.cli import check_out_dir, emit


def add_report_options(p, floor_default: str = "3000", reference_default: str = "3000") -> None:
    p.add_argument("--out", default="report", help="output directory (created; default: report)")
    p.add_argument(
        "--floor-contexts",
        type=int,
        default=3000,
        help=f"Monte Carlo contexts for the linear floors, >= 10 (default {floor_default})",
    )
    p.add_argument(
        "--reference-contexts",
        type=int,
        default=3000,
        help="contexts for recomputing the paper's five top-2 floors at d=128, P=1024, 0 (skip) or >= 10"
        f" (default {reference_default})",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object (claims and paths)")


def check_out(out: str) -> Path:
    """The report directory: checked (exists and writable, or creatable, and not the current
    directory, which the report's swap would replace) before anything is computed."""
    from depthscale.derivations.publish import check_target

    path = check_out_dir("out", out)
    check_target("out", path)
    return path


def check_contexts(args) -> None:
    from depthscale.theory.validate import check_int

    check_int("floor-contexts", args.floor_contexts, lo=10)
    check_int("reference-contexts", args.reference_contexts, lo=0)
    if 0 < args.reference_contexts < 10:
        raise ValueError(f"reference-contexts={args.reference_contexts}: must be 0 (skip) or >= 10")


def write(
    records, args, title: str, preset: str = "", runtime: float = 0.0, missing: str | None = None, load_arrays=None
) -> dict:
    """Build and write the report; ``missing`` (a sentence) heads the summary when runs are absent;
    ``load_arrays`` (``Store.load_arrays``) gives the per-context errors the protocol study pairs."""
    from depthscale.derivations.render import write_report
    from depthscale.derivations.reporting import build_context
    from depthscale.sims.store import json_text
    from depthscale.sims.threads import one_blas_thread

    # The Monte Carlo floors multiply small matrices: a second BLAS thread gains little on an idle
    # machine, and next to a running sweep its spinning made a report about 30 times slower.
    with one_blas_thread():
        ctx = build_context(
            records,
            title=title,
            preset=preset,
            floor_contexts=args.floor_contexts,
            reference_contexts=args.reference_contexts,
            runtime_seconds=runtime,
            load_arrays=load_arrays,
        )
    if missing:
        ctx.summary.insert(0, missing)
    claims = [c.to_dict() for c in ctx.claims]
    # claims.json: the verdicts for machines (theory = what the measurement is compared with, detail = the reason)
    rows = [
        {
            "id": c["id"],
            "claim": c["claim"],
            "verdict": c["verdict"],
            "measured": c["measured"],
            "error": c["error"],
            "theory": c["expected"],
            "theory_error": c["expected_error"],
            "tolerance": c["tolerance"],
            "detail": c["reason"],
        }
        for c in claims
    ]
    # claims.json goes into the report folder with the report: both appear in one step
    paths = write_report(ctx, args.out, {"claims.json": (json_text(rows, indent=1) + "\n").encode("utf-8")})
    paths["claims"] = Path(args.out) / "claims.json"
    return {"paths": {k: str(v) for k, v in paths.items()}, "claims": claims}


def register(sub) -> None:
    p = sub.add_parser("report", help="write report.md, report.html and report.tex from a results store")
    p.add_argument("--store", required=True, help="an existing results store (opened read-only)")
    add_report_options(p)
    p.set_defaults(func=handle)


def handle(args) -> int:
    from depthscale.sims.store import Store

    check_out(args.out)
    check_contexts(args)
    with Store(args.store, mode="read") as st:  # read-only: a foreign or empty file is refused untouched
        records = list(st.records())
        out = write(records, args, title=f"depthscale report: {Path(args.store).name}", load_arrays=st.load_arrays)
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
