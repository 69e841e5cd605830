"""Each study's answer (the first section of its report, and answer.md beside it): the first sentence
answers the study's question, yes, no or partly (not decided only where every verdict behind it is
indicative), with the tally of the verdicts behind it, says "in these settings" and names them; and
every number it gives is one of its report's claim results in ``claims.json`` (a measured value with
its error, an expected value, a test's degrees of freedom, a count of verdicts) or a number the
conditions, claims and tolerances name.

The answer is told here from the committed ``claims.json`` of the study's report; a report folder with
an ``answer.md`` (written by the report since it has one) is checked as it was committed.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from depthscale.derivations.claims.evidence import Evidence
from depthscale.derivations.claims.stored import load_claims
from depthscale.derivations.study import studies

ROOT = Path(__file__).resolve().parents[2]
CONTROL = "ensemble-control"  # the paper-curves study's positive control: not "real training"

# study: (its report, the claims whose verdicts answer its question, which rows of them count)
CASES = {
    "core": ("cpu-report", ("linear-exponent", "softmax-top2-exponent"), None),
    "protocols": ("protocol-report", ("protocol-inverse-depth",), None),
    "paper-curves": ("curves-report", ("protocol-inverse-depth",), lambda row: CONTROL not in row["id"]),
    "linear-start": ("linear-start-report", ("linear-optimum", "linear-exponent-finite"), None),
    "nonlinearities": ("nonlinearities-report", ("nonlin-inverse-depth",), None),
}
VERBS = {"pass": "passes on", "fail": "fails on", "indicative": "is indicative on"}
NUM = r"[-−]?\d[\d,]*(?:\.\d+)?(?:e[-−+]?\d+)?"
ESTIMATE = re.compile(rf"({NUM}) ± ({NUM})")
SETTINGS = re.compile(r"in these settings \((?:[^()]|\([^()]*\))*\)")
SYMBOL = re.compile(r"\b[A-Za-z]+_\w+")  # R_1, C_64, A_L: names, not numbers
T_TEST = re.compile(r"\bt\((\w+)\)")


def _rows(report: str) -> list[dict]:
    return json.loads((ROOT / "docs" / report / "claims.json").read_text(encoding="utf-8"))


def _number(text: str) -> float:
    return float(text.replace(",", "").replace("−", "-"))


def _half_digit(text: str) -> float:
    """Half a unit of the last digit ``text`` shows."""
    m = re.fullmatch(r"(\d*)\.?(\d*)(?:e([-−+]?\d+))?", text.replace(",", "").lstrip("+-−"))
    assert m, text
    exponent = int(m.group(3).replace("−", "-")) if m.group(3) else 0
    return 0.5 * 10.0 ** (exponent - len(m.group(2))) * (1 + 1e-9)


def _word(rows: list[dict]) -> str | None:
    """The answer one claim's verdicts give (None: not tested)."""
    c = Counter(r["verdict"] for r in rows if r["verdict"] in VERBS)
    if not c:
        return None
    if c["pass"] and c["fail"]:
        return "Partly"
    return "Yes" if c["pass"] else "No" if c["fail"] else "Not decided"


def _joint(words: list[str | None]) -> str:
    got = [w for w in words if w is not None]
    if len(set(got)) == 1:
        return got[0]
    if any(w in ("Yes", "Partly") for w in got):
        return "Partly"
    return "No" if "No" in got else "Not decided"


def _first_sentence(text: str) -> str:
    """Up to the first full stop that ends a sentence (not one inside a number)."""
    m = re.search(r"\.(\s|$)", text)
    return text[: m.start() + 1] if m else text


def check_first_sentence(text: str, rows: list[dict], claim_ids, keep) -> None:
    first = _first_sentence(text)
    per_claim = []
    for cid in claim_ids:
        mine = [r for r in rows if r["claim_id"] == cid and r["verdict"] in VERBS and (keep is None or keep(r))]
        per_claim.append(_word(mine))
        c = Counter(r["verdict"] for r in mine)
        for verdict, n in c.items():  # each count of the tally, with its verb
            assert re.search(rf"\b{VERBS[verdict]} {n}\b", first), (cid, verdict, n, first)
        if mine:  # the total, with the first count
            assert re.search(rf"\bon \d+ of {len(mine)}\b", first), (cid, len(mine), first)
    word = _joint(per_claim)
    assert first.startswith(f"{word}: "), (word, first)
    assert SETTINGS.search(first), f"the first sentence names no settings: {first}"


