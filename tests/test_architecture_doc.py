"""docs/architecture.md names every module of the three packages, and only modules that exist."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
PACKAGES = ("theory", "sims", "derivations")


def _modules() -> set:
    return {
        p.relative_to(ROOT).as_posix()
        for pkg in PACKAGES
        for p in (ROOT / pkg).rglob("*.py")
        if p.name != "__init__.py"
    }


def _named() -> set:
    return set(re.findall(r"`((?:theory|sims|derivations)/[\w/]+\.py)`", DOC.read_text(encoding="utf-8")))


def test_every_module_is_in_the_architecture_table():
    assert sorted(_modules() - _named()) == []


def test_every_module_the_table_names_exists():
    assert sorted(_named() - _modules()) == []
