"""Sweep grids: a TOML file (or a dict) expanded into a list of ``(RunConfig, seed)``.

Format::

    name = "optional label"
    seeds = [0, 1, 2]

    [task]                     # any TaskConfig field; a list means "each of these"
    task = "topk"
    k = 2
    spectra = [[0.25, 0.25], [0.5, 0.5]]   # (a, b) pairs, instead of separate a / b lists
    d = 16
    P = 128

    [model]                    # any ModelConfig field
    model = "softmax"
    depth = [1, 2, 4, 8, 16]

    [train]                    # any TrainConfig field
    steps = 8000

Several blocks can be combined with ``[[grid]]`` tables (each with its own ``seeds``, ``[grid.task]``,
``[grid.model]``, ``[grid.train]``); top-level ``seeds``/``task``/``model``/``train`` are then
defaults that every block overrides field by field. The run list is the union of the blocks'
cartesian products, without duplicates, in file order. A grid holds at most ``MAX_RUNS`` (10^6)
runs, counted from its axes (the product of the lists' lengths times the seeds, summed over the
blocks, repeats included) and refused before any run is built. Everything is validated before any run
starts: unknown keys, wrong types and bad values raise ``ValueError`` naming the key, the value
and what is allowed; a TOML syntax error raises ``ValueError`` with its line and column.
"""

from __future__ import annotations

import dataclasses
import itertools
import tomllib
from pathlib import Path

from ..theory._validate import SEED_MAX, bad_argument, check_int
from .config import ModelConfig, RunConfig, TaskConfig, TrainConfig, run_key

SECTIONS = {"task": TaskConfig, "model": ModelConfig, "train": TrainConfig}
TOP_KEYS = ("name", "description", "seeds", "task", "model", "train", "grid")
BLOCK_KEYS = ("name", "description", "seeds", "task", "model", "train")
MAX_RUNS = 1_000_000


def _kind(cls, name: str) -> str:
    # the config modules use postponed annotations, so field types are the strings "int" etc.
    t = {f.name: f.type for f in dataclasses.fields(cls)}[name]
    return t if isinstance(t, str) else t.__name__


def _check_type(where: str, name: str, value, kind: str):
    ok = {
        "int": isinstance(value, int) and not isinstance(value, bool),
        "float": isinstance(value, (int, float)) and not isinstance(value, bool),
        "str": isinstance(value, str),
        "bool": isinstance(value, bool),
    }.get(kind, True)
    if not ok:
        allowed = {"int": "an integer", "float": "a number", "str": "a string", "bool": "true or false"}[kind]
        bad_argument(f"{where}{name}", value, f"{allowed} (or a list of them)")
    return float(value) if kind == "float" else value


def _as_list(where: str, name: str, value) -> list:
    if isinstance(value, list):
        if not value:
            raise ValueError(f"{where}{name}=[]: must be a value or a non-empty list")
        return value
    return [value]


def _section_axes(where: str, section: str, table) -> list:
    """Validate one section's keys and types; return ``[(field_name_or_spectra, [values])]``."""
    cls = SECTIONS[section]
    if not isinstance(table, dict):
        raise ValueError(f"{where}{section}={table!r}: must be a table of {cls.__name__} fields")
    fields = [f.name for f in dataclasses.fields(cls)]
    allowed = fields + (["spectra"] if section == "task" else [])
    axes = []
    loc = f"{where}{section}."
    for name, value in table.items():
        if name not in allowed:
            raise ValueError(f"{loc}{name}={value!r}: unknown key; allowed keys are {', '.join(allowed)}")
        if name == "spectra":
            if "a" in table or "b" in table:
                raise ValueError(f"{loc}spectra={value!r}: must not be combined with task.a or task.b")
            pairs = _as_list(loc, name, value)
            if not all(isinstance(p, list) for p in pairs):
                pairs = [pairs]  # a single pair [a, b]
            out = []
            for p in pairs:
                if len(p) != 2:
                    raise ValueError(f"{loc}spectra={value!r}: must be a list of [a, b] pairs")
                out.append(tuple(_check_type(loc, "spectra", x, "float") for x in p))
            axes.append(("spectra", out))
            continue
        kind = _kind(cls, name)
        vals = [_check_type(loc, name, v, kind) for v in _as_list(loc, name, value)]
        axes.append((name, vals))
    return axes


