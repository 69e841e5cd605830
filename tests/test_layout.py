"""The layout the architecture promises: small modules in derivations/, and claims that format numbers
without the report machinery (docs/architecture.md)."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 500


def test_no_module_in_derivations_is_over_500_lines():
    long = {
        str(p.relative_to(ROOT)): n
        for p in sorted((ROOT / "derivations").rglob("*.py"))
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}


def _loaded_after(module: str) -> set:
    """Top-level names of the modules a fresh interpreter holds after importing ``module``."""
    code = f"import sys, {module}; print(' '.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return set(out.split())


@pytest.mark.parametrize(
    "module",
    [
        "depthscale.derivations.claims.registry",
        "depthscale.derivations.claims.verdicts",
        "depthscale.derivations.report.protocol_table",
    ],
)
def test_claims_format_numbers_without_jinja_or_sympy(module):
    loaded = _loaded_after(module)
    assert {"jinja2", "markupsafe", "sympy", "depthscale.derivations.report.render"} & loaded == set()


def test_the_number_formatting_module_needs_only_the_standard_library():
    loaded = _loaded_after("depthscale.derivations.formatting")
    assert {"numpy", "scipy", "jinja2", "sympy"} & loaded == set()
    assert not any(m.startswith(("depthscale.sims", "depthscale.derivations.report")) for m in loaded)


def _package_of(path: Path) -> list:
    """``["depthscale", "derivations", "report"]`` for derivations/report/figures.py (or its __init__)."""
    return ["depthscale", *path.relative_to(ROOT).parent.parts]


def _imports(path: Path, absolute_only: bool = False) -> set:
    """Absolute names of the modules ``path`` imports (relative imports resolved against its package)."""
    import ast

    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
        elif isinstance(node, ast.ImportFrom) and not absolute_only:
            package = _package_of(path)
            base = package[: len(package) - node.level + 1]
            if node.module:
                names.add(".".join([*base, node.module]))
            else:  # from . import fits: the submodules named
                names.update(".".join([*base, a.name]) for a in node.names)
    return names


def test_package_modules_import_each_other_relatively():
    # a reader (or a tool reading imports as text) follows ``from ..sims.store import Store`` to
    # sims/store.py; ``depthscale.sims`` names no folder. The packages' __init__.py files are the
    # exception: pytest imports each of them under its folder name (``derivations.claims``) to look
    # for package-level set-up, and a relative import past that folder fails there
    absolute = {
        str(p.relative_to(ROOT)): sorted(m for m in _imports(p, absolute_only=True) if m.startswith("depthscale"))
        for folder in ("theory", "sims", "derivations")
        for p in sorted((ROOT / folder).rglob("*.py"))
        if p.name != "__init__.py"
    }
    assert {k: v for k, v in absolute.items() if v} == {}


def test_resolved_imports_name_real_modules():
    # the one-way check below reads these names: each must be a module that exists
    import importlib.util

    names = {m for f in ("theory", "sims", "derivations") for p in (ROOT / f).rglob("*.py") for m in _imports(p)}
    ours = sorted(m for m in names if m.startswith("depthscale."))
    assert "depthscale.sims.store" in ours and len(ours) > 50
    assert [m for m in ours if importlib.util.find_spec(m) is None] == []


@pytest.mark.parametrize(
    "folder, forbidden",
    [
        ("theory", ("depthscale.sims", "depthscale.derivations")),
        ("sims", ("depthscale.derivations",)),
        ("derivations/analysis", ("depthscale.derivations.cli", "depthscale.derivations.report")),
        ("derivations/claims", ("depthscale.derivations.cli", "depthscale.derivations.report")),
        ("derivations/report", ("depthscale.derivations.cli",)),
    ],
)
def test_imports_go_one_way_and_library_code_never_imports_the_cli(folder, forbidden):
    wrong = {
        str(p.relative_to(ROOT)): sorted(m for m in _imports(p) if m.startswith(forbidden))
        for p in sorted((ROOT / folder).rglob("*.py"))
    }
    assert {k: v for k, v in wrong.items() if v} == {}
