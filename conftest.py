"""Collect the doctests of depthscale/, theory/, sims/ and derivations/ under their installed module names.

The folders are the packages ``depthscale``, ``depthscale.theory``, ``depthscale.sims`` and
``depthscale.derivations`` (see ``[tool.setuptools.package-dir]``). pytest's own
``--doctest-modules`` would import ``theory/floor.py`` a second time as ``theory.floor``, a module
distinct from ``depthscale.theory.floor``; here each file is imported once, by its package name,
so that its doctests see the same objects as the rest of the code. Everything else is pytest's
doctest collector unchanged.
"""

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path

from _pytest.doctest import DoctestModule

ROOT = Path(__file__).resolve().parent
PACKAGES = ("depthscale", "theory", "sims", "derivations", "studies")


def module_name(path: Path) -> str | None:
    """``depthscale.<dotted path>`` of a source file in one of the packages, else None.

    ``derivations/cli/commands/__init__.py`` is ``depthscale.derivations.cli.commands``,
    ``depthscale/__init__.py`` is ``depthscale``; files outside the four folders (tests, benchmarks) are None.
    """
    try:
        parts = list(path.resolve().relative_to(ROOT).with_suffix("").parts)
    except ValueError:
        return None
    if not parts or parts[0] not in PACKAGES:
        return None
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts if parts[0] == "depthscale" else ["depthscale", *parts])


class PackageDoctestModule(DoctestModule):
    """pytest's doctest collector, importing the module by its package name."""

    def _getobj(self):
        return importlib.import_module(module_name(self.path))


# modules of an optional extra, and what they import: without it their doctests are not collected
# (the tests of the extra skip with the reason: pytest.importorskip)
OPTIONAL = {"depthscale.sims.jax_engine": ("jax", "optax"), "depthscale.sims.jax_tasks": ("jax",)}


def pytest_collect_file(file_path: Path, parent):
    name = module_name(file_path) if file_path.suffix == ".py" else None
    if name is None or any(importlib.util.find_spec(m) is None for m in OPTIONAL.get(name, ())):
        return None
    return PackageDoctestModule.from_parent(parent, path=file_path)
