"""The default test run collects the doctests of the three packages once each, under their package names."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow  # a second pytest process that imports every module (the doctests themselves run by default)
def test_each_module_once_under_its_package_name():
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-n",
            "0",  # in one process: the ids as plain collection lists them
            "-p",
            "no:cacheprovider",
            "theory",
            "sims",
            "derivations",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    ids = [line for line in res.stdout.splitlines() if "::" in line]
    assert len(ids) == len(set(ids)) and len(ids) > 100
    modules = {}
    for item in ids:
        path, name = item.split("::", 1)
        parts = list(Path(path).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        module = ".".join(["depthscale", *parts])
        assert name == module or name.startswith(module + "."), item  # the installed name, not theory.x
        modules.setdefault(path, set()).add(module)
    # every source file with an example is there
    with_examples = {
        str(p.relative_to(ROOT))
        for d in ("theory", "sims", "derivations")
        for p in (ROOT / d).rglob("*.py")
        if ">>> " in p.read_text(encoding="utf-8")
    }
    assert with_examples <= set(modules), sorted(with_examples - set(modules))
