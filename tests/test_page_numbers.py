"""One source for every number: each estimate ``value ± error`` that a study page, the README or a
report's README states is one of its reports' estimates (the claims in ``claims.json`` or a number
of ``report.md``), to the digits the page gives."""

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NUM = r"[-−+]?\d[\d,]*\.?\d*(?:e[-−]?\d+)?"
ESTIMATE = re.compile(rf"({NUM}) ± ({NUM})")
REPORT_LINK = re.compile(r"([a-z-]+-report)/")
PAGE_LINK = re.compile(r"\]\(([a-z-]+)\.md\)")  # a study page linked from another study page
# each study page's own report; a page also answers to every report it links
OWN = {
    "docs/studies/core.md": "cpu-report",
    "docs/studies/protocols.md": "protocol-report",
    "docs/studies/paper-curves.md": "curves-report",
    "docs/studies/linear-start.md": "linear-start-report",
    "docs/studies/nonlinearities.md": "nonlinearities-report",
}
REPORTS = sorted(p.parent.name for p in (ROOT / "docs").glob("*-report/claims.json"))
PAGES = [*OWN, "README.md", *(f"docs/{r}/README.md" for r in REPORTS if (ROOT / "docs" / r / "README.md").exists())]


def _number(text: str) -> float:
    return float(text.replace(",", "").replace("−", "-"))


def _half_digit(text: str) -> float:
    """Half a unit of the last digit ``text`` shows (0.005 for '0.12', 5e-7 for '1.5e-6')."""
    m = re.fullmatch(r"(\d*)\.?(\d*)(?:e([-−]?\d+))?", text.replace(",", "").lstrip("+-−"))
    assert m, text
    exponent = int(m.group(3).replace("−", "-")) if m.group(3) else 0
    return 0.5 * 10.0 ** (exponent - len(m.group(2))) * (1 + 1e-9)


def _estimates(report: str) -> list[tuple[float, float]]:
    folder = ROOT / "docs" / report
    out = [(_number(v), _number(e)) for v, e in ESTIMATE.findall((folder / "report.md").read_text(encoding="utf-8"))]
    for row in json.loads((folder / "claims.json").read_text(encoding="utf-8")):
        if row.get("measured") is not None and row.get("error") is not None:
            out.append((row["measured"], row["error"]))
    return out


def _reports_of(page: str, text: str) -> set[str]:
    if page == "README.md":
        return set(REPORTS)
    own = {OWN[page]} if page in OWN else {Path(page).parent.name}
    linked = {OWN[f"docs/studies/{name}.md"] for name in PAGE_LINK.findall(text) if f"docs/studies/{name}.md" in OWN}
    return own | linked | (set(REPORT_LINK.findall(text)) & set(REPORTS))


def _missing(text: str, known: list[tuple[float, float]]) -> list[str]:
    """The estimates of ``text`` that match none of ``known`` to the digits shown (a page may quote a
    difference with its sign turned: "above it by" for a negative difference)."""
    return [
        f"{v} ± {e}"
        for v, e in ESTIMATE.findall(text)
        if not any(
            abs(abs(mv) - abs(_number(v))) <= _half_digit(v) and abs(me - _number(e)) <= _half_digit(e)
            for mv, me in known
        )
    ]


@pytest.mark.parametrize("page", PAGES)
def test_every_estimate_on_a_page_is_in_its_reports(page):
    text = (ROOT / page).read_text(encoding="utf-8")
    known = [e for r in sorted(_reports_of(page, text)) for e in _estimates(r)]
    missing = _missing(text, known)
    assert not missing, f"{page}: estimates in none of {sorted(_reports_of(page, text))}: {missing}"


def test_the_check_matches_to_the_digits_shown():
    known = [(0.970738, 0.067091), (-0.4712, 0.0041)]
    assert _missing("alpha = 0.97 ± 0.07, a difference of 0.471 ± 0.004", known) == []
    assert _missing("alpha = 0.97 ± 0.12 and 0.98 ± 0.07", known) == ["0.97 ± 0.12", "0.98 ± 0.07"]
    assert _missing("1.5e-6 ± 2e-7", [(1.54e-6, 2.4e-7)]) == []
