"""Lockstep training of a depth grid, time budgets, thread-count independence, record provenance."""

import json
from dataclasses import replace

import numpy as np
import pytest

import depthscale.sims.sweeps  # noqa: F401
import depthscale.sims.training  # noqa: F401 - the package exports must still be the functions
from depthscale.sims import budget as cost
from depthscale.sims.config import ModelConfig, RunConfig, TaskConfig, TrainConfig
from depthscale.sims.grid import load_grid
from depthscale.sims.model_specs import SoftmaxSpec
from depthscale.sims.runner import run, run_group
from depthscale.sims.store import Store
from depthscale.sims.sweeps import sweep

TASK = TaskConfig(task="topk", k=2, d=4, P=16)


def _configs(schedule="cosine", depths=(1, 2, 4), steps=30, lr=3e-3, divergence_factor=1e3, **model):
    train = TrainConfig(
        steps=steps,
        batch=32,
        eval_contexts=128,
        window=5,
        schedule=schedule,
        lr=lr,
        divergence_factor=divergence_factor,
    )
    return [RunConfig(TASK, ModelConfig(depth=L, **model), train) for L in depths]


def _same(a: dict, b: dict) -> None:
    for k in set(a) | set(b):
        if k in ("wall_seconds", "arrays"):
            continue
        assert json.dumps(a[k], sort_keys=True) == json.dumps(b[k], sort_keys=True), k  # exact floats, NaN == NaN
    assert set(a.get("arrays") or {}) == set(b.get("arrays") or {})
    for k in a.get("arrays") or {}:
        assert np.array_equal(a["arrays"][k], b["arrays"][k]), k


@pytest.mark.parametrize(
    "schedule,model",
    [("cosine", {}), ("constant", {}), ("cosine", {"qk": "temperature"}), ("cosine", {"model": "linear"})],
)
def test_lockstep_records_are_bitwise_those_of_separate_runs(schedule, model):
    configs = _configs(schedule, **model)
    grouped = run_group(configs, seed=3)
    for config, rec in zip(configs, grouped):
        _same(rec, run(config, 3))
    if schedule == "constant":  # the stopping rule fired at different steps, and nothing else moved
        assert all(r["converged"] for r in grouped) and all(r["steps"] < 30 for r in grouped)


def test_lockstep_with_a_diverging_member():
    # lr 1 with a divergence factor of 20 stops the deep member early (its loss passes 20 x its
    # step-0 loss) while the shallow one goes on: each still matches its solo run
    configs = _configs("constant", depths=(1, 8), lr=1.0, steps=40, divergence_factor=20)
    grouped = run_group(configs, seed=0)
    assert [r["status"] for r in grouped] == ["ok", "diverged"] and grouped[1]["steps"] < grouped[0][
        "steps"
    ]  # the group really holds a diverging member
    for config, rec in zip(configs, grouped):
        _same(rec, run(config, 0))


def test_run_group_refuses_configs_that_differ_in_more_than_depth():
    a = _configs()[0]
    b = RunConfig(TASK, ModelConfig(depth=2), TrainConfig(steps=31, batch=32))
    with pytest.raises(ValueError, match="differ only in model.depth"):
        run_group([a, b], 0)
    with pytest.raises(ValueError, match="configs"):
        run_group([], 0)


def test_records_are_the_same_for_any_thread_count():
    import numba

    config = _configs(depths=(3,))[0]
    old = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = run(config, 1)
        numba.set_num_threads(2)
        two = run(config, 1, prefetch=True)
    finally:
        numba.set_num_threads(old)
    assert one["status"] == "ok" and np.array_equal(one["arrays"]["theta"], two["arrays"]["theta"])
    assert one["final_loss"] == two["final_loss"] and one["top1_mass"] == two["top1_mass"]
    _same(one, two)


def test_qk_similarity_of_temperature_heads_is_the_sign_agreement():
    # temperature heads: the input maps are kappa_l W_x^T W_x, so the cosine of two layers is
    # sign(kappa_l kappa_m); the mean over pairs follows from the signs alone
    rec = run(_configs(depths=(5,), qk="temperature")[0], 2)
    from depthscale.sims.models import make_model

    model = make_model(ModelConfig(depth=5, qk="temperature"), TASK.d)
    kappa = model.unpack(rec["arrays"]["theta"])["kappa"]
    s = np.sign(kappa)
    expected = (np.outer(s, s).sum() - 5) / 20
    assert rec["qk_similarity"] == pytest.approx(expected, abs=1e-12)
    assert run(_configs(depths=(1,))[0], 2)["qk_similarity"] is None


