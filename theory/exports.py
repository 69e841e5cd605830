"""Lazy re-exports for the three packages: ``from depthscale.sims import X`` imports only X's module."""

from __future__ import annotations

import importlib


def lazy_exports(package: str, exports: dict) -> tuple:
    """``(__all__, __getattr__, __dir__)`` for a package whose public names live in submodules.

    ``exports`` maps each public name to the submodule that defines it.

    >>> all_, getattr_, dir_ = lazy_exports("depthscale.theory", {"check_int": "validate"})
    >>> all_, getattr_("check_int").__name__
    (['check_int'], 'check_int')
    """
    names = sorted(exports)

    def __getattr__(name):
        if name in exports:
            return getattr(importlib.import_module(f"{package}.{exports[name]}"), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__():
        return names

    return names, __getattr__, __dir__
