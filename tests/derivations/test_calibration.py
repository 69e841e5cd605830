"""Calibration of a claim's verdicts on synthetic curves, and the planner (derivations/claims/calibration.py),
with the ``calibrate`` and ``plan`` commands."""

import json
import math

import numpy as np
import pytest
from cli_calls import run, with_option
from synthetic import protocol_records, record

from depthscale.derivations.analysis.curve import Curve, curves
from depthscale.derivations.analysis.estimate import Estimate
from depthscale.derivations.claims.calibration import NoiseModel, calibrate, noise_model, plan, synthetic_curve
from depthscale.derivations.claims.claim import claim
from depthscale.derivations.claims.evidence import Evidence
from depthscale.derivations.claims.registry import claims
from depthscale.derivations.claims.verdicts import in_range
from depthscale.sims.config import ModelConfig, RunConfig, TaskConfig, TrainConfig, run_key
from depthscale.sims.protocols import PROTOCOLS
from depthscale.sims.store import Store

DEPTHS = (1, 2, 4, 8, 16, 32, 64)


# ------------------------------------------------------------------------------------------------ noise model
def test_the_noise_model_recovers_known_seed_and_pure_deviations():
    # K independent curves of the additive model; the mean of the variance estimates against the
    # truth, within four of its own Monte Carlo standard errors
    rng = np.random.default_rng(1)
    K, S, J, seed_sd, pure_sd = 200, 20, 6, 0.01, 0.002
    L = 2.0 ** np.arange(J)
    seed_var, pure_var = [], []
    for _ in range(K):
        R = 0.5 + 0.4 / L + seed_sd * rng.standard_normal((S, 1)) + pure_sd * rng.standard_normal((S, J))
        m = noise_model(Curve.from_arrays(L, R))
        seed_var.append(m.seed_sd**2)
        pure_var.append(m.pure_sd**2)
        assert m.r1 == pytest.approx(R[:, 0].mean(), rel=1e-12)
        assert m.gain == pytest.approx(R[:, 0].mean() - R[:, -1].mean(), rel=1e-12)
    for got, truth in ((seed_var, seed_sd**2), (pure_var, pure_sd**2)):
        err = np.std(got, ddof=1) / math.sqrt(K)
        assert abs(np.mean(got) - truth) < 4 * err, (np.mean(got), truth, err)


def test_the_noise_model_needs_two_complete_seeds():
    c = Curve.from_arrays([1, 2, 4], [[1.0, 0.5, 0.3], [1.1, np.nan, 0.4]])
    with pytest.raises(ValueError, match="curve='arrays': must be a curve with at least 2 seeds"):
        noise_model(c)


def test_a_synthetic_curve_keeps_the_condition_and_follows_the_law():
    (real,) = curves(
        [record(depth=L, seed=s, loss=0.5 + 0.4 / L + 0.01 * s, eval_contexts=8192) for s in (0, 1) for L in DEPTHS]
    )
    quiet = NoiseModel(DEPTHS, (0, 1), 0.9, 0.4, 0.0, 0.0)
    syn = synthetic_curve(real, 0.5, np.random.default_rng(0), noise=quiet, n_seeds=3, depths=(1, 4, 16, 256))
    assert (syn.key, syn.label, syn.runs, syn.eval_contexts, len(syn.seeds)) == (real.key, real.label, {}, 8192, 3)
    # L0 + c L^-0.5 through R_1 = 0.9 with a gain of 0.4 from L = 1 to L = 64: c (1 - 1/8) = 0.4
    c = 0.4 / (1 - 64**-0.5)
    np.testing.assert_allclose(syn.loss, np.tile(0.9 - c + c * np.array([1, 4, 16, 256]) ** -0.5, (3, 1)))


# ------------------------------------------------------------------------------------------------ calibrate
def _protocol_evidence():
    """One cosine-protocol curve at 4 seeds on 1..64 whose loss is 0.5 + 0.4 / L within 2e-5."""
    cosine = next(p for p in PROTOCOLS if p.name == "cosine")

    def fields(L, wiggle):
        return {"final_loss": (0.5 + 0.4 / L) * (1 + (wiggle - 1) * 0.01)}

    recs = protocol_records(cosine, {"model": "softmax"}, fields, DEPTHS, seeds=(0, 1, 2, 3))
    return Evidence(curves(recs))


INVERSE = claims("protocol-inverse-depth")[0]
ROW = "cosine top-2 (a,b)=(0,0) d=16 P=128"


def test_calibration_at_tiny_noise_passes_the_law_and_fails_a_wrong_exponent():
    ev = _protocol_evidence()
    one, wrong = calibrate(INVERSE, ev, ROW, alphas=(1.0, 0.3), replicates=10, seed=3)
    assert (one.alpha, one.n, wrong.alpha) == (1.0, 10, 0.3)
    assert one.pass_rate >= 0.9 and wrong.fail_rate >= 0.9
    for r in (one, wrong):
        assert r.pass_rate + r.fail_rate + r.indicative_rate + r.other_rate == pytest.approx(1.0)
        assert r.pass_se == pytest.approx(math.sqrt(r.pass_rate * (1 - r.pass_rate) / r.n))


