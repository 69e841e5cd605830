"""mkdocs hook: the API pages document what each subpackage re-exports, wherever it is defined.

Two things the static reader behind mkdocstrings (griffe) cannot see on its own:

- The packages map onto folders (``depthscale.theory`` is ``theory/``, see
  ``[tool.setuptools.package-dir]``), which only the installed package shows. ``on_startup`` lays that
  tree out with symbolic links under ``build/api-src`` (the handler's ``paths`` in mkdocs.yml).
- A subpackage's public names are re-exported lazily (``lazy_exports``), so they are not in its
  ``__init__.py``. A page line ``::: exports depthscale.theory`` becomes one ``::: module.Name``
  block per public name, grouped by defining module, from the export table at build time: moving
  a name to another module moves its documentation with it.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import os
import re
import shutil
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STAGE = ROOT / "build" / "api-src"
MARKER = re.compile(r"^::: exports (\S+)[ \t]*$", re.M)


def stage_packages(root: Path = ROOT, stage: Path = STAGE) -> Path:
    """The installed layout of the packages under ``stage``, as links to the source folders."""
    package_dir = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    shutil.rmtree(stage, ignore_errors=True)
    top = stage / "depthscale"
    top.mkdir(parents=True)
    for entry in (root / package_dir["depthscale"]).iterdir():
        if entry.name != "__pycache__":
            os.symlink(entry, top / entry.name)
    for name, folder in sorted(package_dir.items()):
        parts = name.split(".")
        if len(parts) == 1:
            continue
        parent = ".".join(parts[:-1])
        if parent in package_dir and Path(folder).parent == Path(package_dir[parent]):
            continue  # inside its parent's folder: reached through the parent's link
        if len(parts) != 2:
            raise RuntimeError(f"package-dir {name!r} = {folder!r}: only depthscale.<name> may map to its own folder")
        os.symlink(root / folder, top / parts[1], target_is_directory=True)
    return stage


def _summary(module: str) -> str:
    """The first paragraph of a module's docstring, read from its source (nothing is imported but the package)."""
    origin = importlib.util.find_spec(module).origin
    doc = (ast.get_docstring(ast.parse(Path(origin).read_text())) or module).strip()
    return doc.split("\n\n")[0].replace("\n", " ")


# modules whose exports are engine internals (numba kernels with positional arrays, private modules):
# named at the end of a page, not documented beside the entry points
INTERNAL = re.compile(r"(^|\.)_|_kernels$")


def is_internal(module: str) -> bool:
    """True for a private module (a part starting with ``_``) or a numba kernel module (``*_kernels``)."""
    return bool(INTERNAL.search(module))


def exports_markdown(package: str) -> str:
    """The ``:::`` blocks of every public name ``package`` re-exports, one section per defining
    module; the exports of internal modules (:func:`is_internal`) are only named, at the end."""
    from depthscale.theory._exports import exported_from

    table = exported_from(package)
    if not table:
        raise RuntimeError(f"::: exports {package}: the package re-exports no names")
    groups: dict = {}
    internal: dict = {}
    for name, module in table.items():
        (internal if is_internal(module) else groups).setdefault(module, []).append(name)
    names = ", ".join(sorted(n for m in groups.values() for n in m))
    first = next(n for m in groups.values() for n in m)
    out = [f"Every name below is imported from the package: `from {package} import {first}`.", ""]
    out += [f"<small>{names}</small>", ""]
    import importlib

    for module in sorted(groups):
        out += [f"## {_summary(module)}", "", f"<small>defined in `{module}`</small>", ""]
        static = vars(importlib.import_module(module))
        # a name the module computes on first use (its __getattr__) has no source for mkdocstrings
        lazy = [n for n in groups[module] if n not in static]
        out += [f"::: {module}.{name}\n" for name in groups[module] if name in static]
        if lazy:
            out += ["Computed on first use: " + ", ".join(f"`{n}`" for n in lazy) + f" (see `{module}`).", ""]
    if internal:
        out += ["## Engine internals", ""]
        out += ["Exported for the engine and its tests, not for use; no compatibility is promised.", ""]
        out += [f"- `{module}`: " + ", ".join(f"`{n}`" for n in sorted(ns)) for module, ns in sorted(internal.items())]
        out.append("")
    return "\n".join(out)


def on_startup(command, dirty):
    # before any plugin's on_config: mkdocstrings resolves its search paths there
    stage_packages()


def on_page_markdown(markdown, page, config, files):
    return MARKER.sub(lambda m: exports_markdown(m.group(1)), markdown)
