import json
import sys
import types

import mpmath as mp
import numpy as np
import pytest
from cli_calls import forbid, given, option_name, rejection, run

from depthscale.derivations.cli.app import main

COLUMNS = "L constrained constrained_opt gamma_opt beta_form gamma_asymptote free_continuum free_discrete".split()
KEYS = set(COLUMNS)


def brute_sum(a, b, d, L, s=1.0):
    """mpmath reference: sum_k k^-(a+b) (1 - s k^-a)^(2L)."""
    mp.mp.dps = 40
    return float(mp.fsum(mp.mpf(k) ** -(a + b) * (1 - s * mp.mpf(k) ** -a) ** (2 * L) for k in range(1, d + 1)))


def test_linear_json_contract(capsys):
    code, out, err = run(
        capsys, ["predict", "linear", "--a", "2", "--b", "1", "--d", "60", "--depths", "1,4,16", "--json"]
    )
    assert code == 0 and err == ""
    obj = json.loads(out)
    assert obj["zeta"] == pytest.approx(1.0)
    assert [r["L"] for r in obj["rows"]] == [1, 4, 16]
    for row in obj["rows"]:
        assert set(row) == KEYS
        assert all(isinstance(row[k], float) for k in KEYS - {"L"})
        assert row["constrained"] == pytest.approx(brute_sum(2, 1, 60, row["L"]), rel=1e-12)
        # gamma_opt is reported as a step (units of 1/lambda) and its loss is the finite sum there
        s = row["gamma_opt"] / row["L"]
        assert row["constrained_opt"] == pytest.approx(brute_sum(2, 1, 60, row["L"], s), rel=1e-10)
        assert row["free_discrete"] <= row["constrained_opt"] * (1 + 1e-12)
        assert row["beta_form"] == pytest.approx(float(mp.beta(1, 2 * row["L"] + 1)) / 2, rel=1e-12)
        assert row["gamma_asymptote"] == pytest.approx(0.5 / (2 * row["L"]), rel=1e-12)
        # zeta = 1: free continuum (1/a) (L!)^2 / Gamma(L+2)^2 = 1 / (2 (L+1)^2)
        assert row["free_continuum"] == pytest.approx(1 / (2 * (row["L"] + 1) ** 2), rel=1e-12)


def test_linear_scales_enter(capsys):
    code, out, _ = run(capsys, "predict linear --a 1 --b 1 --d 30 --depths 3 --c-lambda 2 --c-omega 3 --json".split())
    row = json.loads(out)["rows"][0]
    assert code == 0
    assert row["constrained"] == pytest.approx(6 * brute_sum(1, 1, 30, 3), rel=1e-12)  # reference step L / c_lambda


@pytest.mark.parametrize("a,b", [(0.5, 0.25), (0.0, 2.0), (0.0, 0.0), (0.5, 0.5)])
def test_linear_laws_that_do_not_apply_are_null(capsys, a, b):
    code, out, _ = run(
        capsys, ["predict", "linear", "--a", str(a), "--b", str(b), "--d", "16", "--depths", "2,8", "--json"]
    )
    obj = json.loads(out)
    assert code == 0 and obj["zeta"] is None
    for row in obj["rows"]:
        assert set(row) == KEYS
        assert row["beta_form"] is None and row["gamma_asymptote"] is None and row["free_continuum"] is None
        assert row["constrained"] == pytest.approx(brute_sum(a, b, 16, row["L"]), rel=1e-12, abs=1e-300)


def test_linear_text_table(capsys):
    code, out, _ = run(capsys, ["predict", "linear", "--a", "0.5", "--b", "0.25", "--d", "16", "--depths", "2,8"])
    blocks = out.strip().split("\n\n")
    lines = blocks[0].splitlines()
    assert code == 0 and lines[0].startswith("zeta = -")
    assert lines[1].split() == COLUMNS
    assert lines[2].split()[0] == "2" and lines[2].split()[4] == "-"
    assert len({len(l) for l in lines[1:]}) == 1  # aligned columns
    # then the local slopes, aligned too, and a legend naming every column
    slopes = blocks[1].splitlines()
    assert slopes[0].startswith("local slopes") and slopes[1].split() == [c for c in COLUMNS if c != "gamma_opt"]
    assert len({len(l) for l in slopes[1:]}) == 1
    assert [l.split(":")[0] for l in blocks[2].splitlines()] == COLUMNS[1:]


