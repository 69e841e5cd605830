"""What a report found, in words: one short paragraph per claim, with its numbers.

Results are grouped by their typed ``claim_id``; each paragraph says what the claim states, how its
verdicts fell, and each condition's measured value against what it was compared with, with the
would-be verdict of an indicative one (``would_be``). Only
:class:`~depthscale.derivations.claims.verdicts.ClaimResult` fields are read, never its reason
text, so the paragraphs follow whatever the claims decide. Claims on theory alone (a
:class:`~depthscale.derivations.claims.claim.Claim` of ``kind="theory"``: their ids are passed as
``theory``) come after the simulation findings.
"""

from __future__ import annotations

from collections import Counter

from ..claims.verdicts import VERDICTS, claim_cells

SHOWN = 3  # conditions quoted per claim; the rest are counted
NOT_RUN = "not run"  # the paragraph that names every claim with no data at all
_REASON_CHARS = 90


def claim_of(result) -> str:
    """The claim of a result: its ``claim_id``.

    Examples
    --------
    >>> from depthscale.derivations.claims.verdicts import ClaimResult
    >>> claim_of(ClaimResult("softmax-top2-exponent", "c", 1.0, 0.9, 0.1, "", "pass", "", condition="top-2 d=8"))
    'softmax-top2-exponent'
    """
    return result.claim_id


def _short(reason: str) -> str:
    first = reason.split(";")[0].strip()
    return first if len(first) <= _REASON_CHARS else first[: _REASON_CHARS - 1].rstrip() + "…"


def _clause(result) -> str:
    """One condition: ``<condition>: measured <m> against <expected> (<tolerance>), <verdict>``."""
    cells = claim_cells(result)
    where = result.condition.label
    head = f"{where}: " if where else ""
    if result.verdict in ("not run", "error"):
        return f"{head}{result.verdict} ({_short(result.reason)})"
    text = f"{head}measured {cells['measured']}"
    if result.expected is not None:
        text += f" against {cells['expected']}"
    if result.tolerance:
        text += f" ({result.tolerance})"
    text += f", {result.verdict}"
    if result.verdict == "indicative":
        text += f" (would be {result.would_be})" if result.would_be else " (undecided)"
    return text


def claim_paragraph(claim: str, results) -> str:
    """The paragraph of one claim: the claim, the tally of verdicts, then up to :data:`SHOWN` conditions.

    Examples
    --------
    >>> from depthscale.derivations.claims.verdicts import ClaimResult
    >>> rs = [ClaimResult("alpha-near-1", "alpha is near 1", 1.0, 0.27, 0.07, "± 0.2", "fail", "", condition="d=8")]
    >>> claim_paragraph("alpha-near-1", rs)
    'alpha is near 1. 1 condition: 1 fail. d=8: measured 0.27 ± 0.07 against 1 (± 0.2), fail.'
    """
    results = list(results)
    tally = Counter(r.verdict for r in results)
    counts = ", ".join(f"{tally[v]} {v}" for v in VERDICTS if tally[v])
    n = len(results)
    claims = list(dict.fromkeys(str(r.claim).rstrip(".") for r in results))
    lead = claims[0] if len(claims) == 1 else f"{claims[0]} (and {len(claims) - 1} related statement(s))"
    clauses = [_clause(r) for r in results[:SHOWN]]
    more = f"; and {n - SHOWN} more condition(s)" if n > SHOWN else ""
    return f"{lead}. {n} condition{'s' if n != 1 else ''}: {counts}. " + "; ".join(clauses) + more + "."


def claim_findings(results, theory=()) -> list:
    """``[(claim, paragraph), ...]`` for a list of claim results: simulation claims in the order
    their first claim appears, then one ``"not run"`` paragraph naming the claims without any data,
    then the claims on theory alone (their ids: ``theory``).

    Examples
    --------
    >>> from depthscale.derivations.claims.verdicts import ClaimResult
    >>> rs = [ClaimResult("steps-checked", "Every step is checked", 40.0, 40.0, None, "all steps", "pass", ""),
    ...       ClaimResult("beats-head", "Depth beats one head", 0.0, -0.1, 0.01, "< 0", "pass", "", condition="d=8"),
    ...       ClaimResult("near-floor", "R_inf near a floor", None, None, None, "3%", "not run", "no runs")]
    >>> [claim for claim, _ in claim_findings(rs, theory=["steps-checked"])]
    ['beats-head', 'not run', 'steps-checked']
    >>> claim_findings(rs, theory=["steps-checked"])[1][1]
    'No data in this sweep for near-floor (no runs).'
    """
    theory = set(theory)
    groups: dict = {}
    for r in results:
        groups.setdefault(claim_of(r), []).append(r)
    empty = [f for f, rs in groups.items() if all(r.verdict == "not run" for r in rs)]
    simulation = [(f, claim_paragraph(f, groups[f])) for f in groups if f not in theory and f not in empty]
    if empty:
        reasons = list(dict.fromkeys(_short(groups[f][0].reason) for f in empty))
        shown = "; ".join(reasons[:2]) + ("; …" if len(reasons) > 2 else "")
        simulation.append((NOT_RUN, f"No data in this sweep for {', '.join(empty)} ({shown})."))
    return simulation + [(f, claim_paragraph(f, groups[f])) for f in groups if f in theory and f not in empty]


