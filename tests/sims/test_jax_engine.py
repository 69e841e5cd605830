"""The JAX engine against the numba engine: the same parameters and batch give the same loss and
gradient (float64, 1e-10 relative) for every built-in map and variant, and training ends alike.

One context shape (d = 3, P = 7, batch 5, L = 3) throughout: JAX compiles each new shape once."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

pytest.importorskip("jax", reason="the JAX engine needs JAX (pip install 'depthscale[jax]')")
pytest.importorskip("optax", reason="the JAX engine needs optax (pip install 'depthscale[jax]')")

from depthscale.sims import jax_engine  # noqa: E402
from depthscale.sims.attention_registry import BUILTIN_NAMES, register_attention, unregister_attention  # noqa: E402
from depthscale.sims.config import ModelConfig, RunConfig, TaskConfig, TrainConfig  # noqa: E402
from depthscale.sims.models import make_model  # noqa: E402
from depthscale.sims.tasks import make_batch  # noqa: E402

D, P, B, L = 3, 7, 5, 3
TASK = TaskConfig(task="topk", k=2, d=D, P=P)
RTOL = 1e-10
MAX_DIFF: dict[str, float] = {}  # the largest relative differences seen (printed by the last test)

VARIANTS = [
    *(ModelConfig(depth=L, attention=a) for a in BUILTIN_NAMES),
    ModelConfig(depth=L, value="per-layer"),
    ModelConfig(depth=L, qk="merged", attention="sparsemax"),
    ModelConfig(depth=L, qk="tied", attention="entmax15"),
    ModelConfig(depth=L, qk="temperature"),
    ModelConfig(model="linear", depth=L),
    ModelConfig(model="linear", depth=L, value="per-layer", qk="merged"),
    ModelConfig(model="linear", depth=L, qk="tied"),
    ModelConfig(model="linear", depth=L, qk="temperature"),
]


def _label(cfg: ModelConfig) -> str:
    return f"{cfg.model}-{cfg.attention}-{cfg.qk}-{cfg.value}"


def _setup(cfg: ModelConfig, seed: int = 0):
    numba_model = make_model(cfg, D)
    jax_model = make_model(dataclasses.replace(cfg, engine="jax"), D)
    rng = np.random.default_rng(seed)
    theta = numba_model.init(rng)
    theta = theta + 0.4 * rng.standard_normal(theta.size)  # away from the gentle start: sparse supports vary
    batch = make_batch(TASK, B, np.random.default_rng(seed + 1))
    return numba_model, jax_model, theta, batch


def _rel(a, b) -> float:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


@pytest.mark.parametrize("cfg", VARIANTS, ids=_label)
def test_loss_gradient_and_outputs_match_the_numba_engine(cfg):
    numba_model, jax_model, theta, batch = _setup(cfg)
    assert jax_model.n_params == numba_model.n_params and jax_model.names() == numba_model.names()
    loss_n, grad_n = numba_model.loss_and_grad(theta, batch)
    loss_j, grad_j = jax_model.loss_and_grad(theta, batch)
    rl, rg = abs(loss_j - loss_n) / loss_n, _rel(grad_j, grad_n)
    MAX_DIFF[_label(cfg)] = max(rl, rg)
    assert rl < RTOL and rg < RTOL, (rl, rg)
    assert np.linalg.norm(grad_n) > 1e-3  # a gradient that can disagree
    assert _rel(jax_model.layer_outputs(theta, batch), numba_model.layer_outputs(theta, batch)) < RTOL
    assert _rel(jax_model.label_weights(theta, batch), numba_model.label_weights(theta, batch)) < RTOL
    assert _rel(jax_model.attention(theta, batch), numba_model.attention(theta, batch)) < RTOL


def test_the_jax_gradient_is_the_finite_difference_of_its_loss():
    # independent of the numba engine: central differences of the JAX loss along a random direction
    _, jax_model, theta, batch = _setup(ModelConfig(depth=L, attention="entmax15"), seed=3)
    _, grad = jax_model.loss_and_grad(theta, batch)
    v = np.random.default_rng(5).standard_normal(theta.size)
    h = 1e-6
    fd = (jax_model.loss_and_grad(theta + h * v, batch)[0] - jax_model.loss_and_grad(theta - h * v, batch)[0]) / (2 * h)
    assert abs(fd - grad @ v) < 1e-6 * max(abs(fd), 1.0)


def test_a_users_map_runs_on_jax_and_differs_from_softmax():
    jnp = pytest.importorskip("jax.numpy")

    def softmax1(z):  # softmax plus one: exp(z_i) / (1 + sum_j exp(z_j))
        m = jnp.maximum(jnp.max(z, axis=-1, keepdims=True), 0.0)
        e = jnp.exp(z - m)
        return e / (jnp.exp(-m) + e.sum(axis=-1, keepdims=True))

    register_attention("softmax1-t", softmax1)
    try:
        cfg = ModelConfig(depth=L, attention="softmax1-t", engine="jax")
        with pytest.raises(ValueError, match="^engine='numba'"):
            dataclasses.replace(cfg, engine="numba")
        _, soft, theta, batch = _setup(ModelConfig(depth=L))
        model = make_model(cfg, D)
        w, w_soft = model.attention(theta, batch), soft.attention(theta, batch)
        # softmax1's weights are softmax's scaled by sum(e) / (1 + sum(e)) < 1
        z = np.exp(np.log(w_soft))  # positive
        assert np.all(w.sum(axis=-1) < 1) and np.allclose(w / w.sum(axis=-1, keepdims=True), z, atol=1e-12)
        # its heads for the reference floors come from its JAX function
        from depthscale.sims.temperature_heads import head_outputs

        cos = np.array([[0.5, -0.2, 0.1]])
        y = np.array([[1.0, 2.0, 3.0]])
        e = np.exp(2.0 * cos[0])
        assert np.allclose(head_outputs(cos, y, [2.0], attention="softmax1-t")[0, 0], e @ y[0] / (1 + e.sum()))
    finally:
        unregister_attention("softmax1-t")


def test_training_on_both_engines_ends_within_paired_errors():
    from depthscale.sims.runner import run

    tr = TrainConfig(steps=40, batch=B, lr=1e-2, eval_contexts=64, window=5, schedule="constant", checkpoints_from=10)
    cfg = RunConfig(TASK, ModelConfig(depth=L), tr)
    rec_n = run(cfg, 0)
    rec_j = run(dataclasses.replace(cfg, model=ModelConfig(depth=L, engine="jax")), 0)
    assert rec_j["config"]["model"]["engine"] == "jax" and rec_j["key"] != rec_n["key"]
    assert set(rec_j) == set(rec_n)  # one schema
    assert rec_j["status"] == rec_n["status"] == "ok"
    assert rec_j["steps"] == rec_n["steps"] and rec_j["converged"] == rec_n["converged"]
    assert [c["step"] for c in rec_j["checkpoints"]] == [c["step"] for c in rec_n["checkpoints"]]
    # the same start and rules, batches of the same distribution (the JAX run's made on the device):
    # the two end within their paired error on the shared evaluation contexts
    e_n = np.asarray(rec_n["arrays"]["sq_err"], np.float64)
    e_j = np.asarray(rec_j["arrays"]["sq_err"], np.float64)
    diff = e_j - e_n
    se = diff.std(ddof=1) / np.sqrt(diff.size)
    assert abs(diff.mean()) <= 2 * se
    assert rec_j["arrays"]["theta"].tolist() != rec_n["arrays"]["theta"].tolist()  # another data stream


def _train_both(cfg: RunConfig, seed: int, measure=None):
    """The numba trainer and the JAX trainer on the numba engine's own batches (data='host')."""
    from depthscale.sims import training

    jcfg = dataclasses.replace(cfg.model, engine="jax")
    (res_n,) = training.train_lockstep([(make_model(cfg.model, D), cfg.model)], TASK, cfg.train, seed, measure=measure)
    (res_j,) = jax_engine.train_lockstep(
        [(make_model(jcfg, D), jcfg)], TASK, cfg.train, seed, measure=measure, data="host"
    )
    return res_n, res_j


