"""``depthscale report``: a report (Markdown, HTML, LaTeX) from a results store."""

from __future__ import annotations

from pathlib import Path

from depthscale.derivations.cli import emit


def add_report_options(p) -> None:
    p.add_argument("--out", default="report", help="output directory (created)")
    p.add_argument("--floor-contexts", type=int, default=3000, help="Monte Carlo contexts for the linear floors")
    p.add_argument("--reference-contexts", type=int, default=3000,
                   help="contexts for recomputing the paper's five top-2 floors at d=128, P=1024 (0: skip)")
    p.add_argument("--json", action="store_true")


def check_out(out: str) -> Path:
    path = Path(out)
    if path.exists() and not path.is_dir():
        raise ValueError(f"out={out!r}: must be a directory (a file is in the way)")
    return path


def check_contexts(args) -> None:
    from depthscale.theory.validate import check_int

    check_int("floor-contexts", args.floor_contexts, lo=10)
    check_int("reference-contexts", args.reference_contexts, lo=0)
    if 0 < args.reference_contexts < 10:
        raise ValueError(f"reference-contexts={args.reference_contexts}: must be 0 (skip) or >= 10")


def write(records, args, title: str, preset: str = "", runtime: float = 0.0) -> dict:
    from depthscale.derivations.render import write_report
    from depthscale.derivations.reporting import build_context

    ctx = build_context(records, title=title, preset=preset, floor_contexts=args.floor_contexts,
                        reference_contexts=args.reference_contexts, runtime_seconds=runtime)
    paths = write_report(ctx, args.out)
    return {"paths": {k: str(v) for k, v in paths.items()}, "claims": [c.to_dict() for c in ctx.claims]}


def register(sub) -> None:
    p = sub.add_parser("report", help="write report.md, report.html and report.tex from a results store")
    p.add_argument("--store", required=True, help="SQLite results store")
    add_report_options(p)
    p.set_defaults(func=handle)


def handle(args) -> int:
    from depthscale.sims.store import Store

    check_out(args.out)
    check_contexts(args)
    if not Path(args.store).is_file():
        raise ValueError(f"store={args.store!r}: must be an existing results store")
    with Store(args.store) as st:
        records = list(st.records())
    out = write(records, args, title=f"depthscale report: {Path(args.store).name}")
    emit(out, args.json, claims_text(out))
    return 0


def claims_text(out: dict) -> str:
    lines = [f"{'verdict':<11} claim"]
    lines += [f"{c['verdict']:<11} {c['id']}: measured {c['measured_text']} (expected {c['expected_text']})" for c in out["claims"]]
    lines += [f"wrote {p}" for p in out["paths"].values()]
    return "\n".join(lines)
