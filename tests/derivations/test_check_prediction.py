"""``check_prediction`` and ``depthscale check``: a law, a parameter's interval, a depth window and data,
decided by the studies' claim machinery; controls that pass and controls that fail."""

import json
import math

import numpy as np
import pytest
from synthetic import curve as synthetic_curve
from synthetic import record

from depthscale import check_prediction
from depthscale.derivations.analysis.curve import Curve, curves
from depthscale.derivations.analysis.estimate import Estimate, t_quantile
from depthscale.derivations.analysis.fits import fit_offset_power, fit_power_law
from depthscale.derivations.check import GENERIC_CLAIMS, PredictionCheck
from depthscale.derivations.claims.verdicts import in_range
from depthscale.derivations.cli.app import main
from depthscale.sims.store import Store
from depthscale.theory.equal_step import r_con, validity_depth
from depthscale.theory.spectra import PowerLawSpectrum

A, B = 1.5, 0.5
ZETA = (A + B - 1) / A
DEPTHS = (1, 2, 4, 8, 16, 32, 64)


def equal_step_records(d, depths=DEPTHS, seeds=(0, 1, 2), noise=0.002):
    """Runs of linear attention on the easy task whose loss is the exact equal-step d-mode sum (three
    seeds by default: the fewest that decide)."""
    spec = PowerLawSpectrum(A, B, d)
    return synthetic_curve(
        lambda L: float(np.asarray(r_con(spec, L)).ravel()[0]),
        seeds=seeds,
        depths=depths,
        noise=noise,
        model="linear",
        task="easy-fresh",
        a=A,
        b=B,
        d=d,
        P=256,
    )


def power_arrays(alpha, seeds=3, depths=DEPTHS, noise=0.003, seed=0):
    rng = np.random.default_rng(seed)
    L = np.asarray(depths, dtype=float)
    return L, 2.0 * L**-alpha * (1 + noise * rng.standard_normal((seeds, L.size)))


# ------------------------------------------------------------------ the tester's prediction (issue 41)
def test_the_zeta_law_at_d16_is_indicative_naming_the_validity_window():
    recs = equal_step_records(16)
    check = check_prediction(recs, "power", alpha=ZETA, tol=0.05, validity=0.1)
    r = check.result
    assert validity_depth(PowerLawSpectrum(A, B, 16), 0.1) < 1  # no depth at all in the 10 % window
    assert r.verdict == "indicative" and r.would_be is None
    assert "validity window L <= 0.868" in r.reason and "in the window L <= 0.868" in r.reason
    assert check.window == (-math.inf, pytest.approx(0.868, abs=1e-3))
    # without the window the full range decides, and the zeta law fails: the exact sum's slope runs
    # from 0.64 to 1.83 over these depths (a control that must fail)
    full = check_prediction(recs, "power", alpha=ZETA, tol=0.05).result
    assert full.verdict == "fail" and full.measured > ZETA + 0.2


def test_the_zeta_law_holds_inside_its_window_at_large_d():
    # the equal-step model against its own law at a d whose window holds enough depths: a control that must pass
    d = 1024
    Lv = validity_depth(PowerLawSpectrum(A, B, d), 0.1)
    recs = equal_step_records(d, depths=(2, 4, 8, 16, 32, 64, 128, 256))
    check = check_prediction(recs, "power", alpha=ZETA, tol=0.05, validity=0.1)
    assert check.window[1] == pytest.approx(Lv) and check.fit.depths[-1] <= Lv
    assert check.result.verdict == "pass", check.result.reason
    # independent: the same fit by hand on the seed means
    (c,) = curves(recs)
    keep = c.depths <= Lv
    by_hand = fit_power_law(c.depths[keep].astype(float), c.mean[keep])
    assert check.result.measured == pytest.approx(by_hand.params["alpha"], rel=1e-9)


def test_validity_needs_linear_attention_on_an_easy_task():
    softmax = synthetic_curve(lambda L: 1.0 / L, seeds=(0, 1))
    with pytest.raises(ValueError, match=r"^validity=0.1: must be given only for linear attention"):
        check_prediction(softmax, "power", alpha=(0.9, 1.1), validity=0.1)
    L, R = power_arrays(0.7)
    ok = check_prediction((L, R), "power", alpha=(0.6, 0.75), validity=0.1, spectrum=PowerLawSpectrum(A, B, 1024))
    assert ok.window[1] == pytest.approx(validity_depth(PowerLawSpectrum(A, B, 1024), 0.1))


