"""Tasks by name (sims/task_registry.py): the built-ins registered through the registry's one call,
their target second moments against Monte Carlo of ``make_batch``; a user's task (its own batches,
drawn here with plain NumPy) checked, trained and measured on the numba engine, refused by the JAX
engine, named by filters and grids, and read from an entry point.

The user's task: context tokens ``x_i = sqrt(lam) * z_i`` in the eigenbasis (``O = I``), teacher
``beta = sqrt(omega) * g``, labels ``y_i = beta . x_i`` and target the mean label of all ``P``
tokens (``t`` the mean token, ``sel`` every token): ``E[y*^2] = sum_k lam_k omega_k / P``."""

from __future__ import annotations

from importlib import metadata

import numpy as np
import pytest

from depthscale.sims import task_registry
from depthscale.sims.batch import Batch
from depthscale.sims.config import ModelConfig, RunConfig, TaskConfig, TrainConfig
from depthscale.sims.task_registry import get_task, register_task, task_names, unregister_task
from depthscale.sims.tasks import eval_batches, make_batch


def mean_label_batch(cfg, n, rng) -> Batch:
    d, P = cfg.d, cfg.P
    X = rng.standard_normal((n, P, d)) * np.sqrt(cfg.lam)
    beta = rng.standard_normal((n, d)) * np.sqrt(cfg.omega)
    y = np.einsum("bpd,bd->bp", X, beta)
    t = X.mean(axis=1)
    O = np.broadcast_to(np.eye(d), (n, d, d)).copy()
    sel = np.broadcast_to(np.arange(P), (n, P)).copy()
    return Batch(X, y, rng.standard_normal((n, d)) * np.sqrt(cfg.lam), y.mean(axis=1), t, beta, O, sel)


def mean_label_moment(cfg) -> float:
    return float(np.sum(cfg.lam * cfg.omega)) / cfg.P


class MeanLabel:
    """The same task as an entry point names it: an object with the two functions."""

    make_batch = staticmethod(mean_label_batch)
    second_moment = staticmethod(mean_label_moment)


@pytest.fixture
def mean_label():
    register_task("mean-label", make_batch=mean_label_batch, second_moment=mean_label_moment)
    yield "mean-label"
    unregister_task("mean-label")


def test_the_builtins_are_the_registry_in_the_kernels_order():
    assert task_names()[:3] == ("easy-exact", "easy-fresh", "topk")
    assert [get_task(n).code for n in ("easy-exact", "easy-fresh", "topk")] == [0, 1, 2]
    assert all(get_task(n).builtin and get_task(n).engines == ("numba", "jax") for n in task_names()[:3])
    with pytest.raises(ValueError, match=r"^name='topk': must be not a built-in task's name"):
        register_task("topk", make_batch=mean_label_batch, second_moment=mean_label_moment)
    with pytest.raises(ValueError, match=r"^make_batch=3: must be a function"):
        register_task("ok", make_batch=3, second_moment=mean_label_moment)
    with pytest.raises(ValueError, match=r"^second_moment=None: must be a function"):
        register_task("ok", make_batch=mean_label_batch, second_moment=None)


@pytest.mark.parametrize("task", ["easy-exact", "easy-fresh"])
def test_the_easy_tasks_second_moment_is_make_batchs(task):
    cfg = TaskConfig(task=task, a=1.2, b=0.4, d=5, P=9, c_lambda=2.0, c_omega=0.5)
    k = np.arange(1, 6)
    exact = float(np.sum(2.0 * k**-1.2 * 0.5 * k**-0.4))  # written out, not through cfg.lam / cfg.omega
    assert np.isclose(cfg.second_moment, exact, rtol=1e-12)
    y2 = make_batch(cfg, 40_000, np.random.default_rng(3)).target ** 2
    assert abs(y2.mean() - exact) < 5 * y2.std() / np.sqrt(y2.size)
    assert TaskConfig(task="topk").second_moment is None  # no closed form


def test_a_users_task_draws_checked_batches_of_its_moment(mean_label):
    cfg = TaskConfig(task=mean_label, a=1.0, b=0.5, d=4, P=6)
    b = make_batch(cfg, 50_000, np.random.default_rng(0), dtype=np.float32)
    assert b.X.dtype == np.float32 and b.sel.dtype == np.int64 and b.sel.shape == (50_000, 6)
    expected = float(np.sum(np.arange(1, 5) ** -1.5)) / 6
    assert np.isclose(cfg.second_moment, expected, rtol=1e-12)
    y2 = b.target.astype(np.float64) ** 2
    assert abs(y2.mean() - expected) < 5 * y2.std() / np.sqrt(y2.size)
    # chunked evaluation contexts do not depend on the chunk, as for the built-ins
    a1 = np.concatenate([x.target for x in eval_batches(cfg, 300, seed=1, chunk=7)])
    a2 = np.concatenate([x.target for x in eval_batches(cfg, 300, seed=1, chunk=300)])
    assert np.array_equal(a1, a2)


