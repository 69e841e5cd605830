"""The top-level ``depthscale`` package: version, lazy subpackages and exports, what type checkers see."""

import ast
import importlib
import importlib.metadata
import subprocess
import sys
import tomllib
import types
from pathlib import Path

import pytest

import depthscale

ROOT = Path(__file__).resolve().parents[1]


def test_version_is_the_installed_metadata_and_the_declared_one():
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert depthscale.__version__ == importlib.metadata.version("depthscale") == declared


def test_import_loads_no_subpackage_and_none_of_the_heavy_libraries():
    code = (
        "import sys, depthscale; print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('numpy', 'numba', 'sympy', 'scipy', 'matplotlib') or m.startswith('depthscale.') "
        "or m == 'importlib.metadata'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"


def test_subpackages_are_reached_as_attributes():
    for name in depthscale.SUBPACKAGES:
        assert getattr(depthscale, name) is importlib.import_module(f"depthscale.{name}")


def test_every_export_is_the_subpackages_object():
    for name, sub in depthscale.EXPORTS.items():
        obj = getattr(depthscale, name)
        assert obj is getattr(importlib.import_module(f"depthscale.{sub}"), name), name
        assert not isinstance(obj, types.ModuleType), name
    assert set(depthscale.__all__) <= set(dir(depthscale))


def test_an_unknown_name_raises_attribute_error_naming_it():
    with pytest.raises(AttributeError, match="module 'depthscale' has no attribute 'Stor'"):
        depthscale.Stor  # noqa: B018


def _type_checking_imports() -> dict:
    """``{name: (module, attribute)}`` of the ``if TYPE_CHECKING:`` block, read from the source."""
    tree = ast.parse(Path(depthscale.__file__).read_text())
    block = next(n for n in tree.body if isinstance(n, ast.If) and getattr(n.test, "id", "") == "TYPE_CHECKING")
    found = {}
    for node in block.body:
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                # `import x as x` is the form type checkers take as a re-export
                assert alias.asname == alias.name, ast.unparse(node)
                found[alias.name] = (node.module, alias.name)
    return found


def test_what_type_checkers_see_is_what_runs():
    # the static imports name the defining modules; if a module moves, this catches the stale path
    seen = _type_checking_imports()
    assert set(seen) == set(depthscale.__all__) - {"__version__"}
    for name, (module, attr) in seen.items():
        assert getattr(importlib.import_module(module), attr) is getattr(depthscale, name), name


@pytest.mark.timeout(300)
def test_the_wheel_holds_every_package_and_every_study_file(tmp_path):
    """A non-editable install (CI's main job) has only what the wheel holds: every module of the four
    folders, and each study's presets/ and data/ (the smoke report reads linear-start's data/).
    Built from a copy of the tracked sources, so the checkout gets no build/ or egg-info."""
    import zipfile

    tracked = subprocess.run(["git", "ls-files"], capture_output=True, text=True, check=True, cwd=ROOT).stdout.split()
    folders = ("depthscale", "theory", "sims", "derivations", "studies")
    wanted = [f for f in tracked if f.split("/")[0] in folders and "/tests/" not in f]
    for f in wanted + ["pyproject.toml", "setup.py", "README.md"]:
        (tmp_path / "src" / f).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "src" / f).write_bytes((ROOT / f).read_bytes())
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path / "out"),
            ".",
        ],
        cwd=tmp_path / "src",
        check=True,
        capture_output=True,
    )
    (wheel,) = (tmp_path / "out").glob("*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for f in wanted:
        top, _, rest = f.partition("/")
        if f.endswith((".py", ".toml", ".csv", ".j2", "py.typed")):
            installed = f if top == "depthscale" else f"depthscale/{top}/{rest}"
            assert installed in names, f