def test_package_exports_are_functions():
    from depthscale.sims import sweep as sweep_fn
    from depthscale.sims import train as train_fn

    assert callable(sweep_fn) and callable(train_fn)


def _grid():
    return load_grid(
        {
            "seeds": [0, 1],
            "task": {"task": "topk", "d": 4, "P": 16},
            "model": {"depth": [1, 2]},
            "train": {"steps": 8, "batch": 16, "eval_contexts": 64},
        }
    )


def test_sweep_lockstep_equals_separate_runs_and_stamps_the_code_version(tmp_path):
    runs = _grid()
    with Store(tmp_path / "a.sqlite", mode="write") as a, Store(tmp_path / "b.sqlite", mode="write") as b:
        assert sweep(runs, a, executor="serial", quiet=True).done == 4
        assert sweep(runs, b, executor="serial", quiet=True, lockstep=False).done == 4
        for rec in a.records(arrays=True):
            _same(rec, b.get(rec["key"]))
            assert rec["code_version"].split("+")[0] == b.get(rec["key"])["code_version"].split("+")[0] != ""


def test_budget_stops_starting_jobs_and_a_rerun_continues(tmp_path, monkeypatch):
    import time

    def slow(config, seed):
        time.sleep(0.4)
        return {"status": "ok", "final_loss": 1.0}

    runs = _grid() + load_grid({"seeds": [2, 3], "model": {"depth": [1, 2]}, "task": {"d": 4, "P": 16}})
    monkeypatch.setattr(SoftmaxSpec, "DEFAULT_RATE", 0.0)  # estimates 0: only elapsed time stops the sweep
    with Store(tmp_path / "s.sqlite", mode="write") as st:
        res = sweep(runs, st, run_fn=slow, executor="serial", quiet=True, budget=1.0)
        assert res.out_of_budget and 1 <= res.done < len(runs) and res.not_started == len(runs) - res.done
        res2 = sweep(runs, st, run_fn=slow, executor="serial", quiet=True)
        assert res2.done == len(runs) - res.done and len(st) == len(runs)
    # an estimate longer than the budget starts nothing
    monkeypatch.setattr(SoftmaxSpec, "DEFAULT_RATE", 1.0)
    with Store(tmp_path / "t.sqlite", mode="write") as st:
        res = sweep(runs, st, run_fn=slow, executor="serial", quiet=True, budget=60.0)
        assert res.out_of_budget and res.done == 0 and res.not_started == len(runs) and len(st) == 0


def test_cost_model_calibrates_on_finished_runs():
    config = _configs(depths=(4,))[0]
    rec = {"status": "ok", "config": config.to_dict(), "steps": config.train.steps, "wall_seconds": 2.0}
    rate = cost.rates([rec])["softmax"]
    assert cost.job_seconds([config], {"softmax": rate}) == pytest.approx(2.0)
    assert cost.job_seconds([config], {}) == pytest.approx(SoftmaxSpec.DEFAULT_RATE * cost.run_units(config))
    # the model's own count: steps x batch x P x N x d x (19 + L) units (the softmax step's arithmetic)
    t, task = config.train, config.task
    assert cost.run_units(config) == t.steps * t.batch * task.P * task.d * task.d * (19 + 4)


def test_a_users_model_is_costed_as_the_softmax_model_of_its_size():
    from depthscale.sims.model_registry import register_model, unregister_model

    register_model("mean-of-labels", init=lambda key, cfg, d: {"w": [0.0]}, layer_outputs=lambda p, X, y, xq: y)
    try:
        mine = _configs(depths=(4,))[0]
        mine = replace(mine, model=replace(mine.model, model="mean-of-labels", engine="jax"))
        soft = _configs(depths=(4,))[0]
        assert cost.run_units(mine) == cost.run_units(soft)
        assert cost.job_seconds([mine], {}) == pytest.approx(SoftmaxSpec.DEFAULT_RATE * cost.run_units(soft))
    finally:
        unregister_model("mean-of-labels")


