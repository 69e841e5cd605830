"""``predict linear``: every column explained (--help, JSON ``columns``), local slopes against independent
sums, and the continuum laws' validity window (issue 41)."""

import json
import math

import mpmath as mp
import pytest
from cli_calls import run
from scipy.special import betaln, gamma

from depthscale.theory.linear_laws import LINEAR_LAWS

NAMES = {
    "constrained": "reference step",
    "constrained_opt": "optimal equal step",
    "gamma_opt": "optimal equal step",
    "beta_form": "Beta form",
    "gamma_asymptote": "asymptote",
    "free_continuum": "free continuum",
    "free_discrete": "free discrete",
}


def brute_sum(a, b, d, L):
    mp.mp.dps = 30
    return mp.fsum(mp.mpf(k) ** -(a + b) * (1 - mp.mpf(k) ** -a) ** (2 * L) for k in range(1, d + 1))


def predict(capsys, *argv):
    code, out, _ = run(capsys, ["predict", "linear", *argv, "--json"])
    assert code == 0
    return json.loads(out)


def test_every_column_is_named_in_help_and_json(capsys):
    with pytest.raises(SystemExit):
        run(capsys, ["predict", "linear", "--help"])
    text = capsys.readouterr().out
    obj = predict(capsys, "--a", "1.5", "--b", "0.5", "--d", "64", "--depths", "2,8")
    for key, name in NAMES.items():
        assert obj["columns"][key].startswith(name + ":"), key
        assert f"{key:<16} {name}:" in text, key
    # every key of the output is described
    assert set(obj["rows"][0]) | set(obj["slopes"][0]) <= set(obj["columns"])
    assert {"slopes", "validity"} <= set(obj["columns"])
    assert set(LINEAR_LAWS) == set(NAMES)


def test_local_slopes_against_brute_force_sums(capsys):
    a, b, d = 1.5, 0.5, 16
    obj = predict(capsys, "--a", str(a), "--b", str(b), "--d", str(d), "--depths", "1,2,8,32")
    zeta = (a + b - 1) / a
    for row in obj["slopes"]:
        L = row["L"]
        lo, hi = (L - 1, L + 1) if L >= 2 else (1, 2)
        want = -float(mp.log(brute_sum(a, b, d, hi) / brute_sum(a, b, d, lo)) / mp.log(mp.mpf(hi) / lo))
        assert row["constrained"] == pytest.approx(want, rel=1e-9)
        assert row["gamma_asymptote"] == pytest.approx(zeta, rel=1e-12)
        beta = -(betaln(zeta, 2 * hi + 1) - betaln(zeta, 2 * lo + 1)) / math.log(hi / lo)
        assert row["beta_form"] == pytest.approx(beta, rel=1e-10)
        assert "gamma_opt" not in row
    # the d = 16 numbers: no zeta regime, the slope runs from about 0.5 to 1.8
    s = {r["L"]: r["constrained"] for r in obj["slopes"]}
    assert s[2] < zeta < s[8] and s[32] > 1.8


@pytest.mark.parametrize("d, inside", [(16, []), (1024, [1, 2, 8, 32, 128])])
def test_validity_window(capsys, d, inside):
    a, b = 1.5, 0.5
    obj = predict(capsys, "--a", str(a), "--b", str(b), "--d", str(d), "--depths", "1,2,8,32,128,512")
    w = obj["validity"]
    zeta = (a + b - 1) / a
    assert w["eps"] == 0.1
    assert w["L_max"] == pytest.approx(d**a / 2 * (0.1 * gamma(zeta + 1)) ** (1 / zeta), rel=1e-12)
    assert w["L_max_over_d_a"] == pytest.approx(0.013562, abs=1e-6)
    assert [r["L"] for r in obj["rows"] if r["L"] <= w["L_max"]] == inside
    # the tolerance is an option
    w2 = predict(capsys, "--a", str(a), "--b", str(b), "--d", str(d), "--depths", "8", "--eps", "0.01")["validity"]
    assert w2["eps"] == 0.01 and w2["L_max"] == pytest.approx(w["L_max"] * 0.1**1.5, rel=1e-12)


def test_validity_window_absent_outside_the_continuum_laws(capsys):
    obj = predict(capsys, "--a", "0.5", "--b", "0.25", "--d", "16", "--depths", "2")
    assert obj["validity"] is None and obj["slopes"][0]["beta_form"] is None


def test_text_output_states_the_window(capsys):
    code, out, _ = run(capsys, ["predict", "linear", "--a", "1.5", "--b", "0.5", "--d", "16", "--depths", "2,8"])
    assert code == 0
    line = out.splitlines()[1]
    assert line.startswith("validity:") and "L_max = 0.868" in line and "beyond it: L = 2, 8" in line


@pytest.mark.parametrize("eps", ["0", "1", "nan"])
def test_bad_eps(capsys, eps):
    code, out, err = run(
        capsys, ["predict", "linear", "--a", "1", "--b", "1", "--d", "10", "--depths", "8", "--eps", eps]
    )
    assert code == 2 and out == "" and "eps=" in err
