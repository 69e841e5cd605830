"""The three packages' export tables: every public name is the object it names, whatever was imported before."""

import importlib
import pkgutil
import types

import pytest

from depthscale.theory._exports import lazy_exports


@pytest.mark.parametrize(
    "package",
    [
        "depthscale.theory",
        "depthscale.sims",
        "depthscale.derivations",
        "depthscale.derivations.analysis",
        "depthscale.derivations.claims",
        "depthscale.derivations.report",
        "depthscale.derivations.cli",
    ],
)
def test_exports_are_objects_even_after_every_submodule_is_imported(package):
    # a submodule import binds the submodule's name on the package, so an export of the same name
    # would turn into the module once anything imported that submodule
    pkg = importlib.import_module(package)
    for info in pkgutil.iter_modules(pkg.__path__):
        importlib.import_module(f"{package}.{info.name}")
    modules = [name for name in pkg.__all__ if isinstance(getattr(pkg, name), types.ModuleType)]
    assert modules == []


def test_an_export_named_like_its_submodule_is_refused():
    with pytest.raises(ValueError, match="'sweeps' is both an exported name and a submodule"):
        lazy_exports("depthscale.sims", sweeps="sweeps")


def test_theory_exports_only_theory():
    # argument checks and lazy exports are project infrastructure (theory/_validate.py, theory/_exports.py)
    import depthscale.theory as theory
    from depthscale.theory import _exports, _validate

    infra = [n for n in theory.__all__ if n in vars(_validate) or n in vars(_exports)]
    assert infra == []
    assert not hasattr(theory, "check_int")
