"""``infer-scale`` says when its ranking is not resolved (issue 18, section 5): the score's Monte Carlo
error against a direct simulation, ties of truly equal candidates, resolution of truly different
scales (at once, or after ``--resolve`` raised the count), and bad ``--resolve`` values."""

import json
import math

import numpy as np
import pytest
from cli_calls import run

from depthscale.derivations.analysis.scale_match import match_score, score_se
from depthscale.derivations.analysis.scale_resolution import EQUAL_SCORES, contexts_to_separate, difference, resolution
from depthscale.sims.config import TaskConfig
from depthscale.sims.reference_floors import reference_floors

SPECS = [(0.0, 0.0), (0.5, 0.5), (1.0, 0.25)]


def test_score_se_matches_the_spread_of_simulated_scores():
    """Redraw each row's ln ratio with its error and recompute the score: the spread of the scores is
    score_se (rows away from the kinks of the median and the maximum, so the delta method holds)."""
    ratios = np.array([0.9, 1.05, 1.1, 1.3, 0.97])
    ratio_se = 0.02 * ratios
    rng = np.random.default_rng(0)
    draws = np.exp(np.log(ratios) + rng.standard_normal((20000, ratios.size)) * 0.02)
    scores = np.array([match_score(r, np.ones(ratios.size))["score"] for r in draws])
    sd = scores.std(ddof=1)
    # the s.d. of 20000 normal draws has relative error 1 / sqrt(2 x 19999) = 0.5 %; allow 4 of those
    assert score_se(ratios.tolist(), ratio_se.tolist()) == pytest.approx(sd, rel=0.02)


def test_pair_rules_on_constructed_candidates():
    a = {"d": 4, "P": 8, "reference": "single", "score": 0.2, "score_se": 0.03, "contexts": 400}
    b = {**a, "P": 16, "score": 0.2}
    assert resolution([a, b], {})["tied"][0]["contexts_to_separate"] is None  # equal scores: never separated
    c = {**a, "P": 16, "score": 0.3, "score_se": 0.04, "contexts": 100}  # a different count
    # se(n') = se(n) sqrt(n / n') for each; at n' the difference must be 2 combined s.e.
    n = contexts_to_separate(a, c, {})
    assert 2 * math.sqrt(0.03**2 * 400 / n + 0.04**2 * 100 / n) == pytest.approx(0.1, rel=1e-3)
    assert difference(a, c, {}) == pytest.approx((0.1, 0.05))


def _floors_csv(tmp_path, losses) -> str:
    path = tmp_path / "floors.csv"
    path.write_text("task,k,a,b,L0\n" + "".join(f"topk,2,{a},{b},{v}\n" for (a, b), v in zip(SPECS, losses)))
    return str(path)


def _single_floors(d, P, seed, n, K=2):
    return [
        reference_floors(TaskConfig(task="topk", k=2, a=a, b=b, d=d, P=P), seed, n_fit=n, n_eval=n, n_grid=13, K=K)
        for a, b in SPECS
    ]


def test_truly_equal_candidates_are_named_tied(capsys, tmp_path):
    """With one temperature the signed mixture is the single head itself (same floors), so the two match
    reported floors equal to that head's loss exactly: they tie with equal scores and no context count
    separates them. The non-negative mixture may be the same head too (up to rounding, which differs
    between CPUs): the candidates named equal are exactly the references whose floors agree with the
    reported ones to the stated tolerance, whatever the rounding on this machine."""
    fls = _single_floors(4, 16, 0, 600, K=1)
    assert all(f.mixture.loss == f.single.loss for f in fls)  # the construction: truly the same floors
    argv = ["infer-scale", "--floors", _floors_csv(tmp_path, [f.single.loss for f in fls]), "--d", "4", "--P", "16"]
    argv += ["--contexts", "600", "--n-kappa", "13", "--temperatures", "1"]
    code, out, err = run(capsys, [*argv, "--json"])
    assert code == 0 and err == ""
    res = json.loads(out)["resolution"]
    assert not res["resolved"] and res["scale_resolved"]
    # expected from the floors alone: a reference is equal when each of its floors is within a relative
    # 1e-10 of the reported one (score = |ln median ratio| + max |ln ratio / median| < 3e-10 < 1e-9)
    # and unequal when one of them is off by more than a relative 1e-8 (score > 5e-9 > 1e-9)
    rel = {r: max(abs(getattr(f, r).loss / f.single.loss - 1) for f in fls) for r in ("single", "convex", "mixture")}
    assert all(v < 1e-10 or v > 1e-8 for v in rel.values())  # else this seed cannot tell either way
    expected = {r for r, v in rel.items() if v < 1e-10}
    assert {"single", "mixture"} <= expected
    equal = {res["best"]["reference"]} | {t["reference"] for t in res["tied"] if t["contexts_to_separate"] is None}
    assert equal == expected and abs(res["best"]["score"]) <= EQUAL_SCORES
    assert all(abs(t["difference"]) <= EQUAL_SCORES for t in res["tied"] if t["reference"] in expected)
    assert res["contexts_to_separate"] is None
    code, text, err = run(capsys, argv)
    assert code == 0 and "reference NOT resolved" in text and "equal scores: no count separates them" in text


