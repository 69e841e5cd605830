"""Whole user models (sims/model_registry.py): refused names in one line everywhere, a residual
linear-attention variant written in a few lines of JAX registered from Python and from a
package's entry point, trained and measured by the JAX engine into records of the engine's schema.

One shape throughout (d = 3, P = 7, batch 5, L = 3), as tests/sims/test_jax_engine.py."""

from __future__ import annotations

import json

import numpy as np
import pytest

from depthscale.sims.config import ModelConfig, RunConfig, TaskConfig, TrainConfig
from depthscale.sims.model_registry import get_model, model_names, register_model, unregister_model

D, P, B, L = 3, 7, 5, 3
TASK = TaskConfig(task="easy-fresh", d=D, P=P)
TRAIN = TrainConfig(steps=12, batch=B, lr=1e-2, eval_contexts=64, window=4)
ALLOWED = "must be one of linear, softmax (or a model registered with depthscale.register_model"


def test_an_unknown_model_is_refused_in_one_line_everywhere(tmp_path, capsys):
    from depthscale.derivations.cli.app import main
    from depthscale.sims.grid import load_grid

    with pytest.raises(ValueError, match=r"^model='transformer': " + ALLOWED.replace("(", r"\(")):
        ModelConfig(model="transformer")
    assert main(["simulate", "--model", "transformer", "--steps", "1", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "model='transformer': " + ALLOWED in err and err.count("\n") == 1
    with pytest.raises(ValueError, match="model='transformer'"):
        load_grid({"seeds": [0], "model": {"model": ["softmax", "transformer"]}})
    grid = tmp_path / "g.toml"
    grid.write_text("seeds = [0]\n[model]\nmodel = 'transformer'\n")
    store = tmp_path / "runs.sqlite"
    assert main(["sweep", str(grid), "--store", str(store), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "model='transformer'" in err and err.count("\n") == 1 and not store.exists()
    with pytest.raises(ValueError, match="^name='softmax': must be not a built-in"):
        register_model("softmax", init=lambda k, c, d: {}, layer_outputs=lambda *a: None)


try:
    import jax
    import jax.numpy as jnp
    import optax  # noqa: F401
except ImportError:  # the tests below skip with the reason
    jax = jnp = None  # type: ignore[assignment]
needs_jax = pytest.mark.skipif(
    jax is None, reason="a user's model runs on the JAX engine (pip install 'depthscale[jax]')"
)


class ResidualLinear:
    """Linear attention with a residual label stream: ``u_1 = X^T y / P``, layer ``l`` predicts
    ``f_l = x_test . G_l u_l`` and updates ``u_{l+1} = u_l - (1/L) S G_l u_l`` (``S = X^T X / P``)."""

    linear_in_labels = True

    @staticmethod
    def init(key, cfg, d):
        return {"G": cfg.init_scale / np.sqrt(d) * jax.random.normal(key, (cfg.depth, d, d)) + jnp.eye(d)}

    @staticmethod
    def layer_outputs(params, X, y, xq):
        G = params["G"]
        S = jnp.einsum("bpi,bpj->bij", X, X) / X.shape[1]

        def layer(u, Gl):
            v = jnp.einsum("ij,bj->bi", Gl, u)
            return u - jnp.einsum("bij,bj->bi", S, v) / G.shape[0], jnp.einsum("bi,bi->b", xq, v)

        return jax.lax.scan(layer, jnp.einsum("bpi,bp->bi", X, y) / X.shape[1], G)[1].T


def _numpy_outputs(G, X, y, xq):
    # the same model by hand, in NumPy: one context at a time
    out = np.empty((len(X), len(G)))
    for b in range(len(X)):
        S, u = X[b].T @ X[b] / P, X[b].T @ y[b] / P
        for l, Gl in enumerate(G):
            out[b, l] = xq[b] @ Gl @ u
            u = u - S @ Gl @ u / len(G)
    return out


@pytest.fixture
def residual_linear():
    if jax is None:
        pytest.skip("a user's model runs on the JAX engine (pip install 'depthscale[jax]')")
    register_model(
        "residual-linear", init=ResidualLinear.init, layer_outputs=ResidualLinear.layer_outputs, linear_in_labels=True
    )
    yield "residual-linear"
    unregister_model("residual-linear")


def test_a_users_model_trains_and_measures_like_the_built_ins(residual_linear):
    from depthscale.sims.models import make_model
    from depthscale.sims.runner import run
    from depthscale.sims.tasks import make_batch

    cfg = ModelConfig(model=residual_linear, depth=L, engine="jax")
    with pytest.raises(ValueError, match="^engine='numba': must be jax for model='residual-linear'"):
        ModelConfig(model=residual_linear, depth=L)
    with pytest.raises(ValueError, match="^qk='tied': must be 'factorised' for a user's model"):
        ModelConfig(model=residual_linear, depth=L, engine="jax", qk="tied")
    model = make_model(cfg, D)
    assert model.names() == ["['G']"] and model.n_params == L * D * D
    theta = model.init(np.random.default_rng(0))
    batch = make_batch(TASK, B, np.random.default_rng(1))
    G = theta.reshape(L, D, D)
    # its outputs are the NumPy computation of the same model; its gradient the loss's finite differences
    assert np.allclose(model.layer_outputs(theta, batch), _numpy_outputs(G, batch.X, batch.y, batch.x_test), atol=1e-12)
    loss, grad = model.loss_and_grad(theta, batch)
    v, h = np.random.default_rng(2).standard_normal(theta.size), 1e-6
    fd = (model.loss_and_grad(theta + h * v, batch)[0] - model.loss_and_grad(theta - h * v, batch)[0]) / (2 * h)
    assert abs(fd - grad @ v) < 1e-6 * max(abs(fd), 1.0)
    # d yhat / d y by autograd (it is linear in the labels): yhat equals c . y
    c = model.label_weights(theta, batch)
    assert np.allclose((c * batch.y).sum(axis=1), model.predict(theta, batch), atol=1e-12)

    rec = run(RunConfig(TASK, cfg, TRAIN), 0)
    ref = run(RunConfig(TASK, ModelConfig(model="linear", depth=L), TRAIN), 0)
    assert set(rec) == set(ref) and rec["status"] == "ok" and rec["steps"] == TRAIN.steps
    assert rec["config"]["model"]["model"] == residual_linear and rec["n_params"] == L * D * D
    assert rec["qk_norm"] is None and len(rec["mode_losses"]) == D and len(rec["layer_losses"]) == L
    # the record's loss is the model's own on the evaluation contexts, from its trained parameters
    from depthscale.sims.tasks import eval_batches

    (ev,) = eval_batches(TASK, TRAIN.eval_contexts, 0, chunk=TRAIN.eval_contexts)
    f = _numpy_outputs(rec["arrays"]["theta"].reshape(L, D, D), ev.X, ev.y, ev.x_test)
    assert np.isclose(rec["final_loss"], np.mean((f.mean(axis=1) - ev.target) ** 2), rtol=1e-10)


@needs_jax
def test_simulate_runs_a_model_from_a_packages_entry_point(monkeypatch, capsys):
    # a user's package declares [project.entry-points."depthscale.models"] residual-linear = "pkg.models:ResidualLinear";
    # here the installed entry points are replaced by that one line (no package is installed)
    from importlib import metadata

    from depthscale.derivations.cli.app import main
    from depthscale.sims import model_registry

    class EntryPoint:
        name, value = "residual-linear", "pkg.models:ResidualLinear"

        def load(self):
            return ResidualLinear

    real = metadata.entry_points
    monkeypatch.setattr(
        metadata, "entry_points", lambda **kw: [EntryPoint()] if kw.get("group") == "depthscale.models" else real(**kw)
    )
    model_registry.reload_model_entry_points()
    try:
        assert "residual-linear" in model_names()
        assert get_model("residual-linear").source == "entry point pkg.models:ResidualLinear"
        argv = ["simulate", "--model", "residual-linear", "--task", "easy-fresh", "--d", str(D), "--P", str(P)]
        argv += ["--depth", str(L), "--batch", str(B), "--steps", "6", "--window", "2", "--eval-contexts", "16"]
        argv += ["--quiet", "--json", "--threads", "1"]
        assert main([*argv, "--engine", "jax"]) == 0
        rec = json.loads(capsys.readouterr().out)
        assert rec["status"] == "ok" and rec["config"]["model"] == {
            **rec["config"]["model"],
            "model": "residual-linear",
        }
        assert main(argv) == 2  # the numba engine refuses it in one line
        err = capsys.readouterr().err
        assert "engine='numba': must be jax for model='residual-linear'" in err and err.count("\n") == 1
    finally:
        monkeypatch.undo()
        model_registry.reload_model_entry_points()
    with pytest.raises(ValueError, match="^model='residual-linear'"):
        get_model("residual-linear")


@needs_jax
@pytest.mark.slow  # a vmapped program compiles once more (about 10 s): CI's budget
def test_seeds_in_one_vmapped_program_are_the_seeds_trained_alone():
    # seeds that stop at different steps (two diverge early, one converges): a seed that stops is masked off
    from depthscale.sims import jax_engine
    from depthscale.sims.models import make_model

    mcfg = ModelConfig(depth=L, engine="jax")
    model = make_model(mcfg, D)
    tr = TrainConfig(steps=40, batch=B, lr=0.3, eval_contexts=64, window=5, divergence_factor=5.0, schedule="constant")
    task = TaskConfig(task="topk", k=2, d=D, P=P)
    together = jax_engine.train_seeds(model, mcfg, task, tr, [0, 2, 3])
    alone = [jax_engine.train_lockstep([(model, mcfg)], task, tr, s)[0] for s in (0, 2, 3)]
    assert len({r.steps for r in alone}) == 3  # the seeds stop at different steps
    for a, b in zip(together, alone):
        assert (a.status, a.reason, a.steps, a.converged) == (b.status, b.reason, b.steps, b.converged)
        assert np.allclose(a.theta, b.theta, rtol=1e-10, atol=1e-12)
        assert np.allclose([v for _, v in a.curve], [v for _, v in b.curve], rtol=1e-10)