def test_calibrate_refuses_what_it_cannot_calibrate():
    ev = _protocol_evidence()
    with pytest.raises(
        ValueError,
        match=r"condition='nope': must be the condition of a row of claim 'protocol-inverse-depth': 'cosine top-2",
    ):
        calibrate(INVERSE, ev, "nope", replicates=10)
    with pytest.raises(ValueError, match="alphas=-1: must be > 0"):
        calibrate(INVERSE, ev, ROW, alphas=[1.0, -1], replicates=10)
    with pytest.raises(ValueError, match=r"replicates=5: must be an integer in \[10, 100000\]"):
        calibrate(INVERSE, ev, ROW, replicates=5)

    @claim("test-two-curves", tolerance="none", family="test")
    def two(c, ev):
        """Both curves fall"""
        return [c.decided("both", True, ev.curves, "", None, None, None)]

    a = Curve.from_arrays(DEPTHS, np.tile(1.0 / np.array(DEPTHS), (3, 1)) + [[0.0], [0.01], [0.02]], label="a")
    b = Curve.from_arrays(DEPTHS, np.tile(1.0 / np.array(DEPTHS), (3, 1)) + [[0.0], [0.02], [0.01]], label="b")
    with pytest.raises(ValueError, match=r"condition='both': .*its verdict rests on 2"):
        calibrate(two, Evidence([a, b]), "both", replicates=10)


# ------------------------------------------------------------------------------------------------ plan
BAND = (0.8, 1.2)


def _gain_share(alpha: float) -> float:
    """(R_1 - R_2) / (R_1 - R_64) of L0 + c L^-alpha: alpha alone decides it, seed offsets cancel."""
    return (1 - 2**-alpha) / (1 - 64**-alpha)


def _share_estimate(R: np.ndarray) -> Estimate:
    return Estimate.from_seeds((R[:, 0] - R[:, 1]) / (R[:, 0] - R[:, -1]))


@claim("test-gain-share", tolerance="t-test", expected=BAND, family="test")
def gain_share(c, ev):
    """The share of the depth gain made by the second layer is that of alpha in [0.8, 1.2]

    A fast stand-in for a law claim: decided by a t-test over seeds, no fit."""
    out = []
    for x in ev.curves:
        e = _share_estimate(x.loss)
        ok = in_range(e, _gain_share(BAND[0]), _gain_share(BAND[1]))
        out.append(c.decided(x.label, ok, [x], "", BAND, e, None))
    return out


def _noisy_store_records(k_seconds=0.01):
    """Four seeds at depths 1..64 of 0.5 + 0.4 / L with seed offsets and a 2 % pure error; each run took
    ``k_seconds (19 + L)`` seconds (the softmax cost model's units at fixed size are proportional to 19 + L)."""
    rng = np.random.default_rng(7)
    out = []
    for s in range(4):
        u = 0.01 * rng.standard_normal()
        for L in DEPTHS:
            loss = 0.5 + 0.4 / L + u + 0.02 * rng.standard_normal()
            out.append(record(depth=L, seed=s, loss=loss, wall_seconds=k_seconds * (19 + L)))
    return out


def test_the_planner_agrees_with_a_direct_monte_carlo_and_counts_the_cost():
    recs = _noisy_store_records()
    ev = Evidence(curves(recs))
    label = ev.curves[0].label
    (p,) = plan(gain_share, ev, label, alternatives=[0.5], power=0.8, seeds_max=24, depth_sets=[DEPTHS], replicates=60)
    assert p.correct == "fail" and p.seeds is not None
    # the rate of fails at that many seeds: curves of the measured noise drawn here and decided directly
    m = noise_model(ev.curves[0])
    L = np.array(DEPTHS, dtype=float)
    c = m.gain / (1 - 64**-0.5)
    rng = np.random.default_rng(11)
    hits, n = 0, 2000
    for _ in range(n):
        u = m.seed_sd * rng.standard_normal((p.seeds, 1))
        R = m.r1 - c + c * L**-0.5 + u + m.pure_sd * rng.standard_normal((p.seeds, L.size))
        hits += in_range(_share_estimate(R), _gain_share(BAND[0]), _gain_share(BAND[1])) is False
    q = min(max(hits / n, 0.05), 0.95)
    assert abs(p.achieved - hits / n) < 4 * math.sqrt(q * (1 - q) * (1 / p.replicates + 1 / n))
    # the missing runs: every depth for the seeds beyond the four there are, at 0.01 (19 + L) s each
    assert p.extra_runs == len(DEPTHS) * (p.seeds - 4)
    assert p.core_hours == pytest.approx((p.seeds - 4) * sum(0.01 * (19 + L) for L in DEPTHS) / 3600, rel=1e-9)


