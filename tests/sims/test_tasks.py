"""Statistical and exact checks of the task contexts against independent references."""

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from depthscale.sims.config import TaskConfig
from depthscale.sims.tasks import eval_batches, make_batch, standard_normal

Z5 = 5.0  # z-score bound for Monte Carlo comparisons (each test compares a handful of statistics)


@pytest.mark.parametrize("k", [1, 9, 16])
def test_topk_selection_both_code_paths(k):
    # k <= 8 uses partial scans, larger k a sort: both must agree with numpy's argsort
    task = TaskConfig(task="topk", k=k, d=5, P=40)
    b = make_batch(task, 200, np.random.default_rng(k))
    cos = np.einsum("bpd,bd->bp", b.X, b.x_test) / np.linalg.norm(b.X, axis=2)
    np.testing.assert_array_equal(b.sel, np.argsort(-cos, axis=1)[:, :k])


@pytest.fixture(scope="module")
def big():
    """2000 contexts of a power-law top-k task (shared by the statistical tests)."""
    task = TaskConfig(task="topk", k=3, a=1.0, b=0.5, d=8, P=32, c_lambda=2.0, c_omega=0.7)
    return task, make_batch(task, 2000, np.random.default_rng(123))


def _mean_se(v, axis=0):
    return v.mean(axis=axis), v.std(axis=axis, ddof=1) / np.sqrt(v.shape[axis])


def test_standard_normal_distribution():
    z = standard_normal(np.random.default_rng(5), 2_000_000)
    assert stats.kstest(z, "norm").pvalue > 1e-4
    m, se = _mean_se(z)
    assert abs(m) < Z5 * se
    m2, se2 = _mean_se(z**2)
    assert abs(m2 - 1) < Z5 * se2
    m4, se4 = _mean_se(z**4)
    assert abs(m4 - 3) < Z5 * se4
    # the tail beyond the ziggurat's base edge r (handled by the slow path) has the right mass
    r = 3.6541528853610088
    p = 2 * stats.norm.sf(r)
    frac = np.mean(np.abs(z) > r)
    assert abs(frac - p) < Z5 * np.sqrt(p * (1 - p) / z.size)
    # and the far tail too
    p6 = 2 * stats.norm.sf(4.5)
    assert abs(np.mean(np.abs(z) > 4.5) - p6) < Z5 * np.sqrt(p6 / z.size)


def test_input_covariance_in_the_eigenbasis(big):
    task, b = big
    w = np.einsum("bji,bpj->bpi", b.O, b.X).reshape(-1, task.d)  # O^T x for every token
    second = w[:, :, None] * w[:, None, :]
    m, se = _mean_se(second.reshape(w.shape[0], -1))
    expect = np.diag(task.lam).ravel()
    assert np.all(np.abs(m - expect) < Z5 * se)
    # averaged over rotations the input covariance is isotropic with trace tr(Sigma)
    xx = (b.X[:, :, :, None] * b.X[:, :, None, :]).reshape(-1, task.d**2)
    # tokens of one context share O: use per-context means as the i.i.d. samples
    per_ctx = xx.reshape(len(b), task.P, -1).mean(axis=1)
    m, se = _mean_se(per_ctx)
    expect = (task.lam.sum() / task.d) * np.eye(task.d).ravel()
    assert np.all(np.abs(m - expect) < Z5 * se)


def test_teacher_covariance_and_labels(big):
    task, b = big
    g = np.einsum("bji,bj->bi", b.O, b.beta)
    second = (g[:, :, None] * g[:, None, :]).reshape(len(b), -1)
    m, se = _mean_se(second)
    assert np.all(np.abs(m - np.diag(task.omega).ravel()) < Z5 * se)
    np.testing.assert_allclose(b.y, np.einsum("bpd,bd->bp", b.X, b.beta), rtol=0, atol=1e-12)
    np.testing.assert_allclose(b.target, np.einsum("bd,bd->b", b.beta, b.t), rtol=0, atol=1e-12)
    # E[y^2] = tr(Sigma Omega) = sum lam omega
    m, se = _mean_se((b.y**2).mean(axis=1))
    assert abs(m - np.sum(task.lam * task.omega)) < Z5 * se


