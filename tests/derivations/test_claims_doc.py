"""docs/claims.md and the claims of the paper's studies list the same claims with the same tolerances.

docs/claims.md documents the claims of the four studies reported together (core, protocols,
paper-curves, linear-start); a study added later documents its claims on its own page, so that it
is one new folder and one registry line.
"""

import re
from pathlib import Path

from depthscale.derivations.claims.registry import registered_claims
from depthscale.derivations.study import study
from depthscale.studies import PAPER_STUDIES

REGISTRY = registered_claims([study(name) for name in PAPER_STUDIES])

DOC = Path(__file__).resolve().parents[2] / "docs" / "claims.md"
# a claims-table row: | `id` | statement | compared with | decided by | `tolerance` |
ROW = re.compile(r"^\| `(?P<id>[^`]+)` \|.*\| `(?P<tol>[^`]*)` \|$")


def documented(text: str) -> dict:
    """``{id: tolerance}`` of the claims tables (the rows whose header has a tolerance column)."""
    out, in_table = {}, False
    for line in text.splitlines():
        if line.startswith("| id |"):
            in_table = line.rstrip().endswith("| tolerance |")
            continue
        if not line.startswith("|"):
            in_table = False
            continue
        if in_table and not line.startswith("|---"):
            m = ROW.match(line.rstrip())
            assert m, f"a claims-table row without an id and a tolerance: {line}"
            assert m["id"] not in out, f"{m['id']} documented twice"
            out[m["id"]] = m["tol"]
    return out


def test_every_registered_claim_is_documented_with_its_tolerance():
    docs = documented(DOC.read_text())
    assert {c.id: c.tolerance for c in REGISTRY if c.id in docs} == {c.id: docs[c.id] for c in REGISTRY if c.id in docs}
    assert [c.id for c in REGISTRY if c.id not in docs] == []


def test_every_documented_claim_is_registered():
    docs = documented(DOC.read_text())
    assert sorted(set(docs) - {c.id for c in REGISTRY}) == []


def test_registry_ids_are_unique():
    ids = [c.id for c in REGISTRY]
    assert len(ids) == len(set(ids))


def test_the_reader_sees_a_changed_tolerance():
    # the check is not vacuous: a row whose tolerance differs from the registry's is read as it is written
    text = DOC.read_text().replace("| `± 0.2` |", "| `± 0.3` |")
    assert documented(text)["softmax-top2-exponent"] == "± 0.3"
    assert len(documented(DOC.read_text())) == len(REGISTRY)
