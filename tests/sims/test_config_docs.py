"""The configuration dataclasses document every field with its default; TrainConfig.quick() is small."""

import dataclasses
import re

import pytest

from depthscale.sims.config import ModelConfig, RunConfig, TaskConfig, TrainConfig


def _default_text(doc: str, name: str) -> str:
    """The default a ``name : type, default X`` line states (the i-th of ``a, b : type, default x, y``)."""
    for line in doc.splitlines():
        m = re.match(r"^    ([\w, ]+) : [^,]+(?:, [^,]+)*?, default (.+)$", line)
        if m:
            names = [n.strip() for n in m.group(1).split(",")]
            if name in names:
                values = [v.strip() for v in m.group(2).split("(")[0].split(",")]
                return values[names.index(name)] if len(values) == len(names) else values[0]
    raise AssertionError(f"{name} is not documented with a default")


@pytest.mark.parametrize("cls", [TaskConfig, ModelConfig, TrainConfig, RunConfig])
def test_every_field_is_documented_with_its_default(cls):
    assert "Parameters\n    ----------" in cls.__doc__
    for f in dataclasses.fields(cls):
        text = _default_text(cls.__doc__, f.name)
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
        if dataclasses.is_dataclass(default):
            assert text == f"{type(default).__name__}", (f.name, text)
        elif isinstance(default, bool) or isinstance(default, str):
            assert text in (str(default), f'"{default}"'), (f.name, text)
        else:
            assert float(text) == default, (f.name, text)


def test_choices_are_listed_for_every_choice_field():
    from depthscale.sims import config
    from depthscale.sims.engines import ENGINES

    for cls, name, choices in [
        (TaskConfig, "task", config.TASKS),
        (ModelConfig, "qk", config.QK_KINDS),
        (ModelConfig, "attention", config.ATTENTIONS),
        (ModelConfig, "engine", ENGINES),
        (ModelConfig, "init", config.INITS),
        (TrainConfig, "schedule", config.SCHEDULES),
    ]:
        line = next(ln for ln in cls.__doc__.splitlines() if ln.startswith(f"    {name} : "))
        assert all(f'"{c}"' in line for c in choices), line


def test_quick_is_a_small_preset_whose_fields_can_be_changed():
    q = TrainConfig.quick()
    paper = TrainConfig()
    assert q.steps * q.batch * 50 <= paper.steps * paper.batch and q.eval_contexts < paper.eval_contexts
    assert q.window < q.steps  # the training curve follows the run
    assert TrainConfig.quick(steps=1000, lr=3e-3) == dataclasses.replace(q, steps=1000, lr=3e-3)
    with pytest.raises(ValueError, match=r"^batch=0"):
        TrainConfig.quick(batch=0)
