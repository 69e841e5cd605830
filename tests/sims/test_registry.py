"""The one registry type (sims/registry.py): built-ins through the same call as a user's, the
name pattern, entry points read lazily on the first look-up of an unknown name, a broken line
warned once and left out while the healthy ones register, reload, one-line errors.

Each test builds its own ``Registry`` over a group of its own, so the package's registries are
untouched; the entry points are real ``importlib.metadata.EntryPoint`` lines naming objects of
this module or a module that raises when imported."""

from __future__ import annotations

from importlib import metadata

import pytest

from depthscale.sims import attention_registry, model_registry, task_registry
from depthscale.sims.registry import Registry

GROUP = "depthscale.test-numbers"
HALF = 0.5
HERE = __name__


def _number(ep, obj) -> float:
    if not isinstance(obj, float):
        raise ValueError(f"names a {type(obj).__name__}, not a float")
    return obj


def _registry() -> Registry[float]:
    reg = Registry[float]("number", "number", GROUP, _number, "register_number")
    reg.register("one", 1.0, builtin=True)
    return reg


@pytest.fixture
def lines(monkeypatch, tmp_path):
    """The group holds a line whose module raises at import, a healthy one, one of the wrong kind,
    one with a name outside the pattern and one shadowed by a built-in; reads are counted."""
    (tmp_path / "boom_numbers_for_depthscale.py").write_text("raise RuntimeError('boom at import')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    eps = [
        metadata.EntryPoint("a-broken", "boom_numbers_for_depthscale:X", GROUP),
        metadata.EntryPoint("half", f"{HERE}:HALF", GROUP),
        metadata.EntryPoint("name", f"{HERE}:GROUP", GROUP),
        metadata.EntryPoint("Upper", f"{HERE}:HALF", GROUP),
        metadata.EntryPoint("one", f"{HERE}:HALF", GROUP),
    ]
    reads = []
    real = metadata.entry_points

    def fake(**kw):
        if kw.get("group") == GROUP:
            reads.append(1)
            return eps
        return real(**kw)

    monkeypatch.setattr(metadata, "entry_points", fake)
    return reads


def test_builtins_and_users_share_one_call_and_one_order():
    reg = _registry()
    assert reg.register("two", 2.0) == 2.0 and reg.register("three", 3.0) == 3.0
    assert reg.register("two", 2.5) == 2.5  # a user's record is replaced
    assert reg.names() == ("one", "two", "three") and reg.builtin_names == ("one",)
    with pytest.raises(ValueError, match=r"^name='one': must be not a built-in number's name \(one\)$"):
        reg.register("one", 9.0)
    with pytest.raises(ValueError, match=r"^name='one': must be a user's number \(built-in numbers stay registered\)$"):
        reg.unregister("one")
    reg.unregister("three")
    assert reg.names() == ("one", "two")


@pytest.mark.parametrize("bad", ["Two", "", "2x", "a" * 41, "a b", None, 3])
def test_a_name_outside_the_pattern_is_refused(bad):
    with pytest.raises(ValueError, match=r"^name=.*: must be lower-case letters"):
        _registry().register(bad, 1.0)


@pytest.mark.parametrize("bad", ["nope", None, 3])
def test_an_unknown_name_is_one_line_naming_the_kind_the_names_and_where_others_come_from(bad):
    reg = _registry()
    with pytest.raises(ValueError) as info:
        reg.get(bad)
    assert str(info.value) == (
        f"number={bad!r}: must be one of one (or a number registered with depthscale.register_number or the "
        f"entry-point group {GROUP})"
    )


def test_entry_points_are_read_once_on_the_first_unknown_name(lines, capsys):
    reg = _registry()
    assert reg.get("one") == 1.0 and lines == []  # a registered name: the group is not read
    assert reg.get("half") == 0.5 and len(lines) == 1
    err = capsys.readouterr().err.splitlines()
    # one line each (in name order) for the bad name, the broken module and the wrong kind; the
    # shadowed line is skipped
    assert len(err) == 3 and all(x.startswith("depthscale: warning: number plugin ") for x in err)
    assert err[0].endswith(
        "left out: name='Upper': must be lower-case letters, digits, '_', '.' or '-', starting with a letter (<= 40)"
    )
    assert f"a-broken = 'boom_numbers_for_depthscale:X' ({GROUP}) left out: RuntimeError: boom at import" in err[1]
    assert err[2].endswith("left out: names a str, not a float")
    assert reg.names() == ("one", "half") and reg.get("one") == 1.0  # the built-in wins over its name's line
    assert sorted(reg.broken()) == ["Upper", "a-broken", "name"] and len(lines) == 1
    with pytest.raises(ValueError) as info:
        reg.get("a-broken")
    text = str(info.value)
    assert text.startswith("number='a-broken': must be a number that loads; its plugin was left out (a-broken = ")
    assert "boom at import" in text and "\n" not in text
    assert capsys.readouterr().err == ""  # warned once


def test_reload_reads_the_group_again_and_keeps_python_records(lines, capsys):
    reg = _registry()
    reg.register("seven", 7.0)
    assert reg.names() == ("one", "seven", "half")
    reg.register("half", 0.25)  # from Python now: reload leaves it
    reg.reload()
    assert reg.broken() and len(lines) == 2
    assert reg.names() == ("one", "seven", "half") and reg.get("half") == 0.25
    reg.unregister("half")
    reg.reload()
    assert reg.get("half") == 0.5 and reg.names() == ("one", "seven", "half")
    capsys.readouterr()


def test_the_packages_registries_are_this_type():
    regs = (attention_registry.REGISTRY, model_registry.REGISTRY, task_registry.REGISTRY)
    assert [(r.kind, r.noun, r.label, r.group) for r in regs] == [
        ("attention", "map", "attention-map", "depthscale.attention"),
        ("model", "model", "model", "depthscale.models"),
        ("task", "task", "task", "depthscale.tasks"),
    ]
    assert attention_registry.BUILTIN_NAMES == attention_registry.REGISTRY.builtin_names
    assert [m.name for m in model_registry.BUILTIN_MODELS] == list(model_registry.REGISTRY.builtin_names)
