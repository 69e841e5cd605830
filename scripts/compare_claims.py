"""Compare the claims of two ``depthscale report --json`` outputs (e.g. before and after a change).

Usage: ``python scripts/compare_claims.py BEFORE.json AFTER.json``

Claims are paired by id. For each pair it prints whether the verdict and the measured value agree:
the value of the older text format (``"0.9876 ± 0.012"``, ``"rho = 0.9"``, ``"+1.23%"``, ``"n/a"``)
is its first number (a percentage divided by 100), compared with the newer ``measured`` at the
four significant digits both print. The older "depth beats" rows showed the difference R_L - baseline
as measured; the newer show R_L against the baseline's loss, so their difference is compared. Exit status 0 when every claim agrees, 1 otherwise.
"""

from __future__ import annotations

import json
import math
import re
import sys

_NUM = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?%?")


def measured_value(claim: dict):
    """The measured number of a claim in either format (None when there is none)."""
    m = claim.get("measured")
    if "measured_text" in claim:  # the typed format
        if m is not None and claim["id"].startswith("depth-beats-"):
            return float(m) - float(claim["expected"])  # the older format showed R_L - baseline here
        return None if m is None else float(m)
    hit = _NUM.search(str(m).replace("n/a", ""))
    if not hit:
        return None
    text = hit.group(0)
    scale = 0.01 if text.endswith("%") else 1.0
    text = text.rstrip("%")
    mantissa, _, exp = text.lower().partition("e")
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    # half a unit in the last printed digit: the older text was rounded there
    return Printed(float(text) * scale, 0.5 * 10.0 ** (int(exp or 0) - decimals) * scale)


class Printed(float):
    """A number read from text, with the rounding of its last printed digit."""

    def __new__(cls, value, half_unit):
        obj = super().__new__(cls, value)
        obj.half_unit = half_unit
        return obj


def same(a, b) -> bool:
    """Equal up to the rounding of whichever side was printed (and 4 significant digits otherwise)."""
    if a is None or b is None:
        return a is None and b is None
    tol = max(getattr(a, "half_unit", 0.0), getattr(b, "half_unit", 0.0))
    return abs(a - b) <= tol * (1 + 1e-9) or math.isclose(a, b, rel_tol=5e-4, abs_tol=1e-12)


def compare(before: list, after: list) -> list:
    """Rows ``(id, verdict before, verdict after, value before, value after, agrees)``."""
    old = {c["id"]: c for c in before}
    new = {c["id"]: c for c in after}
    rows = []
    for cid in list(old) + [k for k in new if k not in old]:
        o, n = old.get(cid), new.get(cid)
        vo, vn = (o or {}).get("verdict"), (n or {}).get("verdict")
        mo, mn = (measured_value(o) if o else None), (measured_value(n) if n else None)
        rows.append((cid, vo, vn, mo, mn, o is not None and n is not None and vo == vn and same(mo, mn)))
    return rows


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        sys.stderr.write("usage: compare_claims.py BEFORE.json AFTER.json\n")
        return 2
    before, after = (json.load(open(p))["claims"] for p in argv)
    rows = compare(before, after)
    for cid, vo, vn, mo, mn, ok in rows:
        print(f"{'same' if ok else 'DIFFERS'} | {cid} | {vo} -> {vn} | {mo} -> {mn}")
    n_bad = sum(not r[-1] for r in rows)
    print(f"{len(rows) - n_bad} of {len(rows)} claims identical in verdict and value")
    return 0 if n_bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
