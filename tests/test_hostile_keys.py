"""Hostile cases of issue 50 on run keys, curves and the size of a request, each with its reproduction:

- configurations equal as numbers (a float field given as an int, an int field as a float, -0.0,
  NumPy's scalars) get one key, while every run of the committed stores keeps its stored key;
- ``curves`` refuses two runs in one (curve, depth, seed) cell loudly instead of keeping one by key order;
- ``infer-scale`` refuses a (d, P) grid beyond its cap before it reads or computes anything.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

from depthscale.derivations.analysis.curve import curves
from depthscale.derivations.analysis.scale_match import MAX_SCALES
from depthscale.derivations.cli.app import main
from depthscale.sims.config import RunConfig, TaskConfig, TrainConfig, config_hash, run_key
from depthscale.sims.runner import EXTERNAL_PREFIX
from depthscale.sims.store import Store

RESULTS = Path(__file__).resolve().parents[1] / "results"


def _config(**task) -> dict:
    return {
        "task": {"task": "topk", "k": 2, "a": 0.0, "b": 0.0, "d": 4, "P": 16, **task},
        "model": {"model": "softmax", "depth": 2},
        "train": {"steps": 10, "eval_contexts": 64, "lr": 0.003},
    }


def test_configs_equal_as_numbers_get_one_key():
    base = config_hash(_config())
    assert config_hash(_config(a=0)) == base  # a float field given as an int (as TOML or JSON may)
    assert config_hash(_config(a=-0.0)) == base
    assert config_hash(_config(d=4.0, P=np.int64(16))) == base  # int fields as a float, as NumPy's int
    assert config_hash(_config(a=np.float64(0.0))) == base
    one = _config()
    one["train"]["lr"] = 3e-3
    assert config_hash(one) == base
    assert config_hash(_config(a=1)) == config_hash(_config(a=1.0)) != base
    assert run_key(RunConfig(task=TaskConfig(a=-0.0)), 0) == run_key(RunConfig(), 0)
    assert run_key(RunConfig(train=TrainConfig(lr=0.003)), 1) == run_key(RunConfig(), 1)
    assert config_hash(_config(k=3)) != base  # what differs still differs


@pytest.mark.parametrize("path", sorted(RESULTS.glob("*.sqlite")), ids=lambda p: p.name)
def test_every_committed_run_keeps_its_key(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with Store(path) as st:  # read-only: nothing beside the store is created or changed
            rows = st._conn.execute("SELECT key, config, seed FROM runs").fetchall()
    assert rows
    for key, text, seed in rows:
        cfg = json.loads(text)
        if key.startswith(EXTERNAL_PREFIX):  # an external prediction's key hashes its config dict
            assert key == f"{EXTERNAL_PREFIX}{config_hash(cfg)}-{seed}"
            continue
        assert key == run_key(RunConfig.from_dict(cfg), seed) == f"{config_hash(cfg)}-{seed}", key


def _record(key: str, depth: int, seed: int, a) -> dict:
    cfg = _config(a=a)
    cfg["model"]["depth"] = depth
    return {"key": key, "seed": seed, "status": "ok", "converged": True, "final_loss": 1.0 / depth, "config": cfg}


def test_curves_refuse_two_runs_in_one_cell():
    # 1 and 1.0: one condition; stored apart under two keys, curves kept one of them by key order
    recs = [_record(f"int{L}-0", L, 0, 1) for L in (1, 2, 4)] + [_record("float2-0", 2, 0, 1.0)]
    with pytest.raises(ValueError) as info:
        curves(recs)
    text = str(info.value)
    assert "\n" not in text and text.startswith("records: 1 (curve, depth, seed) cell(s) hold two runs")
    assert "depth 2 seed 0 (keys 'int2-0', 'float2-0')" in text
    recs[-1]["seed"] = 1  # another seed: a second row of the same curve
    (c,) = curves(recs)
    assert c.seeds == [0, 1]
    assert len(curves(recs + [dict(recs[0])])) == 1  # one run read twice (two stores hold it): the same run


def test_infer_scale_refuses_a_grid_beyond_its_cap(tmp_path, capsys):
    many = ",".join(str(i) for i in range(1, 501))
    assert main(["infer-scale", "--floors", str(tmp_path / "absent.csv"), "--d", many, "--P", many]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert f"d, P=500 x 500: must give at most {MAX_SCALES} (d, P) scales together (here 250000" in err, err
    assert list(tmp_path.iterdir()) == []
