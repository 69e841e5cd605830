"""The plugin cases of issue 48 (items 4 and 5): a user's model of the wrong output shape is a
ValueError naming it and the shape expected; the JAX engine with ``steps = 0`` returns the untrained
model (the numba engine's record, computed independently); a record from ``from_layer_outputs``
carries the user's model name and a key no trained run has, so ``Store.put`` never replaces one;
importing the JAX engine leaves ``jax_enable_x64`` as it was.

One shape for the JAX engine (d = 3, P = 7, batch 5), as tests/sims/test_model_registry.py: JAX
compiles once per shape per process."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import numpy as np
import pytest

from depthscale.sims.config import ModelConfig, RunConfig, TaskConfig, TrainConfig, run_key
from depthscale.sims.runner import from_layer_outputs, run
from depthscale.sims.store import Store

D, P, B, L = 3, 7, 5, 3
TASK = TaskConfig(task="easy-fresh", d=D, P=P)
TRAIN = TrainConfig(steps=4, batch=B, lr=1e-2, eval_contexts=64, window=2)

try:
    import jax
    import jax.numpy as jnp
    import optax  # noqa: F401
except ImportError:
    jax = jnp = None  # type: ignore[assignment]
needs_jax = pytest.mark.skipif(jax is None, reason="the JAX engine needs JAX (pip install 'depthscale[jax]')")


# ---------------------------------------------------------------------------- output shapes
def _init(key, cfg, d):
    return {"w": jnp.zeros((cfg.depth,))}


def _one_too_many(params, X, y, xq):  # (B, L + 1): stored as depth L before the check
    return jnp.concatenate([y[:, :1] * params["w"][None, :], y[:, :1]], axis=1)


def _no_layers(params, X, y, xq):  # (B,): a traceback inside the loss before the check
    return y.mean(axis=1) + params["w"][0]


@needs_jax
@pytest.mark.parametrize(
    "outputs, shape", [(_one_too_many, f"({B}, {L + 1})"), (_no_layers, f"({B},)")], ids=["L+1", "no-layer-axis"]
)
def test_a_plugin_model_of_the_wrong_output_shape_is_one_error_naming_it(outputs, shape, capsys):
    from depthscale.derivations.cli.app import main
    from depthscale.sims.model_registry import register_model, unregister_model

    register_model("wrong-shape", init=_init, layer_outputs=outputs)
    try:
        cfg = RunConfig(TASK, ModelConfig(model="wrong-shape", depth=L, engine="jax"), TRAIN)
        expected = f"model='wrong-shape': layer_outputs(params, X, y, x_test) must return an array of shape (B, L) = ({B}, {L})"
        with pytest.raises(ValueError) as info:
            run(cfg, 0)
        assert str(info.value).startswith(expected) and str(info.value).endswith(f"not shape {shape}")
        argv = ["simulate", "--model", "wrong-shape", "--engine", "jax", "--task", "easy-fresh", "--d", str(D)]
        argv += ["--P", str(P), "--depth", str(L), "--batch", str(B), "--steps", "4", "--window", "2"]
        assert main([*argv, "--eval-contexts", "64", "--quiet", "--threads", "1"]) == 2
        out, err = capsys.readouterr()
        assert out == "" and err.startswith(f"depthscale: error: {expected}") and err.count("\n") == 1
    finally:
        unregister_model("wrong-shape")


# ---------------------------------------------------------------------------- steps = 0
@needs_jax
@pytest.mark.timeout(300)  # before the fix the JAX loop never returned
@pytest.mark.parametrize("model", ["linear", "softmax"])
def test_the_jax_engine_with_no_steps_returns_the_untrained_model(model):
    cfg = RunConfig(TASK, ModelConfig(model=model, depth=2), dataclasses.replace(TRAIN, steps=0))
    numba = run(cfg, 0)  # the numba engine: its loop runs no step
    jax_cfg = dataclasses.replace(cfg, model=dataclasses.replace(cfg.model, engine="jax"))
    rec = run(jax_cfg, 0)
    assert rec["status"] == numba["status"] == "ok" and rec["steps"] == 0
    # both engines start a seed at one point and measure on the same contexts: the same untrained model
    assert np.array_equal(rec["arrays"]["theta"], numba["arrays"]["theta"])
    assert np.isclose(rec["final_loss"], numba["final_loss"], rtol=1e-9)


# ---------------------------------------------------------------------------- external records
def _external(seed: int, name: str, L: int = 4, n: int = 500):
    rng = np.random.default_rng([seed, L])
    target = rng.standard_normal(n)
    f = target[:, None] + rng.standard_normal((n, L))
    cfg = RunConfig(TaskConfig(task="topk", k=2, d=8, P=32), ModelConfig(depth=L), TrainConfig(steps=100))
    return cfg, from_layer_outputs(f, target, cfg, seed, model=name)


def test_an_external_record_carries_its_model_name_and_never_replaces_a_trained_run(tmp_path):
    from depthscale.derivations.analysis.curve import curves

    cfg, ext = _external(0, "my-gpt")
    trained = {"key": run_key(cfg, 0), "config": cfg.to_dict(), "seed": 0, "status": "ok", "final_loss": 9.0}
    assert ext["key"] != trained["key"] and ext["key"].startswith("external-")
    assert ext["config"]["model"] == {**cfg.to_dict()["model"], "model": "my-gpt"}
    assert _external(0, "other-net")[1]["key"] != ext["key"]  # the name is part of the key
    path = tmp_path / "s.sqlite"
    with Store(path, mode="write") as st:
        st.put(trained)
        st.put(ext)  # the same config and seed: beside the trained run, not over it
    with Store(path) as st:
        back = {r["key"]: r for r in st.records()}
        mine = list(st.records(model="my-gpt"))  # the store holds the name: a filter value
    assert back[trained["key"]]["final_loss"] == 9.0 and len(back) == 2
    assert [r["key"] for r in mine] == [ext["key"]]
    assert [c.label for c in curves([ext])] == ["my-gpt top-2 (a,b)=(0,0) d=8 P=32"]


@pytest.mark.parametrize(
    "name, why", [("softmax", "not a registered model's"), ("My GPT", "lower-case letters"), (3, "lower-case letters")]
)
def test_an_external_model_name_is_checked(name, why):
    with pytest.raises(ValueError, match=rf"^model={name!r}: must be your model's name: .*{why}"):
        _external(0, name)


# ---------------------------------------------------------------------------- x64
@needs_jax
def test_importing_and_calling_the_jax_engine_leaves_x64_as_it_was():
    code = (
        "import jax, numpy as np\n"
        "before = jax.config.jax_enable_x64\n"
        "from depthscale.sims import jax_engine\n"
        "after_import = jax.config.jax_enable_x64\n"
        "from depthscale.sims.config import ModelConfig, TaskConfig\n"
        "from depthscale.sims.tasks import make_batch\n"
        f"task = TaskConfig(task='easy-fresh', d={D}, P={P})\n"
        "model = jax_engine.JaxModel(ModelConfig(model='linear', depth=2, engine='jax'), task.d)\n"
        "theta = model.init(np.random.default_rng(0))\n"
        f"loss, grad = model.loss_and_grad(theta, make_batch(task, {B}, np.random.default_rng(1)))\n"
        "print(before, after_import, jax.config.jax_enable_x64, grad.dtype, jax.numpy.zeros(1).dtype)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    # off before, after the import and after a call; the engine's own call computed in float64
    assert out.stdout.split() == ["False", "False", "False", "float64", "float32"]