def check_numbers(text: str, rows: list[dict]) -> None:
    """Every number of ``text`` comes from the claim results ``rows``."""
    labels = " ".join(r["id"] + " " + r["claim"] + " " + r["tolerance"] for r in rows)
    named = {_number(t) for t in re.findall(NUM, SYMBOL.sub("", labels))}
    values = [
        float(v)
        for r in rows
        for v in (r["measured"], r["error"], *(r["expected"] if isinstance(r["expected"], list) else [r["expected"]]))
        if isinstance(v, int | float) and not isinstance(v, bool)
    ]
    pairs = [(r["measured"], r["error"]) for r in rows if r["measured"] is not None and r["error"] is not None]
    dofs = {m for r in rows for m in T_TEST.findall(r["test"] or "")}
    counts = Counter()
    for r in rows:  # every count a tally may give: per claim, verdict, would-be verdict and estimate or none
        for key in (
            (r["claim_id"],),
            (r["claim_id"], r["verdict"]),
            (r["claim_id"], r["verdict"], r["would_be"]),
            (r["claim_id"], r["verdict"], r["measured"] is None),
        ):
            counts[key] += 1
    # the settings name the conditions' sizes
    sizes = {int(v) for r in rows for k in ("d", "P") if (v := r["condition"].get(k)) is not None}
    sizes |= {int(v) for r in rows for v in re.findall(r"\b[dP]=(\d+)\b", r["id"])}
    for s in SETTINGS.findall(text):
        for v in re.findall(r"\b[dP] = (\d+)(?:-(\d+))?", s):
            assert {int(x) for x in v if x} <= sizes, (s, sizes)
    body = SYMBOL.sub("", SETTINGS.sub("", text))
    for dof in T_TEST.findall(body):
        assert dof in dofs, f"t({dof}) is no test of the claims"
    body = T_TEST.sub("", body)
    for v, e in ESTIMATE.findall(body):
        assert any(
            abs(m - _number(v)) <= _half_digit(v) and abs(se - _number(e)) <= _half_digit(e) for m, se in pairs
        ), f"{v} ± {e} is no measured value ± error of the claims"
    body = ESTIMATE.sub("", body)
    for token in re.findall(NUM, body):
        x = _number(token)
        ok = (
            x in named
            or (x.is_integer() and int(x) in counts.values())
            or any(abs(abs(v) - abs(x)) <= _half_digit(token) for v in values)
        )
        assert ok, f"{token} in the answer is none of the claims' numbers: {text}"


@pytest.mark.parametrize("study", sorted(CASES))
def test_each_answer_answers_its_question_with_its_claims_numbers(study):
    report, claim_ids, keep = CASES[study]
    rows = _rows(report)
    told = studies()[study].story(load_claims(ROOT / "docs" / report / "claims.json"), Evidence([]))
    text = "\n\n".join(told.answer)
    check_first_sentence(text, rows, claim_ids, keep)
    check_numbers(text, rows)
    assert len(text.split()) <= 140, f"{len(text.split())} words: {text}"


@pytest.mark.parametrize("study", sorted(CASES))
def test_each_committed_answer_md_matches_its_claims(study):
    report, claim_ids, keep = CASES[study]
    path = ROOT / "docs" / report / "answer.md"
    if not path.exists():
        pytest.skip(f"docs/{report} was built before reports wrote answer.md")
    text = path.read_text(encoding="utf-8")
    rows = _rows(report)
    check_first_sentence(text, rows, claim_ids, keep)
    check_numbers(text, rows)


def test_the_checks_catch_a_wrong_tally_and_a_number_of_no_claim():
    rows = [
        {
            "id": "x top-2 d=16 P=128",
            "claim_id": "x",
            "claim": "alpha in [0.8, 1.2]",
            "tolerance": "t-test",
            "verdict": v,
            "would_be": None,
            "measured": m,
            "error": e,
            "expected": [0.8, 1.2],
            "test": "fit n=7, t(4) = 2.78",
            "condition": {"d": 16, "P": 128},
        }
        for v, m, e in (("fail", 0.10994, 0.0596), ("indicative", None, None), ("indicative", 0.85, 0.43))
    ]
    good = (
        "No: in these settings (d = 16, P = 128, two seeds), inverse depth fails on 1 of 3 curves and is "
        "indicative on 2; clearest fail, top-2: alpha = 0.110 ± 0.060 (fail, t(4))."
    )
    check_first_sentence(good, rows, ("x",), None)
    check_numbers(good, rows)
    with pytest.raises(AssertionError):  # a count that is not the tally
        check_first_sentence(good.replace("fails on 1", "fails on 2"), rows, ("x",), None)
    with pytest.raises(AssertionError):  # a yes where it fails and passes nowhere
        check_first_sentence("Yes" + good[2:], rows, ("x",), None)
    with pytest.raises(AssertionError):  # no settings named
        check_first_sentence(good.replace("in these settings (d = 16, P = 128, two seeds), ", ""), rows, ("x",), None)
    with pytest.raises(AssertionError):  # an estimate that is no claim's
        check_numbers(good.replace("0.110 ± 0.060", "0.130 ± 0.060"), rows)
    with pytest.raises(AssertionError):  # a test the claims did not use
        check_numbers(good.replace("t(4)", "t(9)"), rows)
    with pytest.raises(AssertionError):  # a size no condition has
        check_numbers(good.replace("d = 16", "d = 32"), rows)
    with pytest.raises(AssertionError):  # a bare number from nowhere
        check_numbers(good + " It rose by 0.731.", rows)
