"""A report's links into the documentation: glossary terms where they first appear, one line per
derivation linking its theory page, addresses that exist in the docs and on the site."""

from __future__ import annotations

import re
from pathlib import Path

import sympy as sp
import yaml
from markdown.extensions.toc import slugify
from markupsafe import Markup
from test_render import make_context

from depthscale.derivations.report.links import TERMS, glossary_linker
from depthscale.derivations.report.render import render_report
from depthscale.theory.derivation import Derivation, Step
from depthscale.theory.derivation_index import BUILDERS

ROOT = Path(__file__).resolve().parents[2]
MD_LINK = re.compile(r"\[([^\]]*)\]\(\.\./glossary\.md#([^)]*)\)")
HTML_LINK = re.compile(r'<a class="term" href="\.\./glossary/#([^"]*)">([^<]*)</a>')


def test_every_term_links_a_heading_of_the_glossary():
    text = (ROOT / "docs" / "glossary.md").read_text(encoding="utf-8")
    # the anchors MkDocs gives the headings (its toc extension's default slugify)
    anchors = {slugify(h, "-") for h in re.findall(r"^#+ (.+)$", text, re.M)}
    assert sorted({a for a, _ in TERMS} - anchors) == []


def test_every_derivation_has_its_theory_page_on_the_site():
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    # the HTML report links ../theory/NAME/: the site's address of a page while directory URLs are on
    assert config.get("use_directory_urls", True) is True
    nav = yaml.safe_dump(config["nav"])
    for name in BUILDERS:
        assert (ROOT / "docs" / "theory" / f"{name}.md").is_file() and f"theory/{name}.md" in nav, name


def test_the_linker_links_each_term_once_where_it_first_appears():
    link = glossary_linker("md")
    assert link("Two indicative, one decided.") == (
        "Two [indicative](../glossary.md#indicative), one [decided](../glossary.md#decided)."
    )
    # not again, not inside a word, a code span, a formula or a link; a longer phrase first
    assert link("indicative; undecided `C_L` $C_L$ [C_L](x) and the would-be verdict") == (
        "indicative; undecided `C_L` $C_L$ [C_L](x) and the [would-be verdict](../glossary.md#would-be-verdict)"
    )
    assert link("C_L and C_L") == "[C_L](../glossary.md#c_l) and C_L"
    html = glossary_linker("html")
    got = html("a <b> & single head; single-temperature heads")
    assert isinstance(got, Markup)
    assert (
        got
        == 'a &lt;b&gt; &amp; <a class="term" href="../glossary/#single-head">single head</a>; single-temperature heads'
    )
    # Markup is HTML already: its tags stay as they are
    assert html(Markup("<code>A_L</code> A_L")) == '<code>A_L</code> <a class="term" href="../glossary/#a_l">A_L</a>'
    assert glossary_linker("tex")("indicative") == "indicative"


def test_a_report_links_each_term_once_first_in_fixed_text_and_findings(tmp_path):
    story = [
        {"title": "Shared error", "sentence": "C_L against depth, and the convex floor.", "figure": "modes"},
        {"title": "Again", "sentence": "C_L once more.", "figure": ""},
    ]
    answer = ["Two indicative results (seeds too few)."]
    texts = render_report(make_context(story=story, answer=answer))
    md, html = texts["md"], texts["html"]
    md_links = MD_LINK.findall(md)
    html_links = HTML_LINK.findall(html)
    for links in ([a for _, a in md_links], [a for a, _ in html_links]):
        assert len(links) == len(set(links))  # each term once
        assert {"preset", "c_l", "convex-floor", "verdicts", "indicative", "would-be-verdict", "r_l"} <= set(links)
    # the answer stays plain (it is also answer.md); a term is linked where it first appears after it
    assert texts["answer"] == answer[0] + "\n" and "[indicative]" not in md.split("## Findings")[0]
    assert md.index("[C_L](../glossary.md#c_l) against depth") < md.index("C_L once more")
    assert md.index("[Verdicts](../glossary.md#verdicts): 1 pass, 1 fail, 1 indicative, 1 not run.") > 0
    assert '<a class="term" href="../glossary/#c_l">C_L</a> against depth' in html
    assert "glossary" not in texts["tex"]
    # every link in the Markdown leads to a heading of the glossary
    glossary = (ROOT / "docs" / "glossary.md").read_text(encoding="utf-8")
    anchors = {slugify(h, "-") for h in re.findall(r"^#+ (.+)$", glossary, re.M)}
    assert {a for _, a in md_links} <= anchors


def toy(name: str) -> Derivation:
    x = sp.Symbol("x", positive=True)
    d = Derivation(
        r"Toy $\zeta$",
        "A toy.",
        [(x, "a number", "$x > 0$")],
        [Step("Doubling", 2 * x, x + x, "Add.", transforms=("expand",))],
        r"$2x = x + x$: a sum of $1.5$ and more. The rest of the conclusion.",
    )
    d.name = name
    return d


def test_a_registered_derivation_is_one_line_linking_its_theory_page():
    texts = render_report(make_context(derivations=[toy("clt")]))
    md, html, tex = texts["md"], texts["html"], texts["tex"]
    line = r"- [Toy $\zeta$](../theory/clt.md): $2x = x + x$: a sum of $1.5$ and more. (1 steps machine-checked, all passed)"
    assert line in md.splitlines()
    assert "The rest of the conclusion" not in md and "Doubling" not in md  # the chain lives on the page
    assert '<a href="../theory/clt/">Toy <math' in html and "Doubling" not in html
    assert "docs/theory/clt.md, depthscale derive clt" in tex and "Doubling" not in tex
    # a derivation that is no registered page keeps its result typeset in the report
    other = render_report(make_context(derivations=[toy("")]))["md"]
    assert "../theory/" not in other and "Toy" in other