def test_cost_model_prefers_runs_of_the_same_size():
    small = _configs(depths=(4,))[0]

    def resized(**task):
        c = small.to_dict()
        c["task"].update(task)
        return RunConfig.from_dict(c)

    big = resized(d=8, P=32)
    recs = [
        {"status": "ok", "config": c.to_dict(), "steps": c.train.steps, "wall_seconds": w}
        for c, w in ((small, 1.0), (big, 50.0))
    ]
    r = cost.rates(recs)
    assert cost.job_seconds([small], r) == pytest.approx(1.0)
    assert cost.job_seconds([big], r) == pytest.approx(50.0)
    # an unseen size falls back to the kind's median rate
    other = resized(d=6)
    assert cost.job_seconds([other], r) == pytest.approx(r["softmax"] * cost.run_units(other))


def test_cost_model_learns_how_much_of_the_cap_stopping_runs_use():
    config = _configs(depths=(4,))[0]
    cap = config.train.steps

    def rec(c, steps, wall):
        return {"status": "ok", "config": c.to_dict(), "steps": steps, "wall_seconds": wall}

    # two runs stopped by the rule at about 1/4 and 1/2 of the cap, at 0.1 s per step
    r = cost.rates([rec(config, cap // 4, 0.1 * (cap // 4)), rec(config, cap // 2, 0.1 * (cap // 2))])
    assert cost.job_seconds([config], r) == pytest.approx(0.1 * (cap // 2))  # the larger fraction
    # another schedule of the same size has no such record and is estimated at its cap
    other = config.to_dict()
    other["train"]["schedule"] = "constant" if config.train.schedule != "constant" else "cosine"
    other = RunConfig.from_dict(other)
    assert cost.job_seconds([other], r) == pytest.approx(0.1 * cap)
    # a run whose rule window is half its cap cannot stop early: it says nothing about runs that can
    fixed = config.to_dict()
    fixed["train"]["window"] = cap // 2
    fixed = RunConfig.from_dict(fixed)
    r = cost.rates([rec(config, cap // 4, 0.1 * (cap // 4)), rec(fixed, cap, 0.1 * cap)])
    assert cost.job_seconds([config], r) == pytest.approx(0.1 * (cap // 4))


def test_cost_model_counts_width_linearly():
    # the softmax step's flops grow about linearly in N at fixed d (measured 2.8x from N = 16 to 64)
    config = _configs(depths=(4,))[0]
    wide = config.to_dict()
    wide["model"]["width"] = 4 * config.model.n(config.task.d)
    assert cost.run_units(RunConfig.from_dict(wide)) == pytest.approx(4 * cost.run_units(config))


@pytest.mark.parametrize("depth", [1, 4])
def test_cost_model_counts_the_context_update_per_context_token(depth):
    # a trainable context update moves all P context tokens in every layer but the last, each over
    # the P keys (2 P / 5 units at the base model's rate, from recorded runs); a one-layer model moves none
    config = _configs(depths=(depth,))[0]
    cu = config.to_dict()
    cu["model"]["context_update"] = True
    cu = RunConfig.from_dict(cu)
    P, L = config.task.P, config.model.depth
    assert cost.run_units(cu) / cost.run_units(config) == pytest.approx((19 + L + 2 * P * (L - 1) / 5) / (19 + L))


@pytest.mark.parametrize("bad", ["", "0", "-1h", "2x", "h", "1.5.h"])
def test_bad_budgets(bad):
    with pytest.raises(ValueError, match="budget="):
        cost.parse_duration(bad)


def test_a_blown_up_finite_run_keeps_its_errors_without_overflow():
    # init 100 and lr 10 give errors beyond float32's range from the first step on; with the divergence
    # rule out of the way (factor 1e300) the run finishes, and the stored per-context errors must
    # still be the finite values
    import warnings

    task = TaskConfig(task="topk", k=2, d=4, P=16)
    train = TrainConfig(steps=30, batch=32, eval_contexts=64, window=10, lr=10.0, divergence_factor=1e300)
    config = RunConfig(task, ModelConfig(model="linear", depth=3, init_scale=100.0), train)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rec = run(config, 0)
    sq = rec["arrays"]["sq_err"]
    assert rec["status"] == "ok" and rec["final_loss"] > 1e39  # beyond float32 (max 3.4e38)
    assert np.all(np.isfinite(sq)) and np.mean(sq) == pytest.approx(rec["final_loss"], rel=1e-12)