def _block_axes(where: str, block: dict) -> tuple[list, dict, int]:
    """Validate one block's keys, seeds and axes; return ``(seeds, {section: axes}, run count)``.

    The count is the product of the axes' lengths times the seeds: known before any run is built.
    """
    for key in block:
        if key not in BLOCK_KEYS:
            raise ValueError(f"{where}{key}={block[key]!r}: unknown key; allowed keys are {', '.join(BLOCK_KEYS)}")
    for key in ("name", "description"):
        if key in block and not isinstance(block[key], str):
            raise ValueError(f"{where}{key}={block[key]!r}: must be a string")
    if "seeds" not in block:
        raise ValueError(f"{where}seeds: missing; give a list of seeds, e.g. seeds = [0, 1, 2]")
    seeds = _as_list(where, "seeds", block["seeds"])
    seeds = [
        check_int(f"{where}seeds", s, lo=0, hi=SEED_MAX) if not isinstance(s, bool) else _bad_seed(where, s)
        for s in seeds
    ]
    per_section = {s: _section_axes(where, s, block.get(s, {})) for s in SECTIONS}
    n = len(seeds)
    for axes in per_section.values():
        for _, vals in axes:
            n *= len(vals)
    if n > MAX_RUNS:
        raise ValueError(f"{where}grid size={n}: must be at most {MAX_RUNS} runs")
    return seeds, per_section, n


def _expand_block(where: str, seeds: list, per_section: dict) -> list:
    """The ``(RunConfig, seeds)`` of one validated block: each section's config built once, then each
    RunConfig once for all its seeds."""
    parts: dict = {}
    for section, axes in per_section.items():
        names = [a for a, _ in axes]
        cls = {"task": TaskConfig, "model": ModelConfig, "train": TrainConfig}[section]  # looked up now: tests count
        built = []
        for combo in itertools.product(*(v for _, v in axes)):
            values = dict(zip(names, combo))
            if "spectra" in values:
                values["a"], values["b"] = values.pop("spectra")
            try:
                built.append(cls(**values))
            except ValueError as exc:
                raise ValueError(f"{where}{section}.{exc}") from None
        parts[section] = built
    return [
        (RunConfig(task=t, model=m, train=r), seeds)
        for t, m, r in itertools.product(parts["task"], parts["model"], parts["train"])
    ]


def _bad_seed(where, s):
    raise ValueError(f"{where}seeds={s!r}: must be an integer >= 0")


def _merge(defaults: dict, block: dict, where: str = "") -> dict:
    out = dict(defaults)
    for key, value in block.items():
        if key in SECTIONS and isinstance(value, dict) and isinstance(out.get(key), dict):
            merged = dict(out[key])
            if key == "task" and "spectra" in value:
                merged.pop("a", None), merged.pop("b", None)
            if key == "task" and ("a" in value or "b" in value):
                if "spectra" in merged and not ("a" in value and "b" in value):
                    # replacing the pairs by one exponent would leave the other at its default, silently
                    one = "a" if "a" in value else "b"
                    raise ValueError(
                        f"{where}task.{one}={value[one]!r}: the top level sets task.spectra; give both task.a "
                        "and task.b in the block, or task.spectra"
                    )
                merged.pop("spectra", None)
            merged.update(value)
            out[key] = merged
        else:
            out[key] = value
    return out


def parse_grid(data: dict, source: str = "grid") -> list:
    """Expand a grid given as a dict (the parsed TOML). See :func:`load_grid`."""
    if not isinstance(data, dict):
        raise ValueError(f"{source}={type(data).__name__}: must be a table (dict)")
    for key in data:
        if key not in TOP_KEYS:
            raise ValueError(f"{source}: {key}={data[key]!r}: unknown key; allowed keys are {', '.join(TOP_KEYS)}")
    if "grid" in data:
        blocks = data["grid"]
        if not isinstance(blocks, list) or not blocks or not all(isinstance(b, dict) for b in blocks):
            raise ValueError(f"{source}: grid={blocks!r}: must be one or more [[grid]] tables")
        defaults = {k: v for k, v in data.items() if k not in ("grid", "name", "description")}
        for i, block in enumerate(blocks, 1):
            for key in block:
                if key not in BLOCK_KEYS:
                    raise ValueError(
                        f"{source}: grid[{i}].{key}={block[key]!r}: unknown key; allowed keys are {', '.join(BLOCK_KEYS)}"
                    )
        wheres = [f"{source}: grid[{i}]." for i in range(1, len(blocks) + 1)]
        planned = [_block_axes(w, _merge(defaults, b, w)) for w, b in zip(wheres, blocks)]
    else:
        wheres = [f"{source}: "]
        planned = [_block_axes(wheres[0], data)]
    # the cap counts every block's runs, repeats included, before a run is built: a grid over it is
    # refused at once, not after minutes of building configs that would then be thrown away
    total = sum(n for _, _, n in planned)
    if total > MAX_RUNS:
        raise ValueError(f"{source}: grid size={total}: must be at most {MAX_RUNS} runs")
    # repeats found by the configs' equality (frozen dataclasses): equal configs have one store key,
    # and comparing them costs microseconds where hashing their JSON (the key) costs a hundred
    seen, unique = set(), []
    for where, (seeds, per_section, _) in zip(wheres, planned):
        for cfg, cfg_seeds in _expand_block(where, seeds, per_section):
            for seed in cfg_seeds:
                if (cfg, seed) not in seen:
                    seen.add((cfg, seed))
                    unique.append((cfg, seed))
    return unique