def test_rounding_differences_are_equal_scores():
    """Scores that differ by rounding only (1e-16) are equal: no count separates them; a real difference
    of 1e-6 is not, and its count follows se(n') = se(n) sqrt(n / n')."""
    a = {"d": 4, "P": 8, "reference": "single", "score": 0.0, "score_se": 0.01, "contexts": 400}
    b = {**a, "P": 16, "score": 1e-16}
    r = resolution([a, b], {})
    assert r["tied"][0]["contexts_to_separate"] is None and r["contexts_to_separate"] is None
    c = {**a, "P": 16, "score": 1e-6}
    n = contexts_to_separate(a, c, {})
    assert n is not None and 2 * math.sqrt(2 * 0.01**2 * 400 / n) == pytest.approx(1e-6, rel=1e-3)


def test_truly_different_scales_are_resolved(capsys, tmp_path):
    """Reported floors of d = 4 (independent contexts, seed 7) against d = 4 and d = 8: the scale is
    decided, and its runner-up is a d = 8 candidate more than 2 s.e. behind."""
    csv = _floors_csv(tmp_path, [f.single.loss for f in _single_floors(4, 16, 7, 3000)])
    argv = ["infer-scale", "--floors", csv, "--d", "4,8", "--P", "16", "--contexts", "800", "--n-kappa", "13"]
    code, out, err = run(capsys, [*argv, "--json"])
    assert code == 0 and err == ""
    obj = json.loads(out)
    res = obj["resolution"]
    assert res["scale_resolved"] and (res["best"]["d"], res["best"]["P"]) == (4, 16)
    ru = res["runner_up"]
    assert ru["d"] == 8 and ru["difference"] > 2 * ru["difference_se"] > 0
    assert all(c["contexts"] == 800 and c["score_se"] > 0 for c in obj["ranking"])
    assert "grad" not in obj["ranking"][0] and "covariances" not in obj


def test_resolve_raises_the_count_until_the_scales_separate(capsys, tmp_path):
    """d = 4 floors against P = 16 and P = 32: tied at 200 contexts; --resolve 2000 re-evaluates the tied
    scales with more contexts and then decides P = 16 (the scale the floors came from)."""
    csv = _floors_csv(tmp_path, [f.single.loss for f in _single_floors(4, 16, 7, 3000)])
    argv = ["infer-scale", "--floors", csv, "--d", "4", "--P", "16,32", "--contexts", "200", "--n-kappa", "13"]
    code, out, _ = run(capsys, [*argv, "--json"])
    before = json.loads(out)["resolution"]
    assert code == 0 and not before["scale_resolved"] and before["contexts_to_separate"] > 200
    code, out, err = run(capsys, [*argv, "--resolve", "2000", "--json"])
    assert code == 0 and err == ""
    obj = json.loads(out)
    res = obj["resolution"]
    assert res["scale_resolved"] and (res["best"]["d"], res["best"]["P"]) == (4, 16)
    rounds = obj["resolve"]["rounds"]
    assert obj["resolve"]["cap"] == 2000 and rounds and all(200 < r["contexts"] <= 2000 for r in rounds)
    assert {c["contexts"] for c in obj["ranking"]} <= {200} | {r["contexts"] for r in rounds}
    assert max(c["contexts"] for c in obj["ranking"]) > 200
    # the raised candidates' errors fell with the count (se ~ 1 / sqrt(contexts))
    assert res["best"]["score_se"] < next(
        c["score_se"] for c in json.loads(run(capsys, [*argv, "--json"])[1])["ranking"] if _same(c, res["best"])
    )


def _same(a, b):
    return (a["d"], a["P"], a["reference"]) == (b["d"], b["P"], b["reference"])


@pytest.mark.parametrize(
    "value,what",
    [
        ("abc", "invalid int"),
        ("1.5", "invalid int"),
        ("0", "larger than contexts=300"),
        ("-4", "larger than contexts=300"),
        ("300", "larger than contexts=300"),
        ("10000001", "at most 10000000"),
    ],
)
def test_bad_resolve_values(capsys, value, what):
    argv = ["infer-scale", "--floors", "example", "--d", "4", "--P", "16", "--contexts", "300", "--resolve", value]
    try:
        code, out, err = run(capsys, argv)
    except SystemExit as exc:  # argparse's own refusal (not an int), through the one-line parser
        code, (out, err) = exc.code, capsys.readouterr()
    assert code == 2 and out == "" and len(err.splitlines()) == 1 and "resolve" in err and what in err


def test_resolve_beyond_memory_is_refused(capsys):
    argv = ["infer-scale", "--floors", "example", "--d", "4", "--P", "100000", "--resolve", "10000000"]
    code, out, err = run(capsys, argv)
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert "resolve=10000000, d=4, P=100000: needs at least" in err and "memory" in err