def test_on_the_same_batches_both_engines_train_to_the_same_parameters():
    tr = TrainConfig(steps=40, batch=B, lr=1e-2, eval_contexts=64, window=5, schedule="constant", checkpoints_from=10)
    res_n, res_j = _train_both(RunConfig(TASK, ModelConfig(depth=L), tr), 0, measure=lambda m, th: {"n": th.size})
    assert (res_j.status, res_j.steps, res_j.converged) == (res_n.status, res_n.steps, res_n.converged)
    assert [c["step"] for c in res_j.checkpoints] == [c["step"] for c in res_n.checkpoints]
    assert _rel(res_j.theta, res_n.theta) < 1e-6


def test_sgd_trains_to_the_same_parameters_on_both_engines():
    # the optimiser by name on both engines: the numba SGD class and optax.identity scaled by -lr
    tr = TrainConfig(steps=20, batch=B, lr=5e-2, eval_contexts=64, window=5, schedule="cosine", optimizer="sgd")
    res_n, res_j = _train_both(RunConfig(TASK, ModelConfig(depth=L), tr), 0)
    assert (res_j.status, res_j.steps) == (res_n.status, res_n.steps) == ("ok", 20)
    assert _rel(res_j.theta, res_n.theta) < 1e-6


def test_engine_info_names_the_device():
    info = jax_engine.engine_info()
    assert info["platform"] in ("cpu", "gpu", "cuda", "rocm", "tpu") and info["jax"]


