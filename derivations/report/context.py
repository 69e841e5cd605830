"""What a report shows (:class:`ReportContext`) and its validation into plain data for the templates."""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from ...theory._validate import bad_argument
from ...theory.derivation import Derivation
from ..claims.verdicts import (
    FAMILY_LEVEL,
    MIN_DEPTHS,
    MIN_EVAL,
    MIN_SEEDS,
    MIN_SPAN,
    VERDICTS,
    ClaimResult,
    claim_cells,
)
from ..formatting import format_value
from .entries import DrawnFigure, Table

# when a verdict is pass or fail: the fixed sentence beside every claims table
RULE_TEXT = (
    "A row passes only when the whole 95 % interval of its estimate (Student t at the degrees of freedom "
    "it states) lies inside the claim's band, and fails only when the interval lies wholly outside it (a "
    "depth law also fails when lack of fit at 5 % rejects it for every exponent in its band); each claim's "
    f"rows across conditions are one family, decided with Holm's rule at {FAMILY_LEVEL:.0%} family-wise. "
    f"The evidence must be decisive too (at least {MIN_SEEDS} seeds at every depth, {MIN_DEPTHS} depths "
    f"spanning a factor {MIN_SPAN}, converged runs, {MIN_EVAL:,} evaluation contexts) and the fit behind it "
    "identified; otherwise a row is indicative, with its would-be verdict when there is one."
)


def decisions_text(claims: Sequence[Mapping]) -> str:
    """How many decisions a report makes and how many false ones to expect at most: Holm keeps the
    chance of any false decision within one claim's family at 5 %, so across ``F`` claims with
    decisions at most about ``0.05 F`` of them carry one."""
    decided = [c for c in claims if c.get("verdict") in ("pass", "fail") and c.get("p") is not None]
    untested = sum(c.get("verdict") in ("pass", "fail") and c.get("p") is None for c in claims)
    families = {c.get("claim_id") for c in decided}
    text = (
        f"{len(decided)} tested decisions in {len(families)} claim(s); at {FAMILY_LEVEL:.0%} family-wise, at "
        f"most about {FAMILY_LEVEL * len(families):.2g} claim(s) are expected to hold a false one"
    )
    if untested:
        text += f"; {untested} more decided by exact arithmetic or a rule without sampling error"
    return text


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass
class ReportContext:
    """Everything one report shows.

    Attributes
    ----------
    title, subtitle : headings.
    preset : name of the preset or sweep the results come from ("" when not applicable).
    created : timestamp text (defaults to now, UTC).
    runtime_seconds : wall time of the work behind the report, or None.
    answer : sentences that answer the study's question, each with its number; shown first.
    story : the findings of the study, each shown as a section with its figure beside it: objects
        with ``title``, ``sentence``, ``figure`` (the name of one of ``figures``, or "") and
        ``claim_ids`` (a :class:`~depthscale.derivations.study.Finding`), or dicts with those keys.
        A finding whose figure was not drawn is left out (its sentence says what the figure shows);
        a figure named by two findings is shown beside the first.
    findings : ``(family, paragraph)`` pairs: what each claim found, in words; shown after the
        answer when there is no story.
    summary : paragraphs of plain text (Markdown allowed in the .md output).
    derivations : :class:`~depthscale.theory.derivation.Derivation` objects (rendered by
        :mod:`depthscale.theory.render_derivation`), or objects with ``title``,
        ``to_markdown_fragment()``, ``to_html_fragment()`` (MathML) and ``to_latex_fragment()``
        whose fragments are inserted as they are.
    theory_tables, results_tables : :class:`~depthscale.derivations.report.entries.Table` records;
        numbers are shown with 4 significant digits, None and nan as an em dash; a table without
        rows is left out.
    figures : :class:`~depthscale.derivations.report.entries.DrawnFigure` records (a figure entry
        drawn by :func:`~depthscale.derivations.report.entries.draw_entry`), their names unique. The
        drawn ones are numbered in the order a reader meets them (beside their findings first, then
        the rest in this order); one not drawn is named with its reason in the notes.
    claims : :class:`~depthscale.derivations.claims.verdicts.ClaimResult` objects (a stored claims.json
        loads as them through :func:`~depthscale.derivations.claims.stored.load_claims`); the full
        table comes last, grouped by claim.
    notes : paragraphs of plain text.
    primary : the ids of the study's primary claims (:attr:`~depthscale.derivations.study.Study.primary`):
        listed first and marked so; the other claims are marked exploratory. Empty: no marks.

    Examples
    --------
    >>> ReportContext(title="t", runtime_seconds=75.0).runtime_text()
    '1 min 15 s'
    """

    title: str
    subtitle: str = ""
    preset: str = ""
    created: str = field(default_factory=_now)
    runtime_seconds: float | None = None
    summary: list = field(default_factory=list)
    derivations: list = field(default_factory=list)
    theory_tables: list[Table] = field(default_factory=list)
    results_tables: list[Table] = field(default_factory=list)
    figures: list[DrawnFigure] = field(default_factory=list)
    claims: list[ClaimResult] = field(default_factory=list)
    notes: list = field(default_factory=list)
    primary: list = field(default_factory=list)
    findings: list = field(default_factory=list)
    answer: list = field(default_factory=list)
    story: list = field(default_factory=list)

    def runtime_text(self) -> str:
        """The running time in words ('' when unknown)."""
        s = self.runtime_seconds
        if s is None:
            return ""
        s = float(s)
        if s < 59.95:
            return f"{s:.1f} s"
        if round(s) < 3600:  # round once, so 119.7 s reads '2 min 00 s', never '1 min 60 s'
            m, sec = divmod(int(round(s)), 60)
            return f"{m} min {sec:02d} s"
        h, m = divmod(int(round(s / 60)), 60)
        return f"{h} h {m:02d} min"