def test_rotation_is_haar(big):
    task, b = big
    d = task.d
    np.testing.assert_allclose(np.einsum("bij,bik->bjk", b.O, b.O), np.broadcast_to(np.eye(d), b.O.shape), atol=1e-13)
    o11 = b.O[:, 0, 0]
    m, se = _mean_se(o11**2)
    assert abs(m - 1 / d) < Z5 * se
    m, se = _mean_se(o11**4)
    assert abs(m - 3 / (d * (d + 2))) < Z5 * se
    # uniform on the sphere: (O_11 + 1)/2 ~ Beta((d-1)/2, (d-1)/2); a missing sign fix of QR would
    # make the diagonal one-signed and fail this
    assert stats.kstest((o11 + 1) / 2, stats.beta((d - 1) / 2, (d - 1) / 2).cdf).pvalue > 1e-4
    diag = np.einsum("bii->bi", b.O)
    m, se = _mean_se(diag)
    assert np.all(np.abs(m) < Z5 * se)
    # moments of the trace under the Haar measure on O(d) (Diaconis-Shahshahani; exact for d = 8):
    # E tr O = 0, E (tr O)^2 = 1,
    # E (tr O)^4 = 3 (the trace is asymptotically standard normal); this checks the whole matrix
    tr = diag.sum(axis=1)
    for p, expect in ((1, 0.0), (2, 1.0), (4, 3.0)):
        m, se = _mean_se(tr**p)
        assert abs(m - expect) < Z5 * se


def test_topk_target_matches_bruteforce_argsort(big):
    task, b = big
    cos = np.einsum("bpd,bd->bp", b.X, b.x_test) / (
        np.linalg.norm(b.X, axis=2) * np.linalg.norm(b.x_test, axis=1)[:, None]
    )
    order = np.argsort(-cos, axis=1)[:, : task.k]
    np.testing.assert_array_equal(b.sel, order)
    rows = np.arange(len(b))[:, None]
    np.testing.assert_allclose(b.target, b.y[rows, order].mean(axis=1), atol=1e-12)
    np.testing.assert_allclose(b.t, b.X[rows, order].mean(axis=1), atol=1e-12)
    # the query is a fresh draw: E[(O^T x_test)_k^2] = lam_k
    w = np.einsum("bji,bj->bi", b.O, b.x_test)
    m, se = _mean_se(w**2)
    assert np.all(np.abs(m - task.lam) < Z5 * se)


def test_easy_exact_and_fresh_targets():
    task = TaskConfig(task="easy-exact", d=6, P=20)
    b = make_batch(task, 4000, np.random.default_rng(7))
    j = b.sel[:, 0]
    rows = np.arange(len(b))
    np.testing.assert_array_equal(b.x_test, b.X[rows, j])
    np.testing.assert_array_equal(b.target, b.y[rows, j])
    np.testing.assert_array_equal(b.t, b.x_test)
    counts = np.bincount(j, minlength=task.P)
    assert stats.chisquare(counts).pvalue > 1e-4
    fresh = make_batch(TaskConfig(task="easy-fresh", d=6, P=20), 50, np.random.default_rng(7))
    assert fresh.sel.shape == (50, 0)
    np.testing.assert_allclose(fresh.target, np.einsum("bd,bd->b", fresh.beta, fresh.x_test), atol=1e-12)
    assert not np.any(np.all(np.isclose(fresh.X, fresh.x_test[:, None, :]), axis=2))


def test_determinism_and_dtype():
    task = TaskConfig(task="topk", k=2, d=5, P=16)
    a = make_batch(task, 30, np.random.default_rng(11))
    b = make_batch(task, 30, np.random.default_rng(11))
    c = make_batch(task, 30, np.random.default_rng(12))
    for f in ("X", "y", "x_test", "target", "t", "beta", "O", "sel"):
        np.testing.assert_array_equal(getattr(a, f), getattr(b, f))
    assert not np.allclose(a.X, c.X)
    f32 = make_batch(task, 30, np.random.default_rng(11), dtype=np.float32)
    assert f32.X.dtype == np.float32 and f32.O.dtype == np.float32
    np.testing.assert_allclose(f32.X, a.X, rtol=1e-6, atol=1e-6)


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs two numba threads")
def test_thread_count_does_not_change_numbers():
    task = TaskConfig(task="topk", k=2, d=5, P=16)
    a = make_batch(task, 40, np.random.default_rng(3), threads=1)
    b = make_batch(task, 40, np.random.default_rng(3), threads=2)
    np.testing.assert_array_equal(a.X, b.X)
    np.testing.assert_array_equal(a.target, b.target)


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs two numba threads")
def test_standard_normal_does_not_depend_on_threads_or_length():
    # counter-based: number j is the same whatever the thread count and the length asked for
    a = standard_normal(np.random.default_rng(8), 50_001, threads=1)
    b = standard_normal(np.random.default_rng(8), 50_001, threads=2)
    c = standard_normal(np.random.default_rng(8), 1_000)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a[:1_000], c)


