"""A user's own question end to end (issue 48): a map, a model and a task of one's own, declared only
as entry points of a throwaway package, train through ``sweep``, are read by ``Store.records(where=...)``
and ``check --where``, and get generic claims, verdicts and figures in ``report``.

Slow (about 4 minutes here: the JAX engine compiles the map's and the model's depths in fresh processes).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from depthscale.sims.store import Store

pytestmark = pytest.mark.slow

PACKAGE = '''
"""A throwaway package: one attention map, one model and one task of a user's own."""

import numpy as np


def softmax1(z):  # softmax with a sink: the weights may sum to less than one
    import jax.numpy as jnp

    m = jnp.maximum(jnp.max(z, axis=-1, keepdims=True), 0.0)
    e = jnp.exp(z - m)
    return e / (jnp.exp(-m) + e.sum(axis=-1, keepdims=True))


class Ridge:  # per-layer linear read-outs of the label-weighted mean token
    @staticmethod
    def init(key, cfg, d):
        import jax

        return {"w": 0.1 * jax.random.normal(key, (cfg.depth, d))}

    @staticmethod
    def layer_outputs(params, X, y, x_test):
        import jax.numpy as jnp

        h = jnp.einsum("bpd,bp->bd", X, y) / X.shape[1]
        return jnp.einsum("bd,ld,bd->bl", h, params["w"], x_test) * X.shape[2]


class MeanLabel:  # the target is the mean label of the context
    @staticmethod
    def make_batch(cfg, n, rng):
        from depthscale.sims.batch import Batch

        d, P = cfg.d, cfg.P
        X = rng.standard_normal((n, P, d)) * np.sqrt(cfg.lam)
        beta = rng.standard_normal((n, d)) * np.sqrt(cfg.omega)
        y = np.einsum("bpd,bd->bp", X, beta)
        O = np.broadcast_to(np.eye(d), (n, d, d)).copy()
        sel = np.broadcast_to(np.arange(P), (n, P)).copy()
        x = rng.standard_normal((n, d)) * np.sqrt(cfg.lam)
        return Batch(X, y, x, y.mean(axis=1), X.mean(axis=1), beta, O, sel)

    @staticmethod
    def second_moment(cfg):
        return float(np.sum(cfg.lam * cfg.omega)) / cfg.P
'''

GRID = """
name = "own"
seeds = [0, 1, 2]
[train]
steps = 40
batch = 64
window = 10
lr = 1e-2
eval_contexts = 256
[task]
d = 4
P = 16
[[grid]]
name = "my map"
[grid.model]
attention = "softmax1"
engine = "jax"
depth = [1, 4, 32]
[[grid]]
name = "my model"
[grid.model]
model = "ridge"
engine = "jax"
depth = [1, 4, 32]
[[grid]]
name = "my task"
[grid.task]
task = "mean-label"
[grid.model]
depth = [1, 4, 32]
"""

WHERE = {"model.attention": "softmax1", "model.model": "ridge", "task.task": "mean-label"}


def test_a_map_a_model_and_a_task_of_ones_own_reach_the_report(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "myq").mkdir(parents=True)
    (pkg / "myq" / "__init__.py").write_text(textwrap.dedent(PACKAGE))
    info = pkg / "myq-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: myq\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[depthscale.attention]\nsoftmax1 = myq:softmax1\n\n[depthscale.models]\nridge = myq:Ridge\n\n"
        "[depthscale.tasks]\nmean-label = myq:MeanLabel\n"
    )
    (tmp_path / "grid.toml").write_text(GRID)
    env = {**os.environ, "PYTHONPATH": str(pkg)}

    def cli(*args):
        cmd = [sys.executable, "-m", "depthscale.derivations.cli.app", *args]
        out = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=900)
        assert out.returncode == 0, out.stderr[-2000:]
        return out.stdout

    cli("sweep", "grid.toml", "--store", "own.sqlite", "--workers", "2", "--quiet")
    store = str(tmp_path / "own.sqlite")
    sys.path.insert(0, str(pkg))  # this process reads the same entry points for Store.records(where=...)
    try:
        from depthscale.sims import attention_registry, model_registry, task_registry

        for reg in (attention_registry.REGISTRY, model_registry.REGISTRY, task_registry.REGISTRY):
            reg.reload()
        for field, name in WHERE.items():
            recs = list(Store(store).records(where={field: name}))
            assert len(recs) == 9 and all(r["status"] == "ok" for r in recs), field
    finally:
        sys.path.remove(str(pkg))
        for reg in (attention_registry.REGISTRY, model_registry.REGISTRY, task_registry.REGISTRY):
            reg.reload()
    for field, name in WHERE.items():
        text = cli(
            "check", "--store", store, "--where", f"{field}={name}", "--law", "offset", "--param", "alpha=0.8,1.2"
        )
        assert "my-prediction" in text and name.split("-")[0] in text
    cli("report", "--store", store, "--out", "rep", "--reference-contexts", "0", "--floor-contexts", "200")
    rows = json.loads((tmp_path / "rep" / "claims.json").read_text())
    mine = {(r["claim_id"], r["condition"]["label"]): r["verdict"] for r in rows if r["claim_id"].startswith("generic")}
    labels = {label for _, label in mine}
    for name in ("softmax1", "ridge", "mean-label"):
        assert any(name in label for label in labels), (name, labels)
    assert all(v in ("pass", "fail", "indicative") for v in mine.values())  # judged, never "not run"
    assert len(mine) == 6  # two generic claims per curve
    assert (tmp_path / "rep" / "figures" / "overview.png").stat().st_size > 1000
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "Left out: the claims of" in md and "generic-depth-helps" in md
