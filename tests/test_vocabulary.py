"""One vocabulary: every allowed-choice tuple is the one of theory/_choices.py, and argument errors
that name a choice come from one helper."""

import re
from pathlib import Path

import pytest

from depthscale.theory import _choices
from depthscale.theory._validate import bad_argument, check_choice

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    "module, name, choice",
    [
        ("depthscale.sims.config", "TASKS", "TASKS"),
        ("depthscale.sims.config", "MODELS", "MODELS"),
        ("depthscale.sims.config", "SCHEDULES", "SCHEDULES"),
        ("depthscale.sims.reference_floors", "FLOOR_NAMES", "FLOOR_NAMES"),
        ("depthscale.derivations.claims.protocol_rows", "FLOOR_NAMES", "FLOOR_NAMES"),
        ("depthscale.derivations.analysis.curve", "EASY_TASKS", "EASY_TASKS"),
        ("depthscale.derivations.analysis.curve", "FLOOR_NAMES", "FLOOR_NAMES"),
        ("depthscale.derivations.analysis.scale_match", "TASKS", "TASKS"),
        ("depthscale.theory.clt", "CLT_MODELS", "CLT_MODELS"),
        ("depthscale.derivations.cli.commands.predict", "CLT_MODELS", "CLT_MODELS"),
        ("depthscale.theory.linear_optimum", "TASKS", "LINEAR_OPTIMUM_TASKS"),
        ("depthscale.derivations.cli.commands.linear_optimum", "TASKS", "LINEAR_OPTIMUM_TASKS"),
        ("depthscale.derivations.report.render", "FORMATS", "FORMATS"),
        ("depthscale.theory.typeset", "FORMATS", "FORMATS"),
        ("depthscale.derivations.cli.commands.derive", "FORMATS", "FORMATS"),
    ],
)
def test_library_and_cli_use_the_one_tuple_of_choices(module, name, choice):
    import importlib

    assert getattr(importlib.import_module(module), name) is getattr(_choices, choice)


def test_no_module_spells_out_a_choice_tuple_of_its_own():
    # a copy of a choice tuple is how library and CLI drift apart
    tuples = {v for k, v in vars(_choices).items() if k.isupper()}
    copies = []
    for folder in ("theory", "sims", "derivations"):
        for path in (ROOT / folder).rglob("*.py"):
            if path.name == "_choices.py":
                continue
            for m in re.finditer(r"^\s*[A-Z_]+ = (\([^()]*\))", path.read_text(), re.M):
                try:
                    value = eval(m.group(1), {})  # a literal tuple of strings
                except Exception:
                    continue
                if value in tuples:
                    copies.append(f"{path.relative_to(ROOT)}: {m.group(0).strip()}")
    assert copies == []


def test_choice_errors_come_from_one_helper():
    raised = []
    for folder in ("theory", "sims", "derivations"):
        for path in (ROOT / folder).rglob("*.py"):
            for i, line in enumerate(path.read_text().splitlines(), 1):
                if "raise ValueError" in line and "must be one of" in line:
                    raised.append(f"{path.relative_to(ROOT)}:{i}")
    assert raised == []


def test_the_helper_names_the_parameter_and_what_is_allowed():
    with pytest.raises(ValueError, match=r"^task='hard': must be one of easy-exact, easy-fresh, topk$"):
        check_choice("task", "hard", _choices.TASKS)
    with pytest.raises(ValueError, match=r"^x='aaaa.*\.\.\.: must be short$") as err:
        bad_argument("x", "a" * 500, "short")
    assert len(str(err.value)) < 120


def test_one_json_safe_helper_gives_strict_json():
    import json

    import numpy as np

    from depthscale.sims import runner
    from depthscale.theory._json import json_safe

    value = {"x": np.float32(0.5), 3: (np.int64(2), np.array([[1.0, np.nan]])), "y": [np.inf, "s", None, True]}
    strict = json.loads(json.dumps(json_safe(value, finite=True), allow_nan=False))
    assert strict == {"x": 0.5, "3": [2, [[1.0, None]]], "y": [None, "s", None, True]}
    kept = json_safe(value)  # without finite=True a NaN stays a NaN in memory (the record's convention)
    assert np.isnan(kept["3"][1][0][1]) and type(kept["3"][0]) is int
    assert runner._plain is json_safe
