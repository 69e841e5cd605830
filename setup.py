"""The package list, found rather than listed: ``depthscale`` and every package under its four folders
(pyproject.toml maps each folder to its import name), so a new study folder needs no line here;
its entry point in pyproject.toml is its one registry line."""

from setuptools import find_packages, setup

FOLDERS = ("theory", "sims", "derivations", "studies")
packages = ["depthscale"] + [f"depthscale.{f}" for f in FOLDERS]
packages += [f"depthscale.{f}.{sub}" for f in FOLDERS for sub in find_packages(f)]
setup(packages=packages)
