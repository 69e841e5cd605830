"""claims.json: a report's claims as strict JSON, written by :func:`claims_json` and read back by
:func:`load_claims`, the one reader for every stored claims.json.

Rows use the names of :class:`~depthscale.derivations.claims.verdicts.ClaimResult` (``claim_id``,
``condition``, ``expected``, ``expected_error``, ``would_be``, ``reason``), with the row's ``id``
beside them. Files written before this vocabulary was fixed spell ``expected``, ``expected_error`` and
``reason`` as ``theory``, ``theory_error`` and ``detail``, and files written before claim ids and
conditions were typed have only ``id`` (the claim id, a space, the condition's label) and no
``would_be``: the reader takes both (:func:`claim_from_row`).

Examples
--------
>>> from depthscale.derivations.claims.verdicts import ClaimResult
>>> from depthscale.derivations.claims.verdicts import Condition
>>> r = ClaimResult("x", "c", (0.8, 1.2), 0.9, 0.1, "2 s.e.", "indicative", "why", condition=Condition("d=8", d=8),
...                 would_be="pass")
>>> load_claims(claims_json([r])) == [r]
True
>>> old = '[{"id": "x", "claim": "c", "verdict": "pass", "theory": 1.0, "detail": "why"}]'
>>> [(c.claim_id, c.condition.label, c.expected, c.reason) for c in load_claims(old)]
[('x', '', 1.0, 'why')]
>>> [(c.claim_id, c.condition.label) for c in load_claims('[{"id": "x top-2 d=8", "verdict": "pass"}]')]
[('x', 'top-2 d=8')]
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from .verdicts import ClaimResult, Condition

# the spelling of claims.json files written before expected/reason named these everywhere
OLD_NAMES = {"theory": "expected", "theory_error": "expected_error", "detail": "reason"}
FIELDS = (
    "id",
    "claim_id",
    "condition",
    "claim",
    "verdict",
    "would_be",
    "measured",
    "error",
    "expected",
    "expected_error",
    "tolerance",
    "test",
    "p",
    "family_note",
    "reason",
    "note",
)


def claims_rows(claims: list[ClaimResult]) -> list[dict]:
    """The rows of claims.json: each result's JSON-safe fields (non-finite numbers as null)."""
    return [{k: c.to_dict()[k] for k in FIELDS} for c in claims]


def claims_json(claims: list[ClaimResult]) -> bytes:
    """The bytes of ``claims.json`` (:func:`claims_rows`, strict JSON)."""
    from ...sims.store import json_text

    return (json_text(claims_rows(claims), indent=1) + "\n").encode("utf-8")


def claim_from_row(row: dict) -> ClaimResult:
    """One stored row as a :class:`ClaimResult` (either spelling; an interval comes back as a tuple).

    A row without ``claim_id`` (written before ids were typed) is read as its ``id``: the claim id
    up to the first space, the condition's label after it (claim ids have no spaces).
    """
    row = {OLD_NAMES.get(k, k): v for k, v in row.items()}
    exp = row.get("expected")
    if isinstance(exp, list):
        exp = tuple(exp)
    if "claim_id" in row:
        claim_id, condition = str(row["claim_id"]), Condition(**(row.get("condition") or {}))
    else:
        claim_id, _, label = str(row["id"]).partition(" ")
        condition = Condition(label)
    return ClaimResult(
        claim_id,
        str(row.get("claim", "")),
        exp,
        row.get("measured"),
        row.get("error"),
        str(row.get("tolerance") or ""),
        row["verdict"],
        str(row.get("reason") or ""),
        note=str(row.get("note") or ""),
        expected_error=row.get("expected_error"),
        condition=condition,
        would_be=row.get("would_be"),
        test=str(row.get("test") or ""),
        p=row.get("p"),
        family_note=str(row.get("family_note") or ""),
    )


def load_claims(source) -> list[ClaimResult]:
    """The claims of a stored claims.json: a path, or the file's text or bytes."""
    if not isinstance(source, str | bytes | bytearray | os.PathLike):
        raise TypeError(f"source={source!r}: must be a claims.json path, or its text or bytes")
    if isinstance(source, os.PathLike):
        source = Path(source)
    if isinstance(source, Path) or (isinstance(source, str) and not source.lstrip().startswith("[")):
        source = Path(source).read_text(encoding="utf-8")
    return [claim_from_row(r) for r in json.loads(source)]


__all__ = ["claims_rows", "claims_json", "claim_from_row", "load_claims"]