def test_eval_contexts_depend_only_on_task_and_seed():
    task = TaskConfig(task="topk", k=2, d=4, P=8)
    one = np.concatenate([b.target for b in eval_batches(task, 700, seed=3, chunk=1024)])
    many = [b.target for b in eval_batches(task, 700, seed=3, chunk=97)]
    assert max(len(m) for m in many) == 97 and sum(len(m) for m in many) == 700
    np.testing.assert_array_equal(one, np.concatenate(many))
    prefix = np.concatenate([b.target for b in eval_batches(task, 300, seed=3, chunk=64)])
    np.testing.assert_array_equal(prefix, one[:300])
    other = np.concatenate([b.target for b in eval_batches(task, 300, seed=4)])
    assert not np.allclose(other, one[:300])


@settings(deadline=None, max_examples=25)
@given(
    d=st.integers(1, 7),
    P=st.integers(1, 12),
    kind=st.sampled_from(["easy-exact", "easy-fresh", "topk"]),
    kfrac=st.floats(0, 1),
    seed=st.integers(0, 2**32),
)
def test_invariants_any_shape(d, P, kind, kfrac, seed):
    k = 1 + int(kfrac * (P - 1))
    task = TaskConfig(task=kind, k=k, d=d, P=P, a=0.5, b=1.5)
    b = make_batch(task, 3, np.random.default_rng(seed))
    np.testing.assert_allclose(np.einsum("bij,bik->bjk", b.O, b.O), np.broadcast_to(np.eye(d), (3, d, d)), atol=1e-12)
    np.testing.assert_allclose(b.y, np.einsum("bpd,bd->bp", b.X, b.beta), atol=1e-12)
    np.testing.assert_allclose(b.target, np.einsum("bd,bd->b", b.beta, b.t), atol=1e-12)
    assert b.sel.shape == (3, {"easy-exact": 1, "easy-fresh": 0, "topk": k}[kind])
    assert np.all((b.sel >= 0) & (b.sel < P))
    if kind == "topk" and d > 1:  # at d = 1 every cosine is +-1: the top-k set is a tie
        cos = np.einsum("bpd,bd->bp", b.X, b.x_test) / np.linalg.norm(b.X, axis=2)
        np.testing.assert_array_equal(np.sort(b.sel, axis=1), np.sort(np.argsort(-cos, axis=1)[:, :k], axis=1))


def test_bad_input_raises():
    task = TaskConfig(d=4, P=8)
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="n=0"):
        make_batch(task, 0, rng)
    with pytest.raises(ValueError, match="dtype"):
        make_batch(task, 2, rng, dtype=np.int32)
    with pytest.raises(ValueError, match="rng"):
        make_batch(task, 2, 0)
    with pytest.raises(ValueError, match="task"):
        make_batch({"d": 4}, 2, rng)
    with pytest.raises(ValueError, match="chunk"):
        eval_batches(task, 10, 0, chunk=0)
    with pytest.raises(ValueError, match="seed"):
        eval_batches(task, 10, -1)


@pytest.mark.slow
def test_standard_normal_fine_histogram_and_tails():
    # 4e7 draws: a 400-bin chi-square against exact normal bin masses, and tail masses up to 5.5 sigma
    rng = np.random.default_rng(77)
    edges = np.concatenate([[-np.inf], np.linspace(-5, 5, 399), [np.inf]])
    counts = np.zeros(edges.size - 1)
    tails = {3.0: 0, 4.0: 0, 5.0: 0, 5.5: 0}
    n = 0
    for _ in range(20):
        z = standard_normal(rng, 2_000_000)
        counts += np.histogram(z, edges)[0]
        for c in tails:
            tails[c] += int(np.sum(np.abs(z) > c))
        n += z.size
    expected = n * np.diff(stats.norm.cdf(edges))
    assert stats.chisquare(counts, expected).pvalue > 1e-4
    for c, hits in tails.items():
        p = 2 * stats.norm.sf(c)
        assert abs(hits / n - p) < Z5 * np.sqrt(p * (1 - p) / n)