def simulation_first(results, theory=()) -> list:
    """The results with the claims on theory alone (ids in ``theory``) moved after the others (each
    part in its order).

    Examples
    --------
    >>> from depthscale.derivations.claims.verdicts import ClaimResult
    >>> rs = [ClaimResult(i, "c", None, None, None, "", "not run", "") for i in ("slope", "floor")]
    >>> [r.id for r in simulation_first(rs, theory=["slope"])]
    ['floor', 'slope']
    """
    theory = set(theory)
    return sorted(results, key=lambda r: r.claim_id in theory)


def default_answer(results, study) -> list:
    """The answer of a study without a story of its own: its question, then how its claims fell,
    with the claims that passed and failed named (from the typed fields alone).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> from depthscale.derivations.claims.verdicts import ClaimResult
    >>> s = SimpleNamespace(question="Is alpha near 1?", claims=[SimpleNamespace(id="exp")])
    >>> rs = [ClaimResult("exp", "alpha near 1", 1.0, 0.27, 0.07, "± 0.2", "fail", "", condition="d=8")]
    >>> default_answer(rs, s)
    ['Is alpha near 1? Of its 1 tested condition: 1 fail. Failed: exp (d=8: 0.27 ± 0.07 against 1).']
    """
    ids = {c.id for c in study.claims}
    mine = [r for r in results if r.claim_id in ids and r.verdict != "not run"]
    if not mine:
        return [f"{study.question} None of its claims has data in this report."]
    tally = Counter(r.verdict for r in mine)
    counts = ", ".join(f"{tally[v]} {v}" for v in VERDICTS if tally[v])
    out = [f"{study.question} Of its {len(mine)} tested condition{'s' if len(mine) != 1 else ''}: {counts}."]
    for verdict, word in (("pass", "Passed"), ("fail", "Failed")):
        rs = [r for r in mine if r.verdict == verdict]
        if rs:
            shown = [_brief(r) for r in rs[:SHOWN]]
            more = f"; and {len(rs) - SHOWN} more" if len(rs) > SHOWN else ""
            out[0] += f" {word}: " + "; ".join(shown) + more + "."
    return out


def results_of(results, claim_id: str, keep=None) -> list:
    """The decided results (not ``not run``, not ``error``) of one claim, those ``keep`` accepts."""
    return [
        r
        for r in results
        if r.claim_id == claim_id and r.verdict not in ("not run", "error") and (keep is None or keep(r))
    ]


def tally(results) -> str:
    """``"2 pass, 1 fail"``: the verdicts of these results, in the order of :data:`VERDICTS`.

    >>> from depthscale.derivations.claims.verdicts import ClaimResult
    >>> tally([ClaimResult("x", "c", None, 1.0, None, "", v, "") for v in ("fail", "pass", "pass")])
    '2 pass, 1 fail'
    """
    c = Counter(r.verdict for r in results)
    return ", ".join(f"{c[v]} {v}" for v in VERDICTS if c[v]) or "none decided"


def brief(r) -> str:
    """One result in a few words: ``"<condition>: <measured> (<verdict>)"``.

    >>> from depthscale.derivations.claims.verdicts import ClaimResult
    >>> brief(ClaimResult("x", "c", 1.0, 0.27, 0.07, "", "fail", "", condition="d=8"))
    'd=8: 0.27 ± 0.07 (fail)'
    >>> brief(ClaimResult("x", "c", 1.0, None, None, "", "indicative", "fit not identified"))
    'no estimate (indicative)'
    """
    where = f"{r.condition.label}: " if r.condition.label else ""
    verdict = r.verdict + (f", would be {r.would_be}" if r.would_be else "")
    # decided without an estimate: by a test on the data, such as lack of fit (its reason says which)
    measured = claim_cells(r)["measured"] if r.measured is not None else "no estimate"
    return f"{where}{measured} ({verdict})"


def _brief(r) -> str:
    cells = claim_cells(r)
    where = f"{r.condition.label}: " if r.condition.label else ""
    against = f" against {cells['expected']}" if r.expected is not None else ""
    return f"{r.claim_id} ({where}{cells['measured']}{against})"


__all__ = [
    "NOT_RUN",
    "default_answer",
    "results_of",
    "tally",
    "brief",
    "claim_of",
    "claim_paragraph",
    "claim_findings",
    "simulation_first",
]
