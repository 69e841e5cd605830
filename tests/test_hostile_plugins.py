"""Hostile third parties and hostile sizes (issue 40).

A study plugin that cannot be used (its module fails to import, lacks its attribute, or names no
Study) costs one warning line naming it; the built-in studies and presets keep working, and only a
command that asks for the broken study fails, with one line and exit status 2. A grid over the run
cap is refused from its axes, before a single run is built; with a budget, runs that cannot start
cost no per-run work.
"""

from __future__ import annotations

from importlib import metadata

import pytest

from depthscale.derivations import study as study_mod
from depthscale.derivations.cli.app import main
from depthscale.sims import grid as grid_mod

BROKEN = {
    # entry point name -> (value, words of the reason the warning must give)
    "gone": ("depthscale_no_such_plugin_module:STUDY", "ModuleNotFoundError"),
    "no-attr": ("depthscale.studies.core:NO_SUCH_STUDY", "AttributeError"),
    "not-a-study": ("depthscale.studies.core:__name__", "not a Study record"),
    "explodes": ("hostile_plugin_boom:STUDY", "RuntimeError: boom at import"),
}


@pytest.fixture
def hostile(monkeypatch, tmp_path):
    """The real entry points plus four broken ones (one of them a module that raises when imported)."""
    (tmp_path / "hostile_plugin_boom.py").write_text("raise RuntimeError('boom at import')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    real = list(metadata.entry_points(group=study_mod.ENTRY_POINT_GROUP))
    fakes = [metadata.EntryPoint(name, value, study_mod.ENTRY_POINT_GROUP) for name, (value, _) in BROKEN.items()]
    monkeypatch.setattr(study_mod, "_entry_points", lambda: real + fakes)
    study_mod.reload_studies()
    yield {ep.name for ep in real}
    study_mod.reload_studies()


def test_broken_plugins_cost_one_warning_line_each_and_the_rest_load(hostile, capsys):
    assert set(study_mod.studies()) == hostile  # every built-in study, none of the broken ones
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == len(BROKEN), lines
    for name, (value, reason) in BROKEN.items():
        (line,) = [x for x in lines if f"study plugin {name} = {value!r}" in x]
        assert line.startswith("depthscale: warning: ") and reason in line, line
    assert sorted(study_mod.broken_studies()) == sorted(BROKEN)
    study_mod.studies()
    assert capsys.readouterr().err == ""  # read once: the warning is not repeated on every lookup


def test_a_builtin_preset_still_reproduces(hostile, tmp_path, capsys):
    # a budget too short for any run: the preset is found, its store made, no report written (exit 1)
    code = main(["reproduce", "--preset", "smoke", "--out", str(tmp_path / "r"), "--budget", "1s", "--quiet"])
    err = capsys.readouterr().err
    assert code == 1, err
    assert "too short to start any of the 49 missing run(s)" in err


@pytest.mark.parametrize("name", sorted(BROKEN))
@pytest.mark.parametrize("command", ["reproduce", "report"])
def test_asking_for_a_broken_study_is_one_line_exit_2(hostile, tmp_path, capsys, name, command):
    from depthscale.sims.store import Store

    store = tmp_path / "s.sqlite"
    with Store(store, mode="write"):
        pass
    before = sorted(p.name for p in tmp_path.iterdir())
    code = main([command, "--preset", name, "--store", str(store), "--out", str(tmp_path / "out")])
    out, err = capsys.readouterr()
    errors = [x for x in err.splitlines() if not x.startswith("depthscale: warning: ")]
    assert code == 2 and out == "", err
    assert len(errors) == 1 and errors[0].startswith(f"depthscale: error: preset={name!r}: "), err
    assert BROKEN[name][1] in errors[0]  # the reason, not only "unknown"
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing written


def test_an_unknown_name_names_the_plugins_left_out(hostile, capsys):
    with pytest.raises(ValueError, match=r"^preset='nope': .*smoke.*left out, as warned: .*explodes"):
        study_mod.find_preset("nope")


# ------------------------------------------------------------------------------------------ sizes
class _Counted:
    """Counts constructions of a config class (the expensive per-run work of a grid)."""

    def __init__(self, cls):
        self.cls, self.n = cls, 0

    def __call__(self, *args, **kwargs):
        self.n += 1
        return self.cls(*args, **kwargs)


@pytest.fixture
def built(monkeypatch):
    counts = {name: _Counted(getattr(grid_mod, name)) for name in ("RunConfig", "TaskConfig", "ModelConfig")}
    for name, counter in counts.items():
        monkeypatch.setattr(grid_mod, name, counter)
    return counts


def _blocks(n_blocks, per_block):
    """``n_blocks`` [[grid]] blocks of ``per_block`` distinct runs each (1000 d's x per_block/1000 seeds)."""
    seeds = per_block // 1000
    return {
        "grid": [
            {"seeds": list(range(b * seeds, (b + 1) * seeds)), "task": {"d": list(range(1, 1001))}}
            for b in range(n_blocks)
        ]
    }


def test_blocks_over_the_cap_together_are_refused_before_a_run_is_built(built):
    # each block is under the cap; together they hold 1.2 million runs
    with pytest.raises(ValueError, match=r"^grid: grid size=1200000: must be at most 1000000 runs"):
        grid_mod.parse_grid(_blocks(2, 600_000))
    assert {name: c.n for name, c in built.items()} == {"RunConfig": 0, "TaskConfig": 0, "ModelConfig": 0}


def test_the_cap_counts_the_blocks_together_whatever_its_value(built, monkeypatch):
    monkeypatch.setattr(grid_mod, "MAX_RUNS", 1000)
    blocks = [
        {"seeds": [0, 1, 2], "task": {"d": list(range(1, 201))}},  # 600 runs
        {"seeds": [3, 4], "task": {"d": list(range(1, 101))}, "model": {"depth": [1, 2]}},  # 400 runs
    ]
    assert len(grid_mod.parse_grid({"grid": blocks})) == 1000  # at the cap: built
    built["RunConfig"].n = 0
    blocks[1]["seeds"] = [3, 4, 5]  # 600 + 600
    with pytest.raises(ValueError, match=r"^grid: grid size=1200: must be at most 1000 runs"):
        grid_mod.parse_grid({"grid": blocks})
    assert built["RunConfig"].n == 0


def test_the_cli_refuses_a_grid_over_the_cap_in_one_line_and_makes_no_store(built, tmp_path, capsys):
    path = tmp_path / "big.toml"
    ds = ", ".join(map(str, range(1, 1001)))
    path.write_text(
        "".join(f"[[grid]]\nseeds = {list(range(b, b + 600))}\n[grid.task]\nd = [{ds}]\n" for b in (0, 600))
    )
    code = main(["sweep", str(path), "--store", str(tmp_path / "s.sqlite"), "--executor", "serial"])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and err.count("\n") == 1 and "grid size=1200000" in err, err
    assert built["RunConfig"].n == 0 and not (tmp_path / "s.sqlite").exists()
