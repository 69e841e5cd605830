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


def _imports(path: Path) -> set:
    import ast

    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


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