@pytest.mark.parametrize(
    "argv, name",
    [
        (["--a", "-1", "--b", "1", "--d", "10", "--depths", "8"], "a"),
        (["--a", "1", "--b", "nan", "--d", "10", "--depths", "8"], "b"),
        (["--a", "1", "--b", "1", "--d", "0", "--depths", "8"], "d"),
        (["--a", "1", "--b", "1", "--d", "10", "--depths", "8,0"], "depths"),
        (["--a", "1", "--b", "1", "--d", "10", "--depths", "8,x"], "depths"),
        (["--a", "1", "--b", "1", "--d", "10", "--depths", "5000"], "depths"),
        (["--a", "1", "--b", "1", "--d", "10", "--depths", "8", "--c-lambda", "0"], "c_lambda"),
    ],
)
def test_linear_bad_input_one_line_exit_2(capsys, argv, name):
    code, out, err = run(capsys, ["predict", "linear", *argv, "--json"])
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and f"{name}=" in err


def test_argparse_errors_are_one_line(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["predict", "linear", "--a", "x", "--b", "1", "--d", "10", "--depths", "8"])
    _, err = capsys.readouterr()
    assert exc.value.code == 2 and err.count("\n") == 1 and "--a" in err


# --------------------------------------------------------------------------- floor (wiring)
def test_floor_passes_arguments_and_prints_contract(capsys, monkeypatch):
    seen = {}

    def fake_linear_floor(a, b, k, d, P, contexts, seed, degree=4, c_lambda=1.0, c_omega=1.0, covariance="x"):
        seen.update(
            a=a, b=b, k=k, d=d, P=P, contexts=contexts, seed=seed, degree=degree, c_lambda=c_lambda, c_omega=c_omega
        )
        seen["covariance"] = covariance
        return types.SimpleNamespace(floor=np.float64(1.25), stderr=0.01, degree=degree)

    monkeypatch.setitem(sys.modules, "depthscale.theory.floor", types.SimpleNamespace(linear_floor=fake_linear_floor))
    argv = "predict floor --a 0.5 --b 0.25 --k 2 --d 128 --P 1024 --contexts 300 --seed 7 --degree 3 --json".split()
    code, out, _ = run(capsys, argv)
    assert code == 0
    assert json.loads(out) == {"floor": 1.25, "stderr": 0.01, "degree": 3, "covariance": "population"}
    assert seen == {**given(argv), "c_lambda": 1.0, "c_omega": 1.0, "covariance": "population"}
    code, out, _ = run(capsys, argv + ["--covariance", "context"])
    assert code == 0 and json.loads(out)["covariance"] == "context" == seen["covariance"]


@pytest.mark.parametrize(
    "change",
    [
        ("--k", "2000"),
        ("--contexts", "1"),
        ("--degree", "0"),
        ("--a", "-2"),
        ("--seed", "-1"),
        ("--covariance", "sample"),
    ],
)
def test_floor_bad_input_is_rejected_before_any_work(capsys, monkeypatch, change):
    forbid(monkeypatch, "depthscale.theory.floor", "linear_floor")
    argv = "predict floor --a 1 --b 1 --k 2 --d 16 --P 64 --contexts 10 --seed 0 --degree 4 --json".split()
    assert f"{option_name(change[0])}=" in rejection(capsys, argv, *change)


def test_floor_real_module_small_run(capsys):
    pytest.importorskip("depthscale.theory.floor")
    code, out, _ = run(capsys, "predict floor --a 1 --b 1 --k 2 --d 8 --P 32 --contexts 20 --seed 1 --json".split())
    obj = json.loads(out)
    assert code == 0 and set(obj) == {"floor", "stderr", "degree", "covariance"} and obj["degree"] == 4
    assert np.isfinite(obj["floor"]) and obj["stderr"] > 0


