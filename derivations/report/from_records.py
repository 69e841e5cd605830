"""A report from run records, written to a directory: report.md/.html/.tex, figures and claims.json.

:func:`report_from_records` is what ``depthscale report`` and ``depthscale reproduce`` call; it
needs no command-line arguments.
"""

from __future__ import annotations

from pathlib import Path

from ..claims.stored import claims_json


def report_from_records(
    records,
    out_dir,
    title: str,
    floor_contexts: int,
    reference_contexts: int,
    preset: str = "",
    runtime: float = 0.0,
    missing: str | None = None,
    load_arrays=None,
    study=None,
) -> dict:
    """Build and write the report; ``missing`` (a sentence) heads the summary when runs are absent;
    ``load_arrays`` (``Store.load_arrays``) gives the runs' per-context errors; ``study`` (a
    :class:`~depthscale.derivations.study.Study`): the claims and sections of its ``report_studies``
    (default: every registered study).

    Returns ``{"paths": {"md", "html", "tex", "claims", and "answer" when the report has one: path
    text}, "claims": [ClaimResult.to_dict()], "answer": [the answer's paragraphs as plain text]}``.
    """
    from ...sims.threads import one_blas_thread
    from ...theory.typeset import prose
    from .render import write_report
    from .reporting import build_context

    # The Monte Carlo floors multiply small matrices: a second BLAS thread gains little on an idle
    # machine, and next to a running sweep its spinning made a report about 30 times slower.
    with one_blas_thread():
        ctx = build_context(
            records,
            title=title,
            preset=preset,
            floor_contexts=floor_contexts,
            reference_contexts=reference_contexts,
            runtime_seconds=runtime,
            load_arrays=load_arrays,
            study=study,
        )
    if missing:
        ctx.summary.insert(0, missing)
    claims = [c.to_dict() for c in ctx.claims]
    # claims.json goes into the report folder with the report: both appear in one step
    paths = write_report(ctx, out_dir, {"claims.json": claims_json(ctx.claims)})
    paths["claims"] = str(Path(out_dir) / "claims.json")
    answer = [prose(str(a), "plain") for a in ctx.answer]  # for a terminal: formulas as Unicode text
    return {"paths": {k: str(v) for k, v in paths.items()}, "claims": claims, "answer": answer}
