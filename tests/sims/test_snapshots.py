"""Snapshots: a lockstep group killed mid-training resumes from its last snapshot, bitwise."""

import json
import pickle

import numpy as np
import pytest

from depthscale.sims.config import ModelConfig, RunConfig, TaskConfig, TrainConfig
from depthscale.sims.runner import _checkpoint_measure, make_model, run_group
from depthscale.sims.snapshots import Snapshot, snapshot_dir
from depthscale.sims.store import Store
from depthscale.sims.sweeps import sweep
from depthscale.sims.training import train_lockstep

TASK = TaskConfig(task="topk", k=2, d=4, P=16)


def _configs(schedule="cosine", depths=(1, 2, 4), **model):
    train = TrainConfig(steps=40, batch=16, eval_contexts=64, window=5, schedule=schedule, checkpoints_from=8)
    return [RunConfig(TASK, ModelConfig(depth=L, **model), train) for L in depths]


class _Killed(Exception):
    pass


class _KilledAt(Snapshot):
    """Saves at every step and dies (like a kill) right after the snapshot of step ``at``."""

    def __init__(self, directory, configs, seed, at):
        super().__init__(directory, configs, seed, every=0.0)
        self.at = at

    def save(self, state):
        super().save(state)
        if state["step"] == self.at:
            raise _Killed


def _kill_at(tmp_path, configs, seed, at, prefetch=False):
    """Train ``configs`` as run_group would, killed after step ``at``'s snapshot; the snapshot folder."""
    folder = tmp_path / "snaps"
    models = [(make_model(c.model, c.task.d), c.model) for c in configs]
    cfg = configs[0].train
    with pytest.raises(_Killed):
        train_lockstep(
            models,
            configs[0].task,
            cfg,
            seed,
            prefetch=prefetch,
            measure=_checkpoint_measure(configs[0].task, cfg, seed),
            snapshot=_KilledAt(folder, configs, seed, at),
        )
    return folder


def _same(a: dict, b: dict) -> None:
    for k in set(a) | set(b):
        if k in ("wall_seconds", "arrays", "resumed"):
            continue
        assert json.dumps(a[k], sort_keys=True) == json.dumps(b[k], sort_keys=True), k  # exact floats
    for k in a.get("arrays") or {}:
        assert np.array_equal(a["arrays"][k], b["arrays"][k]), k


@pytest.mark.parametrize(
    "schedule,at,prefetch,model",
    [
        ("cosine", 13, False, {}),  # between checkpoints 8 and 16: the measurements so far carry over
        ("cosine", 1, True, {}),  # the prefetched batch was drawn ahead of the snapshot
        ("plateau", 27, False, {"qk": "temperature"}),  # the stopping rule's window and halvings carry over
        ("cosine", 20, False, {"model": "linear"}),
    ],
)
def test_a_killed_group_resumes_bitwise(tmp_path, schedule, at, prefetch, model):
    configs = _configs(schedule, **model)
    whole = run_group(configs, seed=5)
    folder = _kill_at(tmp_path, configs, 5, at, prefetch)
    resumed = run_group(configs, seed=5, snapshots=folder)
    for a, b in zip(whole, resumed):
        _same(a, b)
        assert "resumed" not in a and [r["step"] for r in b["resumed"]] == [at]


def test_a_snapshot_of_another_group_is_not_loaded(tmp_path):
    configs = _configs()
    folder = _kill_at(tmp_path, configs, 5, 10)
    other = Snapshot(folder, configs[:2], 5)  # two of the three depths: another group, another file
    assert other.load() is None and other.resumed == []
    # a file of the right name that holds another group's keys is not loaded either
    path = Snapshot(folder, configs, 5).path
    state = pickle.loads(path.read_bytes())
    path.write_bytes(pickle.dumps({**state, "keys": ["x-5"]}))
    assert Snapshot(folder, configs, 5).load() is None


def test_a_damaged_snapshot_is_warned_about_and_training_starts_afresh(tmp_path, capsys):
    configs = _configs(depths=(1, 2))
    folder = _kill_at(tmp_path, configs, 5, 10)
    path = Snapshot(folder, configs, 5).path
    path.write_bytes(path.read_bytes()[:100])  # cut short
    records = run_group(configs, seed=5, snapshots=folder)
    assert "unreadable" in capsys.readouterr().err
    for a, b in zip(run_group(configs, seed=5), records):
        _same(a, b)
        assert "resumed" not in b


def test_a_sweep_resumes_from_the_snapshot_and_deletes_it(tmp_path):
    configs = _configs(depths=(1, 2))
    store_path = tmp_path / "s.sqlite"
    folder = snapshot_dir(store_path)
    assert folder.name == "s.sqlite.snapshots"
    _kill_at(tmp_path, configs, 2, 17).rename(folder)
    with Store(store_path, mode="write") as store:
        res = sweep([(c, 2) for c in configs], store, executor="serial", quiet=True)
        assert res.done == 2
        stored = list(store.records())
    assert not folder.exists()  # the group's records are stored: its snapshot is gone
    assert all([r["step"] for r in rec["resumed"]] == [17] for rec in stored)
    for a, b in zip(run_group(configs, seed=2), sorted(stored, key=lambda r: r["config"]["model"]["depth"])):
        assert a["final_loss"] == b["final_loss"] and a["train_curve"] == b["train_curve"]


def test_a_sweep_without_snapshots_writes_none(tmp_path):
    store_path = tmp_path / "s.sqlite"
    with Store(store_path, mode="write") as store:
        sweep([(c, 0) for c in _configs(depths=(1,))], store, executor="serial", quiet=True, snapshot_every=None)
    assert not snapshot_dir(store_path).exists()
    with pytest.raises(ValueError, match="snapshot_every"):
        with Store(store_path, mode="write") as store:
            sweep([], store, executor="serial", snapshot_every=-1)


def test_a_snapshot_written_before_adam_moved_still_loads(monkeypatch):
    # snapshots of groups in flight when Adam moved from sims/training.py to sims/optimizer_registry.py
    # name it at its old place; they must resume, not train afresh
    import io

    from depthscale.sims import training
    from depthscale.sims.optimizer_registry import Adam
    from depthscale.sims.snapshots import _Unpickler

    opt = Adam(3, TrainConfig(), np.float64)
    opt.m[:] = [1.0, 2.0, 3.0]
    monkeypatch.setattr(Adam, "__module__", "depthscale.sims.training")
    monkeypatch.setattr(training, "Adam", Adam, raising=False)
    old = pickle.dumps({"opt": opt}, protocol=pickle.HIGHEST_PROTOCOL)
    monkeypatch.undo()
    assert b"depthscale.sims.training" in old
    with pytest.raises(AttributeError):
        pickle.loads(old)
    back = _Unpickler(io.BytesIO(old)).load()["opt"]
    assert type(back) is Adam and list(back.m) == [1.0, 2.0, 3.0]
