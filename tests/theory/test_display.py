"""Notebook displays of derivations, steps and floor results."""

import numpy as np
import pytest
import sympy as sp

from depthscale.theory.derivation import Derivation, Step
from depthscale.theory.floor import FloorResult

x = sp.Symbol("x", positive=True)


def _toy():
    steps = [
        Step("Double", 2 * x, x + x, "Add.", transforms=("expand",)),
        Step("Leading order", x + 1, x, "The constant is negligible.", relation="~", limit=x),
    ]
    return Derivation("Toy", "A toy with $x > 0$.", [(x, "a number", "$x > 0$")], steps, "Done.")


def test_a_step_shows_its_equation_in_sympys_latex():
    step = _toy().steps[1]
    md = step._repr_markdown_()
    assert f"$${sp.latex(x + 1)} \\sim {sp.latex(x)}$$" in md
    assert md.startswith("**Leading order.** The constant is negligible.")
    assert "not checked yet" in md


def test_a_derivation_shows_every_step_and_its_checks_once_checked():
    d = _toy()
    before = d._repr_markdown_()
    assert before.count("$$") == 2 * len(d.steps) and "not checked yet" in before
    d.check()
    after = d._repr_markdown_()
    assert "not checked yet" not in after and after.count("checked: ") == 2
    assert "*2 of 2 steps checked by machine.*" in after
    assert after.index("Double") < after.index("Leading order") < after.index("Done.")


def test_a_floor_result_shows_a_small_table_not_its_matrices():
    G = np.full((4, 4), 123.456)
    r = FloorResult(1.29261, 0.0118, 1.2905, 4, 2.43, np.full(4, 98.765), G, contexts=400, queries=8)
    html = r._repr_html_()
    assert "1.2926 ± 0.012" in html and "400 × 8" in html
    assert "123.456" not in html and "98.765" not in html


def test_jupyter_picks_the_rich_displays():
    formatters = pytest.importorskip("IPython.core.formatters")
    fmt = formatters.DisplayFormatter()
    data, _ = fmt.format(_toy())
    assert "text/markdown" in data and "$$" in data["text/markdown"]
    r = FloorResult(1.0, 0.1, 1.0, 2, 1.0, np.ones(2), np.eye(2), contexts=10)
    assert "<table>" in fmt.format(r)[0]["text/html"]
