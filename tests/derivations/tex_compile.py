"""Compiling a LaTeX document with pdflatex, for the tests that check the renderers' LaTeX output."""

import shutil
import subprocess

import pytest

needs_pdflatex = pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")


def compile_tex(cwd, name, runs=1):
    """Run pdflatex ``runs`` times on ``cwd/name`` (non-interactive, stopping at the first error),
    asserting that every run succeeds; returns the log printed by the last run."""
    cmd = ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", name]
    for _ in range(runs):
        res = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=300)
        assert res.returncode == 0, res.stdout[-2000:]
    return res.stdout
