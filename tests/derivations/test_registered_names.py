"""A user's own attention map and model are filter values wherever a built-in is (issue 48, item 1):
``Store.records(where=...)``, ``check_prediction(where=...)``, ``depthscale check --where`` and
``--model``, ``depthscale fit --model``; names nobody registered stay one-line errors naming the
registered ones.

The records are synthetic (no training): a curve whose loss is ``0.3 + 1.5 / L`` exactly, so the
inverse-depth claim passes by construction, under a user's map and under a user's model."""

import json

import numpy as np
import pytest
from synthetic import record

from depthscale import check_prediction
from depthscale.derivations.cli.app import main
from depthscale.sims.attention_registry import register_attention, unregister_attention
from depthscale.sims.config import RunConfig, run_key
from depthscale.sims.model_registry import register_model, unregister_model
from depthscale.sims.store import Store

MAP, MODEL = "half-soft-test", "mean-label-test"
DEPTHS = (1, 2, 4, 8, 16, 32)


@pytest.fixture
def registered():
    """A user's map and a user's model, registered from Python (no JAX needed to register)."""
    register_attention(MAP, lambda z: 0.5 * z)
    register_model(MODEL, init=lambda key, cfg, d: {"w": [0.0]}, layer_outputs=lambda *a: None)
    yield
    unregister_attention(MAP)
    unregister_model(MODEL)


def _user_record(depth, seed, *, attention="softmax", model="softmax"):
    """A run record of the JAX engine with the given map or model, its loss ``0.3 + 1.5 / L`` with a
    small wiggle per seed (so the seed means have an error)."""
    rec = record(depth=depth, seed=seed, loss=(0.3 + 1.5 / depth) * (1 + 0.001 * (-1) ** (seed + depth)))
    m = rec["config"]["model"]
    m.update(engine="jax", attention=attention, model=model)
    if model != "softmax":
        m["attention"] = "softmax"
    rec["key"] = run_key(RunConfig.from_dict(rec["config"]), seed)
    return rec


@pytest.fixture
def store(tmp_path, registered):
    path = tmp_path / "s.sqlite"
    with Store(path, mode="write") as st:
        for L in DEPTHS:
            for s in (0, 1, 2):
                st.put(record(depth=L, seed=s, loss=1.0 / L))  # a built-in softmax curve beside them
                st.put(_user_record(L, s, attention=MAP))
                st.put(_user_record(L, s, model=MODEL))
    return path


def test_store_records_filter_by_a_users_map_and_model(store):
    with Store(store) as st:
        by_map = list(st.records(where={"model.attention": MAP}))
        by_model = list(st.records(model=MODEL))
        both = list(st.records(where={"model.model": ["softmax", MODEL]}))
    assert len(by_map) == len(by_model) == 3 * len(DEPTHS)
    assert {r["config"]["model"]["attention"] for r in by_map} == {MAP}
    assert {r["config"]["model"]["model"] for r in by_model} == {MODEL}
    assert len(both) == 9 * len(DEPTHS)  # every run: the built-in's and both of the user's


def test_an_unregistered_name_is_one_line_naming_the_registered_ones(store):
    with Store(store) as st:
        with pytest.raises(ValueError) as info:
            st.records(where={"model.attention": "nope"})
        text = str(info.value)
        assert text.startswith("where['model.attention']='nope': must be one of softmax, sparsemax, ")
        assert MAP in text and "register_attention" in text and "\n" not in text
        with pytest.raises(ValueError, match=rf"^model='nope': must be one of linear, softmax, .*{MODEL}"):
            st.records(model="nope")


def test_check_prediction_selects_a_users_map_curve(store):
    inv = check_prediction(str(store), claim="inverse-depth", where={"model.attention": MAP})
    assert inv.result.verdict == "pass" and MAP in inv.result.condition.label
    law = check_prediction(str(store), "offset", alpha=(0.9, 1.1), where={"model.model": MODEL})
    assert law.result.verdict == "pass" and law.result.condition.label.startswith(MODEL)


def test_the_check_and_fit_commands_take_a_users_map_and_model(store, capsys):
    base = ["check", "--store", str(store), "--claim", "inverse-depth", "--json"]
    assert main([*base, "--where", f"model.attention={MAP}"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["result"]["verdict"] == "pass" and MAP in out["result"]["condition"]["label"]
    assert main([*base, "--model", MODEL]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["result"]["verdict"] == "pass" and out["result"]["condition"]["label"].startswith(MODEL)
    assert main([*base, "--model", MODEL, "--where", f"model.model={MODEL}"]) == 2
    assert "model='mean-label-test': must not be given with --where model.model" in capsys.readouterr().err
    assert main([*base, "--model", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("depthscale: error: where['model.model']='nope': must be one of linear, softmax")
    assert err.count("\n") == 1
    assert main(["fit", "--store", str(store), "--model", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("depthscale: error: model='nope': must be one of linear, softmax") and err.count("\n") == 1
    assert main(["fit", "--store", str(store), "--model", MODEL, "--json", "--n-boot", "0"]) == 0
    fitted = json.loads(capsys.readouterr().out)["curves"]
    assert [c["model"] for c in fitted] == [MODEL]
    alpha = fitted[0]["fits"]["offset"]["params"]["alpha"]
    assert np.isclose(alpha, 1.0, atol=0.05)  # the law the records were drawn from
