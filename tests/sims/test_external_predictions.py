"""Records from a model trained elsewhere: per-layer predictions in, a run record out, that the
decomposition, the store and the depth fits take (depthscale.from_layer_outputs)."""

from __future__ import annotations

import numpy as np
import pytest

import depthscale
from depthscale.sims.config import ModelConfig, RunConfig, TaskConfig, TrainConfig
from depthscale.sims.runner import from_layer_outputs

TASK = TaskConfig(task="topk", k=2, d=8, P=32)
DEPTHS = (1, 2, 4, 8, 16)
N = 4000


def _config(L: int) -> RunConfig:
    return RunConfig(TASK, ModelConfig(depth=L), TrainConfig(steps=100))


def _records(kind: str, seeds=(0, 1, 2)) -> list:
    out = []
    for seed in seeds:
        for L in DEPTHS:
            rng = np.random.default_rng([seed, L])
            target = rng.standard_normal(N)
            if kind == "iid":  # independent layer errors: R_L = 1 / L
                err = rng.standard_normal((N, L))
            else:  # growing disagreement: independent errors of variance L, R_L = 1 at every depth
                err = np.sqrt(L) * rng.standard_normal((N, L))
            out.append(from_layer_outputs(target[:, None] + err, target, _config(L), seed))
    return out


def test_the_record_is_the_decomposition_of_the_predictions():
    rng = np.random.default_rng(3)
    target = rng.standard_normal(500)
    shared = 0.3 * rng.standard_normal(500)
    f = target[:, None] + shared[:, None] + 0.5 * rng.standard_normal((500, 4))
    rec = depthscale.from_layer_outputs(f, target, _config(4), seed=2)
    e = f - target[:, None]
    M = e.T @ e / 500  # layer-error second moments, computed here independently
    sq = (f.mean(axis=1) - target) ** 2
    # its own model ("external" unless named) and a key no trained run has (tests/sims/test_plugin_cases.py)
    assert rec["key"].startswith("external-") and rec["key"].endswith("-2") and rec["status"] == "ok"
    assert rec["config"]["model"]["model"] == "external"
    assert np.isclose(rec["final_loss"], sq.mean(), rtol=1e-12)
    assert np.isclose(rec["final_loss_se"], sq.std(ddof=1) / np.sqrt(500), rtol=1e-12)
    assert np.isclose(rec["A_L"], np.trace(M) / 4, rtol=1e-12)
    assert np.isclose(rec["C_L"], (M.sum() - np.trace(M)) / 12, rtol=1e-12)
    assert np.allclose(rec["layer_losses"], np.diag(M), rtol=1e-12)
    assert np.allclose(rec["arrays"]["sq_err"], sq, rtol=1e-6)


def test_records_go_through_the_store_and_the_fits(tmp_path):
    from depthscale.derivations.analysis.curve import curves
    from depthscale.sims.store import Store

    with Store(tmp_path / "ext.sqlite", mode="write") as st:
        for rec in _records("iid"):
            st.put(rec)
    with Store(tmp_path / "ext.sqlite", mode="read") as st:
        back = list(st.records())
    assert len(back) == len(DEPTHS) * 3
    (curve,) = curves(back)
    fit = curve.fit("power", n_boot=0)
    assert abs(fit.params["alpha"] - 1.0) < 0.05  # independent layer errors: the inverse-depth law
    assert all(abs(r["C_L"]) < 0.05 for r in back if r["config"]["model"]["depth"] > 1)


def test_growing_disagreement_is_no_inverse_depth_law():
    from depthscale.derivations.analysis.curve import curves

    (curve,) = curves(_records("growing", seeds=(0, 1)))
    fit = curve.fit("power", n_boot=0)
    assert abs(fit.params["alpha"]) < 0.1  # R_L flat: alpha near 0, far from 1


@pytest.mark.parametrize(
    "f, target, match",
    [
        (np.zeros((5, 3)), np.zeros(5), r"^f.shape=\(5, 3\): must be \(contexts, 4\)"),
        (np.zeros((5, 4)), np.zeros(6), r"^target.shape=\(6,\): must be \(5,\)"),
        (np.full((5, 4), np.nan), np.zeros(5), "^f='non-finite values': must be finite"),
    ],
)
def test_bad_predictions_are_one_line(f, target, match):
    with pytest.raises(ValueError, match=match):
        from_layer_outputs(f, target, _config(4), 0)
