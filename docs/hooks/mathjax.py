"""mkdocs hook: MathJax served from the site itself, never from a CDN.

The formulas of the guides and derivations are typeset by MathJax (pymdownx.arithmatex, generic
mode). A page that loads MathJax from a CDN shows raw ``$...$`` offline. At build time this hook
installs a pinned MathJax from the npm registry into ``build/mathjax`` (once; later builds reuse
it) and copies its ``es5`` folder (the loader and the fonts it fetches relative to itself) to
``javascripts/mathjax/`` in the built site, where mkdocs.yml's ``extra_javascript`` points.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / "build" / "mathjax"
MATHJAX = "mathjax@3.2.2"
TARGET = "javascripts/mathjax"  # inside the site: extra_javascript names javascripts/mathjax/tex-mml-chtml.js


def install(cache: Path = CACHE) -> Path:
    """The ``es5`` folder of the pinned MathJax, installed by npm into ``cache`` if not there yet."""
    from mkdocs.exceptions import PluginError  # here, so the tests read this module without mkdocs

    es5 = cache / "node_modules" / "mathjax" / "es5"
    if not (es5 / "tex-mml-chtml.js").is_file():
        npm = shutil.which("npm")
        if npm is None:
            raise PluginError(
                f"npm is not installed: the docs serve MathJax themselves ({MATHJAX} from the npm registry)"
            )
        cache.mkdir(parents=True, exist_ok=True)
        cmd = [npm, "install", "--no-save", "--no-audit", "--no-fund", "--prefix", str(cache), MATHJAX]
        res = subprocess.run(cmd, capture_output=True, text=True)
        if res.returncode != 0 or not (es5 / "tex-mml-chtml.js").is_file():
            raise PluginError(f"{' '.join(cmd)} failed: {res.stderr.strip()[-500:]}")
    return es5


def on_config(config):
    install()
    return config


def on_post_build(config):
    shutil.copytree(install(), Path(config["site_dir"]) / TARGET, dirs_exist_ok=True)