@pytest.mark.parametrize(
    "field, broken, message",
    [
        ("X", lambda v: v[:, :-1], r"must give X of shape \(3, 6, 4\), not \(3, 5, 4\)$"),
        ("target", lambda v: v[:, None], r"must give target of shape \(3,\), not \(3, 1\)$"),
        ("sel", lambda v: v + 6, r"must give sel as integer indices of context tokens, 0 to P - 1 = 5$"),
        ("sel", lambda v: v * 1.0, r"must give sel as integer indices"),
        ("y", lambda v: v * np.nan, r"must give finite y$"),
    ],
)
def test_a_users_wrong_batch_is_one_line_naming_the_field(field, broken, message):
    def make(cfg, n, rng):
        b = mean_label_batch(cfg, n, rng)
        setattr(b, field, broken(getattr(b, field)))
        return b

    register_task("bad-batch", make_batch=make, second_moment=mean_label_moment)
    try:
        with pytest.raises(ValueError, match=r"^task='bad-batch': make_batch\(cfg, n=3, rng\) " + message):
            make_batch(TaskConfig(task="bad-batch", d=4, P=6), 3, np.random.default_rng(0))
    finally:
        unregister_task("bad-batch")


def test_a_users_task_trains_on_both_engines_on_the_same_host_batches(mean_label, tmp_path):
    from depthscale.sims.grid import load_grid
    from depthscale.sims.runner import run
    from depthscale.sims.store import Store

    task = TaskConfig(task=mean_label, d=3, P=7)
    train = TrainConfig(steps=20, batch=8, eval_contexts=64, window=4)
    rec = run(RunConfig(task, ModelConfig(model="linear", depth=2), train), 0)
    assert rec["status"] == "ok" and rec["config"]["task"]["task"] == mean_label
    (ev,) = eval_batches(task, 64, 0, chunk=64)  # the contexts it was measured on, drawn again
    assert np.isclose(rec["target_power"], np.mean(ev.target**2), rtol=1e-12)
    pytest.importorskip("jax")
    pytest.importorskip("optax")
    from depthscale.sims.jax_tasks import DataSpec

    with pytest.raises(ValueError, match=r"^task='mean-label': must be a built-in task \(a user's task is drawn"):
        DataSpec.of(task)  # no device sampler: the JAX engine takes the host's batches
    jrec = run(RunConfig(task, ModelConfig(model="linear", depth=2, engine="jax"), train), 0)
    # the same batches in the same order, the same start and rules: the same model (engine contract)
    assert jrec["status"] == "ok" and jrec["steps"] == rec["steps"]
    assert jrec["final_loss"] == pytest.approx(rec["final_loss"], rel=1e-6)
    assert len(load_grid({"seeds": [0], "task": {"task": [mean_label, "topk"], "d": 3, "P": 7}})) == 2
    path = tmp_path / "s.sqlite"
    with Store(path, mode="write") as st:
        st.put(rec)
    unregister_task(mean_label)
    with Store(path) as st:  # a task this process lacks is still a filter value where the store holds it
        assert [r["key"] for r in st.records(task=mean_label)] == [rec["key"]]
        with pytest.raises(ValueError, match=r"^task='hard': must be one of easy-exact, easy-fresh, topk \(or a task"):
            list(st.records(task="hard"))


def test_an_unknown_task_is_one_line():
    with pytest.raises(ValueError) as info:
        TaskConfig(task="hard")
    assert str(info.value) == (
        "task='hard': must be one of easy-exact, easy-fresh, topk (or a task registered with "
        "depthscale.register_task or the entry-point group depthscale.tasks)"
    )


def test_a_task_from_an_entry_point_beside_a_broken_line(monkeypatch, capsys):
    eps = [
        metadata.EntryPoint("a-gone", "depthscale_no_such_task_module:TASK", "depthscale.tasks"),
        metadata.EntryPoint("mean-label-ep", f"{__name__}:MeanLabel", "depthscale.tasks"),
    ]
    real = metadata.entry_points
    monkeypatch.setattr(
        metadata, "entry_points", lambda **kw: eps if kw.get("group") == "depthscale.tasks" else real(**kw)
    )
    task_registry.reload_task_entry_points()
    try:
        cfg = TaskConfig(task="mean-label-ep", d=2, P=4)
        assert get_task("mean-label-ep").source == f"entry point {__name__}:MeanLabel"
        assert cfg.second_moment == 0.5
        err = capsys.readouterr().err
        assert err.startswith("depthscale: warning: task plugin a-gone = ") and err.count("\n") == 1
        with pytest.raises(ValueError, match=r"^task='a-gone': must be a task that loads; its plugin was left out"):
            TaskConfig(task="a-gone")
    finally:
        monkeypatch.undo()
        task_registry.reload_task_entry_points()
    assert "mean-label-ep" not in task_names()