def test_simulate_runs_a_map_from_a_packages_entry_point(monkeypatch, capsys):
    # a user's package declares [project.entry-points."depthscale.attention"] softmax1 = "pkg.maps:softmax1";
    # here the installed entry points are replaced by that one line (no package is installed)
    import json
    from importlib import metadata

    from depthscale.derivations.cli.app import main
    from depthscale.sims import attention_registry

    jnp = pytest.importorskip("jax.numpy")

    def softmax1(z):
        e = jnp.exp(z - jnp.max(z, axis=-1, keepdims=True))
        return e / (jnp.exp(-jnp.max(z, axis=-1, keepdims=True)) + e.sum(axis=-1, keepdims=True))

    class EntryPoint:
        name, value = "softmax1", "pkg.maps:softmax1"

        def load(self):
            return softmax1

    real = metadata.entry_points
    monkeypatch.setattr(
        metadata,
        "entry_points",
        lambda **kw: [EntryPoint()] if kw.get("group") == "depthscale.attention" else real(**kw),
    )
    attention_registry.reload_attention_entry_points()
    try:
        argv = ["simulate", "--attention", "softmax1", "--d", str(D), "--P", str(P), "--depth", str(L)]
        argv += ["--batch", str(B), "--steps", "6", "--window", "2", "--eval-contexts", "16", "--quiet", "--json"]
        assert main([*argv, "--engine", "jax", "--threads", "1"]) == 0
        rec = json.loads(capsys.readouterr().out)
        assert rec["status"] == "ok" and rec["config"]["model"]["attention"] == "softmax1"
        assert rec["config"]["model"]["engine"] == "jax"
        assert rec["floors"]["single"]["attention"] == "softmax1"  # its own heads' floors
        # the numba engine refuses it in one line (exit 2)
        assert main([*argv, "--threads", "1"]) == 2
        err = capsys.readouterr().err
        assert "engine='numba': must be jax for attention='softmax1'" in err and err.count("\n") == 1
    finally:
        monkeypatch.undo()
        attention_registry.reload_attention_entry_points()


def test_sweep_with_engine_jax_fills_a_store_that_reads_back(tmp_path, capsys):
    from depthscale.derivations.analysis.curve import curves
    from depthscale.derivations.cli.app import main
    from depthscale.sims.store import Store

    grid = tmp_path / "grid.toml"
    grid.write_text(
        f"seeds = [0]\n[task]\ntask = 'topk'\nk = 2\nd = {D}\nP = {P}\n[model]\ndepth = [1, {L}]\n"
        f"[train]\nsteps = 6\nbatch = {B}\neval_contexts = 16\nwindow = 2\n"
    )
    store = tmp_path / "runs.sqlite"
    argv = ["sweep", str(grid), "--store", str(store), "--executor", "serial", "--quiet", "--json"]
    assert main([*argv, "--engine", "jax"]) == 0
    capsys.readouterr()
    with Store(store, mode="read") as st:
        recs = list(st.records())
    assert len(recs) == 2 and all(r["status"] == "ok" and r["config"]["model"]["engine"] == "jax" for r in recs)
    (curve,) = curves(recs)
    assert curve.key.variant == "jax" and sorted(curve.depths) == [1, L]
    assert main([*argv, "--engine", "torch"]) == 2
    assert "engine='torch': must be one of numba, jax" in capsys.readouterr().err


def test_float32_on_the_jax_engine_is_close_to_float64():
    cfg = ModelConfig(depth=L, attention="sparsemax")
    _, j64, theta, batch = _setup(cfg)
    j32 = make_model(dataclasses.replace(cfg, engine="jax", dtype="float32"), D)
    l64, g64 = j64.loss_and_grad(theta, batch)
    l32, g32 = j32.loss_and_grad(theta, batch)
    assert g32.dtype == np.float32 and abs(l32 - l64) < 1e-5 * l64 and _rel(g32, g64) < 1e-4


