"""Report rendering: every claim in every format, MathML in the HTML, balanced LaTeX, safe writes."""

from __future__ import annotations

import base64
import io
import os
import re
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from matplotlib.figure import Figure
from PIL import Image
from tex_compile import compile_tex, needs_pdflatex

from depthscale.derivations.claims.verdicts import ClaimResult
from depthscale.derivations.report.entries import DrawnFigure, Table
from depthscale.derivations.report.render import ReportContext, format_value, write_report
from depthscale.theory.typeset import tex_escape

MATHML_NS = "http://www.w3.org/1998/Math/MathML"
# a link (navigation, not a request) into the documentation site the report is published in, or to
# the pages a report written elsewhere carries beside it
LINK = re.compile(r"\.\./(glossary/#[a-z_-]+|theory/[a-z]+/)|glossary\.html#[a-z_-]+|theory/[a-z]+\.html")


def tiny_png(colour="C0", w=3.0, h=2.0) -> bytes:
    fig = Figure(figsize=(w, h))
    ax = fig.subplots()
    ax.plot([1, 2, 4], [3, 1, 2], color=colour)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=50)
    return buf.getvalue()


class FakeDerivation:
    """Stands in for depthscale.theory.derivation objects: three fragments and a title."""

    def __init__(self, title="Equal steps: exponent ζ", fail=False):
        self.title = title
        self.fail = fail

    def to_markdown_fragment(self):
        return "1. $R_L = \\sum_k \\lambda_k \\omega_k (1 - \\gamma\\lambda_k/L)^{2L}$ (definition) [checked: sympy]"

    def to_html_fragment(self):
        if self.fail:
            raise RuntimeError("fragment failed")
        return (
            f'<ol><li><math xmlns="{MATHML_NS}" display="block"><msub><mi>R</mi><mi>L</mi></msub><mo>=</mo>'
            "<munder><mo>&#x2211;</mo><mi>k</mi></munder><msub><mi>&#x3bb;</mi><mi>k</mi></msub></math>"
            " (definition) [checked: sympy]</li></ol>"
        )

    def to_latex_fragment(self):
        return (
            "\\begin{enumerate}\n\\item $R_L = \\sum_k \\lambda_k \\omega_k (1 - \\gamma\\lambda_k/L)^{2L}$ "
            "(definition) [checked: sympy]\n\\end{enumerate}"
        )


CLAIMS = [
    ClaimResult(
        "linear_easy_exponent",
        "exponent in [ζ, 2ζ] for 100% of spectra & more",
        1.0,
        1.48512,
        None,
        "",
        "pass",
        "cost: $5 #1 {x} ~ y^2 \\ z",
    ),
    ClaimResult(
        "softmax-top2", "α ≈ 1 | on every spectrum", 1, float("nan"), None, "0.1", "fail", "<script>alert(1)</script>"
    ),
    ClaimResult(
        "gap_1_over_L", "gap decays near 1/L", None, np.float64(0.98), None, "0.15", "indicative", "small scale"
    ),
    ClaimResult("controls", "tied layers show no 1/L", None, None, None, "", "not run", "no runs"),
]


def make_context(**over) -> ReportContext:
    kw = dict(
        title="Depth scaling: synthetic",
        subtitle="records drawn from known laws",
        preset="smoke",
        created="2026-01-01T00:00:00+00:00",
        runtime_seconds=4000.0,
        summary=["First paragraph.", "Second one."],
        derivations=[FakeDerivation()],
        theory_tables=[
            Table(
                "Linear floors",
                ["(a,b)", "floor", "n"],
                [
                    ["(0,0)", 59.3712, 10240],
                    ["(1,1)", float("nan"), None],
                    ["(2,2)", 0.000123456, np.int64(7)],
                    ["tiny", 123456.0, True],
                ],
            )
        ],
        results_tables=[Table("Fits", ["series", "L0", "alpha"], [])],
        figures=[
            DrawnFigure("overview", "Loss against depth.", tiny_png("C0")),
            DrawnFigure("floors", "Floors.", None, "no floor was measured"),
            DrawnFigure("modes", "Per-mode loss.", tiny_png("C3", 4, 3)),
        ],
        claims=list(CLAIMS),
        notes=["A note."],
    )
    kw.update(over)
    return ReportContext(**kw)


