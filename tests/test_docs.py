"""The documentation site's configuration and hooks (the build itself runs in CI: mkdocs build --strict)."""

import importlib
import importlib.util
import re
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]


def _hook(name):
    spec = importlib.util.spec_from_file_location(f"docs_hook_{name}", ROOT / "docs" / "hooks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _nav_pages(nav) -> list:
    out = []
    for item in nav:
        value = next(iter(item.values())) if isinstance(item, dict) else item
        out += _nav_pages(value) if isinstance(value, list) else [value]
    return out


def test_every_guide_and_derivation_page_is_in_the_nav():
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    pages = _nav_pages(config["nav"])
    on_disk = [p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").glob("*.md")]
    for folder in ("theory", "studies"):
        on_disk += [p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs" / folder).glob("*.md")]
    assert sorted(set(on_disk) - set(pages)) == []
    assert all((ROOT / "docs" / p).is_file() for p in pages)
    assert config["strict"] is True


def test_the_staged_tree_is_the_installed_layout(tmp_path):
    stage = _hook("api_pages").stage_packages(ROOT, tmp_path / "stage")
    package_dir = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    for name, folder in package_dir.items():
        staged = stage.joinpath(*name.split("."))
        assert (staged / "__init__.py").resolve() == (ROOT / folder / "__init__.py").resolve(), name


@pytest.mark.parametrize("package", ["depthscale.theory", "depthscale.sims", "depthscale.derivations"])
def test_an_api_page_documents_each_export_once_where_it_is_defined(package):
    text = _hook("api_pages").exports_markdown(package)
    blocks = [line[4:] for line in text.splitlines() if line.startswith("::: ")]
    pkg = importlib.import_module(package)
    names = [n for n in pkg.__all__ if not isinstance(getattr(pkg, n), type(pkg))]
    hook = _hook("api_pages")
    from depthscale.theory._exports import exported_from

    table = exported_from(package)
    internal = [n for n in names if hook.is_internal(table[n])]
    # names a module computes on first use (its __getattr__) are named in a line, not documented
    lazy = [n for n in names if n not in internal and n not in vars(importlib.import_module(table[n]))]
    for n in lazy:
        assert f"`{n}`" in text.split("Computed on first use:", 1)[1]
    assert sorted(b.rsplit(".", 1)[1] for b in blocks) == sorted(set(names) - set(internal) - set(lazy))
    for n in internal:  # kernels and private modules: named in the internals section, not documented
        assert f"`{n}`" in text.split("## Engine internals", 1)[1]
    for block in blocks:
        module, name = block.rsplit(".", 1)
        assert getattr(importlib.import_module(module), name) is getattr(pkg, name), block


def test_doctests_outside_examples_are_fenced_and_roles_become_code():
    hook = _hook("docstrings")
    text = "Sum.\n\n>>> d['k'][:]\n[1]\n\nExamples\n--------\n>>> 1 + 1\n2"
    assert hook.for_the_site(text) == ("Sum.\n\n```pycon\n>>> d['k'][:]\n[1]\n```\n\nExamples\n--------\n>>> 1 + 1\n2")
    assert hook.for_the_site("Uses :meth:`~Store.records`, :mod:`depthscale.sims`.") == (
        "Uses `Store.records`, `depthscale.sims`."
    )


# What a reader sees first: the README and one page per study (issue "Documents a reader can use").
README_WORD_LIMIT = 1100
STUDY_PAGE_WORD_LIMIT = 1300
STUDY_PAGES = sorted((ROOT / "docs" / "studies").glob("*.md"))
_LINK = re.compile(r"(!?)\[[^\]]*\]\(([^)\s]+)\)")


def _words(text: str) -> int:
    """Words as a reader counts them: whitespace-separated tokens holding a letter or a digit (table rules
    and bare punctuation are not words)."""
    return sum(1 for token in text.split() if re.search(r"[A-Za-z0-9]", token))


def _local_links(text: str) -> list[tuple[bool, str]]:
    """(is an image, target) of every relative Markdown link, without its #anchor."""
    out = []
    for bang, target in _LINK.findall(text):
        if "://" in target or target.startswith(("#", "mailto:")):
            continue
        out.append((bang == "!", target.split("#", 1)[0]))
    return out


def test_word_counting_counts_words_not_table_rules():
    assert _words("| a | b |\n|---|---|\n| 1.5 ± 0.2 | `x` |") == 5  # a, b, 1.5, 0.2, `x`


def test_readme_is_short_and_starts_with_the_two_ci_commands_in_their_order():
    readme = (ROOT / "README.md").read_text()
    assert _words(readme) < README_WORD_LIMIT
    ci_lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    commands = [
        line for line in ci_lines if line.startswith("pip install") and ("reproduce" in line or "pytest" in line)
    ]
    assert len(commands) == 2 and "reproduce" in commands[0] and "pytest" in commands[1]
    head = [line.strip() for line in readme.splitlines()[:30]]
    assert commands[0] in head and commands[1] in head
    assert head.index(commands[0]) < head.index(commands[1])


def test_readme_has_one_figure_and_one_table_row_per_registered_study():
    readme = (ROOT / "README.md").read_text()
    images = [target for is_image, target in _local_links(readme) if is_image]
    assert len(images) == 1 and images[0].endswith(".png"), images
    studies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]["depthscale.studies"]
    rows = [line for line in readme.splitlines() if line.startswith("| `")]
    for name in studies:
        row = [line for line in rows if line.startswith(f"| `{name}`")]
        assert len(row) == 1, name
        assert f"docs/studies/{name}.md" in row[0], name


@pytest.mark.parametrize("page", ["README.md", *(p.relative_to(ROOT).as_posix() for p in STUDY_PAGES)])
def test_every_relative_link_and_figure_of_the_reader_pages_exists(page):
    path = ROOT / page
    links = _local_links(path.read_text())
    missing = [target for _, target in links if not (path.parent / target).exists()]
    assert missing == [], missing


@pytest.mark.parametrize("page", ["README.md", *(p.relative_to(ROOT).as_posix() for p in STUDY_PAGES)])
def test_a_reader_page_has_no_placeholder_left(page):
    # a number to fill in later, written as <SMOKE-TIME>, must not reach a reader
    left = re.findall(r"<[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+>|<[A-Z]{3,}>", (ROOT / page).read_text())
    assert left == [], left


def test_every_registered_study_has_a_page():
    studies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]["depthscale.studies"]
    assert sorted(studies) == sorted(p.stem for p in STUDY_PAGES)


@pytest.mark.parametrize("page", STUDY_PAGES, ids=lambda p: p.stem)
def test_a_study_page_is_short_answers_first_shows_a_figure_and_ends_with_its_provenance(page):
    text = page.read_text()
    assert _words(text) < STUDY_PAGE_WORD_LIMIT
    sections = [line[3:].strip() for line in text.splitlines() if line.startswith("## ")]
    assert sections[0] == "The answer", sections
    assert sections[-1] == "Provenance", sections
    figures = [target for is_image, target in _local_links(text) if is_image]
    assert figures and all(target.endswith(".png") for target in figures), figures


# ---- the table of contents shows a heading's maths as plain text (docs/hooks/toc_text.py)
def test_a_formula_in_a_toc_title_becomes_plain_text():
    toc_text = _hook("toc_text").toc_text
    assert toc_text(r"Free polynomial (untied layers): depth exponent \(2\zeta\)") == (
        "Free polynomial (untied layers): depth exponent 2ζ"
    )
    assert toc_text(r"Step 11. Tail for \(L \ll d^a\)") == "Step 11. Tail for L ≪ d^a"
    assert (
        toc_text(r"\(\mathrm{B}(\zeta,\,2L+1) \le \Gamma\{x\}\) and \[\foo\\ \alpha\]") == "B(ζ, 2L+1) ≤ Γ{x} and foo α"
    )
    assert toc_text("no maths: (a,b)=(0,0), 1/L") == "no maths: (a,b)=(0,0), 1/L"


def test_the_hook_rewrites_every_level_of_a_pages_toc():
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    assert "docs/hooks/toc_text.py" in config["hooks"]

    class Item:  # what mkdocs' AnchorLink offers the hook: a title and children
        def __init__(self, title, children=()):
            self.title, self.children = title, list(children)

    class Page:
        toc = [Item(r"a \(\zeta\)", [Item(r"b \(2\zeta\)", [Item(r"c \(\alpha\)")])])]

    page = Page()
    assert _hook("toc_text").on_page_content("<p></p>", page, None, None) == "<p></p>"
    top = page.toc[0]
    assert [top.title, top.children[0].title, top.children[0].children[0].title] == ["a ζ", "b 2ζ", "c α"]


def test_no_heading_of_the_docs_keeps_a_backslash_in_the_toc():
    # every Markdown heading with $...$, as arithmatex hands it to the table of contents
    toc_text = _hook("toc_text").toc_text
    headings = [
        line.lstrip("#").strip()
        for page in (ROOT / "docs").rglob("*.md")
        for line in page.read_text(encoding="utf-8").splitlines()
        if line.startswith("#") and "$" in line
    ]
    assert headings  # the derivation pages and the reports have some
    as_toc = [re.sub(r"\$(.+?)\$", r"\\(\1\\)", h) for h in headings]
    assert [t for t in map(toc_text, as_toc) if "\\" in t] == []


def test_every_glossary_link_names_a_glossary_heading():
    slugify = pytest.importorskip("markdown.extensions.toc").slugify  # the docs extra's Markdown, as mkdocs
    glossary = (ROOT / "docs" / "glossary.md").read_text(encoding="utf-8")
    anchors = {slugify(line.lstrip("#").strip(), "-") for line in glossary.splitlines() if line.startswith("#")}
    links = [
        (page.name, anchor)
        for page in (ROOT / "docs").rglob("*.md")
        for anchor in re.findall(r"glossary\.md#([^)\s]+)\)", page.read_text(encoding="utf-8"))
        + (re.findall(r"\]\(#([^)\s]+)\)", glossary) if page.name == "glossary.md" else [])
    ]
    assert links and [link for link in links if link[1] not in anchors] == []


def test_a_reports_answer_md_can_be_included_into_a_study_page_and_is_no_page_itself():
    """docs/studies/*.md include a report's answer with ``--8<-- "NAME-report/answer.md"``: the
    snippets extension resolves that path from the docs folder, fails the build when it is missing,
    and the file itself is left out of the site's pages (it is in no nav)."""
    from pathspec.gitignore import GitIgnoreSpec

    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    (snippets,) = [e["pymdownx.snippets"] for e in config["markdown_extensions"] if "pymdownx.snippets" in e]
    assert [(ROOT / p).resolve() for p in snippets["base_path"]] == [(ROOT / config["docs_dir"]).resolve()]
    assert snippets["check_paths"] is True
    excluded = GitIgnoreSpec.from_lines(config["exclude_docs"].splitlines())
    assert excluded.match_file("nonlinearities-report/answer.md")
    assert not excluded.match_file("nonlinearities-report/report.md") and not excluded.match_file("studies/core.md")


def test_the_own_question_page_shows_the_package_and_grid_its_test_runs():
    import textwrap

    from tests.test_own_question import GRID, PACKAGE

    page = (ROOT / "docs" / "studies" / "generic.md").read_text()
    blocks = re.findall(r"```(?:python|toml)\n(.*?)```", page, re.S)
    assert textwrap.dedent(PACKAGE).strip() in [b.strip() for b in blocks]
    assert GRID.strip() in [b.strip() for b in blocks]