# ------------------------------------------------------------------ predictions that hold and fail
def test_a_prediction_that_holds_passes_and_one_that_does_not_fails():
    L, R = power_arrays(0.7)
    held = check_prediction((L, R), "power", alpha=(0.6, 0.75))
    failed = check_prediction((L, R), "power", alpha=(0.9, 1.1))
    assert held.result.verdict == "pass" and failed.result.verdict == "fail"
    fit = fit_power_law(L, R.mean(axis=0))  # independent: the fit by hand, the t-test by hand
    e = Estimate.from_fit(fit, "alpha")
    assert held.result.measured == pytest.approx(fit.params["alpha"], rel=1e-9)
    assert held.result.test == f"fit n=7, t(5) = {t_quantile(5):.2f}"
    assert abs(e.value - 0.7) < e.margin and (e.value + e.margin < 0.9)
    assert isinstance(held, PredictionCheck) and held.fit.depths == DEPTHS


def test_a_single_value_with_a_tolerance_is_the_interval_around_it():
    L, R = power_arrays(0.7)
    a = check_prediction((L, R), "power", alpha=0.7, tol=0.05).result
    assert a.expected == pytest.approx((0.65, 0.75)) and a.verdict == "pass"
    with pytest.raises(ValueError, match=r"^tol=None: must be a tolerance > 0"):
        check_prediction((L, R), "power", alpha=0.7)


def test_a_window_that_leaves_out_a_bending_tail_decides_the_law():
    def bent(L):
        return 2.0 * L**-0.7 if L <= 32 else 2.0 * 32**-0.7 * (L / 32) ** -0.1

    recs = synthetic_curve(bent, depths=(1, 2, 4, 8, 16, 32, 64, 128, 256))
    assert check_prediction(recs, "power", alpha=(0.65, 0.75)).result.verdict == "fail"
    inside = check_prediction(recs, "power", alpha=(0.65, 0.75), L_max=32)
    assert inside.result.verdict == "pass" and "window L <= 32" in inside.result.reason


def test_too_few_depths_in_the_window_is_indicative_naming_it():
    L, R = power_arrays(0.7)
    r = check_prediction((L, R), "power", alpha=(0.6, 0.75), L_max=8).result  # 4 depths spanning x8
    assert r.verdict == "indicative" and r.would_be == "pass"
    assert "depths with a positive loss [1, 2, 4, 8] (need >= 5 spanning x32)" in r.reason
    assert "window L <= 8" in r.reason
    none = check_prediction((L, R), "offset", alpha=(0.6, 0.75), L_min=16, L_max=32).result
    assert none.verdict == "indicative" and "in the window 16 <= L <= 32" in none.reason


def test_an_unidentified_fit_is_indicative_with_its_reason():
    L = np.asarray(DEPTHS, dtype=float)
    flat = np.tile(0.5 + 0 * L, (2, 1)) * (1 + 0.001 * np.array([[1, -1, 1, -1, 1, -1, 1], [-1, 1, -1, 1, -1, 1, -1]]))
    r = check_prediction((L, flat), "offset", alpha=(0.8, 1.2)).result
    assert r.verdict == "indicative" and "fit not identified" in r.reason and r.measured is None


# ------------------------------------------------------------------ a user's law
def test_a_callable_law_agrees_with_the_built_in_one():
    L, R = power_arrays(0.7)

    def mine(L, c, alpha):
        return c * L**-alpha

    user = check_prediction((L, R), mine, init={"c": 1.0, "alpha": 0.3}, alpha=(0.6, 0.75))
    built = check_prediction((L, R), "power", alpha=(0.6, 0.75))
    assert user.result.verdict == built.result.verdict == "pass"
    assert user.fit.params["alpha"] == pytest.approx(built.fit.params["alpha"], rel=1e-6)
    assert user.fit.se["alpha"] == pytest.approx(built.fit.se["alpha"], rel=1e-4)
    assert user.law == "mine(L; c, alpha)"


def test_a_callable_offset_law_with_default_initial_values():
    L = np.asarray(DEPTHS, dtype=float)
    signs = np.array([[1, -1, 1, -1, 1, -1, 1], [-1, 1, 1, -1, -1, 1, -1], [1, 1, -1, -1, 1, 1, -1]])
    R = (0.3 + 1.5 * L**-1.0) * (1 + 0.002 * signs)  # three seeds: the fewest that decide

    def offset(L, L0=0.1, c=1.0, alpha=0.5):
        return L0 + c * L**-alpha

    check = check_prediction((L, R), offset, alpha=(0.8, 1.2))
    by_hand = fit_offset_power(L, R.mean(axis=0))
    assert check.fit.params["alpha"] == pytest.approx(by_hand.params["alpha"], rel=1e-4)
    assert check.result.verdict == "pass"
    assert check_prediction((L, R), offset, L0=(0.5, 0.6)).result.verdict == "fail"  # the floor is 0.3


