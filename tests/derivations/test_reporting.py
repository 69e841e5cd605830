"""Report assembly from records: every claim reaches every format, figures are drawn."""

import re
from dataclasses import replace

import numpy as np
import pytest
from synthetic import cheap_calibration, curve

from depthscale.derivations.analysis.curve import curves
from depthscale.derivations.report.render import MISSING, format_estimate, render_report, write_report
from depthscale.derivations.report.reporting import build_context


@pytest.fixture(scope="module")
def records():
    rng = np.random.default_rng(0)
    recs = curve(lambda L: 0.5 + 0.4 / L, rng=rng, a=0.0, b=0.0)
    recs += curve(lambda L: 0.3 * L**-1.4, rng=rng, model="linear", task="easy-fresh", a=2.0, b=1.0)
    recs += curve(lambda L: 0.9, rng=rng, model="linear", a=0.0, b=0.0, depths=(1, 4, 16))
    recs += curve(lambda L: 0.7, a=0.5, b=0.5, noise=0.0)  # flat: L0 + c L^-alpha is not identified
    for r in recs:
        r.update(
            A_L=r["final_loss"] * 1.2,
            C_L=r["final_loss"] * 0.9,
            gap=r["final_loss"] * 0.3,
            mode_losses=list(np.full(8, r["final_loss"] / 8)),
        )
    return recs


@pytest.fixture(scope="module")
def report(records, tmp_path_factory):
    """One context and its three files, shared by the tests below (building it is the slow part)."""
    from depthscale.studies.core import theory

    real = theory.derivation_checks  # the core study's derivations, checked with SymPy: slow, and not under test here
    theory.derivation_checks = lambda: ([], {"fake": [("a step", True)]})
    try:
        with pytest.MonkeyPatch.context() as mp:
            cheap_calibration(mp)
            ctx = build_context(records, title="t", floor_contexts=50, reference_contexts=0)
    finally:
        theory.derivation_checks = real
    paths = write_report(ctx, tmp_path_factory.mktemp("report"))
    return ctx, {f: open(paths[f]).read() for f in ("md", "html", "tex")}


def test_report_has_every_claim_in_every_format(records, report):
    ctx, texts = report
    ids = [c.id for c in ctx.claims]
    assert len(ids) == len(set(ids)) > 10
    drawn = [f for f in ctx.figures if f.png is not None]
    assert {f.name for f in drawn} >= {"overview", "exponents_vs_zeta", "decomposition"}
    md, html, tex = texts["md"], texts["html"], texts["tex"]
    for c in ctx.claims:
        assert c.id.split(" ")[0] in md and c.verdict in md
    assert html.count("data:image/png;base64") >= len(drawn)
    assert "\\begin{document}" in tex and tex.rstrip().endswith("\\end{document}")
    # the softmax curve follows 0.5 + 0.4/L: its fitted exponent is near 1, and the fits table shows that fit
    (soft,) = [c for c in curves(records) if c.model == "softmax" and c.a == 0.0]
    fit = soft.default_fit()
    assert fit.identified and fit.params["alpha"] == pytest.approx(1.0, abs=0.05)
    fit_row = next(r for r in ctx.results_tables[1].rows if r[0] == soft.label)
    assert fit_row[4] == format_estimate(fit.params["alpha"], fit.se["alpha"])


def test_findings_come_first_then_the_claims_table_then_the_evidence(report):
    """Without a study's story: the findings in words, the full claims table (folded in HTML), then the
    run summary, derivations, tables and figures behind it."""
    _, texts = report
    for fmt, marks in (
        ("md", ("## Findings", "## Claims", "## Summary", "## Notation", "## Simulation results", "## More figures")),
        ("html", ('id="findings"', 'id="claims"', "<details", 'id="summary"', 'id="notation"', 'id="results"')),
        (
            "tex",
            (
                "section*{Findings}",
                "section*{Claims}",
                "section*{Summary}",
                "section*{Notation}",
                "section*{Simulation results}",
                "section*{More figures}",
            ),
        ),
    ):
        pos = [texts[fmt].index(m) for m in marks]
        assert pos == sorted(pos), marks
        assert texts[fmt].count("overview.png") <= 1  # each figure once
    assert re.search(r"\btable \{[^}]*width: 100%", texts["html"])  # tables use the page width


