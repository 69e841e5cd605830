"""numba's cache of the kernels lives outside the installed package (a per-user folder by version)."""

import ast
import importlib
import importlib.metadata
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
KERNEL_MODULES = ("softmax_kernels", "linear_kernels", "tasks", "temperature_heads")


def _package_dirs() -> list[Path]:
    import depthscale

    return [Path(p).resolve() for name in ("theory", "sims", "derivations") for p in getattr(depthscale, name).__path__]


def _cached_kernels(module) -> dict:
    from numba.core.caching import NullCache
    from numba.core.dispatcher import Dispatcher

    return {
        name: obj._cache.cache_path
        for name, obj in vars(module).items()
        if isinstance(obj, Dispatcher) and not isinstance(obj._cache, NullCache)
    }


def test_no_module_imports_numba_but_through_the_jit_module():
    # a kernel module importing numba itself would get numba's default cache, beside its source
    offenders = []
    for folder in ("depthscale", "theory", "sims", "derivations"):
        for path in (ROOT / folder).rglob("*.py"):
            if path == ROOT / "sims" / "jit.py":
                continue
            for node in ast.parse(path.read_text()).body:  # module level only; lazy imports in functions are fine
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
                if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "numba":
                    names = [node.module]
                if any(n.split(".")[0] == "numba" for n in names):
                    offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []


@pytest.mark.parametrize("module", KERNEL_MODULES)
def test_every_cached_kernel_caches_outside_the_package(module):
    mod = importlib.import_module(f"depthscale.sims.{module}")
    paths = _cached_kernels(mod)
    assert paths, f"{module} has no cached kernel"
    packages = _package_dirs()
    folder = Path(os.environ["NUMBA_CACHE_DIR"]).resolve()
    for name, path in paths.items():
        path = Path(path).resolve()
        assert not any(path.is_relative_to(p) for p in packages), (name, path)
        assert path.is_relative_to(folder), (name, path)


SHOW = (
    "{first}from depthscale.sims import softmax_kernels as k; "
    "print(k.core_pass._cache.cache_path); import os; print(os.environ['NUMBA_CACHE_DIR'])"
)


def _cache_path_in_fresh_process(tmp_path, env_extra: dict, first: str = "") -> list[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "XDG_CACHE_HOME")}
    env.update(HOME=str(tmp_path / "home"), **env_extra)
    out = subprocess.run(
        [sys.executable, "-c", SHOW.format(first=first)],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


@pytest.mark.parametrize("first", ["", "import numba; "], ids=["depthscale-first", "numba-imported-first"])
def test_the_default_cache_is_the_users_cache_folder_keyed_by_version(tmp_path, first):
    version = importlib.metadata.version("depthscale")
    expected = tmp_path / "xdg" / "depthscale" / version / "numba"
    kernel, folder = _cache_path_in_fresh_process(tmp_path, {"XDG_CACHE_HOME": str(tmp_path / "xdg")}, first)
    assert Path(folder) == expected
    assert Path(kernel).is_relative_to(expected)


def test_without_xdg_the_cache_is_under_home(tmp_path):
    version = importlib.metadata.version("depthscale")
    if sys.platform in ("win32", "darwin"):
        pytest.skip("the XDG layout is the Linux and Unix one")
    _, folder = _cache_path_in_fresh_process(tmp_path, {})
    assert Path(folder) == tmp_path / "home" / ".cache" / "depthscale" / version / "numba"


def test_a_users_numba_cache_dir_is_kept(tmp_path):
    mine = tmp_path / "mine"
    kernel, folder = _cache_path_in_fresh_process(tmp_path, {"NUMBA_CACHE_DIR": str(mine)})
    assert Path(folder) == mine
    assert Path(kernel).is_relative_to(mine)
