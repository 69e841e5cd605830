"""Lazy re-exports for every package: ``from depthscale.sims import X`` imports only X's module.

Project infrastructure, not theory: private to the project, imported by every layer.
"""

from __future__ import annotations

import importlib

_TABLES: dict = {}  # package -> {name: submodule}, filled by lazy_exports


def lazy_exports(package: str, **modules: str) -> tuple:
    """``(__all__, __getattr__, __dir__)`` for a package whose public names live in submodules.

    Each keyword is a submodule of ``package``; its value lists the public names that submodule
    defines, separated by whitespace. A name is looked up (and its submodule imported) on first use.

    >>> all_, getattr_, dir_ = lazy_exports("depthscale.theory", _validate="check_int check_real")
    >>> all_, getattr_("check_int").__name__
    (['check_int', 'check_real'], 'check_int')
    """
    exports: dict[str, str] = {}
    for module, names in modules.items():
        for name in names.split():
            if name in modules:  # importing that submodule would bind its name on the package, hiding the export
                raise ValueError(f"{name!r} is both an exported name and a submodule of {package!r}")
            if name in exports:
                raise ValueError(f"{name!r} is exported by both {exports[name]!r} and {module!r}")
            exports[name] = module
    public = sorted(exports)
    _TABLES[package] = exports

    def __getattr__(name):
        if name in exports:
            return getattr(importlib.import_module(f"{package}.{exports[name]}"), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__():
        return public

    return public, __getattr__, __dir__


def lazy_reexports(package: str, table: dict) -> tuple:
    """``(names, __getattr__)`` for a module that re-exports names of ``package``'s modules, each
    loaded on first use: ``table`` is ``{"claims.claim": "Claim claim", ...}`` (a module under
    ``package``, dotted, and the names it defines). For a module (not a package) whose importers must
    not pay for every module it names, or that a named module's importers import.

    >>> names, getattr_ = lazy_reexports("depthscale.theory", {"spectra": "PowerLawSpectrum"})
    >>> names, getattr_("PowerLawSpectrum").__name__
    (['PowerLawSpectrum'], 'PowerLawSpectrum')
    """
    where = {name: module for module, names in table.items() for name in names.split()}
    if len(where) != sum(len(names.split()) for names in table.values()):
        raise ValueError(f"a name is listed twice in the re-exports from {package!r}")

    def __getattr__(name):
        if name in where:
            return getattr(importlib.import_module(f"{package}.{where[name]}"), name)
        raise AttributeError(f"module has no attribute {name!r}")

    return sorted(where), __getattr__


def exported_from(package: str) -> dict:
    """``{name: defining module}`` of the names ``package`` re-exports lazily (imports the package only).

    What the API reference documents: each public name under the module that defines it.

    >>> exported_from("depthscale.theory")["PowerLawSpectrum"]
    'depthscale.theory.spectra'
    >>> exported_from("depthscale.derivations")["Curve"]
    'depthscale.derivations.analysis.curve'
    """
    importlib.import_module(package)
    out = {}
    for name, module in sorted(_TABLES.get(package, {}).items()):
        where = f"{package}.{module}"
        importlib.import_module(where)
        # a subpackage that re-exports lazily itself: follow it to the module that defines the name
        out[name] = exported_from(where)[name] if where in _TABLES else where
    return out