def override_grid(data: dict, settings) -> dict:
    """A copy of a grid's table (the parsed TOML) with ``settings`` replaced everywhere: each key is
    ``"seeds"`` or ``"SECTION.FIELD"`` (a section ``task``, ``model`` or ``train`` and one of its
    fields, or ``task.spectra``), set at the top level and in every ``[[grid]]`` block, over what a
    block says itself. A preset made small this way (``reproduce --set``) runs the same machinery at
    tiny sizes. Setting ``task.a`` or ``task.b`` drops a ``spectra`` list where it replaces one, and
    ``task.spectra`` drops ``a`` and ``b``. Values are checked as the grid's own are, by
    :func:`parse_grid`; a key that names no field raises ``ValueError`` naming it.

    Examples
    --------
    >>> grid = {"seeds": [0, 1, 2], "task": {"d": 64, "P": 512},
    ...         "grid": [{"name": "a", "model": {"depth": [1, 32]}}, {"name": "b", "task": {"d": 32, "P": 256}}]}
    >>> small = override_grid(grid, {"task.d": 4, "task.P": 16, "model.depth": [1, 2], "seeds": [0]})
    >>> small["grid"][1]["task"], small["grid"][0]["model"], small["seeds"]
    ({'d': 4, 'P': 16}, {'depth': [1, 2]}, [0])
    >>> len(load_grid(small)), grid["task"]["d"]   # the two blocks are one now; the input is unchanged
    (2, 64)
    >>> override_grid(grid, {"task.size": 4})
    Traceback (most recent call last):
    ...
    ValueError: set='task.size': unknown key; allowed: seeds, task.FIELD, model.FIELD or train.FIELD (TaskConfig has no size)
    """
    import copy

    if not isinstance(data, dict):
        raise ValueError(f"grid={type(data).__name__}: must be a table (dict)")
    if not hasattr(settings, "items"):
        raise ValueError(f"settings={settings!r}: must be a mapping of 'seeds' or 'SECTION.FIELD' to values")
    allowed = "seeds, task.FIELD, model.FIELD or train.FIELD"
    parsed: list[tuple[str | None, str, object]] = []
    for key, value in settings.items():
        section, _, name = str(key).partition(".")
        if key == "seeds":
            parsed.append((None, "seeds", value))
            continue
        if section not in SECTIONS or not name:
            raise ValueError(f"set={key!r}: unknown key; allowed: {allowed}")
        fields = [f.name for f in dataclasses.fields(SECTIONS[section])] + (["spectra"] if section == "task" else [])
        if name not in fields:
            raise ValueError(
                f"set={key!r}: unknown key; allowed: {allowed} ({SECTIONS[section].__name__} has no {name})"
            )
        parsed.append((section, name, value))
    out = copy.deepcopy(data)
    tables = [out] + [b for b in out.get("grid", []) if isinstance(b, dict)]
    for i, table in enumerate(tables):
        for part, name, value in parsed:
            if part is None:
                if i == 0 or "seeds" in table:  # a block without its own seeds takes the top level's
                    table["seeds"] = copy.deepcopy(value)
                continue
            if i > 0 and not isinstance(table.get(part, {}), dict):
                continue  # a malformed block: parse_grid names it
            if i == 0 or part in table:
                sec = table.setdefault(part, {})
                if not isinstance(sec, dict):
                    continue
                sec[name] = copy.deepcopy(value)
                if part == "task" and name in ("a", "b"):
                    sec.pop("spectra", None)
                if part == "task" and name == "spectra":
                    sec.pop("a", None), sec.pop("b", None)
    return out


def load_grid(path_or_dict) -> list:
    """Read and validate a sweep grid; return ``[(RunConfig, seed), ...]``.

    Parameters
    ----------
    path_or_dict : str, Path or dict
        A TOML file, or the equivalent dict.

    Raises
    ------
    ValueError
        On a TOML syntax error (with its line), an unknown key, a wrong type or a bad value,
        before any run is built.

    Examples
    --------
    >>> runs = load_grid({"seeds": [0, 1], "task": {"task": "topk", "d": 8, "P": 32},
    ...                   "model": {"model": "softmax", "depth": [1, 2, 4]}})
    >>> len(runs), runs[0][0].model.depth, runs[0][1]
    (6, 1, 0)
    """
    if isinstance(path_or_dict, dict):
        return parse_grid(path_or_dict)
    if not isinstance(path_or_dict, (str, Path)):
        raise ValueError(f"grid={path_or_dict!r}: must be a TOML file path or a dict")
    path = Path(path_or_dict)
    if not path.is_file():
        raise ValueError(f"grid={str(path)!r}: must be an existing TOML file")
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"grid={str(path)!r}: invalid TOML: {exc}") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"grid={str(path)!r}: invalid TOML: not UTF-8 ({exc.reason})") from None
    except RecursionError:  # tomllib parses nesting recursively: a grid is never nested that deep
        raise ValueError(f"grid={str(path)!r}: invalid grid: arrays or tables nested too deep") from None
    return parse_grid(data, source=path.name)


__all__ = ["load_grid", "override_grid", "parse_grid", "run_key"]
