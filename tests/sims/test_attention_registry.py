"""The registry of attention maps: one record per map, codes derived from it, no fall-through."""

from __future__ import annotations

import subprocess
import sys
from importlib import metadata

import numpy as np
import pytest

from depthscale.sims import attention_maps, attention_registry
from depthscale.sims.attention_registry import (
    BUILTIN_NAMES,
    attention_code,
    attention_names,
    get_attention,
    map_of_code,
    register_attention,
    unregister_attention,
)
from depthscale.sims.config import ModelConfig, RunConfig, config_hash, run_key
from depthscale.theory._choices import ATTENTIONS as CHOICE_NAMES


def test_builtins_match_the_kernels_constants_and_the_choice_list():
    # the kernels' constants are the registry's codes, and the codes are distinct and dense
    consts = [getattr(attention_maps, n.upper()) for n in BUILTIN_NAMES]
    assert consts == [get_attention(n).code for n in BUILTIN_NAMES] == list(range(len(BUILTIN_NAMES)))
    assert attention_maps.ATTENTIONS == BUILTIN_NAMES == CHOICE_NAMES
    assert attention_maps.NORMALISED == ("softmax", "sparsemax", "entmax15")
    assert [map_of_code(c).name for c in range(len(BUILTIN_NAMES))] == list(BUILTIN_NAMES)


@pytest.mark.parametrize("bad", ["softmax2", "", None, 3, "Softmax"])
def test_unknown_name_is_one_line_everywhere(bad):
    for call in (get_attention, attention_code, lambda n: ModelConfig(attention=n)):
        with pytest.raises(ValueError) as exc:
            call(bad)
        assert str(exc.value).startswith("attention=") and "\n" not in str(exc.value)


@pytest.mark.parametrize("code", [-1, 5, 99, True, 1.0])
def test_unknown_code_is_an_error(code):
    with pytest.raises(ValueError, match="^code="):
        map_of_code(code)


def test_unknown_code_in_the_kernels_gives_nan_not_raw_scores():
    # the kernels had no else: an unknown code left the raw scores as weights (or ran relu). The
    # Python entry points refuse the code first (above); the kernels give NaN, which training reports
    # as a non-finite loss (a raise inside them would stop numba running their callers in parallel)
    from depthscale.sims.attention_maps import sparse_back
    from depthscale.sims.softmax_kernels import _attend
    from depthscale.sims.temperature_heads import _map_head_outputs

    z = np.array([0.3, -0.2, 0.5])
    dz = np.empty(3)
    sparse_back(7, np.full(3, 1 / 3), z, dz, 1.0)
    assert np.all(np.isnan(dz))
    w = z.copy()
    _attend(w, np.empty(3, np.int64), 7)
    assert np.all(np.isnan(w))
    out = np.zeros((1, 1))
    _map_head_outputs(z[None], z[None], np.array([1.0]), 7, out)
    assert np.isnan(out[0, 0])


def test_a_users_map_registers_and_refuses_the_numba_engine():
    def half(z):
        return 0.5 * np.ones_like(z) / z.shape[-1]

    try:
        m = register_attention("half-uniform", half)
        assert m.engines == ("jax",) and m.code is None and not m.normalised
        assert "half-uniform" in attention_names()
        assert ModelConfig(attention="half-uniform", engine="jax").attention == "half-uniform"
        with pytest.raises(ValueError, match=r"^engine='numba': must be jax for attention='half-uniform'"):
            ModelConfig(attention="half-uniform")
        with pytest.raises(ValueError, match="^engine="):
            attention_code("half-uniform")
    finally:
        unregister_attention("half-uniform")
    with pytest.raises(ValueError, match="^attention="):
        ModelConfig(attention="half-uniform", engine="jax")


@pytest.mark.parametrize(
    "name, fn, normalised, match",
    [
        ("softmax", np.exp, False, "^name='softmax': must be not a built-in"),
        ("Bad Name", np.exp, False, "^name="),
        ("ok", 3, False, "^fn=3"),
        ("ok", np.exp, 1, "^normalised=1"),
    ],
)
def test_register_refuses_bad_input(name, fn, normalised, match):
    with pytest.raises(ValueError, match=match):
        register_attention(name, fn, normalised=normalised)


