"""The docs site typesets its formulas offline: MathJax is served from the site itself (installed from
the npm registry at build time by docs/hooks/mathjax.py), never loaded from a CDN."""

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]


def _config():
    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("tag:yaml.org,2002:python/name:", lambda loader, suffix, node: suffix)
    return yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=Loader)


def _hook():
    spec = importlib.util.spec_from_file_location("mathjax_hook", ROOT / "docs" / "hooks" / "mathjax.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_no_script_comes_from_another_site():
    config = _config()
    scripts = config["extra_javascript"]
    assert scripts and not [s for s in scripts if "://" in str(s)]
    assert "docs/hooks/mathjax.py" in config["hooks"]
    hook = _hook()
    assert f"{hook.TARGET}/tex-mml-chtml.js" in scripts  # where the hook puts MathJax's loader


@pytest.mark.slow  # npm and a site build; with Chromium, a page rendered with the network cut
def test_a_built_page_typesets_its_formulas_with_the_network_cut(tmp_path):
    chromium, npm = shutil.which("chromium"), shutil.which("npm")
    if chromium is None or npm is None:
        pytest.skip("needs chromium and npm")
    site = tmp_path / "site"
    cfg = tmp_path / "mkdocs.yml"  # the project's config, built on one derivation page only
    cfg.write_text(
        f"INHERIT: {ROOT / 'mkdocs.yml'}\ndocs_dir: {ROOT / 'docs'}\nsite_dir: {site}\nstrict: false\n"
        f"hooks:\n  - {ROOT / 'docs/hooks/mathjax.py'}\n"
        "plugins: []\nexclude_docs: |\n  hooks/\n  api/\nnav:\n  - Linear: theory/linear.md\n"
    )
    res = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(cfg)], capture_output=True, text=True
    )
    assert res.returncode == 0, res.stderr[-2000:]
    page = site / "theory" / "linear" / "index.html"
    assert "cdn." not in page.read_text() and (site / "javascripts/mathjax/tex-mml-chtml.js").is_file()
    profile = tmp_path / "profile"
    cmd = [
        chromium,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--proxy-server=127.0.0.1:9",  # every network request fails: only file:// loads
        "--proxy-bypass-list=<-loopback>",
        "--allow-file-access-from-files",
        f"--user-data-dir={profile}",
        "--virtual-time-budget=20000",
        "--dump-dom",
        page.as_uri(),
    ]
    dom = subprocess.run(cmd, capture_output=True, text=True, timeout=180, env={**os.environ, "HOME": str(tmp_path)})
    assert dom.returncode == 0, dom.stderr[-2000:]
    typeset = dom.stdout.count("<mjx-container")
    raw = dom.stdout.count('class="arithmatex"')  # every formula's span: the rendered ones hold an mjx-container
    assert raw > 10 and typeset >= raw, (typeset, raw)