def test_the_planner_asks_more_seeds_for_more_power():
    ev = Evidence(curves(_noisy_store_records()))
    label = ev.curves[0].label
    needed = []
    for power in (0.3, 0.6, 0.8, 0.95):
        (p,) = plan(gain_share, ev, label, [0.5], power, seeds_max=24, depth_sets=[DEPTHS], replicates=40, seed=2)
        needed.append(math.inf if p.seeds is None else p.seeds)
    assert needed == sorted(needed) and needed[0] < needed[-1], needed


def test_the_planner_needs_a_band():
    @claim("test-no-band", tolerance="none", expected=1.0, family="test")
    def point(c, ev):
        """Something about alpha"""
        return [c.decided(x.label, True, [x], "", 1.0, None, None) for x in ev.curves]

    ev = Evidence(curves(_noisy_store_records()))
    with pytest.raises(ValueError, match=r"must be a row whose expected value is a band \(lo, hi\)"):
        plan(point, ev, ev.curves[0].label, replicates=10)
    with pytest.raises(ValueError, match=r"power=1.0: must be in \(0, 1\)"):
        plan(gain_share, ev, ev.curves[0].label, power=1.0, replicates=10)


# ------------------------------------------------------------------------------------------------ commands
OBJECTION = "softmax top-2 (a,b)=(0.5,0.5) d=16 P=128, 20,000 steps"


def _objections_store(path):
    """The objections preset's 20,000-step curve: three seeds at depths 1..32 of 0.35 + 0.02 / L."""
    rng = np.random.default_rng(5)
    with Store(path, mode="write") as st:
        for s in range(3):
            for L in (1, 2, 4, 8, 16, 32):
                cfg = RunConfig(
                    TaskConfig(task="topk", k=2, a=0.5, b=0.5, d=16, P=128),
                    ModelConfig(model="softmax", depth=L),
                    TrainConfig(schedule="cosine", lr=3e-3, steps=20000, batch=1024, eval_contexts=10240),
                )
                loss = 0.35 + 0.02 / L + 0.002 * rng.standard_normal()
                st.put(
                    {
                        "key": run_key(cfg, s),
                        "config": cfg.to_dict(),
                        "seed": s,
                        "status": "ok",
                        "converged": True,
                        "final_loss": loss,
                        "wall_seconds": 100.0 * L,
                    }
                )
    return path


def test_calibrate_and_plan_commands_print_json(tmp_path, capsys):
    store = str(_objections_store(tmp_path / "s.sqlite"))
    base = ["--store", store, "--preset", "objections", "--claim", "objections-inverse-depth", "--condition", OBJECTION]
    code, out, err = run(capsys, ["calibrate", *base, "--alphas", "0.5,1", "--replicates", "10", "--json"])
    assert code == 0, err
    rows = json.loads(out)
    assert [r["alpha"] for r in rows] == [0.5, 1.0] and {r["n"] for r in rows} == {10}
    for r in rows:
        assert {"pass", "fail", "indicative"} <= set(r)
        assert r["pass"] + r["fail"] + r["indicative"] + r["other"] == pytest.approx(1.0)
    options = ["--power", "0.8", "--alternatives", "1", "--seeds-max", "3", "--replicates", "10"]
    code, out, err = run(capsys, ["plan", *base, *options, "--depths", "1,2,4,8,16,32", "--json"])
    assert code == 0, err
    (p,) = json.loads(out)
    assert {"alternative", "correct", "depths", "seeds", "achieved", "extra_runs", "core_hours"} <= set(p)
    assert (p["alternative"], p["correct"], p["depths"], p["power"]) == (1.0, "pass", [1, 2, 4, 8, 16, 32], 0.8)
    assert p["seeds"] in (None, 3)


@pytest.mark.parametrize(
    "flag, value, words",
    [
        ("--claim", "no-such-claim", "claim='no-such-claim': must be the id of a claim"),
        (
            "--condition",
            "no such row",
            "condition='no such row': must be the condition of a row of claim 'objections-inverse-depth'",
        ),
        ("--alphas", "1,-0.5", "alphas='1,-0.5': must be positive numbers"),
        ("--replicates", "5", "replicates=5: must be an integer in [10, 100000]"),
    ],
)
def test_calibrate_refuses_bad_input_in_one_line(tmp_path, capsys, flag, value, words):
    store = str(_objections_store(tmp_path / "s.sqlite"))
    argv = ["calibrate", "--store", store, "--preset", "objections", "--claim", "objections-inverse-depth"]
    argv += ["--condition", OBJECTION, "--replicates", "10"]
    code, out, err = run(capsys, with_option(argv, flag, value))
    assert code == 2 and out == "" and err.count("\n") == 1 and words in err, err


def test_plan_refuses_a_power_outside_zero_one(tmp_path, capsys):
    store = str(_objections_store(tmp_path / "s.sqlite"))
    argv = ["plan", "--store", store, "--claim", "objections-inverse-depth", "--condition", OBJECTION]
    code, out, err = run(capsys, [*argv, "--power", "1.5"])
    assert code == 2 and out == "" and err.count("\n") == 1 and "power=1.5" in err, err
