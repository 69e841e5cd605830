"""The HTML report in a real browser: headless Chromium loads it, sees MathML and decodes every figure."""

from __future__ import annotations

import base64
import html
import io
import json
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import matplotlib.image as mpimg
import numpy as np
import pytest
from PIL import Image

from depthscale.derivations.claims.verdicts import ClaimResult
from depthscale.derivations.report import figures
from depthscale.derivations.report.entries import Table, draw_entry
from depthscale.derivations.report.render import ReportContext, write_report

MATHML_NS = "http://www.w3.org/1998/Math/MathML"
CHROMIUM = shutil.which("chromium")

# Written into the page on load: what the browser itself made of the document.
PROBE = (
    """
<script>
window.addEventListener("load", function () {
  var maths = Array.prototype.slice.call(document.getElementsByTagNameNS("%s", "math"));
  var imgs = Array.prototype.slice.call(document.images);
  var external = performance.getEntriesByType("resource").map(function (e) { return e.name; })
      .filter(function (n) { return n.indexOf("data:") !== 0; });
  var out = {
    ready: document.readyState,
    math: maths.length,
    mathml_elements: maths.filter(function (m) {
        return typeof MathMLElement !== "undefined" && m instanceof MathMLElement; }).length,
    math_boxes: maths.filter(function (m) { var r = m.getBoundingClientRect(); return r.width > 0 && r.height > 0; }).length,
    images: imgs.length,
    decoded: imgs.filter(function (i) { return i.complete && i.naturalWidth > 0; }).length,
    sizes: imgs.map(function (i) { return [i.naturalWidth, i.naturalHeight]; }),
    claim_rows: document.querySelectorAll("table.claims tbody tr:not(.group)").length,  // one header row per claim group
    external: external
  };
  var pre = document.createElement("pre");
  pre.id = "probe";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>
"""
    % MATHML_NS
)

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (Debian package 'chromium')")


class FakeDerivation:
    title = "Ensemble identity"

    def to_markdown_fragment(self):
        return "$$R_L = \\frac{1}{L^2} \\mathbf{1}^T M \\mathbf{1}$$"

    def to_html_fragment(self):
        return (
            f'<math xmlns="{MATHML_NS}" display="block"><msub><mi>R</mi><mi>L</mi></msub><mo>=</mo>'
            "<mfrac><mrow><msup><mn>1</mn><mi>T</mi></msup><mi>M</mi><mn>1</mn></mrow>"
            "<msup><mi>L</mi><mn>2</mn></msup></mfrac></math>"
        )

    def to_latex_fragment(self):
        return "\\[R_L = \\frac{1}{L^2} \\mathbf{1}^T M \\mathbf{1}\\]"


def synthetic_records():
    out = []
    for model, task, a, b, (L0, c, alpha) in [
        ("linear", "easy-exact", 2.0, 1.0, (0.0, 0.8, 1.5)),
        ("softmax", "topk", 0.5, 0.5, (0.3, 0.4, 1.0)),
    ]:
        for L in (1, 2, 4, 8, 16):
            for s in (0, 1):
                R = L0 + c * L**-alpha + 0.005 * (s - 0.5)
                C = L0 + 0.1 * c / L
                out.append(
                    {
                        "config": {
                            "task": {"task": task, "k": 2, "a": a, "b": b, "d": 8, "P": 64},
                            "model": {"model": model, "depth": L},
                        },
                        "seed": s,
                        "status": "ok",
                        "converged": True,
                        "final_loss": R,
                        "final_loss_se": 0.01,
                        "A_L": C + L * (R - C),
                        "C_L": C if L > 1 else None,
                    }
                )
    return out


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("browser") / "report"
    recs = synthetic_records()
    figs = [
        draw_entry(figures.figure_entry("overview", recs, {("linear",): {"L0": 0.0, "c": 0.8, "alpha": 1.5}})),
        draw_entry(figures.figure_entry("decomposition", recs)),
        draw_entry(figures.figure_entry("mode_curves", [])),
    ]  # not drawn: stated instead
    assert [f.png is None for f in figs] == [False, False, True]
    claims = [
        ClaimResult(f"c{i}", f"claim {i}", 1.0, 1.0 + i / 10, None, "0.1", v, "")
        for i, v in enumerate(("pass", "fail", "indicative", "not run"))
    ]
    ctx = ReportContext(
        title="Browser check",
        derivations=[FakeDerivation()],
        figures=figs,
        claims=claims,
        results_tables=[Table("R_L", ["L", "R_L"], [[1, 1.1], [2, 0.7]])],
    )
    paths = write_report(ctx, out)
    return ctx, Path(paths["html"])


