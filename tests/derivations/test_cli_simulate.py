"""`depthscale simulate`: the JSON contract and one-line errors."""

import json

import pytest

from depthscale.derivations.cli.app import main

BASE = "simulate --d 4 --P 16 --steps 10 --batch 16 --eval-contexts 128 --window 4 --quiet".split()


def test_json_contract(capsys):
    assert main(BASE + ["--model", "softmax", "--task", "topk", "--k", "2", "--depth", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    for key in ("final_loss", "A_L", "C_L", "converged", "steps", "mode_losses", "top1_mass", "wall_seconds"):
        assert key in out
    assert out["steps"] == 10 and len(out["top1_mass"]) == 2 and len(out["mode_losses"]) == 4


def test_json_is_strict_where_a_measurement_does_not_exist(capsys):
    # one layer has no layer average to compare with: C_L does not exist and must be null, not NaN
    def refuse(constant):
        raise ValueError(f"not JSON: {constant}")

    assert main(BASE + ["--model", "softmax", "--depth", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out, parse_constant=refuse)
    assert out["C_L"] is None and isinstance(out["final_loss"], float)


def test_variant_switch_reaches_the_model(capsys):
    assert main(BASE + ["--model", "softmax", "--depth", "3", "--variant", "temperature", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["config"]["model"]["qk"] == "temperature"


@pytest.mark.parametrize(
    "extra, name",
    [
        (["--model", "quadratic"], "model"),
        (["--task", "hard"], "task"),
        (["--depth", "0"], "depth"),
        (["--a", "-1"], "a"),
        (["--k", "99"], "k"),
        (["--variant", "wide"], "variant"),
        (["--dtype", "float16"], "dtype"),
        (["--lr", "0"], "lr"),
        (["--depth", "two"], "depth"),
    ],
)
def test_bad_input_is_one_line_exit_2(capsys, extra, name):
    with pytest.raises(SystemExit) as exc:
        raise SystemExit(main(BASE + extra))
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and name in err
