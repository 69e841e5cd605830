"""Checks of sims.measure against brute-force computations on a tiny fake model."""

import numpy as np
import pytest

from depthscale.sims.config import TaskConfig
from depthscale.sims.measure import evaluate
from depthscale.sims.tasks import eval_batches


class FakeHeads:
    """L temperature heads on cosine similarity, each with its own gain: f_l = g_l p_l . y.

    Linear in the labels (c = mean_l g_l p_l) with softmax attention rows, like the real models.
    """

    def __init__(self, kappas, gains):
        self.kappas = np.asarray(kappas, float)
        self.gains = np.asarray(gains, float)

    def _p(self, b):
        xn = b.X / np.linalg.norm(b.X, axis=2, keepdims=True)
        qn = b.x_test / np.linalg.norm(b.x_test, axis=1, keepdims=True)
        cos = np.einsum("bpd,bd->bp", xn, qn)
        z = self.kappas[None, :, None] * cos[:, None, :]
        z -= z.max(axis=2, keepdims=True)
        p = np.exp(z)
        return p / p.sum(axis=2, keepdims=True)

    def layer_outputs(self, theta, b):
        return self.gains[None, :] * np.einsum("blp,bp->bl", self._p(b), b.y)

    def label_weights(self, theta, b):
        return np.einsum("l,blp->bp", self.gains, self._p(b)) / len(self.gains)

    def attention(self, theta, b):
        return self._p(b)

    def qk_norms(self, theta):
        return np.abs(self.kappas) * 3.0


class FakeLinear(FakeHeads):
    """Same predictions, but reports raw signed scores and no label weights (like a non-linear-in-y model)."""

    cfg = type("Cfg", (), {"model": "linear"})()

    def attention(self, theta, b):
        return np.einsum("bpd,bd->bp", b.X, b.x_test)[:, None, :].repeat(len(self.kappas), axis=1)

    def label_weights(self, theta, b):
        return None


TASK = TaskConfig(task="topk", k=2, a=0.5, b=1.0, d=6, P=24)
MODEL = FakeHeads([0.5, 3.0, 8.0], [1.1, 0.9, 1.3])


@pytest.fixture(scope="module")
def ev():
    return evaluate(MODEL, None, TASK, 600, seed=4, chunk=256)


@pytest.fixture(scope="module")
def data():
    bs = list(eval_batches(TASK, 600, seed=4, chunk=600))
    assert len(bs) == 1
    return bs[0]


def test_loss_and_identity_against_bruteforce(ev, data):
    f = MODEL.layer_outputs(None, data)
    L = f.shape[1]
    yhat = np.einsum("bp,bp->b", MODEL.label_weights(None, data), data.y)  # a different route to yhat
    sq = (yhat - data.target) ** 2
    np.testing.assert_allclose(ev["sq_err"], sq, rtol=1e-10, atol=1e-14)
    assert ev["final_loss"] == pytest.approx(sq.mean(), rel=1e-10)
    assert ev["final_loss_se"] == pytest.approx(sq.std(ddof=1) / np.sqrt(sq.size), rel=1e-10)
    e = f - data.target[:, None]
    layer = [float(np.mean(e[:, l] ** 2)) for l in range(L)]
    np.testing.assert_allclose(ev["layer_losses"], layer, rtol=1e-10)
    cross = [np.mean(e[:, l] * e[:, m]) for l in range(L) for m in range(L) if l != m]
    assert ev["A_L"] == pytest.approx(np.mean(layer), rel=1e-10)
    assert ev["C_L"] == pytest.approx(np.mean(cross), rel=1e-10)
    assert ev["gap"] == pytest.approx(np.mean(layer) - np.mean(cross), rel=1e-10)
    # the identity, and the gap as the spread of the layers around the ensemble (aggregation model M0, docs/theory/clt.md)
    assert abs(ev["final_loss"] - ev["C_L"] - ev["gap"] / L) <= 1e-10 * ev["final_loss"]
    assert ev["identity_residual"] < 1e-10
    spread = np.mean(np.sum((f - f.mean(axis=1, keepdims=True)) ** 2, axis=1)) / (L - 1)
    assert ev["gap"] == pytest.approx(spread, rel=1e-9)
    assert ev["target_power"] == pytest.approx(np.mean(data.target**2), rel=1e-12)
    assert ev["n_contexts"] == 600


def test_mode_losses_sum_to_beta_averaged_loss(ev, data):
    # Monte Carlo over the teacher for the same inputs: beta' ~ N(0, O diag(omega) O^T)
    rng = np.random.default_rng(99)
    c = MODEL.label_weights(None, data)
    R = 400
    g = rng.standard_normal((len(data), R, TASK.d)) * np.sqrt(TASK.omega)
    betas = np.einsum("bij,brj->bri", data.O, g)
    yhat = np.einsum("bp,bpd,brd->br", c, data.X, betas)
    tgt = np.einsum("bd,brd->br", data.t, betas)
    loss = (yhat - tgt) ** 2
    mc = loss.mean()
    se = np.sqrt(np.sum(loss.var(axis=1, ddof=1) / R)) / len(data)
    assert abs(sum(ev["mode_losses"]) - mc) < 5 * se
    # mode by mode: a teacher along one eigenvector only
    for kk in (0, TASK.d - 1):
        z = rng.standard_normal((len(data), R))
        bk = data.O[:, :, kk][:, None, :] * (np.sqrt(TASK.omega[kk]) * z)[:, :, None]
        lk = (np.einsum("bp,bpd,brd->br", c, data.X, bk) - np.einsum("bd,brd->br", data.t, bk)) ** 2
        sek = np.sqrt(np.sum(lk.var(axis=1, ddof=1) / R)) / len(data)
        assert abs(ev["mode_losses"][kk] - lk.mean()) < 5 * sek


