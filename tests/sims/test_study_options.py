"""The paper-curves study's model and training options: framework-default init, the ensemble
control, training checkpoints, and keys that stay stable when config fields are added."""

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from depthscale.sims.config import ModelConfig, RunConfig, TaskConfig, TrainConfig
from depthscale.sims.ensemble import member_config, member_seed
from depthscale.sims.grid import load_grid, run_key
from depthscale.sims.models import make_model
from depthscale.sims.runner import run, run_group
from depthscale.sims.tasks import eval_batches
from depthscale.sims.training import train

ROOT = Path(__file__).resolve().parents[2]
TASK = TaskConfig(task="topk", k=2, d=4, P=16)
TRAIN = TrainConfig(steps=24, batch=16, eval_contexts=96, window=4, schedule="constant", lr=3e-3)


def test_default_init_is_uniform_in_one_over_sqrt_fan_in():
    m = make_model(ModelConfig(depth=3, width=40, init="default"), 8)
    p = m.unpack(m.init(np.random.default_rng(0)))
    fan_in = {"W_x": 8, "W_q": 40, "W_k": 40, "W_v": 40, "W_o": 40, "W_y": 1}
    for name, fi in fan_in.items():
        w = p[name].ravel() * np.sqrt(fi)  # uniform on [-1, 1]: mean 0, variance 1/3
        assert np.all(np.abs(w) <= 1), name
        se = np.sqrt(4 / 45 / w.size)  # s.e. of the mean of w^2 (Var(w^2) = 1/5 - 1/9 = 4/45)
        assert abs(np.mean(w**2) - 1 / 3) < 4 * se + 1e-12, name
    # layers start independent (the scaled init's own property, kept)
    assert not np.allclose(p["W_q"][0], p["W_q"][1])


@pytest.mark.parametrize(
    "kw", [{"init": "default", "model": "linear"}, {"init": "default", "init_scale": 1.0}, {"init": "framework"}]
)
def test_default_init_refuses_what_it_would_ignore(kw):
    with pytest.raises(ValueError, match=r"^init="):
        ModelConfig(**kw)


def test_committed_keys_survive_added_fields():
    """Every run of the cpu preset keeps the key it was stored under before init/ensemble/checkpoints existed."""
    store = ROOT / "results" / "cpu.sqlite"
    con = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    stored = {k for (k,) in con.execute("select key from runs")}
    con.close()
    grid = load_grid(ROOT / "studies" / "core" / "presets" / "cpu.toml")
    # every stored key is still one the preset makes, and its first two seeds are all stored (seeds 2-4
    # of the softmax top-2 block are added in budgeted pieces)
    assert stored <= {run_key(c, s) for c, s in grid}
    assert {run_key(c, s) for c, s in grid if s in (0, 1)} <= stored
    changed = RunConfig(model=ModelConfig(init="default"))
    assert run_key(changed, 0) != run_key(RunConfig(), 0)


def test_checkpoint_equals_a_run_stopped_there():
    """At a constant rate, the model measured after s steps is the model of a run capped at s steps."""
    import dataclasses

    tr = dataclasses.replace(TRAIN, window=13, checkpoints_from=6)  # the rule needs 26 steps: it never fires
    rec = run(RunConfig(TASK, ModelConfig(depth=2), tr), 0)
    assert [c["step"] for c in rec["checkpoints"]] == [6, 12]
    for c in rec["checkpoints"]:
        short = dataclasses.replace(tr, steps=c["step"], checkpoints_from=0)
        alone = run(RunConfig(TASK, ModelConfig(depth=2), short), 0)
        assert c["final_loss"] == alone["final_loss"]
        assert c["A_L"] == alone["A_L"] and c["C_L"] == alone["C_L"]


def test_ensemble_is_the_average_of_members_trained_alone():
    cfgs = [RunConfig(TASK, ModelConfig(depth=L, ensemble=True, init_scale=1.0), TRAIN) for L in (1, 3)]
    recs = run_group(cfgs, seed=2)
    one = member_config(cfgs[1])
    model = make_model(one.model, TASK.d)
    members = [train(model, TASK, one.model, TRAIN, member_seed(cfgs[1], 2, m)) for m in range(3)]
    preds, targets = [], []
    for b in eval_batches(TASK, TRAIN.eval_contexts, 2):
        preds.append(np.column_stack([model.layer_outputs(r.theta, b)[:, 0] for r in members]))
        targets.append(b.target)
    f, t = np.concatenate(preds), np.concatenate(targets)
    e = f - t[:, None]
    R = np.mean(e.mean(axis=1) ** 2)
    A = np.mean(e**2)
    C = np.mean([np.mean(e[:, i] * e[:, j]) for i in range(3) for j in range(3) if i != j])
    r3 = recs[1]
    assert r3["final_loss"] == pytest.approx(R, rel=1e-12)
    assert r3["A_L"] == pytest.approx(A, rel=1e-12) and r3["C_L"] == pytest.approx(C, rel=1e-12)
    assert recs[0]["final_loss"] == pytest.approx(np.mean(e[:, 0] ** 2), rel=1e-12)
    # member m does not depend on the depth of the group it was trained in
    alone = run(cfgs[0], 2)
    assert alone["final_loss"] == recs[0]["final_loss"]
    assert recs[1]["n_params"] == 3 * model.n_params


def test_ensemble_members_differ_and_are_not_the_deep_model():
    cfg = RunConfig(TASK, ModelConfig(depth=2, ensemble=True), TRAIN)
    assert member_seed(cfg, 0, 0) != member_seed(cfg, 0, 1)
    assert run_key(cfg, 0) != run_key(RunConfig(TASK, ModelConfig(depth=2), TRAIN), 0)
    with pytest.raises(ValueError, match=r"^ensemble="):
        ModelConfig(ensemble=True, value="per-layer")


def test_budget_counts_an_ensemble_groups_pool_once():
    from depthscale.sims import budget

    group = [RunConfig(TASK, ModelConfig(depth=L, ensemble=True), TRAIN) for L in (1, 2, 8)]
    one = RunConfig(TASK, ModelConfig(depth=1), TRAIN)
    rates = {"softmax": 1e-9}
    assert budget.job_seconds(group, rates) == budget.job_seconds(group[-1:], rates)
    assert budget.job_seconds(group, rates) == pytest.approx(8 * budget.job_seconds([one], rates))


def test_configs_key_on_values_not_types():
    """numpy scalars and integral floats give the run of the plain values (a sweep built with numpy resumes)."""
    plain = RunConfig(TaskConfig(d=16, P=128, a=0.5), ModelConfig(depth=4, ensemble=False), TrainConfig(batch=64))
    numpy_made = RunConfig(
        TaskConfig(d=np.int64(16), P=np.int32(128), a=np.float32(0.5)),
        ModelConfig(depth=np.int64(4), ensemble=np.bool_(False)),
        TrainConfig(batch=np.int64(64)),
    )
    assert run_key(numpy_made, 0) == run_key(plain, 0)
    assert type(numpy_made.model.depth) is int and type(numpy_made.task.a) is float


@pytest.mark.parametrize("field", ["task", "model", "train"])
def test_run_config_refuses_dicts(field):
    with pytest.raises(ValueError, match=rf"^{field}=\{{\}}: must be a \w+Config"):
        RunConfig(**{field: {}})
