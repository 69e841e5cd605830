"""The engine's hand-derived gradients against PyTorch autograd (where torch is installed).

The reference is ``benchmarks/torch_models.py``: the same models written with batched tensor
operations, differentiated by autograd. Agreement of the per-layer outputs shows the PyTorch model
is the same maths (so the benchmark compares like with like); agreement of the gradients to 1e-9
relative in float64 checks every backward kernel of the engine.
"""

from __future__ import annotations

import importlib.util
import itertools
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from depthscale.sims.config import ModelConfig, TaskConfig  # noqa: E402
from depthscale.sims.models import make_model  # noqa: E402
from depthscale.sims.tasks import make_batch  # noqa: E402

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "torch_models.py"
_spec = importlib.util.spec_from_file_location("depthscale_bench_torch_models", _PATH)
tm = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tm)

QKS = ("factorised", "merged", "tied", "temperature")
VALUES = ("shared", "per-layer")
D, P, B, L = 3, 7, 5, 3

CASES = [("linear", qk, v, {}) for qk, v in itertools.product(QKS, VALUES)]
CASES += [
    ("softmax", qk, v, extra)
    for qk, v, extra in itertools.product(QKS, VALUES, ({}, {"context_update": True}, {"stream": "single"}))
]
# the other attention nonlinearities (base layer only); torch_models writes sparsemax and 1.5-entmax
# with the sorted support search, independently of the engine's sort-free thresholds
CASES += [
    ("softmax", qk, "per-layer", {"attention": a})
    for qk, a in itertools.product(("factorised", "temperature"), ("sparsemax", "entmax15", "sigmoid", "relu"))
]


def _ids(case):
    model, qk, v, extra = case
    return "-".join([model, qk, v] + [str(extra.get("attention", k)) for k in extra])


@pytest.fixture(scope="module")
def batch():
    return make_batch(TaskConfig(task="topk", k=2, d=D, P=P), B, np.random.default_rng(11))


def _setup(model, qk, value, extra, width, dtype="float64", seed=3):
    cfg = ModelConfig(model=model, depth=L, width=width, qk=qk, value=value, dtype=dtype, **extra)
    eng = make_model(cfg, D)
    rng = np.random.default_rng(seed)
    # move away from the initial point (W_v = I, m = 0, near-uniform attention) so every term is exercised
    theta = eng.init(rng).astype(np.float64) + 0.5 * rng.standard_normal(eng.n_params)
    return cfg, eng, theta


def _rel_err(a, b):
    return float(np.max(np.abs(np.asarray(a, np.float64) - b)) / np.max(np.abs(b)))


@pytest.mark.parametrize("width", [0, D + 2])
@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_gradients_match_autograd(case, width, batch):
    model, qk, value, extra = case
    cfg, eng, theta = _setup(model, qk, value, extra, width)
    ref = tm.TorchModel(cfg, D)
    assert [n for n, _ in ref.shapes] == eng.names()
    assert ref.n_params == eng.n_params
    # same maths: per-layer predictors agree
    f_ref = ref.layer_outputs(theta, batch)
    assert _rel_err(eng.layer_outputs(theta, batch), f_ref) < 1e-12
    loss_ref, g_ref = ref.loss_and_grad(theta, batch)
    loss, g = eng.loss_and_grad(theta, batch)
    assert abs(loss - loss_ref) <= 1e-12 * loss_ref
    assert np.all(np.isfinite(g_ref)) and np.max(np.abs(g_ref)) > 0
    # per parameter group, relative to that group's scale, so a small group cannot hide
    gp, rp = eng.unpack(g), ref.unpack(torch.from_numpy(g_ref))
    for name in eng.names():
        want = rp[name].numpy()
        scale = max(np.max(np.abs(want)), 1e-300)
        err = np.max(np.abs(gp[name] - want)) / scale
        assert err < 1e-9, f"{name}: relative error {err:.3g}"


@pytest.mark.parametrize("model", ["linear", "softmax"])
def test_float32_gradients_match_float64_autograd(model, batch):
    # float32 engine vs float64 autograd: agreement to float32 rounding (eps 1.2e-7) times a few
    # hundred operations in a chain
    cfg64, eng64, theta = _setup(model, "factorised", "shared", {}, 0)
    cfg32, eng32, _ = _setup(model, "factorised", "shared", {}, 0, dtype="float32")
    theta32 = theta.astype(np.float32)
    _, g_ref = tm.TorchModel(cfg64, D).loss_and_grad(theta32.astype(np.float64), batch)
    _, g = eng32.loss_and_grad(theta32, batch)
    assert g.dtype == np.float32
    assert _rel_err(g, g_ref) < 1e-4


def test_reference_detects_a_wrong_gradient(batch):
    # the comparison is sharp: a gradient of a slightly different model (one layer's score matrix
    # scaled by 1.001) is rejected at the tolerance used above
    cfg, eng, theta = _setup("softmax", "merged", "shared", {}, 0)
    ref = tm.TorchModel(cfg, D)
    th2 = theta.copy()
    ref.unpack(torch.from_numpy(th2))["B"][0] *= 1.001
    _, g_ref = ref.loss_and_grad(th2, batch)
    _, g = eng.loss_and_grad(theta, batch)
    assert _rel_err(g, g_ref) > 1e-9


def test_torch_trainer_step_is_adam(batch):
    # one step of the benchmark's trainer equals a hand-written bias-corrected Adam step on the
    # autograd gradient: lr * sign(g) (|g| >> eps) at t = 1
    cfg, eng, theta = _setup("linear", "factorised", "shared", {}, 0)
    ref = tm.TorchModel(cfg, D)
    _, g = ref.loss_and_grad(theta, batch)
    tr = tm.TorchTrainer(ref, theta, lr=1e-3)
    tr.step(*ref.tensors(batch))
    want = theta - 1e-3 * g / (np.abs(g) + 1e-8)
    np.testing.assert_allclose(tr.theta.detach().numpy(), want, rtol=0, atol=1e-12)