def test_bad_laws_and_expectations_are_one_line_errors():
    L, R = power_arrays(0.7)
    cases = [
        (dict(law="cubic", alpha=(0.6, 0.7)), "law='cubic': must be one of power, offset"),
        (dict(law="power", beta=(0.6, 0.7)), "beta=(0.6, 0.7): must be the expected value of a parameter"),
        (dict(law="power", alpha=(0.7, 0.6)), "alpha=(0.7, 0.6): must be an interval (lo, hi) with lo <= hi"),
        (dict(law="power"), "expected={}: must be exactly one parameter's"),
        (dict(law=lambda L, c: c / L, alpha=(0.6, 0.7)), "init={}: must be an initial value for every parameter"),
        (dict(law="power", claim="inverse", alpha=(0.6, 0.7)), "claim='inverse': must be one of inverse-depth"),
        (dict(law="power", alpha=(0.6, 0.7), error="boot"), "error='boot': must be one of fit, seeds"),
    ]
    for kw, text in cases:
        with pytest.raises(ValueError) as exc:
            check_prediction((L, R), **kw)
        assert str(exc.value).startswith(text) and "\n" not in str(exc.value), str(exc.value)
    with pytest.raises(ValueError, match=r"^data='2 curves': must be one curve"):
        check_prediction(synthetic_curve(lambda L: 1 / L) + synthetic_curve(lambda L: 1 / L, d=16), alpha=(0.9, 1.1))


# ------------------------------------------------------------------ two seeds: t(1), not 2 s.e.
def test_two_seeds_decide_only_at_t1():
    L = np.asarray(DEPTHS, dtype=float)
    wiggle = 1 + 0.001 * np.array([1, -1, 1, -1, 1, -1, 1])
    R = np.stack([2.0 * L**-0.66 * wiggle, 2.0 * L**-0.70 * wiggle])  # the seeds' own exponents 0.66 and 0.70
    r = check_prediction((L, R), "power", alpha=(0.6, 0.75), error="seeds").result
    e = Estimate.from_seeds([0.66, 0.70])
    assert r.measured == pytest.approx(0.68, abs=1e-6) and r.error == pytest.approx(e.se, rel=1e-3)
    assert r.test == "seeds n=2, t(1) = 12.71"
    # 2 s.e. would have decided: 0.68 ± 0.04 lies inside [0.6, 0.75]; t(1) s.e. = 0.25 does not
    assert 0.6 <= r.measured - 2 * r.error and r.measured + 2 * r.error <= 0.75
    assert r.verdict == "indicative" and r.would_be is None and "too imprecise" in r.reason
    assert in_range(e, 0.6, 0.75) is None
    # control: five seeds with the same scatter decide (t(4) = 2.78)
    exps = [0.66, 0.70, 0.68, 0.67, 0.69]
    R5 = np.stack([2.0 * L**-x * wiggle for x in exps])
    r5 = check_prediction((L, R5), "power", alpha=(0.6, 0.75), error="seeds").result
    assert r5.verdict == "pass" and r5.test == "seeds n=5, t(4) = 2.78"


# ------------------------------------------------------------------ generic claims
def disagreement_records(exponent, seeds=(0, 1, 2)):
    """Runs with R_L = C + D_L / L exactly, D_L = 0.4 L^exponent (the disagreement), C = 0.2."""
    out = []
    for s in seeds:
        for j, L in enumerate((1, 2, 4, 8, 16, 32, 64)):
            w = 1 + 0.002 * (-1) ** (j + s)
            D = 0.4 * L**exponent * w
            C = 0.2
            R = C + D / L
            out.append(record(depth=L, seed=s, loss=R, A_L=C + D, C_L=C, gap=D))
    return out


