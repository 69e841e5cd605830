"""What a report found, in words: one short paragraph per claim, with its numbers.

A result's claim is the first token of its id (``"softmax-top2-exponent softmax top-2 ..."`` is
a result of ``softmax-top2-exponent``); the rest of the id names the condition. Each paragraph says
what the claim states, how its verdicts fell, and each condition's measured value against what it was
compared with. Only :class:`~depthscale.derivations.claims.verdicts.ClaimResult` fields are read
(id, claim, expected, measured, error, tolerance, verdict, reason, note), so the paragraphs follow
whatever the claims registry decides. The theory checks (claims/theory_checks.py: no simulation)
come after the simulation findings.
"""

from __future__ import annotations

import re
from collections import Counter

from ..claims import theory_checks
from ..claims.verdicts import VERDICTS, claim_cells

THEORY_CLAIMS = tuple(c.id for c in theory_checks.CLAIMS)  # the claims that run no simulation
SHOWN = 3  # conditions quoted per claim; the rest are counted
NOT_RUN = "not run"  # the paragraph that names every claim with no data at all
_REASON_CHARS = 90


def claim_of(result) -> str:
    """The claim of a result: the first token of its id.

    Examples
    --------
    >>> from depthscale.derivations.claims.verdicts import ClaimResult
    >>> claim_of(ClaimResult("softmax-top2-exponent softmax top-2 d=8", "c", 1.0, 0.9, 0.1, "", "pass", ""))
    'softmax-top2-exponent'
    """
    return str(result.id).split(maxsplit=1)[0]


def _condition(result) -> str:
    parts = str(result.id).split(maxsplit=1)
    return parts[1] if len(parts) > 1 else ""


def _short(reason: str) -> str:
    first = reason.split(";")[0].strip()
    return first if len(first) <= _REASON_CHARS else first[: _REASON_CHARS - 1].rstrip() + "…"


def _why_indicative(reason: str) -> str:
    """What an indicative verdict hangs on: the would-be verdict, or what left it undecided."""
    would = re.search(r"would be (pass|fail)", reason)
    if would:
        return f"would be {would.group(1)}"
    undecided = re.match(r"undecided: ([^(;]*)", reason)
    return undecided.group(1).strip() if undecided else ""


def _clause(result) -> str:
    """One condition: ``<condition>: measured <m> against <expected> (<tolerance>), <verdict>``."""
    cells = claim_cells(result)
    where = _condition(result)
    head = f"{where}: " if where else ""
    if result.verdict in ("not run", "error"):
        return f"{head}{result.verdict} ({_short(result.reason)})"
    text = f"{head}measured {cells['measured']}"
    if result.expected is not None:
        text += f" against {cells['expected']}"
    if result.tolerance:
        text += f" ({result.tolerance})"
    text += f", {result.verdict}"
    why = _why_indicative(result.reason) if result.verdict == "indicative" else ""
    return f"{text} ({why})" if why else text


def claim_paragraph(claim: str, results) -> str:
    """The paragraph of one claim: the claim, the tally of verdicts, then up to :data:`SHOWN` conditions.

    Examples
    --------
    >>> from depthscale.derivations.claims.verdicts import ClaimResult
    >>> rs = [ClaimResult("alpha-near-1 d=8", "alpha is near 1", 1.0, 0.27, 0.07, "± 0.2", "fail", "")]
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


def claim_findings(results) -> list:
    """``[(claim, paragraph), ...]`` for a list of claim results: simulation claims in the order
    their first claim appears, then one ``"not run"`` paragraph naming the claims without any data,
    then the theory-only claims (:data:`THEORY_CLAIMS`).

    Examples
    --------
    >>> from depthscale.derivations.claims.verdicts import ClaimResult
    >>> rs = [ClaimResult("derivations-checked", "Every step is checked", 40.0, 40.0, None, "all steps", "pass", ""),
    ...       ClaimResult("depth-beats-single d=8", "Depth beats one head", 0.0, -0.1, 0.01, "< 0", "pass", ""),
    ...       ClaimResult("protocol-floor", "R_inf near a floor", None, None, None, "3%", "not run", "no runs")]
    >>> [claim for claim, _ in claim_findings(rs)]
    ['depth-beats-single', 'not run', 'derivations-checked']
    >>> claim_findings(rs)[1][1]
    'No data in this sweep for protocol-floor (no runs).'
    """
    groups: dict = {}
    for r in results:
        groups.setdefault(claim_of(r), []).append(r)
    empty = [f for f, rs in groups.items() if all(r.verdict == "not run" for r in rs)]
    simulation = [(f, claim_paragraph(f, groups[f])) for f in groups if f not in THEORY_CLAIMS and f not in empty]
    if empty:
        reasons = list(dict.fromkeys(_short(groups[f][0].reason) for f in empty))
        shown = "; ".join(reasons[:2]) + ("; …" if len(reasons) > 2 else "")
        simulation.append((NOT_RUN, f"No data in this sweep for {', '.join(empty)} ({shown})."))
    theory = [(f, claim_paragraph(f, groups[f])) for f in groups if f in THEORY_CLAIMS and f not in empty]
    return simulation + theory


def simulation_first(results) -> list:
    """The results with the theory-only claims moved after the others (each part in its order).

    Examples
    --------
    >>> from depthscale.derivations.claims.verdicts import ClaimResult
    >>> rs = [ClaimResult(i, "c", None, None, None, "", "not run", "") for i in ("equal-step-slope x", "linear-floor y")]
    >>> [r.id for r in simulation_first(rs)]
    ['linear-floor y', 'equal-step-slope x']
    """
    return sorted(results, key=lambda r: claim_of(r) in THEORY_CLAIMS)


__all__ = ["THEORY_CLAIMS", "NOT_RUN", "claim_of", "claim_paragraph", "claim_findings", "simulation_first"]
