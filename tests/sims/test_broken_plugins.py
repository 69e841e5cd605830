"""A broken attention-map or model plugin beside healthy ones (issue 48, item 2): one warning line
naming the entry point and the error, the line left out, and every healthy plugin read after it
registered; asking for the broken name is a one-line error saying why. Studies, maps and models
read their entry points through one helper (sims/plugins.py).

The entry points are real ``importlib.metadata.EntryPoint`` lines: one names a module that raises
when imported (written to a temporary folder), the healthy ones name objects of this test module."""

from __future__ import annotations

import json
from importlib import metadata

import numpy as np
import pytest

from depthscale.sims import attention_registry, model_registry
from depthscale.sims.attention_registry import attention_names, get_attention
from depthscale.sims.config import ModelConfig
from depthscale.sims.model_registry import get_model, model_names


def healthy_map(z):
    """A map of a healthy plugin (plain NumPy is enough to register it)."""
    return np.exp(z) / (1.0 + np.exp(z).sum(axis=-1, keepdims=True))


class HealthyModel:
    """A model of a healthy plugin: one parameter, each layer predicting the mean label plus it."""

    @staticmethod
    def init(key, cfg, d):
        return {"w": np.zeros(1)}

    @staticmethod
    def layer_outputs(params, X, y, x_test):
        return np.repeat(y.mean(axis=1, keepdims=True) + params["w"][0], 2, axis=1)


HERE = __name__


def _lines(group: str, healthy: str) -> list[metadata.EntryPoint]:
    # sorted by name the broken line comes first: the healthy ones are read after it
    return [
        metadata.EntryPoint("a-broken", "boom_plugin_for_depthscale:THING", group),
        metadata.EntryPoint("b-healthy", f"{HERE}:{healthy}", group),
        metadata.EntryPoint("c-also-healthy", f"{HERE}:{healthy}", group),
    ]


@pytest.fixture
def plugins(monkeypatch, tmp_path):
    """Both groups hold a line whose module raises at import, then two healthy lines."""
    (tmp_path / "boom_plugin_for_depthscale.py").write_text("raise RuntimeError('boom at import')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    fake = {
        attention_registry.ENTRY_POINT_GROUP: _lines(attention_registry.ENTRY_POINT_GROUP, "healthy_map"),
        model_registry.ENTRY_POINT_GROUP: _lines(model_registry.ENTRY_POINT_GROUP, "HealthyModel"),
    }
    real = metadata.entry_points
    monkeypatch.setattr(metadata, "entry_points", lambda **kw: fake.get(kw.get("group")) or real(**kw))
    attention_registry.reload_attention_entry_points()
    model_registry.reload_model_entry_points()
    yield
    monkeypatch.undo()
    attention_registry.reload_attention_entry_points()
    model_registry.reload_model_entry_points()


WARNING = (
    "depthscale: warning: {kind} a-broken = 'boom_plugin_for_depthscale:THING' ({group}) "
    "left out: RuntimeError: boom at import"
)


@pytest.mark.parametrize(
    "kind, registry, names, get",
    [
        ("attention-map plugin", attention_registry, attention_names, get_attention),
        ("model plugin", model_registry, model_names, get_model),
    ],
)
def test_one_warning_and_the_healthy_plugins_after_it_register(plugins, capsys, kind, registry, names, get):
    got = names()
    assert got[-2:] == ("b-healthy", "c-also-healthy") and "a-broken" not in got
    assert get("b-healthy").source == f"entry point {HERE}:{'healthy_map' if 'map' in kind else 'HealthyModel'}"
    err = capsys.readouterr().err
    assert err == WARNING.format(kind=kind, group=registry.ENTRY_POINT_GROUP) + "\n"
    names()
    get("c-also-healthy")
    assert capsys.readouterr().err == ""  # read once: not warned again on every look-up
    with pytest.raises(ValueError) as info:
        get("a-broken")
    text = str(info.value)
    assert "left out" in text and "boom at import" in text and "\n" not in text
    assert text.startswith("attention='a-broken'" if "map" in kind else "model='a-broken'")


def test_configs_and_filters_of_the_healthy_plugins_work(plugins, tmp_path, capsys):
    from depthscale.derivations.cli.app import main
    from depthscale.sims.store import Store

    assert ModelConfig(attention="c-also-healthy", engine="jax").attention == "c-also-healthy"
    assert ModelConfig(model="b-healthy", engine="jax").model == "b-healthy"
    store = tmp_path / "s.sqlite"
    with Store(store, mode="write"):
        pass
    # a command that reads both registries: it runs, with the two warnings and nothing else on stderr
    code = main(["fit", "--store", str(store), "--model", "b-healthy", "--where", "model.attention=c-also-healthy"])
    out, err = capsys.readouterr()
    assert code == 0 and "no finished runs match" in out
    assert sorted(err.splitlines()) == sorted(
        WARNING.format(kind=k, group=g)
        for k, g in (
            ("attention-map plugin", attention_registry.ENTRY_POINT_GROUP),
            ("model plugin", model_registry.ENTRY_POINT_GROUP),
        )
    )
    assert main(["fit", "--store", str(store), "--model", "a-broken", "--json"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("depthscale: error: model='a-broken': must be a name that loads; its plugin was left out")
    assert "boom at import" in err and err.count("\n") == 1
    assert json.dumps(attention_registry.broken_attention_plugins()).count("boom at import") == 1