# --------------------------------------------------------------------------- clt
def test_clt_passes_arguments_and_prints_contract(capsys, monkeypatch):
    seen = {}

    def fake_clt_loss(model, depths, sigma2, shared, rho=None, r=None, g=None):
        seen.update(model=model, depths=list(depths), sigma2=sigma2, shared=shared, rho=rho, r=r, g=g)
        return np.array([10.0 + L for L in depths])

    monkeypatch.setitem(sys.modules, "depthscale.theory.clt", types.SimpleNamespace(clt_loss=fake_clt_loss))
    code, out, _ = run(capsys, "predict clt --model ar1 --depths 1,2,4 --sigma2 2 --shared 0.5 --r 0.3 --json".split())
    assert code == 0
    assert json.loads(out) == {"rows": [{"L": 1, "loss": 11.0}, {"L": 2, "loss": 12.0}, {"L": 4, "loss": 14.0}]}
    assert seen == dict(model="ar1", depths=[1, 2, 4], sigma2=2.0, shared=0.5, rho=None, r=0.3, g=None)


@pytest.mark.parametrize(
    "extra, name",
    [
        (["--model", "equicorrelated"], "rho"),
        (["--model", "ar1"], "r"),
        (["--model", "powerlaw"], "g"),
        (["--model", "iid", "--rho", "0.2"], "rho"),
        (["--model", "ar1", "--r", "1.0"], "r"),
        (["--model", "powerlaw", "--g", "0"], "g"),
        (["--model", "gaussian"], "model"),
    ],
)
def test_clt_bad_input(capsys, monkeypatch, extra, name):
    forbid(monkeypatch, "depthscale.theory.clt", "clt_loss")
    code, out, err = run(
        capsys, ["predict", "clt", "--depths", "1,2", "--sigma2", "1", "--shared", "0", *extra, "--json"]
    )
    assert code == 2 and out == "" and err.count("\n") == 1 and f"{name}=" in err


def test_clt_sigma2_must_be_nonnegative(capsys):
    code, _, err = run(capsys, ["predict", "clt", "--model", "iid", "--depths", "1", "--sigma2", "-1", "--shared", "0"])
    assert code == 2 and "sigma2=" in err


def _independent_clt(model, L, s2, e, rho=None, r=None, g=None):
    """R_L = E s^2 + 1^T C 1 / L^2 with the layer-noise covariance C written out element by element."""
    idx = np.arange(L)
    lag = np.abs(idx[:, None] - idx[None, :])
    if model == "iid":
        C = s2 * np.eye(L)
    elif model == "equicorrelated":
        C = s2 * np.where(lag == 0, 1.0, rho)
    elif model == "ar1":
        C = s2 * r**lag
    else:
        C = s2 * (1.0 + lag) ** -g
    return e + C.sum() / L**2


@pytest.mark.parametrize(
    "model, opt",
    [("iid", []), ("equicorrelated", ["--rho", "0.3"]), ("ar1", ["--r", "0.6"]), ("powerlaw", ["--g", "0.5"])],
)
def test_clt_real_module_against_covariance_sums(capsys, model, opt):
    pytest.importorskip("depthscale.theory.clt")
    code, out, _ = run(
        capsys,
        [
            "predict",
            "clt",
            "--model",
            model,
            "--depths",
            "1,2,5,16",
            "--sigma2",
            "2",
            "--shared",
            "0.25",
            *opt,
            "--json",
        ],
    )
    assert code == 0
    kw = {opt[0][2:]: float(opt[1])} if opt else {}
    for row in json.loads(out)["rows"]:
        assert row["loss"] == pytest.approx(_independent_clt(model, row["L"], 2.0, 0.25, **kw), rel=1e-10)


