"""A grid with settings replaced in every block (sims/grid.py: override_grid) and `reproduce --set`'s
reading of KEY=VALUE (derivations/cli/commands/reproduce.py): every run of the result carries the
setting, the rest of each block is kept, and the input is left as it was."""

from __future__ import annotations

import copy

import pytest

from depthscale.derivations.cli.commands.reproduce import parse_settings, preset_runs, set_text
from depthscale.sims.grid import load_grid, override_grid

GRID = {
    "seeds": [0, 1, 2],
    "task": {"task": "topk", "k": 2, "spectra": [[0.0, 0.0]]},
    "model": {"model": "softmax"},
    "train": {"steps": 900, "lr": 3e-3},
    "grid": [
        {"name": "a", "task": {"d": 16, "P": 128}, "model": {"depth": [1, 2, 4]}},
        {"name": "b", "seeds": [5], "task": {"d": 64, "P": 512}, "model": {"depth": [1, 32]}, "train": {"lr": 1e-2}},
    ],
}


def test_every_block_takes_the_settings_and_keeps_the_rest():
    before = copy.deepcopy(GRID)
    small = override_grid(GRID, {"task.d": 4, "task.P": 32, "model.depth": [1, 2], "train.steps": 5, "seeds": [0]})
    assert GRID == before  # the input is not changed
    runs = load_grid(small)
    # block a: d = 4, depths 1 and 2, seed 0; block b keeps its own learning rate, so its runs differ
    assert {(c.task.d, c.task.P, c.train.steps) for c, _ in runs} == {(4, 32, 5)}
    assert sorted((c.model.depth, c.train.lr, s) for c, s in runs) == [
        (1, 3e-3, 0),
        (1, 1e-2, 0),
        (2, 3e-3, 0),
        (2, 1e-2, 0),
    ]


def test_a_spectrum_replaces_the_pair_and_a_pair_replaces_the_spectra():
    runs = load_grid(override_grid(GRID, {"task.a": 0.5, "task.b": 0.25}))
    assert {(c.task.a, c.task.b) for c, _ in runs} == {(0.5, 0.25)}
    runs = load_grid(
        override_grid({**GRID, "task": {"task": "topk", "a": 1.0, "b": 1.0}}, {"task.spectra": [[0.5, 0.5]]})
    )
    assert {(c.task.a, c.task.b) for c, _ in runs} == {(0.5, 0.5)}


def test_a_grid_without_blocks_takes_the_settings_at_its_top():
    runs = load_grid(override_grid({"seeds": [0, 1], "model": {"depth": [1, 2, 4]}}, {"model.depth": 8}))
    assert sorted((c.model.depth, s) for c, s in runs) == [(8, 0), (8, 1)]


@pytest.mark.parametrize(
    "settings, match",
    [({"task.size": 4}, "TaskConfig has no size"), ({"depth": 4}, "set='depth'"), ({"opt.lr": 1}, "set='opt.lr'")],
)
def test_a_key_that_names_no_field_is_refused(settings, match):
    with pytest.raises(ValueError, match=match):
        override_grid(GRID, settings)


def test_a_bad_value_is_refused_by_the_grids_own_checks():
    with pytest.raises(ValueError, match="d"):
        load_grid(override_grid(GRID, {"task.d": -1}))


def test_set_items_are_toml_values_or_bare_words():
    assert parse_settings(["task.d=4", "model.depth = [1, 2]", "model.engine=jax", "train.lr=1e-3"]) == {
        "task.d": 4,
        "model.depth": [1, 2],
        "model.engine": "jax",
        "train.lr": 1e-3,
    }
    assert parse_settings(["task.d=4", "task.d=8"]) == {"task.d": 8}  # the later one wins
    assert set_text({"model.engine": "jax", "seeds": [0]}) == ' --set model.engine="jax" --set seeds=[0]'
    for bad in ("task.d", "=4", "task.d="):
        with pytest.raises(ValueError, match="KEY=VALUE"):
            parse_settings([bad])


def test_a_preset_read_with_settings_is_the_preset_made_small():
    full, small = preset_runs("scale"), preset_runs("scale", {"task.d": 4, "task.P": 32, "model.depth": [1, 2]})
    assert (
        len(full) == 3 * 6 * 3 and len(small) == 6
    )  # three rungs of 6 depths x 3 seeds collapse into 2 depths x 3 seeds
    assert {c.train for c, _ in small} == {c.train for c, _ in full}
