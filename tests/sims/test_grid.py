"""Sweep grids: expansion, [[grid]] blocks, validation of every key before any run."""

import itertools

import pytest

from depthscale.sims.config import RunConfig, TaskConfig
from depthscale.sims.grid import load_grid, run_key

TOML = """
name = "demo"
seeds = [0, 1]

[train]
steps = 100
lr = 1e-3

[[grid]]
name = "linear easy"
[grid.task]
task = "easy-exact"
spectra = [[2, 0.5], [2, 1]]
[grid.model]
model = "linear"
depth = [1, 2, 4]

[[grid]]
name = "softmax top-2"
seeds = [7]
[grid.task]
task = "topk"
k = 2
a = [0.25, 0.5]
b = [0.25, 0.5]
[grid.model]
model = "softmax"
depth = [1, 8]
[grid.train]
steps = 50
"""


def write(tmp_path, text, name="g.toml"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_cartesian_product_from_dict():
    runs = load_grid(
        {
            "seeds": [3, 4],
            "task": {"a": [0.0, 1.0], "d": 8, "P": 32},
            "model": {"depth": [1, 2, 4]},
            "train": {"lr": [1e-3, 1e-2]},
        }
    )
    assert len(runs) == 2 * 3 * 2 * 2
    got = {(c.task.a, c.model.depth, c.train.lr, s) for c, s in runs}
    assert got == set(itertools.product([0.0, 1.0], [1, 2, 4], [1e-3, 1e-2], [3, 4]))
    assert all(c.task.d == 8 and c.task.P == 32 and isinstance(c, RunConfig) for c, _ in runs)


def test_blocks_with_defaults(tmp_path):
    runs = load_grid(write(tmp_path, TOML))
    lin = [(c, s) for c, s in runs if c.model.model == "linear"]
    soft = [(c, s) for c, s in runs if c.model.model == "softmax"]
    assert len(lin) == 2 * 3 * 2 and len(soft) == 4 * 2 * 1
    assert {(c.task.a, c.task.b) for c, _ in lin} == {(2.0, 0.5), (2.0, 1.0)}  # pairs, not a product
    assert {(c.task.a, c.task.b) for c, _ in soft} == set(itertools.product([0.25, 0.5], [0.25, 0.5]))
    assert {s for _, s in lin} == {0, 1} and {s for _, s in soft} == {7}
    assert all(c.train.steps == 100 and c.train.lr == 1e-3 for c, _ in lin)  # top-level defaults
    assert all(c.train.steps == 50 and c.train.lr == 1e-3 for c, _ in soft)  # block overrides one field
    assert all(c.task.task == "easy-exact" for c, _ in lin)


def test_duplicates_removed_in_order():
    g = {"grid": [{"seeds": [0], "model": {"depth": [1, 2]}}, {"seeds": [0, 1], "model": {"depth": 2}}]}
    runs = load_grid(g)
    assert [(c.model.depth, s) for c, s in runs] == [(1, 0), (2, 0), (2, 1)]
    assert len({run_key(c, s) for c, s in runs}) == 3


def test_run_key_matches_contract():
    from depthscale.sims.config import config_hash

    cfg = RunConfig(TaskConfig(a=0.5))
    assert run_key(cfg, 4) == config_hash(cfg) + "-4"


def test_syntax_error_names_the_line(tmp_path):
    p = write(tmp_path, "seeds = [0, 1]\n[task]\na = 0.5\nb = = 1\n")
    with pytest.raises(ValueError, match=r"invalid TOML.*line 4"):
        load_grid(p)


@pytest.mark.parametrize(
    "grid, match",
    [
        ({"seeds": [0], "task": {"alpha": 1}}, r"task\.alpha=1: unknown key; allowed keys are task, k, a"),
        ({"seeds": [0], "model": {"deepth": 2}}, r"model\.deepth=2: unknown key"),
        ({"seeds": [0], "train": {"learning_rate": 1}}, r"train\.learning_rate=1: unknown key"),
        ({"seeds": [0], "tasks": {}}, r"tasks=\{\}: unknown key"),
        ({"seeds": [0], "task": {"a": -1}}, r"task\.a=-1\.0: must be >= 0"),
        ({"seeds": [0], "task": {"task": "hard"}}, r"task\.task='hard': must be one of easy-exact, easy-fresh, topk"),
        ({"seeds": [0], "model": {"depth": [1, 0]}}, r"model\.depth=0: must be an integer in \[1, 4096\]"),
        ({"seeds": [0], "model": {"depth": 2.5}}, r"model\.depth=2\.5: must be an integer"),
        ({"seeds": [0], "model": {"context_update": 1}}, r"model\.context_update=1: must be true or false"),
        ({"seeds": [0], "train": {"lr": "fast"}}, r"train\.lr='fast': must be a number"),
        ({"seeds": [0], "train": {"lr": []}}, r"train\.lr=\[\]: must be a value or a non-empty list"),
        ({"seeds": [0], "task": {"k": 9, "P": 8}}, r"task\.k=9: must be an integer in \[1, 8\]"),
        ({"seeds": [0], "task": "topk"}, r"task='topk': must be a table"),
        ({"seeds": [0], "task": {"spectra": [[1, 2, 3]]}}, r"spectra=.*must be a list of \[a, b\] pairs"),
        ({"seeds": [0], "task": {"spectra": [[1, 2]], "a": 1}}, r"spectra=.*must not be combined"),
        ({"seeds": [-1]}, r"seeds=-1: must be an integer"),
        ({"seeds": ["a"]}, r"seeds='a': must be an integer"),
        ({"task": {}}, r"seeds: missing"),
        ({"grid": []}, r"grid=\[\]: must be one or more"),
        ({"seeds": [0], "grid": [{"model": {"depth": 1}}, {"modle": {}}]}, r"grid\[2\]\.modle=\{\}: unknown key"),
        ({"seeds": [0], "grid": [{"model": {"depth": -3}}]}, r"grid\[1\]\.model\.depth=-3"),
    ],
)
def test_bad_grids(grid, match):
    with pytest.raises(ValueError, match=match):
        load_grid(grid)


def test_bad_value_in_file_names_file_and_key(tmp_path):
    p = write(tmp_path, "seeds = [0]\n[model]\nmodel = 'transformer'\n")
    with pytest.raises(ValueError, match=r"g\.toml: model\.model='transformer': must be one of linear, softmax"):
        load_grid(p)


def test_missing_and_binary_files(tmp_path):
    with pytest.raises(ValueError, match="must be an existing TOML file"):
        load_grid(tmp_path / "nope.toml")
    p = tmp_path / "bin.toml"
    p.write_bytes(b"seeds = [0]\n\xff\xfe")
    with pytest.raises(ValueError, match="invalid TOML"):
        load_grid(p)
    with pytest.raises(ValueError, match="must be a TOML file path or a dict"):
        load_grid(3)


def test_grid_size_cap():
    with pytest.raises(ValueError, match="grid size=.*at most"):
        load_grid({"seeds": list(range(1000)), "model": {"depth": list(range(1, 1001)), "width": [0, 16]}})
