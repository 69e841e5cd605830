"""Which code wrote a run: the package version and, in a git checkout, the commit (``+dirty`` when
the working tree had uncommitted changes). Stamped on every record by the sweep client."""

from __future__ import annotations

import functools
import os
import subprocess
from pathlib import Path


@functools.lru_cache(maxsize=1)
def code_version() -> str:
    """``"0.2.0"`` or ``"0.2.0+g1a2b3c4"`` / ``"0.2.0+g1a2b3c4.dirty"`` from a git checkout."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        base = version("depthscale")
    except PackageNotFoundError:
        base = "unknown"
    here = Path(__file__).resolve().parent
    # `git status` would otherwise refresh the index (a write) of a checkout that may be the user's
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}

    def git(*args) -> str:
        return subprocess.run(
            ["git", *args], cwd=here, env=env, capture_output=True, text=True, timeout=10, check=True
        ).stdout.strip()

    try:
        commit = git("rev-parse", "--short=10", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return base
    return f"{base}+g{commit}" + (".dirty" if dirty else "")