def test_every_engine_keeps_the_engine_contract():
    from depthscale.sims.models import AttentionModel

    for cfg in (ModelConfig(depth=L), ModelConfig(model="linear", depth=L)):
        for engine in ("numba", "jax"):
            assert isinstance(make_model(dataclasses.replace(cfg, engine=engine), D), AttentionModel)
    assert not isinstance(object(), AttentionModel)


def test_simulate_finds_a_map_in_an_installed_packages_metadata(tmp_path):
    # a package on the path with its dist-info (as pip leaves it): entry point read in a fresh process
    import os
    import subprocess
    import sys

    (tmp_path / "mymaps").mkdir()
    (tmp_path / "mymaps" / "__init__.py").write_text(
        "import jax.numpy as jnp\n\n\ndef softmax1(z):\n"
        "    m = jnp.maximum(jnp.max(z, axis=-1, keepdims=True), 0.0)\n    e = jnp.exp(z - m)\n"
        "    return e / (jnp.exp(-m) + e.sum(axis=-1, keepdims=True))\n"
    )
    info = tmp_path / "mymaps-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: mymaps\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[depthscale.attention]\nsoftmax1 = mymaps:softmax1\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    cmd = [sys.executable, "-m", "depthscale.derivations.cli.app", "simulate", "--engine", "jax"]
    cmd += ["--attention", "softmax1", "--d", str(D), "--P", str(P), "--depth", str(L), "--batch", str(B)]
    cmd += ["--steps", "4", "--window", "2", "--eval-contexts", "16", "--quiet", "--threads", "1"]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "status: ok" in out.stdout


@pytest.mark.parametrize(
    "changes",
    [
        {"schedule": "plateau", "window": 3, "tol": 0.5},  # halvings inside the scan blocks, then a stop
        {"schedule": "cosine", "warmup": 5},
        {"lr": 10.0, "schedule": "constant", "divergence_factor": 1.5},  # a divergence within a block
    ],
    ids=["plateau", "cosine-warmup", "diverges"],
)
def test_the_jax_trainer_stops_and_schedules_as_the_numba_one(changes):
    # on the numba engine's own batches (data="host"), so every step's loss is comparable
    base = {"steps": 40, "batch": B, "lr": 1e-2, "eval_contexts": 64, "window": 5, "schedule": "constant"}
    res_n, res_j = _train_both(RunConfig(TASK, ModelConfig(depth=L), TrainConfig(**{**base, **changes})), 1)
    for field in ("status", "reason", "steps", "converged"):
        assert getattr(res_j, field) == getattr(res_n, field), field
    assert [s for s, _ in res_j.curve] == [s for s, _ in res_n.curve]
    assert np.allclose([v for _, v in res_j.curve], [v for _, v in res_n.curve], rtol=1e-6)


# ------------------------------------------------------------------------------------------------
# the process's JAX settings (x64, the compilation cache), each in a fresh process: the settings are
# process-wide and JAX reads some of them once
_TINY_TRAINING = (
    "import numpy as np\n"
    "from depthscale.sims import jax_engine\n"
    "from depthscale.sims.config import ModelConfig, TaskConfig, TrainConfig\n"
    "from depthscale.sims.tasks import make_batch\n"
    f"task = TaskConfig(task='topk', k=2, d={D}, P={P})\n"
    "mcfg = ModelConfig(model='linear', depth=2, engine='jax')\n"
    f"cfg = TrainConfig(steps=4, batch={B}, lr=1e-2, eval_contexts=16, window=2)\n"
    "model = jax_engine.JaxModel(mcfg, task.d)\n"
    "(res,) = jax_engine.train_lockstep([(model, mcfg)], task, cfg, 0)\n"
    f"_, grad = model.loss_and_grad(res.theta, make_batch(task, {B}, np.random.default_rng(1)))\n"
)


def _fresh_process(code: str, env: dict) -> list[str]:
    """The words ``code`` prints, run by a new interpreter with ``env`` added to this one's environment
    (numba's cache folder included: the kernels load, not compile)."""
    import os
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, **env}, timeout=600
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout.split()


