"""Optimisers and losses by name (sims/optimizer_registry.py, sims/loss_registry.py): the built-in sgd
against a hand-written gradient descent on the same batches, a user's optimiser trained on numba and
refused by the JAX engine in one line, an entry point beside a broken line, a user's loss trained on
the JAX engine, and the defaults leaving every run key as it was."""

from __future__ import annotations

from importlib import metadata

import numpy as np
import pytest

from depthscale.sims import optimizer_registry
from depthscale.sims.config import ModelConfig, RunConfig, TaskConfig, TrainConfig, config_hash, rng_for
from depthscale.sims.loss_registry import register_loss, unregister_loss
from depthscale.sims.models import make_model
from depthscale.sims.optimizer_registry import get_optimizer, optimizer_names, register_optimizer, unregister_optimizer
from depthscale.sims.tasks import make_batch
from depthscale.sims.training import lr_at, train

TASK = TaskConfig(task="topk", k=2, d=4, P=8)
MODEL = ModelConfig(model="softmax", depth=2)


def _hand_loop(cfg: TrainConfig, steps: int, update) -> np.ndarray:
    """The trainer's batches and learning rates, with ``update(theta, grad, lr)`` written here."""
    model = make_model(MODEL, TASK.d)
    theta = model.init(rng_for(MODEL, 0, "init")).astype(np.float64)
    rng = rng_for(TASK, 0, "train")
    for step in range(steps):
        _, grad = model.loss_and_grad(theta, make_batch(TASK, cfg.batch, rng, dtype=np.float64))
        update(theta, grad, lr_at(cfg, step, cfg.lr))
    return theta


def test_sgd_is_plain_gradient_descent_on_the_trainers_batches():
    cfg = TrainConfig(optimizer="sgd", steps=12, batch=16, lr=0.05, window=50, eval_contexts=16, schedule="cosine")
    res = train(make_model(MODEL, TASK.d), TASK, MODEL, cfg, seed=0)

    def sgd(theta, grad, lr):
        theta[:] = theta - lr * grad

    assert res.steps == 12
    np.testing.assert_allclose(res.theta, _hand_loop(cfg, 12, sgd), rtol=1e-12, atol=1e-14)
    adam = train(make_model(MODEL, TASK.d), TASK, MODEL, TrainConfig(**{**cfg.__dict__, "optimizer": "adam"}), seed=0)
    assert not np.allclose(adam.theta, res.theta)  # the name reaches the trainer


class Halved:
    """A user's optimiser: gradient descent at half the learning rate, counting its steps."""

    def __init__(self, n, hyper, dtype):
        self.t = 0

    def finite(self):
        return True

    def step(self, theta, grad, lr):
        self.t += 1
        theta -= 0.5 * lr * grad


@pytest.fixture
def halved():
    register_optimizer("halved", make=Halved)
    yield "halved"
    unregister_optimizer("halved")


def test_a_users_optimizer_trains_on_numba_and_the_jax_engine_refuses_it(halved):
    cfg = TrainConfig(optimizer=halved, steps=6, batch=16, lr=0.05, window=50, eval_contexts=16, schedule="constant")
    res = train(make_model(MODEL, TASK.d), TASK, MODEL, cfg, seed=0)

    def half(theta, grad, lr):
        theta[:] = theta - 0.5 * lr * grad

    np.testing.assert_allclose(res.theta, _hand_loop(cfg, 6, half), rtol=1e-12, atol=1e-14)
    with pytest.raises(ValueError, match=r"^engine='jax': must be numba for optimizer='halved' \(it has no optax"):
        RunConfig(TASK, ModelConfig(engine="jax"), cfg)
    assert optimizer_names() == ("adam", "sgd", "halved")


@pytest.mark.parametrize(
    "changes,message",
    [
        ({"optimizer": "lion"}, r"^optimizer='lion': must be one of adam, sgd \(or an optimizer registered"),
        ({"optimizer": 3}, r"^optimizer=3: must be one of adam, sgd"),
    ],
)
def test_an_unknown_optimizer_is_one_line(changes, message):
    with pytest.raises(ValueError, match=message):
        TrainConfig(**changes)


