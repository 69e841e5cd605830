"""Attention maps with learnable per-layer parameters (register_attention(..., params=...)): the
registry's record, the numba engine's refusal, the JAX engine's gradient against central finite
differences (float64), the wiring against the numba softmax model, and a model that trains them.

One context shape (d = 3, P = 7, batch 5) as tests/sims/test_jax_engine.py: JAX compiles each new
shape once."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from depthscale.sims.attention_registry import (
    BUILTIN_MAPS,
    check_attention_engine,
    get_attention,
    register_attention,
    unregister_attention,
)
from depthscale.sims.config import ModelConfig, RunConfig, TaskConfig, TrainConfig, run_key

D, P, B, L = 3, 7, 5, 3
TASK = TaskConfig(task="topk", k=2, d=D, P=P)


def _no_jax(z, **kw):  # registration needs no JAX: the function is called only by the JAX engine
    return z


def test_builtin_records_and_keys_are_unchanged():
    assert all(m.params == () and m.param_names == () for m in BUILTIN_MAPS)
    # the record's fields in their old order, the new one last with an empty default
    fields = [f.name for f in dataclasses.fields(BUILTIN_MAPS[0])]
    assert fields == ["name", "code", "normalised", "jax_fn", "source", "params"]
    assert run_key(RunConfig(TASK, ModelConfig(depth=2), TrainConfig(steps=10)), 0) == run_key(
        RunConfig(TASK, ModelConfig(depth=2), TrainConfig(steps=10)), 0
    )


def test_params_are_recorded_in_order_and_the_numba_engine_refuses_them():
    m = register_attention("tp-two", _no_jax, params={"log_temp": 0, "bias": -1.5})
    try:
        assert m.params == (("log_temp", 0.0), ("bias", -1.5)) and m.param_names == ("log_temp", "bias")
        assert get_attention("tp-two") is m and m.engines == ("jax",)
        with pytest.raises(ValueError) as exc:
            check_attention_engine("tp-two", "numba")
        msg = str(exc.value)
        assert msg.startswith("engine='numba'") and "learnable parameters" in msg and "\n" not in msg
        with pytest.raises(ValueError, match="^engine='numba'"):
            ModelConfig(depth=2, attention="tp-two")  # the default engine is numba
        ModelConfig(depth=2, attention="tp-two", engine="jax")
    finally:
        unregister_attention("tp-two")


@pytest.mark.parametrize(
    "params, match",
    [
        ([("a", 1.0)], "^params="),
        ({"z": 1.0}, "^params='z'"),
        ({"1x": 1.0}, "^params='1x'"),
        ({"a": math.nan}, r"^params\['a'\]=nan: must be a finite real"),
        ({"a": "1"}, r"^params\['a'\]='1'"),
        ({"a": True}, r"^params\['a'\]=True"),
    ],
)
def test_bad_params_are_one_line(params, match):
    with pytest.raises(ValueError, match=match) as exc:
        register_attention("tp-bad", _no_jax, params=params)
    assert "\n" not in str(exc.value)
    with pytest.raises(ValueError):
        get_attention("tp-bad")  # nothing registered


# ------------------------------------------------------------------------------------------------
# the JAX engine
def _jax():
    pytest.importorskip("jax", reason="the JAX engine needs JAX (pip install 'depthscale[jax]')")
    pytest.importorskip("optax", reason="the JAX engine needs optax (pip install 'depthscale[jax]')")
    import jax
    import jax.numpy as jnp

    return jax, jnp


@pytest.fixture
def maps():
    jax, jnp = _jax()

    def learned_temp(z, log_temp):
        return jax.nn.softmax(jnp.exp(log_temp) * z, axis=-1)

    def temp_sigmoid(z, log_temp, bias):  # two parameters, both reaching the loss
        return jax.nn.sigmoid(jnp.exp(log_temp) * z + bias) / z.shape[-1]

    register_attention("tp-temp", learned_temp, normalised=True, params={"log_temp": 0.0})
    register_attention("tp-sig", temp_sigmoid, params={"log_temp": 0.3, "bias": -0.5})
    yield
    unregister_attention("tp-temp")
    unregister_attention("tp-sig")


def _model_and_batch(attention: str, seed: int = 0, depth: int = L):
    from depthscale.sims.models import make_model
    from depthscale.sims.tasks import make_batch

    model = make_model(ModelConfig(depth=depth, attention=attention, engine="jax"), D)
    rng = np.random.default_rng(seed)
    theta = model.init(rng)
    theta = theta + 0.4 * rng.standard_normal(theta.size)  # away from the start: every parameter matters
    batch = make_batch(TASK, B, np.random.default_rng(seed + 1))
    return model, theta, batch


def test_the_layout_appends_one_entry_per_layer_at_the_initial_values(maps):
    from depthscale.sims.models import make_model

    base = make_model(ModelConfig(depth=L, engine="jax"), D)
    model = make_model(ModelConfig(depth=L, attention="tp-sig", engine="jax"), D)
    assert model.n_params == base.n_params + 2 * L
    assert model.names() == [*base.names(), "map.log_temp", "map.bias"]
    theta = model.init(np.random.default_rng(0))
    assert np.array_equal(theta[: base.n_params], base.init(np.random.default_rng(0)))  # the same start
    got = model.map_parameters(theta)
    assert list(got) == ["log_temp", "bias"]
    assert np.array_equal(got["log_temp"], [0.3] * L) and np.array_equal(got["bias"], [-0.5] * L)


@pytest.mark.parametrize("attention", ["tp-temp", "tp-sig"])
def test_the_gradient_in_a_maps_parameters_is_the_central_difference(maps, attention):
    model, theta, batch = _model_and_batch(attention, seed=3)
    _, grad = model.loss_and_grad(theta, batch)
    n_map = model.n_params - model.n_host
    h = 1e-6
    worst = 0.0
    for i in range(model.n_host, model.n_params):  # every map parameter of every layer, one at a time
        e = np.zeros(theta.size)
        e[i] = h
        fd = (model.loss_and_grad(theta + e, batch)[0] - model.loss_and_grad(theta - e, batch)[0]) / (2 * h)
        assert abs(fd) > 1e-6  # a derivative that can disagree
        worst = max(worst, abs(grad[i] - fd) / abs(fd))
        assert abs(grad[i] - fd) < 1e-6 * max(abs(fd), 1e-3), (i, grad[i], fd)
    print(f"{attention}: {n_map} map parameters, largest relative difference to central differences {worst:.1e}")


def test_a_learned_temperature_is_a_scaled_query_in_the_numba_softmax_model(maps):
    # independent wiring check: exp(log_temp_l) z equals the scores of W_q^l scaled by exp(log_temp_l)
    from depthscale.sims.models import make_model

    model, theta, batch = _model_and_batch("tp-temp", seed=4)
    numba_model = make_model(ModelConfig(depth=L), D)
    log_temp = np.array([math.log(2.0), 0.0, math.log(0.25)])
    theta[model.n_host :] = log_temp
    host = theta[: model.n_host].copy()
    numba_model.unpack(host)["W_q"][:] *= np.exp(log_temp)[:, None, None]
    assert np.allclose(model.layer_outputs(theta, batch), numba_model.layer_outputs(host, batch), rtol=1e-10)
    assert not np.allclose(model.layer_outputs(theta, batch), numba_model.layer_outputs(theta[: model.n_host], batch))


def test_a_one_layer_model_trains_its_temperature(maps):
    from depthscale.sims.runner import run

    tr = TrainConfig(steps=60, batch=B, lr=3e-2, eval_contexts=64, window=5, schedule="constant")
    rec = run(RunConfig(TASK, ModelConfig(depth=1, attention="tp-temp", engine="jax"), tr), 0)
    assert rec["status"] == "ok", rec["reason"]
    theta = np.asarray(rec["arrays"]["theta"], np.float64)
    assert rec["n_params"] == theta.size
    assert abs(theta[-1]) > 1e-3  # the temperature moved from its initial value 0
    losses = np.array([loss for _, loss in rec["train_curve"]])
    k = max(len(losses) // 5, 1)
    assert losses[-k:].mean() < 0.8 * losses[:k].mean(), losses  # the loss falls
    assert rec["final_loss"] < rec["target_power"]  # better than predicting 0 on fresh contexts
