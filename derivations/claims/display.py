"""Claim results in a notebook: :class:`ClaimTable`, a list of
:class:`~depthscale.derivations.claims.verdicts.ClaimResult` that shows as a table with its verdict
counts (``ClaimTable(evaluate_claims(evidence))``, or one result: ``ClaimTable(result)``)."""

from __future__ import annotations

import operator
from collections import Counter
from collections.abc import Iterable

from ...theory._validate import check_choice
from ...theory.display import html_grid
from .verdicts import COLUMNS, VERDICTS, ClaimResult, claim_cells


class ClaimTable(list):
    """A list of claim results that shows as a table in a notebook (one row per claim).

    Parameters
    ----------
    results : ClaimResult or iterable of ClaimResult

    Examples
    --------
    >>> r = ClaimResult("C1", "alpha near 1", 1.0, 0.97, 0.01, "± 0.2", "pass", "")
    >>> t = ClaimTable([r, r])
    >>> len(t), t.counts()
    (2, {'pass': 2})
    >>> "0.97 ± 0.01" in ClaimTable(r)._repr_html_()
    True
    >>> len(t["C1"]), len(t.where("fail"))
    (2, 0)
    """

    def __init__(self, results=()):
        if isinstance(results, (str, bytes)) or not isinstance(results, ClaimResult | Iterable):
            raise TypeError(f"results={results!r}: must be a ClaimResult or an iterable of ClaimResult")
        items = [results] if isinstance(results, ClaimResult) else list(results)
        for i, r in enumerate(items):
            if not isinstance(r, ClaimResult):
                raise ValueError(f"results[{i}]={r!r}: must be a ClaimResult")
        super().__init__(items)

    def __getitem__(self, key):
        """``t["claim-id"]``: that claim's rows (a ClaimTable, one row per condition); an int or a slice
        as for a list."""
        if isinstance(key, str):
            rows = [r for r in self if r.claim_id == key]
            if not rows:
                known = ", ".join(dict.fromkeys(r.claim_id for r in self)) or "none"
                raise KeyError(f"claim_id={key!r}: no row of that claim here (claims: {known})")
            return ClaimTable(rows)
        if not isinstance(key, slice):
            try:
                operator.index(key)
            except TypeError:
                raise TypeError(f"key={key!r}: must be a claim id (str), a row number or a slice") from None
        got = super().__getitem__(key)
        return ClaimTable(got) if isinstance(key, slice) else got

    def where(self, verdict: str | None = None) -> ClaimTable:
        """The rows with ``verdict`` (one of :data:`VERDICTS`)."""
        if verdict is not None:
            check_choice("verdict", verdict, VERDICTS)
        return ClaimTable(r for r in self if verdict is None or r.verdict == verdict)

    def counts(self) -> dict:
        """``{verdict: count}`` in the order of :data:`VERDICTS`, verdicts with no claim left out."""
        c = Counter(r.verdict for r in self)
        return {v: c[v] for v in VERDICTS if c[v]}

    def __repr__(self) -> str:
        """The counts by verdict, then one line per claim (id, verdict, measured), the first 10."""
        counts = ", ".join(f"{n} {v}" for v, n in self.counts().items()) or "no claims"
        lines = [f"<ClaimTable {len(self)} claim(s): {counts}"]
        for r in self[:10]:
            cells = claim_cells(r)
            lines.append(f"  {r.id}: {r.verdict}, measured {cells['measured']} vs {cells['expected']}")
        if len(self) > 10:
            lines.append(f"  ... {len(self) - 10} more")
        return "\n".join(lines) + ">"

    def _repr_html_(self) -> str:
        counts = ", ".join(f"{n} {v}" for v, n in self.counts().items()) or "no claims"
        rows = [[claim_cells(r)[k] for k in COLUMNS] for r in self]
        return html_grid(COLUMNS, rows, f"{len(self)} claim(s): {counts}")


__all__ = ["ClaimTable", "COLUMNS"]