# ----------------------------------------------------------------------------------------------
# validation


_bad = bad_argument


def _texts(name: str, value) -> list:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if not isinstance(value, Sequence):
        _bad(name, value, "a string or a list of strings")
    for i, v in enumerate(value):
        if not isinstance(v, str):
            _bad(f"{name}[{i}]", v, "a string")
    return list(value)


def _finding(name: str, pair) -> tuple:
    if isinstance(pair, str) or len(texts := _texts(name, pair)) != 2:
        _bad(name, pair, "a (family, paragraph) pair of strings")
    return tuple(texts)


def _items(name: str, value) -> list:
    if value is None:
        return []
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Sequence):
        _bad(name, value, "a list")
    return list(value)


def _figure(name: str, f, seen: set) -> dict:
    """The template's data of one drawn figure (names unique in a report)."""
    if not isinstance(f, DrawnFigure):
        _bad(name, f, "a DrawnFigure (a FigureEntry drawn by depthscale.derivations.report.entries.draw_entry)")
    if f.name in seen:
        _bad(f"{name}.name", f.name, "unique among the figures")
    seen.add(f.name)
    return {**vars(f), "file": f"figures/{f.name}.png"}


def _table(name: str, t) -> dict:
    """The template's data of one table: its cells as text."""
    if not isinstance(t, Table):
        _bad(name, t, "a Table (depthscale.derivations.report.entries.Table)")
    return {"title": t.title, "columns": list(t.columns), "rows": t.cells(), "note": t.note}


def _check_claim(name: str, c, seen: set) -> dict:
    """Cells of one claim from a ``ClaimResult`` (a stored claims.json loads as them: ``load_claims``)."""
    if not isinstance(c, ClaimResult):
        _bad(name, c, "a ClaimResult (claims.json rows: depthscale.derivations.claims.stored.load_claims)")
    cells = claim_cells(c)
    cid = cells["id"]
    if cid is None or str(cid).strip() == "":
        _bad(f"{name}.id", cid, "a non-empty identifier")
    cid = str(cid)
    if cid in seen:
        _bad(f"{name}.id", cid, "unique among the claims")
    seen.add(cid)
    return {
        "id": cid,
        "claim_id": str(c.claim_id),
        "condition": c.condition.label,
        "claim": format_value(cells["claim"]),
        "expected": format_value(cells["expected"]),
        "measured": format_value(cells["measured"]),
        "tolerance": format_value(cells["tolerance"]),
        "verdict": cells["verdict"],
        **dict(zip(("reason", "reason_more"), reason_cell(format_value(cells["reason"] or "")))),
        "p": c.p,
    }


def reason_cell(reason: str) -> tuple[str, str]:
    """``(cell, details)``: a reason's first clause (the estimate) and its last (how it was decided),
    and the whole reason where that leaves clauses out (shown behind a fold in HTML).

    >>> cell, details = reason_cell("alpha = 0.12 [t(2)]; lack of fit p = 1e-6 (at 1; 0.8); would be fail, but 1 unconverged")
    >>> cell
    'alpha = 0.12 [t(2)] … would be fail, but 1 unconverged'
    >>> details.count("; ")  # the whole reason (the bracketed "; " is no clause break)
    3
    >>> reason_cell("relative difference -0.99%; worse than it")
    ('relative difference -0.99%; worse than it', '')
    """
    clauses, depth, start = [], 0, 0
    for i, ch in enumerate(reason):  # split at "; " outside brackets
        depth += ch in "([{"
        depth -= ch in ")]}"
        if depth == 0 and reason.startswith("; ", i):
            clauses.append(reason[start:i])
            start = i + 2
    clauses.append(reason[start:])
    if len(clauses) <= 2:
        return reason, ""
    return f"{clauses[0]} … {clauses[-1]}", reason


def _check_finding(name: str, f, figures: dict) -> dict:
    get = f.get if isinstance(f, Mapping) else (lambda k, d=None: getattr(f, k, d))
    title, sentence, fig = get("title"), get("sentence"), get("figure", "") or ""
    if not isinstance(title, str) or not title.strip() or not isinstance(sentence, str):
        _bad(name, f, "a Finding (or dict) with a title and a sentence")
    if fig and fig not in figures:
        _bad(f"{name}.figure", fig, "the name of one of the report's figures: " + ", ".join(figures))
    return {"title": title, "sentence": sentence, "figure": figures.get(fig), "claim_ids": list(get("claim_ids", ()))}


