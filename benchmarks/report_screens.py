"""How long each committed report is, in screens of a 1280 x 800 browser window (headless Chromium).

For each docs/*-report/report.html: the height of the whole page, of the page cut after its first
figure, and of the page cut before its claims section, each divided by 800 px. A reader should meet
the answer and its first figure on the first two screens and finish the text before the claims in
under 12. The page is rendered at 1280 px wide into a tall window and its height read as the last
row that is not background; a screenshot of the first two screens is kept beside the numbers.

    python benchmarks/report_screens.py [--out DIR]      # needs chromium on PATH and Pillow
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
WIDTH, SCREEN, TALL = 1280, 800, 16000


def _render(html: Path, png: Path, height: int) -> Image.Image:
    subprocess.run(
        [
            "chromium",
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            f"--window-size={WIDTH},{height}",
            f"--screenshot={png}",
            html.as_uri(),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    return Image.open(png).convert("RGB")


def _height(shot: Image.Image) -> int:
    """Last pixel row that differs from the page background (the bottom-right pixel's grey level)."""
    img = np.asarray(shot.convert("L"))
    rows = np.flatnonzero(np.any(np.abs(img.astype(int) - int(img[-1, -1])) > 8, axis=1))
    return int(rows[-1]) + 1 if rows.size else 0


def _cut(text: str, at: int) -> str:
    return text[:at] + "\n</body></html>\n"


def measure(report: Path, out: Path) -> dict:
    text = report.read_text("utf-8")
    tmp = Path(tempfile.mkdtemp(dir=report.parent))  # beside the report: its figures/ resolve
    try:
        pages = {"whole": text}
        if (m := re.search(r"<img[^>]*>", text)) is not None:
            pages["to first figure"] = _cut(text, m.end())
        if (m := re.search(r'<h2 id="claims"', text)) is not None:
            pages["before claims"] = _cut(text, m.start())
        res = {}
        for name, page in pages.items():
            f = tmp / f"{name.replace(' ', '-')}.html"
            f.write_text(page, "utf-8")
            img = _render(f, tmp / "shot.png", TALL)
            h = _height(img)
            res[name] = h / SCREEN if h < TALL else float("inf")  # taller than the window: more than TALL
            if name == "whole":
                img.crop((0, 0, WIDTH, 2 * SCREEN)).save(out / f"{report.parent.name}-first-two-screens.png")
        return res
    finally:
        shutil.rmtree(tmp)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="report-screens", help="folder for the first-two-screens screenshots")
    args = ap.parse_args(argv)
    if shutil.which("chromium") is None:
        print("chromium: not found on PATH", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    print(
        f"{'report':28s} {'whole':>7s} {'to first figure':>16s} {'before claims':>14s}   (screens of {WIDTH}x{SCREEN})"
    )
    for report in sorted(ROOT.glob("docs/*-report/report.html")):
        r = measure(report, out)
        cells = [f"{r.get(k, float('nan')):.1f}" for k in ("whole", "to first figure", "before claims")]
        print(f"{report.parent.name:28s} {cells[0]:>7s} {cells[1]:>16s} {cells[2]:>14s}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
