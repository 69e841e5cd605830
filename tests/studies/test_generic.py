"""The generic study (studies/generic): any curve's depth gain and inverse-depth law, by the one rule.

Synthetic curves whose losses follow a known law, three seeds at seven depths (1..64, decisive
runs): 1/L passes the inverse-depth claim and L^-0.3 fails it; a falling curve passes the depth
gain and a rising one fails it, on a user's map and model alike; linear attention gets no
inverse-depth row. A report of a store without a preset holds the studies whose claims ran.
"""

from __future__ import annotations

import numpy as np
import pytest

from depthscale.derivations.analysis.curve import curves
from depthscale.derivations.claims.evidence import Evidence
from depthscale.derivations.claims.registry import evaluate_claims
from depthscale.derivations.report.reporting import studies_with_runs
from depthscale.derivations.study import calibration_table, plan_table, studies, study
from depthscale.sims.config import ModelConfig, RunConfig, TaskConfig, TrainConfig, run_key
from depthscale.studies.generic import claims as generic
from depthscale.studies.generic import sections as generic_sections

DEPTHS = (1, 2, 4, 8, 16, 32, 64)


def _records(law, *, model="softmax", noise=0.002, seeds=(0, 1, 2), d=8):
    rng = np.random.default_rng(3)
    out = []
    for s in seeds:
        offset = 1 + noise * rng.standard_normal()  # a seed's own level, shared by its depths
        for L in DEPTHS:
            cfg = RunConfig(
                TaskConfig(task="topk", k=2, d=d, P=64),
                ModelConfig(model=model, depth=L),
                TrainConfig(steps=100, window=10, eval_contexts=4096),
            )
            loss = law(L) * offset * (1 + 0.2 * noise * rng.standard_normal())
            out.append(
                {
                    "key": run_key(cfg, s),
                    "config": cfg.to_dict(),
                    "seed": s,
                    "status": "ok",
                    "converged": True,
                    "steps": 100,
                    "final_loss": loss,
                    "final_loss_se": 1e-4 * loss,
                }
            )
    return out


def _rows(claim, records):
    return claim(Evidence(curves(records)))


@pytest.mark.parametrize(
    "law,helps,inverse",
    [
        (lambda L: 0.5 + 0.4 / L, "pass", "pass"),
        (lambda L: 0.5 + 0.4 * L**-0.3, "pass", "fail"),
        (lambda L: 0.5 + 0.01 * L, "fail", "fail"),
    ],
    ids=["inverse", "shallow", "rising"],
)
def test_a_curve_is_judged_by_its_law(law, helps, inverse):
    recs = _records(law)
    (gain,) = _rows(generic.depth_helps, recs)
    (inv,) = _rows(generic.inverse_depth, recs)
    assert (gain.verdict, inv.verdict) == (helps, inverse), (gain.reason, inv.reason)
    # the gain is the seeds' own, against an independent computation
    R = np.array([[r["final_loss"] for r in recs if r["seed"] == s] for s in (0, 1, 2)])
    g = (R[:, 0] - R[:, -1]) / R[:, 0]
    assert gain.measured == pytest.approx(g.mean()) and gain.error == pytest.approx(g.std(ddof=1) / np.sqrt(3))


def test_two_seeds_decide_nothing_and_linear_gets_no_law_row():
    (gain,) = _rows(generic.depth_helps, _records(lambda L: 0.5 + 0.4 / L, seeds=(0, 1)))
    assert gain.verdict == "indicative" and gain.would_be == "pass"
    (none,) = _rows(generic.inverse_depth, _records(lambda L: 0.5 + 0.4 / L, model="linear"))
    assert none.verdict == "not run" and "other than linear" in none.reason
    (empty,) = _rows(generic.depth_helps, [])
    assert empty.verdict == "not run" and empty.reason == generic.NO_CURVES


def test_a_report_without_a_preset_holds_the_studies_whose_claims_ran():
    every = list(studies().values())
    claims = [c for s in every for c in s.claims]
    ev = Evidence(curves(_records(lambda L: 0.5 + 0.4 / L)))
    rows = evaluate_claims(ev, [c for c in claims if c.kind != "theory"])
    kept, kept_rows, left_out = studies_with_runs(every, rows)
    names = [s.name for s in kept]
    assert "generic" in names and "core" in names  # the generic claims and the CLT identity judge any run
    assert "scale" in left_out and "nonlinearities" in left_out
    assert {r.claim_id for r in kept_rows} <= {c.id for s in kept for c in s.claims}
    # an empty store: nothing ran, nothing is left out
    empty = evaluate_claims(Evidence(curves([])), [c for c in claims if c.kind != "theory"])
    assert studies_with_runs(every, empty)[2] == []
    assert study("generic").presets == ()


def _strong_and_linear():
    strong = _records(lambda L: 0.1 + 0.4 / L)  # gain 79 % of R_1, noise 0.2 %
    return curves(strong)[0].label, Evidence(curves(strong + _records(lambda L: 0.5 + 0.4 / L, model="linear")))


def test_the_report_shows_the_error_rates_of_a_curves_inverse_depth_row(monkeypatch):
    # the generic study's table, at 10 synthetic curves of the negative control alpha = 2 (the report's
    # own 3 x 50 are in the slow test below): a strong 1/L curve's row, none for linear attention
    monkeypatch.setattr(generic_sections, "ALPHAS", (2.0,))
    monkeypatch.setattr(generic_sections, "REPLICATES", 10)
    label, ev = _strong_and_linear()
    (table,) = study("generic").sections(ev).results
    (row,) = table.rows
    assert row[0].startswith(f"{label} (gain 78.8% of R_1") and row[1] == "2"  # (0.5 - 0.1 - 0.4/64) / 0.5
    assert float(row[3]) >= 0.9, row  # fails a wrong law at this effect size
    (one_seed,) = curves(_records(lambda L: 0.5 + 0.4 / L, seeds=(0,), d=4))
    assert calibration_table(generic.inverse_depth, Evidence([one_seed]), [(one_seed.label, one_seed)]) is None


def test_the_planner_table_says_how_many_seeds_decide_a_curves_row():
    # at a strong effect, three seeds already fail a wrong law (alpha = 2) in at least 8 of 10
    # synthetic curves; the curve has them, so no run is missing
    label, ev = _strong_and_linear()
    curve = next(c for c in ev.curves if c.label == label)
    (row,) = plan_table(generic.inverse_depth, ev, [(label, curve)], alternatives=(2.0,), replicates=10).rows
    assert row[:4] == (label, "2", "fail", "3"), row
    assert float(row[4].split(" ± ")[0]) >= 0.8 and row[5].startswith("0 runs"), row


@pytest.mark.slow
def test_at_a_strong_effect_the_true_law_passes_and_the_negative_controls_fail():
    # the report's 50 synthetic curves per alpha: each right verdict in at least 45 of 50
    _, ev = _strong_and_linear()
    (table,) = study("generic").sections(ev).results
    rates = {row[1]: (float(row[2]), float(row[3])) for row in table.rows}  # alpha -> (pass, fail)
    assert list(rates) == ["0.5", "1", "2"]
    assert rates["1"][0] >= 0.9 and rates["0.5"][1] >= 0.9 and rates["2"][1] >= 0.9, rates
