"""The documentation site's configuration and hooks (the build itself runs in CI: mkdocs build --strict)."""

import importlib
import importlib.util
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]


def _hook(name):
    spec = importlib.util.spec_from_file_location(f"docs_hook_{name}", ROOT / "docs" / "hooks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _nav_pages(nav) -> list:
    out = []
    for item in nav:
        value = next(iter(item.values())) if isinstance(item, dict) else item
        out += _nav_pages(value) if isinstance(value, list) else [value]
    return out


def test_every_guide_and_derivation_page_is_in_the_nav():
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    pages = _nav_pages(config["nav"])
    on_disk = [p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").glob("*.md")]
    on_disk += [p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs" / "theory").glob("*.md")]
    assert sorted(set(on_disk) - set(pages)) == []
    assert all((ROOT / "docs" / p).is_file() for p in pages)
    assert config["strict"] is True


def test_the_staged_tree_is_the_installed_layout(tmp_path):
    stage = _hook("api_pages").stage_packages(ROOT, tmp_path / "stage")
    package_dir = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    for name, folder in package_dir.items():
        staged = stage.joinpath(*name.split("."))
        assert (staged / "__init__.py").resolve() == (ROOT / folder / "__init__.py").resolve(), name


@pytest.mark.parametrize("package", ["depthscale.theory", "depthscale.sims", "depthscale.derivations"])
def test_an_api_page_documents_each_export_once_where_it_is_defined(package):
    text = _hook("api_pages").exports_markdown(package)
    blocks = [line[4:] for line in text.splitlines() if line.startswith("::: ")]
    pkg = importlib.import_module(package)
    names = [n for n in pkg.__all__ if not isinstance(getattr(pkg, n), type(pkg))]
    assert sorted(b.rsplit(".", 1)[1] for b in blocks) == sorted(names)
    for block in blocks:
        module, name = block.rsplit(".", 1)
        assert getattr(importlib.import_module(module), name) is getattr(pkg, name), block


def test_doctests_outside_examples_are_fenced_and_roles_become_code():
    hook = _hook("docstrings")
    text = "Sum.\n\n>>> d['k'][:]\n[1]\n\nExamples\n--------\n>>> 1 + 1\n2"
    assert hook.for_the_site(text) == ("Sum.\n\n```pycon\n>>> d['k'][:]\n[1]\n```\n\nExamples\n--------\n>>> 1 + 1\n2")
    assert hook.for_the_site("Uses :meth:`~Store.records`, :mod:`depthscale.sims`.") == (
        "Uses `Store.records`, `depthscale.sims`."
    )