def _claim_groups(claims: list) -> list:
    """The claims table's rows grouped by claim: ``[{"claim_id", "claim", "tolerance", "rows"}]``."""
    groups: dict = {}
    for c in claims:
        g = groups.setdefault(c["claim_id"], {"claim_id": c["claim_id"], "claim": c["claim"], "rows": []})
        g["rows"].append(c)
    return list(groups.values())


def _check_derivation(name: str, d):
    if isinstance(d, Derivation):
        return d
    for method in ("to_markdown_fragment", "to_html_fragment", "to_latex_fragment"):
        if not callable(getattr(d, method, None)):
            _bad(name, d, f"a Derivation or an object with {method}()")
    return d


def template_data(ctx: ReportContext) -> dict:
    """Validate the context and turn it into plain data for the templates."""
    if not isinstance(ctx, ReportContext):
        _bad("ctx", ctx, "a ReportContext")
    if not isinstance(ctx.title, str) or not ctx.title.strip():
        _bad("ctx.title", ctx.title, "a non-empty string")
    if ctx.runtime_seconds is not None:
        v = ctx.runtime_seconds
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v) or v < 0:
            _bad("ctx.runtime_seconds", v, "a finite number >= 0 or None")
    seen_fig: set[str] = set()
    seen_claim: set[str] = set()
    figures = [_figure(f"figures[{i}]", f, seen_fig) for i, f in enumerate(_items("figures", ctx.figures))]
    claims = [_check_claim(f"claims[{i}]", c, seen_claim) for i, c in enumerate(_items("claims", ctx.claims))]
    if primary := list(ctx.primary):
        # the study's primary claims first, in its order; the rest are exploratory and say so
        claims.sort(key=lambda c: primary.index(c["claim_id"]) if c["claim_id"] in primary else len(primary))
        for c in claims:
            c["claim"] = ("(primary) " if c["claim_id"] in primary else "(exploratory) ") + c["claim"]
    counts = {v: sum(c["verdict"] == v for c in claims) for v in VERDICTS}
    by_name = {f["name"]: f for f in figures}
    story = [_check_finding(f"story[{i}]", f, by_name) for i, f in enumerate(_items("story", ctx.story))]
    # a finding whose figure was not drawn is left out: its sentence says what that figure shows
    story = [s for s in story if s["figure"] is None or s["figure"]["png"] is not None]
    shown: list[dict] = []  # the drawn figures in reading order: beside their findings, then the rest
    for s in story:
        if (f := s["figure"]) is not None and any(f is g for g in shown):
            s["figure"] = None  # one figure beside its first finding only
        elif f is not None:
            shown.append(f)
    more = [f for f in figures if f["png"] is not None and not any(f is g for g in shown)]
    for n, f in enumerate(shown + more, 1):  # numbered in the order a reader meets them
        f["number"] = n
    theory_tables = [_table(f"theory_tables[{i}]", t) for i, t in enumerate(_items("theory_tables", ctx.theory_tables))]
    results_tables = [
        _table(f"results_tables[{i}]", t) for i, t in enumerate(_items("results_tables", ctx.results_tables))
    ]
    derivations = [
        _check_derivation(f"derivations[{i}]", d) for i, d in enumerate(_items("derivations", ctx.derivations))
    ]
    # an empty part is left out, heading and all: a table without rows, a section without content
    theory_tables = [t for t in theory_tables if t["rows"]]
    results_tables = [t for t in results_tables if t["rows"]]
    evidence = [
        name
        for name, there in (
            ("derivations", derivations),
            ("theory numbers", theory_tables),
            ("simulation results", results_tables),
            ("more figures", more),
        )
        if there
    ]
    return {
        "title": ctx.title,
        "subtitle": str(ctx.subtitle or ""),
        "preset": str(ctx.preset or ""),
        "created": str(ctx.created or ""),
        "runtime": ctx.runtime_text(),
        "summary": _texts("summary", ctx.summary),
        "findings": [_finding(f"findings[{i}]", p) for i, p in enumerate(_items("findings", ctx.findings))],
        "answer": _texts("answer", ctx.answer),
        "story": story,
        "notes": _texts("notes", ctx.notes),
        "derivations": derivations,
        "theory_tables": theory_tables,
        "results_tables": results_tables,
        "figures": figures,
        "more_figures": more,  # drawn, and not beside a finding
        "not_drawn": [f for f in figures if f["png"] is None],
        "evidence": evidence,
        "claims": claims,
        "claim_groups": _claim_groups(claims),
        "verdicts": VERDICTS,
        # an error (a claim whose code raised) is named whenever there is one; otherwise the four verdicts
        "counts_text": ", ".join(f"{counts[v]} {v}" for v in VERDICTS if v != "error" or counts[v]),
        "rule_text": RULE_TEXT,
        "decisions_text": decisions_text(claims),
    }