def test_attention_diagnostics_against_bruteforce(ev, data):
    a = MODEL.attention(None, data)
    np.testing.assert_allclose(ev["top1_mass"], a.max(axis=2).mean(axis=0), rtol=1e-10)
    top2 = np.array([[np.sum(sorted(row)[-TASK.k :]) for row in ctx] for ctx in a])
    np.testing.assert_allclose(ev["topk_mass"], top2.mean(axis=0), rtol=1e-10)
    np.testing.assert_allclose(ev["entropy"], (-(a * np.log(a)).sum(axis=2)).mean(axis=0), rtol=1e-10)
    mass = np.array([[a[b, l, data.sel[b]].sum() for l in range(a.shape[1])] for b in range(len(data))])
    np.testing.assert_allclose(ev["target_mass"], mass.mean(axis=0), rtol=1e-10)
    err = 1 - mass.mean(axis=1)
    for q in (50, 90, 99):
        assert ev["selection_error_pct"][str(q)] == pytest.approx(np.percentile(err, q), rel=1e-10)
    np.testing.assert_allclose(ev["qk_norm"], MODEL.qk_norms(None))


def test_results_do_not_depend_on_chunk(ev):
    other = evaluate(MODEL, None, TASK, 600, seed=4, chunk=1000)
    np.testing.assert_allclose(other["sq_err"], ev["sq_err"], rtol=1e-12, atol=1e-15)
    assert other["mode_losses"] == pytest.approx(ev["mode_losses"], rel=1e-10)
    assert other["selection_error_pct"] == pytest.approx(ev["selection_error_pct"], rel=1e-12)


def test_exact_selection_on_easy_task():
    task = TaskConfig(task="easy-exact", d=6, P=24)
    r = evaluate(FakeHeads([2000.0], [1.0]), None, task, 300, seed=0)
    assert r["final_loss"] < 1e-12 * r["target_power"]
    assert min(r["top1_mass"]) > 1 - 1e-9 and r["selection_error_pct"]["99"] < 1e-9
    assert np.isnan(r["C_L"]) and r["identity_residual"] < 1e-12


def test_undefined_diagnostics_are_none():
    r = evaluate(FakeLinear([1.0, 2.0], [1.0, 1.0]), None, TASK, 50, seed=1)
    for key in ("mode_losses", "top1_mass", "topk_mass", "entropy", "target_mass", "selection_error_pct"):
        assert r[key] is None
    fresh = evaluate(MODEL, None, TaskConfig(task="easy-fresh", d=6, P=24), 50, seed=1)
    assert fresh["target_mass"] is None and fresh["selection_error_pct"] is None
    assert fresh["top1_mass"] is not None


def test_bad_input_raises():
    with pytest.raises(ValueError, match="n_contexts"):
        evaluate(MODEL, None, TASK, 1, seed=0)
    with pytest.raises(ValueError, match="chunk"):
        evaluate(MODEL, None, TASK, 10, seed=0, chunk=0)
    with pytest.raises(ValueError, match="k=0"):
        evaluate(MODEL, None, TASK, 10, seed=0, k=0)
    with pytest.raises(ValueError, match="task"):
        evaluate(MODEL, None, "topk", 10, seed=0)


def test_real_softmax_model_identity_and_modes():
    pytest.importorskip("depthscale.sims.softmax_model")
    from depthscale.sims.config import ModelConfig
    from depthscale.sims.models import make_model

    task = TaskConfig(task="topk", k=2, d=4, P=16)
    model = make_model(ModelConfig(model="softmax", depth=3, init_scale=2.0), task.d)
    theta = model.init(np.random.default_rng(0))
    r = evaluate(model, theta, task, 400, seed=2, chunk=128)
    assert r["identity_residual"] < 1e-10
    b = next(iter(eval_batches(task, 400, seed=2, chunk=400)))
    sq = (model.predict(theta, b) - b.target) ** 2
    assert r["final_loss"] == pytest.approx(sq.mean(), rel=1e-10)
    # mode losses: beta-averaged loss of yhat = c . y for the model's own label weights
    c = model.label_weights(theta, b)
    delta = b.t - np.einsum("bp,bpd->bd", c, b.X)
    Omega = np.einsum("bik,k,bjk->bij", b.O, task.omega, b.O)
    assert sum(r["mode_losses"]) == pytest.approx(np.mean(np.einsum("bi,bij,bj->b", delta, Omega, delta)), rel=1e-10)
    assert all(0 < m <= 1 for m in r["top1_mass"])