def test_engine_is_validated_and_left_out_of_the_hash_at_its_default():
    with pytest.raises(ValueError, match="^engine='torch': must be one of numba, jax"):
        ModelConfig(engine="torch")
    cfg = RunConfig()
    d = cfg.to_dict()
    assert d["model"]["engine"] == "numba"
    del d["model"]["engine"]  # a record written before the field existed: same key
    assert config_hash(d) == config_hash(cfg)
    jax_cfg = RunConfig(model=ModelConfig(engine="jax"))
    assert run_key(jax_cfg, 0) != run_key(cfg, 0)  # a JAX run is another record
    # the key of the default run is the one stores held before engines existed
    assert config_hash(cfg) == "0569276e9d465f3abed9c3dc"  # computed at the commit before engines


class _EP:
    def __init__(self, name, value, obj):
        self.name, self.value, self._obj = name, value, obj

    def load(self):
        return self._obj


def test_entry_point_maps_are_read_on_first_lookup(monkeypatch):
    def plus_one(z):
        e = np.exp(z)
        return e / (1.0 + e.sum(axis=-1, keepdims=True))

    eps = [_EP("softmax1-test", "fakepkg.maps:plus_one", plus_one)]
    monkeypatch.setattr(metadata, "entry_points", lambda group=None: eps if group == "depthscale.attention" else [])
    attention_registry.reload_attention_entry_points()
    try:
        m = get_attention("softmax1-test")
        assert m.source == "entry point fakepkg.maps:plus_one" and m.jax_fn is plus_one
        assert ModelConfig(attention="softmax1-test", engine="jax").engine == "jax"
    finally:
        monkeypatch.undo()
        attention_registry.reload_attention_entry_points()
    with pytest.raises(ValueError, match="^attention="):
        get_attention("softmax1-test")


def test_entry_point_of_the_wrong_kind_names_the_line(monkeypatch, capsys):
    # left out with one warning line; asking for it names the line and why (tests/sims/test_broken_plugins.py)
    eps = [_EP("broken", "fakepkg:NUMBER", 3)]
    monkeypatch.setattr(metadata, "entry_points", lambda group=None: eps if group == "depthscale.attention" else [])
    attention_registry.reload_attention_entry_points()
    try:
        with pytest.raises(
            ValueError, match=r"^attention='broken': .*left out \(broken = 'fakepkg:NUMBER': names a int"
        ):
            get_attention("broken")
        assert capsys.readouterr().err.count("\n") == 1
    finally:
        monkeypatch.undo()
        attention_registry.reload_attention_entry_points()


def test_registry_import_loads_neither_numba_nor_jax():
    code = (
        "import sys; import depthscale.sims.attention_registry, depthscale.sims.config; "
        "print(sorted(m for m in ('numba', 'jax') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_runs_of_the_jax_engine_are_their_own_condition():
    from depthscale.derivations.analysis.curve import variant_name

    assert variant_name({"qk": "factorised"}) == "base"  # records without the field: numba
    assert variant_name({"engine": "numba", "attention": "relu"}) == "relu"
    assert variant_name({"engine": "jax"}) == "jax"
    assert variant_name({"engine": "jax", "attention": "softmax1"}) == "softmax1+jax"


@pytest.mark.parametrize(
    "model, activations", [("softmax", 3 * (8 * 4 + 3 * 2 * 8 + 2 * 4) * 8), ("linear", 3 * (16 + 2 * 2 * 4 * 4) * 8)]
)
def test_the_memory_estimate_counts_the_jax_engines_activations_and_block(model, activations):
    from depthscale.sims.config import TaskConfig, TrainConfig
    from depthscale.sims.memory import memory_bytes

    cfg = RunConfig(TaskConfig(d=4, P=8, k=2), ModelConfig(model=model, depth=2), TrainConfig(batch=3, steps=10))
    jax_cfg = RunConfig(cfg.task, ModelConfig(model=model, depth=2, engine="jax"), cfg.train)
    per_context = 8 * 4 + 4 * 4 + 8 + 4 * 4 + 1 + 2  # X, O, y, x_test t beta, target, sel
    block = 2 * 10 * 3 * per_context * 8  # ten steps of batch 3 (under 32 steps and 32 MiB), host and device
    assert memory_bytes(jax_cfg) - memory_bytes(cfg) == activations + block


@pytest.mark.parametrize("command", ["simulate", "reproduce"])
def test_the_cli_refuses_an_unknown_engine_in_one_line_before_any_work(command, tmp_path, capsys):
    from depthscale.derivations.cli.app import main

    out = tmp_path / "out"
    argv = (
        ["simulate", "--steps", "1"] if command == "simulate" else ["reproduce", "--preset", "smoke", "--out", str(out)]
    )
    assert main([*argv, "--engine", "torch"]) == 2
    err = capsys.readouterr().err
    assert "engine='torch': must be one of numba, jax" in err and err.count("\n") == 1
    assert not out.exists()
