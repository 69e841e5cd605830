"""A report written outside the documentation site stands alone (issue 50): every relative link of its
report.md and report.html leads to a file in its folder, and every anchor to a heading there; the
pages it carries (glossary, theory pages) link only to each other. A report folder inside a docs
site links the site's own pages, as before."""

import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote

import pytest
import sympy as sp

from depthscale.derivations.claims.verdicts import ClaimResult
from depthscale.derivations.report.render import ReportContext, write_report
from depthscale.theory.derivation import Derivation, Step

ROOT = Path(__file__).resolve().parents[2]
MD_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")


def _toy_context() -> ReportContext:
    """A small report that links glossary terms and one registered derivation's page (a toy chain
    under the registered name ``clt``: its page is rendered from it, in no time)."""
    x = sp.Symbol("x", positive=True)
    toy = Derivation(
        "Toy central limit", "A toy.", [(x, "a number", "$x > 0$")],
        [Step("s", 2 * x, x + x, "Add.", transforms=("expand",))], "The loss $R_L$ is $2x$.", name="clt",
    )  # fmt: skip
    claims = [
        ClaimResult("C1", "R_L falls with inverse depth", (0.8, 1.2), 0.97, 0.01, "t-test", "pass", "decided"),
        ClaimResult("C2", "A_L - C_L stays flat", (0.8, 1.2), None, None, "t-test", "indicative", "one seed"),
    ]
    return ReportContext(
        title="Toy", preset="smoke", summary=["Two seeds decide, one seed is indicative; see the store."],
        claims=claims, derivations=[toy],
    )  # fmt: skip


class _Anchors(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids, self.hrefs = set(), []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "a" and a.get("href"):
            self.hrefs.append(a["href"])


def _slug(heading: str) -> str:  # Python-Markdown's toc slugify, as MkDocs gives anchors (independent copy)
    import unicodedata

    text = unicodedata.normalize("NFKD", heading).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "", text).strip().lower())


def _md_anchors(path: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
    return {_slug(h) for h in re.findall(r"^#{1,6} (.+?)\s*$", text, flags=re.M)}


def _html(path: Path) -> _Anchors:
    p = _Anchors()
    p.feed(path.read_text(encoding="utf-8"))
    return p


def _dead_links(page: Path, folder: Path) -> list[str]:
    """Relative links of ``page`` (Markdown or HTML) that lead to no file of ``folder``, or to no
    anchor of the file they name."""
    hrefs = _html(page).hrefs if page.suffix == ".html" else MD_LINK.findall(page.read_text(encoding="utf-8"))
    dead = []
    for href in hrefs:
        if re.match(r"[a-z]+:", href):  # an absolute address (none is expected in a bundled report)
            dead.append(href)
            continue
        target, _, anchor = unquote(href).partition("#")
        path = (page.parent / target).resolve() if target else page
        if not path.is_file() or folder.resolve() not in path.parents:
            dead.append(href)
        elif anchor:
            ids = _html(path).ids if path.suffix == ".html" else _md_anchors(path)
            if anchor not in ids:
                dead.append(href)
    return dead


def test_every_link_of_a_report_written_outside_the_docs_resolves_in_its_folder(tmp_path):
    out = tmp_path / "report"
    write_report(_toy_context(), out)
    md, html = out / "report.md", out / "report.html"
    links = MD_LINK.findall(md.read_text(encoding="utf-8"))
    assert any(h.startswith("glossary.md#") for h in links) and "theory/clt.md" in links, links
    assert any(h.startswith("glossary.html#") for h in _html(html).hrefs)
    assert _dead_links(md, out) == [] and _dead_links(html, out) == []
    # the pages it carries lead nowhere outside the folder either
    for page in ("glossary.md", "glossary.html", "theory/clt.md", "theory/clt.html"):
        assert (out / page).is_file(), page
        assert _dead_links(out / page, out) == [], page


def test_the_bundled_glossary_is_the_documentations(tmp_path):
    # the package ships a copy of docs/glossary.md (a wheel holds no docs folder): the two stay equal
    shipped = ROOT / "derivations" / "report" / "templates" / "glossary.md"
    assert shipped.read_text(encoding="utf-8") == (ROOT / "docs" / "glossary.md").read_text(encoding="utf-8"), (
        "copy docs/glossary.md over derivations/report/templates/glossary.md"
    )
    out = tmp_path / "report"
    write_report(_toy_context(), out)
    docs = _md_anchors(ROOT / "docs" / "glossary.md")
    assert _md_anchors(out / "glossary.md") == docs and docs <= _html(out / "glossary.html").ids


def test_a_report_in_a_docs_site_links_the_sites_pages_and_carries_none(tmp_path):
    site = tmp_path / "docs"
    (site / "theory").mkdir(parents=True)
    (site / "glossary.md").write_text((ROOT / "docs" / "glossary.md").read_text(encoding="utf-8"))
    (site / "theory" / "clt.md").write_text("# Central limit\n")
    out = site / "toy-report"
    write_report(_toy_context(), out)
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "](../glossary.md#" in md and "](../theory/clt.md)" in md
    assert '"../glossary/#' in (out / "report.html").read_text(encoding="utf-8")
    assert not (out / "glossary.md").exists() and not (out / "theory").exists()
    for href in MD_LINK.findall(md):  # every one resolves in the site's tree
        target, _, anchor = href.partition("#")
        assert (out / target).is_file(), href
        if anchor:
            assert anchor in _md_anchors(out / target), href


@pytest.mark.parametrize("links", ["site", "bundle"])
def test_a_rebuild_in_the_other_place_keeps_no_stale_page(tmp_path, links):
    out = tmp_path / "report"
    write_report(_toy_context(), out, links="bundle")
    write_report(_toy_context(), out, links=links)
    assert (out / "glossary.md").exists() == (links == "bundle")