def test_a_bad_registration_names_the_argument():
    with pytest.raises(ValueError, match=r"^make=3: must be a function"):
        register_optimizer("bad-one", make=3)
    with pytest.raises(ValueError, match=r"^name='adam': must be not a built-in"):
        register_optimizer("adam", make=Halved)
    assert "bad-one" not in optimizer_names()


def test_the_default_optimizer_leaves_every_run_key_as_it_was():
    cfg = RunConfig(TASK, MODEL, TrainConfig())
    old = cfg.to_dict()
    del old["train"]["optimizer"]  # a record written before the field existed
    assert config_hash(old) == config_hash(cfg.to_dict())
    assert config_hash(RunConfig(TASK, MODEL, TrainConfig(optimizer="sgd")).to_dict()) != config_hash(old)


def test_an_optimizer_from_an_entry_point_beside_a_broken_line(monkeypatch, capsys):
    eps = [
        metadata.EntryPoint("a-gone", "depthscale_no_such_optimizer_module:OPT", "depthscale.optimizers"),
        metadata.EntryPoint("halved-ep", f"{__name__}:HalvedEntry", "depthscale.optimizers"),
    ]
    real = metadata.entry_points
    monkeypatch.setattr(
        metadata, "entry_points", lambda **kw: eps if kw.get("group") == "depthscale.optimizers" else real(**kw)
    )
    optimizer_registry.reload_optimizer_entry_points()
    try:
        assert get_optimizer("halved-ep").make is Halved
        err = capsys.readouterr().err
        assert err.startswith("depthscale: warning: optimizer plugin a-gone = ") and err.count("\n") == 1
        with pytest.raises(ValueError, match=r"^optimizer='a-gone': must be an optimizer that loads"):
            TrainConfig(optimizer="a-gone")
    finally:
        monkeypatch.undo()
        optimizer_registry.reload_optimizer_entry_points()
    assert "halved-ep" not in optimizer_names()


class HalvedEntry:
    make = Halved


# ------------------------------------------------------------------------------------------------ losses
@pytest.fixture
def half_mse():
    register_loss("half-mse", per_context=lambda yhat, t: 0.5 * (yhat - t) ** 2)
    yield "half-mse"
    unregister_loss("half-mse")


def test_a_users_loss_trains_on_the_jax_engine_as_its_gradient_says(half_mse):
    # gradient descent on half the squared error at twice the rate takes the steps of the squared
    # error at the rate (the same parameters), and a loss the JAX engine differentiates is refused on numba
    pytest.importorskip("jax")
    from depthscale.sims import jax_engine

    jm = ModelConfig(model="softmax", depth=2, engine="jax")

    def trained(loss, lr):
        cfg = TrainConfig(optimizer="sgd", loss=loss, steps=8, batch=16, lr=lr, window=50, eval_contexts=16)
        (res,) = jax_engine.train_lockstep([(make_model(jm, TASK.d), jm)], TASK, cfg, 0, data="host")
        return res

    half, full = trained(half_mse, 0.1), trained("mse", 0.05)
    assert half.steps == full.steps == 8
    np.testing.assert_allclose(half.theta, full.theta, rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match=r"^engine='numba': must be jax for loss='half-mse' \(a user's loss"):
        RunConfig(TASK, MODEL, TrainConfig(loss=half_mse))
    with pytest.raises(ValueError, match=r"^loss='hinge': must be one of mse, half-mse \(or a loss registered"):
        TrainConfig(loss="hinge")


def test_the_default_loss_leaves_every_run_key_as_it_was():
    cfg = RunConfig(TASK, MODEL, TrainConfig())
    old = cfg.to_dict()
    del old["train"]["loss"]  # a record written before the field existed
    assert config_hash(old) == config_hash(cfg.to_dict())
