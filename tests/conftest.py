import os

# Tests run numba kernels single-threaded and BLAS single-threaded: reproducible and no oversubscription.
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")
os.environ.setdefault("NUMBA_NUM_THREADS", "2")

import pytest  # noqa: E402
import sympy as sp  # noqa: E402

from depthscale.theory.derivation import Step  # noqa: E402

# ----------------------------------------------------------------------------------------------
# Derivation steps whose truth is known by hand, shared by the tests that check steps
# (tests/theory) and those that render checked steps (tests/derivations). Symbols are equal to the
# tests' own ``zeta`` and ``L`` (same names and assumptions).
_x = sp.Symbol("x", positive=True)
_z = sp.Symbol("zeta", positive=True)
_L = sp.Symbol("L", positive=True, integer=True)


@pytest.fixture(scope="session")
def euler_step():
    """True: Euler's integral of the second kind is Gamma(zeta)."""
    return Step(
        "Euler",
        sp.Integral(_x ** (_z - 1) * sp.exp(-_x), (_x, 0, sp.oo)),
        sp.gamma(_z),
        "Euler's integral.",
        assumptions={_z: (0.5, 2)},
        transforms=(),
    )


@pytest.fixture(scope="session")
def stirling_step():
    """True asymptotically: Gamma(2L + 1) / Gamma(2L + zeta + 1) ~ (2L)^-zeta as L -> oo (Stirling)."""
    return Step(
        "Stirling",
        sp.gamma(2 * _L + 1) / sp.gamma(2 * _L + _z + 1),
        (2 * _L) ** (-_z),
        "Stirling.",
        assumptions={_z: (0.2, 3)},
        relation="~",
        limit=_L,
        tolerance=1e-5,
        note=r"for large $L$",
    )


@pytest.fixture(scope="session")
def off_by_one_step():
    """False: B(zeta, L) = Gamma(zeta) Gamma(L) / Gamma(L + zeta), not ... / Gamma(L + zeta + 1)."""
    return Step(
        "Wrong",
        sp.beta(_z, _L),
        sp.gamma(_z) * sp.gamma(_L) / sp.gamma(_L + _z + 1),
        "Off by one.",
        assumptions={_z: (0.2, 3), _L: (1, 5)},
        transforms=("expand_func",),
    )


# ----------------------------------------------------------------------------------------------
# Well-formedness of HTML fragments (the notebook displays), with the standard library's parser.
class _HTMLChecker:
    VOID = {"br", "img", "hr", "meta", "input", "link", "col"}

    def __init__(self):
        from html.parser import HTMLParser

        checker = self

        class _Parser(HTMLParser):
            def handle_starttag(self, tag, attrs):
                checker.tags.append(tag)
                if tag not in checker.VOID:
                    checker.stack.append(tag)

            def handle_endtag(self, tag):
                assert checker.stack and checker.stack[-1] == tag, f"</{tag}> closes {checker.stack[-1:]}"
                checker.stack.pop()

            def handle_data(self, data):
                if data.strip():
                    checker.text.append(data)

        self.stack: list = []
        self.tags: list = []
        self.text: list = []
        self.parser = _Parser(convert_charrefs=True)


@pytest.fixture
def parse_html():
    """``parse_html(fragment) -> (tags, texts)``; fails unless every element is closed, in order."""

    def parse(fragment: str) -> tuple:
        c = _HTMLChecker()
        c.parser.feed(fragment)
        c.parser.close()
        assert c.stack == [], f"unclosed: {c.stack}"
        return c.tags, c.text

    return parse
