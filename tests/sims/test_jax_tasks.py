"""The JAX engine's device data (sims/jax_tasks.py) against the numba generator (make_batch): the
same distributions, tested by Monte Carlo with each estimate's own error bar, and the top-k target
checked by brute force on the generator's own inputs. One small shape per task (d = 3, P = 7)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm

pytest.importorskip("jax", reason="the JAX engine needs JAX (pip install 'depthscale[jax]')")
pytest.importorskip("optax", reason="the JAX engine needs optax (pip install 'depthscale[jax]')")

import jax  # noqa: E402

from depthscale.sims.config import TaskConfig  # noqa: E402
from depthscale.sims.jax_engine import x64  # noqa: E402  (the engine's float64 scope)
from depthscale.sims.jax_tasks import DataSpec, contexts, data_key  # noqa: E402
from depthscale.sims.tasks import make_batch  # noqa: E402

D, P, N = 3, 7, 20_000
LEVEL = 1e-3  # the family-wise level of each test's z-tests (Bonferroni over its statistics)
# a non-flat spectrum, so that a rotation that is not Haar would show in the moments
TASKS = [TaskConfig(task=t, k=2, d=D, P=P, a=1.0, b=0.5, c_lambda=2.0) for t in ("topk", "easy-exact", "easy-fresh")]


def _jax_batch(task: TaskConfig, n: int, seed: int = 0) -> dict:
    fn = jax.jit(contexts, static_argnums=(0, 1))
    with x64():  # float64, as inside the engine's own calls
        return {k: np.asarray(v) for k, v in fn(DataSpec.of(task), n, jax.numpy.asarray(data_key(task, seed))).items()}


def _numba_batch(task: TaskConfig, n: int, seed: int = 0) -> dict:
    b = make_batch(task, n, np.random.default_rng(seed))
    return {f: getattr(b, f) for f in ("X", "y", "x_test", "target", "t", "beta", "O", "sel")}


def _statistics(b: dict) -> dict[str, np.ndarray]:
    """Per-context statistics (each column's mean is a moment of the generator)."""
    X, y, xq, target, beta = b["X"], b["y"], b["x_test"], b["target"], b["beta"]
    iu = np.triu_indices(D)
    x0 = X[:, 0, :]
    return {
        "x mean": X.mean(axis=1),
        "x second moments": np.einsum("bpi,bpj->bij", X, X)[:, iu[0], iu[1]] / P,
        "x fourth moments": (X**4).mean(axis=1),  # a rotation that is not Haar moves these
        "|x0|^2 |x1|^2": (x0**2).sum(axis=1, keepdims=True) * (X[:, 1, :] ** 2).sum(axis=1, keepdims=True),
        "beta second moments": np.einsum("bi,bj->bij", beta, beta)[:, iu[0], iu[1]],
        "y second moments": np.stack([y[:, 0] ** 2, y[:, 0] * y[:, 1]], axis=1),
        "query second moments": np.einsum("bi,bj->bij", xq, xq)[:, iu[0], iu[1]],
        "target moments": np.stack([target, target**2, target * y[:, 0], target * (xq * beta).sum(axis=1)], axis=1),
        "target - t.beta": (target - (b["t"] * beta).sum(axis=1))[:, None],
        "selected token": (b["sel"][:, :1] == np.arange(P)) if b["sel"].shape[1] else np.zeros((len(y), 1)),
    }


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.task)
def test_device_contexts_have_the_numba_generators_moments(task):
    a, b = _statistics(_jax_batch(task, N)), _statistics(_numba_batch(task, N))
    z = []
    for name in a:
        sa, sb = a[name].reshape(N, -1).astype(np.float64), b[name].reshape(N, -1).astype(np.float64)
        se = np.sqrt(sa.var(axis=0, ddof=1) / N + sb.var(axis=0, ddof=1) / N)
        diff = sa.mean(axis=0) - sb.mean(axis=0)
        z += [(name, i, abs(dv) / s) for i, (dv, s) in enumerate(zip(diff, se)) if s > 0 or dv != 0]
    crit = norm.isf(LEVEL / (2 * len(z)))  # two-sided, Bonferroni over every statistic
    worst = max(z, key=lambda t: t[2])
    assert worst[2] < crit, f"{worst}: |z| above {crit:.2f} (level {LEVEL} over {len(z)} statistics)"


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.task)
def test_device_contexts_are_their_own_definition(task):
    # brute force on the generator's own inputs: rotations orthogonal, labels beta . x, and the targets
    b = _jax_batch(task, 500, seed=3)
    X, y, xq, O = b["X"], b["y"], b["x_test"], b["O"]
    assert np.allclose(np.einsum("bji,bjk->bik", O, O), np.eye(D), atol=1e-12)
    assert np.allclose(y, np.einsum("bpi,bi->bp", X, b["beta"]), atol=1e-12)
    if task.task == "easy-exact":
        j = b["sel"][:, 0]
        assert np.array_equal(xq, X[np.arange(500), j]) and np.array_equal(b["target"], y[np.arange(500), j])
    elif task.task == "easy-fresh":
        assert np.allclose(b["target"], (b["beta"] * xq).sum(axis=1), atol=1e-12) and b["sel"].shape == (500, 0)
    else:
        _check_topk(X, y, xq, b["sel"], b["target"], task.k)


def _check_topk(X, y, xq, sel, target, k):
    # cosine similarity without the query's norm (common to all tokens), as make_batch's docstring says
    cos = np.einsum("bpi,bi->bp", X, xq) / np.sqrt(np.einsum("bpi,bpi->bp", X, X))
    want = np.argsort(-cos, axis=1, kind="stable")[:, :k]  # decreasing similarity, ties to the lower index
    assert np.array_equal(sel, want)
    assert np.allclose(target, np.take_along_axis(y, want, axis=1).mean(axis=1), atol=1e-12)


def test_topk_ties_go_to_the_lower_index():
    # d = 1: every cosine is exactly +-1 (sign(x) sign(x_test)), so the top-k is decided by ties alone
    task = TaskConfig(task="topk", k=3, d=1, P=P)
    b = _jax_batch(task, 200)
    cos = np.sign(b["X"][:, :, 0]) * np.sign(b["x_test"])
    want = np.argsort(-cos, axis=1, kind="stable")[:, :3]
    assert np.array_equal(b["sel"], want)
    assert np.allclose(b["target"], np.take_along_axis(b["y"], want, axis=1).mean(axis=1), atol=1e-12)


def test_a_batch_is_a_function_of_its_key():
    task = TASKS[0]
    a, b, c = _jax_batch(task, 4, seed=1), _jax_batch(task, 4, seed=1), _jax_batch(task, 4, seed=2)
    assert np.array_equal(a["X"], b["X"]) and not np.array_equal(a["X"], c["X"])
