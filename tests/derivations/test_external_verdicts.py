"""A model trained elsewhere, through to verdicts: synthetic per-layer predictions of 3 seeds at depths
1..32 go through depthscale.from_layer_outputs, a results store and check_prediction's generic
claims, and the inverse-depth verdicts are right (pass for i.i.d. layer errors, fail for a
disagreement that grows with depth)."""

from __future__ import annotations

import numpy as np
import pytest

import depthscale
from depthscale.derivations.check import check_prediction
from depthscale.sims.config import ModelConfig, RunConfig, TaskConfig, TrainConfig
from depthscale.sims.store import Store

TASK = TaskConfig(task="topk", k=2, d=8, P=32)
DEPTHS = (1, 2, 4, 8, 16, 32)
SEEDS = (0, 1, 2)
N = 4000  # evaluation contexts per run
A, C = 1.0, 0.2  # one layer's error power and the error power the layers share


def _layer_outputs(kind: str, L: int, seed: int):
    """Per-layer predictions: shared error (power C) plus each layer's own (power A - C, times
    sqrt(L) when the disagreement grows): R_L = C + (A - C)/L, or C + (A - C)/sqrt(L)."""
    rng = np.random.default_rng([seed, L, kind == "growing"])
    target = rng.standard_normal(N)
    own = (A - C) * (np.sqrt(L) if kind == "growing" else 1.0)
    err = np.sqrt(C) * rng.standard_normal((N, 1)) + np.sqrt(own) * rng.standard_normal((N, L))
    return target[:, None] + err, target


@pytest.fixture(scope="module", params=["iid", "growing"])
def store(request, tmp_path_factory):
    path = tmp_path_factory.mktemp("external") / f"{request.param}.sqlite"
    with Store(path, mode="write") as st:
        for seed in SEEDS:
            for L in DEPTHS:
                f, target = _layer_outputs(request.param, L, seed)
                cfg = RunConfig(TASK, ModelConfig(depth=L), TrainConfig(steps=100))
                st.put(depthscale.from_layer_outputs(f, target, cfg, seed))
    return request.param, path


def test_the_stored_losses_follow_the_constructed_law(store):
    kind, path = store
    with Store(path, mode="read") as st:
        records = list(st.records())
    assert len(records) == len(DEPTHS) * len(SEEDS)
    for rec in records:  # the law the data were built with, independently of any fit
        L = rec["config"]["model"]["depth"]
        expected = C + (A - C) / (L if kind == "iid" else np.sqrt(L))
        assert abs(rec["final_loss"] - expected) < 0.1 * expected


def test_the_inverse_depth_verdict_is_right(store):
    kind, path = store
    check = check_prediction(path, claim="inverse-depth")
    alpha = check.fit.params["alpha"]
    if kind == "iid":  # R_L = C + (A - C)/L: the offset law with alpha 1
        assert check.result.verdict == "pass", (check.result.reason, alpha)
        assert abs(alpha - 1.0) < 0.2
    else:  # the disagreement grows as sqrt(L): alpha 1/2, outside [0.8, 1.2]
        assert check.result.verdict == "fail", (check.result.reason, alpha)
        assert abs(alpha - 0.5) < 0.2


def test_the_clt_identity_holds_for_both(store):
    _, path = store
    assert check_prediction(path, claim="clt-identity").result.verdict == "pass"