def test_predict_and_report_tables_share_one_computation():
    """``predict linear`` rows and the report's linear table are the theory's ``linear_law_columns`` columns."""
    from depthscale.derivations.analysis.theory_numbers import linear_table
    from depthscale.derivations.cli.commands.predict import linear_rows
    from depthscale.theory.linear_laws import linear_law_columns
    from depthscale.theory.spectra import PowerLawSpectrum

    Ls = [1, 8, 64]
    cols = linear_law_columns(PowerLawSpectrum(2.0, 1.0, 3000), Ls)
    rows = linear_rows(2.0, 1.0, 3000, Ls)["rows"]
    (table,) = linear_table([(2.0, 1.0)], 3000, depths=Ls)
    for i, L in enumerate(Ls):
        for key, col in cols.items():
            assert rows[i][key] == col[i]
            if key in table["columns"]:
                assert table["rows"][i][table["columns"].index(key)] == col[i]


# --------------------------------------------------------------------------- linear-optimum
LINEAR_OPTIMUM = "predict linear-optimum --a 2 --b 1 --d 16 --P 64 --depths 1,2,4 --contexts 50 --seed 3 --json"


def test_linear_optimum_passes_arguments_and_prints_contract(capsys, monkeypatch):
    seen = {}

    def fake(a, b, d, P, depths, contexts, seed, task="x", c_lambda=0.0, c_omega=0.0):
        seen.update(a=a, b=b, d=d, P=P, depths=depths, contexts=contexts, seed=seed, task=task)
        seen.update(c_lambda=c_lambda, c_omega=c_omega)
        n = len(depths)
        return types.SimpleNamespace(
            depths=np.array(depths),
            loss=np.full(n, 0.5),
            se=np.full(n, 0.01),
            in_sample=np.full(n, 0.49),
            equal_step=np.full(n, 0.7),
            equal_step_se=np.full(n, 0.02),
        )

    monkeypatch.setitem(sys.modules, "depthscale.theory.linear_optimum", types.SimpleNamespace(linear_optimum=fake))
    code, out, _ = run(capsys, LINEAR_OPTIMUM.split() + ["--task", "easy-exact"])
    assert code == 0
    obj = json.loads(out)
    assert obj["task"] == "easy-exact" and obj["contexts"] == 50
    assert obj["rows"] == [
        {"L": L, "loss": 0.5, "se": 0.01, "in_sample": 0.49, "equal_step": 0.7, "equal_step_se": 0.02}
        for L in (1, 2, 4)
    ]
    assert seen == dict(
        a=2.0, b=1.0, d=16, P=64, depths=[1, 2, 4], contexts=50, seed=3, task="easy-exact", c_lambda=1.0, c_omega=1.0
    )


@pytest.mark.parametrize(
    "change",
    [
        ("--depths", "1,65"),
        ("--depths", "0"),
        ("--depths", "2,2"),
        ("--contexts", "1"),
        ("--task", "topk"),
        ("--P", "0"),
        ("--b", "-1"),
        ("--seed", "-1"),
        ("--c-omega", "0"),
    ],
)
def test_linear_optimum_bad_input_is_rejected_before_any_work(capsys, monkeypatch, change):
    forbid(monkeypatch, "depthscale.theory.linear_optimum", "linear_optimum")
    assert f"{option_name(change[0])}=" in rejection(capsys, LINEAR_OPTIMUM.split(), *change)


def test_linear_optimum_real_module_small_run(capsys):
    code, out, _ = run(capsys, LINEAR_OPTIMUM.split())
    obj = json.loads(out)
    assert code == 0 and [r["L"] for r in obj["rows"]] == [1, 2, 4]
    # one layer: the Wishart closed form min_a E tr(Omega (I - a S) Sigma (I - a S))
    k = np.arange(1, 17.0)
    lam, om = k**-2.0, k**-1.0
    t1, t2 = np.sum(om * lam), np.sum(om * lam**2)
    t3 = (1 + 1 / 64) * np.sum(om * lam**3) + np.sum(lam**2) * t1 / 64
    row = obj["rows"][0]
    assert abs(row["loss"] - (t1 - t2**2 / t3)) < 4 * row["se"]
    assert all(r["se"] > 0 for r in obj["rows"]) and obj["rows"][2]["loss"] < obj["rows"][0]["loss"]