class Collector(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags = []  # (tag, attrs dict)
        self.stack = []
        self.rows = []  # claim rows: (class, [cell texts])
        self._row = None
        self._cell = None
        self.in_claims = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append((tag, a))
        if tag == "table" and "claims" in (a.get("class") or ""):
            self.in_claims = True
        if self.in_claims and tag == "tr" and a.get("class"):
            self._row = (a["class"], [])
        if self._row is not None and tag == "td":
            self._cell = []

    def handle_endtag(self, tag):
        if tag == "table":
            self.in_claims = False
        if tag == "td" and self._cell is not None:
            self._row[1].append("".join(self._cell).strip())
            self._cell = None
        if tag == "tr" and self._row is not None:
            self.rows.append(self._row)
            self._row = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


@pytest.fixture
def report(tmp_path):
    ctx = make_context()
    paths = write_report(ctx, tmp_path / "out")
    texts = {k: Path(v).read_text(encoding="utf-8") for k, v in paths.items()}
    return ctx, tmp_path / "out", paths, texts


def test_paths_and_files(report):
    ctx, out, paths, _ = report
    assert paths == {"md": str(out / "report.md"), "html": str(out / "report.html"), "tex": str(out / "report.tex")}
    assert sorted(p.name for p in (out / "figures").iterdir()) == ["modes.png", "overview.png"]
    assert (out / "figures" / "overview.png").read_bytes() == ctx.figures[0].png
    assert not [p for p in out.rglob("*") if p.name.endswith(".tmp")]
    umask = os.umask(0o022)
    os.umask(umask)
    for p in ("report.md", "report.html", "report.tex", "figures/modes.png"):
        assert (out / p).stat().st_mode & 0o777 == 0o666 & ~umask  # an ordinary file, not a private temp file


def test_every_claim_and_verdict_in_markdown_and_latex(report):
    _, _, _, texts = report
    md_rows = [ln for ln in texts["md"].splitlines() if ln.startswith("| ") and "**" in ln]
    assert len(md_rows) == len(CLAIMS)
    for c, row in zip(CLAIMS, md_rows):
        assert row.startswith(f"| {c.id} |") and f"**{c.verdict}**" in row
        # a '|' inside a cell is escaped, so every row has exactly 8 column separators
        assert len(re.findall(r"(?<!\\)\|", row)) == 8
    tex_rows = [ln for ln in texts["tex"].splitlines() if "\\verdict{" in ln and not ln.startswith("\\newcommand")]
    assert len(tex_rows) == len(CLAIMS)
    for c, row in zip(CLAIMS, tex_rows):
        assert row.startswith(tex_escape(c.id) + " & ")
        assert row.endswith("{" + c.verdict + "} & " + tex_escape(c.reason) + " \\\\")
    assert "1 pass, 1 fail, 1 indicative, 1 not run" in texts["md"]
    assert "1 pass, 1 fail, 1 indicative, 1 not run" in texts["tex"]


def test_html_parses_with_mathml_and_coloured_claims(report):
    _, _, _, texts = report
    p = Collector()
    p.feed(texts["html"])
    p.close()
    maths = [a for t, a in p.tags if t == "math"]
    assert len(maths) == 3 + 1  # three notation equations and the derivation's
    assert all(a.get("xmlns") == MATHML_NS for a in maths)
    assert [t for t, _ in p.tags].count("mfrac") >= 2
    # each claim's rows under its group heading (a row of class "group"), in the table's order
    assert [(cls, cells[0], cells[5]) for cls, cells in p.rows if cls != "group"] == [
        ("v-" + c.verdict.replace(" ", "-"), c.id, c.verdict) for c in CLAIMS
    ]
    css = texts["html"][texts["html"].index("<style>") : texts["html"].index("</style>")]
    for v in ("pass", "fail", "indicative", "not-run"):
        assert re.search(rf"tr\.v-{v} td\.verdict \{{ background: #[0-9a-f]{{6}}", css)
    # the hostile detail text is shown, not executed
    assert not any(t == "script" for t, _ in p.tags)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in texts["html"]


def test_html_is_self_contained(report):
    _, _, _, texts = report
    p = Collector()
    p.feed(texts["html"])
    for tag, a in p.tags:
        assert tag not in ("script", "link", "iframe", "object", "embed", "base")
        for attr in ("src", "href", "srcset", "action", "data"):
            if attr in a:
                ok = a[attr].startswith("data:image/png;base64,") or a[attr].startswith("#")
                # a link (navigation, not a request) to a page of the docs site or beside the report
                ok |= tag == "a" and attr == "href" and bool(LINK.fullmatch(a[attr]))
                assert ok, (tag, attr, a[attr])
    assert "url(" not in texts["html"] and "@import" not in texts["html"]
    csp = [a for t, a in p.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"]
    assert csp and "default-src 'none'" in csp[0]["content"]


def test_embedded_images_decode_as_the_given_pngs(report):
    ctx, _, _, texts = report
    p = Collector()
    p.feed(texts["html"])
    srcs = [a["src"] for t, a in p.tags if t == "img"]
    drawn = [f.png for f in ctx.figures if f.png is not None]
    assert len(srcs) == len(drawn)
    for src, png in zip(srcs, drawn):
        raw = base64.b64decode(src.split(",", 1)[1], validate=True)
        assert raw == png
        img = Image.open(io.BytesIO(raw))
        img.load()
        assert img.format == "PNG" and img.size[0] > 50


def test_a_figure_not_drawn_is_named_and_an_empty_table_left_out(report):
    _, _, _, texts = report
    for fmt in ("md", "html", "tex"):
        t = texts[fmt]
        assert "The figure floors was not drawn: no floor was measured." in t, fmt
        assert "Table empty" not in t and "Fits" not in t and "Simulation results" not in t, fmt
        assert "Figure 2 (modes)" in t and "Figure 3" not in t, fmt  # only drawn figures are numbered
    assert "![Figure 1: overview](figures/overview.png)" in texts["md"]
    assert "figures/floors.png" not in texts["md"] + texts["tex"]


def test_numbers_have_four_significant_digits_and_nan_is_a_dash(report):
    _, _, _, texts = report
    assert "| (0,0) | 59.37 | 10240 |" in texts["md"]
    assert "| (1,1) | \u2014 | \u2014 |" in texts["md"]
    assert "| (2,2) | 0.0001235 | 7 |" in texts["md"]
    assert "| tiny | 1.235e+05 | yes |" in texts["md"]
    assert "(1,1) & --- & --- \\\\" in texts["tex"]
    assert "<td>59.37</td>" in texts["html"] and "<td>\u2014</td>" in texts["html"]
    cases = {
        0.1 + 0.2: "0.3",
        2 / 3: "0.6667",
        -1234.6: "-1235",
        1e300: "1e+300",
        float("-inf"): "-\u221e",
        np.float32(0.5): "0.5",
        (0.25, float("nan")): "0.25, \u2014",
        "text": "text",
        False: "no",
    }
    for value, text in cases.items():
        assert format_value(value) == text


def test_latex_escaping_by_hand():
    assert tex_escape(r"a_b & 50% $x$ #1 {y} ~ ^ \ [z]") == (
        r"a\_b \& 50\% \$x\$ \#1 \{y\} \textasciitilde{} \textasciicircum{} \textbackslash{} {[}z{]}"
    )
    assert tex_escape("ζ ≤ 2ζ — α≈1") == r"$\zeta$ $\leq$ 2$\zeta$ --- $\alpha$$\approx$1"


def _strip_escapes(tex: str) -> str:
    """Drop escaped characters (\\{, \\}, \\%, \\\\ ...) so that what remains can be counted."""
    return re.sub(r"\\[^A-Za-z]", "", tex)


def test_latex_structure_balances(report):
    _, out, _, texts = report
    tex = texts["tex"]
    body = _strip_escapes(tex)
    depth = 0
    for ch in body:
        depth += {"{": 1, "}": -1}.get(ch, 0)
        assert depth >= 0
    assert depth == 0
    assert "%" not in body  # an unescaped percent would comment out the rest of a line
    stack = []
    for kind, env in re.findall(r"\\(begin|end)\{([^}]*)\}", tex):
        if kind == "begin":
            stack.append(env)
        else:
            assert stack and stack.pop() == env
    assert stack == []
    assert tex.lstrip().startswith("\\documentclass") and tex.rstrip().endswith("\\end{document}")
    for pkg in ("graphicx", "longtable"):
        assert f"\\usepackage{{{pkg}}}" in tex
    for path in re.findall(r"\\includegraphics(?:\[[^]]*\])?\{([^}]*)\}", tex):
        assert (out / path).is_file()
    # dollars outside the fixed math come in pairs (escaped ones were removed above)
    assert body.count("$") % 2 == 0


@needs_pdflatex
def test_latex_compiles(report):
    _, out, _, _ = report
    compile_tex(out, "report.tex", runs=2)
    assert (out / "report.pdf").stat().st_size > 1000


def empty_headings(md: str) -> list[str]:
    """The Markdown headings with nothing under them before the next heading of their level or above."""
    lines = [ln for ln in md.splitlines() if ln.strip()]
    out = []
    for i, ln in enumerate(lines):
        if m := re.match(r"(#+) ", ln):
            nxt = lines[i + 1] if i + 1 < len(lines) else ""
            level = re.match(r"(#+) ", nxt)
            if nxt == "" or (level and len(level.group(1)) <= len(m.group(1))):
                out.append(ln)
    return out


def test_an_empty_report_has_no_empty_part(tmp_path):
    paths = write_report(ReportContext(title="Empty"), tmp_path)
    texts = {fmt: Path(path).read_text(encoding="utf-8") for fmt, path in paths.items()}
    for fmt, text in texts.items():
        for phrase in ("No derivations", "No theory tables", "No simulation results", "No figures", "No claims"):
            assert phrase not in text, (fmt, phrase)
        for part in ("Answer", "Findings", "Claims", "Summary", "Derivations", "Theory numbers", "More figures"):
            assert part not in text, (fmt, part)
    assert empty_headings(texts["md"]) == []
    assert re.findall(r"<h2[^>]*>([^<]*)", texts["html"]) == ["Notation"]
    assert re.findall(r"section\*\{([^}]*)\}", texts["tex"]) == ["Notation"]
    assert not (tmp_path / "figures").exists() and not (tmp_path / "answer.md").exists()


def test_a_full_report_has_no_empty_heading(report):
    _, _, _, texts = report
    assert empty_headings(texts["md"]) == []
    assert re.findall(r"<h2[^>]*>([^<]*)", texts["html"]) == [
        "Claims",
        "Summary",
        "Notation",
        "Derivations",
        "Theory numbers",
        "More figures",
        "Notes",
    ]


def listing(root: Path) -> list:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def test_file_in_the_way_raises_and_writes_nothing(tmp_path):
    blocker = tmp_path / "out"
    blocker.write_text("keep me")
    with pytest.raises(ValueError, match=r"^out=.*out'.*something else is in the way"):
        write_report(make_context(), blocker)
    assert blocker.read_text() == "keep me" and listing(tmp_path) == ["out"]
    with pytest.raises(ValueError, match=r"^out=.*is a file"):
        write_report(make_context(), blocker / "sub")
    assert listing(tmp_path) == ["out"]


def test_figures_entry_in_the_way_raises_and_writes_nothing(tmp_path):
    (tmp_path / "figures").write_text("not a directory")
    with pytest.raises(ValueError, match=r"^out=.*figures"):
        write_report(make_context(), tmp_path)
    assert listing(tmp_path) == ["figures"]
    (tmp_path / "figures").unlink()
    (tmp_path / "report.html").mkdir()
    with pytest.raises(ValueError, match=r"^out=.*report\.html"):
        write_report(make_context(), tmp_path)
    assert listing(tmp_path) == ["report.html"]


def test_rebuild_removes_its_own_undrawn_figures_only(tmp_path):
    ctx = make_context()
    write_report(ctx, tmp_path)
    assert (tmp_path / "figures" / "overview.png").is_file()
    (tmp_path / "figures" / "mine.png").write_bytes(b"user's file")  # not a name of the report's
    (tmp_path / "figures" / "floors.png").write_bytes(tiny_png())  # drawn by an earlier build
    undrawn = [replace(f, png=None, why_missing="gone") if f.name == "overview" else f for f in ctx.figures]
    write_report(make_context(figures=undrawn), tmp_path)
    left = listing(tmp_path / "figures")
    assert "overview.png" not in left and "floors.png" not in left
    assert "mine.png" in left and "modes.png" in left
    # a folder without a report is not a rebuild: a file of a figure's name there stays
    other = tmp_path / "fresh"
    (other / "figures").mkdir(parents=True)
    (other / "figures" / "floors.png").write_bytes(b"someone's")
    write_report(ctx, other)
    assert (other / "figures" / "floors.png").read_bytes() == b"someone's"


@pytest.mark.parametrize(
    "over, name",
    [
        ({"claims": CLAIMS[:1] + [{"id": "x", "verdict": "pass"}]}, r"claims\[1\]=.*: must be a ClaimResult"),
        ({"claims": CLAIMS[:1] + [CLAIMS[0]]}, r"claims\[1\]\.id"),
        ({"claims": [replace(CLAIMS[0], claim_id=" ")]}, r"claims\[0\]\.id"),
        ({"figures": [{"name": "x", "png": None}]}, r"figures\[0\]=.*: must be a DrawnFigure"),
        ({"figures": [DrawnFigure("x", "", None, "no"), DrawnFigure("x", "", None, "no")]}, r"figures\[1\]\.name"),
        ({"theory_tables": [{"title": "t", "columns": ["a"], "rows": []}]}, r"theory_tables\[0\]=.*: must be a Table"),
        ({"derivations": [object()]}, r"derivations\[0\]"),
        ({"runtime_seconds": -1.0}, r"ctx\.runtime_seconds"),
        ({"summary": [3]}, r"summary\[0\]"),
        ({"title": ""}, r"ctx\.title"),
    ],
)
def test_bad_context_raises_naming_the_value_and_writes_nothing(tmp_path, over, name):
    out = tmp_path / "out"
    with pytest.raises(ValueError, match=name):
        write_report(make_context(**over), out)
    assert not out.exists()


@pytest.mark.parametrize(
    "make, name",
    [
        (lambda: DrawnFigure("../escape", "", None, "no"), r"^name='../escape': must be a file-name-safe"),
        (lambda: DrawnFigure("x", "", b"GIF89a..."), r"^png=b'GIF89a..': must be PNG bytes or None"),
        (lambda: DrawnFigure("x", "", None), r"^why_missing='': must be the reason"),
        (lambda: Table("t", ["a", "b"], [[1]]), r"^rows\[0\]=\[1\]: must be a list of 2 cells"),
        (lambda: Table("t", [], []), r"^columns=\[\]: must be a non-empty list of column names"),
        (lambda: Table("t", ["a"], "rows"), r"^rows='rows': must be a list of rows"),
    ],
)
def test_a_bad_figure_or_table_is_refused_where_it_is_made(make, name):
    with pytest.raises(ValueError, match=name):
        make()


def test_not_a_context_or_path(tmp_path):
    with pytest.raises(ValueError, match="ctx"):
        write_report({"title": "x"}, tmp_path)
    with pytest.raises(ValueError, match="out"):
        write_report(make_context(), 3)
    assert listing(tmp_path) == []


def test_rewrite_replaces_and_a_failed_render_keeps_the_old_report(tmp_path):
    write_report(make_context(title="First"), tmp_path)
    write_report(make_context(title="Second"), tmp_path)
    old = {p: (tmp_path / p).read_bytes() for p in ("report.md", "report.html", "report.tex")}
    assert old["report.md"].startswith(b"# Second\n")
    with pytest.raises(RuntimeError, match="fragment failed"):
        write_report(make_context(title="Third", derivations=[FakeDerivation(fail=True)]), tmp_path)
    assert {p: (tmp_path / p).read_bytes() for p in old} == old


def test_a_failed_write_leaves_no_temporary_file_and_the_old_report_intact(tmp_path, monkeypatch):
    from depthscale.derivations.report import publish

    out = tmp_path / "report"
    write_report(make_context(title="First"), out)
    before = {p: (out / p).read_bytes() for p in listing(out) if (out / p).is_file()}
    real_write = publish._write

    def failing_write(path, data, mode):
        if path.name == "report.html":
            raise OSError("disk full")
        return real_write(path, data, mode)

    monkeypatch.setattr(publish, "_write", failing_write)
    with pytest.raises(OSError, match="disk full"):
        write_report(make_context(title="Second"), out)
    assert {p: (out / p).read_bytes() for p in listing(out) if (out / p).is_file()} == before
    assert listing(tmp_path) == listing(out.parent) and sorted(p.name for p in tmp_path.iterdir()) == ["report"]


class HeadedDerivation:
    """A derivation whose fragments bring their own heading and accept a heading level."""

    title = "Headed"

    def to_markdown_fragment(self, level=2):
        return "#" * level + " Headed\n\nbody-md"

    def to_html_fragment(self, level=2):
        return f'<section class="derivation"><h{level}>Headed</h{level}><p>body-html</p></section>'

    def to_latex_fragment(self):
        return "\\section{Headed}\nbody-tex"


def test_fragments_with_their_own_heading_are_not_given_a_second_one(tmp_path):
    paths = write_report(make_context(derivations=[HeadedDerivation(), FakeDerivation()]), tmp_path)
    md, html_text, tex = (Path(paths[f]).read_text(encoding="utf-8") for f in ("md", "html", "tex"))
    assert md.count("Headed") == 1 and "### Headed\n\nbody-md" in md  # asked for level 3, under "## Derivations"
    assert "### Equal steps: exponent ζ" in md  # the headless fragment gets its title as a heading
    assert html_text.count("Headed") == 1 and "<h3>Headed</h3>" in html_text
    assert html_text.count('<section class="derivation">') == 2
    assert tex.count("Headed") == 1 and "\\subsection*{Equal steps: exponent $\\zeta$}" in tex


def test_runtime_text():
    seconds = (None, 5.04, 59.97, 75, 119.7, 3599.6, 7380)
    assert [ReportContext(title="t", runtime_seconds=s).runtime_text() for s in seconds] == [
        "",
        "5.0 s",
        "1 min 00 s",
        "1 min 15 s",
        "2 min 00 s",
        "1 h 00 min",
        "2 h 03 min",
    ]


def figure_numbers(text: str) -> list[int]:
    """The figure numbers in the order they first appear in a rendered report."""
    seen: list[int] = []
    for n in re.findall(r"Figure (\d+)", text):
        if int(n) not in seen:
            seen.append(int(n))
    return seen


def test_figures_are_numbered_in_reading_order(tmp_path):
    # a finding's figure comes first in the text, so it is Figure 1 even if listed last; a second
    # finding naming it shows it no second time; a finding whose figure was not drawn is left out
    figures = [*make_context().figures, DrawnFigure("third", "Third.", tiny_png("C2"))]
    story = [
        {"title": "Third", "sentence": "The third.", "figure": "third"},
        {"title": "Floors", "sentence": "Floors meet.", "figure": "floors"},
        {"title": "Modes", "sentence": "Modes fall together.", "figure": "modes"},
        {"title": "Modes again", "sentence": "Once more.", "figure": "modes"},
        {"title": "No figure", "sentence": "Said in words.", "figure": ""},
    ]
    paths = write_report(make_context(figures=figures, story=story), tmp_path / "out")
    texts = {k: Path(v).read_text(encoding="utf-8") for k, v in paths.items()}
    md = texts["md"]
    assert md.index("Figure 1 (third)") < md.index("Figure 2 (modes)") < md.index("Figure 3 (overview)")
    assert md.index("### Modes\n") < md.index("Figure 2 (modes)") < md.index("### Modes again")
    assert md.count("figures/modes.png") == 1 and "### Floors" not in md and "### No figure" in md
    for fmt in ("md", "html", "tex"):
        assert figure_numbers(texts[fmt]) == [1, 2, 3], fmt
        assert "Floors meet" not in texts[fmt], fmt


def test_answer_md_is_the_reports_answer(tmp_path):
    answer = ["Alpha is 1.02 ± 0.05: inverse depth, indicative.", "The *control* passes (see `C_L`)."]
    out = tmp_path / "out"
    assert write_report(make_context(answer=answer), out)["answer"] == str(out / "answer.md")
    md = (out / "report.md").read_text(encoding="utf-8")
    shown = md.split("## Answer\n\n", 1)[1].split("\n## ", 1)[0]
    assert (out / "answer.md").read_text(encoding="utf-8") == shown.strip() + "\n" == "\n\n".join(answer) + "\n"
    # a rebuild without an answer drops the old answer.md
    assert "answer" not in write_report(make_context(), out)
    assert not (out / "answer.md").exists() and "## Answer" not in (out / "report.md").read_text(encoding="utf-8")


def test_a_rebuild_drops_the_figures_the_old_report_showed_and_this_one_does_not(tmp_path):
    write_report(make_context(), tmp_path)
    mine = tmp_path / "figures" / "mine.png"
    mine.write_bytes(tiny_png("C1"))  # the user's own file, named by no report
    write_report(make_context(figures=[DrawnFigure("overview", "Loss against depth.", tiny_png("C0"))]), tmp_path)
    assert sorted(p.name for p in (tmp_path / "figures").iterdir()) == ["mine.png", "overview.png"]


def test_a_long_reason_shows_its_estimate_and_decision_and_folds_the_rest_in_html(tmp_path):
    reason = "alpha = 0.12 ± 0.06 [t(2)]; lack of fit p = 1e-6 (at 1; at 0.8); would be fail, but 1 unconverged run"
    claim = ClaimResult("long-reason", "a claim", 1.0, 0.12, None, "± 0.2", "indicative", reason)
    paths = write_report(make_context(claims=[claim]), tmp_path / "out")
    md, html, tex = (Path(paths[k]).read_text(encoding="utf-8") for k in ("md", "html", "tex"))
    short = "alpha = 0.12 ± 0.06 [t(2)] … would be fail, but 1 unconverged run"
    assert short in md and "lack of fit" not in md.split("long-reason", 1)[1].split("\n", 1)[0]
    assert "would be fail" in tex and "1e-6" not in tex  # LaTeX: the short cell too (escaped)
    # HTML: the short cell opens to the whole reason
    cell = re.search(r'<details class="reason"><summary>(.*?)</summary>(.*?)</details>', html)
    assert cell and cell.group(1) == short and cell.group(2) == reason