def test_generic_claims_by_id():
    assert set(GENERIC_CLAIMS) == {"inverse-depth", "disagreement", "clt-identity", "floor-reached"}
    L, R = power_arrays(1.0)
    inv = check_prediction((L, 0.3 + R), claim="inverse-depth")
    assert inv.result.claim_id == "inverse-depth" and inv.result.verdict == "pass"
    assert check_prediction((L, 0.3 + power_arrays(0.5)[1]), claim="inverse-depth").result.verdict == "fail"
    flat = check_prediction(disagreement_records(0.0), claim="disagreement")
    growing = check_prediction(disagreement_records(0.3), claim="disagreement")
    shrinking = check_prediction(disagreement_records(-0.8), claim="disagreement")
    assert flat.result.verdict == growing.result.verdict == "pass"
    assert shrinking.result.verdict == "fail" and shrinking.result.measured == pytest.approx(1.8, abs=0.02)
    ident = check_prediction(disagreement_records(0.0), claim="clt-identity").result
    assert ident.verdict == "pass" and ident.measured <= 1e-10
    broken = [dict(r, final_loss=r["final_loss"] * 1.01) for r in disagreement_records(0.0)]
    assert check_prediction(broken, claim="clt-identity").result.verdict == "fail"
    assert check_prediction((L, R), claim="clt-identity").result.verdict == "not run"  # arrays: no A_L, C_L


def test_floor_reached_against_a_given_floor():
    L = np.asarray(DEPTHS, dtype=float)
    R = np.stack([(0.3 + 1.5 * L**-1.0) * (1 + 0.001 * (-1) ** (np.arange(7) + s)) for s in (0, 1, 2)])
    assert check_prediction((L, R), claim="floor-reached", floor=0.301).result.verdict == "pass"
    assert check_prediction((L, R), claim="floor-reached", floor=0.4).result.verdict == "fail"
    assert check_prediction((L, R), claim="floor-reached").result.verdict == "not run"


# ------------------------------------------------------------------ data forms, figure, command line
def test_every_form_of_data_gives_the_same_result(tmp_path):
    recs = synthetic_curve(lambda L: 2.0 * L**-0.7, seeds=(0, 1, 2))
    (c,) = curves(recs)
    store = tmp_path / "s.sqlite"
    with Store(store, mode="write") as st:
        for r in recs:
            st.put(r)
    results = [
        check_prediction(x, "power", alpha=(0.6, 0.75)).result for x in (recs, c, str(store), (c.depths, c.loss))
    ]
    assert {r.verdict for r in results} == {"pass"}
    assert len({round(r.measured, 12) for r in results}) == 1
    assert isinstance(Curve.from_arrays(c.depths, c.loss), Curve)


def test_the_figure_and_displays():
    L, R = power_arrays(0.7)
    check = check_prediction((L, R), "power", alpha=(0.6, 0.75), L_max=32)
    png = check.png()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and check._repr_png_() is png
    html = check._repr_html_()
    assert "data:image/png;base64," in html and "my-prediction" in html
    fig = check.figure()
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert any("outside the window" in t for t in labels) and any("expected end" in t for t in labels)
    assert json.loads(json.dumps(check.to_dict()))["window"] == [None, 32.0]


def test_check_command(tmp_path, capsys):
    store = tmp_path / "s.sqlite"
    recs = equal_step_records(16) + equal_step_records(1024, depths=(2, 4, 8, 16, 32, 64, 128, 256))
    with Store(store, mode="write") as st:
        for r in recs:
            st.put(r)
    base = ["check", "--store", str(store), "--law", "power", "--param", f"alpha={ZETA - 0.05},{ZETA + 0.05}"]
    assert main([*base, "--where", "task.d=16", "--validity", "0.1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["result"]["verdict"] == "indicative" and "validity window L <= 0.868" in out["result"]["reason"]
    fig = tmp_path / "fig.png"
    assert main([*base, "--where", "task.d=1024", "--validity", "0.1", "--figure", str(fig)]) == 0
    text = capsys.readouterr().out
    assert text.startswith("my-prediction linear easy-fresh (a,b)=(1.5,0.5) d=1024 P=256: pass")
    assert fig.read_bytes()[:4] == b"\x89PNG"
    assert main(base) == 2  # two curves: pick one
    assert "must be one curve" in capsys.readouterr().err
    assert main([*base[:-2], "--param", "alpha"]) == 2
    assert "param='alpha': must be NAME=LO,HI" in capsys.readouterr().err
    assert main([*base, "--where", "task.d=16", "--figure", str(store)]) == 2  # never over its input
    assert capsys.readouterr().err.count("\n") == 1
    assert main(["check", "--store", str(store), "--claim", "clt-identity", "--where", "task.d=16"]) == 0
    assert "clt-identity" in capsys.readouterr().out