def chromium(args, tmp: Path, timeout=120):
    profile = tmp / "profile"
    profile.mkdir(exist_ok=True)
    cmd = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        *args,
    ]
    env = {**os.environ, "HOME": str(tmp)}  # keep the browser's caches inside the test's directory
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)


class Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def test_python_side_every_data_uri_is_a_png(report):
    ctx, page = report
    p = Tags()
    p.feed(page.read_text(encoding="utf-8"))
    uris = [a["src"] for t, a in p.tags if t == "img"]
    assert len(uris) == sum(f.png is not None for f in ctx.figures) == 2
    for uri in uris:
        assert uri.startswith("data:image/png;base64,")
        raw = base64.b64decode(uri.split(",", 1)[1], validate=True)
        arr = mpimg.imread(io.BytesIO(raw), format="png")
        assert arr.ndim == 3 and arr.shape[0] > 100 and arr.shape[1] > 100
        assert float(np.std(arr[..., :3])) > 0.01  # not a blank image


def test_chromium_loads_the_page_sees_mathml_and_decodes_every_figure(report, tmp_path):
    ctx, page = report
    text = page.read_text(encoding="utf-8")
    # The page forbids scripts; a copy with the probe allows exactly inline scripts, nothing external.
    probe_page = page.with_name("probe.html")
    relaxed = text.replace("default-src 'none';", "default-src 'none'; script-src 'unsafe-inline';", 1)
    assert relaxed != text
    probe_page.write_text(relaxed.replace("</body>", PROBE + "</body>", 1), encoding="utf-8")
    try:
        res = chromium(["--virtual-time-budget=10000", "--dump-dom", probe_page.as_uri()], tmp_path)
    finally:
        probe_page.unlink()
    assert res.returncode == 0, res.stderr[-2000:]
    m = re.search(r'<pre id="probe">(.*?)</pre>', res.stdout, re.S)
    assert m, "the probe did not run: " + res.stdout[-500:]
    got = json.loads(html.unescape(m.group(1)))

    p = Tags()
    p.feed(text)
    n_math = sum(1 for t, _ in p.tags if t == "math")
    sizes = []
    for f in ctx.figures:
        if f.png is not None:
            sizes.append(list(Image.open(io.BytesIO(f.png)).size))
    assert got["ready"] == "complete"
    assert n_math == 4 and got["math"] == n_math  # three notation equations and the derivation
    assert got["mathml_elements"] == n_math  # parsed as MathML, not as unknown HTML tags
    assert got["math_boxes"] == n_math  # and laid out with a size
    assert got["images"] == len(sizes) and got["decoded"] == len(sizes)
    assert got["sizes"] == sizes
    assert got["claim_rows"] == len(ctx.claims)
    assert got["external"] == []


def test_chromium_screenshot_of_the_unmodified_page_is_not_blank(report, tmp_path):
    _, page = report
    shot = tmp_path / "shot.png"
    res = chromium(["--window-size=1000,2400", "--hide-scrollbars", f"--screenshot={shot}", page.as_uri()], tmp_path)
    assert res.returncode == 0, res.stderr[-2000:]
    img = np.asarray(Image.open(shot).convert("RGB"), dtype=float)
    assert img.shape[:2] == (2400, 1000)
    dark = (img.sum(axis=2) < 600).mean()  # text, lines and plot marks
    colourful = (img.max(axis=2) - img.min(axis=2) > 60).mean()  # plot colours and verdict cells
    assert 0.002 < dark < 0.5 and colourful > 0.002