def test_a_story_leads_with_its_answer_and_puts_each_figure_beside_its_finding(report):
    from depthscale.derivations.study import Finding

    ctx, _ = report
    story = [Finding("Exponents", "The fitted exponents against zeta.", "exponents_vs_zeta", ("linear-exponent",))]
    told = replace(ctx, answer=["Alpha is 1.0 ± 0.05: inverse depth.", "The control passes."], story=story)
    texts = render_report(told)
    md, html, tex = texts["md"], texts["html"], texts["tex"]
    for text, marks in (
        (
            md,
            ("## Answer", "Alpha is 1.0", "## Findings", "### Exponents", "figures/exponents_vs_zeta.png", "## Claims"),
        ),
        (
            html,
            (
                'id="answer"',
                "Alpha is 1.0",
                'id="findings"',
                "<h3>Exponents</h3>",
                'id="fig-exponents_vs_zeta"',
                'id="claims"',
            ),
        ),
        (
            tex,
            (
                "section*{Answer}",
                "Alpha is 1.0",
                "section*{Findings}",
                "subsection*{Exponents}",
                r"exponents\_vs\_zeta.png",
                "section*{Claims}",
            ),
        ),
    ):
        pos = [text.index(m) for m in marks]
        assert pos == sorted(pos), marks
    # the figure sits in its finding's section (beside its sentence), and is not repeated among the others
    section = html[html.index('<section class="finding-section">') : html.index("</section>")]
    assert "The fitted exponents against " in section and 'id="fig-exponents_vs_zeta"' in section
    assert '<a class="term" href="../glossary/#spectrum-exponents-a-b-and-zeta">zeta</a>.' in section
    for text, needle in (
        (md, "figures/exponents_vs_zeta.png"),
        (html, 'id="fig-exponents_vs_zeta"'),
        (tex, r"exponents\_vs\_zeta.png"),
    ):
        assert text.count(needle) == 1
    # a story naming a figure the report does not have is refused, naming it
    with pytest.raises(ValueError, match=r"story\[0\]\.figure='nope'"):
        render_report(replace(ctx, story=[Finding("x", "y", "nope")]))


def test_findings_say_each_family_with_its_numbers(report):
    ctx, texts = report
    families = [f for f, _ in ctx.findings]
    ids = [c.id.split()[0] for c in ctx.claims]
    empty = [f for f in dict.fromkeys(ids) if all(c.verdict == "not run" for c in ctx.claims if c.id.split()[0] == f)]
    # one paragraph per family with data, in the table's order; the families without data named in one
    assert [f for f in families if f != "not run"] == [f for f in dict.fromkeys(ids) if f not in empty]
    if empty:
        assert all(f in dict(ctx.findings)["not run"] for f in empty)
    theory = {"derivations-checked", "equal-step-slope", "floor-reference"}
    first_theory = min(i for i, f in enumerate(families) if f in theory)
    assert "not run" not in families[first_theory:]
    assert all(f in theory for f in families[first_theory:])  # theory checks after the simulation findings
    assert all(f in theory for f in ids[ids.index(families[first_theory]) :])  # and in the table
    # the numbers of the softmax exponent claims are in their paragraph, as the table shows them
    para = dict(ctx.findings)["softmax-top2-exponent"]
    for c in (c for c in ctx.claims if c.id.startswith("softmax-top2-exponent ")):
        assert c.id.split(maxsplit=1)[1] in para and c.verdict in para
        if c.measured is not None:
            assert f"{c.measured:.4g}" in para
    assert "<strong>softmax-top2-exponent.</strong>" in texts["html"]
    assert "**softmax-top2-exponent.**" in texts["md"]


def test_unidentified_fit_shows_no_numbers(records, report):
    ctx, texts = report
    (flat,) = [c for c in curves(records) if c.model == "softmax" and c.a == 0.5]
    fit = flat.default_fit()
    assert not fit.identified
    row = next(r for r in ctx.results_tables[1].rows if r[0] == flat.label)
    assert row[2] == "not identified" and row[-1] == fit.reason
    assert all(cell == MISSING for cell in row[3:8])
    (claim,) = [c for c in ctx.claims if c.id == f"softmax-top2-exponent {flat.label}"]
    assert claim.verdict == "indicative" and claim.measured is None and "not identified" in claim.reason
    assert "would be" not in claim.reason


def test_the_report_holds_what_its_studies_sections_give_and_nothing_of_its_own(records):
    from matplotlib.figure import Figure

    from depthscale.derivations.report.entries import FigureEntry, NoFigure, Table
    from depthscale.derivations.study import Finding, Sections, Story, Study

    def nothing():
        raise NoFigure("nothing to draw")

    def sections(ev):
        return Sections(
            tables=(Table("Curves", ["n"], [[len(ev.curves)]]),),
            figures=(
                FigureEntry("demo_empty", nothing, "A caption.", "Look at nothing."),
                FigureEntry("demo_drawn", lambda: Figure(figsize=(2, 1)), "Drawn.", finding="Drawn finding"),
            ),
        )

    def story(results, ev):  # the second finding names no figure: the figure that names it is drawn beside it
        return Story(
            ("An answer.",),
            (Finding("Empty", "Its figure is not drawn.", "demo_empty"), Finding("Drawn finding", "S.")),
        )

    demo = Study(name="demo", question="Is anything measured?", package=__name__, sections=sections, story=story)
    ctx = build_context(records, title="t", study=demo, floor_contexts=10, reference_contexts=0)
    # no derivations, theory tables, results tables or figures but the study's own
    assert ctx.derivations == [] and ctx.results_tables == []
    assert [(t.title, t.rows) for t in ctx.theory_tables] == [("Curves", ((len(curves(records)),),))]
    empty, drawn = ctx.figures
    assert (empty.name, empty.png, empty.why_missing) == ("demo_empty", None, "nothing to draw")
    assert empty.caption == "A caption. Look at nothing." and drawn.png[:4] == b"\x89PNG"
    assert [f.figure for f in ctx.story] == ["demo_empty", "demo_drawn"]
    # the finding whose figure was not drawn is left out; its figure is named in the notes with its reason
    md = render_report(ctx)["md"]
    assert "### Empty" not in md and "Its figure is not drawn." not in md and "### Drawn finding" in md
    assert "The figure demo_empty was not drawn: nothing to draw." in md.split("## Notes", 1)[1]