# a fresh process each (about 30 s of JAX start-up and compiling here): the flag on is opt-in
@pytest.mark.parametrize("before", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_importing_and_training_on_the_jax_engine_leaves_x64_as_it_was(before, tmp_path):
    code = (
        f"import jax\njax.config.update('jax_enable_x64', {before})\nbefore = jax.config.jax_enable_x64\n"
        f"{_TINY_TRAINING}"
        "print(before, jax.config.jax_enable_x64, res.status, res.steps, grad.dtype, jax.numpy.zeros(1).dtype,\n"
        "      jax.config.jax_compilation_cache_dir)\n"
    )
    # with the engine's cache switched off, the cache setting too stays as it was
    words = _fresh_process(code, {"DEPTHSCALE_JAX_CACHE": "0", "XDG_CACHE_HOME": str(tmp_path)})
    outside = "float64" if before else "float32"  # the process's own default dtype, unchanged
    # trained in float64 inside the engine's scope, whatever the process's flag
    assert words == [str(before), str(before), "ok", "4", "float64", outside, "None"]
    assert not list(tmp_path.glob("depthscale/*/jax"))


@pytest.mark.slow  # two fresh processes compiling (about 40 s here)
def test_a_second_process_loads_the_engines_programs_from_the_cache(tmp_path):
    from importlib.metadata import version

    code = f"{_TINY_TRAINING}import hashlib, jax\n"
    code += "print(jax.config.jax_compilation_cache_dir, hashlib.sha256(res.theta.tobytes()).hexdigest())\n"
    env = {"XDG_CACHE_HOME": str(tmp_path), "DEPTHSCALE_JAX_CACHE": "1"}
    folder = tmp_path / "depthscale" / version("depthscale") / "jax"  # beside numba's cache, by version
    first = _fresh_process(code, env)
    written = sorted(p.name for p in folder.iterdir())
    second = _fresh_process(code, env)
    # the first process wrote every program it compiled (the fast ones too); the second compiled
    # nothing new, and its programs, loaded from the cache, trained to the same bits
    assert first[0] == second[0] == str(folder)
    assert len(written) >= 2 and any(name.startswith("jit__block_device") for name in written)
    assert sorted(p.name for p in folder.iterdir()) == written
    assert first[1] == second[1]


@pytest.mark.slow  # a fresh process compiling (about 30 s here)
def test_a_users_own_jax_cache_setting_is_kept(tmp_path):
    mine = tmp_path / "mine"
    code = f"{_TINY_TRAINING}import jax\nprint(jax.config.jax_compilation_cache_dir)\n"
    env = {
        "XDG_CACHE_HOME": str(tmp_path),
        "JAX_COMPILATION_CACHE_DIR": str(mine),
        "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",  # the user's threshold: every program
    }
    assert _fresh_process(code, env) == [str(mine)]
    assert any(p.name.startswith("jit__block_device") for p in mine.iterdir())
    assert not list(tmp_path.glob("depthscale/*/jax"))  # nothing in the engine's default folder


@pytest.mark.parametrize("value", ["maybe", "2", " of"])
def test_a_bad_cache_switch_is_one_error_naming_it(value, monkeypatch, capsys):
    from depthscale.derivations.cli.app import main

    assert jax_engine.cache_switch(" Off ") is False and jax_engine.cache_switch("") is True
    expected = f"DEPTHSCALE_JAX_CACHE={value!r}: must be 1 or 0 (on, off; unset is on)"
    with pytest.raises(ValueError) as info:
        jax_engine.cache_switch(value)
    assert str(info.value) == expected
    # read at the engine's first use in a process: here as if this process had not used it yet
    monkeypatch.setenv("DEPTHSCALE_JAX_CACHE", value)
    monkeypatch.setitem(jax_engine._cache, "configured", False)
    argv = ["simulate", "--engine", "jax", "--d", str(D), "--P", str(P), "--depth", str(L), "--batch", str(B)]
    assert main([*argv, "--steps", "4", "--window", "2", "--eval-contexts", "16", "--quiet", "--threads", "1"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == f"depthscale: error: {expected}\n"
    assert jax_engine._cache["configured"] is False  # nothing was configured


def test_an_unwritable_cache_folder_is_one_warning_and_no_cache(tmp_path, monkeypatch, capsys):
    import jax

    (tmp_path / "file").write_text("")  # a folder inside a file cannot be created, even by root
    monkeypatch.setattr(jax_engine, "jax_cache_dir", lambda: tmp_path / "file" / "jax")
    monkeypatch.setitem(jax_engine._cache, "configured", False)  # as if this process had not used the engine
    monkeypatch.delenv("JAX_COMPILATION_CACHE_DIR", raising=False)
    monkeypatch.delenv("DEPTHSCALE_JAX_CACHE", raising=False)
    before = jax.config.jax_compilation_cache_dir
    jax.config.update("jax_compilation_cache_dir", None)
    try:
        assert jax_engine.configure_cache() is None
        assert jax.config.jax_compilation_cache_dir is None
    finally:
        jax.config.update("jax_compilation_cache_dir", before)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("depthscale: warning: the JAX cache folder")
    assert err.endswith("cannot be written; JAX programs are compiled without a cache\n")
